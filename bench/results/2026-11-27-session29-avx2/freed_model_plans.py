import torch, gc, nova.torch as nt
torch.manual_seed(0)
x = torch.randn(1, 16, 20, 20)
sds = [torch.nn.Conv2d(16, 16, 3, padding=1, bias=False).state_dict() for _ in range(6)]
hits = 0
for i, sd in enumerate(sds):
    m = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)).eval()
    m[0].load_state_dict(sd)
    ref = m(x).detach()
    nt.replace_conv2d(m)
    with torch.no_grad():
        y = m(x)
    err = ((y - ref).norm() / ref.norm()).item()
    print(i, "weight ptr", hex(m[0].weight.data_ptr()), "version", m[0].weight._version, "rel err %.2e" % err)
    del m; gc.collect()


