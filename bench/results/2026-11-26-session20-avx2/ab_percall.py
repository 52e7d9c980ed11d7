"""Session 20: per-call (uncalibrated, FP32 input) int8 and int8-spatial plans of two nova binaries timed
interleaved, 2 threads, NCHW16c: python3 ab_percall.py reps name=binary,name=binary"""
import json, statistics, subprocess, sys
reps=int(sys.argv[1]); bins=dict(x.split("=") for x in sys.argv[2].split(","))
cases=[("8,256,14,14,256","int8"),("1,512,7,7,512","int8"),("8,512,7,7,512","int8"),("1,64,56,56,64","int8-spatial"),("1,128,28,28,128","int8-spatial"),("1,256,14,14,256","int8-spatial"),("8,64,56,56,64","int8-spatial")]
names=list(bins)
for layer,dt in cases:
    t={b:[] for b in names}
    for r in range(reps):
        order=names[r%len(names):]+names[:r%len(names)]
        for b in order:
            out=subprocess.run([bins[b],"bench","conv","--shape",layer,"--threads","2","--dtype",dt,"--layout","nchw16c","--format","json"],capture_output=True,text=True)
            t[b].append(json.loads(out.stdout)["median_ms"])
    base=statistics.median(t[names[0]])
    print(f"{layer:>16} {dt:>12} per call, fp32 in: "+"  ".join(f"{b} {min(v):.3f}/{statistics.median(v):.3f} ({statistics.median(v)/base:.2f})" for b,v in t.items()),flush=True)
