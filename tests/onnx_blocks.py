#!/usr/bin/env python3
"""onnx_blocks.py [OUT]: write tests/onnx/blocks.onnx (or OUT), a small ResNet-like model
whose nodes are named as PyTorch's exporter names them (/layer1/layer1.0/conv1/Conv), for
dse analyze's blocks by name prefix (docs/cli.md, "Blocks"; golden analyze_onnx_blocks*).
Plain Python: it encodes the few ModelProto fields it needs (onnx.proto's field numbers)
itself, so it runs without the onnx package; the file is checked in, made once by this.
Costs by hand: conv1 3->8 3x3 pad 1 on 16x16 (224 params), two BasicBlocks of two 8->8 3x3
convs without bias on 8x8 (4 x 576 params), fc 8->10 (90): 2,618 params."""
import struct
import sys


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def key(field, wire):
    return varint(field << 3 | wire)


def vint(field, v):  # int64 / enum as a varint (wire type 0)
    return key(field, 0) + varint(v)


def lenf(field, data):  # bytes, string or message (wire type 2)
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def attr_i(name, v):  # AttributeProto: name 1, i 3, type 20 (INT = 2)
    return lenf(1, name) + vint(3, v) + vint(20, 2)


def attr_ints(name, vs):  # ints 8 (unpacked, as onnx.proto is proto2), type INTS = 7
    return lenf(1, name) + b"".join(vint(8, v) for v in vs) + vint(20, 7)


def node(name, op, inputs, outputs, attrs=()):  # NodeProto: input 1, output 2, name 3, op_type 4, attribute 5
    return (b"".join(lenf(1, i) for i in inputs) + b"".join(lenf(2, o) for o in outputs) + lenf(3, name)
            + lenf(4, op) + b"".join(lenf(5, a) for a in attrs))


def tensor(name, dims):  # TensorProto: dims 1, data_type 2 (FLOAT = 1), name 8, raw_data 9 (zeros)
    n = 1
    for d in dims:
        n *= d
    return b"".join(vint(1, d) for d in dims) + vint(2, 1) + lenf(8, name) + lenf(9, struct.pack("<%df" % n, *[0.0] * n))


def value_info(name, dims):  # ValueInfoProto: name 1, type 2 -> tensor_type 1 -> elem_type 1, shape 2 -> dim 1
    shape = b"".join(lenf(1, vint(1, d)) for d in dims)
    return lenf(1, name) + lenf(2, lenf(1, vint(1, 1) + lenf(2, shape)))


def main():
    nodes, inits = [], []

    def conv(scope, x, y, cin, cout, bias):
        w = scope[1:].replace("/", ".") + ".weight"
        inits.append(tensor(w, [cout, cin, 3, 3]))
        ins = [x, w]
        if bias:
            inits.append(tensor(w[:-7] + ".bias", [cout]))
            ins.append(w[:-7] + ".bias")
        nodes.append(node(scope + "/Conv", "Conv", ins, [y],
                          [attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1])]))

    conv("/conv1", "x", "c1", 3, 8, True)
    nodes.append(node("/relu/Relu", "Relu", ["c1"], ["r1"]))
    nodes.append(node("/maxpool/MaxPool", "MaxPool", ["r1"], ["p1"],
                      [attr_ints("kernel_shape", [2, 2]), attr_ints("strides", [2, 2])]))
    x = "p1"
    for b in ("layer1.0", "layer1.1"):
        s = "/layer1/" + b
        conv(s + "/conv1", x, s + "/c1", 8, 8, False)
        nodes.append(node(s + "/relu/Relu", "Relu", [s + "/c1"], [s + "/r1"]))
        conv(s + "/conv2", s + "/r1", s + "/c2", 8, 8, False)
        nodes.append(node(s + "/Add", "Add", [s + "/c2", x], [s + "/sum"]))
        nodes.append(node(s + "/relu_1/Relu", "Relu", [s + "/sum"], [s + "/out"]))
        x = s + "/out"
    nodes.append(node("/avgpool/GlobalAveragePool", "GlobalAveragePool", [x], ["gap"]))
    nodes.append(node("/Flatten", "Flatten", ["gap"], ["flat"], [attr_i("axis", 1)]))
    inits.append(tensor("fc.weight", [10, 8]))
    inits.append(tensor("fc.bias", [10]))
    nodes.append(node("/fc/Gemm", "Gemm", ["flat", "fc.weight", "fc.bias"], ["y"], [attr_i("transB", 1)]))

    # GraphProto: node 1, name 2, initializer 5, input 11, output 12
    graph = (b"".join(lenf(1, n) for n in nodes) + lenf(2, "blocks") + b"".join(lenf(5, t) for t in inits)
             + lenf(11, value_info("x", [1, 3, 16, 16])) + lenf(12, value_info("y", [1, 10])))
    # ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (domain 1, version 2)
    model = vint(1, 7) + lenf(2, "tests/onnx_blocks.py") + lenf(7, graph) + lenf(8, lenf(1, "") + vint(2, 13))
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/onnx/blocks.onnx"
    with open(out, "wb") as f:
        f.write(model)


main()
