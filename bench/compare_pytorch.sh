#!/usr/bin/env bash
# compare_pytorch.sh: the CPU engine against PyTorch as a user would run it today (issue #19
# item 1): current PyTorch from PyPI in its own virtual environment (bench/torch_venv.sh,
# made on first use; never by the tests) and Debian's python3-torch when installed, each in
# NCHW and channels_last, all with glibc's malloc told to keep its memory (stock PyTorch
# spends most of its time in page faults otherwise), interleaved with ours in one run.
# Cases: SqueezeNet-FMNIST training at batch 128, SqueezeNet v1.0 training at batch 16 and
# inference at batches 1 and 16, each at 1 and 2 threads, each in float32 and, where the CPU
# has AVX512-BF16, in bf16 (issue #37: ours with --precision bf16, PyTorch under
# torch.autocast("cpu", dtype=torch.bfloat16)). The machine's FMA, bf16 and sgemm peaks
# (build/bench_peak) come first. Not a test (docs/conventions.md#benchmarks).
#
# Prints the machine facts and peaks, each run's own line (round=R added), then per case
#   name=compare.<net>.<mode>.b<batch>.t<T> ours_img_per_s=... best_pytorch=<config>
#   best_img_per_s=... ratio=<ours/best> target=1.0 met=yes|no  <config>_img_per_s=...
#   (target 1.0: issue #37 asks float32 to be level with PyTorch at least, v1.0 to stay ahead)
# and for training cases the step's FLOPs (analyzer: 3 x forward, conv and fc) per second
# against T times the one-thread sgemm peak:
#   name=peak_share.<net>.t<T> gflops=... sgemm_peak_gflops=... share=... target=0.6|0.5
# bf16 cases are named compare.<net>.<mode>.b<batch>.t<T>.bf16 (target 1.2 against PyTorch's
# best bf16), their training share is of T times the one-core bf16 peak
# (name=peak_share.<net>.t<T>.bf16 ... bf16_peak_gflops=..., or amx_peak_gflops=... of TDPBF16PS
# where dse's bf16 products run on AMX tiles: bench_peak's name=peak.amx), and each bf16 case adds
#   name=bf16_speedup.<net>.<mode>.b<batch>.t<T> bf16_img_per_s=... fp32_img_per_s=... speedup=...
#     target=1.5 (3 where the CPU has AMX, for SqueezeNet v1.0 training) met=yes|no
# Each img_per_s is the median over the rounds of the runs' own figures.
#
# Usage: bench/compare_pytorch.sh [path/to/dse]     (default: build/dse; build/bench_peak beside it)
# Environment: DSE_BEFORE (another dse, e.g. the build before a change: run interleaved
#   too, in every precision, its median added as before_img_per_s= and ours / it as speedup=),
#   ROUNDS (default 2),
#   THREADS (default "1 2"), PRECISIONS (default "fp32 bf16" where the CPU has avx512_bf16,
#   else "fp32"), TORCH_PYTHONS (interpreters to
#   compare; default: the venv's and /usr/bin/python3 if it has torch), NO_VENV=1 (skip the
#   venv), ITERS_FMNIST_TRAIN (6), ITERS_V10_TRAIN (3), ITERS_V10_INFER1 (20),
#   ITERS_V10_INFER16 (5). About 15 minutes on 2 idle cores. Exit status 2: no dse, or no
#   PyTorch at all.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
peak_bin=$(dirname "$dse")/bench_peak
rounds=${ROUNDS:-2}
threads_list=${THREADS:-1 2}
if grep -qw avx512_bf16 /proc/cpuinfo; then precisions=${PRECISIONS:-fp32 bf16}; else precisions=${PRECISIONS:-fp32}; fi
amx=0
grep -qw amx_bf16 /proc/cpuinfo && amx=1
tuned='glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295'
ref=$root/bench/pytorch_ref.py

if [ -n "${DSE_BEFORE:-}" ] && [ ! -x "$DSE_BEFORE" ]; then
    echo "compare_pytorch: DSE_BEFORE=$DSE_BEFORE is not an executable" >&2
    exit 2
fi
if [ ! -x "$dse" ] || [ ! -x "$peak_bin" ]; then
    echo "compare_pytorch: no dse or bench_peak at $dse; build them first:" >&2
    echo "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2" >&2
    exit 2
