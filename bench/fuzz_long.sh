#!/bin/sh
# fuzz_long.sh [SECONDS]: the long fuzzing run, by hand: every target of tests/fuzz/ for
# SECONDS (default 600, 10 minutes) through tools/fuzz, growing the corpora kept in
# build-fuzz/corpus/<target>/ from one run to the next. A crash's input is in
# build-fuzz/artifacts/; add it to tests/fuzz/corpus/<target>/ with the fix.
set -eu
cd "$(dirname "$0")/.."
DSE_FUZZ_CORPUS=${DSE_FUZZ_CORPUS:-$PWD/build-fuzz/corpus} exec sh tools/fuzz "${1:-600}"
