"""Session 27: every distinct convolution of ResNeXt-50 (32x4d) at 1x3x224x224, nova's plan (`nova bench conv`,
its automatic choice) beside PyTorch's conv2d, NCHW and NHWC/channels_last, 2 threads, FP32, interleaved.
  .venv/bin/python resnext50_layers_vs_torch.py NOVA [reps]
Prints per layer: how many times the network runs it, the medians, PyTorch/nova, and the network-weighted sums."""
import json, statistics, subprocess, sys, time

import torch

nova = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
torch.set_num_threads(2)
layers = {}  # (C, H, K, kernel, stride, groups) -> count
def add(c, h, k, r, s, g):
    layers[(c, h, k, r, s, g)] = layers.get((c, h, k, r, s, g), 0) + 1
add(3, 224, 64, 7, 2, 1)
c, h = 64, 56
for i, blocks in enumerate([3, 4, 6, 3]):
    width, cout = 128 << i, 256 << i
    for b in range(blocks):
        s = 2 if b == 0 and i > 0 else 1
        add(c, h, width, 1, 1, 1)
        add(width, h, width, 3, s, 32)
        ho = h // s
        add(width, ho, cout, 1, 1, 1)
        if s != 1 or c != cout:
            add(c, h, cout, 1, s, 1)
        c, h = cout, ho


def nova_ms(l, layout):
    c, h, k, r, s, g = l
    out = subprocess.run([nova, "bench", "conv", "--shape", f"1,{c},{h},{h},{k}", "--kernel", str(r), "--stride", str(s),
                          "--pad", str(r // 2), "--groups", str(g), "--layout", layout, "--threads", "2", "--format",
                          "json"], capture_output=True, text=True, timeout=300, check=True)
    j = json.loads(out.stdout)
    return j["median_ms"], j.get("algorithm", "")


def torch_ms(l, channels_last):
    c, h, k, r, s, g = l
    x = torch.randn(1, c, h, h)
    w = torch.randn(k, c // g, r, r)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
        w = w.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5):
            torch.nn.functional.conv2d(x, w, stride=s, padding=r // 2, groups=g)
        ts = []
        for _ in range(20):
            t = time.perf_counter()
            torch.nn.functional.conv2d(x, w, stride=s, padding=r // 2, groups=g)
            ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


print(f"torch {torch.__version__}, 2 threads; {reps} interleaved repetitions; nova {nova}")
tot = {"nova nchw": 0.0, "torch nchw": 0.0, "nova nhwc": 0.0, "torch cl": 0.0}
for l, n in layers.items():
    t = {k: [] for k in tot}
    alg = ""
    for _ in range(reps):
        ms, alg = nova_ms(l, "nchw"); t["nova nchw"].append(ms)
        t["torch nchw"].append(torch_ms(l, False))
        ms, _ = nova_ms(l, "nhwc"); t["nova nhwc"].append(ms)
        t["torch cl"].append(torch_ms(l, True))
    m = {k: statistics.median(v) for k, v in t.items()}
    for k in tot:
        tot[k] += n * m[k]
    c, h, k, r, s, g = l
    print(f"x{n:2d} 1x{c}x{h}x{h}->{k} {r}x{r} s{s} g{g} [{alg}]: NCHW nova {m['nova nchw']:.3f} torch {m['torch nchw']:.3f} "
          f"(torch/nova {m['torch nchw'] / m['nova nchw']:.2f}) | NHWC nova {m['nova nhwc']:.3f} torch channels_last "
          f"{m['torch cl']:.3f} (torch/nova {m['torch cl'] / m['nova nhwc']:.2f})", flush=True)
print(f"network-weighted sums: NCHW nova {tot['nova nchw']:.2f} torch {tot['torch nchw']:.2f} ms "
      f"(torch/nova {tot['torch nchw'] / tot['nova nchw']:.2f}); NHWC nova {tot['nova nhwc']:.2f} torch channels_last "
      f"{tot['torch cl']:.2f} ms (torch/nova {tot['torch cl'] / tot['nova nhwc']:.2f})")
