"""onnx_zoo.py: torchvision's classification zoo through ONNX into `dse analyze` (issue #34
items 2 and 4). Run by bench/onnx_zoo.sh in the PyTorch venv (bench/torch_venv.sh with
torchvision, fvcore, onnx and onnxscript added); not a test, nothing here runs in CI.

Each model is built with random weights (weights=None: nothing is downloaded), in eval mode,
its parameters and buffers nudged by a little noise so that no two tensors are equal (the
exporter writes equal initializers once, behind Identity nodes: torchvision's constant batch
norm and zero bias inits would be shared and counted once by any reader), exported at
224x224 with the legacy (TorchScript) exporter, dynamo=False, opset 17, batch norm kept as
BatchNormalization (training=PRESERVE: the EVAL mode folds it into the conv before it, which
changes the parameter count), then analyzed with `dse analyze MODEL.onnx --format json
--expand`.

What is compared, like with like:
- params: PyTorch's parameters (weights and biases; batch norm's scale and shift, not its
  running mean and variance) against dse's `totals.params`; equal or not (params_ok).
- MACs: conv and fc multiply-adds only, the one thing the three counters agree to count.
  dse's `totals.macs` is conv + fc (docs/conventions.md). fvcore counts one multiply-add as
  one "flop" for conv, linear and matmul, and by default also batch norm (1 or 2 per value),
  adaptive average pooling (1 per input value) and upsampling: those are left out of
  macs_fvcore (conv, linear, addmm, matmul, mm, bmm, einsum only) and shown as
  fvcore_other. torchvision's card (`_ops` of the weights enum's meta, in GFLOPS) is the
  same conv + fc multiply-add count as macs_fvcore (one multiply-add = one "flop"), rounded
  to 3 decimals: gflops_card. macs_err_pct is dse against macs_fvcore; macs_ok is 1 within
  1%. card_err_pct is dse against the card (its rounding alone is up to 0.5 MMAC),
  card_vs_fvcore_pct the card against macs_fvcore (within that rounding for the whole zoo
  with torchvision 0.29: the card is conv + fc; fvcore's default total is not).

Output, one line per model:
  name=<model> params_torch=.. params_dse=.. macs_fvcore=.. macs_dse=.. gflops_card=..
      macs_err_pct=.. params_ok=0|1 macs_ok=0|1 params_card=.. card_err_pct=..
      card_vs_fvcore_pct=.. fvcore_other=..
or, where dse refuses the file: name=<model> params_torch=.. macs_fvcore=.. gflops_card=..
      card_vs_fvcore_pct=.. fvcore_other=.. status=refused reason="..."
and `name=<model>.ops` (the file's op types and counts); at the end, per exporter,
  name=zoo.legacy models=.. ok=.. differs=.. refused=.. export_failed=.. not_ok=<models>
(ok: params equal and MACs within 1%). With --layers, or where MACs differ
by more than 1%, `name=<model>.layer module=.. macs_fvcore=.. macs_dse=..` for each module
whose conv + fc MACs differ. With --dynamo each model is exported a second time by the
dynamo exporter (<model>.dynamo.onnx) and analyzed too: `name=<model>.dynamo ...`.
"""
import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter

import torch
import torchvision
from torchvision import models

ZOO = ["squeezenet1_0", "squeezenet1_1", "alexnet", "vgg16", "resnet18", "resnet50",
       "mobilenet_v2", "mobilenet_v3_large", "shufflenet_v2_x1_0", "efficientnet_b0",
       "densenet121", "googlenet", "regnet_y_400mf"]
# Model arguments where the default with weights=None differs from the card's model:
# GoogLeNet's auxiliary classifiers are dropped when its weights load (the card's
# num_params has none) and run only in training; the exporter would leave them out.
KWARGS = {"googlenet": {"aux_logits": False, "init_weights": True}}
MAC_OPS = {"conv", "linear", "addmm", "matmul", "mm", "bmm", "einsum"}


