#!/bin/sh
# layering_build.sh: proves that the build enforces the layering (CMakeLists.txt, "The
# layering, enforced by the build"): a library cannot include a header of a folder it does
# not link. Arguments: cmake, the build folder, then probes (CMake targets) as NAME=ok, a
# probe that must build, or NAME=fail:HEADER, one that must fail because HEADER is not
# found (failing for any other reason proves nothing). tests/layering.sh is the second check.
cmake=$1 dir=$2
shift 2
bad=0
for p in "$@"; do
    name=${p%%=*} want=${p#*=}
    out=$("$cmake" --build "$dir" --target "$name" 2>&1)
    rc=$?
    case $want in
    ok)
        if [ $rc -ne 0 ]; then
            echo "$name: must build, but:"; echo "$out"; bad=1
        fi ;;
    fail:*)
        header=${want#fail:}
        if [ $rc -eq 0 ]; then
            echo "$name: includes $header and builds: the layering is not enforced"; bad=1
        elif ! echo "$out" | grep -qE "$header'?:? (No such file|file not found)"; then
            echo "$name: failed, but not for want of $header:"; echo "$out"; bad=1
        fi ;;
    *)
        echo "$name: unknown expectation '$want'"; bad=1 ;;
    esac
done
[ $# -gt 0 ] || { echo "no probes given"; bad=1; }
[ $bad -eq 0 ] && echo "layering enforced by the build: $# probes as expected"
exit $bad
