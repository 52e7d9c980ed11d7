"""Session 26: first layers (few input channels) on the direct path beside PyTorch's conv2d, two nova binaries
and PyTorch interleaved, 2 threads, FP32.
  .venv/bin/python first_layers_ab.py OLD_NOVA NEW_NOVA [reps]
nova: `nova bench conv` median_ms on NCHW and NHWC tensors; PyTorch: median of 30 calls after 5 warm-ups on
NCHW and channels_last tensors. Prints the medians over the repetitions, new/old and PyTorch/new."""
import json, statistics, subprocess, sys, time

import torch

old, new = sys.argv[1], sys.argv[2]
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
torch.set_num_threads(2)
layers = [  # (name, N, C, H, W, K, kernel, stride, pad)
    ("1x3x224x224->64 7x7 s2", 1, 3, 224, 224, 64, 7, 2, 3),
    ("1x3x224x224->64 3x3", 1, 3, 224, 224, 64, 3, 1, 1),
    ("1x3x224x224->32 3x3 s2", 1, 3, 224, 224, 32, 3, 2, 1),
    ("8x3x32x32->64 3x3", 8, 3, 32, 32, 64, 3, 1, 1),
    ("8x1x28x28->32 5x5", 8, 1, 28, 28, 32, 5, 1, 2),
    ("1x1x224x224->32 3x3", 1, 1, 224, 224, 32, 3, 1, 1),
]


def nova_ms(binary, l, layout):
    _, n, c, h, w, k, r, s, p = l
    out = subprocess.run([binary, "bench", "conv", "--shape", f"{n},{c},{h},{w},{k}", "--kernel", str(r), "--stride",
                          str(s), "--pad", str(p), "--layout", layout, "--threads", "2", "--format", "json"],
                         capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout)["median_ms"]


def torch_ms(l, channels_last):
    _, n, c, h, w, k, r, s, p = l
    x = torch.randn(n, c, h, w)
    wt = torch.randn(k, c, r, r)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
        wt = wt.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5):
            torch.nn.functional.conv2d(x, wt, stride=s, padding=p)
        ts = []
        for _ in range(30):
            t = time.perf_counter()
            torch.nn.functional.conv2d(x, wt, stride=s, padding=p)
            ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {reps} interleaved repetitions; "
      f"old {old}, new {new}")
for l in layers:
    t = {k: [] for k in ("old nchw", "new nchw", "torch nchw", "old nhwc", "new nhwc", "torch cl")}
    for _ in range(reps):
        for layout, tl in (("nchw", False), ("nhwc", True)):
            t[f"old {layout}"].append(nova_ms(old, l, layout))
            t[f"new {layout}"].append(nova_ms(new, l, layout))
            t["torch cl" if tl else "torch nchw"].append(torch_ms(l, tl))
    m = {k: statistics.median(v) for k, v in t.items()}
    print(f"{l[0]:24s} NCHW: old {m['old nchw']:.3f} new {m['new nchw']:.3f} torch {m['torch nchw']:.3f} ms "
          f"(new/old {m['new nchw'] / m['old nchw']:.2f}, torch/new {m['torch nchw'] / m['new nchw']:.2f}) | "
          f"NHWC: old {m['old nhwc']:.3f} new {m['new nhwc']:.3f} torch channels_last {m['torch cl']:.3f} ms "
          f"(new/old {m['new nhwc'] / m['old nhwc']:.2f}, torch/new {m['torch cl'] / m['new nhwc']:.2f})", flush=True)
