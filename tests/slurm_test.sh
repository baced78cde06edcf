#!/bin/sh
# slurm_test.sh DSE: a real one-node Slurm on this machine (munged, slurmctld and slurmd
# from Debian's munge and slurm-wlm, a generated slurm.conf with 2 CPUs, everything in a
# temporary directory) runs `dse sweep SPACE --slurm --array 2`; task 1 is scancel'led in
# the middle of an epoch, task 0 takes its candidate over, and the sweep's report and
# records must equal an uninterrupted single-worker sweep's, bit for bit. Also: sbatch
# refusing a submission, dse status's task states, --cancel. Without the packages (or root,
# or Fashion-MNIST) it says why and exits 77 (ctest: not run). docs/cluster.md.
# Run from the repository root. KEEP=1 keeps the temporary directory.
dse=$1
space=tests/spaces/slurm_tiny.cfg
skip() { echo "skipped: $*"; exit 77; }
for c in munged slurmctld slurmd sbatch squeue scancel sinfo scontrol; do
    command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian: munge, slurm-wlm)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"
[ -d "${DSE_DATA_ROOT:-/usr/share/datasets}/fashion-mnist" ] || skip "Fashion-MNIST is not installed (dataset-fashion-mnist)"
[ -x "$dse" ] || { echo "FAIL: no dse binary at '$dse'"; exit 1; }

