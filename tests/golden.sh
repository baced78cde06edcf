#!/bin/sh
# golden.sh DSE: run each case of tests/golden/cli/CASES and compare stdout, stderr and the
# exit status with tests/golden/cli/<name>.txt byte for byte. DSE_UPDATE_GOLDEN=1 rewrites
# the files instead (review the diff). Run from the repository root.
dse=$1
dir=tests/golden/cli
fail=0 n=0
tmp=$(mktemp) || exit 1
# an empty cache: no case's output may depend on this user's (conv choices, packs, the
# machine's training rate that dse analyze --workers estimates from)
XDG_CACHE_HOME=$(mktemp -d) || exit 1
export XDG_CACHE_HOME
trap 'rm -f "$tmp"; rm -rf "$XDG_CACHE_HOME"' EXIT
while IFS='|' read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    name=$(echo "$name" | tr -d ' ')
    n=$((n + 1))
    # shellcheck disable=SC2086
    { "$dse" $args 2>&1; echo "exit status $?"; } >"$tmp"
    if [ -n "$DSE_UPDATE_GOLDEN" ]; then
        cp "$tmp" "$dir/$name.txt"
        echo "updated $dir/$name.txt"
    elif ! cmp -s "$tmp" "$dir/$name.txt"; then
        echo "golden $name: output differs from $dir/$name.txt:"
        diff -u "$dir/$name.txt" "$tmp" | head -40
        fail=$((fail + 1))
    else
        echo "golden $name ok"
    fi
done <"$dir/CASES"
echo "$n golden cases, $fail failed"
[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
