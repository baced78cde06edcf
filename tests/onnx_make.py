"""onnx_make.py OUT: write a small CNN with the onnx package's helpers, in the forms PyTorch's
exporter uses and dse's own does not (opset 17, a symbolic batch, float_data instead of
raw_data, auto_pad SAME_UPPER, a grouped conv, BatchNormalization with epsilon, a Constant
shape for Reshape, MatMul + Add for a Linear). test_prototxt's onnx-helper case reads it
and checks its costs against numbers worked out by hand."""
import sys

import onnx
from onnx import TensorProto, helper


def weight(name, dims):
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [0.01 * (i % 7) for i in range(n)])


nodes = [
    helper.make_node("Conv", ["input", "conv1.w", "conv1.b"], ["c1"], name="/features/conv1/Conv",
                     kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
    helper.make_node("Relu", ["c1"], ["r1"], name="/features/relu1/Relu"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="/features/pool1/MaxPool", kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="/features/conv2/Conv", group=4,
                     pads=[1, 1, 1, 1], dilations=[1, 1], strides=[1, 1]),
    helper.make_node("BatchNormalization", ["c2", "bn.s", "bn.b", "bn.m", "bn.v"], ["b2"],
                     name="/features/bn2/BatchNormalization", epsilon=1e-3),
    helper.make_node("Relu", ["b2"], ["r2"], name=""),  # no name: the layer takes its output's
    helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="/pool/GlobalAveragePool"),
    helper.make_node("Constant", [], ["shape"], name="/Constant",
                     value=helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 16])),
    helper.make_node("Reshape", ["g", "shape"], ["flat"], name="/Reshape"),
    helper.make_node("MatMul", ["flat", "fc.w"], ["mm"], name="/fc/MatMul"),
    helper.make_node("Add", ["mm", "fc.b"], ["logits"], name="/fc/Add"),
    helper.make_node("Softmax", ["logits"], ["prob"], name="/Softmax"),
]
inits = [weight("conv1.w", [16, 3, 3, 3]), weight("conv1.b", [16]), weight("conv2.w", [16, 4, 3, 3]),
         weight("conv2.b", [16]), weight("bn.s", [16]), weight("bn.b", [16]), weight("bn.m", [16]),
         weight("bn.v", [16]), weight("fc.w", [16, 10]), weight("fc.b", [10])]
graph = helper.make_graph(nodes, "helper_net",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
