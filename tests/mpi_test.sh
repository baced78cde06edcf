#!/bin/sh
# mpi_test.sh DSE HAVE_MPI TEST_DIST: data-parallel training under a real mpirun (issue #17,
# item 3). First, TEST_DIST (tests/test_dist.c) under mpirun -np 2 to 8: the sums add in
# the stated order on every rank.
#   1. P ranks x T threads repeat one process x 1 thread (and x 2) bit for bit (checkpoint
#      bytes and every metric): every sum goes by the batch's slices in one tree; ps and tree
#      for P = 2 to 5, allreduce for P = 2, gemm_batch and winograd.
#   2. A run resumed with another P: the 2-rank run's epoch-1 checkpoint resumed by one
#      process of 2 threads (and the other way round) ends in the uninterrupted run's bits.
#   3. Faults: ranks given different options, a batch smaller than the ranks, a batchnorm
#      net, and a rank killed mid-epoch (mpirun ends the others, no file half-written).
#   4. dse sweep --ranks-per-candidate 2: the same report as one worker of 2 threads, also
#      when a rank is killed mid-sweep and the next command takes the candidate over.
# Without MPI in the build or mpirun on PATH it prints "skipped: ..." and exits 77.
. "$(dirname "$0")/lib.sh"
dse=$1
have_mpi=$2
test_dist=$3 # tests/test_dist.c's program: the sums' order of addition
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
if [ "$have_mpi" != ON ]; then
    echo "skipped: this dse was built without MPI (apt-get install libopenmpi-dev openmpi-bin, then rebuild)"
    exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "skipped: mpirun is not on PATH (apt-get install openmpi-bin)"
    exit 77
fi
src=$(pwd)
net=$src/experiments/squeezenet/squeezenet_fmnist.cfg
make_tmp
cd "$tmp" || exit 1
# OpenMPI refuses root without these; more ranks than cores needs oversubscription. Its
# own allocations at MPI_Init are not ours: LeakSanitizer would report them.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# 0. engine/dist.c's sums add in the order engine/dist.h states, on every rank, P = 2 to 8
if [ -x "$test_dist" ]; then
    for p in 2 3 4 5 6 7 8; do mpirun -np $p "$test_dist" || bad "test_dist under mpirun -np $p"; done
else
    bad "no test_dist program at '$test_dist'"
fi
# SqueezeNet-FMNIST with dropout, 10 steps of 24 images, a fixed conv strategy (auto's timed
# choice may differ between the processes).
common="--epochs 1 --batch 24 --lr 0.04 --limit-train 240 --limit-test 200 --conv-cache none --json"
# a JSON result without what depends on the machine's speed or the process's memory
metrics() { sed 's/"seconds": [0-9.]*//g; s/"img_per_s": [0-9.]*//g; s/"engine_bytes": [0-9]*//g' "$1"; }

# 1. Every sum goes by the batch's 16 slices in one tree (engine/slices.h): P ranks of T threads
# repeat one process of 1 thread (and of 2) bit for bit, with ps and tree for every P, and
# with allreduce for P = 2.
for conv in gemm_batch winograd; do
    for t in 1 2; do
        "$dse" train "$net" $common --conv $conv --threads $t --checkpoint-dir one_${conv}_$t >one_${conv}_$t.json \
            2>one_${conv}_$t.err || bad "1 process x $t threads ($conv) failed: $(cat one_${conv}_$t.err)"
    done
    cmp -s one_${conv}_1/epoch-1.ckpt one_${conv}_2/epoch-1.ckpt ||
        bad "$conv: 1 process x 1 thread and x 2 threads differ"
done
same_bits() { # same_bits P REDUCE CONV T: 0 if P ranks x T threads equal 1 process x 1 thread
    p=$1 red=$2 conv=$3 t=$4 d=mpi_$1_$2_$3_$4
    mpirun --bind-to none -np "$p" "$dse" train "$net" $common --conv $conv --threads $t --reduce "$red" \
        --checkpoint-dir $d >$d.json 2>$d.err || { bad "mpirun -np $p --reduce $red failed: $(cat $d.err)"; return 2; }
    cmp -s one_${conv}_1/epoch-1.ckpt $d/epoch-1.ckpt || return 1
    [ "$(metrics one_${conv}_1.json)" = "$(metrics $d.json)" ] || { bad "P=$p $red: same checkpoint, other metrics"; return 2; }
    return 0
}
for case in "2 ps gemm_batch 1" "2 tree gemm_batch 1" "2 allreduce gemm_batch 1" "3 ps gemm_batch 1" \
    "3 tree gemm_batch 2" "4 tree gemm_batch 1" "5 ps gemm_batch 1" "3 ps winograd 2" "4 tree winograd 1"; do
    set -- $case
    same_bits "$1" "$2" "$3" "$4"
    case $? in
        0) echo "ok: mpirun -np $1 --threads $4 --reduce $2 --conv $3 = 1 process (1 or 2 threads), bit for bit ($(grep -o '"top1": [0-9.]*' one_$3_1.json | head -1))" ;;
        1) bad "mpirun -np $1 --threads $4 --reduce $2 --conv $3: checkpoint differs from 1 process" ;;
    esac
