#!/usr/bin/env bash
# loader_vs_torchvision.sh: issue #13 item 7, images per second our loader delivers at 227x227
# with random-resized-crop + horizontal flip + normalize, on all cores, against torchvision's
# ImageFolder + DataLoader with the same transforms on the same folder, in one run. Not a test
# (docs/conventions.md#benchmarks).
#
# It generates an image folder once (`dse data synth`), packs it once as JPEG (`dse data pack`),
# reads both once so every run finds them in the page cache, then for ROUNDS rounds runs
#   dse data bench PACK            (source=pack)
#   dse data bench FOLDER          (source=folder: its train/ split, read file by file)
#   bench/torchvision_loader.py    (ImageFolder(FOLDER/train), DataLoader, num_workers=THREADS)
# rotating which one goes first from round to round (so none always follows the same one), each
# with THREADS threads/workers (default: all cores). Prints the machine facts first, each run's
# own line (with round=R added), then
#   name=loader.compare threads=T batch=B size=227 rounds=R pack_img_per_s=... folder_img_per_s=...
#   torchvision_img_per_s=... ratio_pack=<pack/torchvision> ratio_folder=<folder/torchvision>
#   pack_img_per_s_per_core=... folder_img_per_s_per_core=... torchvision_img_per_s_per_core=...
# where each figure is the median over the rounds (the mean of the two for 2 rounds) of the
# runs' own figures (each the images delivered after warm-up over the seconds they took).
#
# The data (defaults, overridable): CLASSES=10 classes of PER_CLASS=200 training images (and
# VAL_PER_CLASS=10 validation images, which no run reads), each side drawn from SIDES=256-400,
# JPEG quality 90. ImageNet's training images are mostly around 500x375 as distributed, and
# 256-400 is what loaders see once they are stored shortened to a short side of 256 or a bit
# more (the usual preprocessing: fast.ai's imagenette "320 px" and the "ImageNet 256" packs
# are of this kind), so the decode cost per image is of the same order; 2,000 images (about
# 80 MB) are several batches of 256 per epoch, stay in the page cache, and take well under a
# minute to generate on 2 cores. The pack keeps a short side of PACK_SIDE=256 (the size
# AlexNet/SqueezeNet's 227 crops are taken from) at QUALITY=90; torchvision and the folder run
# decode the images at their full 256-400 size, as ImageFolder would, so the pack's advantage
# includes its smaller images; the folder-to-torchvision ratio is the like-for-like one.
#
# The folder and the pack live in WORKDIR (default /tmp/dse-loader-bench) and are kept between
# runs; the folder is made again when the data parameters change, the pack when those or
# PACK_SIDE/QUALITY change or when dse is newer than the pack (its format may have changed).
#
# Usage: bench/loader_vs_torchvision.sh [path/to/dse]     (default: build/dse in the repository)
# Environment: ROUNDS (3), THREADS (nproc), SIZE (crop side, 227), BATCH (256), DURATION (seconds
#   measured per run, after warm-up; 10), CLASSES (10), PER_CLASS (200), VAL_PER_CLASS (10),
#   SIDES (256-400), SEED (1), PACK_SIDE (256), QUALITY (90), WORKDIR (/tmp/dse-loader-bench),
#   PYTHON (an interpreter with torchvision; default /usr/bin/python3, Debian's, else python3),
#   INSTALL=1 to apt-get install python3-torchvision python3-pil first (nothing is installed
#   otherwise). About 2 minutes for 3 rounds after the first run's data generation.
# Without torchvision it still runs and prints ours, with torchvision's figures and the ratios
# as nan. Exit status 2: dse is missing; 1: a run failed.
set -eu -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
rounds=${ROUNDS:-3}
threads=${THREADS:-$(nproc)}
size=${SIZE:-227}
batch=${BATCH:-256}
duration=${DURATION:-10}   # not SECONDS: bash keeps its own clock in that name
classes=${CLASSES:-10}
per_class=${PER_CLASS:-200}
val_per_class=${VAL_PER_CLASS:-10}
sides=${SIDES:-256-400}
seed=${SEED:-1}
pack_side=${PACK_SIDE:-256}
quality=${QUALITY:-90}
work=${WORKDIR:-/tmp/dse-loader-bench}
tv=$root/bench/torchvision_loader.py

