#!/bin/sh
# search_replay.sh BUILD_SEARCH_REPLAY: bench/search_replay's bounds on experiments/search_bench's
# 96-candidate table (issue #36). The best subset's dynamic program names the subset it
# scores: --oracle with the table itself must pick subsets worth exactly the best subset at
# every budget (the knowable bound is then the clairvoyant one), and with the other seed's
# table (results/table_seed2.csv) never more than it, spending the whole budget while
# candidates above the reference are left.
set -eu
sr=$1
t=experiments/search_bench
out=${TMPDIR:-/tmp}/search_replay_test.$$
trap 'rm -f "$out"' EXIT
fail=0
"$sr" $t/table.cfg $t/results/table.csv --seeds 1 --strategy random --oracle $t/results/table.csv >"$out"
n=$(grep -c '^name=search_replay_oracle ' "$out" || true)
[ "$n" = 4 ] || { echo "FAIL: $n oracle lines, expected 4 (N/10, N/5, N/3, N/2)"; fail=1; }
# itself as the oracle: knowable == best
awk '/^name=search_replay_oracle /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       if (v["best_subset"] != v["knowable_subset"]) { print "FAIL: budget " v["budget"] ": knowable " v["knowable_subset"] \
         " != best " v["best_subset"] " with the table as its own oracle"; bad = 1 } }
     END { exit bad }' "$out" || fail=1
"$sr" $t/table.cfg $t/results/table.csv --seeds 1 --strategy random --oracle $t/results/table_seed2.csv >"$out"
awk '/^name=search_replay_oracle /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       if (v["knowable_subset"] + 0 > v["best_subset"] + 1e-9) { print "FAIL: budget " v["budget"] ": knowable " \
         v["knowable_subset"] " above the best subset " v["best_subset"]; bad = 1 }
       if (v["picked"] + 0 != v["budget"] + 0) { print "FAIL: budget " v["budget"] ": picked " v["picked"] \
         " (96 candidates, 48 above the lowest reference at least: the whole budget)"; bad = 1 } }
     END { exit bad }' "$out" || fail=1
[ $fail = 0 ] && echo "search_replay bounds ok"
exit $fail
