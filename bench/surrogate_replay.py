#!/usr/bin/env python3
"""surrogate_replay.py: a check on the search benchmark's table (experiments/search_bench): would
a model-based search, which learns from the results so far, beat random search by the 3x of
issue #16's target where dse's evolution does not? Not a dse strategy, a yardstick.

The model: Bayesian linear regression of top-1 on one-hot metaparameter values and
log(params), ridge prior (lambda 1), noise variance from the residuals. Each step proposes
the untried candidate whose optimistic top-1 (mean + beta x predictive std) would add the
most hypervolume. The first `init` candidates are a random order's (seeded), as random
search's. Hypervolume, reference points and "evaluations to 95%" are search_replay's.

Usage: surrogate_replay.py TABLE.csv [--seeds 25] [--ref-quantile Q] [--beta B] [--init N]
Needs numpy; says "skipped" and why, exit 77, where it is missing."""
import argparse
import csv
import math
import random
import sys

from optuna_replay import hypervolume2  # the one Python copy of dse_evo_hypervolume2 (bench/)

AXES = ["base_e", "incr_e", "freq", "pct3x3", "sr", "bypass", "conv1_filters", "pools", "dropout"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--ref-quantile", type=float, default=0.0)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--init", type=int, default=8)
    a = ap.parse_args()
    try:
        import numpy as np
    except ImportError as e:
        print(f"skipped: numpy is not installed ({e})", file=sys.stderr)
        return 77
    rows = [r for r in csv.DictReader(open(a.table, newline="")) if r.get("status") == "done" and r["top1"]]
    axes = [k for k in AXES if k in rows[0] and len({r[k] for r in rows}) > 1]
    vals = {k: sorted({r[k] for r in rows}) for k in axes}
    X = np.array([[1.0] + [1.0 if r[k] == v else 0.0 for k in axes for v in vals[k][1:]] +
                  [math.log(float(r["params"]))] for r in rows])
    y = [float(r["top1"]) for r in rows]
    cost = [float(r["params"]) for r in rows]
    tops = sorted(y)
    ref_t = tops[int(a.ref_quantile * (len(tops) - 1) + 0.5)] if a.ref_quantile > 0 else tops[0]
    ref_c = max(cost) * 1.01
    grid = hypervolume2(zip(y, cost), ref_t, ref_c)
    need = []
    for seed in range(1, a.seeds + 1):
        order = list(range(len(y)))
        random.Random(seed).shuffle(order)
        seen = order[:a.init]
        while hypervolume2([(y[i], cost[i]) for i in seen], ref_t, ref_c) < 0.95 * grid - 1e-12:
            A, b = X[seen], np.array([y[i] for i in seen])
            Mi = np.linalg.inv(A.T @ A + np.eye(X.shape[1]))
            w = Mi @ A.T @ b
            res = b - A @ w
            s2 = max(1e-4, float(res @ res) / max(1, len(b) - 1))
            have = [(y[i], cost[i]) for i in seen]
            now = hypervolume2(have, ref_t, ref_c)
            best = max((hypervolume2(have + [(float(X[i] @ w) + a.beta * math.sqrt(s2 * (1 + X[i] @ Mi @ X[i])),
                                              cost[i])], ref_t, ref_c) - now, -i, i)
                       for i in range(len(y)) if i not in seen)
            seen.append(best[2])
        need.append(len(seen))
    need.sort()
    print(f"name=surrogate_replay table={a.table} seeds={a.seeds} ref_top1={ref_t:.4f} beta={a.beta} init={a.init} "
          f"evals_to_target_median={need[len(need) // 2]} evals_to_target_q1={need[len(need) // 4]} "
          f"evals_to_target_q3={need[(3 * len(need)) // 4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
