"""onnx_check.py: an ONNX file dse exported, checked by ONNX's own checker and run in
onnxruntime beside dse's own inference (test_engine_export, issue #14 item 4).

usage: onnx_check.py MODEL.onnx INPUTS.f32 PROBS.f32 N

INPUTS.f32: N images as float32 [N, C, H, W] (what the ONNX model takes: pixel / 255 when the
model normalizes); PROBS.f32: dse's probabilities for them, float32 [N, K]. Prints one
`name=onnx_ort ...` line; exits 0 when every probability agrees within 1e-4 relative (plus
1e-7 absolute, for probabilities near zero) and top-1 is the same for every image, 1 when not,
77 (skipped) when onnxruntime is missing (the checker still ran).
"""
import sys

import numpy as np
import onnx


def main():
    path, inputs, probs, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
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
    over = float(np.max(err / (1e-4 * np.abs(want) + 1e-7)))  # <= 1: within tolerance
    big = np.abs(want) >= 1e-3
    rel = float(np.max(err[big] / np.abs(want[big]))) if big.any() else 0.0
    same = int(np.sum(np.argmax(got, 1) == np.argmax(want, 1)))
    ok = over <= 1.0 and same == n
    print(f"name=onnx_ort model={path} images={n} classes={want.shape[1]} max_rel_err={rel:.3g} "
          f"max_abs_err={float(err.max()):.3g} err_over_tolerance={over:.3g} top1_same={same}/{n} ok={int(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
