#!/bin/sh
# layering.sh: dependencies point one way (shared/STYLE.md section 1):
# dse -> sweep -> {analysis, netfile -> engine} -> metaparams -> base. Fails naming each include that breaks it.
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
grep -rln "libconfig" base metaparams analysis engine --include='*.[ch]' && { echo "only netfile/, sweep/ and dse/ may use libconfig"; bad=1; }
# netfile/'s one door is netfile/netfile.h: no source file outside netfile/ but the tests
# includes another of its headers (its *_impl.h are private). Build folders are passed over.
for dir in */; do
    dir=${dir%/}
    [ "$dir" = netfile ] || [ "$dir" = tests ] || [ -f "$dir/CMakeCache.txt" ] && continue
    hits=$(grep -rnE "#[[:space:]]*include[[:space:]]*[<\"]netfile/" "$dir" --include='*.[ch]' --include='*.cu' \
           --include='*.def' 2>/dev/null | grep -vE "[<\"]netfile/netfile\.h[>\"]")
    if [ -n "$hits" ]; then
        echo "$dir/ may include only netfile/netfile.h of netfile/:"; echo "$hits"; bad=1
    fi
done
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