done
# 1b. The same in bf16 (issue #37: the bf16 convs' weight gradients leave a rank's blocks of
# the slice tree, as the float32 strategies do), where the CPU has AVX512-BF16.
bf16=0
if "$dse" train "$net" $common --precision bf16 --threads 1 --checkpoint-dir one_bf16_1 >one_bf16_1.json 2>one_bf16_1.err; then
    bf16=1
    "$dse" train "$net" $common --precision bf16 --threads 2 --checkpoint-dir one_bf16_2 >one_bf16_2.json 2>&1 &&
        cmp -s one_bf16_1/epoch-1.ckpt one_bf16_2/epoch-1.ckpt || bad "bf16: 1 process x 1 thread and x 2 threads differ"
    for case in "2 ps 1" "3 tree 2" "5 ps 1" "2 allreduce 1"; do
        set -- $case
        d=mpi_bf16_$1_$2_$3
        if ! mpirun --bind-to none -np "$1" "$dse" train "$net" $common --precision bf16 --threads "$3" --reduce "$2" \
            --checkpoint-dir $d >$d.json 2>$d.err; then bad "bf16: mpirun -np $1 --reduce $2 failed: $(cat $d.err)"
        elif cmp -s one_bf16_1/epoch-1.ckpt $d/epoch-1.ckpt && [ "$(metrics one_bf16_1.json)" = "$(metrics $d.json)" ]; then
            echo "ok: bf16: mpirun -np $1 --threads $3 --reduce $2 = 1 process, bit for bit"
        else bad "bf16: mpirun -np $1 --threads $3 --reduce $2: checkpoint or metrics differ from 1 process"; fi
    done
elif grep -q "needs AVX512-BF16" one_bf16_1.err; then
    echo "skipped: bf16 ranks: $(grep -o 'needs AVX512-BF16.*' one_bf16_1.err | head -1)"
else
    bad "bf16, 1 process: $(cat one_bf16_1.err)"
fi
grep -q "data-parallel: 2 ranks, 12 images each of every batch of 24, gradients summed by ps" mpi_2_ps_gemm_batch_1.err ||
    bad "rank 0 did not say what it runs: $(cat mpi_2_ps_gemm_batch_1.err)"

# 2. Resume with another P: two epochs by 2 ranks; epoch 1's checkpoint resumed by one process
# of 2 threads, and one process's epoch-1 checkpoint resumed by 2 ranks.
two="--epochs 2 --batch 24 --lr 0.04 --limit-train 480 --limit-test 200 --conv gemm_batch --conv-cache none --json"
mpirun -np 2 "$dse" train "$net" $two --threads 1 --checkpoint-dir r2 >r2.json 2>r2.err || bad "2-epoch mpirun: $(cat r2.err)"
"$dse" train "$net" $two --threads 2 --resume r2/epoch-1.ckpt --checkpoint-dir r1 >r1.json 2>r1.err ||
    bad "resume of rank 0's checkpoint by one process: $(cat r1.err)"
cmp -s r2/epoch-2.ckpt r1/epoch-2.ckpt && echo "ok: 2 ranks' epoch 1, resumed by 1 process x 2 threads = the 2-rank run's epoch 2" ||
    bad "2 ranks -> 1 process resume differs from the uninterrupted 2-rank run"
"$dse" train "$net" $two --threads 2 --checkpoint-dir s1 >s1.json 2>s1.err || bad "2-epoch run: $(cat s1.err)"
mpirun -np 2 "$dse" train "$net" $two --threads 1 --resume s1/epoch-1.ckpt --checkpoint-dir s2 >s2.json 2>s2.err ||
    bad "resume by 2 ranks: $(cat s2.err)"
cmp -s s1/epoch-2.ckpt s2/epoch-2.ckpt && echo "ok: 1 process's epoch 1, resumed by 2 ranks = the 1-process run's epoch 2" ||
    bad "1 process -> 2 ranks resume differs from the uninterrupted run"
mpirun -np 3 "$dse" train "$net" $two --threads 1 --resume s1/epoch-1.ckpt --checkpoint-dir s3 >s3.json 2>s3.err ||
    bad "resume by 3 ranks: $(cat s3.err)"
