#!/usr/bin/env bash
# run.sh [BUILD]: the search benchmark of README.md here (issue #16, item 5).
#  1. trains the table: every candidate of table.cfg (96) on Fashion-MNIST with `dse sweep`
#     into results/table (about 40 minutes on 2 idle cores; resumes if interrupted) and
#     writes results/table.csv (skipped when results/table.csv exists: it is the committed
#     table; delete it and results/table to train again);
#  2. replays evolution, random search and bo against the table, 25 seeds each
#     (BUILD/search_replay; with issue #36's statistics at N/10, N/5, N/3, N/2), and
#     Optuna's NSGA-II, TPE and GPSampler (25 seeds each; GPSampler's take about 3 minutes a
#     table and reference on 2 cores) as the
#     yardsticks (bench/optuna_replay.py, in bench/torch_venv.sh's environment, which
#     installs optuna, scipy and torch with pip where they are missing; skipped with the
#     reason without pip or network);
#  3. the same strategies on bench/large_space.cfg's 1.1 million candidates with an
#     analytic objective (forward FLOPs up, params down), also with noise (--noise 0.1:
#     observations off by 0.1 of the objective's spread, scored on the true values);
#  4. writes results/replay.txt and the plots results/*.svg (the curves behind them:
#     sweeps/search_bench/*.csv);
#  5. a real evolution search with replicates; 6. a real bo search with replicates on the
#     second table's space, checked against its replay (same_search.py); 7. multi-fidelity
#     (bo under asha) replayed on both tables and run for real (results/replay_mf.txt); 8. the
#     knowable bound: each table's grid trained with another seed, the best subset by it
#     (results/replay_oracle.txt).
# The second table (table2.cfg, 36 candidates x 2 seeds) is trained first where
# results/table2.csv is missing, as the first.
# REPLAYS_ONLY=1 skips what trains (steps 5, 6 and 7's real searches; the tables of steps 1
# and 8 and the searches' sweep directories must exist, as committed): the replays,
# statistics, plots and the real searches' comparisons with their replays again, about 12
# minutes on 2 cores. After a change to a proposer run it whole: the real searches of steps 6
# and 7 must be the new proposer's, and same_search.py stops the script where they are not
# (it replays them on their own results, real_table.py, so the conv strategies a machine
# times, which move float32 results by tenths of a point, do not enter).
# Run from anywhere. BUILD: the build directory (default build).
set -euo pipefail # a failure inside a { ... } | tee block stops the script too
cd "$(dirname "$0")/../.."
build=${1:-build}
here=experiments/search_bench
out=$here/results
cur=sweeps/search_bench # the curves (regenerated in a minute): not committed
mkdir -p "$out" "$cur"
rm -f "$cur"/*.csv
if [ ! -f "$out/table.csv" ]; then
    "$build/dse" sweep "$here/table.cfg" --out "$out/table" >/dev/null
    rm -rf "$out/table/checkpoints" "$out/table/leases" "$out/table/"*.svg # weights; the results are in the candidate files
    "$build/dse" report "$out/table" --format csv >"$out/table.csv.tmp"
    mv "$out/table.csv.tmp" "$out/table.csv"
fi
if [ ! -f "$out/table2.csv" ]; then # the second table (issue #36): 36 candidates x 2 seeds, about 25 minutes
    "$build/dse" sweep "$here/table2.cfg" --out "$out/table2" >/dev/null
    rm -rf "$out/table2/checkpoints" "$out/table2/leases" "$out/table2/"*.svg
    "$build/dse" report "$out/table2" --format csv >"$out/table2.csv.tmp"
    mv "$out/table2.csv.tmp" "$out/table2.csv"
fi
py=$(sh bench/torch_venv.sh) || { echo "optuna: could not install (pip or network); its rows are skipped"; py=python3; }
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; $here/run.sh"
    for q in 0 0.5; do # the reference top-1: the table's lowest, then its median
        "$build/search_replay" "$here/table.cfg" "$out/table.csv" --seeds 25 --ref-quantile $q \
            --strategy random,evolution,bo --curves "$cur/table_curves_q$q.csv" --dump "$cur/table_dump_q$q.csv"
        echo "# bo told the reference (--bo-ref)"
        "$build/search_replay" "$here/table.cfg" "$out/table.csv" --seeds 25 --ref-quantile $q --strategy bo --bo-ref \
            --curves "$cur/table_curves_q$q.csv" |
            grep -E "^name=search_replay_at strategy=bo"
        "$py" bench/optuna_replay.py "$out/table.csv" --seeds 25 --ref-quantile $q --budget 48 \
            --sampler nsga2,tpe --curves "$cur/table_curves_q$q.csv" || true
        "$py" bench/optuna_replay.py "$out/table.csv" --seeds 25 --ref-quantile $q --budget 48 --sampler gp || true
        "$py" bench/surrogate_replay.py "$out/table.csv" --seeds 25 --ref-quantile $q || true
    done
    echo "# proposer variants on the table (evolution only; pop, aging, strata: sweep/evolve.h)"
    for v in "--pop 8" "--pop 16 --strata" "--pop 16 --aging"; do
        echo "# $v"
        "$build/search_replay" "$here/table.cfg" "$out/table.csv" --seeds 25 $v | grep -E "^name=search_replay_evolution"
    done
    "$build/search_replay" bench/large_space.cfg --analytic --seeds 11 --budget 1500 \
        --curves "$cur/large_curves.csv"
    echo "# the large space with noise (--noise 0.1), 25 seeds, budget 500"
    "$build/search_replay" bench/large_space.cfg --analytic --seeds 25 --budget 500 --noise 0.1
    echo "# proposer variants on the large space"
    for v in "" "--strata" "--aging"; do
        echo "# ${v:-default} (budget 500)"
        "$build/search_replay" bench/large_space.cfg --analytic --seeds 11 --budget 500 $v | grep -E "^name=search_replay_evolution"
    done
} 2>&1 | tee "$out/replay.txt"
{ # the second table: its own file
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; the second table's block of $here/run.sh"
    for q in 0 0.5; do # the second table (36 candidates, top-1 the mean of 2 seeds), as the first
        "$build/search_replay" "$here/table2.cfg" "$out/table2.csv" --seeds 25 --ref-quantile $q \
            --strategy random,evolution,bo --target 0.99 --curves "$cur/table2_curves_q$q.csv"
        echo "# bo told the reference (--bo-ref)"
        "$build/search_replay" "$here/table2.cfg" "$out/table2.csv" --seeds 25 --ref-quantile $q --strategy bo --bo-ref \
            --curves "$cur/table2_curves_q$q.csv" |
            grep -E "^name=search_replay_at strategy=bo"
        "$py" bench/optuna_replay.py "$out/table2.csv" --seeds 25 --ref-quantile $q --budget 18 \
            --sampler nsga2,tpe --curves "$cur/table2_curves_q$q.csv" || true
        "$py" bench/optuna_replay.py "$out/table2.csv" --seeds 25 --ref-quantile $q --budget 18 --sampler gp || true
    done
    echo "# evaluations to 99% of the grid's hypervolume (the frontier), both tables, one worker"
    "$build/search_replay" "$here/table.cfg" "$out/table.csv" --seeds 25 --strategy random,bo --target 0.99 --workers 1 |
        grep -E "^name=search_replay_(random|bo) "
    "$build/search_replay" "$here/table2.cfg" "$out/table2.csv" --seeds 25 --strategy random,bo --target 0.99 \
        --workers 1 --dump "$cur/table2_dump_w1.csv" | grep -E "^name=search_replay_(random|bo) "
} 2>&1 | tee "$out/replay_table2.txt"
python3 bench/plot_search.py "$cur/table_curves_q0.csv" "$out/table_hv.svg" --ymin 0.7 \
    --only random,evolution,optuna_nsga2,bo,bo_told \
    --title "Fashion-MNIST table (96): hypervolume of (top-1, params), reference at the lowest top-1"
python3 bench/plot_search.py "$cur/table_curves_q0.5.csv" "$out/table_hv_median.svg" --ymin 0.3 \
    --only random,evolution,optuna_nsga2,bo,bo_told \
    --title "Fashion-MNIST table (96): hypervolume of (top-1, params), reference at the median top-1"
python3 bench/plot_search.py "$cur/table2_curves_q0.csv" "$out/table2_hv.svg" --ymin 0.7 --stat mean \
    --target 0.99 --only random,evolution,bo,bo_told,optuna_tpe \
    --title "Fashion-MNIST table 2 (36 x 2 seeds): hypervolume of (top-1, size), reference at the lowest top-1"
python3 bench/plot_search.py "$cur/table2_curves_q0.5.csv" "$out/table2_hv_median.svg" --ymin 0.3 --stat mean \
    --target 0.99 --only random,evolution,bo,bo_told,optuna_tpe \
    --title "Fashion-MNIST table 2 (36 x 2 seeds): hypervolume of (top-1, size), reference at the median top-1"
python3 bench/plot_search.py "$cur/large_curves.csv" "$out/large_hv.svg" --ymin 0.4 \
    --title "bench/large_space.cfg (913,304 feasible): hypervolume of (FLOPs up, params down)"
if [ "${REPLAYS_ONLY:-0}" = 0 ]; then
    # 5. a real evolution search with replicates (evo_replicates.cfg: 8 candidates x 3 seeds, 1 epoch
    #    each; about 5 minutes): its report and plot with error bars
    "$build/dse" sweep "$here/evo_replicates.cfg" --out "$out/evo_replicates" --workers 1 >/dev/null
    rm -rf "$out/evo_replicates/checkpoints" "$out/evo_replicates/leases" "$out/evo_replicates/"*.svg
    "$build/dse" report "$out/evo_replicates" --plot "$out/evo_replicates.svg" >"$out/evo_replicates.md"
    rm -f "$out/evo_replicates/"*.svg
    # 6. a real bo search with replicates (bo_replicates.cfg: table2's space, 7 candidates x 2 seeds;
    #    about 10 minutes): its proposals must be search_replay's bo, seed 1, one worker
    "$build/dse" sweep "$here/bo_replicates.cfg" --out "$out/bo_replicates" --workers 1 >/dev/null
    rm -rf "$out/bo_replicates/checkpoints" "$out/bo_replicates/leases" "$out/bo_replicates/"*.svg
    "$build/dse" report "$out/bo_replicates" --plot "$out/bo_replicates.svg" >"$out/bo_replicates.md"
    rm -f "$out/bo_replicates/"*.svg
fi
# the replay sees what the real search saw: the table with the search's own results in it
# (real_table.py says why, and how far they are from the table's)
"$build/dse" report "$out/bo_replicates" --format csv >"$cur/bo_replicates.csv"
python3 "$here/real_table.py" "$cur/bo_replicates.csv" "$out/table2.csv" "$cur/bo_replicates_table.csv" \
    | tee -a "$out/replay.txt"
"$build/search_replay" "$here/table2.cfg" "$cur/bo_replicates_table.csv" --seeds 1 --strategy bo --budget 7 \
    --workers 1 --dump "$cur/bo_replicates_replay.csv" >/dev/null
python3 "$here/same_search.py" "$out/bo_replicates" "$cur/bo_replicates_replay.csv" "$cur/bo_replicates.csv" \
    "$cur/bo_replicates_table.csv" \
    | tee -a "$out/replay.txt"
# 7. multi-fidelity (bo under asha, issue #36): replayed on both tables with their top-1 after
#    the first of 2 epochs (rung_table.py), at the epochs of b candidates trained to the end;
#    then a real one on the second table's space with one seed (bo_asha.cfg, 14 epochs, a few
#    minutes), whose proposals must be the replay's, seed 1, on that seed's table
python3 "$here/rung_table.py" "$out/table" 1 >"$out/table_rung1.csv"
python3 "$here/rung_table.py" "$out/table2" 1 >"$out/table2_rung1.csv"
python3 "$here/rung_table.py" "$out/table2" 1 0 >"$out/table2_seed1_rung1.csv"
python3 "$here/rung_table.py" "$out/table2" 2 0 >"$out/table2_seed1.csv"
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; the multi-fidelity block of $here/run.sh"
    for tb in table table2; do
        for q in 0 0.5; do
            for told in "" --bo-ref; do
                echo "# $tb, reference quantile $q ${told:-(bo untold)}"
                "$build/search_replay" "$here/$tb.cfg" "$out/$tb.csv" --seeds 25 --strategy random --ref-quantile $q \
                    $told --rungs "$out/${tb}_rung1.csv" | grep -E "^name=search_replay_mf"
            done
        done
    done
} 2>&1 | tee "$out/replay_mf.txt"
if [ "${REPLAYS_ONLY:-0}" = 0 ]; then
    rm -rf "$out/bo_asha"
    "$build/dse" sweep "$here/bo_asha.cfg" --out "$out/bo_asha" --workers 1 --early-stop asha --eta 2 --min-epochs 1 >/dev/null
    rm -rf "$out/bo_asha/checkpoints" "$out/bo_asha/leases" "$out/bo_asha/"*.svg
    "$build/dse" report "$out/bo_asha" >"$out/bo_asha.md"
    rm -f "$out/bo_asha/"*.svg
fi
"$build/dse" report "$out/bo_asha" --format csv >"$cur/bo_asha.csv"
python3 "$here/real_table.py" "$cur/bo_asha.csv" "$out/table2_seed1.csv" "$cur/bo_asha_table.csv" "$out/bo_asha" \
    "$out/table2_seed1_rung1.csv" "$cur/bo_asha_rung.csv" | tee -a "$out/replay_mf.txt"
"$build/search_replay" "$here/table2.cfg" "$cur/bo_asha_table.csv" --seeds 1 --strategy bo --workers 1 \
    --rungs "$cur/bo_asha_rung.csv" --dump "$cur/bo_asha_replay.csv" >/dev/null
python3 "$here/same_search.py" "$out/bo_asha" "$cur/bo_asha_replay.csv" "$cur/bo_asha.csv" "$cur/bo_asha_table.csv" \
    bo_asha_e14 "$cur/bo_asha_rung.csv" | tee -a "$out/replay_mf.txt"
# 8. the knowable bound (issue #36, item 4): each table's grid trained again with another seed
#    (table.cfg with seed 2, table2.cfg with seed 3 and one replicate: sed below; 17 and 10
#    minutes on 2 idle cores), and the best subset chosen by that training's top-1, scored on
#    the table (search_replay --oracle): what a search could know of every architecture but
#    the noise of the trainings the table holds
for o in table:2:1 table2:3:2; do
    tb=${o%%:*} seed=$(echo "$o" | cut -d: -f2) reps=${o##*:} other=${o%%:*}_seed$(echo "$o" | cut -d: -f2)
    if [ ! -f "$out/$other.csv" ]; then
        sed -e "s/seed = 1;/seed = $seed;/" -e "s/replicates = $reps;/replicates = 1;/" \
            -e "s/^name = \"\(.*\)\";/name = \"\1_seed$seed\";/" "$here/$tb.cfg" >"$cur/$other.cfg"
        "$build/dse" sweep "$cur/$other.cfg" --out "$out/$other" --workers 2 >/dev/null
        rm -rf "$out/$other/checkpoints" "$out/$other/leases" "$out/$other/"*.svg
        "$build/dse" report "$out/$other" --format csv >"$out/$other.csv.tmp"
        mv "$out/$other.csv.tmp" "$out/$other.csv"
    fi
done
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; the knowable bound's block of $here/run.sh"
    for o in table:table_seed2 table2:table2_seed3; do
        for q in 0 0.5; do
            for told in "" --bo-ref; do
                echo "# ${o%%:*} against ${o##*:}, reference quantile $q ${told:-(bo untold)}"
                "$build/search_replay" "$here/${o%%:*}.cfg" "$out/${o%%:*}.csv" --seeds 25 --ref-quantile $q $told \
                    --strategy random,evolution,bo --oracle "$out/${o##*:}.csv" | grep -E "^name=search_replay_(at|oracle) "
            done
        done
    done
} 2>&1 | tee "$out/replay_oracle.txt"
echo "results: $out/bo_replicates.md, $out/evo_replicates.md, $out/evo_replicates.svg, $out/replay.txt, $out/table_hv.svg, $out/table_hv_median.svg, $out/large_hv.svg"
