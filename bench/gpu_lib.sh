# gpu_lib.sh: what bench/gpu_pack.sh and bench/gpu_sweep227.sh share; sourced from the
# repository root (. bench/gpu_lib.sh); die is each script's own.
#   is_int S      whether S is a number (digits only)
#   now           seconds since the epoch, with nanoseconds (GNU date); fails without them
#   timed_sweep NAME PER_GPU DIR LOG OPTION...
#       dse sweep $space --out DIR OPTION..., appended to LOG, its start and end in $t0 and
#       $t1 (now's seconds); dies (die) unless it ends with status 0 and all $k candidates
#       done; then sets $cand, the candidates' own training speeds (img_per_s, evaluation
#       excluded) averaged.
#   gpu_probe LOG ARG...
#       dse bench ARG... into LOG: is there a usable GPU? (It also warms up the driver, so
#       the first timed run does not pay it.) Without one, prints "skipped: no CUDA device
#       (...)" and exits 77; on another failure shows LOG and dies.
is_int() { case $1 in ''|*[!0-9]*) return 1 ;; esac; return 0; }
now() {
    t=$(date +%s.%N) && case $t in *N*|'') return 1 ;; esac && echo "$t"
}
# timed_sweep reads $dse, $space and $k.
timed_sweep() {
    ts_name=$1 ts_per=$2 ts_dir=$3 ts_log=$4
    shift 4
    t0=$(now)
    "$dse" sweep "$space" --out "$ts_dir" "$@" >>"$ts_log" 2>&1
    rc=$?
    t1=$(now)
    done_n=$(grep -l '"status": "done"' "$ts_dir"/candidates/*.json 2>/dev/null | wc -l)
    if [ "$rc" != 0 ] || [ "$done_n" != "$k" ]; then
        tail -30 "$ts_log" >&2
        die "the $ts_name sweep (--per-gpu $ts_per) ended with status $rc and $done_n of $k candidates done (log: $ts_log)"
    fi
    cand=$(grep -h '^  "img_per_s": ' "$ts_dir"/candidates/*.json | tr -d ',' |
           awk '{ s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }')
}
# gpu_probe reads $dse and $gpu.
gpu_probe() {
    gp_log=$1
    shift
    "$dse" bench "$@" >"$gp_log" 2>&1 && return 0
    if grep -q -e 'no CUDA device' -e 'built without the CUDA backend' "$gp_log"; then
        echo "skipped: no CUDA device ($(grep -m1 -e 'no CUDA device' -e 'built without' "$gp_log"))"
        exit 77
    fi
    cat "$gp_log" >&2
    die "dse bench on cuda:$gpu failed (above; $gp_log)"
}
