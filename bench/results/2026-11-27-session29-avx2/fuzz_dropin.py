import torch, random, copy, sys, traceback
import nova.torch as nt
torch.set_num_threads(2)
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
bad = 0
for it in range(int(sys.argv[2]) if len(sys.argv) > 2 else 300):
    kh = rng.choice([1, 2, 3, 3, 3, 5, 5, 7]); kw = kh if rng.random() < 0.85 else rng.choice([1, 3, 5])
    s = rng.choice([1, 1, 1, 2, 3]); s = (s, s) if rng.random() < 0.9 else (s, rng.choice([1, 2]))
    d = rng.choice([1, 1, 1, 2]); d = (d, d)
    g = rng.choice([1, 1, 1, 2, 4, "dw"])
    cin = rng.choice([1, 3, 4, 8, 13, 16, 32, 33])
    if g == "dw": g = cin
    if cin % g: g = 1
    cout = rng.choice([1, 4, 8, 16, 17, 32]) * g if g > 1 else rng.choice([1, 5, 8, 16, 31, 64])
    if rng.random() < 0.15:
        pad = "same" if s == (1, 1) else 0
    else:
        pad = (rng.randint(0, 3), rng.randint(0, 3)) if rng.random() < 0.3 else rng.randint(0, 3)
    bias = rng.random() < 0.5
    try:
        conv = torch.nn.Conv2d(cin, cout, (kh, kw), stride=s, padding=pad, dilation=d, groups=g, bias=bias).eval()
    except Exception as e:
        continue
    n = rng.randint(1, 3); h = rng.randint(1, 20); w = rng.randint(1, 20)
    x = torch.randn(n, cin, h, w)
    cl = rng.random() < 0.4
    if cl: x = x.contiguous(memory_format=torch.channels_last)
    desc = f"conv({cin},{cout},k=({kh},{kw}),s={s},p={pad},d={d},g={g},bias={bias}) x={tuple(x.shape)} cl={cl}"
    try:
        ref = conv(x)
    except Exception:
        ref = None
    m = torch.nn.Sequential(copy.deepcopy(conv))
    try:
        rep = nt.replace_conv2d(m, direct=True, tile=rng.choice([None, "auto"]))
    except Exception as e:
        print("REPLACE FAIL", desc, repr(e)); bad += 1; continue
    try:
        with torch.no_grad():
            y = m(x)
    except Exception as e:
        if ref is not None:
            print("RUN FAIL (torch ran)", desc, type(m[0]).__name__, repr(e)[:200]); bad += 1
        continue
    if ref is None:
        print("nova ran where torch failed", desc, tuple(y.shape)); bad += 1; continue
    if y.shape != ref.shape:
        print("SHAPE", desc, y.shape, ref.shape); bad += 1; continue
    with torch.no_grad():
        x64 = x.double(); r64 = torch.nn.functional.conv2d(x64, conv.weight.double(), None if conv.bias is None else conv.bias.double(), s, pad if isinstance(pad, str) else pad, d, g)
        err = ((y.double() - r64).norm() / max(r64.norm(), 1e-30)).item()
        eref = ((ref.double() - r64).norm() / max(r64.norm(), 1e-30)).item()
    if not (err < max(50 * eref, 1e-5)) :
        print("ERR", desc, type(m[0]).__name__, f"{err:.2e} vs torch {eref:.2e}"); bad += 1
print("done, bad =", bad)
