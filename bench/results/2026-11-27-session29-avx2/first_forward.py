import sys, time, torch, copy
sys.path.insert(0, '/work/main/bench')
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
out = []
for name in ("vgg16", "resnet18", "resnet101"):
    m = ns.randomize(ns.NETWORKS[name][1](), 1)
    nt.replace_conv2d(m, direct=True)
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        t0 = time.perf_counter(); m(x); first = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter(); m(x); second = (time.perf_counter() - t0) * 1e3
    out.append(f"{name} first {first:.0f} ms, second {second:.0f} ms")
print("; ".join(out))
