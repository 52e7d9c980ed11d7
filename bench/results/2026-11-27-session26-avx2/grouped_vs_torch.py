"""Session 26: ResNeXt-50 (32x4d)-like grouped 3x3 layers, nova's direct path beside PyTorch's conv2d, interleaved,
2 threads, FP32.
  .venv/bin/python grouped_vs_torch.py NOVA [reps]
nova: `nova bench conv` median_ms on NCHW, NHWC and NCHW16c tensors; PyTorch: median of 30 calls after 5 warm-ups
on NCHW and channels_last tensors."""
import json, statistics, subprocess, sys, time

import torch

nova = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
torch.set_num_threads(2)
layers = [  # (N, C, H, W, K, stride, groups)
    (1, 128, 56, 56, 128, 1, 32), (1, 256, 56, 56, 256, 2, 32), (1, 256, 28, 28, 256, 1, 32),
    (1, 512, 28, 28, 512, 2, 32), (1, 512, 14, 14, 512, 1, 32), (8, 128, 56, 56, 128, 1, 32),
]


def nova_ms(l, layout):
    n, c, h, w, k, s, g = l
    out = subprocess.run([nova, "bench", "conv", "--shape", f"{n},{c},{h},{w},{k}", "--kernel", "3", "--stride", str(s),
                          "--pad", "1", "--groups", str(g), "--layout", layout, "--threads", "2", "--format", "json"],
                         capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout)["median_ms"]


def torch_ms(l, channels_last):
    n, c, h, w, k, s, g = l
    x, wt = torch.randn(n, c, h, w), torch.randn(k, c // g, 3, 3)
    if channels_last:
        x, wt = x.contiguous(memory_format=torch.channels_last), wt.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5):
            torch.nn.functional.conv2d(x, wt, stride=s, padding=1, groups=g)
        ts = []
        for _ in range(30):
            t = time.perf_counter()
            torch.nn.functional.conv2d(x, wt, stride=s, padding=1, groups=g)
            ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {reps} interleaved repetitions; nova {nova}")
for l in layers:
    t = {k: [] for k in ("nova nchw", "torch nchw", "nova nhwc", "nova nchw16c", "torch cl")}
    for _ in range(reps):
        t["nova nchw"].append(nova_ms(l, "nchw"))
        t["torch nchw"].append(torch_ms(l, False))
        t["nova nhwc"].append(nova_ms(l, "nhwc"))
        t["nova nchw16c"].append(nova_ms(l, "nchw16c"))
        t["torch cl"].append(torch_ms(l, True))
    m = {k: statistics.median(v) for k, v in t.items()}
    n, c, h, w, k, s, g = l
    print(f"{n}x{c}x{h}x{w}->{k} 3x3 s{s} g{g}: NCHW nova {m['nova nchw']:.3f} torch {m['torch nchw']:.3f} ms "
          f"(torch/nova {m['torch nchw'] / m['nova nchw']:.2f}) | NHWC nova {m['nova nhwc']:.3f}, NCHW16c nova "
          f"{m['nova nchw16c']:.3f}, torch channels_last {m['torch cl']:.3f} ms (torch/nova NHWC "
          f"{m['torch cl'] / m['nova nhwc']:.2f})", flush=True)
