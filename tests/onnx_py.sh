#!/bin/sh
# onnx_py.sh SCRIPT ARGS...: run tests/SCRIPT (a Python script of the tests) with the first
# Python that has the onnx module and numpy (DSE_PYTHON, python3, /usr/bin/python3); exit 77
# (skipped) saying why when none has. tests/onnx_check.sh and tests/onnx_make.sh call it.
here=$(dirname "$0")
script=$1
shift
for py in "${DSE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] || continue
    if "$py" -c 'import onnx, numpy' 2>/dev/null; then
        exec "$py" "$here/$script" "$@"
    fi
done
echo "skipped: no python3 with the onnx module (Debian's python3-onnx; .ci/run installs it)"
exit 77
