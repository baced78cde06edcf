#!/bin/sh
# onnx_make.sh OUT [KIND]: tests/onnx_make.py OUT [KIND] with a Python that has ONNX
# (tests/onnx_py.sh; exit 77, skipped, where none has).
exec sh "$(dirname "$0")/onnx_py.sh" onnx_make.py "$@"
