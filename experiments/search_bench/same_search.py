#!/usr/bin/env python3
"""same_search.py: is a real search the replay's? (issue #36; run.sh step 6)

Compares the proposals of a sweep directory's search log (DIR/search/log-<latest gen>:
`propose ID INDEX` lines, in order) with the replay's dump (search_replay --dump: rows
strategy,seed,step,index; the first seed's bo rows) and with the sweep's report (`dse report
DIR --format csv`: REPORT.csv, one row per proposal), and each proposal's top-1 there with
the table's (TABLE.csv) at its index (a proposal without a top-1 counts as differing).
Prints one `name=same_search` line; exit 1 if anything differs.

Usage: same_search.py DIR DUMP.csv REPORT.csv TABLE.csv"""
import csv
import os
import sys


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    d, dump, report, table = sys.argv[1:]
    logs = [f for f in os.listdir(os.path.join(d, "search")) if f.startswith("log-")]
    if not logs:
        print(f"same_search: {d}/search: no log", file=sys.stderr)
        return 2
    log = max(logs, key=lambda f: int(f[4:]))
    real = []
    with open(os.path.join(d, "search", log)) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "propose":
                real.append(int(w[2]))
    with open(dump, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["strategy"] == "bo"]
    if not rows:
        print(f"same_search: {dump}: no rows of strategy bo (a dump made without --bo-ref)", file=sys.stderr)
        return 2
    seed = min(int(r["seed"]) for r in rows)
    replay = [int(r["index"]) for r in sorted(rows, key=lambda r: int(r["step"])) if int(r["seed"]) == seed]
    with open(table, newline="") as f:
        t = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f)}
    with open(report, newline="") as f:
        rep = list(csv.DictReader(f))
    got = {int(r["index"]): float(r["top1"]) for r in rep if r["top1"]}
    # every proposal trained and reported with a top-1, each the table's
    off = [k for k in real if k not in got or k not in t or abs(got[k] - t[k]) > 1e-9]
    same = real == replay and {int(r["index"]) for r in rep} == set(real)
    print(f"name=same_search proposals_real={'/'.join(map(str, real))} proposals_replay={'/'.join(map(str, replay))} "
          f"same_proposals={'yes' if same else 'no'} trained={len(got)} top1_as_table={len(got) - len(off)} "
          f"top1_differs={len(off)}")
    return 0 if same and not off else 1


if __name__ == "__main__":
    sys.exit(main())
