#!/bin/sh
# onnx_make.sh OUT: run tests/onnx_make.py with the first Python that has ONNX (DSE_PYTHON,
# python3, /usr/bin/python3), as tests/onnx_check.sh does; exit 77 (skipped) saying why
# when none has.
here=$(dirname "$0")
for py in "${DSE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] || continue
    if "$py" -c 'import onnx' 2>/dev/null; then
        exec "$py" "$here/onnx_make.py" "$@"
    fi
done
echo "skipped: no python3 with the onnx module (Debian's python3-onnx; .ci/run installs it)"
exit 77