fi
pys=()
if [ -n "${TORCH_PYTHONS:-}" ]; then
    read -r -a pys <<<"$TORCH_PYTHONS"
else
    if [ "${NO_VENV:-0}" != 1 ]; then
        venv_py=$("$root/bench/torch_venv.sh") || { echo "compare_pytorch: bench/torch_venv.sh failed" >&2; exit 2; }
        pys+=("$venv_py")
    fi
    /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 && pys+=(/usr/bin/python3)
fi
[ ${#pys[@]} -gt 0 ] || { echo "compare_pytorch: no Python with torch (bench/torch_venv.sh, or apt-get install python3-torch)" >&2; exit 2; }
cd "$root" || exit 1

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine cores=$(nproc) cpu=\"$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)\"" \
     "flags=\"$(grep -m1 -ow -e avx2 -e avx512f -e avx512_bf16 -e amx_tile -e amx_bf16 /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')\"" \
     "precisions=\"$precisions\" threads=\"$threads_list\" loadavg=\"$(loadavg)\" rounds=$rounds dse=$dse"
for py in "${pys[@]}"; do
    echo "pytorch python=$py $("$py" -c 'import torch; print("torch=" + torch.__version__ + " onednn=" + (".".join(map(str, torch.backends.mkldnn.version())) if hasattr(torch.backends.mkldnn, "version") else "?"))' 2>/dev/null)"
done
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l >= 0.5) }'; then
    echo "compare_pytorch: warning: load average $(loadavg); another process shares the CPU and the ratios say little." >&2
fi
peaks=$("$peak_bin") || { echo "compare_pytorch: bench_peak failed" >&2; exit 1; }
echo "$peaks"
sgemm_peak=$(sed -n 's/^name=peak.sgemm .* gflops=\([0-9.]*\).*/\1/p' <<<"$peaks")
bf16_peak=$(sed -n 's/^name=peak.bf16 .* gflops=\([0-9.]*\).*/\1/p' <<<"$peaks")
amx_peak=$(sed -n 's/^name=peak.amx .* gflops=\([0-9.]*\).*/\1/p' <<<"$peaks")
bf16_what=bf16
[ -n "$amx_peak" ] && bf16_peak=$amx_peak bf16_what=amx # bench_peak prints it where dse's bf16 products run on AMX

