#!/bin/sh
# crash_hard.sh DSE: the larger crash tests (issue #18 item 6). Every part ends in dse report
# (csv and md) identical to one uninterrupted sweep of tests/spaces/crash_retry.cfg
# (--workers 1 --threads 1), training time and the directory left aside:
#  1. mixed thread counts: three workers of 1, 2 and 3 threads on one directory, SIGKILLed
#     and restarted at random moments, each restart with a random thread count;
#  2. kills during checkpoint and record writes (strace's fault injection): in the write of a
#     checkpoint's temporary file, between that write and its fsync, at the rename into place,
#     just after it (the directory's fsync), at an epoch's end checkpoint and at the record's
#     rename; the next worker takes over and resumes;
#  3. a full disk mid-sweep (ENOSPC on every write from a checkpoint's on): the worker ends
#     with an error naming the file, no crash, the candidate not failed for good, and the
#     next worker finishes the sweep;
#  4. workers of random thread counts started and killed at random for DSE_CRASH_SECONDS
#     (default 60; bench/crash_long.sh runs 600), in rounds of one sweep each.
# Part 1 and 4 need results that do not depend on the thread count. DSE_CRASH_PARTS picks
# parts ("2 3"), DSE_CRASH_THREADS the thread counts drawn (default "1 2 3"), DSE_CRASH_SEED
# the random moments (printed). Without Fashion-MNIST or strace, or where strace may not
# trace (ptrace refused), it says why and exits 77. Run from the repository root.
. "$(dirname "$0")/lib.sh"
dse=$1
space=tests/spaces/crash_retry.cfg
parts=${DSE_CRASH_PARTS:-1 2 3 4}
pool=${DSE_CRASH_THREADS:-1 2 3}
secs=${DSE_CRASH_SECONDS:-60}
seed=${DSE_CRASH_SEED:-$(($(date +%s) % 100000))}
need_fmnist
command -v strace >/dev/null 2>&1 || { echo "skipped: strace is not installed (tools/install-test-tools)"; exit 77; }
strace -f -qq -o /dev/null true 2>/dev/null || { echo "skipped: strace cannot trace here (ptrace refused)"; exit 77; }
tmp=$(mktemp -d) || exit 1
# LeakSanitizer stops the process with ptrace at exit, which a process strace already traces
# refuses ("LeakSanitizer has encountered a fatal error"): leaks are the other tests' to find
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# at the end, or on a failure or timeout: no worker of ours left running (each has --out $tmp/...)
stop_all() { pkill -9 -f -- "--out $tmp/" 2>/dev/null; }
if [ -n "$DSE_CRASH_KEEP" ]; then
    echo "keeping $tmp (DSE_CRASH_KEEP)"
    trap stop_all EXIT
else
    trap 'stop_all; rm -rf "$tmp"' EXIT
fi
trap 'exit 1' INT TERM
failed=0
fail() { echo "FAIL: $*"; failed=1; }
die() { echo "FAIL: $*"; exit 1; }
t_start=$(date +%s)
first=
echo "seed $seed (DSE_CRASH_SEED), thread counts drawn from: $pool"

