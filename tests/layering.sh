#!/bin/sh
# layering.sh: dependencies point one way (shared/STYLE.md section 1):
# dse -> {analysis, engine} -> metaparams -> base. Fails naming each include that breaks it.
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
check base metaparams analysis engine dse
check metaparams analysis engine dse
check analysis engine dse
check engine analysis dse
grep -rln "libconfig" base metaparams analysis engine --include='*.[ch]' && { echo "only dse/ may use libconfig"; bad=1; }
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
