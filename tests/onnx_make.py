"""onnx_make.py OUT [KIND]: write a small CNN with the onnx package's helpers, in the forms PyTorch's
exporter uses and dse's own does not (opset 17, a symbolic batch, float_data instead of
raw_data, auto_pad SAME_UPPER, a grouped conv, BatchNormalization with epsilon, a Constant
shape for Reshape, MatMul + Add for a Linear). test_prototxt's onnx-helper case reads it
and checks its costs against numbers worked out by hand. KIND (test_prototxt's onnx-ops)
writes another model instead: "ops" the ops of MobileNet v3, ShuffleNet v2 and
EfficientNet at opset 14, "old" those whose inputs were attributes at opset 9, "new" the
opset 21 forms, "unknown" a model with an op dse does not read (Erf)."""
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
KINDS = {}


def kind(fn):
    KINDS[fn.__name__] = fn
    return fn


def ints(name, vals):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


def floats(name, vals, dims=None):
    return helper.make_tensor(name, TensorProto.FLOAT, dims if dims is not None else [len(vals)], vals)


@kind
def ops():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("LeakyRelu", ["c1"], ["lr"], name="lr", alpha=0.1),
        n("PRelu", ["lr", "pr.slope"], ["pr"], name="pr"),
        n("Clip", ["pr", "zero", "six"], ["clip"], name="clip"),
        n("HardSwish", ["clip"], ["hs"], name="hs"),
        n("ReduceMean", ["hs"], ["se.pool"], name="se.pool", axes=[2, 3], keepdims=1),
        n("Conv", ["se.pool", "fc1.w", "fc1.b"], ["se.fc1"], name="se.fc1"),
        n("Relu", ["se.fc1"], ["se.relu"], name="se.relu"),
        n("Conv", ["se.relu", "fc2.w", "fc2.b"], ["se.fc2"], name="se.fc2"),
        n("HardSigmoid", ["se.fc2"], ["se.gate"], name="se.gate"),
        n("Mul", ["hs", "se.gate"], ["se"], name="se.mul"),
        n("Sigmoid", ["se"], ["sig"], name="sig"),
        n("Mul", ["se", "sig"], ["silu"], name="silu"),
        n("Split", ["silu", "halves"], ["a", "b"], name="split", axis=1),
        n("Slice", ["silu", "s.starts", "s.ends", "s.axes"], ["mid"], name="mid"),
        n("Concat", ["b", "mid"], ["cat"], name="cat", axis=1),
        n("Reshape", ["cat", "shape5"], ["cat5"], name="r5"),
        n("Transpose", ["cat5"], ["t5"], name="shuffle", perm=[0, 2, 1, 3, 4]),
        n("Reshape", ["t5", "shape4"], ["sh"], name="r4"),
        n("Resize", ["sh", "", "scales"], ["up"], name="up", mode="nearest"),
        n("ConvTranspose", ["up", "dc.w", "dc.b"], ["dc"], name="dc", strides=[2, 2]),
        n("GlobalAveragePool", ["dc"], ["gp"], name="gp"),
        n("Squeeze", ["gp", "axes23"], ["sq"], name="sq"),
        n("Gemm", ["sq", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    ]
    inits = [weight("c1.w", [8, 4, 3, 3]), weight("c1.b", [8]), weight("pr.slope", [8, 1, 1]),
             floats("zero", [0.0], []), floats("six", [6.0], []), weight("fc1.w", [2, 8, 1, 1]), weight("fc1.b", [2]),
             weight("fc2.w", [8, 2, 1, 1]), weight("fc2.b", [8]), ints("halves", [4, 4]), ints("s.starts", [2]),
             ints("s.ends", [6]), ints("s.axes", [1]), ints("shape5", [1, 2, 4, 8, 8]), ints("shape4", [1, -1, 8, 8]),
             floats("scales", [1, 1, 2, 2]), weight("dc.w", [8, 4, 2, 2]), weight("dc.b", [4]), ints("axes23", [2, 3]),
             weight("fc.w", [10, 4]), weight("fc.b", [10])]
    return nodes, inits, 14, [1, 4, 8, 8], [1, 10]


@kind
def old():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w"], ["c1"], name="c1", kernel_shape=[1, 1]),
        n("Clip", ["c1"], ["clip"], name="clip", min=0.0, max=6.0),
        n("Slice", ["clip"], ["sl"], name="sl", starts=[0], ends=[6], axes=[1]),
        n("Split", ["sl"], ["s0", "s1"], name="split", axis=1, split=[2, 4]),
        n("Upsample", ["s1", "scales"], ["up"], name="up", mode="linear"),
        n("ReduceMean", ["up"], ["rm"], name="rm", axes=[2, 3], keepdims=0),
        n("Gemm", ["rm", "fc.w", "fc.b"], ["fc"], name="fc", transB=1),
        n("ReduceMean", ["s0"], ["rm2"], name="rm2", axes=[-2, -1]),
        n("Squeeze", ["rm2"], ["sq"], name="sq", axes=[2, 3]),
        n("Concat", ["fc", "sq"], ["out"], name="cat", axis=1),
    ]
    inits = [weight("c1.w", [8, 4, 1, 1]), floats("scales", [1, 1, 2, 2]), weight("fc.w", [3, 4]), weight("fc.b", [3])]
    return nodes, inits, 9, [1, 4, 8, 8], [1, 5]


