"""Session 20: NHWC plans (FP32; int8 calibrated, int8 in and out; bf16 in and out) of two nova binaries
timed interleaved, 2 threads: python3 ab_nhwc.py reps old=binary,new=binary"""
import json, statistics, subprocess, sys
reps=int(sys.argv[1]); bins=dict(x.split("=") for x in sys.argv[2].split(","))
names=list(bins)
V={"fp32":[],"int8 i8/o8":["--dtype","int8","--calibrate","--input-type","int8","--output-type","int8"],"bf16 io":["--dtype","bf16","--io","bf16"]}
for layer in ["1,64,56,56,64","1,128,28,28,128","1,256,14,14,256","8,64,56,56,64"]:
  for v,extra in V.items():
    t={b:[] for b in names}
    for r in range(reps):
        for b in (names[r%2:]+names[:r%2]):
            out=subprocess.run([bins[b],"bench","conv","--shape",layer,"--threads","2","--layout","nhwc","--format","json",*extra],capture_output=True,text=True)
            t[b].append(json.loads(out.stdout)["median_ms"])
    base=statistics.median(t[names[0]])
    print(f"{layer:>16} NHWC {v:>10}: "+"  ".join(f"{b} {min(x):.3f}/{statistics.median(x):.3f} ({statistics.median(x)/base:.2f})" for b,x in t.items()),flush=True)
