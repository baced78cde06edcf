"""onnx_check.py: an ONNX file dse exported, checked by ONNX's own checker and run in
onnxruntime beside dse's own inference (test_engine_export, issue #14 item 4).

usage: onnx_check.py MODEL.onnx INPUTS.f32 PROBS.f32 N [TOL]
       onnx_check.py --make-pytorch OUT.onnx
       onnx_check.py --make-vgg OUT.onnx
       onnx_check.py --make-views OUT.onnx
       onnx_check.py --make-unrunnable OUT.onnx
       onnx_check.py --make-bad KIND OUT.onnx

INPUTS.f32: N images as float32 [N, C, H, W] (what the ONNX model takes: pixel / 255 when the
model normalizes); PROBS.f32: dse's probabilities for them, float32 [N, K]. Prints one
`name=onnx_ort ...` line; exits 0 when every probability agrees within TOL relative (1e-4 if
not given; plus 1e-7 absolute, for probabilities near zero) and top-1 is the same for every
image, 1 when not, 77 (skipped) when onnxruntime is missing (the checker still ran).

--make-pytorch writes a small network with random weights in the forms PyTorch's exporter
uses (test_engine_export's import-pytorch case imports it with dse import and runs it here).
--make-unrunnable writes tests/onnx/unrunnable.onnx: a network dse analyzes but whose Tanh and
Sigmoid have no engine op, so dse import refuses it naming both (golden err_import_onnx_ops).
--make-bad writes a model whose weights dse import refuses (test_engine_export import-refusals):
KIND double (a float64 weight), external (a weight in an external file), short (float_data
with fewer values than its dims), channels (a Sub normalizing 20 input channels).
"""
import sys

import numpy as np
import onnx


def make_pytorch(out):
    """3x16x16 in, 5 classes: conv + BatchNormalization (epsilon 0.001, as Inception's) + Relu,
    a ResNet basic block (two convs without bias, each with BatchNormalization, Add of the
    block's input, Relu), MaxPool, GlobalAveragePool, Flatten, Gemm transB=1 (Linear), Relu,
    MatMul + Add (a Linear written so), Softmax; opset 17, a symbolic batch, raw_data
    (float_data for one tensor)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(34)
    inits = []

    def w(name, *dims, positive=False, raw=True):
        a = rng.uniform(0.5, 1.5, dims) if positive else rng.normal(0.0, 0.3, dims)
        a = a.astype(np.float32)
        inits.append(numpy_helper.from_array(a, name) if raw else
                     helper.make_tensor(name, TensorProto.FLOAT, list(dims), a.flatten().tolist()))
        return name

    def bn(name, c):
        return [w(f"{name}.weight", c, positive=True), w(f"{name}.bias", c), w(f"{name}.running_mean", c),
                w(f"{name}.running_var", c, positive=True)]

    N = helper.make_node
    nodes = [
        N("Conv", ["data", w("conv1.weight", 8, 3, 3, 3), w("conv1.bias", 8, raw=False)], ["c1"],
          name="/conv1/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["c1"] + bn("bn1", 8), ["b1"], name="/bn1/BatchNormalization", epsilon=1e-3),
        N("Relu", ["b1"], ["r1"], name="/relu/Relu"),
        N("Conv", ["r1", w("layer1.0.conv1.weight", 8, 8, 3, 3)], ["l1c1"], name="/layer1/layer1.0/conv1/Conv",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["l1c1"] + bn("layer1.0.bn1", 8), ["l1b1"],
          name="/layer1/layer1.0/bn1/BatchNormalization"),
        N("Relu", ["l1b1"], ["l1r1"], name="/layer1/layer1.0/relu/Relu"),
        N("Conv", ["l1r1", w("layer1.0.conv2.weight", 8, 8, 3, 3)], ["l1c2"], name="/layer1/layer1.0/conv2/Conv",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["l1c2"] + bn("layer1.0.bn2", 8), ["l1b2"],
          name="/layer1/layer1.0/bn2/BatchNormalization"),
        N("Add", ["l1b2", "r1"], ["l1a"], name="/layer1/layer1.0/Add"),
        N("Relu", ["l1a"], ["l1r"], name="/layer1/layer1.0/relu_1/Relu"),
        N("MaxPool", ["l1r"], ["p"], name="/maxpool/MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
        N("GlobalAveragePool", ["p"], ["g"], name="/avgpool/GlobalAveragePool"),
        N("Flatten", ["g"], ["f"], name="/Flatten", axis=1),
        N("Gemm", ["f", w("fc1.weight", 16, 8), w("fc1.bias", 16)], ["h"], name="/fc1/Gemm", transB=1,
          alpha=1.0, beta=1.0),
        N("Relu", ["h"], ["hr"], name="/relu_fc/Relu"),
        N("MatMul", ["hr", w("fc2.weight_t", 16, 5)], ["mm"], name="/fc2/MatMul"),
        N("Add", ["mm", w("fc2.bias", 5)], ["logits"], name="/fc2/Add"),
        N("Softmax", ["logits"], ["prob"], name="/Softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "pytorch_forms",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 3, 16, 16])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)
    return 0


def make_vgg(out):
    """3x12x12 in, 5 classes, as VGG and AlexNet end: conv + Relu, MaxPool to 8x6x6, Flatten of
    the 6x6 map (not 1x1: fc6 reads 288 inputs), Gemm transB=1 + Relu (fc6), Gemm (fc7, no
    bias), Softmax; opset 13."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(342)
    inits = []

    def w(name, *dims):
        inits.append(numpy_helper.from_array(rng.normal(0.0, 0.3, dims).astype(np.float32), name))
        return name

    N = helper.make_node
    nodes = [
        N("Conv", ["data", w("conv1.weight", 8, 3, 3, 3), w("conv1.bias", 8)], ["c1"], name="conv1",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Relu", ["c1"], ["r1"], name="relu1"),
        N("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        N("Flatten", ["p1"], ["f"], name="flatten", axis=1),
        N("Gemm", ["f", w("fc6.weight", 16, 8 * 6 * 6), w("fc6.bias", 16)], ["z6"], name="fc6", transB=1),
        N("Relu", ["z6"], ["r6"], name="relu6"),
        N("Gemm", ["r6", w("fc7.weight", 5, 16)], ["z7"], name="fc7", transB=1),
        N("Softmax", ["z7"], ["prob"], name="prob", axis=1),
    ]
    graph = helper.make_graph(nodes, "vgg_forms",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 3, 12, 12])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)
    return 0


