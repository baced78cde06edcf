#!/bin/sh
# gpu_sweep227.sh: a 227x227 sweep for real on one GPU (issue #20 item 6). The eight
# candidates of spaces/squeeze_ratio.cfg (SqueezeNet v1.0's macro-architecture, squeeze
# ratio 0.125 to 1.0, 1,000 outputs) are trained by `dse sweep --gpus G` on a generated
# image pack (`dse data synth` stripes, packed at short side 256 and cut to 227x227 by
# the loader's random-resized crop), twice in fresh sweep directories: one candidate at a
# time (--per-gpu 1) and packed (--per-gpu K). Prints each run's wall time and candidates
# per hour, and their ratio. The images are synthetic: accuracy says only that training
# moved (the report's top-1 is printed for the record), the speed is what counts.
#
# Usage: bench/gpu_sweep227.sh [BUILD]        BUILD: a build folder with dse (default build-gpu)
# Environment:
#   SWEEP227_CLASSES=10     classes of the synthetic pack
#   SWEEP227_TRAIN=500      training images per class (SWEEP227_VAL=20 validation ones)
#   SWEEP227_EPOCHS=2       epochs per candidate (batch 64)
#   SWEEP227_PACKED=auto    --per-gpu of the packed run: a number or auto
#   SWEEP227_PRECISION=tf32 --precision of both runs
#   SWEEP227_GPU=0          the device; SWEEP227_KEEP=1 keeps the work folder (TMPDIR)
# Output: key=value lines (docs/conventions.md#benchmarks); logs in BUILD/gpu_sweep227/. Exit 0 when both
# runs trained all eight candidates, 77 without a usable GPU, 1 on an error.
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/gpu_lib.sh
build=${1:-build-gpu}
dse=$build/dse
classes=${SWEEP227_CLASSES:-10}
train=${SWEEP227_TRAIN:-500}
val=${SWEEP227_VAL:-20}
epochs=${SWEEP227_EPOCHS:-2}
packed=${SWEEP227_PACKED:-auto}
precision=${SWEEP227_PRECISION:-tf32}
gpu=${SWEEP227_GPU:-0}
k=8 # spaces/squeeze_ratio.cfg's candidates

die() { echo "gpu_sweep227: error: $*" >&2; exit 1; }
for v in "$classes" "$train" "$val" "$epochs" "$gpu"; do is_int "$v" || die "'$v' is not a number"; done
[ "$packed" = auto ] || is_int "$packed" || die "SWEEP227_PACKED=$packed is not auto or a number"
[ -x "$dse" ] || die "no dse at $dse; build it first (bench/gpu_check.sh builds build-gpu)"
now >/dev/null || die "date +%s.%N does not give nanoseconds (GNU date needed)"
logs=$build/gpu_sweep227
mkdir -p "$logs" || die "cannot create $logs"

probe=$logs/probe.log
gpu_probe "$probe" experiments/squeezenet/squeezenet_v1.0.cfg --device "cuda:$gpu" --batch 8 --iters 1

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_sweep227.XXXXXX") || die "mktemp failed"
[ "${SWEEP227_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
t0=$(now)
"$dse" data synth "$work/folder" --classes "$classes" --train "$train" --val "$val" --sides 256-320 \
    >"$logs/synth.log" 2>&1 || { cat "$logs/synth.log" >&2; die "dse data synth failed"; }
"$dse" data pack "$work/folder" --out "$work/synth227.pack" --size 256 >"$logs/pack.log" 2>&1 ||
    { cat "$logs/pack.log" >&2; die "dse data pack failed"; }
t1=$(now)
echo "name=gpu_sweep227.data classes=$classes train=$((classes * train)) val=$((classes * val)) side=256 crop=227 seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"

space=$work/squeeze_ratio.cfg
{ cat spaces/squeeze_ratio.cfg
  printf 'train = { dataset = "synth227.pack"; epochs = %d; batch = 64; lr = 0.01; seed = 1; };\n' "$epochs"
} >"$space" || die "cannot write $space"

# run NAME PER_GPU: one sweep in a fresh directory; prints its line, sets $rate (candidates per hour)
run() {
    dir=$work/$1
    log=$logs/$1.log
    rm -rf "$dir"
    : >"$log"
    timed_sweep "$1" "$2" "$dir" "$log" --gpus "$gpu" --per-gpu "$2" --precision "$precision"
    top1=$(grep -h '^  "top1": ' "$dir"/candidates/*.json | tr -d ',' |
           awk '{ if ($2 > m) m = $2 } END { printf "%.4f", m }')
    rate=$(awk -v a="$t0" -v b="$t1" -v k="$k" 'BEGIN { printf "%.1f", k * 3600 / (b - a) }')
    awk -v a="$t0" -v b="$t1" -v name="$1" -v per="$2" -v k="$k" -v e="$epochs" -v prec="$precision" \
        -v cand="$cand" -v rate="$rate" -v top1="$top1" 'BEGIN {
        printf "name=gpu_sweep227.%s candidates=%d per_gpu=%s epochs=%d precision=%s wall_s=%.1f cand_per_hour=%s cand_img_per_s=%s best_top1=%s\n",
               name, k, per, e, prec, b - a, rate, cand, top1 }'
    "$dse" report "$dir" >"$logs/$1.report.md" 2>&1 || true
}

run one 1
one=$rate
run packed "$packed"
awk -v a="$one" -v b="$rate" -v per="$packed" 'BEGIN {
    printf "name=gpu_sweep227 per_gpu=%s ratio=%.2f one_cand_per_hour=%s packed_cand_per_hour=%s\n", per, b / a, a, b }'
