import torch, time, nova.torch as nt, sys
torch.set_num_threads(2)
n = int(sys.argv[1])
m = torch.nn.Sequential(*[torch.nn.Conv2d(32, 32, 3, padding=1) for _ in range(n)]).eval()
rep = nt.replace_conv2d(m, direct=True)
x = torch.randn(1, 32, 28, 28)
with torch.no_grad():
    for i in range(4):
        t0 = time.perf_counter(); m(x); print(n, "layers, forward", i, "%.1f ms" % ((time.perf_counter() - t0) * 1e3), "plans cached", len(nt._plans))
