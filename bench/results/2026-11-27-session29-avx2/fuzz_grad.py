import torch, random, copy, sys
import nova.torch as nt
torch.set_num_threads(2)
rng = random.Random(int(sys.argv[1]))
bad = 0
for it in range(int(sys.argv[2])):
    k = rng.choice([1, 3, 5]); s = rng.choice([1, 1, 2]); g = rng.choice([1, 1, 2])
    cin = rng.choice([2, 4, 8, 16]); cout = rng.choice([2, 4, 8]) * g
    pad = rng.randint(0, 2); bias = rng.random() < 0.5
    conv = torch.nn.Conv2d(cin, cout, k, stride=s, padding=pad, groups=g, bias=bias).double().float()
    x = torch.randn(rng.randint(1, 2), cin, rng.randint(k, 12), rng.randint(k, 12), requires_grad=True)
    if rng.random() < 0.4: x = x.detach().contiguous(memory_format=torch.channels_last).requires_grad_()
    m = torch.nn.Sequential(copy.deepcopy(conv)); nt.replace_conv2d(m, direct=True)
    y = m(x); ref = conv(x)
    go = torch.randn_like(ref)
    gx, *gp = torch.autograd.grad(y, [x] + list(m.parameters()), go)
    rx, *rp = torch.autograd.grad(ref, [x] + list(conv.parameters()), go)
    def rel(a, b): return ((a - b).norm() / max(b.norm(), 1e-30)).item()
    errs = [rel(y, ref), rel(gx, rx)] + [rel(a, b) for a, b in zip(gp, rp)]
    if max(errs) > 1e-4 or len(gp) != len(rp):
        print("BAD", k, s, g, cin, cout, pad, bias, tuple(x.shape), type(m[0]).__name__, ["%.1e" % e for e in errs]); bad += 1
print("done bad", bad)
