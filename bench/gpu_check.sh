#!/bin/sh
# gpu_check.sh: the one-shot check of the CUDA backend (issue #6 item 7). On a fresh GPU
# machine with the CUDA toolkit and cuDNN (system-wide, or only inside PyTorch's pip
# packages), from a copy of this repository: find the build dependencies (installed, or
# the .deb files tools/fetch-debs downloaded elsewhere, unpacked with dpkg -x), configure
# with the CUDA backend required, build, run every GPU test and the GPU benchmarks, and
# print a one-screen summary. Needs no package registry and no network. A few minutes.
#
# Usage: bench/gpu_check.sh [--all-tests] [--quick] [--no-bench] [--sweep227]
#   --all-tests  also run the CPU test suite in the GPU build
#   --quick      skip the SqueezeNet v1.0 benchmark and the packing benchmark
#   --no-bench   build and test only
#   --sweep227   also the 227x227 sweep (bench/gpu_sweep227.sh, issue #20 item 6; minutes)
# Each phase's wall time is in the summary (plan a GPU session's minutes by it).
# Environment: BUILD (default build-gpu), CUDNN_ROOT, CUDA_ARCH (e.g. 90; default: the
# GPU's), DSE_GPU_CHECK_DEBS=1 (use third_party/debs even if the system has the -dev
# packages), DSE_GPU_CHECK_FMNIST=DIR (Fashion-MNIST's IDX files for the epoch-vs-step
# figure; default .data/fashion-mnist or /usr/share/datasets/fashion-mnist), GPU_PACK_K and
# GPU_PACK_IMAGES (bench/gpu_pack.sh), JOBS. Exit status 0 when everything built and
# passed. Logs: $BUILD/gpu_check/.
set -u
cd "$(dirname "$0")/.." || exit 1
src=$(pwd)
build=${BUILD:-build-gpu}
logs=$build/gpu_check
all_tests=0 quick=0 bench=1 sweep227=0
for a in "$@"; do
    case $a in
    --all-tests) all_tests=1 ;;
    --quick) quick=1 ;;
    --no-bench) bench=0 ;;
    --sweep227) sweep227=1 ;;
    *) echo "usage: bench/gpu_check.sh [--all-tests] [--quick] [--no-bench] [--sweep227]" >&2; exit 2 ;;
    esac
done
started=$(date +%s)
phase_at=$started
phases=""
# kv(line, key): the value of key=value in a benchmark line, for the awk programs below
awk_kv='function kv(line, key,   a, i, n, f) { n = split(line, f, " "); for (i = 1; i <= n; i++) {
            split(f[i], a, "="); if (a[1] == key) return substr(f[i], length(key) + 2) } return "" }'
# phase NAME: the seconds since the last phase mark, for the summary
phase() {
    t=$(date +%s)
    phases="$phases $1=$((t - phase_at))s"
    phase_at=$t
}
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
note() { echo "gpu_check: $*" >&2; }
status=0
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}

# ---- facts ----------------------------------------------------------------------------
gpu="none found"
if command -v nvidia-smi >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>/dev/null |
          head -1)
    [ -n "$gpu" ] || gpu="nvidia-smi failed: $(nvidia-smi 2>&1 | head -1)"
fi
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
nvcc_v=none
[ -n "$nvcc" ] && nvcc_v=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1)
torch=$(python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
torch.backends.cudnn.version(), "gpus", torch.cuda.device_count())' 2>/dev/null || echo "no PyTorch")

