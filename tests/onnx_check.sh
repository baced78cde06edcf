#!/bin/sh
# onnx_check.sh ARGS...: run tests/onnx_check.py with the first Python that has ONNX
# (DSE_PYTHON, python3, /usr/bin/python3); exit 77 (skipped) saying why when none has.
here=$(dirname "$0")
for py in "${DSE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] || continue
    if "$py" -c 'import onnx, numpy' 2>/dev/null; then
        exec "$py" "$here/onnx_check.py" "$@"
    fi
done
echo "skipped: no python3 with the onnx module (Debian's python3-onnx; .ci/run installs it)"
exit 77
