#!/bin/sh
# Runs the three Fashion-MNIST sweeps of this experiment (3 seeds each) with 2 workers x 1 thread each
# (the sweep default on 2 cores), then the pct3x3 space again with successive halving,
# (pct3x3_sh.cfg: one seed, as halving ranks single runs) and writes the reports, plots and
# learning curves into results/
# Usage: experiments/fmnist_sweeps/run.sh [path/to/dse]   (default: build/dse of this checkout)
# About 60-90 minutes on 2 cores. Re-running resumes (the sweeps are crash-proof) and
# rewrites the reports; delete results/<name>/ to train a sweep again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dse=${1:-$here/../../build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
cd "$here"
mkdir -p results
run() { # name space-file [sweep options]
    name=$1 space=$2
    shift 2
    "$dse" sweep "$space" --out "results/$name" "$@" > /dev/null
    "$dse" report "results/$name" --plot "results/$name.svg" --curves "results/$name.curves.svg" > "results/$name.md"
    "$dse" report "results/$name" --format csv > "results/$name.csv"
    "$dse" status "results/$name" > "results/$name.status.txt"
    rm -rf "results/$name/checkpoints" "results/$name/frontier.svg" "results/$name/frontier_flops.svg" "results/$name/curves.svg" \
           "results/$name/leases" # weights (megabytes; the results are in the candidate files), copies, released leases
}
run squeeze_ratio squeeze_ratio.cfg
run bypass bypass.cfg
run pct3x3 pct3x3.cfg
run pct3x3_sh pct3x3_sh.cfg --early-stop sh --eta 3 --min-epochs 1
