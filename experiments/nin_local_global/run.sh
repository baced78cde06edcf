#!/bin/sh
# Reproduce thesis Tables 4.2-4.8 (NiN and six modifications, input 227, batch 1024).
# Usage: experiments/nin_local_global/run.sh [path/to/dse]   (default: build/dse)
# Writes results/*.md next to this script; run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dse=${1:-$root/build/dse}
out=$here/results
mkdir -p "$out"
cd "$root"
d=experiments/nin_local_global
"$dse" analyze $d/nin.cfg --batch 1024 --format md > "$out/table_4.2_nin.md"
for v in 4.3:input4x 4.4:conv8_4x 4.5:conv7_6x6 4.6:classes4000 4.7:no_pool3 4.8:input454; do
    t=${v%%:*} name=${v#*:}
    "$dse" diff $d/nin.cfg $d/nin_$name.cfg --batch 1024 --format md > "$out/table_${t}_$name.md"
done
# One summary line per table: params (weights only, as the thesis prints), FLOPs, reach.
{
    echo "| table | network | weights MB | thesis MB | FLOPs (TF) | thesis TF | reach |"
    echo "|---|---|---:|---:|---:|---:|---|"
    for f in nin input4x conv8_4x conv7_6x6 classes4000 no_pool3 input454; do
        file=$d/nin_$f.cfg; [ $f = nin ] && file=$d/nin.cfg
        "$dse" analyze "$file" --batch 1024 --format json > "$out/.tmp.json"
        w=$(sed -n 's/.*"totals": {.*"weights": \([0-9]*\),.*/\1/p' "$out/.tmp.json")
        fl=$(sed -n 's/.*"totals": {.*"flops": \([0-9]*\),.*/\1/p' "$out/.tmp.json")
        reach=-
        [ $f != nin ] && reach=$("$dse" diff $d/nin.cfg "$file" --batch 1024 --format json |
                                 sed -n 's/.*"reach": "\([a-z]*\)".*/\1/p')
        # The thesis's printed figures (as quoted in issue #2), for comparison only.
        case $f in nin) t=4.2 mb=30.4 tf=2.27;; input4x) t=4.3 mb=- tf=2.92;;
                   conv8_4x) t=4.4 mb=33.9 tf=2.57;; conv7_6x6) t=4.5 mb=41.0 tf=2.99;;
                   classes4000) t=4.6 mb=42.6 tf=2.49;; no_pool3) t=4.7 mb=- tf=8.65;;
                   input454) t=4.8 mb=- tf=9.67;; esac
        awk -v t="$t" -v n="$f" -v w="$w" -v fl="$fl" -v r="$reach" -v mb="$mb" -v tf="$tf" \
            'BEGIN { printf "| %s | %s | %.2f | %s | %.3f | %s | %s |\n", t, n, w*4/1e6, mb, fl/1e12, tf, r }'
    done
} > "$out/summary.md"
rm -f "$out/.tmp.json"
cat "$out/summary.md"
