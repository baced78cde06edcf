#!/bin/sh
# onnx_zoo.sh: torchvision's classification zoo exported to ONNX and analyzed by dse, beside
# PyTorch's parameter count, fvcore's MACs and torchvision's model cards (issue #34 items 2
# and 4). Not a test and not in CI: it installs from PyPI. No weights are downloaded: every
# model has random weights (weights=None), the cards' figures come with torchvision.
#
# Models: SqueezeNet 1.0 and 1.1, AlexNet, VGG-16, ResNet-18 and 50, MobileNet v2 and v3
# (large), ShuffleNet v2 x1.0, EfficientNet-B0, DenseNet-121, GoogLeNet, RegNetY-400MF, all at
# 224x224, exported one at a time by PyTorch's legacy exporter (dynamo=False, opset 17, batch
# norm kept). What is compared (details in bench/onnx_zoo.py's header): params exactly, and
# MACs as conv + fc multiply-adds only, dse's convention (docs/conventions.md) and the one
# torchvision's cards count; fvcore's batch norm, adaptive pooling and upsampling counts are
# left out of macs_fvcore and shown as fvcore_other.
#
# Prints, one line per model (and the file's ops on a line before it):
#   name=<model> params_torch=... params_dse=... macs_fvcore=... macs_dse=... gflops_card=...
#       macs_err_pct=... params_ok=0|1 macs_ok=0|1 params_card=... card_err_pct=... card_vs_fvcore_pct=... fvcore_other=...
# or, where dse refuses the file, its error: ... status=refused reason="...". Where MACs
# differ by more than 1%, the modules that differ follow (name=<model>.layer module=...). At the
# end: name=zoo.legacy models=13 ok=.. differs=.. refused=.. export_failed=.. not_ok=<models>.
#
# Usage: bench/onnx_zoo.sh [path/to/dse]     (default: build/dse)
# Environment: OUT (the exported files; default build/onnx-zoo), COPY_TO (also copy each file
#   there as <model>.onnx as soon as it is exported), MODELS (comma-separated torchvision
#   names; default the list above), LAYERS=1 (every module's MACs), DYNAMO=1 (also export
#   with the dynamo exporter, opset 18, as <model>.dynamo.onnx, and analyze that too),
#   DSE_TORCH_VENV (bench/torch_venv.sh's). About a minute (DYNAMO=1: 4) once the venv is made.
#   Exit status 2: no dse, or no venv.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dse=${1:-$root/build/dse}
case $dse in /*) ;; *) dse=$(pwd)/$dse ;; esac
[ -x "$dse" ] || { echo "onnx_zoo: no dse at $dse; build it first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
py=$("$root/bench/torch_venv.sh") || { echo "onnx_zoo: bench/torch_venv.sh failed" >&2; exit 2; }
if ! "$py" -c 'import torchvision, fvcore, onnx, onnxscript' >/dev/null 2>&1; then
    # torchvision pinned to the venv's torch, so that torch_venv.sh's reuse check still holds
    have=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])')
    echo "onnx_zoo: adding torchvision, fvcore, onnx and onnxscript to the venv (PyPI, once)" >&2
    "$py" -m pip install -q --disable-pip-version-check torchvision "torch==$have" fvcore onnx onnxscript >&2 ||
        { echo "onnx_zoo: pip install failed" >&2; exit 2; }
fi
echo "machine cores=$(nproc) cpu=\"$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)\"" \
     "loadavg=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
set -- --dse "$dse" --out "${OUT:-$root/build/onnx-zoo}"
[ -n "${COPY_TO:-}" ] && set -- "$@" --copy-to "$COPY_TO"
[ -n "${MODELS:-}" ] && set -- "$@" --models "$MODELS"
[ "${LAYERS:-0}" = 1 ] && set -- "$@" --layers
[ "${DYNAMO:-0}" = 1 ] && set -- "$@" --dynamo
# one model at a time on one thread: the machine is shared
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONWARNINGS=ignore exec nice "$py" "$root/bench/onnx_zoo.py" "$@"
