#!/bin/sh
# onnx_import_check.sh [BUILD] [ZOO] [MODEL...]: every importable torchvision export of the zoo
# (bench/onnx_zoo.sh made ZOO, default /work/zoo) imported with dse import's code
# (BUILD/onnx_import_check: dse_import_onnx_run), run in dse's engine in eval mode on N random
# images (IMAGES, default 8; 4 for resnet50 and vgg16) and in onnxruntime (DSE_PYTHON, default
# the torch venv of bench/torch_venv.sh, with onnxruntime). The models end in a Gemm (logits):
# both logits and softmax probabilities are compared (softmax of ORT's logits in float64).
# One line per model:
#   name=import.MODEL images=N top1_same=N/N max_abs_err_logits=... max_rel_err_logits=...
#        max_abs_err=... max_rel_err=... max_abs_err_t=... max_rel_err_t=... pmax_t=... tol=...
#        top1_margin_median=... logit_absmax=... ok=0|1
# max_*_err: probabilities (dse's own softmax beside the softmax of ORT's logits, float64), relative over those
# >= 1e-3; _logits: relative to the image's largest |logit|; _t: softmax(logits / T) on both sides,
# T = the image's std of ORT's logits (random weights give logits of 1e4..1e15: plain softmax is
# one-hot), relative over all classes; pmax_t: the largest such probability.
# ok: every probability (plain and _t) within TOL (default 1e-5) relative plus 1e-7 absolute, top-1 the same.
# Then name=import.total models=M ok=K. Not a test (docs/conventions.md#benchmarks).
build=${1:-build}
zoo=${2:-/work/zoo}
[ $# -gt 2 ] && shift 2 || set --
models=${*:-"squeezenet1_0 squeezenet1_1 alexnet resnet18 googlenet densenet121 resnet50 vgg16"}
py=${DSE_PYTHON:-$HOME/.cache/dse/torch-venv/bin/python}
tol=${TOL:-1e-5}
"$py" -c 'import onnxruntime' 2>/dev/null || {
    echo "skipped: $py has no onnxruntime ($py -m pip install onnxruntime)"; exit 77; }
work=$(mktemp -d /tmp/dse_impcheck.XXXXXX)
trap 'rm -rf "$work"' EXIT
total=0 good=0
for m in $models; do
    n=${IMAGES:-8}
    case $m in resnet50|vgg16) n=${IMAGES:-4} ;; esac
    mkdir -p "$work/$m"
    if ! nice "$build/onnx_import_check" "$zoo/$m.onnx" "$work/$m" --images "$n" >"$work/$m/log" 2>&1; then
        echo "name=import.$m ok=0 error=$(tail -1 "$work/$m/log")"
        total=$((total + 1)); continue
    fi
    line=$("$py" - "$zoo/$m.onnx" "$work/$m" "$n" "$tol" "$m" <<'PY'
import sys
import numpy as np
import onnxruntime as ort
path, d, n, tol, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
inp = sess.get_inputs()[0]
x = np.fromfile(f"{d}/inputs.f32", dtype=np.float32).reshape([n] + list(inp.shape[1:]))
# the zoo's exports have a fixed batch of 1: one run per image
got = np.concatenate([sess.run(None, {inp.name: x[i:i + 1]})[0].reshape(1, -1) for i in range(n)]).astype(np.float64)
logits = np.fromfile(f"{d}/logits.f32", dtype=np.float32).reshape(n, -1)
probs = np.fromfile(f"{d}/probs.f32", dtype=np.float32).reshape(n, -1)
e = np.exp(got - got.max(1, keepdims=True))
p = e / e.sum(1, keepdims=True)
el = np.abs(got - logits)
rel_l = float(np.max(el / np.abs(got).max(1, keepdims=True)))
ep = np.abs(p - probs)
big = probs >= 1e-3
rel_p = float(np.max(ep[big] / probs[big])) if big.any() else 0.0
over = float(np.max(ep / (tol * np.abs(p) + 1e-7)))
# random weights with BN statistics 0/1 make logits of 1e4..1e15: the softmax is one-hot on
# both sides. Also compared: the softmax of logits / T on both sides, T = the image's standard
# deviation of ORT's logits (probabilities spread over the classes)
t = got.std(1, keepdims=True)
def soft(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)
pt, qt = soft(got / t), soft(logits.astype(np.float64) / t)
et = np.abs(pt - qt)
over = max(over, float(np.max(et / (tol * pt + 1e-7))))
same = int(np.sum(np.argmax(got, 1) == np.argmax(logits, 1)))
spread = float(np.median(got.max(1) - np.sort(got, 1)[:, -2]))
ok = over <= 1.0 and same == n
line = (f"name=import.{name} images={n} top1_same={same}/{n} max_abs_err_logits={float(el.max()):.3g} "
      f"max_rel_err_logits={rel_l:.3g} max_abs_err={float(ep.max()):.3g} max_rel_err={rel_p:.3g} "
      f"max_abs_err_t={float(et.max()):.3g} max_rel_err_t={float(np.max(et / pt)):.3g} pmax_t={float(pt.max()):.3g} "
        f"tol={tol:g} top1_margin_median={spread:.3g} logit_absmax={float(np.abs(got).max()):.3g} ok={int(ok)}")
print(line)
PY
)
    echo "$line"
    total=$((total + 1))
    case $line in *ok=1*) good=$((good + 1)) ;; esac
done
echo "name=import.total models=$total ok=$good"
