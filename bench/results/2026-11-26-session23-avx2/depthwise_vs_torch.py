"""Session 23 (session 22's script with a layout): nova's direct depthwise (nova.ConvPlan, 2 threads) beside
PyTorch's depthwise conv2d (torch.nn.Conv2d with groups = channels, eval, no_grad, 2 threads) on MobileNet-like
3x3 layers, batch 1, both in NCHW or both in NHWC (PyTorch: channels_last; nova: its nhwc layout on the same
tensor's memory):
the median of 50 calls after 5 warm-ups each, the two alternated per repetition, REPS repetitions; prints the
medians over repetitions and PyTorch's time over nova's (median of the per-repetition ratios).

  .venv/bin/python depthwise_vs_torch.py [REPS] [nchw|nhwc]
"""
import statistics
import sys
import time

import numpy as np
import torch

import nova

torch.set_num_threads(2)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
layout = sys.argv[2] if len(sys.argv) > 2 else "nchw"


def bench(f, calls=50):
    for _ in range(5):
        f()
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


for c, h, s in [(32, 112, 1), (64, 112, 2), (128, 56, 1), (128, 56, 2), (256, 28, 1), (256, 28, 2), (512, 14, 1),
                (512, 14, 2), (1024, 7, 1)]:
    conv = torch.nn.Conv2d(c, c, 3, stride=s, padding=1, groups=c).eval()
    x = torch.randn(1, c, h, h)
    if layout == "nhwc":
        conv = conv.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    plan = nova.ConvPlan((1, c, h, h, c), kernel=(3, 3), padding=(1, 1), stride=s, groups=c,
                         weights=conv.weight.detach().contiguous().numpy(), bias=conv.bias.detach().numpy(),
                         layout=layout, threads=2)
    oh = (h + 2 - 3) // s + 1
    y = np.zeros((1, c, oh, oh) if layout == "nchw" else (1, oh, oh, c), np.float32)
    xn = x.numpy() if layout == "nchw" else x.permute(0, 2, 3, 1).numpy()  # NHWC: the same memory, no copy
    tt, tn = [], []
    with torch.no_grad():
        ref = conv(x).numpy()
        plan.execute(xn, y)
        got = y if layout == "nchw" else y.transpose(0, 3, 1, 2)
        err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        for _ in range(reps):
            tt.append(bench(lambda: conv(x)))
            tn.append(bench(lambda: plan.execute(xn, y)))
    ratio = statistics.median(a / b for a, b in zip(tt, tn))
    print(f"dw 1x{c}x{h}x{h} s{s} {layout}: torch {statistics.median(tt):.4f} ms  nova {statistics.median(tn):.4f} ms  "
          f"torch/nova {ratio:.2f}  (nova vs torch output rel L2 {err:.1e})", flush=True)
