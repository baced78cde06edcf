#!/usr/bin/env python3
"""rung_table.py SWEEP_DIR EPOCH [REPLICATE] > RUNG.csv: every finished candidate's top-1
after EPOCH epochs (its record's per_epoch), the mean over its replicates (or replicate
REPLICATE's alone), as CSV (index, epoch, top1, model_mb): what bench/search_replay --rungs
replays as the results of an asha rung at that epoch (multi-fidelity bo, issue #36). With
EPOCH = the schedule's last (and a REPLICATE), it is a table of full results search_replay
reads too (columns index, top1, model_mb). Reads DIR/candidates/*.json; standard library
only."""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: rung_table.py SWEEP_DIR EPOCH [REPLICATE]")
    d, epoch = sys.argv[1], int(sys.argv[2])
    only = int(sys.argv[3]) if len(sys.argv) == 4 else None
    by, mb = {}, {}
    for f in sorted(glob.glob(os.path.join(d, "candidates", "*.json"))):
        r = json.load(open(f))
        if r.get("status") != "done" or (only is not None and (r.get("replicate") or 0) != only):
            continue
        ep = [e for e in r.get("per_epoch", []) if e.get("epoch") == epoch]
        if not ep or ep[0].get("top1") is None:
            sys.exit("%s: no top-1 at epoch %d" % (f, epoch))
        by.setdefault(r["index"], []).append(ep[0]["top1"])
        mb[r["index"]] = r["model_mb"]
    print("index,epoch,top1,model_mb")
    for k in sorted(by):
        v = by[k]
        print("%d,%d,%.9g,%.9g" % (k, epoch, sum(v) / len(v), mb[k]))


if __name__ == "__main__":
    main()
