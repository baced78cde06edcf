#!/usr/bin/env bash
# slices.sh: what results independent of the thread count cost (issue #18 item 1; target:
# under 3%). Every sum over a batch goes by 16 fixed slices added in one tree
# (engine/slices.h); the yardstick is the same engine with each batch cut into as many slices
# as threads (`dse bench --slices T`), which is the cost structure of the engine before (one
# weight-gradient buffer per thread, chunks within each thread's share), measured in the same
# run, alternating, ROUNDS rounds. Training steps (forward, backward, SGD) of
# SqueezeNet-FMNIST at batch 128 and SqueezeNet v1.0 at batch 16, each fixed conv strategy,
# 1 and 2 threads. Not a test (docs/conventions.md#benchmarks).
#
# Prints each run's line (round=R added), then per case
#   name=slices.<net>.<conv>.t<T> fixed_ms=... threads_ms=... cost_pct=<100 (fixed/threads - 1)>
# (each ms the median over the rounds of the runs' median step times), and at the end
#   name=slices.all cost_pct=<over every case: 100 (sum fixed_ms / sum threads_ms - 1)>
#
# Usage: bench/slices.sh [path/to/dse]      (default: build/dse)
# Environment: ROUNDS (default 3), ITERS_FMNIST (default 6), ITERS_V10 (default 3), CONVS
#   (default "gemm_batch gemm_image winograd"), THREADS (default "1 2"). About 6 minutes on 2
#   idle cores.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
rounds=${ROUNDS:-3}
convs=${CONVS:-gemm_batch gemm_image winograd}
threads=${THREADS:-1 2}
if [ ! -x "$dse" ]; then
    echo "slices: no dse at $dse; build it first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2" >&2
    exit 2
fi
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
echo "name=slices.machine cpu=\"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)\" cores=$(nproc) dse=$dse"

for r in $(seq 1 "$rounds"); do
    for net in fmnist v10; do
        case $net in
            fmnist) cfg=$root/experiments/squeezenet/squeezenet_fmnist.cfg batch=128 iters=${ITERS_FMNIST:-6} ;;
            v10) cfg=$root/experiments/squeezenet/squeezenet_v1.0.cfg batch=16 iters=${ITERS_V10:-3} ;;
        esac
        for t in $threads; do
            for conv in $convs; do
                for how in fixed threads; do # alternate: the yardstick right after
                    s=16
                    [ $how = threads ] && s=$t
                    line=$("$dse" bench "$cfg" --batch $batch --threads "$t" --iters "$iters" --conv "$conv" \
                        --slices "$s" 2>&1 | grep '^name=bench') || { echo "slices: dse bench failed" >&2; exit 1; }
                    echo "$line round=$r case=$net.$conv.t$t how=$how" | tee -a "$log"
                done
            done
        done
    done
done

awk '
function kv(l, k,   m) { return match(l, " " k "=[^ ]*") ? substr(l, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ c = kv($0, "case"); h = kv($0, "how"); ms[c, h] = ms[c, h] " " kv($0, "median_ms"); if (!(c in seen)) { seen[c] = 1; order[++n] = c } }
END {
    for (i = 1; i <= n; i++) {
        c = order[i]; f = median(ms[c, "fixed"]); t = median(ms[c, "threads"])
        printf "name=slices.%s fixed_ms=%.2f threads_ms=%.2f cost_pct=%.1f\n", c, f, t, 100 * (f / t - 1)
        sf += f; st += t
    }
    printf "name=slices.all cases=%d fixed_ms=%.1f threads_ms=%.1f cost_pct=%.1f target_pct=3\n", n, sf, st, 100 * (sf / st - 1)
}' "$log"
