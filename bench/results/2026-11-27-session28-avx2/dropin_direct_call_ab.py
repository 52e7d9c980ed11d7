"""Session 28: nova.torch's layers calling their operator's body directly (inference) against calling the
custom operator, in one process, interleaved, beside PyTorch; the drop-in with direct=True, 2 threads.
  python dropin_direct_call_ab.py NETWORK cl|nchw REPS (sys.path: /work/main/bench for network_speed)"""
import sys, time, torch, statistics, copy
sys.path.insert(0, '/work/main/bench')
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
net, fmt, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
mf = torch.channels_last if fmt == "cl" else torch.contiguous_format
ref = ns.randomize({"resnext50": ns.resnext50_features, "resnet18": ns.resnet18_features,
                    "vgg16": ns.vgg16_features}[net](), 1)
nv = copy.deepcopy(ref); nt.replace_conv2d(nv, threads=2, direct=True)
ref = ref.to(memory_format=mf); nv = nv.to(memory_format=mf)
direct_ok = nt._eager_call_ok
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
def t(m, n=8):
    for _ in range(2): m(x)
    ts = []
    for _ in range(n):
        s = time.perf_counter(); m(x); ts.append(time.perf_counter() - s)
    return statistics.median(ts) * 1e3
res = {}
with torch.no_grad():
    for _ in range(reps):
        res.setdefault("torch", []).append(t(ref))
        nt._eager_call_ok = lambda *a: False; res.setdefault("nova via operator", []).append(t(nv))
        nt._eager_call_ok = direct_ok; res.setdefault("nova direct call", []).append(t(nv))
print(f"{net} {fmt}, torch {torch.__version__}, 2 threads, {reps} interleaved reps (median of 8 forwards each)")
for k, v in res.items():
    print(f"  {k:18s} {statistics.median(v):7.1f} ms  ", " ".join("%.1f" % a for a in v))
r = [a / b for a, b in zip(res["nova direct call"], res["nova via operator"])]
print("  direct call / via operator, paired median %.3f (%.2f-%.2f)" % (statistics.median(r), min(r), max(r)))
r = [a / b for a, b in zip(res["torch"], res["nova direct call"])]
print("  torch / nova direct call, paired median %.3f (%.2f-%.2f)" % (statistics.median(r), min(r), max(r)))