t0=$(date +%s)
tmp=$(mktemp -d /tmp/dse-slurm.XXXXXX) || exit 1
pids=""
ok=0
cleanup() {
    if [ -n "$SLURM_CONF" ] && [ -f "$tmp/slurmctld.pid" ]; then # no job outlives the test
        scancel --user="$(id -un)" >/dev/null 2>&1
        i=0
        while [ $i -lt 40 ] && [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.25; i=$((i + 1)); done
    fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    if [ $ok = 1 ] && [ -z "$KEEP" ]; then rm -rf "$tmp"; else echo "kept $tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
    echo "FAIL: $*"
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/munged.log "$tmp"/sweep/slurm/*.out; do
        [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
    exit 1
}
step() { echo "[$(($(date +%s) - t0)) s] $*"; }

# ---- munge and a one-node Slurm ------------------------------------------------------------
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$tmp/munge.key"
munged -F -f --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" >/dev/null 2>&1 &
pids="$! $pids"
host=$(uname -n)
host=${host%%.*} # the short name, as slurmd calls its node
port=$((20000 + $$ % 20000)) # two runs at once use different ports
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
# A one-node Slurm for tests/slurm_test.sh: no cgroups, no accounting, 2 CPUs.
ClusterName=dsetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_min_interval=100000
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
KillWait=5
MinJobAge=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
i=0
while [ ! -S "$tmp/munge.sock" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "munged did not start"; sleep 0.1
done
slurmctld -D -f "$SLURM_CONF" >/dev/null 2>&1 &
pids="$! $pids"
slurmd -D -f "$SLURM_CONF" -N "$host" >/dev/null 2>&1 &
pids="$! $pids"

# ---- meanwhile, the reference: one uninterrupted worker ---------------------------------------
step "reference: dse sweep $space --workers 1 (uninterrupted)"
"$dse" sweep "$space" --out "$tmp/ref" --workers 1 --conv gemm_batch >"$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log"; fail "the reference sweep failed"; }

i=0
until sinfo -h -o "%t" 2>/dev/null | grep -qx idle; do
    i=$((i + 1)); [ $i -gt 120 ] && fail "the Slurm node did not become idle in 60 s (sinfo: $(sinfo 2>&1))"
    sleep 0.5
done
step "Slurm up: $(sinfo -h -o '%P %D %t %C' 2>&1)"

dir="$tmp/sweep"
run_sweep() { # args...: dse sweep SPACE --out DIR --slurm ... into $tmp/submit.log; its exit status
    "$dse" sweep "$space" --out "$dir" --slurm "$@" >"$tmp/submit.log" 2>&1
}

# ---- a refused submission: a clear error, exit 2, nothing recorded ----------------------------
run_sweep --array 2 --sbatch "--partition=nosuch"
rc=$?
[ $rc = 2 ] || { cat "$tmp/submit.log"; fail "a refused submission exited $rc, not 2"; }
grep -q "sbatch refused the job" "$tmp/submit.log" || { cat "$tmp/submit.log"; fail "no 'sbatch refused' message"; }
[ ! -e "$dir/slurm/jobs" ] || fail "a refused submission was recorded in $dir/slurm/jobs"
step "refused: $(grep refused "$tmp/submit.log")"

# ---- the array: 2 tasks of 1 worker x 1 thread; their options are passed on --------------------
run_sweep --array 2 --workers 1 --conv gemm_batch --lease-seconds 5 --sbatch "--time=10 --partition=debug" ||
    { cat "$tmp/submit.log"; fail "dse sweep --slurm failed"; }
cat "$tmp/submit.log"
job=$(sed -n 's/^Submitted Slurm job \([0-9]*\):.*/\1/p' "$tmp/submit.log")
[ -n "$job" ] || fail "no job id in the output"
grep -q "^$job 2 " "$dir/slurm/jobs" || fail "job $job is not recorded in $dir/slurm/jobs"
scontrol show job "$job" | grep -q "TimeLimit=00:10:00" || fail "the --sbatch options did not reach Slurm"
step "submitted job $job (2 tasks; --sbatch's two options on one #SBATCH line reached Slurm)"

# wait until task 1 trains a candidate and is inside its second epoch (its lease, renewed
# every 0.5 s, shows epoch 1 (0-based) at an iteration past 0), then scancel that task alone:
# the candidate must resume from its first epoch's checkpoint
out1="$dir/slurm/${job}_1.out"
victim="" pid=""
i=0
while :; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "task 1 never trained a candidate in 120 s"
    line=$(grep -m1 ": training epochs" "$out1" 2>/dev/null)
    if [ -n "$line" ]; then
        victim=$(echo "$line" | sed 's/.*\]: \(c[0-9a-f]*\): training.*/\1/')
        pid=$(echo "$line" | sed 's/^dse sweep \[[^:]*:\([0-9]*\)\].*/\1/')
        lease=$(ls "$dir/leases/$victim".* 2>/dev/null | sort -t. -k2 -n | tail -n 1)
        if [ -n "$lease" ] && grep -q "\"pid\": $pid," "$lease" && grep -q '"released": false' "$lease" &&
            grep -q '"epoch": 1, "iter": [1-9]' "$lease"; then
            break
        fi
    fi
    sleep 0.2
done
step "task 1 (pid $pid) is inside an epoch of $victim: $(sed 's/.*"epoch": \([0-9]*\), "iter": \([0-9]*\), "iters": \([0-9]*\).*/lease: epoch \1 (0-based), iteration \2 of \3/' "$lease")"
"$dse" status "$dir" >"$tmp/status1.txt" 2>&1 || { cat "$tmp/status1.txt"; fail "dse status failed"; }
sed -n '/^\(Training now\|Slurm\)/,$p' "$tmp/status1.txt"
grep -q "${job}_1 *RUNNING" "$tmp/status1.txt" || fail "dse status does not show task ${job}_1 running"
scancel "${job}_1" || fail "scancel ${job}_1 failed"
i=0
while kill -0 "$pid" 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && fail "task 1's worker survived scancel"; sleep 0.1; done
step "scancel ${job}_1: its worker (pid $pid) is gone, its lease left unreleased"

# ---- the rest of the work: task 0 takes the candidate over --------------------------------
i=0
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do
    i=$((i + 1)); [ $i -gt 1200 ] && fail "job $job did not end in 240 s"
    sleep 0.2
done
step "job $job has ended"
"$dse" status "$dir" >"$tmp/status2.txt" 2>&1
sed -n '/^Slurm/,$p' "$tmp/status2.txt"
grep -q "${job}_1 *not in squeue" "$tmp/status2.txt" || fail "dse status does not show task ${job}_1 gone"
out0="$dir/slurm/${job}_0.out"
if grep -q "$victim: taking over from $host:$pid" "$out0"; then
    step "task 0 took $victim over: $(grep "$victim: taking over" "$out0" | sed 's/^dse sweep //')"
else
    # task 0 had ended before the cancel (a slow start of task 1): one more worker, by hand
    step "task 0 did not take $victim over (it had ended); a plain dse sweep does"
    "$dse" sweep "$space" --out "$dir" --workers 1 --conv gemm_batch >"$tmp/extra.log" 2>&1 || fail "the extra worker failed"
    grep -q "$victim: taking over from $host:$pid" "$tmp/extra.log" || fail "nobody took $victim over"
fi
# the array's tasks are one command (issue #31: crashes counted across them): their leases
# give the command the script made from the job id
cat "$dir/leases/$victim".* | grep -q "\"cmd\": \"slurm-$job\"" ||
    fail "no lease of $victim names the array's command slurm-$job: $(cat "$dir/leases/$victim".*)"
grep "$victim" "$out0" "$tmp/extra.log" 2>/dev/null | grep -q "training epoch 2 of 2 (resumed from its checkpoint)" ||
    fail "$victim was not resumed from its checkpoint"
grep -q "Finished 4 of 4" "$tmp/status2.txt" || "$dse" status "$dir" | grep -q "Finished 4 of 4" ||
    fail "the sweep did not finish every candidate"

# ---- bit for bit against the uninterrupted run -------------------------------------------------
for fmt in csv md tex; do # without the path and the training time (wall clock, not a result)
    "$dse" report "$tmp/ref" --format $fmt 2>/dev/null | sed -e "s|$tmp/ref|DIR|g" -e 's/Training time:.*//' >"$tmp/ref.$fmt"
    "$dse" report "$dir" --format $fmt 2>/dev/null | sed -e "s|$dir|DIR|g" -e 's/Training time:.*//' >"$tmp/got.$fmt"
    cmp -s "$tmp/ref.$fmt" "$tmp/got.$fmt" || { diff "$tmp/ref.$fmt" "$tmp/got.$fmt" | head -20; fail "report --format $fmt differs"; }
done
# JSON without the training times (wall clock, not results)
times='s/"(train_)?seconds(_full_estimate)?": [0-9.e+-]+//g'
"$dse" report "$tmp/ref" --format json 2>/dev/null | sed -E -e "s|$tmp/ref|DIR|g" -e "$times" >"$tmp/ref.json"
"$dse" report "$dir" --format json 2>/dev/null | sed -E -e "s|$dir|DIR|g" -e "$times" >"$tmp/got.json"
cmp -s "$tmp/ref.json" "$tmp/got.json" || { diff "$tmp/ref.json" "$tmp/got.json" | head -20; fail "report --format json differs"; }
# every candidate's per-epoch results (train loss, test loss, top-1, top-5; 7 significant digits)
results() { grep -ohE '"(id|status|loss|train_loss|top1|top5|epochs_done|unpredicted)": [^,]+' "$1"/candidates/*.json; }
results "$tmp/ref" >"$tmp/ref.results"
results "$dir" >"$tmp/got.results"
[ -s "$tmp/ref.results" ] && cmp -s "$tmp/ref.results" "$tmp/got.results" ||
    { diff "$tmp/ref.results" "$tmp/got.results" | head -20; fail "the candidates' per-epoch results differ"; }
step "reports (csv, md, tex, json without times) and $(wc -l <"$tmp/got.results") per-epoch figures equal the uninterrupted run's, bit for bit"

# ---- --cancel: says what it did; with nothing recorded, exit 2 -------------------------------------
"$dse" sweep "$dir" --slurm --cancel >"$tmp/cancel.log" 2>&1 && grep -q "job $job .* has ended already" "$tmp/cancel.log" ||
    { cat "$tmp/cancel.log"; fail "--cancel of the ended job"; }
step "dse sweep DIR --slurm --cancel: $(cat "$tmp/cancel.log")"
"$dse" sweep "$tmp/ref" --slurm --cancel >"$tmp/cancel2.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "no Slurm job is recorded" "$tmp/cancel2.log" || { cat "$tmp/cancel2.log"; fail "--cancel without a job exited $rc"; }
# ---- --ranks-per-candidate 2: each task 2 ranks (--ntasks=2, mpirun inside the job) ---------
# The job's report equals one worker of 2 threads (engine/dist.h: the same order of addition).
if [ "$DSE_HAVE_MPI" = ON ] && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # sbatch passes the environment on
    tiny=tests/spaces/sweep_tiny.cfg
    "$dse" sweep "$tiny" --out "$tmp/ref2" --workers 1 --threads 2 --conv gemm_batch >"$tmp/ref2.log" 2>&1 ||
        { tail -5 "$tmp/ref2.log"; fail "the 2-thread reference sweep"; }
    "$dse" sweep "$tiny" --out "$tmp/ranks" --slurm --array 1 --ranks-per-candidate 2 --threads 1 --conv gemm_batch \
        >"$tmp/ranks.log" 2>&1 || { cat "$tmp/ranks.log"; fail "dse sweep --slurm --ranks-per-candidate 2"; }
    grep -q "^#SBATCH --ntasks=2" "$tmp/ranks/slurm/sweep.sbatch" && grep -q "^exec mpirun --bind-to none -np 2 " "$tmp/ranks/slurm/sweep.sbatch" ||
        fail "the sbatch script of --ranks-per-candidate 2 lacks --ntasks=2 or mpirun -np 2"
    rjob=$(sed -n 's/^Submitted Slurm job \([0-9]*\).*/\1/p' "$tmp/ranks.log")
    i=0
    while [ $i -lt 480 ] && [ -n "$(squeue -h -j "$rjob" 2>/dev/null)" ]; do sleep 0.25; i=$((i + 1)); done
    [ -z "$(squeue -h -j "$rjob" 2>/dev/null)" ] || fail "the --ranks-per-candidate job $rjob did not end in 2 minutes"
    results "$tmp/ref2" >"$tmp/ref2.results"
    results "$tmp/ranks" >"$tmp/ranks.results"
    [ -s "$tmp/ref2.results" ] && cmp -s "$tmp/ref2.results" "$tmp/ranks.results" ||
        { diff "$tmp/ref2.results" "$tmp/ranks.results" | head; cat "$tmp"/ranks/slurm/*.out | tail -20; fail "the 2-rank job's results differ from 1 worker x 2 threads"; }
    step "job $rjob: 1 task of 2 MPI ranks trained all $(grep -c '"status": "done"' "$tmp/ranks.results") candidates; the same $(wc -l <"$tmp/ranks.results") per-epoch figures as 1 worker x 2 threads"
else
    step "not run: the --ranks-per-candidate job (this dse has no MPI, or mpirun is missing)"
fi
ok=1
step "ok"