if [ ! -x "$dse" ]; then
    echo "loader_vs_torchvision: no dse at $dse; build it first:" >&2
    echo "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j$(nproc)" >&2
    exit 2
fi
if [ "${INSTALL:-0}" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y python3-torchvision python3-pil ||
        { apt-get update && apt-get install -y python3-torchvision python3-pil; }
fi
py=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, torchvision' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "loader_vs_torchvision: no Python with torchvision found (tried ${PYTHON:+$PYTHON, }/usr/bin/python3," \
         "python3); measuring ours only. Install Debian's: apt-get install -y python3-torchvision python3-pil" \
         "(or run with INSTALL=1, or set PYTHON to an interpreter that can import torchvision)" >&2
fi

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_at_start=$(cut -d' ' -f1 /proc/loadavg)   # before our own data generation raises it
start=$(date +%s)

# Machine facts.
cores=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)
dse_jpeg=$(ldd "$dse" 2>/dev/null | awk '/jpeg/ { print $1 }' | paste -sd, -) || true
echo "machine cores=$cores cpu=\"$cpu\" threads=$threads loadavg=\"$(loadavg)\" rounds=$rounds"
echo "dse path=$dse libjpeg=${dse_jpeg:-static-or-none}"
if [ -n "$py" ]; then
    "$py" - <<'EOF' | sed "s|^|torchvision python=$py |"
import torch, torchvision
try:
    import PIL
    from PIL import features
    pil = f"pil={PIL.__version__} pil_libjpeg={features.version('jpg')} " \
          f"pil_libjpeg_turbo={'yes' if features.check_feature('libjpeg_turbo') else 'no'}"
except Exception:
    pil = "pil=unknown"
print(f"torch={torch.__version__} torchvision={torchvision.__version__} {pil}")
EOF
else
    echo "SKIP: torchvision missing (apt-get install python3-torchvision)"
fi
if awk -v l="$load_at_start" 'BEGIN { exit !(l >= 0.5) }'; then
    echo "loader_vs_torchvision: warning: load average $load_at_start at the start on $cores cores;" \
         "another process shares the CPU, and every run here wants all of them, so the figures and" \
         "ratios of this run say little." >&2
fi

# The folder and the pack, made when missing or stale. A stamp is written last, so an
# interrupted generation counts as stale.
mkdir -p "$work"
data=$work/data
pack=$work/train.pack
data_params="classes=$classes per_class=$per_class val_per_class=$val_per_class sides=$sides seed=$seed"
pack_params="$data_params pack_side=$pack_side quality=$quality format=jpeg"
if [ ! -d "$data/train" ] || [ "$(cat "$work/data.stamp" 2>/dev/null)" != "$data_params" ]; then
    echo "loader_vs_torchvision: generating $data ($data_params)" >&2
    rm -rf "$data" "$work/data.stamp" "$pack" "$work/pack.stamp"
    "$dse" data synth "$data" --classes "$classes" --train "$per_class" --val "$val_per_class" \
        --sides "$sides" --seed "$seed" >&2
    echo "$data_params" >"$work/data.stamp"
fi
if [ ! -f "$pack" ] || [ "$dse" -nt "$pack" ] || [ "$(cat "$work/pack.stamp" 2>/dev/null)" != "$pack_params" ]; then
    echo "loader_vs_torchvision: packing $pack (short side $pack_side, jpeg quality $quality)" >&2
    rm -f "$pack" "$work/pack.stamp"
    "$dse" data pack "$data" --out "$pack" --size "$pack_side" --format jpeg --quality "$quality" \
        --threads "$threads" >&2
    echo "$pack_params" >"$work/pack.stamp"
