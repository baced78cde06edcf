#!/bin/sh
# crash_retry.sh DSE: outside kills are never a permanent failure (issue #18 item 3). A
# worker is SIGKILLed inside a candidate's first epoch; with --max-crashes 1 the next
# command marks the candidate failed, saying why and that the next command retries it
# (failed_retry); the command after that trains it again, and the sweep ends with the
# report of an uninterrupted run, bit for bit; it also removes a temporary file a killed
# writer left, and not a live one's; and a worker killed within an epoch is resumed there
# (--checkpoint-every). Run from the repository root.
dse=$1
space=tests/spaces/crash_retry.cfg
[ -d "${DSE_DATA_ROOT:-/usr/share/datasets}/fashion-mnist" ] || { echo "skipped: Fashion-MNIST is not installed"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
opts="--workers 1 --conv gemm_batch --lease-seconds 2 --max-crashes 1"
"$dse" sweep "$space" --out "$tmp/ref" $opts >"$tmp/ref.log" 2>&1 || fail "the uninterrupted sweep: $(tail -3 "$tmp/ref.log")"
# 1. killed inside the first candidate's first epoch (its lease exists, no checkpoint yet)
"$dse" sweep "$space" --out "$tmp/s" $opts >"$tmp/1.log" 2>&1 &
pid=$!
i=0
while [ $i -lt 3000 ] && ! ls "$tmp"/s/leases/*.1 >/dev/null 2>&1; do sleep 0.01; i=$((i + 1)); done
kill -9 $pid
wait $pid 2>/dev/null
ls "$tmp"/s/checkpoints/*/epoch-1.ckpt >/dev/null 2>&1 && fail "the kill came after a first epoch ended: retry the test"
echo "ok: worker killed inside the first epoch of $(ls "$tmp"/s/leases | head -1 | cut -d. -f1)"
# 2. the next command finds its worker dead once: with --max-crashes 1 it is failed, for now
"$dse" sweep "$space" --out "$tmp/s" $opts >"$tmp/2.log" 2>&1 || fail "the second command: $(tail -3 "$tmp/2.log")"
grep -q "failed: its workers died 1 times in a row .*the next dse sweep of this directory retries it" "$tmp/2.log" ||
    fail "the second command did not fail the candidate as retryable: $(grep -m3 'failed\|taking' "$tmp/2.log")"
"$dse" status "$tmp/s" | grep -q "failed: its workers died" || fail "dse status does not say why it failed"
grep -q '"failed_retry": 1' "$tmp"/s/candidates/*.json || fail "no record says failed_retry"
echo "ok: the second command marked it failed (retryable); dse status: $("$dse" status "$tmp/s" | grep -m1 'failed: ' | cut -c1-110)"
# 3. the next command retries it, and removes what a killed writer left: a temporary file of a
# dead process of this host, two minutes old (a live writer's, just written, stays)
true &
dead=$!
wait $dead
host=$(uname -n | tr './' '__')
stale="$tmp/s/candidates/.cX.json.$host.$dead.0.1f.tmp" live="$tmp/s/candidates/.cY.json.$host.$$.0.1f.tmp"
echo torn >"$stale" && touch -d '2 minutes ago' "$stale" && echo torn >"$live"
"$dse" sweep "$space" --out "$tmp/s" $opts >"$tmp/3.log" 2>&1 || fail "the third command: $(tail -3 "$tmp/3.log")"
grep -q "its workers were killed before; trying it again" "$tmp/3.log" || fail "the third command did not retry it"
[ ! -e "$stale" ] && [ -e "$live" ] && grep -q "removed 1 temporary file that killed writers left" "$tmp/3.log" ||
    fail "the stale temporary file was not removed, or the live one was"
rm -f "$live"
grep -q '"failed_retry"' "$tmp"/s/candidates/*.json && fail "a record still says failed_retry"
for fmt in csv md; do
    "$dse" report "$tmp/ref" --format $fmt 2>/dev/null | sed -e "s|$tmp/ref|DIR|g" -e 's/Training time:.*//' >"$tmp/ref.$fmt"
    "$dse" report "$tmp/s" --format $fmt 2>/dev/null | sed -e "s|$tmp/s|DIR|g" -e 's/Training time:.*//' >"$tmp/got.$fmt"
    cmp -s "$tmp/ref.$fmt" "$tmp/got.$fmt" || { diff "$tmp/ref.$fmt" "$tmp/got.$fmt" | head; fail "report --format $fmt differs"; }
done
echo "ok: the third command retried it; the report equals the uninterrupted run's ($(grep -c ',done,' "$tmp/got.csv") done)"
# 4. checkpoints within an epoch (issue #18 item 2): a worker killed in an epoch after its
# first partial checkpoint; the next command resumes within the epoch, and the report is the
# uninterrupted run's (checkpoints change no result).
mid="--workers 1 --conv gemm_batch --lease-seconds 2 --checkpoint-every 40"
"$dse" sweep "$space" --out "$tmp/m" $mid >"$tmp/m1.log" 2>&1 &
pid=$!
i=0
while [ $i -lt 3000 ] && ! ls "$tmp"/m/checkpoints/*/*.part.ckpt >/dev/null 2>&1; do sleep 0.01; i=$((i + 1)); done
kill -9 $pid
wait $pid 2>/dev/null
part=$(ls "$tmp"/m/checkpoints/*/*.part.ckpt 2>/dev/null | head -1)
[ -n "$part" ] || fail "no checkpoint within an epoch was written (--checkpoint-every 40)"
"$dse" sweep "$space" --out "$tmp/m" $mid >"$tmp/m2.log" 2>&1 || fail "the command after the kill: $(tail -3 "$tmp/m2.log")"
grep -q "resumed from its checkpoint within the epoch" "$tmp/m2.log" ||
    fail "the next command did not resume within the epoch: $(grep -m2 training "$tmp/m2.log")"
"$dse" report "$tmp/m" --format csv 2>/dev/null | sed -e "s|$tmp/m|DIR|g" >"$tmp/mid.csv"
cmp -s "$tmp/ref.csv" "$tmp/mid.csv" || { diff "$tmp/ref.csv" "$tmp/mid.csv" | head; fail "the report after a kill within an epoch differs"; }
echo "ok: killed within an epoch after ${part##*/}; $(grep -m1 'within the epoch' "$tmp/m2.log" | sed 's/.*: \(c[0-9a-f]*: training\)/\1/'); the same report"
