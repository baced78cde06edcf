#!/bin/sh
# test_summary.sh: tools/test's last line (tools/test-summary, issue #31) for ctest runs that
# skipped nothing, tests that want test tools, tests that want a GPU. Each case: name | the
# tests each build's ctest ran | the skipped ones (",": none) | the line wanted. Run from the
# repository root.
. "$(dirname "$0")/lib.sh"
make_tmp
printf 'sweep_crash_gpu\ntest_engine_cuda\n' >"$tmp/gpu"
tail='the 10 fuzz targets that .ci/run runs; sh tools/install-test-tools installs what they need, then'
tail="$tail sh tools/fuzz 20 runs the fuzz targets"
fail=0 n=0
while IFS='|' read -r name total skipped want; do
    case "$name" in ''|'#'*) continue ;; esac
    name=$(echo "$name" | tr -d " ")
    n=$((n + 1))
    { echo "100% tests passed, 0 tests failed out of $total"; echo; echo "The following tests did not run:"
      i=1; for t in $(echo "$skipped" | tr ',' ' '); do printf '\t %2d - %s (Skipped)\n' $i "$t"; i=$((i + 1)); done
    } >"$tmp/log"
    got=$(sh tools/test-summary 10 "$tmp/gpu" "$tmp/log" "$tmp/log")
    if [ "$got" = "tools/test: $want$tail" ]; then
        echo "summary $name ok"
    else
        echo "summary $name: got '$got', wanted 'tools/test: $want$tail'"
        fail=$((fail + 1))
    fi
done <<'CASES'
all-ran     |29|,|58 passed; skipped: 
tools       |29|test_engine_export,mpi_train,slurm|52 passed; skipped: 6 that want test tools (test_engine_export mpi_train slurm), 
gpu         |29|sweep_crash_gpu,test_engine_cuda|54 passed; skipped: 4 that want a CUDA GPU, 
tools-gpu   |30|test_engine_cuda,sweep_crash_hard|56 passed; skipped: 2 that want test tools (sweep_crash_hard), 2 that want a CUDA GPU, 
CASES
echo "$n summary cases, $fail failed"
[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
