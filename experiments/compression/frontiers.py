#!/usr/bin/env python3
"""frontiers.py SWEEP.csv [SWEEPDIR]: the squeeze-ratio sweep on float size and on compressed size, side by
side (experiments/compression/README.md), from `dse report DIR --format csv` of a sweep with a
compress section: per candidate (the mean of its replicates) its float32 size and top-1, its
.dsez's size and the compressed top-1, whether it is on each Pareto frontier (size down, top-1
up), and how the two rankings compare: Kendall's tau between the top-1 orders and between the
size orders, and which candidates leave or join the frontier. With SWEEPDIR, the compressed
top-1's sample standard deviation over the replicates, from their records
(SWEEPDIR/candidates/<id>[r<k>].json). Python's standard library only."""
import csv
import glob
import json
import os
import re
import statistics
import sys


def compressed_sd(sweep_dir):
    """Sample standard deviation of compressed_top1 (percent) per candidate id, over its replicates."""
    per = {}
    for path in glob.glob(os.path.join(sweep_dir, "candidates", "*.json")):
        with open(path) as f:
            r = json.load(f)
        if r.get("compressed_top1") is not None:
            per.setdefault(re.sub(r"r[0-9]+$", "", r["id"]), []).append(100 * r["compressed_top1"])
    return {k: statistics.stdev(v) if len(v) > 1 else 0.0 for k, v in per.items()}


def frontier(rows, size, top1):
    """Indices of rows not dominated on (size down, top1 up)."""
    out = set()
    for i, a in enumerate(rows):
        dominated = any(b[size] <= a[size] and b[top1] >= a[top1] and (b[size] < a[size] or b[top1] > a[top1])
                        for j, b in enumerate(rows) if j != i)
        if not dominated:
            out.add(i)
    return out


def kendall(x, y):
    """Kendall's tau-a of two equally long lists."""
    n, s = len(x), 0
    for i in range(n):
        for j in range(i + 1, n):
            s += (1 if (x[i] - x[j]) * (y[i] - y[j]) > 0 else -1 if (x[i] - x[j]) * (y[i] - y[j]) < 0 else 0)
    return s / (n * (n - 1) / 2) if n > 1 else 1.0


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: frontiers.py SWEEP.csv [SWEEPDIR]")
    csd = compressed_sd(sys.argv[2]) if len(sys.argv) == 3 else {}
    rows = []
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "done" or not r["compressed_bytes"]:
                continue
            rows.append({"id": r["id"], "sr": float(r["sr"]), "bytes": int(r["model_bytes"]), "top1": 100 * float(r["top1"]),
                         "sd": 100 * float(r["top1_std"] or 0), "n": int(r["top1_n"] or 1),
                         "cbytes": float(r["compressed_bytes"]), "ctop1": 100 * float(r["compressed_top1"])})
    rows.sort(key=lambda r: r["sr"])
    ff, cf = frontier(rows, "bytes", "top1"), frontier(rows, "cbytes", "ctop1")
    print("| squeeze ratio | float32 bytes | float top-1 (mean ± sd, n) | float frontier | .dsez bytes | smaller |"
          " compressed top-1 (mean ± sd) | change | compressed frontier |")
    print("|---:|---:|---:|:---:|---:|---:|---:|---:|:---:|")
    for i, r in enumerate(rows):
        print(f"| {r['sr']:g} | {r['bytes']:,} | {r['top1']:.2f} ± {r['sd']:.2f} ({r['n']}) | {'yes' if i in ff else ''} |"
              f" {r['cbytes']:,.0f} | {r['bytes'] / r['cbytes']:.1f}x | {r['ctop1']:.2f}"
              f"{' ± %.2f' % csd[r['id']] if r['id'] in csd else ''} | {r['ctop1'] - r['top1']:+.2f} |"
              f" {'yes' if i in cf else ''} |")
    print()
    print(f"Kendall's tau, float top-1 order against compressed top-1 order: "
          f"{kendall([r['top1'] for r in rows], [r['ctop1'] for r in rows]):.2f}")
    print(f"Kendall's tau, float32 size order against .dsez size order: "
          f"{kendall([r['bytes'] for r in rows], [r['cbytes'] for r in rows]):.2f}")
    left = [rows[i]["sr"] for i in sorted(ff - cf)]
    joined = [rows[i]["sr"] for i in sorted(cf - ff)]
    print(f"on the float frontier only: {', '.join(f'SR {s:g}' for s in left) or 'none'}; "
          f"on the compressed frontier only: {', '.join(f'SR {s:g}' for s in joined) or 'none'}")
    best_f = max(rows, key=lambda r: r["top1"])
    best_c = max(rows, key=lambda r: r["ctop1"])
    print(f"most accurate: SR {best_f['sr']:g} in float32, SR {best_c['sr']:g} compressed")


if __name__ == "__main__":
    main()