def make_views(out):
    """3x8x8 in, 6 classes, the ops a .cfg holds as flatten, reshape and slice layers: conv,
    Split in two equal parts (slice part/parts), a conv of the second part, Concat, Slice of
    channels 2 to 7 (slice begin/end), a 4-d Reshape [0, 20, 4, 4] (reshape dims), conv + Relu,
    Flatten, Gemm, Softmax; opset 13."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(343)
    inits = []

    def w(name, *dims):
        inits.append(numpy_helper.from_array(rng.normal(0.0, 0.3, dims).astype(np.float32), name))
        return name

    def i64(name, v):
        inits.append(numpy_helper.from_array(np.array(v, dtype=np.int64), name))
        return name

    N = helper.make_node
    nodes = [
        N("Conv", ["data", w("conv1.weight", 8, 3, 3, 3), w("conv1.bias", 8)], ["c1"], name="conv1",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Split", ["c1"], ["s0", "s1"], name="split", axis=1),
        N("Conv", ["s1", w("conv2.weight", 4, 4, 1, 1)], ["c2"], name="conv2"),
        N("Concat", ["s0", "c2"], ["cat"], name="cat", axis=1),
        N("Slice", ["cat", i64("starts", [2]), i64("ends", [7]), i64("axes", [1])], ["sl"], name="slice"),
        N("Reshape", ["sl", i64("shape", [0, 20, 4, 4])], ["rs"], name="reshape"),
        N("Conv", ["rs", w("conv3.weight", 4, 20, 1, 1), w("conv3.bias", 4)], ["c3"], name="conv3"),
        N("Relu", ["c3"], ["r3"], name="relu3"),
        N("Flatten", ["r3"], ["f"], name="flatten", axis=1),
        N("Gemm", ["f", w("fc.weight", 6, 4 * 4 * 4), w("fc.bias", 6)], ["z"], name="fc", transB=1),
        N("Softmax", ["z"], ["prob"], name="prob", axis=1),
    ]
    graph = helper.make_graph(nodes, "view_forms",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 3, 8, 8])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)
    return 0


def make_unrunnable(out):
    from onnx import TensorProto, helper
    inits = [helper.make_tensor(name, TensorProto.FLOAT, dims, [0.01 * (i % 5) for i in range(int(np.prod(dims)))])
             for name, dims in (("conv.w", [4, 1, 3, 3]), ("fc.w", [3, 4]), ("fc.b", [3]))]
    N = helper.make_node
    nodes = [N("Conv", ["data", "conv.w"], ["c"], name="conv", kernel_shape=[3, 3]),
             N("Tanh", ["c"], ["n"], name="squash"),
             N("Sigmoid", ["n"], ["s"], name="gate"),
             N("GlobalAveragePool", ["s"], ["g"], name="pool"),
             N("Flatten", ["g"], ["f"], name="flat"),
             N("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
             N("Softmax", ["logits"], ["prob"], name="prob", axis=1)]
    graph = helper.make_graph(nodes, "unrunnable",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 1, 8, 8])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dse tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)
    return 0


def make_bad(kind, out):
    """data [1, C, 8, 8] (Sub of the input) -> Conv 'conv' (weight 'w') -> GlobalAveragePool."""
    from onnx import TensorProto, helper
    c = 20 if kind == "channels" else 1
    n = 2 * c * 9
    if kind == "double":
        w = helper.make_tensor("w", TensorProto.DOUBLE, [2, c, 3, 3], [0.5] * n)
    else:
        w = helper.make_tensor("w", TensorProto.FLOAT, [2, c, 3, 3], [0.5] * n)
    if kind == "short":
        del w.float_data[-1]
    if kind == "external":
        w.ClearField("float_data")
        w.data_location = TensorProto.EXTERNAL
        entry = w.external_data.add()
        entry.key, entry.value = "location", "weights.bin"
    mean = helper.make_tensor("mean", TensorProto.FLOAT, [1, c, 1, 1], [0.5] * c)
    N = helper.make_node
    nodes = [N("Sub", ["data", "mean"], ["x"], name="norm"),
             N("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3]),
             N("GlobalAveragePool", ["c"], ["prob"], name="pool")]
    graph = helper.make_graph(nodes, "bad_" + kind,
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, c, 8, 8])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 2, 1, 1])], [w, mean])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    with open(out, "wb") as f:  # not onnx.save: it would write an external tensor's data
        f.write(model.SerializeToString())
    return 0


def main():
    if sys.argv[1] == "--make-bad":
        return make_bad(sys.argv[2], sys.argv[3])
    if sys.argv[1] == "--make-pytorch":
        return make_pytorch(sys.argv[2])
    if sys.argv[1] == "--make-vgg":
        return make_vgg(sys.argv[2])
    if sys.argv[1] == "--make-views":
        return make_views(sys.argv[2])
    if sys.argv[1] == "--make-unrunnable":
        return make_unrunnable(sys.argv[2])
    path, inputs, probs, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-4
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)  # also infers every shape
    graph = model.graph
    dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim[1:]]
    x = np.fromfile(inputs, dtype=np.float32).reshape([n] + dims)
    want = np.fromfile(probs, dtype=np.float32).reshape(n, -1)
    meta = {p.key: p.value for p in model.metadata_props}
    print(f"{path}: checker ok, opset {model.opset_import[0].version}, {len(graph.node)} nodes, "
          f"{len(graph.initializer)} initializers, metadata: {', '.join(sorted(meta))}")
    try:
        import onnxruntime as ort
    except ImportError as e:
        print(f"skipped: onnxruntime is not installed ({e}); .ci/run installs it with pip")
        return 77
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = sess.run(["prob"], {"data": x})
    if got.shape != want.shape:
        print(f"shape {got.shape}, dse's {want.shape}")
        return 1
    err = np.abs(got.astype(np.float64) - want)
    over = float(np.max(err / (tol * np.abs(want) + 1e-7)))  # <= 1: within tolerance
    big = np.abs(want) >= 1e-3
    rel = float(np.max(err[big] / np.abs(want[big]))) if big.any() else 0.0
    same = int(np.sum(np.argmax(got, 1) == np.argmax(want, 1)))
    ok = over <= 1.0 and same == n
    print(f"name=onnx_ort model={path} images={n} classes={want.shape[1]} max_rel_err={rel:.3g} "
          f"max_abs_err={float(err.max()):.3g} tol={tol:g} err_over_tolerance={over:.3g} top1_same={same}/{n} ok={int(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
