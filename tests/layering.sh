#!/bin/sh
# layering.sh: dependencies point one way (docs/architecture.md):
# dse -> sweep -> {analysis, netfile -> engine -> data} -> metaparams -> base (data needs only base).
# Fails naming each include that breaks it.
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
check base metaparams analysis engine netfile sweep dse
check metaparams analysis engine netfile sweep dse
check analysis engine netfile sweep dse
check engine analysis netfile sweep dse
check netfile analysis sweep dse
check sweep dse
# data/ (issue #33): engine -> data -> base; sweep and dse may use it, analysis and metaparams not.
check data metaparams analysis engine netfile sweep dse
for d in base metaparams analysis; do check $d data; done
grep -rln "libconfig" data --include='*.[ch]' && { echo "only netfile/, sweep/ and dse/ may use libconfig"; bad=1; }
# doors LIB HEADER...: outside LIB/ (tests/ excepted) a file includes only the headers of LIB
# named here, its doors; LIB's other headers are its own (issue #33 item 6). Build folders
# (a CMakeCache.txt) are passed over.
doors() {
    lib=$1; shift
    allow=$(echo "$*" | sed 's/\./\\./g; s/ /|/g')
    for d in */; do
        d=${d%/}
        [ "$d" = "$lib" ] || [ "$d" = tests ] || [ -f "$d/CMakeCache.txt" ] && continue
        hits=$(grep -rnE "#[[:space:]]*include[[:space:]]*[<\"]$lib/" "$d" --include='*.[ch]' --include='*.cu' \
               --include='*.cpp' --include='*.def' 2>/dev/null | grep -vE "[<\"]$lib/($allow)[>\"]")
        if [ -n "$hits" ]; then
            echo "outside $lib/ and tests/ only $lib/'s doors ($*) may be included:"; echo "$hits"; bad=1
        fi
    done
}
doors data data.h synth.h
doors netfile netfile.h
grep -rln "libconfig" base metaparams analysis engine --include='*.[ch]' && { echo "only netfile/, sweep/ and dse/ may use libconfig"; bad=1; }
# sweep/ in floors (docs/architecture.md#sweep-in-floors): a file includes only sweep headers
# of its own floor or below. Bottom up: the record and the formats (record.h: a candidate
# record, its one writer and one reader; the JSON reader; no other sweep header), the space and
# its pre-filter, the search, the directory protocol (sweep_impl.h: plan, rungs, ASHA, tally,
# next action), the workers. sweep/sweep.h declares the library and is its door, so the
# directory floor and the workers may include it; worker_impl.h is the workers' own.
floor_of() { # a sweep/ file name -> its floor (0 record and formats, 1 space, 2 search, 3 dir, 4 workers)
    case $1 in
        record.*|json_read.*|objective.*|*.def) echo 0 ;;
        space.*|prefilter.*) echo 1 ;;
        evolve.*|bo.*|rank.*) echo 2 ;;
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
doors sweep sweep.h
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
