#!/usr/bin/env python3
"""same_search.py: is a real search the replay's? (issue #36; run.sh step 6)

Compares the proposals of a sweep directory's search log (DIR/search/log-<latest gen>:
`propose ID INDEX` lines, in order) with the replay's dump (search_replay --dump: rows
strategy,seed,step,index; the first seed's bo rows) and with the sweep's report (`dse report
DIR --format csv`: REPORT.csv, one row per proposal), and each proposal's top-1 there with
the table's (TABLE.csv) at its index (a proposal without a top-1 counts as differing).
Prints one `name=same_search` line; exit 1 if anything differs.

With STRATEGY (default bo) the dump's rows of that strategy are the replay: bo_asha_e<E>
for search_replay --rungs' multi-fidelity search of E epochs, whose proposals asha stopped
at the rung have no top-1 in the report (their status is stopped: counted, not compared);
with RUNG.csv (rung_table.py) each proposal's top-1 at the rung (the search log's `rung`
lines) is compared with it too.

Usage: same_search.py DIR DUMP.csv REPORT.csv TABLE.csv [STRATEGY [RUNG.csv]]"""
import csv
import os
import sys


def search_log(d):
    """DIR/search/log-<latest gen>'s proposals (grid indices, in order) and rung results
    ({index: top-1}; `rung ID INDEX EPOCH OF TOP1` lines); None where there is no log."""
    logs = [f for f in os.listdir(os.path.join(d, "search")) if f.startswith("log-")]
    if not logs:
        return None
    real, rung = [], {}
    with open(os.path.join(d, "search", max(logs, key=lambda f: int(f[4:])))) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "propose":
                real.append(int(w[2]))
            if len(w) == 6 and w[0] == "rung":
                rung[int(w[2])] = float(w[5])
    return real, rung


def main():
    if len(sys.argv) not in (5, 6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    d, dump, report, table = sys.argv[1:5]
    strategy = sys.argv[5] if len(sys.argv) > 5 else "bo"
    rung_csv = sys.argv[6] if len(sys.argv) > 6 else None
    got_log = search_log(d)
    if got_log is None:
        print(f"same_search: {d}/search: no log", file=sys.stderr)
        return 2
    real, rung = got_log
    with open(dump, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["strategy"] == strategy]
    if not rows:
        print(f"same_search: {dump}: no rows of strategy {strategy}", file=sys.stderr)
        return 2
    seed = min(int(r["seed"]) for r in rows)
    replay = [int(r["index"]) for r in sorted(rows, key=lambda r: int(r["step"])) if int(r["seed"]) == seed]
    with open(table, newline="") as f:
        t = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f)}
    with open(report, newline="") as f:
        rep = list(csv.DictReader(f))
    got = {int(r["index"]): float(r["top1"]) for r in rep if r["top1"]}
    stopped = {int(r["index"]) for r in rep if r["status"] == "stopped"}
    # every proposal trained and reported with a top-1, each the table's (asha: or stopped)
    off = [k for k in real if k not in stopped and (k not in got or k not in t or abs(got[k] - t[k]) > 1e-9)]
    rung_off = 0
    if rung_csv: # the log's rung results against the rung table's, as a float holds them
        with open(rung_csv, newline="") as f:
            rt = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f)}
        rung_off = sum(1 for k in real if k not in rung or k not in rt or abs(rung[k] - rt[k]) > 1e-6)
    same = real == replay and {int(r["index"]) for r in rep} == set(real)
    print(f"name=same_search proposals_real={'/'.join(map(str, real))} proposals_replay={'/'.join(map(str, replay))} "
          f"same_proposals={'yes' if same else 'no'} trained={len(real) - len(stopped)} stopped={len(stopped)} "
          f"top1_as_table={len(real) - len(stopped) - len(off)} top1_differs={len(off)}"
          + (f" rung_results={len(rung)} rung_differs={rung_off}" if rung_csv else ""))
    return 0 if same and not off and not rung_off else 1


if __name__ == "__main__":
    sys.exit(main())
