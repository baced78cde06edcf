#!/bin/sh
# experiments/compression (issue #35 item 5): Deep Compression of three Fashion-MNIST designs, 3 seeds
# each, and the squeeze-ratio sweep's frontiers on float and on compressed size. README.md gives the
# results and why the settings are what they are.
#
# Usage: experiments/compression/run.sh [path/to/dse]     (default: build/dse of this checkout)
#   DSE_EXP_WORK  where checkpoints, .dsez files and logs go (default experiments/compression/work;
#                 a few hundred megabytes, not part of the repository)
#   PHASES        which phases to run, of "float compress sweep grid control" (default all, in order)
#   CONTROL_NETS  the designs the control phase trains (default "sq sr1 sr0125")
# Every job is one dse process at 1 thread; two run at once (2 lanes, for a 2-core machine). A job
# whose result exists is skipped, so a killed run goes on where it was; the sweep resumes by itself.
# About 4.5 hours on 2 cores (Zen 4): float 1 h, compress 1 h, sweep 45 min, grid 15 min, control 1.5 h.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
W=${DSE_EXP_WORK:-$here/work}
R=$here/results
PHASES=${PHASES:-float compress sweep grid control}
CONTROL_NETS=${CONTROL_NETS:-sq sr1 sr0125}
mkdir -p "$W" "$R"
cd "$W"

# the designs: SqueezeNet-FMNIST at full width (the engine's recipe) and the squeeze-ratio space's
# first and last candidates (SR 0.125 and 1.0, quarter width)
cp "$root/experiments/squeezenet/squeezenet_fmnist.cfg" sq.cfg
"$dse" generate "$root/spaces/fmnist_squeeze_ratio.cfg" --index 0 > sr0125.cfg
"$dse" generate "$root/spaces/fmnist_squeeze_ratio.cfg" --index 7 > sr1.cfg
NETS="sq sr1 sr0125"
SEEDS="1 2 3"

# float NET SEED: 4 epochs over all 60,000 training images -> NET/sSEED/epoch-4.ckpt, NET/sSEED.json
float() {
    [ -f "$1/s$2.json" ] && grep -q '"status": *"done"' "$1/s$2.json" && return 0
    mkdir -p "$1"
    nice "$dse" train "$1.cfg" --epochs 4 --threads 1 --seed "$2" --checkpoint-dir "$1/s$2" --progress-every 60 \
        --json > "$1/s$2.json" 2> "$1/s$2.log"
}

# comp NET SEED DENSITY BITS FINETUNE -> NET/sSEED-dDENSITY-bBITS-fFINETUNE.dsez and .out (its summary)
comp() {
    t=$1/s$2-d$3-b$4-f$5
    [ -f "$t.out" ] && grep -q '^top-1:' "$t.out" && return 0
    nice "$dse" compress "$1.cfg" --checkpoint "$1/s$2/epoch-4.ckpt" --density "$3" --bits "$4" --finetune "$5" \
        --seed "$2" --threads 1 --progress-every 60 --out "$t.dsez" > "$t.out" 2> "$t.log"
}

# control NET SEED FINETUNE: the float model trained as much more as compression trains it (FINETUNE
# epochs from a fresh schedule, twice; the same learning rate, no pruning, no sharing) -> NET/sSEED-ctlF.json
control() {
    t=$1/s$2-ctl$3
    [ -f "$t.json" ] && grep -q '"status": *"done"' "$t.json" && return 0
    "$dse" export "$1.cfg" --checkpoint "$1/s$2/epoch-4.ckpt" --format ckpt --out "$t.0.ckpt" 2> "$t.log"
    nice "$dse" train "$1.cfg" --resume "$t.0.ckpt" --epochs "$3" --threads 1 --seed "$2" --checkpoint-dir "$t.a" \
        --progress-every 60 --json > "$t.a.json" 2>> "$t.log"
    "$dse" export "$1.cfg" --checkpoint "$t.a/epoch-$3.ckpt" --format ckpt --out "$t.1.ckpt" 2>> "$t.log"
    nice "$dse" train "$1.cfg" --resume "$t.1.ckpt" --epochs "$3" --threads 1 --seed "$2" --checkpoint-dir "$t.b" \
        --progress-every 60 --json > "$t.json" 2>> "$t.log"
}

lane() { # jobs (";"-separated), one after another; a failed one is said and the next goes on
    printf '%s\n' "$1" | tr ';' '\n' | while read -r j; do
        [ -n "$j" ] || continue
        eval "$j" || echo "run.sh: failed: $j (its log: $W)" >&2
    done
}
lanes() { lane "$1" & lane "$2" & wait; }

for phase in $PHASES; do
    case $phase in
    float)
        lanes "float sq 1; float sq 2; float sq 3" \
              "float sr1 1; float sr1 2; float sr1 3; float sr0125 1; float sr0125 2; float sr0125 3" ;;
    compress) # the headline: density 0.33, 6 bits, 3 + 3 fine-tuning epochs
        lanes "comp sq 1 0.33 6 3; comp sq 2 0.33 6 3; comp sq 3 0.33 6 3" \
              "comp sr1 1 0.33 6 3; comp sr1 2 0.33 6 3; comp sr1 3 0.33 6 3; comp sr0125 1 0.33 6 3; comp sr0125 2 0.33 6 3; comp sr0125 3 0.33 6 3" ;;
    sweep)
        "$dse" sweep "$here/squeeze_ratio_compressed.cfg" --out sweep --workers 2 > sweep.log 2>&1
        "$dse" report sweep > "$R/sweep_float.md"
        "$dse" report sweep --size compressed > "$R/sweep_compressed.md"
        "$dse" report sweep --format csv > "$R/sweep.csv"
        "$dse" report sweep --plot "$R/frontier_float.svg" > /dev/null
        "$dse" report sweep --size compressed --plot "$R/frontier_compressed.svg" > /dev/null
        python3 "$here/frontiers.py" "$R/sweep.csv" sweep > "$R/frontiers.md"
        rm -rf "$R/sweep" && mkdir -p "$R/sweep" && cp -r sweep/candidates sweep/plan.json sweep/space.cfg sweep/sweep.json "$R/sweep/" ;;
    grid) # without fine-tuning: weight sharing alone (density 1) at 8, 6 and 4 bits, seed 1, and pruning plus
          # sharing at several densities and bits for the two small designs
        g=""
        for n in $NETS; do for b in 8 6 4; do g="$g;comp $n 1 1 $b 0"; done; done
        for n in sr1 sr0125; do for s in $SEEDS; do
            for db in "0.33 8" "0.33 6" "0.33 4" "0.5 6" "0.2 6"; do g="$g;comp $n $s $db 0"; done
        done; done
        g=${g#;}
        lanes "$(echo "$g" | tr ';' '\n' | awk 'NR % 2' | paste -sd';')" \
              "$(echo "$g" | tr ';' '\n' | awk 'NR % 2 == 0' | paste -sd';')" ;;
    control)
        g=""
        for s in $SEEDS; do for n in $CONTROL_NETS; do g="$g;control $n $s 3"; done; done
        g=${g#;}
        lanes "$(echo "$g" | tr ';' '\n' | awk 'NR % 2' | paste -sd';')" \
              "$(echo "$g" | tr ';' '\n' | awk 'NR % 2 == 0' | paste -sd';')" ;;
    *) echo "run.sh: unknown phase '$phase' (float compress sweep grid control)" >&2; exit 2 ;;
    esac
done
sh "$here/table.sh" "$W" > "$R/table.md"
echo "results: $R/table.md, $R/sweep_float.md, $R/sweep_compressed.md, $R/frontier_*.svg"
