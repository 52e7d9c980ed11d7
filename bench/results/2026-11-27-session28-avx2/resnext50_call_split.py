import sys, time, torch, statistics, collections, copy
sys.path.insert(0, '/work/main/bench')
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
mf = torch.channels_last
ref = ns.randomize(ns.resnext50_features(), 1)
nv = copy.deepcopy(ref); nt.replace_conv2d(nv, threads=2, direct=True)
ev = []
orig_plan_for = nt._plan_for
class Wrap:
    def __init__(s, p): s.p = p
    def execute(s, a, b):
        t0 = time.perf_counter(); s.p.execute(a, b); t1 = time.perf_counter(); ev.append(("exec", t0, t1))
def pf(*a, **k):
    t0 = time.perf_counter(); r = Wrap(orig_plan_for(*a, **k)); ev.append(("plan", t0, time.perf_counter())); return r
orig_check = nt._check_input
def ck(*a, **k):
    t0 = time.perf_counter(); r = orig_check(*a, **k); ev.append(("check", t0, time.perf_counter())); return r
nt._check_input = ck
orig_empty = nt._empty_output
def em(*a, **k):
    t0 = time.perf_counter(); r = orig_empty(*a, **k); ev.append(("empty", t0, time.perf_counter())); return r
nt._empty_output = em
nt._plan_for = pf
times = collections.defaultdict(list)
cur = {}
for name, mod in nv.named_modules():
    if 'Conv' in type(mod).__name__:
        def pre(mod, inp, name=name): cur['t'] = time.perf_counter(); ev.clear()
        def post(mod, inp, out, name=name):
            t = time.perf_counter(); d = {a: (b, c) for a, b, c in ev}; e = d['exec']
            times[name].append((t - cur['t'], e[1] - e[0], d['check'][0] - cur['t'], t - e[1], d['empty'][1] - d['empty'][0], d['plan'][1] - d['plan'][0], e[0] - d['plan'][1]))
        mod.register_forward_pre_hook(pre); mod.register_forward_hook(post)
nv = nv.to(memory_format=mf)
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
with torch.no_grad():
    for _ in range(3): nv(x)
    for v in times.values(): v.clear()
    for _ in range(10): nv(x)
mods = dict(ref.named_modules())
tot = [0] * 7
for k, v in times.items():
    m = mods[k]
    med = [statistics.median(a[i] for a in v) * 1e3 for i in range(7)]
    tot = [a + b for a, b in zip(tot, med)]
    print(f"{k:22s} {m.in_channels:5d}->{m.out_channels:5d} k{m.kernel_size[0]} s{m.stride[0]} g{m.groups:2d}: hook {med[0]:.3f} exec {med[1]:.3f} to-body {med[2]:.3f} after {med[3]:.3f} empty {med[4]:.3f} plan {med[5]:.3f} plan-exec {med[6]:.3f}")
print("sums: hook %.1f exec %.1f to-body %.1f after %.1f empty %.1f plan %.1f plan-exec %.1f" % tuple(tot))
