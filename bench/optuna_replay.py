#!/usr/bin/env python3
"""optuna_replay.py: the yardsticks for bench/search_replay (issue #16 item 5, issue #36
item 3): Optuna's samplers replayed against the same tabular benchmark, with the same
objectives (top-1 up, a cost column down), the same reference point and the same
hypervolume, so their curves can be drawn beside ours. --sampler picks them (default all):
nsga2 (NSGAIISampler(population_size=P)), tpe (TPESampler, multi-objective: MOTPE, its
default 10 random startup trials) and gp (GPSampler, multi-objective through its
log-EHVI acquisition; needs torch and scipy), each with seed=s.

Every metaparameter column that varies in the table becomes a categorical parameter with the
table's values. Each trial is one evaluation: Optuna may ask for a configuration it has
asked for before, and a user would pay to train it again, so repeats count (the number of
distinct configurations is printed too). Output: `name=... metric=value` lines, among them
search_replay's `name=optuna_replay_at` statistics at budgets N/10, N/5, N/3, N/2 (N: the
table's trainable candidates; mean and p10 of the hypervolume fraction, the area under its
curve over 1 .. b divided by b; a sampler does not know its budget, so they are read from one
run of max(--budget, N/2) trials), and, with --curves FILE, rows
"optuna_SAMPLER,seed,evals,hv_frac" appended to FILE (search_replay's format; write
search_replay's first).

Usage: optuna_replay.py TABLE.csv [--seeds N] [--pop P] [--cost model_mb] [--target F]
                                  [--budget B] [--curves FILE] [--ref-quantile Q | --ref COST,TOP1]
                                  [--sampler nsga2,tpe,gp]
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
    ap.add_argument("--cost", default="model_mb")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--budget", type=int, default=0)
    ap.add_argument("--curves")
    ap.add_argument("--ref-quantile", type=float, default=0.0,
                    help="reference top-1: this quantile of the table's (search_replay's rule); 0: the lowest")
    ap.add_argument("--ref", help="COST,TOP1: the reference point (search_replay's --ref)")
    ap.add_argument("--sampler", default="nsga2,tpe,gp")
    a = ap.parse_args()
    samplers = a.sampler.split(",")
    if any(x not in ("nsga2", "tpe", "gp") for x in samplers):
        print(f"optuna_replay: --sampler {a.sampler}: expected nsga2, tpe, gp", file=sys.stderr)
        return 2
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
    if a.ref:
        ref_cost, ref_top1 = (float(x) for x in a.ref.split(","))
    hv_grid = hypervolume2(table.values(), ref_top1, ref_cost)
    n = len(table)
    at = [max(1, (n + d // 2) // d) for d in (10, 5, 3, 2)]
    budget = max(a.budget or n, at[-1])
    print(f"name=optuna_replay optuna={optuna.__version__} table={a.table} trainable={n} "
          f"axes={','.join(axes)} cost={a.cost} seeds={a.seeds} pop={a.pop} budget={budget} "
          f"ref_top1={ref_top1:.4f} ref_cost={ref_cost:.6g} hv_grid={hv_grid:.6g}")

    def make(name, seed):
        if name == "nsga2":
            return optuna.samplers.NSGAIISampler(population_size=a.pop, seed=seed)
        if name == "tpe":
            return optuna.samplers.TPESampler(seed=seed)
        return optuna.samplers.GPSampler(seed=seed)

    for name in samplers:
        need, distinct, curves, runs = [], [], [], []
        t0 = time.time()
        for seed in range(1, a.seeds + 1):
            study = optuna.create_study(directions=["maximize", "minimize"], sampler=make(name, seed))
            pts, seen, hv = [], set(), []

            def objective(trial):
                key = tuple(trial.suggest_categorical(k, choices[k]) for k in axes)
                seen.add(key)
                top1, cost = table[key]
                pts.append((top1, cost))
                hv.append(hypervolume2(pts, ref_top1, ref_cost) / hv_grid)
                return (top1 if top1 == top1 else 0.0), cost

            study.optimize(objective, n_trials=budget)
            need.append(next((i + 1 for i, v in enumerate(hv) if v >= a.target - 1e-12), budget + 1))
            distinct.append(len(seen))
            runs.append(hv)
            curves += [(f"optuna_{name}", seed, i + 1, v) for i, v in enumerate(hv)]
        need.sort()
        med = need[len(need) // 2]
        reached = sum(x <= budget for x in need)
        print(f"name=optuna_replay_{name} evals_to_target_median={med} evals_to_target_q1={need[len(need) // 4]} "
              f"evals_to_target_q3={need[(3 * len(need)) // 4]} reached={reached}/{a.seeds} "
              f"distinct_median={statistics.median(distinct):g} seconds={time.time() - t0:.1f}")
        for d, b in zip((10, 5, 3, 2), at):
            h = sorted(r[b - 1] for r in runs)
            auc = statistics.mean(sum(r[:b]) / b for r in runs)
            print(f"name=optuna_replay_at strategy=optuna_{name} budget={b} divisor={d} "
                  f"hv_mean={statistics.mean(h):.4f} hv_sd={statistics.stdev(h) if len(h) > 1 else 0:.4f} "
                  f"hv_p10={h[int(0.1 * (len(h) - 1) + 0.5)]:.4f} auc={auc:.4f}")
        if a.curves:
            with open(a.curves, "a") as f:
                for s_, seed, e, v in curves:
                    f.write(f"{s_},{seed},{e},{v:.6f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