@kind
def new():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="c1"),
        n("Clip", ["c1", "zero"], ["clip"], name="clip"),
        n("Shape", ["clip"], ["shp"], name="shp"),  # x.chunk()'s arithmetic, as PyTorch writes it
        n("Gather", ["shp", "one"], ["ch"], name="ch", axis=0),
        n("Div", ["ch", "two"], ["half"], name="half"),
        n("Mul", ["half", "one_vec"], ["half_vec"], name="half_vec"),
        n("Slice", ["clip", "zero_vec", "half_vec", "one_vec"], ["sl"], name="sl"),
        n("Split", ["clip"], ["s0", "s1"], name="split", axis=1, num_outputs=2),
        n("ReduceMean", ["s0", "axes23"], ["rm"], name="rm", keepdims=1),
        n("Squeeze", ["rm", "axes_neg"], ["sq"], name="sq"),
        n("Unsqueeze", ["sq", "axes23"], ["un"], name="un"),
        n("Mul", ["s1", "un"], ["mul"], name="mul"),
        n("Resize", ["mul", "", "", "sizes"], ["down"], name="down", mode="linear"),
    ]
    inits = [weight("c1.w", [8, 4, 1, 1]), weight("c1.b", [8]), floats("zero", [0.0], []), ints("axes23", [2, 3]),
             ints("axes_neg", [-1, -2]), ints("sizes", [1, 4, 4, 4]), helper.make_tensor("one", TensorProto.INT64, [], [1]),
             helper.make_tensor("two", TensorProto.INT64, [], [2]), ints("one_vec", [1]), ints("zero_vec", [0])]
    return nodes, inits, 21, [1, 4, 8, 8], [1, 4, 4, 4]


@kind
def unknown():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        n("Erf", ["c1"], ["erf"], name="erf"),
        n("Relu", ["erf"], ["relu"], name="relu"),
        n("GlobalAveragePool", ["relu"], ["gp"], name="gp"),
        n("Flatten", ["gp"], ["flat"], name="flat"),
        n("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    ]
    inits = [weight("c1.w", [4, 3, 3, 3]), weight("c1.b", [4]), weight("fc.w", [2, 4]), weight("fc.b", [2])]
    return nodes, inits, 13, [1, 3, 8, 8], [1, 2]


@kind
def transpose():  # a Transpose that is not a channel shuffle: refused
    n = helper.make_node
    nodes = [n("Conv", ["x", "c1.w"], ["c1"], name="c1"), n("Transpose", ["c1"], ["t"], name="t", perm=[0, 1, 3, 2])]
    return nodes, [weight("c1.w", [8, 4, 1, 1])], 13, [1, 4, 8, 8], [1, 8, 8, 8]


@kind
def mulrow():  # a Mul broadcast over the channels, not per channel: refused
    n = helper.make_node
    nodes = [n("Conv", ["x", "c1.w"], ["c1"], name="c1"), n("Conv", ["x", "c2.w"], ["c2"], name="c2"),
             n("Mul", ["c1", "c2"], ["m"], name="m")]
    return nodes, [weight("c1.w", [8, 4, 1, 1]), weight("c2.w", [1, 4, 1, 1])], 13, [1, 4, 8, 8], [1, 8, 8, 8]



@kind
def shuffleskip():  # an unknown op on a channel shuffle's 5-d value, then its Transpose: refused
    n = helper.make_node
    nodes = [n("Reshape", ["x", "shp"], ["r5"], name="r"), n("Erf", ["r5"], ["e"], name="erf"),
             n("Transpose", ["e"], ["t"], name="tr", perm=[0, 2, 1, 3, 4])]
    return nodes, [ints("shp", [1, 2, 2, 8, 8])], 13, [1, 4, 8, 8], [1, 2, 2, 8, 8]


@kind
def sumslice():  # Sum of two int64 constants (6 + 2) as a Slice's end: all 8 channels
    n = helper.make_node
    nodes = [n("Sum", ["a", "b"], ["e"], name="sum"), n("Slice", ["x", "st", "e", "ax"], ["y"], name="sl")]
    return nodes, [ints("a", [6]), ints("b", [2]), ints("st", [0]), ints("ax", [1])], 13, [1, 8, 4, 4], [1, 8, 4, 4]


@kind
def splitbig():  # a Split whose parts' sizes would overflow a sum: refused by the first
    n = helper.make_node
    big = 2**63 - 1
    return [n("Split", ["x"], ["a", "b", "c"], name="sp", axis=1, split=[big, big, 6])], [], 11, [1, 4, 8, 8], [1, 4, 8, 8]


@kind
def split6():  # a Split into 6: well-formed, past the 4 outputs a node may have in dse
    n = helper.make_node
    outs = ["o%d" % k for k in range(6)]
    return [n("Split", ["x"], outs, name="split6", axis=1)], [], 13, [1, 6, 8, 8], [1, 1, 8, 8]

if len(sys.argv) > 2:
    nodes, inits, opset, shape_in, shape_out = KINDS[sys.argv[2]]()
    graph = helper.make_graph(nodes, sys.argv[2], [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                              [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, shape_out)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 10
    if opset <= 17:  # onnx 1.12 (Debian's) checks up to opset 17
        onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])
    sys.exit(0)

graph = helper.make_graph(nodes, "helper_net",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