cmp -s s1/epoch-2.ckpt s3/epoch-2.ckpt && echo "ok: 1 process's epoch 1, resumed by 3 ranks = the 1-process run's epoch 2" ||
    bad "1 process -> 3 ranks resume differs from the uninterrupted run"

# 3. Faults: a clear error and exit 2, every rank stopped.
expect2() { # expect2 WHAT PATTERN CMD...: exit status 2 and PATTERN in the output
    what=$1 pat=$2
    shift 2
    "$@" >fault.out 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q -e "$pat" fault.out; then echo "ok: $what: exit 2, '$pat'"
    else bad "$what: exit $rc, expected 2 and '$pat':"; cat fault.out; fi
}
f="--epochs 1 --limit-train 96 --limit-test 50 --conv-cache none --threads 1"
expect2 "ranks given different options" "rank 1 of 2 was given a different network, data or training options" \
    mpirun -np 1 "$dse" train "$net" $f --seed 1 : -np 1 "$dse" train "$net" $f --seed 2
expect2 "batch smaller than the ranks" "batch 2 is smaller than the 3 ranks" mpirun -np 3 "$dse" train "$net" $f --batch 2
sed 's/{ name = "relu_conv1"; type = "relu"; },/{ name = "bn1"; type = "batchnorm"; }, { name = "relu_conv1"; type = "relu"; },/' \
    "$net" >bn.cfg
expect2 "a batchnorm net" "layer bn1 is batchnorm" mpirun -np 2 "$dse" train bn.cfg $f
# A failure in one rank's setup is every rank's: one message naming the rank and the file,
# exit 2, no rank left waiting (rank 1 runs in a directory whose ck.ckpt is cut short).
mkdir -p w0 w1 && cp one_gemm_batch_1/epoch-1.ckpt w0/ck.ckpt && head -c 5000 one_gemm_batch_1/epoch-1.ckpt >w1/ck.ckpt
expect2 "one rank's checkpoint cut short" "rank 1: ck.ckpt" mpirun -np 1 -wdir "$tmp/w0" "$dse" train "$net" $common \
    --conv gemm_batch --threads 1 --resume ck.ckpt : -np 1 -wdir "$tmp/w1" "$dse" train "$net" $common --conv gemm_batch \
    --threads 1 --resume ck.ckpt
grep -q "MPI_ABORT" fault.out && bad "a setup failure of one rank needed MPI_Abort"
expect2 "a bad --reduce" "is not ps (parameter server), tree" "$dse" train "$net" $f --reduce sum
# A rank killed (SIGKILL) in its second epoch: mpirun ends the other and fails; what is in the
# checkpoint directory is whole (rank 0 writes through a temp file and rename).
cat >die.sh <<'EOF'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
    (while [ ! -f ck/epoch-1.ckpt ]; do sleep 0.1; done; sleep 0.5; kill -9 $$) &
fi
exec "$@"
EOF
chmod +x die.sh
mpirun -np 2 ./die.sh "$dse" train "$net" --epochs 3 --batch 24 --limit-train 960 --limit-test 50 --conv-cache none \
    --threads 1 --checkpoint-dir ck >die.out 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "rank 1 .*exited on signal 9" die.out && [ ! -f ck/epoch-3.ckpt ]; then
    echo "ok: a rank killed mid-run: mpirun exit $rc, '$(grep -o 'process rank 1 .*signal 9 (Killed)' die.out)'"
else
    bad "a killed rank: exit $rc, expected non-zero, mpirun naming rank 1, no epoch 3:"; cat die.out
