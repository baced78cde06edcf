#!/bin/sh
# onnx_check.sh ARGS...: tests/onnx_check.py ARGS with a Python that has ONNX (tests/onnx_py.sh;
# exit 77, skipped, where none has).
exec sh "$(dirname "$0")/onnx_py.sh" onnx_check.py "$@"
