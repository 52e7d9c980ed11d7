"""Whole networks through the PyTorch drop-in against PyTorch itself, side by side in one run.

    .venv/bin/python bench/network_speed.py [--threads 2] [--reps 5] [--batch 1] [--tile 6,3]
        [--precision fp32] [--direct] [--fuse-bn] [--networks vgg16,resnet18,resnext50,resnet101] [--json out.json]

Two ImageNet-shaped feature extractors with random weights (no torchvision needed; the speed does not
depend on the values): VGG-16's 13 convolutions with its max-pools, and ResNet-18 (7x7 stride-2 stem,
basic blocks with batch norm, 1x1 stride-2 shortcuts), both on 1x3x224x224 by default, in eval mode; and on
request ResNeXt-50 (32x4d), whose 3x3 convolutions are grouped (4-32 channels per group), and ResNet-101,
whose 104 convolutions are more than the drop-in's shared plan cache held before session 29.
Every eligible Conv2d (3x3 stride 1: 13 of VGG-16's 13, 13 of ResNet-18's 20) is replaced with
nova.torch.replace_conv2d; the rest stay PyTorch's. Each variant is timed as the median of 10 forward
passes after 3 warm-up passes, the variants in rotating order within each repetition, so that a drifting
machine slows them alike. Prints per network and tensor format (NCHW, channels_last) the medians over
repetitions, PyTorch's time over nova's (best times / median of the per-repetition ratios), and nova's
relative L2 difference from PyTorch's FP32 output.

PyTorch's OpenMP threads spin-wait after each of its operations (libgomp: GOMP_SPINCOUNT, 300,000 by
default) on the cores nova's next layer needs; the header line says which setting the run had. Run with
GOMP_SPINCOUNT=10000 in the environment to time both with short spins (docs/engine.md, session 23).
Since session 24 nova runs on PyTorch's OpenMP threads (nova.torch shares them; NOVA_SHARE_OPENMP=0 does not).

--fuse-bn folds ResNet-18's batch norms into the convolutions before either side runs
(torch.fx.experimental.optimization.fuse, PyTorch's own inference fusion), so both run the folded network.
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation"))
import script_checks  # noqa: E402

import torch
import torch.nn as nn
from torch.fx.experimental.optimization import fuse as fx_fuse

try:
    import nova
    import nova.torch as nt
except ImportError as e:  # --help still works; a run says what is missing
    nova = nt = None
    NOVA_IMPORT_ERROR = str(e)


def vgg16_features():
    layers, c = [], 3
    for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
            c = v
    return nn.Sequential(*layers)


def resnet_stem():
    """The 7x7 stride-2 convolution, batch norm, ReLU and 3x3 stride-2 max-pool of ResNet and ResNeXt."""
    return [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]


def shortcut(cin, cout, stride):
    """A residual block's projection (1x1 convolution and batch norm) where the shapes change, else None."""
    if stride == 1 and cin == cout:
        return None
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = shortcut(cin, cout, stride)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet18_features():
    layers = resnet_stem()
    c = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(c, cout, stride), BasicBlock(cout, cout, 1)]
        c = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1))


class Bottleneck(nn.Module):
    """ResNeXt's block: 1x1 to `width`, 3x3 grouped (32 groups; ResNet's: 1) with the stride, 1x1 to `cout`,
    batch norms."""

    def __init__(self, cin, width, cout, stride, groups=32):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = shortcut(cin, cout, stride)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnext50_features():
    """ResNeXt-50 (32x4d): blocks 3, 4, 6, 3; grouped 3x3 widths 128-1024 (4-32 channels per group)."""
    layers = resnet_stem()
    c = 64
    for i, blocks in enumerate([3, 4, 6, 3]):
        width, cout = 128 << i, 256 << i
        for b in range(blocks):
            layers.append(Bottleneck(c, width, cout, 2 if b == 0 and i > 0 else 1))
            c = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1))


def resnet101_features():
    """ResNet-101: bottleneck blocks 3, 4, 23, 3 without groups, 104 convolutions (more than the 64 plans the
    drop-in's shared cache held before session 29, when every forward made every plan again)."""
    layers = resnet_stem()
    c = 64
    for i, blocks in enumerate([3, 4, 23, 3]):
        width, cout = 64 << i, 256 << i
        for b in range(blocks):
            layers.append(Bottleneck(c, width, cout, 2 if b == 0 and i > 0 else 1, groups=1))
            c = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1))


NETWORKS = {"vgg16": ("VGG-16 features", vgg16_features), "resnet18": ("ResNet-18 features", resnet18_features),
            "resnext50": ("ResNeXt-50 (32x4d) features", resnext50_features),
            "resnet101": ("ResNet-101 features", resnet101_features)}


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                fan_in = m.in_channels * m.kernel_size[0] * m.kernel_size[1]
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
            elif isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return model.eval()