# Parameter counts: our analyzer's against the PyTorch models'.
for pair in fmnist:squeezenet_fmnist v10:squeezenet_v1.0; do
    key=${pair%%:*} net=${pair#*:}
    ours=$("$dse" analyze "experiments/squeezenet/$net.cfg" | awk '$1 == "params" { gsub(",", "", $2); print $2 }')
    theirs=$("${pys[0]}" "$ref" --net "$key" --params | sed -n 's/.* params=\([0-9]*\).*/\1/p')
    [ -n "$ours" ] && [ "$ours" = "$theirs" ] || { echo "compare_pytorch: the two $net models differ ($ours, $theirs)" >&2; exit 1; }
    echo "name=params.$net ours=$ours pytorch=$theirs equal=yes"
done

img_per_s() { sed -n 's/.* img_per_s=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                                else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A fp32_ours=() # each case's float32 median, for its bf16 speedup

# run_case KEY NET MODE BATCH ITERS T PRECISION
run_case() {
    local key=$1 net=$2 mode=$3 batch=$4 iters=$5 t=$6 prec=$7 r line cfg py fmt
    declare -A got=()
    local -a cfgs=(ours) popt=()
    [ "$prec" != fp32 ] && popt=(--precision "$prec")
    [ -n "${DSE_BEFORE:-}" ] && cfgs+=(before)
    for py in "${pys[@]}"; do
        for fmt in nchw nhwc; do cfgs+=("$py|$fmt"); done
    done
    for ((r = 1; r <= rounds; r++)); do
        for cfg in "${cfgs[@]}"; do
            if [ "$cfg" = ours ] || [ "$cfg" = before ]; then
                line=$("$([ "$cfg" = ours ] && echo "$dse" || echo "$DSE_BEFORE")" bench "experiments/squeezenet/$net.cfg" \
                       --mode "$mode" --batch "$batch" --threads "$t" --iters "$iters" "${popt[@]}") ||
                    { echo "compare_pytorch: dse bench failed" >&2; exit 1; }
                line="$line impl=$cfg"
            else
                py=${cfg%|*} fmt=${cfg#*|}
                line=$(GLIBC_TUNABLES=$tuned "$py" "$ref" --net "$key" --mode "$mode" --batch "$batch" --threads "$t" \
                       --iters "$iters" --memory-format "$fmt" --precision "$prec") ||
                    { echo "compare_pytorch: pytorch_ref failed" >&2; exit 1; }
            fi
            echo "$line round=$r"
            got[$cfg]+="$(img_per_s <<<"$line")"$'\n'
        done
    done
    local ours best=0 best_cfg='' list='' m name
    ours=$(printf '%s' "${got[ours]}" | median)
    if [ -n "${DSE_BEFORE:-}" ]; then
        m=$(printf '%s' "${got[before]}" | median)
        list+=" before_img_per_s=$m speedup=$(awk -v o="$ours" -v b="$m" 'BEGIN { printf "%.2f", (b > 0 ? o / b : 0) }')"
    fi
    for cfg in "${cfgs[@]:1}"; do
        [ "$cfg" = before ] && continue
        m=$(printf '%s' "${got[$cfg]}" | median)
        py=${cfg%|*} fmt=${cfg#*|}
        name="torch$("$py" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)_$fmt"
        list+=" ${name}_img_per_s=$m"
        if awk -v a="$m" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$m best_cfg=$name; fi
    done
    local case="$net.$mode.b$batch.t$t" sfx="" tgt=1.0
    [ "$prec" != fp32 ] && sfx=".$prec" tgt=1.2
    awk -v n="compare.$case$sfx" -v o="$ours" -v b="$best" -v c="$best_cfg" -v l="$list" -v tg="$tgt" 'BEGIN {
        r = b > 0 ? o / b : 0
        printf "name=%s ours_img_per_s=%s best_pytorch=%s best_img_per_s=%s ratio=%.2f target=%s met=%s%s\n",
               n, o, c, b, r, tg, (r >= tg ? "yes" : "no"), l }'
    if [ "$prec" = fp32 ]; then
        fp32_ours[$case]=$ours
    elif [ -n "${fp32_ours[$case]:-}" ]; then
        awk -v n="$case" -v o="$ours" -v f="${fp32_ours[$case]}" -v tg="$([ "$amx" = 1 ] && [ "$key.$mode" = v10.train ] && echo 3 || echo 1.5)" 'BEGIN {
            s = f > 0 ? o / f : 0
            printf "name=bf16_speedup.%s bf16_img_per_s=%s fp32_img_per_s=%s speedup=%.2f target=%s met=%s\n",
                   n, o, f, s, tg, (s >= tg ? "yes" : "no") }'
    fi
    if [ "$mode" = train ]; then
        local fl peak=$sgemm_peak what=sgemm
        [ "$prec" = bf16 ] && peak=$bf16_peak what=$bf16_what
        fl=$("$dse" analyze "experiments/squeezenet/$net.cfg" | awk '$1 == "FLOPs" && $2 == "training" { gsub(",", "", $4); print $4 }')
        awk -v n="$net" -v t="$t" -v f="$fl" -v o="$ours" -v p="$peak" -v w="$what" -v s="$sfx" \
            -v tg="$([ "$key" = v10 ] && echo 0.6 || echo 0.5)" 'BEGIN {
            g = f * o / 1e9; sh = p > 0 ? g / (p * t) : 0
            printf "name=peak_share.%s.t%d%s gflops=%.1f %s_peak_gflops=%.1f share=%.2f target=%s met=%s\n",
                   n, t, s, g, w, p * t, sh, tg, (sh >= tg ? "yes" : "no") }'
    fi
}

start=$(date +%s)
for t in $threads_list; do
    for prec in $precisions; do
        run_case fmnist squeezenet_fmnist train 128 "${ITERS_FMNIST_TRAIN:-6}" "$t" "$prec"
        run_case v10 squeezenet_v1.0 train 16 "${ITERS_V10_TRAIN:-3}" "$t" "$prec"
        run_case v10 squeezenet_v1.0 infer 1 "${ITERS_V10_INFER1:-20}" "$t" "$prec"
        run_case v10 squeezenet_v1.0 infer 16 "${ITERS_V10_INFER16:-5}" "$t" "$prec"
    done
done
echo "machine_end loadavg=\"$(loadavg)\" wall_s=$(($(date +%s) - start))"
