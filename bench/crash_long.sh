#!/bin/sh
# crash_long.sh [SECONDS] [DSE]: the long crash run, by hand: tests/crash_hard.sh with its
# random kills (part 4) going on for SECONDS (default 600, 10 minutes) instead of ctest's
# 60, with the dse binary DSE (default build/dse). DSE_CRASH_PARTS="4" runs that part alone;
# DSE_CRASH_SEED repeats a run's random moments (each run prints its seed).
set -eu
cd "$(dirname "$0")/.."
DSE_CRASH_SECONDS=${1:-600} exec sh tests/crash_hard.sh "${2:-build/dse}"