def build(name):
    torch.manual_seed(0)
    m = models.get_model(name, weights=None, **KWARGS.get(name, {})).eval()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            if t.is_floating_point():
                t.add_(0.01 * torch.rand(t.shape, generator=g) + 0.001)
    return m


def export(m, path, dynamo):
    x = torch.randn(1, 3, 224, 224)
    tmp = path + ".tmp"
    # the dynamo exporter reports progress on standard output, kept for the key=value lines
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        if dynamo:
            torch.onnx.export(m, (x,), tmp, dynamo=True, opset_version=18,
                              input_names=["input"], output_names=["output"],
                              external_data=False)
        else:
            torch.onnx.export(m, (x,), tmp, dynamo=False, opset_version=17,
                              training=torch.onnx.TrainingMode.PRESERVE,
                              input_names=["input"], output_names=["output"])
    os.replace(tmp, path)


def fvcore_counts(m):
    """conv + fc MACs, the other ops' count, and each module's own conv + fc MACs."""
    from fvcore.nn import FlopCountAnalysis
    x = torch.randn(1, 3, 224, 224)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fca = FlopCountAnalysis(m, x).unsupported_ops_warnings(False).uncalled_modules_warnings(False)
        by_op = fca.by_operator()
        by_mod_op = fca.by_module_and_operator()
    macs = sum(v for k, v in by_op.items() if k in MAC_OPS)
    other = sum(v for k, v in by_op.items() if k not in MAC_OPS)
    total = {k: sum(v for o, v in ops.items() if o in MAC_OPS) for k, ops in by_mod_op.items()}
    own = dict(total)  # a module's count less its direct children's
    for k, v in total.items():
        if k:
            parent = k.rsplit(".", 1)[0] if "." in k else ""
            # fvcore names children by dotted path: features.0's parent is features
            if parent in own:
                own[parent] -= v
    return macs, other, own


def card(name):
    try:
        meta = models.get_model_weights(name).DEFAULT.meta
        return meta.get("_ops"), meta.get("num_params")
    except (ValueError, AttributeError, KeyError):
        return None, None


def module_of(node_name):
    """The legacy exporter names a node /scope/.../OpType(_N), each scope a module's name in
    its parent (conv1) or that name qualified from an ancestor's (layer1 -> layer1.0,
    downsample -> downsample.0, features -> features.0 -> features.0.0): the module is the
    scopes joined, a qualified one overlapping the path's end (layer2.0.downsample.0); a node
    of the top module's forward has none."""
    path = []
    for part in node_name.strip("/").split("/")[:-1]:
        comps = part.split(".")
        k = len(path)
        if len(comps) > 1:  # the longest end of the path that the qualified name starts with
            k = next(i for i in range(len(path) + 1) if comps[:len(path) - i] == path[i:])
        path = path[:k] + comps
    return ".".join(path)


