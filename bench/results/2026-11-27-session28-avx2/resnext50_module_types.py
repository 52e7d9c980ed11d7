import sys, time, torch, statistics, collections, copy
sys.path.insert(0, '/work/main/bench')
import network_speed as ns
import nova.torch as nt
import nova._nova as _n
print("shared openmp:", _n.shared_openmp_library())
torch.set_num_threads(2)
mf = torch.channels_last
ref = ns.randomize(ns.resnext50_features(), 1)
nv = copy.deepcopy(ref); nt.replace_conv2d(nv, threads=2, direct=True)
def instrument(m):
    times = collections.defaultdict(float); starts = {}
    for name, mod in m.named_modules():
        if len(list(mod.children())) == 0:
            def pre(mod, inp, name=name): starts[name] = time.perf_counter()
            def post(mod, inp, out, name=name): times[type(mod).__name__] += time.perf_counter() - starts[name]
            mod.register_forward_pre_hook(pre); mod.register_forward_hook(post)
    return times
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
for rep in range(2):
  for tag, m in (('torch', ref), ('nova', nv)):
    m = m.to(memory_format=mf); t = instrument(m) if rep == 0 else m._t
    m._t = t
    with torch.no_grad():
        for _ in range(3): m(x)
        t.clear()
        s = time.perf_counter()
        for _ in range(10): m(x)
        tot = (time.perf_counter() - s) * 100
    print(tag, "forward %.1f ms;" % tot, ", ".join(f"{k} {v*100:.1f}" for k, v in sorted(t.items())), "; sum %.1f" % (sum(t.values()) * 100))
