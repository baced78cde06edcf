#!/usr/bin/env bash
# compare_pytorch.sh: our engine against Debian's PyTorch on the two networks of issue #4 item 10
# (Speed), 2 threads, in one run: SqueezeNet-FMNIST training at batch 128, SqueezeNet v1.0
# training at batch 16 and inference at batch 1 and 16. Per case and round it runs ours
# (`dse bench`), then bench/pytorch_ref.py stock, then bench/pytorch_ref.py with glibc's malloc
# told to keep its memory (GLIBC_TUNABLES below: stock PyTorch spends most of its time in page
# faults from buffers returned to the kernel, so the tuned run is the honest yardstick), and
# repeats that for ROUNDS rounds, alternating the implementations. Not a test (STYLE section 9).
#
# Prints the machine facts first, each run's own line (with round=R added), then per case
#   name=compare.<net>.<mode>.b<batch> ours_img_per_s=... pytorch_img_per_s=...
#   pytorch_tuned_img_per_s=... ratio=<ours/pytorch> ratio_tuned=<ours/pytorch_tuned>
# where each img_per_s is the median over the rounds (the mean of the two for 2 rounds) of the
# runs' own figures (each the batch over the median step time of its iterations).
#
# Usage: bench/compare_pytorch.sh [path/to/dse]     (default: build/dse in the repository)
# Environment: ROUNDS (default 2), THREADS (default 2), PYTHON (an interpreter with torch;
#   default /usr/bin/python3, Debian's), ITERS_FMNIST_TRAIN (8), ITERS_V10_TRAIN (3),
#   ITERS_V10_INFER1 (20), ITERS_V10_INFER16 (5). About 4 minutes on 2 idle cores, about 8
#   when another process keeps them busy. Exit status 2: python3-torch or dse is missing.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
rounds=${ROUNDS:-2}
threads=${THREADS:-2}
tuned='glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295'
ref=$root/bench/pytorch_ref.py

if [ ! -x "$dse" ]; then
    echo "compare_pytorch: no dse at $dse; build it first:" >&2
    echo "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2" >&2
    exit 2
fi
py=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "compare_pytorch: no Python with torch found (tried ${PYTHON:+$PYTHON, }/usr/bin/python3, python3)." >&2
    echo "  Install Debian's PyTorch:  apt-get install -y python3-torch" >&2
    echo "  (or set PYTHON to an interpreter that can import torch)" >&2
    exit 2
fi
cd "$root" || exit 1

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Machine facts.
cores=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)
torch_facts=$("$py" - "$threads" <<'EOF' 2>/dev/null
import re, sys, torch
cfg = torch.__config__.show()
cap = re.search(r"CPU capability usage: (\S+)", cfg)
dnn = re.search(r"MKL-DNN v(\S+)", cfg)
print(f"torch={torch.__version__} mkldnn_available={'yes' if torch.backends.mkldnn.is_available() else 'no'} "
      f"onednn={dnn.group(1) if dnn else 'none'} aten_cpu_capability={cap.group(1) if cap else 'unknown'} "
      f"parallel={'OpenMP' if 'OpenMP' in torch.__config__.parallel_info() else 'other'}")
EOF
)
# The ISA oneDNN dispatches to on this CPU, from its verbose banner on one small conv.
isa=$(DNNL_VERBOSE=1 ONEDNN_VERBOSE=1 "$py" -c '
import torch
torch.set_num_threads(2)
torch.nn.Conv2d(16, 16, 3, padding=1)(torch.rand(16, 16, 14, 14))' 2>/dev/null |
      sed -n 's/^onednn_verbose,info,cpu,isa:\(.*\)$/\1/p; s/^dnnl_verbose,info,cpu,isa:\(.*\)$/\1/p' | head -1)
echo "machine cores=$cores cpu=\"$cpu\" threads=$threads OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}" \
     "loadavg=\"$(loadavg)\" rounds=$rounds"
echo "pytorch python=$py $torch_facts onednn_isa=\"${isa:-unknown}\""
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l >= 0.5) }'; then
    echo "compare_pytorch: warning: load average $(loadavg) on $cores cores; another process shares the CPU." \
         "PyTorch's OpenMP threads spin while waiting and slow down several-fold when descheduled," \
         "so the ratios of this run say little." >&2
fi
echo "pytorch_tuned GLIBC_TUNABLES=$tuned"
echo "dse path=$dse"

# Parameter counts: our analyzer's against the PyTorch models'.
for pair in fmnist:squeezenet_fmnist v10:squeezenet_v1.0; do
    key=${pair%%:*} net=${pair#*:}
    ours=$("$dse" analyze "experiments/squeezenet/$net.cfg" | awk '$1 == "params" { gsub(",", "", $2); print $2 }')
    theirs=$("$py" "$ref" --net "$key" --params | sed -n 's/.* params=\([0-9]*\).*/\1/p')
    eq=no; [ -n "$ours" ] && [ "$ours" = "$theirs" ] && eq=yes
    echo "name=params.$net ours=$ours pytorch=$theirs equal=$eq"
    if [ $eq != yes ]; then echo "compare_pytorch: the two $net models differ" >&2; exit 1; fi
done

img_per_s() { sed -n 's/.* img_per_s=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                                else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# case: key cfg-name mode batch iters
run_case() {
    local key=$1 net=$2 mode=$3 batch=$4 iters=$5 r line ours='' stock='' tune=''
    for ((r = 1; r <= rounds; r++)); do
        line=$("$dse" bench "experiments/squeezenet/$net.cfg" --mode "$mode" --batch "$batch" \
               --threads "$threads" --iters "$iters") || { echo "compare_pytorch: dse bench failed" >&2; exit 1; }
        echo "$line impl=ours round=$r"
        ours+="$(img_per_s <<<"$line")"$'\n'
        line=$(env -u GLIBC_TUNABLES "$py" "$ref" --net "$key" --mode "$mode" --batch "$batch" \
               --threads "$threads" --iters "$iters") || { echo "compare_pytorch: pytorch_ref failed" >&2; exit 1; }
        echo "$line round=$r"
        stock+="$(img_per_s <<<"$line")"$'\n'
        line=$(GLIBC_TUNABLES=$tuned "$py" "$ref" --net "$key" --mode "$mode" --batch "$batch" \
               --threads "$threads" --iters "$iters") || { echo "compare_pytorch: pytorch_ref failed" >&2; exit 1; }
        echo "$line round=$r"
        tune+="$(img_per_s <<<"$line")"$'\n'
    done
    local o s t
    o=$(printf '%s' "$ours" | median) s=$(printf '%s' "$stock" | median) t=$(printf '%s' "$tune" | median)
    awk -v n="compare.$net.$mode.b$batch" -v o="$o" -v s="$s" -v t="$t" 'BEGIN {
        printf "name=%s ours_img_per_s=%s pytorch_img_per_s=%s pytorch_tuned_img_per_s=%s ratio=%.2f ratio_tuned=%.2f\n",
               n, o, s, t, (s > 0 ? o / s : 0), (t > 0 ? o / t : 0) }'
}

start=$(date +%s)
run_case fmnist squeezenet_fmnist train 128 "${ITERS_FMNIST_TRAIN:-8}"
run_case v10 squeezenet_v1.0 train 16 "${ITERS_V10_TRAIN:-3}"
run_case v10 squeezenet_v1.0 infer 1 "${ITERS_V10_INFER1:-20}"
run_case v10 squeezenet_v1.0 infer 16 "${ITERS_V10_INFER16:-5}"
echo "machine_end loadavg=\"$(loadavg)\" wall_s=$(($(date +%s) - start))"
