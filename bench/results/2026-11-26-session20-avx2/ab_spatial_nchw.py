"""Session 20: int8-spatial plans (FP32 NCHW input, per call and calibrated) of two nova binaries timed
interleaved, 2 threads: python3 ab_spatial_nchw.py reps old=binary,new=binary"""
import json, statistics, subprocess, sys
reps=int(sys.argv[1]); bins=dict(x.split("=") for x in sys.argv[2].split(","))
names=list(bins)
for layer in ["1,64,56,56,64","1,128,28,28,128","8,64,56,56,64","1,64,224,224,64"]:
  for extra in [[],["--calibrate"]]:
    t={b:[] for b in names}
    for r in range(reps):
        for b in (names[r%2:]+names[:r%2]):
            out=subprocess.run([bins[b],"bench","conv","--shape",layer,"--threads","2","--dtype","int8-spatial","--format","json",*extra],capture_output=True,text=True)
            t[b].append(json.loads(out.stdout)["median_ms"])
    base=statistics.median(t[names[0]])
    print(f"{layer:>16} int8-spatial NCHW fp32 in {'calibrated' if extra else 'per call':>10}: "+"  ".join(f"{b} {min(v):.3f}/{statistics.median(v):.3f} ({statistics.median(v)/base:.2f})" for b,v in t.items()),flush=True)