fi
n_train=$(find "$data/train" -type f -name '*.jpg' | wc -l)
echo "data folder=$data train_images=$n_train folder_bytes=$(du -sb "$data/train" | cut -f1)" \
     "pack=$pack pack_bytes=$(wc -c <"$pack") $pack_params"
# Read everything once, so that no run pays for the disk and each finds the page cache warm.
find "$data/train" -type f -exec cat {} + >/dev/null
cat "$pack" >/dev/null

img_per_s() { sed -n 's/.* img_per_s=\([0-9.]*\).*/\1/p'; }
per_core() { sed -n 's/.* img_per_s_per_core=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                                else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run of implementation $1 (pack, folder, torchvision) in round $2; appends its figures.
rate_pack='' rate_folder='' rate_tv='' core_pack='' core_folder='' core_tv=''
run_one() {
    local impl=$1 r=$2 line rate pc
    case $impl in
    pack | folder)
        local src=$pack; [ "$impl" = folder ] && src=$data   # its train split, as ImageFolder(FOLDER/train)
        line=$("$dse" data bench "$src" --size "$size" --batch "$batch" --threads "$threads" \
               --seconds "$duration" --aug rrc) || { echo "loader_vs_torchvision: dse data bench $src failed" >&2; exit 1; } ;;
    torchvision)
        [ -n "$py" ] || return 0
        line=$("$py" "$tv" --root "$data" --size "$size" --batch "$batch" --workers "$threads" \
               --seconds "$duration") || { echo "loader_vs_torchvision: torchvision_loader.py failed" >&2; exit 1; } ;;
    esac
    line=$(grep -m1 '^name=' <<<"$line") || { echo "loader_vs_torchvision: $impl printed no name= line" >&2; exit 1; }
    echo "$line round=$r"
    rate=$(img_per_s <<<"$line") pc=$(per_core <<<"$line")
    if [ -z "$rate" ]; then echo "loader_vs_torchvision: no img_per_s in the $impl line" >&2; exit 1; fi
    case $impl in
    pack) rate_pack+="$rate"$'\n' core_pack+="$pc"$'\n' ;;
    folder) rate_folder+="$rate"$'\n' core_folder+="$pc"$'\n' ;;
    torchvision) rate_tv+="$rate"$'\n' core_tv+="$pc"$'\n' ;;
    esac
}

impls=(pack folder torchvision)
for ((r = 1; r <= rounds; r++)); do
    for ((i = 0; i < 3; i++)); do
        run_one "${impls[(r - 1 + i) % 3]}" "$r"
    done
done

med() { printf '%s' "$1" | awk NF | median; }
awk -v t="$threads" -v b="$batch" -v s="$size" -v n="$rounds" \
    -v p="$(med "$rate_pack")" -v f="$(med "$rate_folder")" -v v="$(med "$rate_tv")" \
    -v pc="$(med "$core_pack")" -v fc="$(med "$core_folder")" -v vc="$(med "$core_tv")" 'BEGIN {
    ok = (v ~ /^[0-9.]+$/ && v + 0 > 0)   # "nan" when torchvision did not run
    rp = (ok && p ~ /^[0-9.]+$/ ? sprintf("%.2f", p / v) : "nan"); rf = (ok && f ~ /^[0-9.]+$/ ? sprintf("%.2f", f / v) : "nan")
    printf "name=loader.compare threads=%s batch=%s size=%s aug=rrc+flip rounds=%s pack_img_per_s=%s folder_img_per_s=%s " \
           "torchvision_img_per_s=%s ratio_pack=%s ratio_folder=%s pack_img_per_s_per_core=%s " \
           "folder_img_per_s_per_core=%s torchvision_img_per_s_per_core=%s\n", t, b, s, n, p, f, v, rp, rf, pc, fc, vc }'
echo "machine_end loadavg=\"$(loadavg)\" wall_s=$(($(date +%s) - start))"
