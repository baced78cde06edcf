#!/bin/sh
# gpu_pack.sh: packing candidates on one GPU (issue #6 item 6). K candidates of identical
# cost (bench/gpu_pack.cfg: the SqueezeNet-FMNIST net, differing only in dropout), each 1
# epoch on Fashion-MNIST, trained by `dse sweep --gpus G` twice in fresh sweep directories:
# one at a time (--per-gpu 1) and packed (--per-gpu K); prints the aggregate images/s of
# each (K x images per candidate / wall time of the training command) and their ratio.
# Target: packed >= 3x one at a time (issue #20); the K packed workers are threads of one
# process (one CUDA context, a stream each). docs/sweep-dir.md, "Sweeps on shared GPUs".
#
# Usage: bench/gpu_pack.sh [BUILD]          BUILD: a build folder with dse (default build-gpu)
# Environment:
#   GPU_PACK_K=8          candidates (1 to 25)
#   GPU_PACK_IMAGES=20000 training images per candidate (limit_train; 1 epoch)
#   GPU_PACK_GPU=0        the device, as this process numbers them (CUDA_VISIBLE_DEVICES applies)
#   GPU_PACK_PACKED=K     --per-gpu of the packed run: a number or auto
#   GPU_PACK_PRECISION=fp32, GPU_PACK_REPEAT=1 (runs of each, interleaved; medians compared)
#   DSE_DATA_ROOT         where fashion-mnist/ is (default /usr/share/datasets, as dse's)
#   GPU_PACK_SYNTHETIC=auto  auto: random images of Fashion-MNIST's shape when the dataset is
#                         missing (the speed is the same; accuracy means nothing); 1: always; 0: never
#   GPU_PACK_KEEP=1       keep the sweep directories (in TMPDIR, default /tmp)
# Output: key=value lines (docs/conventions.md#benchmarks); logs in BUILD/gpu_pack/. Exit 0 when both
# runs trained every candidate, 77 ("skipped: no CUDA device") without a usable GPU, 1 on
# an error.
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/gpu_lib.sh
build=${1:-build-gpu}
dse=$build/dse
k=${GPU_PACK_K:-8}
images=${GPU_PACK_IMAGES:-20000}
gpu=${GPU_PACK_GPU:-0}
packed=${GPU_PACK_PACKED:-$k}
precision=${GPU_PACK_PRECISION:-fp32}
repeat=${GPU_PACK_REPEAT:-1}
synthetic=${GPU_PACK_SYNTHETIC:-auto}
root=${DSE_DATA_ROOT:-/usr/share/datasets}
batch=64   # bench/gpu_pack.cfg's train.batch
epochs=1   # and train.epochs
test_images=2000

die() { echo "gpu_pack: error: $*" >&2; exit 1; }

is_int "$k" && [ "$k" -ge 1 ] && [ "$k" -le 25 ] || die "GPU_PACK_K=$k is not a number from 1 to 25"
is_int "$images" && [ "$images" -ge "$batch" ] || die "GPU_PACK_IMAGES=$images is not a number >= $batch"
is_int "$gpu" || die "GPU_PACK_GPU=$gpu is not a device index"
is_int "$repeat" && [ "$repeat" -ge 1 ] || die "GPU_PACK_REPEAT=$repeat is not a number >= 1"
[ "$packed" = auto ] || { is_int "$packed" && [ "$packed" -ge 1 ]; } ||
    die "GPU_PACK_PACKED=$packed is not auto or a number"
case $synthetic in auto|0|1) ;; *) die "GPU_PACK_SYNTHETIC=$synthetic is not auto, 0 or 1" ;; esac
[ -x "$dse" ] || die "no dse at $dse; build it first (bench/gpu_check.sh builds build-gpu), or give the build folder"
[ -f bench/gpu_pack.cfg ] || die "bench/gpu_pack.cfg is missing"
now >/dev/null || die "date +%s.%N does not give nanoseconds (GNU date needed)"

logs=$build/gpu_pack
mkdir -p "$logs" || die "cannot create $logs"

# ---- a usable GPU? (also warms up the driver, so the first timed run does not pay it) ----
probe=$logs/probe.log
gpu_probe "$probe" experiments/squeezenet/squeezenet_fmnist.cfg --device "cuda:$gpu" --precision "$precision" \
    --batch "$batch" --iters 3
facts=$(sed -n 's/^dse bench: //p' "$probe" | head -1 | tr '"' "'")
echo "name=gpu_pack.machine cores=$(nproc 2>/dev/null || echo '?') device=\"$facts\""

