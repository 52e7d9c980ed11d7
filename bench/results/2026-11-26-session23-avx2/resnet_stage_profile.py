"""Session 23: where ResNet-18 through the drop-in (channels_last, 2 threads, batch 1) spends nova's time: nova.torch.profile()
over 20 forwards after 10 warm-ups; prints the forward time, each nova layer's wall and thread ms per stage, and the
sums. Run under different OpenMP spin settings, e.g. GOMP_SPINCOUNT=10000 .venv/bin/python resnet_stage_profile.py cl
"""
import sys, copy, torch, time
sys.path.insert(0, "/work/main/bench")
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
ref = ns.randomize(ns.resnet18_features(), 1)
drop = copy.deepcopy(ref); nt.replace_conv2d(drop, threads=2)
mf = torch.channels_last if sys.argv[1] == "cl" else torch.contiguous_format
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
m = copy.deepcopy(drop).to(memory_format=mf).eval()
with torch.no_grad():
    for _ in range(10): m(x)
    with nt.profile() as layers:
        t = time.perf_counter()
        for _ in range(20): m(x)
        el = (time.perf_counter() - t) / 20 * 1e3
print("forward ms %.2f" % el)
tot = 0
for p in layers:
    e = p["executes"]
    tot += p["wall_ms"] / e
    print(p["layer"], p["tile"], "wall %.3f" % (p["wall_ms"] / e), "in %.3f gemm %.3f out %.3f idle %.3f" % (p["input_ms"]/e, p["gemm_ms"]/e, p["output_ms"]/e, p["idle_ms"]/e))
print("sum of nova walls per forward", tot)
print("idle thread ms per forward, summed over layers %.2f" % sum(p["idle_ms"] / p["executes"] for p in layers))
