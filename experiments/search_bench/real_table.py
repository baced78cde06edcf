#!/usr/bin/env python3
"""real_table.py: a table with a real search's own results in it (issue #36; run.sh steps 6, 7)

A real search trains its proposals with the conv strategies this machine times for them
(docs/sweep-dir.md), and a float32 training's last bits follow that choice: the same
candidate and seed can end a few tenths of a point off the committed table, trained on
another day's choices. A replay fed the table then sees other results than the real search
saw and proposes otherwise from there, which says nothing about bo. So the replay that
same_search.py compares with is fed this table: TABLE.csv with each candidate the real
search trained to the end at its real top-1 (REPORT.csv: `dse report DIR --format csv`,
the mean of its replicates as the search records it), and with DIR, RUNG.csv's rows at the search
log's rung results. How far the real results are from the table is printed, not judged.

Usage: real_table.py REPORT.csv TABLE.csv OUT.csv [DIR RUNG.csv RUNG_OUT.csv]
Prints one `name=real_table` line."""
import csv
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree by the import below
from same_search import search_log  # noqa: E402  the search log, read as same_search.py reads it


def rewrite(path, out, new):
    """path's rows with top1 replaced at the indices of new; (rows replaced, max |change|)."""
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        fields, rows = r.fieldnames, list(r)
    n, worst = 0, 0.0
    for row in rows:
        k = int(row["index"])
        if k in new:
            worst = max(worst, abs(float(row["top1"]) - new[k]))
            row["top1"] = repr(new[k])
            n += 1
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return n, worst


def main():
    if len(sys.argv) not in (4, 7):
        print(__doc__, file=sys.stderr)
        return 2
    report, table, out = sys.argv[1:4]
    with open(report, newline="") as f:
        # done ones only: a candidate asha stopped reports its rung's top-1, which the rung
        # table takes (below); its full-schedule result was never seen
        real = {int(r["index"]): float(r["top1"]) for r in csv.DictReader(f) if r["top1"] and r["status"] == "done"}
    n, worst = rewrite(table, out, real)
    line = f"name=real_table trained={len(real)} in_table={n} max_abs_diff={worst:.4f}"
    if len(sys.argv) == 7:
        d, rung_csv, rung_out = sys.argv[4:7]
        got_log = search_log(d)
        if got_log is None:
            print(f"real_table: {d}/search: no log", file=sys.stderr)
            return 2
        rung = got_log[1]
        rn, rworst = rewrite(rung_csv, rung_out, rung)
        line += f" rung_results={len(rung)} rung_in_table={rn} rung_max_abs_diff={rworst:.4f}"
    print(line)
    return 0 if n == len(real) else 1


if __name__ == "__main__":
    sys.exit(main())
