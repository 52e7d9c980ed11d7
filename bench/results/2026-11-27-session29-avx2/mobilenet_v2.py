import torch, torch.nn as nn, time, copy, sys
import nova.torch as nt
torch.set_num_threads(2); torch.manual_seed(0)
def cbr(i, o, k, s, g=1): return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(o), nn.ReLU6(inplace=True))
class IR(nn.Module):
    def __init__(s, i, o, st, t):
        super().__init__(); h = i * t; s.res = st == 1 and i == o
        layers = ([cbr(i, h, 1, 1)] if t != 1 else []) + [cbr(h, h, 3, st, h), nn.Conv2d(h, o, 1, 1, 0, bias=False), nn.BatchNorm2d(o)]
        s.conv = nn.Sequential(*layers)
    def forward(s, x): return x + s.conv(x) if s.res else s.conv(x)
def mobilenet_v2():
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    layers = [cbr(3, 32, 3, 2)]; i = 32
    for t, c, n, s in cfg:
        for k in range(n): layers.append(IR(i, c, s if k == 0 else 1, t)); i = c
    layers.append(cbr(i, 1280, 1, 1))
    return nn.Sequential(*layers)
def randomize(m):
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1); mod.running_var.uniform_(0.5, 1.5); mod.weight.data.uniform_(0.5, 1.5); mod.bias.data.uniform_(-0.1, 0.1)
    return m.eval()
ref = randomize(mobilenet_v2()); nv = copy.deepcopy(ref); rep = nt.replace_conv2d(nv, threads=2, direct=True)
print("replaced", len(rep.replaced), "skipped", len(rep.skipped))
for mf in (torch.contiguous_format, torch.channels_last):
    x = torch.randn(int(sys.argv[1]) if len(sys.argv) > 1 else 1, 3, 224, 224).contiguous(memory_format=mf)
    a = ref.to(memory_format=mf); b = nv.to(memory_format=mf)
    with torch.no_grad():
        err = ((a(x) - b(x)).norm() / a(x).norm()).item()
        ts = {"torch": [], "nova": []}
        for _ in range(3): a(x); b(x)
        for r in range(7):
            for tag, m in (("torch", a), ("nova", b)):
                t0 = time.perf_counter(); m(x); ts[tag].append((time.perf_counter() - t0) * 1e3)
    med = {k: sorted(v)[len(v) // 2] for k, v in ts.items()}
    ratio = sorted(p / q for p, q in zip(ts["torch"], ts["nova"]))[3]
    print(mf, "torch %.2f ms nova %.2f ms; torch/nova medians %.2f, paired %.2f; rel diff %.1e" % (med["torch"], med["nova"], med["torch"] / med["nova"], ratio, err))
