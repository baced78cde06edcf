#!/usr/bin/env python3
"""onnx_graphs.py DIR: write DIR/split4.onnx, DIR/tied.onnx and DIR/dupname.onnx, three
small graphs for the ONNX reader's tables (netfile/onnx_read.c: make_room, finish, the
names' table; golden analyze_onnx_split4, analyze_onnx_tied, err_onnx_dupname). Made with
the onnx package's helpers (Debian's python3-onnx); the files are checked in, made once.
split4: one Split node of 8 channels into 4 slices: 4 layers from 1 node (the reader's
per-layer tables were sized by the nodes and overran). tied: two 1x1 Convs 3->3 reading
the same weight and bias (12 params, counted once: the second conv's shared is 3).
dupname: two Relus named 'r', the second's output also 'r': refused as a .cfg would be."""
import os
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper
import numpy as np


def save(nodes, inputs, outputs, inits, name, path):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnx_graphs.py")
    m.ir_version = 7
    onnx.save(m, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/onnx"
    f = TensorProto.FLOAT
    x8 = helper.make_tensor_value_info("x", f, [1, 8, 4, 4])
    ys = [helper.make_tensor_value_info("y%d" % i, f, [1, 2, 4, 4]) for i in range(4)]
    save([helper.make_node("Split", ["x"], ["y0", "y1", "y2", "y3"], name="s", axis=1)], [x8], ys, [],
         "split4", os.path.join(out, "split4.onnx"))

    x3 = helper.make_tensor_value_info("x", f, [1, 3, 4, 4])
    b = helper.make_tensor_value_info("b", f, [1, 3, 4, 4])
    w = numpy_helper.from_array(np.ones((3, 3, 1, 1), np.float32), "w")
    bias = numpy_helper.from_array(np.zeros(3, np.float32), "bias")
    save([helper.make_node("Conv", ["x", "w", "bias"], ["a"], name="a", kernel_shape=[1, 1]),
          helper.make_node("Conv", ["a", "w", "bias"], ["b"], name="b", kernel_shape=[1, 1])],
         [x3], [b], [w, bias], "tied", os.path.join(out, "tied.onnx"))

    r = helper.make_tensor_value_info("r", f, [1, 3, 4, 4])
    save([helper.make_node("Relu", ["x"], ["y"], name="r"), helper.make_node("Relu", ["y"], ["r"], name="r")],
         [x3], [r], [], "dupname", os.path.join(out, "dupname.onnx"))


if __name__ == "__main__":
    main()
