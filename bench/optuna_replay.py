#!/usr/bin/env python3
"""optuna_replay.py: the yardstick for bench/search_replay (issue #16, item 5): Optuna's
NSGA-II (optuna.samplers.NSGAIISampler) replayed against the same tabular benchmark, with
the same objectives (top-1 up, a cost column down), the same reference point and the same
hypervolume, so its curve can be drawn beside ours.

Every metaparameter column that varies in the table becomes a categorical parameter with the
table's values. Each trial is one evaluation: Optuna may ask for a configuration it has
asked for before, and a user would pay to train it again, so repeats count (the number of
distinct configurations is printed too). Output: `name=... metric=value` lines and, with
--curves FILE, rows "optuna_nsga2,seed,evals,hv_frac" appended to FILE (search_replay's
format; write search_replay's first).

Usage: optuna_replay.py TABLE.csv [--seeds N] [--pop P] [--cost params] [--target F]
                                  [--budget B] [--curves FILE] [--ref-quantile Q]
Needs optuna (pip); says "skipped" and why, exit 77, where it is missing."""
import argparse
import csv
import math
import statistics
import sys
import time

# The metaparameter and macro columns of `dse report --format csv` (docs/report.md): the
# ones that vary in a table are the search space.
AXES = ["base_e", "incr_e", "freq", "pct3x3", "sr", "bypass", "input_c", "input_h", "input_w", "classes",
        "conv1_filters", "conv1_kernel", "conv1_stride", "conv1_pad", "fires", "pools", "dropout", "fire_dropout"]


def hypervolume2(points, ref_top1, ref_cost):
    """Area dominated by (top1 up, cost down) points and dominating the reference: as
    dse_evo_hypervolume2 (sweep/evolve.c)."""
    pts = sorted((c, a) for a, c in points if a == a and a > ref_top1 and c < ref_cost)
    area, best = 0.0, ref_top1
    for i, (c, a) in enumerate(pts):
        best = max(best, a)
        nxt = pts[i + 1][0] if i + 1 < len(pts) else ref_cost
        area += (nxt - c) * (best - ref_top1)
    return area


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--pop", type=int, default=16)
    ap.add_argument("--cost", default="params")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--budget", type=int, default=0)
    ap.add_argument("--curves")
    ap.add_argument("--ref-quantile", type=float, default=0.0,
                    help="reference top-1: this quantile of the table's (search_replay's rule); 0: the lowest")
    a = ap.parse_args()
    try:
        import optuna
    except ImportError as e:
        print(f"skipped: optuna is not installed ({e}); pip install optuna", file=sys.stderr)
        return 77
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    with open(a.table, newline="") as f:
        rows = list(csv.DictReader(f))
    rows = [r for r in rows if r.get("status") != "pruned"]
    if not rows or a.cost not in rows[0] or "top1" not in rows[0]:
        print(f"optuna_replay: {a.table}: no rows, or no top1 / {a.cost} column", file=sys.stderr)
        return 2
    axes = [k for k in AXES if k in rows[0] and len({r[k] for r in rows}) > 1]
    choices = {k: sorted({r[k] for r in rows}, key=lambda v: (float(v) if v.replace('.', '', 1).isdigit() else math.inf, v))
               for k in axes}
    table = {}
    for r in rows:
        top1 = float(r["top1"]) if r["top1"] else float("nan")
        table[tuple(r[k] for k in axes)] = (top1, float(r[a.cost]))
    tops = sorted(v[0] for v in table.values() if v[0] == v[0])
    ref_top1 = tops[int(a.ref_quantile * (len(tops) - 1) + 0.5)] if a.ref_quantile > 0 else tops[0]
    ref_cost = max(v[1] for v in table.values()) * 1.01
    hv_grid = hypervolume2(table.values(), ref_top1, ref_cost)
    budget = a.budget or len(table)
    print(f"name=optuna_replay optuna={optuna.__version__} table={a.table} trainable={len(table)} "
          f"axes={','.join(axes)} cost={a.cost} seeds={a.seeds} pop={a.pop} budget={budget} "
          f"ref_top1={ref_top1:.4f} ref_cost={ref_cost:.6g} hv_grid={hv_grid:.6g}")

    need, distinct, curves = [], [], []
    t0 = time.time()
    for seed in range(1, a.seeds + 1):
        sampler = optuna.samplers.NSGAIISampler(population_size=a.pop, seed=seed)
        study = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler)
        pts, seen, hv = [], set(), []

        def objective(trial):
            key = tuple(trial.suggest_categorical(k, choices[k]) for k in axes)
            seen.add(key)
            top1, cost = table[key]
            pts.append((top1, cost))
            hv.append(hypervolume2(pts, ref_top1, ref_cost) / hv_grid)
            return (top1 if top1 == top1 else 0.0), cost

        study.optimize(objective, n_trials=budget)
        n = next((i + 1 for i, v in enumerate(hv) if v >= a.target - 1e-12), budget + 1)
        need.append(n)
        distinct.append(len(seen))
        curves += [("optuna_nsga2", seed, i + 1, v) for i, v in enumerate(hv)]
    need.sort()
    med = need[len(need) // 2]
    reached = sum(n <= budget for n in need)
    print(f"name=optuna_replay_nsga2 evals_to_target_median={med} evals_to_target_q1={need[len(need) // 4]} "
          f"evals_to_target_q3={need[(3 * len(need)) // 4]} reached={reached}/{a.seeds} "
          f"distinct_median={statistics.median(distinct):g} seconds={time.time() - t0:.1f}")
    if a.curves:
        with open(a.curves, "a") as f:
            for s, seed, e, v in curves:
                f.write(f"{s},{seed},{e},{v:.6f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
