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
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
