"""Session 24: ResNet-18 through the drop-in (2 threads, batch 1, nova on PyTorch's threads): the forward
time and the 512-channel layers' walls when those layers' tile is the engine's choice ("auto", F(4,3) at
7x7) or fixed (F(2,3), F(3,3)...), interleaved. In a network their transformed filters (U) come from DRAM.
Usage: resnet_deep_tiles.py nchw|cl REPS CHANNELS TILE [TILE...] (CHANNELS: the layers' input channels)
NET=vgg in the environment runs VGG-16's feature extractor instead; PRECISION=bf16|int8 the drop-in's precision."""
import os, sys, copy, statistics, time, torch
sys.path.insert(0, "/work/main/bench")
import network_speed as ns
import nova.torch as nt
torch.set_num_threads(2)
fmt, reps, channels, tiles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
mf = torch.channels_last if fmt == "cl" else torch.contiguous_format
ref = ns.randomize(ns.vgg16_features() if os.environ.get("NET") == "vgg" else ns.resnet18_features(), 1)
x = torch.randn(1, 3, 224, 224).contiguous(memory_format=mf)
models = {}
precision = os.environ.get("PRECISION", "fp32")
for tile in tiles:
    m = copy.deepcopy(ref)
    if tile != "auto":  # the chosen layers first, with the tile (and a low precision's catalogue transform)
        for parent in list(m.modules()):
            for name, child in list(parent.named_children()):
                if (isinstance(child, torch.nn.Conv2d) and child.in_channels == channels and child.kernel_size == (3, 3)
                        and child.stride == (1, 1)):
                    setattr(parent, name, nt.WinogradConv2d.from_conv2d(child, tile=tile, precision=precision,
                                                                        threads=2))
    nt.replace_conv2d(m, threads=2, precision=precision)
    models[tile] = m.to(memory_format=mf).eval()
times = {t: [] for t in tiles}
with torch.no_grad():
    y0 = ref.to(memory_format=mf)(x)
    for t, m in models.items():
        for _ in range(5): m(x)
        print(t, "rel L2 vs torch %.2e" % ((m(x) - y0).norm() / y0.norm()).item())
    for r in range(reps):
        for t, m in models.items():
            ts = []
            for _ in range(10):
                a = time.perf_counter(); m(x); ts.append(time.perf_counter() - a)
            times[t].append(statistics.median(ts) * 1e3)
    for t, m in models.items():
        with nt.profile() as layers:
            for _ in range(10): m(x)
        deep = [p for p in layers if p["layer"][1] == channels]
        print(f"{t:5s} forward median {statistics.median(times[t]):.2f} ms (min {min(times[t]):.2f}); {channels}-ch layers: " +
              ", ".join(f"{p['tile']} {p['wall_ms']/p['executes']:.3f} ms (gemm {p['gemm_ms']/p['executes']:.2f})" for p in deep))
