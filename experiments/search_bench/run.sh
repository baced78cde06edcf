#!/bin/sh
# run.sh [BUILD]: the search benchmark of README.md here (issue #16, item 5).
#  1. trains the table: every candidate of table.cfg (96) on Fashion-MNIST with `dse sweep`
#     into sweeps/search_table (about 25-50 minutes on 2 cores; resumes if interrupted) and
#     writes results/table.csv (skipped when results/table.csv exists: it is the committed
#     table; delete it to train again);
#  2. replays evolution and random search against the table, 25 seeds each
#     (BUILD/search_replay), and Optuna's NSGA-II as the yardstick
#     (bench/optuna_replay.py, in a virtual environment of its own under sweeps/, made by
#     this script with pip where it is missing; skipped with the reason without pip or
#     network);
#  3. the same strategies on bench/large_space.cfg's 1.1 million candidates with an
#     analytic objective (forward FLOPs up, params down);
#  4. writes results/replay.txt, results/*_curves.csv and the plots results/*.svg.
# Run from anywhere. BUILD: the build directory (default build).
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
here=experiments/search_bench
out=$here/results
mkdir -p "$out"
if [ ! -f "$out/table.csv" ]; then
    "$build/dse" sweep "$here/table.cfg" --out sweeps/search_table >/dev/null
    "$build/dse" report sweeps/search_table --format csv >"$out/table.csv.tmp"
    mv "$out/table.csv.tmp" "$out/table.csv"
fi
venv=sweeps/optuna-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import optuna" 2>/dev/null; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q optuna || echo "optuna: could not install (pip or network); its rows are skipped"
fi
py=python3
[ -x "$venv/bin/python" ] && py=$venv/bin/python
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; $here/run.sh"
    "$build/search_replay" "$here/table.cfg" "$out/table.csv" --seeds 25 --curves "$out/table_curves.csv"
    "$py" bench/optuna_replay.py "$out/table.csv" --seeds 25 --curves "$out/table_curves.csv" || true
    "$build/search_replay" bench/large_space.cfg --analytic --seeds 11 --budget 1500 \
        --curves "$out/large_curves.csv"
} 2>&1 | tee "$out/replay.txt"
python3 bench/plot_search.py "$out/table_curves.csv" "$out/table_hv.svg" \
    --title "Fashion-MNIST table (96 candidates): hypervolume of (top-1, params) against candidates trained"
python3 bench/plot_search.py "$out/large_curves.csv" "$out/large_hv.svg" --ymin 0.4 \
    --title "bench/large_space.cfg (913,304 feasible): hypervolume of (FLOPs up, params down)"
echo "results: $out/replay.txt, $out/table_hv.svg, $out/large_hv.svg"