def dse_analyze(dse, path):
    r = subprocess.run([dse, "analyze", path, "--format", "json", "--expand"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]
        prefix = "dse: %s: " % path
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
        msg = msg.split("; it reads ")[0]  # the list of read ops is docs/onnx.md's table
        return None, msg.replace('"', "'")
    return json.loads(r.stdout), None


def op_census(path):
    import onnx
    g = onnx.load(path, load_external_data=False).graph
    c = Counter(n.op_type for n in g.node)
    return ",".join("%s:%d" % (k, v) for k, v in sorted(c.items()))


def pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def one(args, name, exporter):
    """Exports, counts and analyzes one model; prints its lines; says ok, differs, refused or failed."""
    m = build(name)
    params_torch = sum(p.numel() for p in m.parameters())
    suffix = ".dynamo" if exporter == "dynamo" else ""
    path = os.path.join(args.out, name + suffix + ".onnx")
    t0 = time.time()
    try:
        export(m, path, exporter == "dynamo")
    except Exception as e:  # an exporter failure is reported, the next model goes on
        reason = (str(e).splitlines() or [type(e).__name__])[0][:200].replace('"', "'")
        print('name=%s%s status=export_failed reason="%s"' % (name, suffix, reason), flush=True)
        return "failed"
    export_s = time.time() - t0
    if args.copy_to and not suffix:
        os.makedirs(args.copy_to, exist_ok=True)
        tmp = os.path.join(args.copy_to, "." + name + ".onnx.tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, os.path.join(args.copy_to, name + ".onnx"))
    print("name=%s%s.ops exporter=%s export_s=%.1f ops=%s" % (name, suffix, exporter, export_s, op_census(path)), flush=True)
    macs_fv, other_fv, own = fvcore_counts(m)
    ops, params_card = card(name)
    head = "name=%s%s params_torch=%d" % (name, suffix, params_torch)
    card_fv = " card_vs_fvcore_pct=%.2f" % pct(ops * 1e9, macs_fv) if ops else ""
    js, err = dse_analyze(args.dse, path)
    if err is not None:
        print('%s macs_fvcore=%d gflops_card=%s%s fvcore_other=%d status=refused reason="%s"'
              % (head, macs_fv, ops, card_fv, other_fv, err), flush=True)
        return "refused"
    params_dse, macs_dse = js["totals"]["params"], js["totals"]["macs"]
    err_pct = pct(macs_dse, macs_fv)
    card_err = pct(macs_dse / 1e9, ops) if ops else float("nan")
    print("%s params_dse=%d macs_fvcore=%d macs_dse=%d gflops_card=%s macs_err_pct=%.3f params_ok=%d macs_ok=%d"
          " params_card=%s card_err_pct=%.2f%s fvcore_other=%d"
          % (head, params_dse, macs_fv, macs_dse, ops, err_pct, params_dse == params_torch,
             abs(err_pct) <= 1.0, params_card, card_err, card_fv, other_fv), flush=True)
    if (args.layers or abs(err_pct) > 1.0) and not suffix:  # dynamo's node names are not module paths
        mine = Counter()
        for layer in js["layers"]:
            mine[module_of(layer["name"])] += layer["macs"]
        for k in sorted(set(mine) | {k for k, v in own.items() if v}):
            if mine.get(k, 0) != own.get(k, 0) or (args.layers and (mine.get(k) or own.get(k))):
                print("name=%s%s.layer module=%s macs_fvcore=%d macs_dse=%d"
                      % (name, suffix, k or "(top)", own.get(k, 0), mine.get(k, 0)), flush=True)
    return "ok" if params_dse == params_torch and abs(err_pct) <= 1.0 else "differs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dse", required=True)
    ap.add_argument("--out", required=True, help="folder of the exported files")
    ap.add_argument("--copy-to", default="", help="also copy each file here as <model>.onnx once exported")
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--layers", action="store_true", help="every module's MACs, not only where they differ")
    ap.add_argument("--dynamo", action="store_true", help="also export with the dynamo exporter")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print("zoo torch=%s torchvision=%s threads=%d dse=%s" % (torch.__version__, torchvision.__version__,
                                                             torch.get_num_threads(), args.dse), flush=True)
    got = {}
    for name in args.models.split(","):
        got[name] = one(args, name, "legacy")
        if args.dynamo:
            got[name + ".dynamo"] = one(args, name, "dynamo")
    for exporter in ["legacy"] + (["dynamo"] if args.dynamo else []):
        mine = {k: v for k, v in got.items() if k.endswith(".dynamo") == (exporter == "dynamo")}
        n = Counter(mine.values())
        print("name=zoo.%s models=%d ok=%d differs=%d refused=%d export_failed=%d not_ok=%s"
              % (exporter, len(mine), n["ok"], n["differs"], n["refused"], n["failed"],
                 ",".join(k for k, v in mine.items() if v != "ok") or "none"), flush=True)


if __name__ == "__main__":
    main()
