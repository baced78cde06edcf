#!/bin/sh
# conv_cache.sh DSE: --conv auto repeats its bits on one machine (issue #31). The first sweep
# times its candidates' conv shapes and keeps the choices in this machine's cache
# ($XDG_CACHE_HOME/dse/conv-v5-<CPU>-<BLAS kernels>-t<threads>.txt); a later sweep in another
# directory takes every choice from there instead of timing again (shown by a cache whose
# choices were all swapped for others: the second sweep's candidates pin the swapped ones),
# and two sweeps that take them train their candidates to the same bits; dse train keeps
# its choices in the same cache. Run from the repository root.
. "$(dirname "$0")/lib.sh"
dse=$1
space=tests/spaces/sweep_tiny.cfg
need_fmnist
make_tmp
export XDG_CACHE_HOME="$tmp/cache"
"$dse" sweep "$space" --out "$tmp/a" --workers 1 >"$tmp/a.log" 2>&1 || fail "the first sweep: $(tail -3 "$tmp/a.log")"
set -- "$tmp"/cache/dse/conv-v5-*-t1.txt
[ -f "$1" ] || fail "no machine cache after the first sweep: $(ls "$tmp"/cache/dse 2>&1)"
cache=$1
n=$(grep -vc '^#' "$cache")
[ "$n" -gt 0 ] || fail "the machine cache is empty"
for f in "$tmp"/a/checkpoints/*/conv.txt; do
    grep -v '^#' "$f" | while read -r line; do grep -qxF "$line" "$cache" || fail "$f: '$line' is not in the cache"; done || exit 1
done
echo "ok: the first sweep timed $n shapes and kept them in $(basename "$cache")"
# every choice swapped (gemm_batch <-> gemm_image, the two strategies every shape runs)
awk '/^#/ { print; next } { for (i = 17; i <= 18; i++) $i = ($i == 0 ? 1 : 0); print }' "$cache" >"$tmp/swapped"
cp "$tmp/swapped" "$cache"
"$dse" sweep "$space" --out "$tmp/b" --workers 1 >"$tmp/b.log" 2>&1 || fail "the second sweep: $(tail -3 "$tmp/b.log")"
for f in "$tmp"/b/checkpoints/*/conv.txt; do
    grep -v '^#' "$f" | while read -r line; do
        grep -qxF "$line" "$tmp/swapped" || fail "$f: '$line' was timed again, not taken from the cache"
    done || exit 1
    a="$tmp/a/checkpoints/$(basename "$(dirname "$f")")/conv.txt"
    [ "$(wc -l <"$f")" -eq "$(wc -l <"$a")" ] || fail "$f pins other shapes than its candidate's (those of $a)"
done
cmp -s "$cache" "$tmp/swapped" || fail "the second sweep changed the cache although it timed nothing"
echo "ok: the second sweep took every choice from the cache"
"$dse" sweep "$space" --out "$tmp/c" --workers 1 >"$tmp/c.log" 2>&1 || fail "the third sweep: $(tail -3 "$tmp/c.log")"
for f in "$tmp"/b/checkpoints/*/epoch-3.ckpt; do
    g="$tmp/c/checkpoints/$(basename "$(dirname "$f")")/epoch-3.ckpt"
    cmp -s "$f" "$g" || fail "$g differs from $f: two sweeps of one candidate on this machine"
done
echo "ok: two sweeps train every candidate to the same bits ($(ls "$tmp"/b/checkpoints | wc -l) candidates)"
# dse train: its default cache is the same file (1 thread), kept under a lock with the sweeps'
before=$(grep -vc '^#' "$cache")
"$dse" train experiments/squeezenet/squeezenet_fmnist.cfg --epochs 1 --limit-train 64 --limit-test 32 --batch 16 \
    --threads 1 >"$tmp/t.log" 2>&1 || fail "dse train: $(tail -3 "$tmp/t.log")"
grep -q '^16 ' "$cache" || fail "dse train did not add its batch-16 shapes to the machine cache"
for line in $(grep -v '^#' "$tmp/swapped" | tr ' ' '_'); do
    grep -qxF "$(echo "$line" | tr '_' ' ')" "$cache" || fail "dse train lost the sweeps' choice '$line'"
done
echo "ok: dse train added $(($(grep -vc '^#' "$cache") - before)) shapes to the same cache, keeping the sweeps'"
# the cache only saves timing: a damaged line is skipped (and dropped by the next merge), and
# a cache that cannot be made fails no candidate
echo "not a choice line" >>"$cache"
"$dse" sweep "$space" --out "$tmp/d" --workers 1 >"$tmp/d.log" 2>&1 || fail "a sweep beside a damaged cache: $(tail -3 "$tmp/d.log")"
[ "$(grep -l '"status": "done"' "$tmp"/d/candidates/*.json | wc -l)" -eq 4 ] || fail "a damaged cache failed a candidate"
grep -q "not a choice" "$cache" && fail "the merge kept the damaged line"
touch "$tmp/file"
XDG_CACHE_HOME="$tmp/file" "$dse" sweep "$space" --out "$tmp/e" --workers 1 >"$tmp/e.log" 2>&1 ||
    fail "a sweep without a cache folder: $(tail -3 "$tmp/e.log")"
[ "$(grep -l '"status": "done"' "$tmp"/e/candidates/*.json | wc -l)" -eq 4 ] || fail "no cache folder failed a candidate"
echo "ok: a damaged cache or none fails no candidate"
echo "conv_cache: all checks passed"