# rnd N: R = a random number in 0..N-1 (a 64-bit LCG, reproducible from the seed)
rnd() { seed=$(((seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff)); R=$(((seed >> 33) % $1)); }
# nap: sleep 0.1 to 1 s, at random
nap() { rnd 900; sleep "$(printf '%d.%03d' $(((100 + R) / 1000)) $(((100 + R) % 1000)))"; }
# pick: T = a thread count drawn from the pool
pick() { set -- $pool; rnd $#; shift $R; T=$1; }
# sweep DIR THREADS [OPTIONS]: one worker on DIR, its progress appended to DIR.log;
# "sweep ... &" starts it in the background as process $! (exec: no shell in between)
sweep() {
    d=$1 t=$2
    shift 2
    exec "$dse" sweep "$space" --out "$d" --workers 1 --threads "$t" --conv gemm_batch --lease-seconds 2 \
        --max-crashes 1000 --checkpoint-every 40 "$@" >>"$d.log" 2>&1
}
# sweep_fg: the same, in the foreground
sweep_fg() { (sweep "$@"); }
# same DIR: 0 if DIR's reports (csv and md) are the uninterrupted run's and so is every
# candidate's kept checkpoint, byte for byte (the trained weights: a report rounds); else
# what differs
same() {
    for fmt in csv md; do
        "$dse" report "$1" --format $fmt 2>/dev/null | sed -e "s|$1|DIR|g" -e 's/Training time:.*//' >"$1.$fmt"
        cmp -s "$tmp/ref.$fmt" "$1.$fmt" || { diff "$tmp/ref.$fmt" "$1.$fmt" | head -6; return 1; }
    done
    for kept in "$tmp"/ref/checkpoints/*/epoch-*.ckpt; do
        cmp -s "$kept" "$1/${kept#"$tmp"/ref/}" ||
            { echo "checkpoint ${kept#"$tmp"/ref/} differs from the uninterrupted run's"; return 1; }
    done
}
# final DIR: true when both candidates of DIR have ended (its sweep is over)
final() { [ "$(grep -l '"status": "\(done\|diverged\|failed\|stopped\)"' "$1"/candidates/*.json 2>/dev/null | wc -l)" -eq 2 ]; }
count() { grep -c "$1" "$2" 2>/dev/null || true; }
# threads LOG: the workers' thread counts in LOG, "1, 2, 3"
threads() { grep -o 'x [0-9]* thread' "$1" | cut -d' ' -f2 | sort -un | tr '\n' ' ' | sed 's/ $//; s/ /, /g'; }

"$dse" sweep "$space" --out "$tmp/ref" --workers 1 --threads 1 --conv gemm_batch --lease-seconds 2 >"$tmp/ref.log" 2>&1 ||
    die "the uninterrupted sweep: $(tail -3 "$tmp/ref.log")"
for fmt in csv md; do
    "$dse" report "$tmp/ref" --format $fmt 2>/dev/null | sed -e "s|$tmp/ref|DIR|g" -e 's/Training time:.*//' >"$tmp/ref.$fmt"
done
# the candidate trained first (grid order): the strace parts aim at its files
cid=$(grep -m1 ': training epochs' "$tmp/ref.log" | sed 's/.*\]: \(c[0-9a-f]*\): training.*/\1/')
[ -n "$cid" ] || die "no candidate's training in the uninterrupted run's log"

# chaos DIR WORKERS KILLS SECONDS: WORKERS workers on DIR (of drawn thread counts, or of
# $first's, one after another), one SIGKILLed at a random moment and restarted with a drawn
# thread count, until KILLS kills or SECONDS seconds (0: no limit) or the sweep is over; then
# the rest finish and one more worker finds nothing left. K = the kills; 1 if a worker failed.
chaos() {
    d=$1 n=$2 most=$3 until=$(($(date +%s) + $4))
    [ "$4" -gt 0 ] || until=0
    i=1
    while [ $i -le "$n" ]; do
        pick
        [ -n "$first" ] && T=$(echo $first | cut -d' ' -f$i)
        sweep "$d" "$T" &
        eval "p$i=\$!"
        # the next starts once this one trains (so that with --threads 3, 2, 1 each of
        # the first two trains a candidate of its own)
        w=0
        while [ -n "$first" ] && [ $w -lt 50 ] && ! grep -q "\"pid\": $!, .*\"released\": false" "$d"/leases/* 2>/dev/null; do
            sleep 0.1
            w=$((w + 1))
        done
        i=$((i + 1))
    done
    K=0
    while [ $K -lt "$most" ] && { [ "$until" -eq 0 ] || [ "$(date +%s)" -lt "$until" ]; }; do
        nap
        final "$d" && break
        rnd "$n"
        j=$((R + 1))
        if [ $((K % 2)) -eq 1 ]; then # every other kill: a worker that is training, if any
            i=1
            while [ $i -le "$n" ]; do
                eval "pid=\$p$i"
                grep -q "\"pid\": $pid, .*\"released\": false" "$d"/leases/* 2>/dev/null && j=$i
                i=$((i + 1))
            done
        fi
        eval "pid=\$p$j"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        K=$((K + 1))
        pick
        sweep "$d" "$T" &
        eval "p$j=\$!"
    done
    bad=0
    i=1
    while [ $i -le "$n" ]; do
        eval "pid=\$p$i"
        wait "$pid" || { echo "worker $i (pid $pid) exited with $?"; bad=1; }
        i=$((i + 1))
    done
    pick
    sweep_fg "$d" "$T" || bad=1
    return $bad
}

# 1. mixed thread counts, three workers at once
if echo " $parts " | grep -q ' 1 '; then
    d=$tmp/p1
    t0=$(date +%s)
    first="3 2 1" # (DSE_CRASH_THREADS: drawn from it instead)
    [ -z "$DSE_CRASH_THREADS" ] || first=
    chaos "$d" 3 10 0 || fail "part 1: a worker of the mixed-thread sweep failed: $(grep -m2 'error\|failed' "$d.log")"
    if same "$d"; then
        echo "ok: mixed thread counts: 3 workers of $(threads "$d.log") threads, $K SIGKILLs, $(count 'taking over from' "$d.log") taken over," \
             "$(count 'resumed from its checkpoint' "$d.log") resumed; the same report ($(($(date +%s) - t0)) s)"
    else
        fail "part 1: workers of $(threads "$d.log") threads end in another report than one thread's: results depend on the thread count"
    fi
fi

# 2. and 3. strace: a worker of one thread killed (or given ENOSPC) at the Nth call, in its
# main thread, of a syscall: N is found in a traced run of the same (fresh) sweep, for which
# the main thread's calls come in one order. Injection counts per thread; the lease's
# renewal thread makes the same calls, so these workers renew every 3 s (--lease-seconds 30;
# a dead worker of this host is taken over at once all the same).
trace_opts="-f -qq -y -s 400 -e trace=write,fsync,rename"
# nth LOG CALL PATTERN K: the number, among the main thread's CALLs in LOG, of the Kth one
# whose line matches PATTERN
nth() {
    awk -v call="$2(" -v pat="$3" -v k="$4" 'NR == 1 { pid = $1 }
        $1 == pid && index($2, call) == 1 { n++; if ($0 ~ pat && ++hit == k) { print n; exit } }' "$1"
}
# strace_sweep DIR INJECT: the sweep of DIR, one worker of one thread under strace (its log
# in DIR.st), the injection INJECT
strace_sweep() {
    d=$1
    shift
    strace $trace_opts -o "$d.st" "$@" "$dse" sweep "$space" --out "$d" --workers 1 --threads 1 --conv gemm_batch \
        --lease-seconds 30 --max-crashes 1000 --checkpoint-every 40 >>"$d.log" 2>&1
}
if echo " $parts " | grep -q ' [23] '; then
    strace_sweep "$tmp/trace" || die "the traced sweep: $(tail -3 "$tmp/trace.log")"
    same "$tmp/trace" || die "the traced sweep ends in another report"
fi
ck="checkpoints/$cid"
# kill CASE CALL PATTERN K WHAT: kill the worker at the Kth CALL matching PATTERN; the next
# worker must finish with the reference report
kill_at() {
    name=$1 call=$2 pat=$3 k=$4 what=$5
    d=$tmp/p2$name
    n=$(nth "$tmp/trace.st" "$call" "$pat" "$k")
    [ -n "$n" ] || { fail "part 2 $name: no $call matching $pat in the traced run"; return; }
    strace_sweep "$d" -e inject="$call":signal=KILL:when="$n"
    pid=$(head -1 "$d.st" | cut -d' ' -f1)
    last=$(grep "^$pid  *$call(" "$d.st" | tail -1)
    if ! grep -q "^$pid  *+++ killed by SIGKILL" "$d.st" || ! echo "$last" | grep -q "$pat"; then
        fail "part 2 $name: the kill missed ($what): $(echo "$last" | cut -c1-160)"
        return
    fi
    tmps=$(find "$d" -name '*.tmp' | wc -l)
    sweep_fg "$d" 1 || { fail "part 2 $name: the worker after the kill: $(tail -3 "$d.log")"; return; }
    same "$d" || { fail "part 2 $name: killed $what, the report differs"; return; }
    resumed=$(grep 'taking over\|training epoch' "$d.log" | grep -A1 'taking over' | grep -o 'training epoch.*' | head -1)
    echo "ok: killed $what ($call #$n of the main thread; $tmps temporary file(s) left): next worker: $resumed; the same report"
}
if echo " $parts " | grep -q ' 2 '; then
    t0=$(date +%s)
    kill_at write write "$ck/\\.epoch-1\\.part\\.ckpt\\..*\\.tmp>" 2 "writing the 2nd checkpoint's temporary file"
    kill_at fsync fsync "$ck/\\.epoch-1\\.part\\.ckpt\\..*\\.tmp>" 2 "before the 2nd checkpoint's fsync (written, not synced)"
    kill_at rename rename "$ck/\\.epoch-1\\.part\\.ckpt" 2 "at the 2nd checkpoint's rename (synced, not in place)"
    kill_at dirsync fsync "$ck>" 2 "after the 2nd checkpoint's rename (at its directory's fsync)"
    kill_at epoch rename "$ck/\\.epoch-1\\.ckpt" 1 "at the rename of epoch 1's checkpoint"
    kill_at record rename "candidates/\\.$cid\\.json" 1 "at the rename of the record after epoch 1"
    echo "ok: part 2 took $(($(date +%s) - t0)) s"
fi

# 3. a full disk: every write of the main thread from the Kth matching one on fails with ENOSPC
enospc() {
    name=$1 pat=$2 k=$3 what=$4
    d=$tmp/p3$name
    n=$(nth "$tmp/trace.st" write "$pat" "$k")
    [ -n "$n" ] || { fail "part 3 $name: no write matching $pat in the traced run"; return; }
    strace_sweep "$d" -e inject=write:error=ENOSPC:when="$n+"
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 128 ] || { fail "part 3 $name: the worker on a full disk exited with $rc"; return; }
    # its last words (their write failed too, but strace shows them)
    said=$(grep '^[0-9]*  *write(2<' "$d.st" | grep 'No space left on device' | tail -1 | sed 's/^[^"]*"\(.*\)\\n".*/\1/')
    echo "$said" | grep -q "$d/.*: .*No space left on device" ||
        { fail "part 3 $name: no error naming the file: $(grep '^[0-9]*  *write(2<' "$d.st" | tail -2)"; return; }
    case $said in *.tmp:*) fail "part 3 $name: the error names the temporary file, not the file it stands for: $said"; return ;; esac
    if grep -q '"status": "failed"' "$d/candidates/$cid.json" && ! grep -q '"failed_retry": 1' "$d/candidates/$cid.json"; then
        fail "part 3 $name: the candidate was failed for good by a full disk: $(grep failed_why "$d/candidates/$cid.json")"
        return
    fi
    tmps=$(find "$d" -name '*.tmp' | wc -l)
    state=$(grep -o '"status": "[a-z]*"\|"failed_retry": 1' "$d/candidates/$cid.json" | cut -d'"' -f4 | tr '\n' ' ')
    sweep_fg "$d" 1 || { fail "part 3 $name: the worker after the full disk: $(tail -3 "$d.log")"; return; }
    same "$d" || { fail "part 3 $name: after a full disk ($what), the report differs"; return; }
    echo "ok: full disk from $what (write #$n on): exit $rc, \"$(echo "$said" | sed "s|$tmp/||" | cut -c1-150)\", $tmps temporary file(s) left, the candidate ${state% }; the next worker ends with the same report"
}
if echo " $parts " | grep -q ' 3 '; then
    t0=$(date +%s)
    enospc ckpt "$ck/\\.epoch-1\\.part\\.ckpt\\..*\\.tmp>" 2 "the 2nd checkpoint's write"
    enospc record "candidates/\\.$cid\\.json\\..*\\.tmp>" 2 "the record's write after epoch 1 (then its checkpoint's)"
    echo "ok: part 3 took $(($(date +%s) - t0)) s"
fi

# 4. random kills for DSE_CRASH_SECONDS: rounds of a fresh sweep, two workers
if echo " $parts " | grep -q ' 4 '; then
    t0=$(date +%s)
    end=$((t0 + secs))
    rounds=0 kills=0 taken=0 resumed=0 before=$failed failed=0 first=
    while [ $rounds -eq 0 ] || [ "$(date +%s)" -lt $end ]; do
        rounds=$((rounds + 1))
        d=$tmp/p4_$rounds
        left=$((end - $(date +%s)))
        [ $left -gt 0 ] || left=1
        chaos "$d" 2 1000 $left || fail "part 4 round $rounds: a worker failed: $(grep -m2 'error\|failed' "$d.log")"
        kills=$((kills + K))
        taken=$((taken + $(count 'taking over from' "$d.log")))
        resumed=$((resumed + $(count 'resumed from its checkpoint' "$d.log")))
        same "$d" || { fail "part 4 round $rounds ($K SIGKILLs, $(threads "$d.log") threads): the report differs"; break; }
        rm -rf "$d" "$d".*
    done
    [ $failed -eq 0 ] && echo "ok: random kills for $(($(date +%s) - t0)) s: $rounds sweeps, $kills SIGKILLs, $taken taken over, $resumed resumed; each the same report"
    failed=$((failed | before))
fi
echo "crash_hard: $(($(date +%s) - t_start)) s"
exit $failed
