#!/bin/sh
# layering.sh: dependencies point one way (shared/STYLE.md section 1):
# dse -> sweep -> {analysis, engine} -> metaparams -> base. Fails naming each include that breaks it.
bad=0
check() { # folder, forbidden include prefixes...
    dir=$1; shift
    for p in "$@"; do
        hits=$(grep -rnE "#[[:space:]]*include[[:space:]]*[<\"]$p/" "$dir" 2>/dev/null)
        if [ -n "$hits" ]; then
            echo "$dir/ must not include $p/:"; echo "$hits"; bad=1
        fi
    done
}
check base metaparams analysis engine sweep dse
check metaparams analysis engine sweep dse
check analysis engine sweep dse
check engine analysis sweep dse
check sweep dse
grep -rln "libconfig" base metaparams analysis engine --include='*.[ch]' && { echo "only sweep/ and dse/ may use libconfig"; bad=1; }
# sweep/ in floors (shared/STYLE.md section 12, issue #33): a file includes only sweep headers
# of its own floor or below. Bottom up: formats (no sweep header but their own), the space and
# its pre-filter, the search, the directory protocol, the workers. sweep/sweep.h declares the
# library and is its door, so the directory floor and the workers may include it; worker_impl.h
# is the workers' own.
floor_of() { # a sweep/ file name -> its floor (0 formats, 1 space, 2 search, 3 dir, 4 workers)
    case $1 in
        json_read.*|cfgfile.*|objective.*|*.def) echo 0 ;;
        space.*|prefilter.*) echo 1 ;;
        evolve.*|rank.*) echo 2 ;;
        worker_impl.h|sweep_train.c|sweep_loop.c|sweep_stretch.c|sweep_ranks.c|sweep_gpu.c|sweep_worker.c) echo 4 ;;
        *) echo 3 ;;
    esac
}
for f in sweep/*.[ch] sweep/*.def; do
    mine=$(floor_of "${f#sweep/}")
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"sweep\/\([^"]*\)".*/\1/p' "$f"); do
        [ "$h" = sweep.h ] && [ "$mine" -ge 3 ] && continue
        if [ "$(floor_of "$h")" -gt "$mine" ]; then
            echo "$f (floor $mine) must not include sweep/$h (floor $(floor_of "$h"))"; bad=1
        fi
    done
done
# Outside sweep/, only tests may include a sweep header other than the door, sweep/sweep.h.
hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*"sweep/' base metaparams analysis engine dse bench tools 2>/dev/null |
       grep -v '"sweep/sweep\.h"')
if [ -n "$hits" ]; then
    echo "outside sweep/ include only sweep/sweep.h (tests may include the floors):"; echo "$hits"; bad=1
fi
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
