"""onnx_idx_eval.py: an exported ONNX model run by onnxruntime over an IDX test split
(Fashion-MNIST, MNIST), fed as the model expects (pixel / 255; the model normalizes).

usage: onnx_idx_eval.py MODEL.onnx IMAGES.idx[.gz] LABELS.idx[.gz] N [SHOW]

Prints `name=onnx_idx_eval images=N top1=...` and, for the first SHOW images (default 0), one
line each: index, label, top-1 class, its probability; test_sweep's sweep-export compares
these with the sweep's recorded top-1 and with `dse predict DATA:test:i`.
"""
import gzip
import sys

import numpy as np
import onnxruntime as ort


def idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    model, images, labels, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    show = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    x = idx(images)[:n].astype(np.float32)[:, None, :, :] / 255.0
    y = idx(labels)[:n]
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    (p,) = sess.run(["prob"], {"data": x})
    top = np.argmax(p, 1)
    print(f"name=onnx_idx_eval model={model} images={n} top1={float(np.mean(top == y)):.6f}")
    for i in range(show):
        print(f"{i} label={int(y[i])} top1={int(top[i])} p={float(p[i, top[i]]):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