# ---- build dependencies: installed, or unpacked from third_party/debs ------------------
cmake_args=""
have_sys=1
pkg-config --exists libconfig openblas libtiff-4 libwebp 2>/dev/null || have_sys=0
[ -e /usr/include/zlib.h ] || have_sys=0
deps=system
if [ "$have_sys" = 0 ] || [ "${DSE_GPU_CHECK_DEBS:-0}" = 1 ]; then
    debs=third_party/debs
    root=$src/$debs/root
    if ! ls "$debs"/*.deb >/dev/null 2>&1; then
        note "libconfig/OpenBLAS/zlib headers are not installed and $debs/ has no .deb files:"
        note "run tools/fetch-debs on a Debian/Ubuntu machine with apt and copy $debs/ here"
        exit 1
    fi
    rm -rf "$root" && mkdir -p "$root"
    for d in "$debs"/*.deb; do
        if command -v dpkg-deb >/dev/null 2>&1; then
            dpkg-deb -x "$d" "$root" || { note "dpkg-deb -x $d failed"; exit 1; }
        else # no dpkg: a .deb is an ar archive holding data.tar.*
            python3 - "$d" "$root" <<'EOF' || { note "cannot unpack $d"; exit 1; }
import io, sys, tarfile
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'!<arch>\n'
at = 8
while at < len(data):
    name, size = data[at:at + 16].decode().strip().rstrip('/'), int(data[at + 48:at + 58])
    body = data[at + 60:at + 60 + size]
    if name.startswith('data.tar'):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    at += 60 + size + (size & 1)
EOF
        fi
    done
    lib=$root/usr/lib/x86_64-linux-gnu
    # Only the unpacked .pc files, with their /usr paths moved under root.
    export PKG_CONFIG_LIBDIR="$lib/pkgconfig:$lib/openblas-pthread/pkgconfig:$root/usr/share/pkgconfig"
    export PKG_CONFIG_SYSROOT_DIR="$root"
    export LD_LIBRARY_PATH="$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cmake_args="-DCMAKE_PREFIX_PATH=$root/usr -DZLIB_ROOT=$root/usr"
    # The unpacked headers before the system's: pkg-config drops -I/usr/include (a system
    # directory) from the .pc files, so a machine with its own libjpeg headers (another
    # version: jconfig.h says which) would compile against those and link against ours.
    export CFLAGS="-I$root/usr/include/x86_64-linux-gnu -I$root/usr/include ${CFLAGS:-}"
    if ! command -v pkg-config >/dev/null 2>&1; then
        cmake_args="$cmake_args -DPKG_CONFIG_EXECUTABLE=$root/usr/bin/pkgconf"
    fi
    deps="unpacked $(ls "$debs"/*.deb | wc -l) .debs into $debs/root"
fi

# ---- cuDNN: system, CUDNN_ROOT, or PyTorch's site-packages/nvidia/cudnn -----------------
cudnn_root=${CUDNN_ROOT:-}
if [ -z "$cudnn_root" ] && ! ls /usr/include/cudnn_version.h /usr/include/*/cudnn_version.h \
        /usr/local/cuda/include/cudnn_version.h >/dev/null 2>&1; then
    cudnn_root=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
