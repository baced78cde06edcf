#!/bin/sh
# torch_venv.sh: current PyTorch from PyPI in a virtual environment of its own, for the CPU
# comparison (bench/compare_pytorch.sh, issue #19), with optuna and scipy for the search
# benchmark's yardsticks (bench/optuna_replay.py: GPSampler needs torch and scipy; issue #36).
# Made on first use, reused after (optuna added to an older one); never used by the tests. Prints the environment's python on standard output; progress on
# standard error.
#
# Environment: DSE_TORCH_VENV (default ~/.cache/dse/torch-venv), TORCH_VERSION (default:
#   the newest on PyPI), PYTHON (the interpreter that makes the venv; default python3).
#   The PyPI wheel for Linux is the CUDA build (about 3 GB with its nvidia-* packages); it
#   runs on a CPU-only machine too.
set -eu
venv=${DSE_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/dse/torch-venv}
want=${TORCH_VERSION:-}
py=$venv/bin/python
if [ -x "$py" ] && "$py" -c 'import torch' >/dev/null 2>&1; then
    have=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])')
    if [ -z "$want" ] || [ "$want" = "$have" ]; then
        "$py" -c 'import optuna, scipy' >/dev/null 2>&1 ||
            "$venv/bin/pip" install -q --disable-pip-version-check optuna scipy >&2
        echo "$py"
        exit 0
    fi
fi
echo "torch_venv: making $venv with torch${want:+==$want} from PyPI (a few GB, once)" >&2
"${PYTHON:-python3}" -m venv "$venv" >&2
"$venv/bin/pip" install -q --disable-pip-version-check "torch${want:+==$want}" numpy optuna scipy >&2
"$py" -c 'import torch' >&2
echo "$py"
