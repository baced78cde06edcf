#!/usr/bin/env python3
"""torchvision_loader.py: the yardstick of issue #13 item 7 (images/s delivered by the loader):
torchvision's ImageFolder + DataLoader on an image folder, with the training transforms that
`dse data bench SOURCE --aug rrc` applies, timed the way that command times ours. Not a test
(docs/conventions.md#benchmarks).

Pipeline per image (in the DataLoader's worker processes): PIL open and JPEG decode (Pillow),
convert to RGB, RandomResizedCrop(size) (scale 0.08-1, ratio 3/4-4/3, bilinear, antialiased
where this torchvision takes the argument), RandomHorizontalFlip(0.5), ToTensor (CHW float in
[0,1]), Normalize(mean, std); the workers also collate each batch into one tensor. The
DataLoader shuffles, drops the last partial batch, does not pin memory and keeps its workers
between epochs (persistent_workers), so an epoch boundary costs no worker start-up.

Timing: the first --warmup-batches batches are drawn and not counted (worker start-up and the
first imports and file-cache misses are excluded); the clock then starts and batches are drawn,
starting new epochs as needed, until --seconds have passed; the run ends at the first batch
received after that. img_per_s is the images of the counted batches over the elapsed time.
The batches the workers had prefetched when the clock started are at most
workers * prefetch_factor (2) batches; over a run of several seconds that is a small bias in
torchvision's favour.

Prints one line, for example
  name=loader.torchvision torch=1.13.0a0 torchvision=0.14.1a0 pil=9.4.0 workers=2 cores=2
  batch=256 size=227 aug=rrc+flip images=3584 seconds=10.12 img_per_s=354.1
  img_per_s_per_core=177.0
where img_per_s_per_core is img_per_s over the cores the workers can use, min(workers,
os.cpu_count()) (the decoding and transforms run in the workers, one thread each; the main
process only receives the finished batches through shared memory, which this divides into
the workers' cores rather than counting as one more core).

If torch or torchvision cannot be imported it prints a line beginning `SKIP:` and exits 0.
Usage: torchvision_loader.py --root DIR [--size 227] [--batch 256] [--workers N]
                             [--seconds 10] [--warmup-batches 2] [--mean R,G,B] [--std R,G,B]
                             [--seed 1]
DIR holds train/<class>/*.jpg (as `dse data synth DIR` writes). Debian's packages:
apt-get install -y python3-torchvision python3-pil; run it with /usr/bin/python3.
"""
import argparse
import inspect
import os
import sys
import time

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def triple(s):
    v = tuple(float(x) for x in s.split(","))
    if len(v) != 3:
        raise argparse.ArgumentTypeError(f"want three comma-separated numbers, got {s!r}")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True, help="folder holding train/<class>/*.jpg")
    ap.add_argument("--size", type=int, default=227, help="crop side (default 227)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="DataLoader worker processes (default: all cores)")
    ap.add_argument("--seconds", type=float, default=10.0, help="time to measure, after warm-up")
    ap.add_argument("--warmup-batches", type=int, default=2)
    ap.add_argument("--mean", type=triple, default=IMAGENET_MEAN, help="R,G,B (default ImageNet's)")
    ap.add_argument("--std", type=triple, default=IMAGENET_STD, help="R,G,B (default ImageNet's)")
    ap.add_argument("--seed", type=int, default=1, help="seeds the shuffle and the transforms")
    a = ap.parse_args()
    if a.size < 1 or a.batch < 1 or a.workers < 1 or a.seconds <= 0 or a.warmup_batches < 0:
        ap.error("--size, --batch and --workers must be >= 1, --seconds > 0, --warmup-batches >= 0")

    try:
        import torch
        import torchvision
        from torchvision import datasets, transforms
    except ImportError as e:
        print(f"SKIP: torchvision missing (apt-get install python3-torchvision): {e}; "
              f"interpreter {sys.executable}")
        return 0
    try:
        import PIL
        pil = PIL.__version__
    except (ImportError, AttributeError):
        pil = "unknown"

    train = os.path.join(a.root, "train")
    if not os.path.isdir(train):
        print(f"torchvision_loader: no folder {train}", file=sys.stderr)
        return 2

    # antialias became an argument of RandomResizedCrop in torchvision 0.13 (and its default
    # changes in 0.17); PIL images are always resized with antialiasing, so this only pins it.
    rrc_kw = {}
    if "antialias" in inspect.signature(transforms.RandomResizedCrop.__init__).parameters:
        rrc_kw["antialias"] = True
    tf = transforms.Compose([
        transforms.RandomResizedCrop(a.size, **rrc_kw),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(a.mean, a.std),
    ])
    torch.manual_seed(a.seed)
    ds = datasets.ImageFolder(train, transform=tf)
    if len(ds) < a.batch:
        print(f"torchvision_loader: {len(ds)} images in {train}, fewer than one batch of {a.batch}",
              file=sys.stderr)
        return 2
    loader = torch.utils.data.DataLoader(
        ds, batch_size=a.batch, shuffle=True, num_workers=a.workers, persistent_workers=True,
        drop_last=True, pin_memory=False, generator=torch.Generator().manual_seed(a.seed))

    def batches():
        while True:  # one pass per epoch; the persistent workers serve every epoch
            yield from loader

    it = batches()
    for _ in range(a.warmup_batches):
        next(it)
    images = 0
    t0 = time.perf_counter()
    while True:
        x, _ = next(it)
        images += x.shape[0]
        elapsed = time.perf_counter() - t0
        if elapsed >= a.seconds:
            break
    if tuple(x.shape[1:]) != (3, a.size, a.size):
        print(f"torchvision_loader: batch shape {tuple(x.shape)}", file=sys.stderr)
        return 1

    cores = min(a.workers, os.cpu_count() or a.workers)
    rate = images / elapsed
    print(f"name=loader.torchvision torch={torch.__version__} torchvision={torchvision.__version__} "
          f"pil={pil} workers={a.workers} cores={cores} batch={a.batch} size={a.size} aug=rrc+flip "
          f"images={images} seconds={elapsed:.2f} img_per_s={rate:.1f} "
          f"img_per_s_per_core={rate / cores:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