fi
if [ -n "$cudnn_root" ]; then
    cmake_args="$cmake_args -DCUDNN_ROOT=$cudnn_root"
    export LD_LIBRARY_PATH="$cudnn_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # PyTorch's wheels keep cuBLAS beside it; the toolkit's is used for the build.
    cublas=$(dirname "$cudnn_root")/cublas/lib
    [ -d "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$cublas"
fi

# ---- configure and build ----------------------------------------------------------------
arch=${CUDA_ARCH:-}
if [ -z "$arch" ] && command -v nvidia-smi >/dev/null 2>&1; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
fi
[ -n "$arch" ] || arch=90
[ -n "$nvcc" ] && cmake_args="$cmake_args -DCMAKE_CUDA_COMPILER=$nvcc"
configure() {
    # shellcheck disable=SC2086
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
        $cmake_args "$@" > "$logs/configure.log" 2>&1
}
built=no
rm -f "$build/CMakeCache.txt" # a fresh configure: dependencies may come from elsewhere than last time
if ! configure; then
    if grep -q "unsupported GNU version\|unsupported host compiler" "$logs/configure.log"; then
        note "nvcc rejects this host compiler's version; retrying with -allow-unsupported-compiler"
        rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
        configure -DCMAKE_CUDA_FLAGS=-allow-unsupported-compiler || true
    fi
fi
if grep -q "dse: CUDA backend on" "$logs/configure.log"; then
    if cmake --build "$build" -j "$jobs" > "$logs/build.log" 2>&1; then
        built=yes
    else
        status=1
        built="FAILED (see $logs/build.log)"
        tail -20 "$logs/build.log" >&2
    fi
else
    status=1
    built="configure FAILED (see $logs/configure.log)"
    tail -20 "$logs/configure.log" >&2
fi
warnings=$(grep -c "warning" "$logs/build.log" 2>/dev/null || true)
backend=$(sed -n 's/.*dse: CUDA backend on (\(.*\))/\1/p' "$logs/configure.log" | head -1)

# ---- tests --------------------------------------------------------------------------------
tests="not run"
if [ "$built" = yes ]; then
    DSE_TEST_VERBOSE=1 "$build/test_engine_cuda" > "$logs/test_engine_cuda.log" 2>&1
    rc=$?
    ok=$(grep -c " ok$" "$logs/test_engine_cuda.log")
    bad=$(grep -c " FAILED$" "$logs/test_engine_cuda.log")
    case $rc in
    0) tests="test_engine_cuda passed ($ok cases)" ;;
    77) tests="test_engine_cuda SKIPPED: $(grep '^skipped:' "$logs/test_engine_cuda.log")"; status=1 ;;
    *) tests="test_engine_cuda FAILED ($bad of $((ok + bad)) cases; see $logs/test_engine_cuda.log)"; status=1 ;;
    esac
    (cd "$build" && ctest -L gpu --output-on-failure) > "$logs/ctest_gpu.log" 2>&1 || status=1
    ctest_gpu=$(grep "tests passed\|tests failed" "$logs/ctest_gpu.log" | tail -1)
    skips=$(grep -c "(Skipped)" "$logs/ctest_gpu.log")
    [ "$skips" = 0 ] || ctest_gpu="$ctest_gpu; $skips of them SKIPPED (ctest counts skips as passed)"
    if [ "$all_tests" = 1 ]; then
        (cd "$build" && ctest -j "$jobs" --output-on-failure) > "$logs/ctest_all.log" 2>&1 || status=1
        ctest_all=$(grep "tests passed\|tests failed" "$logs/ctest_all.log" | tail -1)
    fi
fi

# ---- benchmarks ---------------------------------------------------------------------------
# Ours (bench_cuda) and PyTorch + cuDNN (bench/pytorch_ref.py --device cuda) on the same GPU
# in the same run, issue #6 item 6: SqueezeNet-FMNIST at batch 256 and SqueezeNet v1.0 at
# batch 64, FP32 and TF32, deterministic cuDNN algorithms only (our default) and any.
# Compared: our step on a batch already on the device (resident_img_per_s, as PyTorch's
# reference keeps its batch) against PyTorch's images/s; our step with the upload is in
# bench.log too. Then packing (bench/gpu_pack.sh): K candidates one at a time vs sharing the GPU.
: > "$logs/bench.log"
: > "$logs/compare.log"
rm -f "$logs/pack.log" "$logs/ceiling.log" "$logs/sweep227.log" # no figures of an earlier call in this summary
py=$(command -v python3 2>/dev/null || true)
have_torch=0
[ -n "$py" ] && "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && have_torch=1
phase build-and-tests
if [ "$built" = yes ] && [ "$status" = 0 ] && [ "$bench" = 1 ]; then
    "$build/bench_cuda" --net fmnist --batch 256 --iters 20 --algos both --math all >> "$logs/bench.log" 2>&1 || status=1
    if [ "$quick" = 0 ]; then
        "$build/bench_cuda" --net v10 --batch 64 --iters 10 --algos both --math all --no-layers >> "$logs/bench.log" 2>&1 ||
            status=1
    fi
    if [ "$have_torch" = 1 ]; then
        for net in fmnist v10; do
            [ "$net" = v10 ] && [ "$quick" = 1 ] && continue
            b=256 it=20
            [ "$net" = v10 ] && b=64 it=10
            # Every precision, both algorithm sets, both memory formats, in one process.
            PYTHONUNBUFFERED=1 "$py" bench/pytorch_ref.py --net "$net" --batch "$b" --iters "$it" --warmup 5 \
                --device cuda --precision all --algos both --memory-format both >> "$logs/bench.log" 2>&1 || status=1
        done
        # name=compare.gpu.NET.PREC.ALGOS ours=... pytorch=... (PyTorch's better memory format) ratio=ours/pytorch
        awk "$awk_kv"'
            /^name=cuda.train / { k = kv($0, "net") "." kv($0, "math") "." kv($0, "algos"); ours[k] = kv($0, "resident_img_per_s") }
            /^name=bench.* impl=pytorch / { nm = kv($0, "name"); sub(/^bench[.]/, "", nm); k = nm "." kv($0, "precision") "." kv($0, "algos");
                                             v = kv($0, "img_per_s") + 0; if (v > torch[k]) { torch[k] = v; fmt[k] = kv($0, "format") } }
            END { for (k in ours) if (k in torch) printf "name=compare.gpu.%s ours_img_per_s=%s pytorch_img_per_s=%.1f pytorch_format=%s ratio=%.2f\n",
                                                    k, ours[k], torch[k], fmt[k], ours[k] / torch[k] }' "$logs/bench.log" |
            sort > "$logs/compare.log"
    fi
    # Epochs at step speed (issue #20 item 3): dse train's epoch throughput on Fashion-MNIST
    # at batch 256 against bench_cuda's step on a resident batch, same net, precision, algorithms.
    fm=${DSE_GPU_CHECK_FMNIST:-}
    [ -z "$fm" ] && for d in .data/fashion-mnist /usr/share/datasets/fashion-mnist; do
        [ -f "$d/train-images-idx3-ubyte.gz" ] || [ -f "$d/train-images-idx3-ubyte" ] && { fm=$d; break; }
    done
    : > "$logs/epoch.log"
    if [ -n "$fm" ] && [ -n "$py" ]; then
        for prec in fp32 tf32; do
            "$build/dse" train experiments/squeezenet/squeezenet_fmnist.cfg --data "$fm" --device cuda --batch 256 \
                --epochs 3 --precision "$prec" --algos any --json > "$logs/epoch_$prec.json" 2>> "$logs/epoch.log" || status=1
            "$py" - "$logs/epoch_$prec.json" "$prec" "$logs/bench.log" >> "$logs/epoch.log" <<'EOF2' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
