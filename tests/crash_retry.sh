#!/bin/sh
# crash_retry.sh DSE: outside kills are never a permanent failure (issue #18 item 3). A
# command is SIGKILLed inside a candidate's first epoch; even with --max-crashes 1 the next
# command retries it at once (another command's death costs it nothing, issue #31). A worker
# process of a command killed there is that command's one attempt: it marks the candidate
# failed, saying why and that the next command retries it (failed_retry); the command after
# that trains it again. Both sweeps end with the report of an uninterrupted run, bit for
# bit; the retrying command removes a temporary file a killed writer left, and not a live
# one's; and a worker killed within an epoch is resumed there (--checkpoint-every). Run
# from the repository root.
. "$(dirname "$0")/lib.sh"
dse=$1
space=tests/spaces/crash_retry.cfg
need_fmnist
make_tmp
opts="--workers 1 --conv gemm_batch --lease-seconds 2 --max-crashes 1"
# killed_sweep DIR LOG: a sweep of $tmp/DIR SIGKILLed inside its first candidate's first
# epoch (its lease exists, no checkpoint yet)
killed_sweep() {
    "$dse" sweep "$space" --out "$tmp/$1" $opts >"$tmp/$2" 2>&1 &
    pid=$!
    wait_for "\"\$tmp\"/$1/leases/*.1"
    kill -9 $pid
    wait $pid 2>/dev/null
    ls "$tmp"/$1/checkpoints/*/epoch-1.ckpt >/dev/null 2>&1 && fail "the kill came after a first epoch ended: retry the test"
}
"$dse" sweep "$space" --out "$tmp/ref" $opts >"$tmp/ref.log" 2>&1 || fail "the uninterrupted sweep: $(tail -3 "$tmp/ref.log")"
# 1. killed inside the first candidate's first epoch (its lease exists, no checkpoint yet)
killed_sweep s 1.log
echo "ok: worker killed inside the first epoch of $(ls "$tmp"/s/leases | head -1 | cut -d. -f1)"
# 2. the next command finds its worker dead: another command's worker, so it costs this one
# nothing (issue #31): it takes the candidate over in the same command and finishes the sweep;
# as its workers died --max-crashes times in a row (here 1), the other candidate goes first
killed=$(ls "$tmp"/s/leases | head -1 | cut -d. -f1)
"$dse" sweep "$space" --out "$tmp/s" $opts >"$tmp/2.log" 2>&1 || fail "the second command: $(tail -3 "$tmp/2.log")"
grep -q "$killed: taking over from" "$tmp/2.log" || fail "the second command did not take the candidate over: $(tail -3 "$tmp/2.log")"
first=$(grep -m1 ": training epoch\|: taking over" "$tmp/2.log" | sed 's/^[^]]*\]: \([^:]*\):.*/\1/')
[ -n "$first" ] && [ "$first" != "$killed" ] || fail "the killed candidate was not put after the other one: $(grep -m2 'training\|taking' "$tmp/2.log")"
grep -q " failed: " "$tmp/2.log" && fail "the second command failed a candidate: $(grep -m2 " failed: " "$tmp/2.log")"
"$dse" status "$tmp/s" | grep -q "^Finished\.$" || fail "the second command did not finish the sweep: $(tail -3 "$tmp/2.log")"
echo "ok: the second command retried it (after the other one): $(grep -m1 'taking over' "$tmp/2.log" | sed 's/^[^]]*\]: //')"
# 2b. a candidate that kills its process (issue #31) dies in a new command each time, so
# --max-crashes (counted per command) never fails it; 2 x --max-crashes deaths in a row of any
# commands do. Killed once inside its first epoch, its lease made to say one earlier death as
# well: the next command (--command-id a, as a Slurm array's tasks share one) trains the other
# candidate, then fails this one as retryable and ends; another command with the same
# --command-id leaves it failed; a command of its own retries it (below: the same report).
killed_sweep k k1.log
lease=$(ls "$tmp"/k/leases/*.1) && id=$(basename "$lease" .1) && sed -i 's/"deaths": 0,/"deaths": 1,/' "$lease" &&
    grep -q '"deaths": 1,' "$lease" || fail "no lease to give one earlier death: $lease"
"$dse" sweep "$space" --out "$tmp/k" $opts --command-id a >"$tmp/k2.log" 2>&1 || fail "the command after: $(tail -3 "$tmp/k2.log")"
grep -q "$id failed: its workers died 2 times in a row without progress, in this and earlier commands .*the next dse sweep of this directory retries it" "$tmp/k2.log" ||
    fail "2 deaths in a row (--max-crashes 1) did not fail it: $(grep -m3 'failed\|taking\|training' "$tmp/k2.log")"
grep -c '"status": "done"' "$tmp"/k/candidates/*.json | grep -q ':1$' || fail "the other candidate did not train first"
"$dse" sweep "$space" --out "$tmp/k" $opts --command-id a >"$tmp/k3.log" 2>&1 || fail "the same --command-id: $(tail -3 "$tmp/k3.log")"
grep -q "trying it again" "$tmp/k3.log" && fail "a command of the same --command-id retried what it failed"
grep -q '"failed_retry": 1' "$tmp/k/candidates/$id.json" || fail "the candidate is no longer failed_retry"
"$dse" sweep "$space" --out "$tmp/k" $opts >"$tmp/k4.log" 2>&1 || fail "the command of its own: $(tail -3 "$tmp/k4.log")"
grep -q "$id: its workers were killed before; trying it again" "$tmp/k4.log" || fail "a later command did not retry it"
echo "ok: 2 deaths in a row across commands failed it: $(grep -m1 "$id failed" "$tmp/k2.log" | sed 's/^[^]]*\]: //' | cut -c1-100)"
# 3. a worker of the command itself dies (its worker process killed; the command starts
# another): with --max-crashes 1 that is the command's last attempt, and the candidate fails
# as retryable; the next command retries it, and removes what a killed writer left: a
# temporary file of a dead process of this host, two minutes old (a live writer's, just
# written, stays)
"$dse" sweep "$space" --out "$tmp/w" --workers 2 --conv gemm_batch --lease-seconds 2 --max-crashes 1 >"$tmp/w1.log" 2>&1 &
pid=$!
wait_for '"$tmp"/w/leases/*.1'
lease=$(ls "$tmp"/w/leases/*.1 2>/dev/null | head -1)
wpid=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$lease" 2>/dev/null)
[ -n "$wpid" ] && [ "$wpid" != "$pid" ] || fail "no worker process holds a lease (lease $lease, pid '$wpid')"
kill -9 "$wpid"
wait $pid || fail "the command whose worker was killed: $(tail -3 "$tmp/w1.log")"
id=$(basename "$lease" .1)
ls "$tmp"/w/checkpoints/"$id"/epoch-1.ckpt >/dev/null 2>&1 && fail "the kill came after a first epoch ended: retry the test"
grep -q "$id failed: its workers died 1 times in a row in this command .*the next dse sweep of this directory retries it" "$tmp/w1.log" ||
    fail "the command did not fail the candidate as retryable: $(grep -m3 'failed\|taking\|died' "$tmp/w1.log")"
"$dse" status "$tmp/w" | grep -q "failed: its workers died" || fail "dse status does not say why it failed"
grep -q '"failed_retry": 1' "$tmp"/w/candidates/*.json || fail "no record says failed_retry"
echo "ok: a worker of the command killed: it failed the candidate (retryable); dse status: $("$dse" status "$tmp/w" | grep -m1 'failed: ' | cut -c1-110)"
true &
dead=$!
wait $dead
host=$(uname -n | tr './' '__')
stale="$tmp/w/candidates/.cX.json.$host.$dead.0.1f.tmp" live="$tmp/w/candidates/.cY.json.$host.$$.0.1f.tmp"
echo torn >"$stale" && touch -d '2 minutes ago' "$stale" && echo torn >"$live"
"$dse" sweep "$space" --out "$tmp/w" $opts >"$tmp/3.log" 2>&1 || fail "the third command: $(tail -3 "$tmp/3.log")"
grep -q "its workers were killed before; trying it again" "$tmp/3.log" || fail "the third command did not retry it"
[ ! -e "$stale" ] && [ -e "$live" ] && grep -q "removed 1 temporary file that killed writers left" "$tmp/3.log" ||
    fail "the stale temporary file was not removed, or the live one was"
rm -f "$live"
for d in s w k; do
    grep -q '"failed_retry"' "$tmp"/$d/candidates/*.json && fail "a record of $d still says failed_retry"
    for fmt in csv md; do
        "$dse" report "$tmp/ref" --format $fmt 2>/dev/null | sed -e "s|$tmp/ref|DIR|g" -e 's/Training time:.*//' >"$tmp/ref.$fmt"
        "$dse" report "$tmp/$d" --format $fmt 2>/dev/null | sed -e "s|$tmp/$d|DIR|g" -e 's/Training time:.*//' >"$tmp/got.$fmt"
        cmp -s "$tmp/ref.$fmt" "$tmp/got.$fmt" || { diff "$tmp/ref.$fmt" "$tmp/got.$fmt" | head; fail "report --format $fmt of $d differs"; }
    done
done
echo "ok: the third command retried it; both reports equal the uninterrupted run's ($(grep -c ',done,' "$tmp/got.csv") done)"
# 4. checkpoints within an epoch (issue #18 item 2): a worker killed in an epoch after its
# first partial checkpoint; the next command resumes within the epoch, and the report is the
# uninterrupted run's (checkpoints change no result).
mid="--workers 1 --conv gemm_batch --lease-seconds 2 --checkpoint-every 40"
"$dse" sweep "$space" --out "$tmp/m" $mid >"$tmp/m1.log" 2>&1 &
pid=$!
wait_for '"$tmp"/m/checkpoints/*/*.part.ckpt'
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
