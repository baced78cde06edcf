#!/usr/bin/env python3
"""same_search.py: is a real search the replay's? (issue #36; run.sh step 6)

Compares the proposals of a sweep directory's search log (DIR/search/log-<latest gen>:
`propose ID INDEX` lines, in order) with the replay's dump (search_replay --dump: rows
strategy,seed,step,index; the first seed's bo rows), and each trained candidate's top-1
(`dse report DIR --format csv`: REPORT.csv) with the table's (TABLE.csv) at its index.
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
    seed = min(int(r["seed"]) for r in rows)
    replay = [int(r["index"]) for r in sorted(rows, key=lambda r: int(r["step"])) if int(r["seed"]) == seed]
    with open(table, newline="") as f:
        t = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f)}
    with open(report, newline="") as f:
        got = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f) if r["top1"]}
    off = [k for k in got if k not in t or abs(got[k] - t[k]) > 1e-9]
    same = real == replay
    print(f"name=same_search proposals_real={'/'.join(map(str, real))} proposals_replay={'/'.join(map(str, replay))} "
          f"same_proposals={'yes' if same else 'no'} trained={len(got)} top1_as_table={len(got) - len(off)} "
          f"top1_differs={len(off)}")
    return 0 if same and not off else 1


if __name__ == "__main__":
    sys.exit(main())
