"""Session 23: nova.ConvPlan (automatic choice: the direct path on these) beside PyTorch 2.15 F.conv2d on the layers
the drop-in leaves to PyTorch unless direct=True: ResNet-18's 7x7 stride-2 stem, its stride-2 3x3 and 1x1 layers, and
three depthwise layers; NCHW and NHWC (channels_last), 2 threads, median of 30 calls after 5 warm-ups, 3 alternated
repetitions; prints the medians and torch/nova, and nova vs PyTorch rel L2.

  .venv/bin/python direct_vs_torch.py
"""
import time, statistics, torch, numpy as np, sys
import torch.nn.functional as F
from nova import _nova
torch.set_num_threads(2)
layers = [  # N,C,H,W,K,k,stride,pad,groups
 (1,3,224,224,64,7,2,3,1),
 (1,64,56,56,128,3,2,1,1),(1,128,28,28,256,3,2,1,1),(1,256,14,14,512,3,2,1,1),
 (1,64,56,56,128,1,2,0,1),(1,128,28,28,256,1,2,0,1),(1,256,14,14,512,1,2,0,1),
 (1,32,112,112,32,3,1,1,32),(1,128,56,56,128,3,1,1,128),(1,512,14,14,512,3,1,1,512),
]
def t(f, reps=30):
    for _ in range(5): f()
    ts=[]
    for _ in range(reps):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    return statistics.median(ts)*1e3
for (N,C,H,W,K,k,s,p,g) in layers:
  for cl in (False, True):
    x=torch.randn(N,C,H,W); w=torch.randn(K,C//g,k,k)
    if cl: x=x.contiguous(memory_format=torch.channels_last)
    plan=_nova.ConvPlan((N,C,H,W,K),kernel=(k,k),padding=(p,p),stride=s,groups=g,weights=w.numpy(),layout="nhwc" if cl else "nchw",threads=2)
    OH=(H+2*p-k)//s+1
    xin = x.permute(0,2,3,1).contiguous() if cl else x
    out=torch.empty(N,OH,OH,K) if cl else torch.empty(N,K,OH,OH)
    ref=F.conv2d(x,w,stride=s,padding=p,groups=g)
    plan.execute(xin,out)
    o2 = out.permute(0,3,1,2) if cl else out
    err=float((o2-ref).norm()/ref.norm())
    res=[]
    for _ in range(3):
        tt=t(lambda: F.conv2d(x,w,stride=s,padding=p,groups=g)); tn=t(lambda: plan.execute(xin,out)); res.append((tt,tn))
    tt=statistics.median(r[0] for r in res); tn=statistics.median(r[1] for r in res)
    print(f"{N}x{C}x{H}x{W}->{K} k{k} s{s} g{g} {'nhwc' if cl else 'nchw'}: torch {tt:.3f} nova {tn:.3f} torch/nova {tt/tn:.2f} err {err:.1e}", flush=True)
