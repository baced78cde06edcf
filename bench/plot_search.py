#!/usr/bin/env python3
"""plot_search.py: hypervolume against candidates trained, per strategy, from the curves of
bench/search_replay and bench/optuna_replay.py (CSV: strategy,seed,evals,hv_frac): the
median over seeds as a line, the quartiles as a band (--stat median, the default), or the
mean with its 95% confidence interval (Student t over the seeds) as error bars (--stat
mean); the target as a dashed line. --only S,S keeps those strategies. Writes one SVG (no
plotting library needed).

Usage: plot_search.py CURVES.csv OUT.svg [--target 0.95] [--title TEXT] [--ymin 0.5]
                      [--stat median|mean] [--only S[,S...]]"""
import argparse
import csv
import math
import sys
from collections import defaultdict

COLORS = {"evolution": "#1f77b4", "random": "#d62728", "optuna_nsga2": "#2ca02c", "bo": "#9467bd",
          "optuna_tpe": "#8c564b", "optuna_gp": "#e377c2", "bo_told": "#17becf"}
LABELS = {"evolution": "dse evolution", "random": "dse random search", "optuna_nsga2": "Optuna NSGA-II",
          "bo": "dse bo", "optuna_tpe": "Optuna TPE", "optuna_gp": "Optuna GPSampler",
          "bo_told": "dse bo, told the reference"}
# Student t's 97.5% point by degrees of freedom (1..30; the normal's past them)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci(v):
    """The mean of v and the half-width of its 95% interval."""
    n = len(v)
    m = sum(v) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    return m, (T975[n - 2] if n - 1 <= len(T975) else 1.96) * sd / math.sqrt(n)


def q(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1) + 0.5)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("curves")
    ap.add_argument("out")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--title", default="Hypervolume against candidates trained")
    ap.add_argument("--ymin", type=float, default=0.5)
    ap.add_argument("--stat", choices=("median", "mean"), default="median")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    keep = set(a.only.split(",")) if a.only else None
    data = defaultdict(lambda: defaultdict(list))
    with open(a.curves, newline="") as f:
        for r in csv.DictReader(f):
            if keep is None or r["strategy"] in keep:
                data[r["strategy"]][int(r["evals"])].append(float(r["hv_frac"]))
    if not data:
        print(f"plot_search: {a.curves}: no rows", file=sys.stderr)
        return 2
    xmax = max(max(d) for d in data.values())
    W, H, L, R, T, B = 720, 440, 64, 20, 40, 56
    pw, ph = W - L - R, H - T - B

    def X(e):
        return L + pw * e / xmax

    def Y(v):
        v = max(a.ymin, min(1.0, v))
        return T + ph * (1 - (v - a.ymin) / (1 - a.ymin))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="14">{a.title}</text>']
    for i in range(6):  # y grid
        v = a.ymin + (1 - a.ymin) * i / 5
        out.append(f'<line x1="{L}" y1="{Y(v):.1f}" x2="{L + pw}" y2="{Y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
    step = 1  # 1, 2, 5 x 10^k: at most 10 ticks
    while xmax / step > 10:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    for e in range(0, xmax + 1, step):
        out.append(f'<line x1="{X(e):.1f}" y1="{T}" x2="{X(e):.1f}" y2="{T + ph}" stroke="#eee"/>')
        out.append(f'<text x="{X(e):.1f}" y="{T + ph + 16}" text-anchor="middle">{e}</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 14}" text-anchor="middle">candidates trained (evaluations)</text>')
    out.append(f'<text x="16" y="{T + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {T + ph / 2})">'
               f'hypervolume / full grid\'s</text>')
    out.append(f'<line x1="{L}" y1="{Y(a.target):.1f}" x2="{L + pw}" y2="{Y(a.target):.1f}" stroke="#555" '
               f'stroke-dasharray="5,4"/>')
    out.append(f'<text x="{L + pw - 4}" y="{Y(a.target) - 5:.1f}" text-anchor="end" fill="#555">'
               f'{a.target:.0%} of the grid</text>')
    order = [s for s in ("evolution", "optuna_nsga2", "random", "bo", "bo_told", "optuna_tpe", "optuna_gp") if s in data] + \
            sorted(s for s in data if s not in COLORS)
    for n, s in enumerate(order):
        d = data[s]
        xs = sorted(d)
        col = COLORS.get(s, "#777")
        seeds = len(d[xs[0]])
        if a.stat == "mean":  # the mean, and error bars of its 95% interval at every evaluation
            mc = {e: mean_ci(d[e]) for e in xs}
            for e in xs:
                m, h = mc[e]
                dx = (n - (len(order) - 1) / 2) * 2.0  # strategies side by side, not on top of each other
                out.append(f'<line x1="{X(e) + dx:.1f}" y1="{Y(m - h):.1f}" x2="{X(e) + dx:.1f}" y2="{Y(m + h):.1f}" '
                           f'stroke="{col}" stroke-width="1.2"/>')
            line = " ".join(f"{X(e):.1f},{Y(mc[e][0]):.1f}" for e in xs)
            what = f"mean of {seeds} seeds, 95% interval"
        else:
            lo = [(X(e), Y(q(d[e], 0.25))) for e in xs]
            hi = [(X(e), Y(q(d[e], 0.75))) for e in reversed(xs)]
            band = " ".join(f"{x:.1f},{y:.1f}" for x, y in lo + hi)
            out.append(f'<polygon points="{band}" fill="{col}" fill-opacity="0.15" stroke="none"/>')
            line = " ".join(f"{X(e):.1f},{Y(q(d[e], 0.5)):.1f}" for e in xs)
            what = f"median of {seeds} seeds, quartiles"
        out.append(f'<polyline points="{line}" fill="none" stroke="{col}" stroke-width="2"/>')
        ly = T + ph - 16 - 18 * (len(order) - 1 - n)
        out.append(f'<line x1="{L + pw - 400}" y1="{ly - 4}" x2="{L + pw - 376}" y2="{ly - 4}" stroke="{col}" '
                   f'stroke-width="2"/>')
        out.append(f'<text x="{L + pw - 370}" y="{ly}">{LABELS.get(s, s)}: {what}</text>')
    out.append("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
