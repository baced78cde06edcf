#!/usr/bin/env python3
"""pytorch_ref.py: PyTorch reference models of the two networks of issue #4 item 10 (Speed),
timed the way `dse bench` times ours: synthetic inputs, warm-up iterations excluded, median of
N iterations, images per second. Not a test (docs/conventions.md#benchmarks).

  squeezenet_fmnist  28x28x1, conv1 3x3/1 pad 1 with 96 filters, max-pool 3x3/2 (ceil) after
                     conv1, fire4 and fire8, fire2-fire9 with SqueezeNet v1.0's dims, dropout
                     0.5, conv10 1x1 to 10 classes, ReLU, global average pool (727,306 params,
                     as `dse analyze experiments/squeezenet/squeezenet_fmnist.cfg` counts).
  squeezenet_v1.0    227x227x3, conv1 7x7/2 with 96 filters, the same pools (ceil mode, as in
                     Caffe), 1000 classes (1,248,424 params).

One step of --mode train is zero_grad + forward + cross-entropy + backward + SGD step
(momentum 0.9, lr 1e-6 and no weight decay, as `dse bench` uses); --mode infer is a forward
pass under torch.no_grad() in eval mode. Inputs are uniform in [-0.5, 0.5), labels i % classes.

Prints one line per measurement, for example
  name=bench.squeezenet_fmnist impl=pytorch mode=train batch=128 threads=2 iters=10 median_ms=...
  min_ms=... img_per_s=... malloc=stock
(malloc=tuned when GLIBC_TUNABLES is set in the environment). --params prints the parameter
count of the net and exits 1 if it differs from ours.

Usage: pytorch_ref.py --net fmnist|v10 [--mode train|infer] [--batch B] [--threads T]
                      [--iters N] [--warmup W] [--device cpu|cuda[:N]]
                      [--precision fp32|tf32|fp16|bf16|all] [--deterministic] [--algos det|any|both]
                      [--memory-format nchw|nhwc|both] [--params]
On CUDA, cuDNN's benchmark mode is on (its best algorithm per shape) and each step ends with
a device synchronisation, as `bench_cuda` times ours. fp16 and bf16 are PyTorch's automatic
mixed precision (torch.autocast; fp16 with a GradScaler), its recommended 16-bit training;
on a CPU bf16 only (torch.autocast("cpu", dtype=torch.bfloat16): oneDNN's AVX512-BF16 and
AMX kernels where the CPU has them; issue #37), "all" meaning fp32 and bf16 there.
nhwc is channels_last (model and input), which cuDNN's tensor-core kernels prefer and, on a
CPU, oneDNN's blocked kernels (1.3x NCHW's speed here). "all" and "both" measure every
combination in one process (one line each): the caller takes the best memory format per case
(bench/gpu_check.sh, bench/compare_pytorch.sh), PyTorch's best configuration.
Needs a Python with torch: current PyTorch in its own venv (bench/torch_venv.sh) or Debian's
python3-torch (/usr/bin/python3).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

NETS = {
    # key: (name as in the .cfg, input C, H/W, conv1 (filters, kernel, stride, pad), classes,
    #       parameter count of our engine)
    "fmnist": ("squeezenet_fmnist", 1, 28, (96, 3, 1, 1), 10, 727306),
    "v10": ("squeezenet_v1.0", 3, 227, (96, 7, 2, 0), 1000, 1248424),
}

# SqueezeNet v1.0's fire modules: (squeeze, expand1x1, expand3x3) for fire2..fire9.
FIRES = [(16, 64, 64), (16, 64, 64), (32, 128, 128), (32, 128, 128),
         (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256)]


class Fire(nn.Module):
    def __init__(self, cin, s, e1, e3):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, s, 1)
        self.expand1x1 = nn.Conv2d(s, e1, 1)
        self.expand3x3 = nn.Conv2d(s, e3, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.relu(self.squeeze(x))
        return torch.cat([self.relu(self.expand1x1(x)), self.relu(self.expand3x3(x))], 1)


def squeezenet(cin, conv1, classes):
    """conv1, relu, pool1, fire2-4, pool4, fire5-8, pool8, fire9, dropout, conv10, relu, gap."""
    f, k, s, p = conv1
    layers = [nn.Conv2d(cin, f, k, stride=s, padding=p), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, ceil_mode=True)]
    c = f
    for i, (sq, e1, e3) in enumerate(FIRES):
        layers.append(Fire(c, sq, e1, e3))
        c = e1 + e3
        if i + 2 in (4, 8):  # pools after fire4 and fire8
            layers.append(nn.MaxPool2d(3, 2, ceil_mode=True))
    layers += [nn.Dropout(0.5), nn.Conv2d(c, classes, 1), nn.ReLU(inplace=True),
               nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net", choices=sorted(NETS), required=True)
    ap.add_argument("--mode", choices=["train", "infer"], default="train")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N] (cuDNN benchmark mode on)")
    ap.add_argument("--precision", choices=["fp32", "tf32", "fp16", "bf16", "all"], default="fp32",
                    help="on CUDA: fp32 (TF32 off everywhere), tf32 (TF32 in conv and matmul), "
                         "fp16 or bf16 (autocast mixed precision; fp16 with loss scaling), all")
    ap.add_argument("--deterministic", action="store_true",
                    help="on CUDA: torch.backends.cudnn.deterministic (deterministic cuDNN algorithms only)")
    ap.add_argument("--algos", choices=["det", "any", "both"], default=None,
                    help="on CUDA: det (= --deterministic), any (default) or both")
    ap.add_argument("--memory-format", choices=["nchw", "nhwc", "both"], default="nchw",
                    help="nchw (contiguous), nhwc (channels_last: oneDNN's blocked kernels on a CPU, "
                         "tensor cores on CUDA) or both")
    ap.add_argument("--params", action="store_true", help="print the parameter count and exit")
    a = ap.parse_args()
    if a.batch < 1 or a.threads < 1 or a.iters < 1 or a.warmup < 0:
        ap.error("--batch, --threads and --iters must be >= 1, --warmup >= 0")

    name, cin, hw, conv1, classes, ours_params = NETS[a.net]
    torch.manual_seed(1)
    model = squeezenet(cin, conv1, classes)
    n_params = sum(p.numel() for p in model.parameters())
    if a.params:
        same = n_params == ours_params
        print(f"name=params.{name} impl=pytorch params={n_params} ours={ours_params} "
              f"equal={'yes' if same else 'no'}")
        return 0 if same else 1

    torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    precs = (["fp32", "tf32", "fp16", "bf16"] if cuda else ["fp32", "bf16"]) if a.precision == "all" else [a.precision]
    algos = a.algos or ("det" if a.deterministic else "any")
    algos = ["det", "any"] if algos == "both" else [algos]
    fmts = ["nchw", "nhwc"] if a.memory_format == "both" else [a.memory_format]
    if not cuda and (any(p not in ("fp32", "bf16") for p in precs) or algos == ["det"]):
        ap.error("on the CPU --precision is fp32 or bf16 (autocast, oneDNN's bf16 kernels); tf32, fp16 and "
                 "--algos det are CUDA options")
    model = model.to(dev)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    rc = 0
    for prec in precs:
        for alg in algos:
            for fmt in fmts:
                model.load_state_dict(state)
                rc |= run_case(a, name, model, dev, cuda, cin, hw, classes, prec, alg, fmt)
    return rc


def run_case(a, name, model, dev, cuda, cin, hw, classes, prec, alg, fmt):
    """Time one configuration; print its line. 0, or 1 when the loss is not finite."""
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(prec)
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.deterministic = alg == "det"
        tf32 = prec == "tf32"
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
    mf = torch.channels_last if fmt == "nhwc" else torch.contiguous_format
    model = model.to(memory_format=mf)
    sync = (lambda: torch.cuda.synchronize(dev)) if cuda else (lambda: None)
    gen = torch.Generator().manual_seed(7)
    x = (torch.rand(a.batch, cin, hw, hw, generator=gen) - 0.5).to(dev).contiguous(memory_format=mf)
    y = (torch.arange(a.batch) % classes).to(dev)
    autocast = (lambda: torch.autocast(device_type=dev.type, dtype=amp)) if amp is not None else \
        (lambda: torch.autocast(device_type=dev.type, enabled=False))
    times = []
    if a.mode == "train":
        model.train()
        loss_fn = nn.CrossEntropyLoss()
        opt = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9, weight_decay=0.0)
        scaler = torch.amp.GradScaler("cuda") if prec == "fp16" else None
        for i in range(a.warmup + a.iters):
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = loss_fn(model(x), y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            sync()
            t = time.perf_counter() - t0
            if i >= a.warmup:
                times.append(t)
        if not torch.isfinite(loss):
            print(f"pytorch_ref: loss is {loss.item()}", file=sys.stderr)
            return 1
    else:
        model.eval()
        with torch.no_grad(), autocast():
            for i in range(a.warmup + a.iters):
                t0 = time.perf_counter()
                model(x)
                sync()
                t = time.perf_counter() - t0
                if i >= a.warmup:
                    times.append(t)

    med = statistics.median(times)
    malloc = "tuned" if os.environ.get("GLIBC_TUNABLES") else "stock"
    where = (f"device={a.device} precision={prec} algos={alg} format={fmt}" if cuda
             else f"threads={a.threads} precision={prec} format={fmt} torch={torch.__version__.split('+')[0]}")
    print(f"name=bench.{name} impl=pytorch mode={a.mode} batch={a.batch} {where} "
          f"iters={a.iters} median_ms={med * 1e3:.3f} min_ms={min(times) * 1e3:.3f} "
          f"img_per_s={a.batch / med:.1f} malloc={malloc}", flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