fi
for c in ck/*; do
    [ -e "$c" ] || continue
    case $c in *.ckpt) "$dse" eval "$net" --checkpoint "$c" --limit-test 50 --threads 1 >/dev/null 2>&1 ||
        bad "$c does not load after the kill" ;;
    *) bad "$c left in the checkpoint directory after the kill" ;;
    esac
done
[ -f ck/epoch-1.ckpt ] && echo "ok: ck/ holds $(ls ck | tr '\n' ' ')and each loads"
# 4. A sweep whose candidates are each trained by 2 ranks (--ranks-per-candidate): its report
# and checkpoints equal one worker of 2 threads; a rank killed mid-sweep ends the group, and the
# next command takes the candidate over from its checkpoint and ends with the same report.
space=$src/tests/spaces/sweep_tiny.cfg
sw="--conv gemm_batch --lease-seconds 2"
"$dse" sweep "$space" --out sw1 --workers 1 --threads 2 $sw >sw1.out 2>&1 || bad "1-worker sweep: $(tail -5 sw1.out)"
mpirun -np 2 "$dse" sweep "$space" --out sw2 --ranks-per-candidate 2 --threads 1 $sw >sw2.out 2>&1 ||
    bad "mpirun -np 2 dse sweep --ranks-per-candidate 2: $(tail -5 sw2.out)"
# it says how many ranks train (issue #31): at the start, and for each candidate
grep -q "1 worker of 2 MPI ranks x 1 thread each; the ranks train every candidate together" sw2.out &&
    [ "$(grep -c 'training epochs 1-3 of 3 on 2 ranks x 1 thread$' sw2.out)" -eq 4 ] &&
    echo "ok: the sweep says how many ranks train: $(grep -m1 'on 2 ranks' sw2.out | sed 's/^[^]]*\] //')" ||
    bad "the sweep does not say how many ranks train each candidate: $(grep -m2 'worker\|training' sw2.out)"
"$dse" report sw1 --format csv >sw1.csv 2>/dev/null && "$dse" report sw2 --format csv >sw2.csv 2>/dev/null && cmp -s sw1.csv sw2.csv &&
    echo "ok: sweep with --ranks-per-candidate 2 = 1 worker x 2 threads: the same report ($(grep -c ',done,' sw1.csv) done)" ||
    bad "sweep report of 2 ranks per candidate differs from 1 worker x 2 threads"
for c in sw1/checkpoints/*/epoch-3.ckpt; do cmp -s "$c" "sw2/${c#sw1/}" || bad "sweep checkpoint ${c#sw1/} differs"; done
if [ $bf16 = 1 ]; then # the same in bf16 (issue #37)
    "$dse" sweep "$space" --out swb1 --workers 1 --threads 2 --precision bf16 --lease-seconds 2 >swb1.out 2>&1 ||
        bad "1-worker bf16 sweep: $(tail -5 swb1.out)"
    mpirun -np 2 "$dse" sweep "$space" --out swb2 --ranks-per-candidate 2 --threads 1 --precision bf16 --lease-seconds 2 \
        >swb2.out 2>&1 || bad "mpirun -np 2 dse sweep --ranks-per-candidate 2 --precision bf16: $(tail -5 swb2.out)"
    "$dse" report swb1 --format csv >swb1.csv 2>/dev/null && "$dse" report swb2 --format csv >swb2.csv 2>/dev/null &&
        cmp -s swb1.csv swb2.csv && ! cmp -s sw1.csv swb1.csv &&
        echo "ok: bf16 sweep with --ranks-per-candidate 2 = 1 worker x 2 threads: the same report, not float32's" ||
        bad "bf16 sweep report of 2 ranks per candidate differs from 1 worker x 2 threads (or equals float32's)"
    for c in swb1/checkpoints/*/epoch-3.ckpt; do cmp -s "$c" "swb2/${c#swb1/}" || bad "bf16 sweep checkpoint ${c#swb1/} differs"; done
fi
cat >die2.sh <<'EOF'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
    (while ! ls sw3/checkpoints/*/epoch-1.ckpt >/dev/null 2>&1; do sleep 0.01; done; kill -9 $$) &
fi
exec "$@"
EOF
chmod +x die2.sh
mpirun -np 2 ./die2.sh "$dse" sweep "$space" --out sw3 --ranks-per-candidate 2 --threads 1 $sw >sw3.out 2>&1 &&
    bad "the sweep whose rank 1 was killed exited 0"
left=$("$dse" report sw3 --format csv 2>/dev/null | grep -vc ',done,')
[ "$left" -gt 1 ] || bad "the kill came after every candidate was done: nothing to take over"
mpirun -np 2 "$dse" sweep "$space" --out sw3 --ranks-per-candidate 2 --threads 1 $sw >sw3b.out 2>&1 ||
    bad "the sweep after the kill: $(tail -5 sw3b.out)"
"$dse" report sw3 --format csv >sw3.csv 2>/dev/null && cmp -s sw1.csv sw3.csv &&
    echo "ok: a rank killed mid-sweep; the next command took its candidate over: the same report" ||
    bad "the sweep after the kill ends with another report: $(diff sw1.csv sw3.csv | head -5)"
grep -q "resumed from its checkpoint" sw3b.out &&
    echo "ok: the kill left $((left - 1)) of 4 candidates unfinished; $(grep -m1 'resumed from its checkpoint' sw3b.out | cut -c1-120)" ||
    bad "the next command resumed no candidate from its checkpoint (the kill left $((left - 1)) unfinished)"
expect2 "ranks other than asked" "--ranks-per-candidate 3, but 2 ranks were started" \
    mpirun -np 2 "$dse" sweep "$space" --out sw4 --ranks-per-candidate 3
echo "$fail failed"
[ $fail -eq 0 ]