# ---- the data -------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_pack.XXXXXX") || die "mktemp failed"
[ "${GPU_PACK_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
data=fashion-mnist
have=0
for f in "$root/fashion-mnist/train-images-idx3-ubyte.gz" "$root/fashion-mnist/train-images-idx3-ubyte"; do
    [ -r "$f" ] && have=1
done
if [ "$synthetic" = 1 ] || { [ "$synthetic" = auto ] && [ "$have" = 0 ]; }; then
    [ "$synthetic" = 1 ] ||
        echo "gpu_pack: no Fashion-MNIST in $root (set DSE_DATA_ROOT): random images of its shape instead" >&2
    be32() { for s in 24 16 8 0; do printf "\\$(printf %03o $(( ($1 >> s) & 255 )))"; done; }
    idx() { # idx PREFIX COUNT: PREFIX-images-idx3-ubyte (random 28x28 bytes) and labels (0..9 in turn)
        { printf '\000\000\010\003'; be32 "$2"; be32 28; be32 28; head -c $(($2 * 784)) /dev/urandom; } \
            >"$1-images-idx3-ubyte" || return 1
        printf '\000\001\002\003\004\005\006\007\010\011' >"$work/l.1"
        n=10
        while [ "$n" -lt "$2" ]; do
            cat "$work/l.1" "$work/l.1" >"$work/l.2" && mv "$work/l.2" "$work/l.1" || return 1
            n=$((n * 2))
        done
        { printf '\000\000\010\001'; be32 "$2"; head -c "$2" "$work/l.1"; } >"$1-labels-idx1-ubyte"
    }
    root=$work/data
    mkdir -p "$root/fashion-mnist" || die "cannot create $root"
    idx "$root/fashion-mnist/train" "$images" && idx "$root/fashion-mnist/t10k" "$test_images" ||
        die "cannot write the synthetic dataset in $root"
    data=synthetic
elif [ "$have" = 0 ]; then
    die "no Fashion-MNIST in $root: install dataset-fashion-mnist, set DSE_DATA_ROOT, or GPU_PACK_SYNTHETIC=auto"
fi

# ---- the space: K candidates, IMAGES images each ----------------------------------------
drop=$(awk -v k="$k" 'BEGIN { for (i = 0; i < k; i++) printf "%s%.2f", (i ? ", " : ""), 0.5 - 0.02 * i }')
space=$work/gpu_pack.cfg
sed -e "s/^  dropout = .*/  dropout = [$drop];/" -e "s/^  limit_train = .*/  limit_train = $images;/" \
    -e "s/^  limit_test = .*/  limit_test = $test_images;/" bench/gpu_pack.cfg >"$space" || die "cannot write $space"
grep -q "dropout = \[$drop\]" "$space" && grep -q "limit_train = $images;" "$space" ||
    die "bench/gpu_pack.cfg no longer has 'dropout = [...]' and 'limit_train = N;' lines of their own"
per_cand=$(( epochs * (images / batch) * batch ))   # full batches only: the engine drops the last partial one
total=$(( k * per_cand ))

# run NAME PER_GPU: one sweep in a fresh directory; prints its line, appends its rate to $work/NAME.rates
run() {
    dir=$work/$1.$2
    log=$logs/$1.$2.log
    rm -rf "$dir"
    if ! "$dse" sweep "$space" --out "$dir" --analytic-only >"$log" 2>&1; then
        cat "$log" >&2
        die "dse sweep --analytic-only failed"
    fi
    # $cand: how much packing slows one candidate down
    timed_sweep "$1" "$3" "$dir" "$log" --data-root "$root" --gpus "$gpu" --per-gpu "$3" --precision "$precision"
    # cuDNN's (shape, direction) choices the workers found, and those taken from another
    # worker's find (the process's shared pool): from the workers' "cuDNN conv choices" lines
    finds=$(grep -o 'cuDNN conv choices: [0-9]* found' "$log" | awk '{ s += $4 } END { print s + 0 }')
    taken=$(grep -o '([0-9]* more taken from another model' "$log" | tr -d '(' | awk '{ s += $1 } END { print s + 0 }')
    awk -v t0="$t0" -v t1="$t1" -v n="$total" -v name="$1" -v per="$3" -v k="$k" -v data="$data" -v prec="$precision" \
        -v cand="$cand" -v run="$2" -v rates="$work/$1.rates" -v finds="$finds" -v taken="$taken" 'BEGIN {
        w = t1 - t0
        printf "name=gpu_pack.fmnist k=%d per_gpu=%s run=%d images=%d wall_s=%.2f agg_img_per_s=%.1f cand_img_per_s=%s finds=%d taken=%d precision=%s data=%s\n",
               k, per, run, n, w, n / w, cand, finds, taken, prec, data
        printf "%.3f\n", n / w >> rates }'
}

i=1
while [ "$i" -le "$repeat" ]; do
    run one "$i" 1
    run packed "$i" "$packed"
    i=$((i + 1))
done
median() {
    sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
one=$(median "$work/one.rates")
pk=$(median "$work/packed.rates")
awk -v a="$one" -v b="$pk" -v k="$k" -v per="$packed" 'BEGIN {
    printf "name=gpu_pack.fmnist k=%d per_gpu=%s ratio=%.2f one_agg_img_per_s=%.1f packed_agg_img_per_s=%.1f target=3 met=%s\n",
           k, per, b / a, a, b, (b >= 3 * a) ? "yes" : "no" }'
