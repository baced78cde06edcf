#!/bin/sh
# run.sh [DSE]: the small end-to-end run of experiments/imagenet/README.md: generate a
# 227x227-class image folder, sweep squeeze_ratio_synth.cfg on it (the folder is packed into
# sweeps/packs on first use), and write the report, plot and curves into results/.
# About 10 minutes on 2 cores; run it again and it resumes. Run from anywhere.
set -eu
cd "$(dirname "$0")/../.."
dse=${1:-build/dse}
out=experiments/imagenet/results
data=experiments/imagenet/synth227
[ -d "$data/train" ] || "$dse" data synth "$data" --classes 4 --train 40 --val 10 --sides 256-320 --seed 1
"$dse" data info "$data"
mkdir -p "$out"
DSE_PACK_CACHE=sweeps/packs "$dse" sweep experiments/imagenet/squeeze_ratio_synth.cfg --out sweeps/squeeze_ratio_synth \
    2>&1 | tee "$out/sweep.log"
"$dse" report sweeps/squeeze_ratio_synth --plot "$out/frontier.svg" --curves "$out/curves.svg" >"$out/report.md"
"$dse" report sweeps/squeeze_ratio_synth --format csv >"$out/report.csv"
echo "report: $out/report.md"