ep = [e["img_per_s"] for e in r.get("per_epoch", [])][1:] or [r["img_per_s"]]
step = 0.0
for line in open(sys.argv[3]):
    f = dict(w.split("=", 1) for w in line.split() if "=" in w)
    if line.startswith("name=cuda.train ") and f.get("net") == "squeezenet_fmnist" and f.get("math") == sys.argv[2] \
            and f.get("algos") == "any" and f.get("batch") == "256":
        step = float(f["resident_img_per_s"])
best = max(ep)
print(f"name=epoch_vs_step.fmnist.{sys.argv[2]}.any epoch_img_per_s={best:.1f} step_img_per_s={step:.1f} "
      f"ratio={best / step if step else 0:.3f} top1={r.get('top1')}")
EOF2
        done
    else
        echo "name=epoch_vs_step skipped: no Fashion-MNIST (.data/fashion-mnist or /usr/share/datasets) or no python3" \
            >> "$logs/epoch.log"
    fi
    phase bench-compare-epochs
    if [ "$quick" = 0 ]; then
        pk=${GPU_PACK_K:-8}
        GPU_PACK_K=$pk sh bench/gpu_pack.sh "$build" > "$logs/pack.log" 2>&1 || status=1
        # What packing can reach (docs/sweep-dir.md): in the steady state K packed candidates
        # of batch 64 train no faster than one step of batch 64 K; the ratio of the two step
        # rates (bench_cuda, resident batch, the packing run's FP32 and deterministic choices)
        # bounds the packing ratio unless one-at-a-time sweeps leave the GPU idle.
        : > "$logs/ceiling.log"
        for b in 64 $((64 * pk)); do
            "$build/bench_cuda" --net fmnist --batch "$b" --iters 20 --algos det --math fp32 --no-layers \
                >> "$logs/ceiling.log" 2>&1 || status=1
        done
        awk -v k="$pk" "$awk_kv"'
            /^name=cuda.train / { r[kv($0, "batch")] = kv($0, "resident_img_per_s") }
            END { if (r[64] + 0 > 0 && r[64 * k] + 0 > 0)
                      printf "name=gpu_pack.ceiling k=%d step64_img_per_s=%s step%d_img_per_s=%s ceiling=%.2f\n",
                             k, r[64], 64 * k, r[64 * k], r[64 * k] / r[64] }' "$logs/ceiling.log" >> "$logs/pack.log"
        phase packing
    fi
    if [ "$sweep227" = 1 ]; then
        sh bench/gpu_sweep227.sh "$build" > "$logs/sweep227.log" 2>&1 || status=1
        phase sweep227
    fi
