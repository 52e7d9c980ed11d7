import torch, time, statistics, copy, sys, json
import nova.torch as nt
torch.set_num_threads(2)
def batch(f, n=300):
    t0 = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t0) / n * 1e6
res = {}
for cl in (False, True):
    for cls in (nt.NovaConv2d, nt.WinogradConv2d):
        conv = torch.nn.Conv2d(8, 8, 3, padding=1).eval()
        x = torch.randn(1, 8, 4, 4)
        if cl: x = x.contiguous(memory_format=torch.channels_last)
        layer = cls.from_conv2d(conv, threads=2)
        with torch.no_grad():
            out = layer(x)
            plan = next(reversed(nt._plans.values()))
            plan = getattr(plan, "plan", plan)
            xp = x.permute(0, 2, 3, 1) if cl else x; op = out.permute(0, 2, 3, 1) if cl else out
            d = []
            for _ in range(30):
                e = batch(lambda: plan.execute(xp, op)); f = batch(lambda: layer(x)); d.append(f - e)
        res[f"{cls.__name__} {'cl' if cl else 'nchw'} overhead us"] = statistics.median(d)
exec(open(__file__.replace("dropin_last_plan_ab.py", "mobilenet_v2.py")).read().split("ref = randomize")[0])
torch.manual_seed(0)
m = randomize(mobilenet_v2()); nt.replace_conv2d(m, threads=2, direct=True)
for mf in (torch.contiguous_format, torch.channels_last):
    x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf); mm = m.to(memory_format=mf)
    with torch.no_grad():
        for _ in range(3): mm(x)
        ts = []
        for _ in range(15):
            t0 = time.perf_counter(); mm(x); ts.append((time.perf_counter() - t0) * 1e3)
    res[f"mobilenet_v2 {'cl' if mf == torch.channels_last else 'nchw'} ms"] = statistics.median(ts)
print(json.dumps(res))