def forward_ms(model, x, passes=10, warmup=3):
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        times = []
        for _ in range(passes):
            t = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--tile", default=None, help="drop-in tile (default: its own: the engine's choice per input shape in fp32, bf16 and fp16; F(4,3) in int8)")
    ap.add_argument("--precision", default="fp32", help="drop-in precision (fp32, bf16, fp16, int8, ...)")
    ap.add_argument("--fuse-bn", action="store_true",
                    help="fold batch norms into the convolutions (torch.fx fuse) for both PyTorch and nova")
    ap.add_argument("--direct", action="store_true",
                    help="also time a third variant: replace_conv2d(direct=True), the layers Winograd cannot take "
                         "on nova's direct path (fp32)")
    ap.add_argument("--networks", default="vgg16,resnet18",
                    help="comma-separated, of " + ", ".join(NETWORKS) + " (resnext50: its 3x3 layers are grouped, "
                         "so only --direct puts them on nova)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    script_checks.require_at_least(ap, ("--threads", args.threads, 1), ("--reps", args.reps, 1),
                                   ("--batch", args.batch, 1),
                                   ("--size", args.size, 32))  # 32: VGG-16's five 2x2 max-pools
    unknown = [n for n in args.networks.split(",") if n not in NETWORKS]
    if unknown:
        ap.error(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(NETWORKS)}")
    script_checks.require_writable(ap, "--json", args.json)  # before the run
    if nova is None:
        sys.exit(f"network_speed.py: the nova package does not import ({NOVA_IMPORT_ERROR}); `pip install .` first")
    import machine
    torch.set_num_threads(args.threads)
    omp = ", ".join(f"{v}={os.environ[v]}" for v in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY") if v in os.environ)
    print(f"{machine.summary()}; "
          f"input normal(0, 1), random He-scaled weights, eval mode")
    print(f"torch {torch.__version__}, {args.threads} threads, batch {args.batch}, {args.size}x{args.size}, "
          f"{args.reps} repetitions; nova drop-in precision {args.precision}, tile {args.tile or 'default'}; "
          f"OpenMP spin-wait: {omp or 'the default (GOMP_SPINCOUNT, OMP_WAIT_POLICY unset)'}; nova's threads: "
          f"{'shared with PyTorch (' + nova.shared_openmp_library() + ')' if nova.shared_openmp_library() else 'its own'}")
    if args.fuse_bn:
        print("batch norms folded into the convolutions (torch.fx fuse) for both")
    results = []
    for name, make in (NETWORKS[n] for n in args.networks.split(",")):
        ref = randomize(make(), 1)
        if args.fuse_bn:
            ref = fx_fuse(ref.eval())
        dropin = copy.deepcopy(ref)
        report = nt.replace_conv2d(dropin, tile=args.tile, precision=args.precision, threads=args.threads)
        kinds = {"nova": dropin}
        if args.direct:
            kinds["nova+direct"] = copy.deepcopy(ref)
            direct_report = nt.replace_conv2d(kinds["nova+direct"], tile=args.tile, precision=args.precision,
                                              threads=args.threads, direct=True)
        x = torch.randn(args.batch, 3, args.size, args.size, generator=torch.Generator().manual_seed(2))
        variants = {}
        for fmt in ("nchw", "channels_last"):
            mf = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
            xi = x.contiguous(memory_format=mf)
            variants[f"torch {fmt}"] = (copy.deepcopy(ref).to(memory_format=mf), xi)
            for kind, model in kinds.items():
                variants[f"{kind} {fmt}"] = (copy.deepcopy(model).to(memory_format=mf), xi)
        with torch.no_grad():
            y_ref = ref(x).double()
            diff = {k: float((m(xi).double() - y_ref).norm() / y_ref.norm()) for k, (m, xi) in variants.items()
                    if k.startswith("nova")}
        times = {k: [] for k in variants}
        names = list(variants)
        for r in range(args.reps):
            order = names[r % len(names):] + names[:r % len(names)]
            for k in order:
                m, xi = variants[k]
                times[k].append(forward_ms(m, xi))
        # What the drop-in made of them: a --tile whose r fits no layer is not used (the layers get their
        # kernel's default tile), so the header's 'tile' alone does not say what ran.
        used = {}
        for _, what in report.replaced:
            used[what] = used.get(what, 0) + 1
        print(f"\n{name}: {len(report.replaced)} convolutions replaced, {len(report.skipped)} left to PyTorch"
              + (f"; with direct=True {len(direct_report.replaced)} replaced, {len(direct_report.skipped)} left"
                 if args.direct else ""))
        print("  replaced as: " + "; ".join(f"{n} x {w}" for w, n in used.items()))
        row = {"network": name, "replaced": len(report.replaced), "skipped": len(report.skipped), "replaced_as": used,
               "ms": times,
               "rel_l2_vs_torch": diff}
        for fmt in ("nchw", "channels_last"):
            for kind in kinds:
                t, n = times[f"torch {fmt}"], times[f"{kind} {fmt}"]
                best = min(t) / min(n)
                paired = statistics.median(a / b for a, b in zip(t, n))
                row[f"speedup {fmt}" + ("" if kind == "nova" else " direct")] = {"best": best, "median_paired": paired}
                print(f"  {fmt:13s} torch {statistics.median(t):8.2f} ms  {kind} {statistics.median(n):8.2f} ms  "
                      f"torch/{kind} {best:.2f} / {paired:.2f}  {kind} vs torch rel L2 {diff[f'{kind} {fmt}']:.2e}")
        results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:  # nova.torch refusing --precision or --tile (at replacement or first forward)
        sys.exit(f"network_speed.py: {e}")