fi

# ---- summary ------------------------------------------------------------------------------
say "==== dse gpu_check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
say "gpu:      $gpu"
device=$(grep -h '^  device=\|^# device=' "$logs"/test_engine_cuda.log "$logs/bench.log" 2>/dev/null | head -1 |
         sed 's/^[ #]*//')
say "device:   ${device:-none (no CUDA device answered)}"
libs=$(grep -h '^  driver=' "$logs/test_engine_cuda.log" 2>/dev/null | head -1 | sed 's/^ *//')
say "libs:     ${libs:-unknown (test_engine_cuda did not run)}"
say "toolkit:  nvcc $nvcc_v; $torch"
say "deps:     $deps; cuDNN ${cudnn_root:-from the system}"
say "backend:  ${backend:-not configured}"
say "build:    $built ($warnings warning lines) in $build, CUDA architectures $arch"
say "tests:    $tests"
[ -n "${ctest_gpu:-}" ] && say "ctest:    gpu label: $ctest_gpu"
[ -n "${ctest_all:-}" ] && say "ctest:    all: $ctest_all"
grep " FAILED$" "$logs/test_engine_cuda.log" 2>/dev/null | sed 's/^/  failed: /' | tee -a "$summary"
grep "NMSE .* > tol" "$logs/test_engine_cuda.log" 2>/dev/null | head -8 | sed 's/^ */  /' | tee -a "$summary"
if [ -s "$logs/bench.log" ]; then
    say "bench:"
    grep "^name=cuda.train" "$logs/bench.log" |
        sed 's/^name=cuda.train /  /; s/ iters=[0-9]*//; s/ min_ms=[0-9.]*//; s/ loss=.*//' | tee -a "$summary"
fi
if [ -s "$logs/compare.log" ]; then
    say "vs PyTorch (same GPU, same run; ours on a resident batch, as PyTorch's):"
    sed 's/^name=compare.gpu./  /' "$logs/compare.log" | tee -a "$summary"
elif [ "$have_torch" = 0 ]; then
    say "vs PyTorch: not run (no python3 with a CUDA-enabled torch)"
fi
if [ -s "$logs/epoch.log" ]; then
    say "epochs vs steps (dse train, epochs 2-3, best; bench_cuda resident step, batch 256):"
    grep "^name=epoch_vs_step" "$logs/epoch.log" | sed 's/^name=epoch_vs_step./  /' | tee -a "$summary"
fi
if [ -s "$logs/pack.log" ]; then
    say "packing:"
    grep -e "^name=gpu_pack.fmnist" -e "^name=gpu_pack.ceiling" "$logs/pack.log" | sed 's/^name=gpu_pack./  /' | tee -a "$summary"
fi
if [ -s "$logs/sweep227.log" ]; then
    say "227x227 sweep (spaces/squeeze_ratio.cfg, synthetic pack):"
    grep "^name=gpu_sweep227" "$logs/sweep227.log" | sed 's/^name=//' | sed 's/^/  /' | tee -a "$summary"
    grep -q "^name=gpu_sweep227 " "$logs/sweep227.log" || tail -5 "$logs/sweep227.log" | sed 's/^/  /' | tee -a "$summary"
elif [ "$sweep227" = 1 ]; then
    say "227x227 sweep: not run (it needs the build, the tests passed and the benchmarks: no --no-bench)"
fi
phase summary
say "time:     $(($(date +%s) - started)) s:$phases"
say "logs:     $logs/ (summary.txt, configure, build, test_engine_cuda, ctest, bench, compare, pack)"
if [ "$status" = 0 ]; then
    say "result:   PASS"
elif grep -q "^skipped:" "$logs/test_engine_cuda.log" 2>/dev/null; then
    say "result:   FAIL: no CUDA device, so nothing ran on a GPU (the backend built)"
else
    say "result:   FAIL"
fi
exit "$status"
