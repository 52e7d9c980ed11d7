import sys, time, torch, statistics, copy
sys.path.insert(0, '/work/main/bench')
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
mf = torch.channels_last if sys.argv[1] == "cl" else torch.contiguous_format
torch.manual_seed(0)
nv = ns.randomize(ns.resnext50_features(), 1); nt.replace_conv2d(nv, threads=2, direct=True)
nv = nv.to(memory_format=mf)
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
with torch.no_grad():
    for _ in range(3): nv(x)
    ts = []
    for _ in range(12):
        s = time.perf_counter(); nv(x); ts.append(time.perf_counter() - s)
print("%.2f" % (statistics.median(ts) * 1e3))
