#!/bin/sh
# allreduce.sh [BUILD_DIR] [NET]: bench_allreduce under mpirun for P = 2, 4 and 8 ranks on
# this machine (--oversubscribe: more ranks than cores share them, and the times say so).
# Prints its key=value lines; docs/comm-model.md reads them. Skips, saying why, where mpirun
# or the MPI build of bench_allreduce is missing (exit 0: a benchmark, not a test).
build=${1:-build}
net=${2:-experiments/squeezenet/squeezenet_v1.0.cfg}
cd "$(dirname "$0")/.." || exit 1
if ! command -v mpirun >/dev/null 2>&1; then
    echo "allreduce.sh: skipped: no mpirun on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev)"
    exit 0
fi
if [ ! -x "$build/bench_allreduce" ]; then
    echo "allreduce.sh: skipped: no $build/bench_allreduce (CMake builds it only where it finds MPI)"
    exit 0
fi
# Open MPI refuses to start as root unless told; containers and CI often run as root.
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
rc=0
for p in 2 4 8; do
    timeout 600 mpirun -np "$p" --oversubscribe "$build/bench_allreduce" "$net" || rc=1
done
exit $rc
