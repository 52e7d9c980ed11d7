import json, subprocess, sys
# Session 15's low-precision changes, before (session start, 6d093d8) and after, alternated, 2 threads,
# min of 3 medians per layer and configuration.
LAYERS=["1,64,56,56,64","1,128,28,28,128","1,256,14,14,256","1,512,7,7,512","8,64,56,56,64","8,128,28,28,128","8,256,14,14,256","8,512,7,7,512","1,64,224,224,64"]
CFGS={"int8 cal":["--dtype","int8","--calibrate"],"int8 cal, int8 tensors":["--dtype","int8","--calibrate","--io","int8"],
      "int8-spatial cal":["--dtype","int8-spatial","--calibrate"],"fp16, fp16 tensors":["--dtype","fp16","--io","fp16"],"fp32":["--dtype","fp32"]}
# The two binaries, built in the release tree and copied aside.
bins={"before":"/tmp/nova_base","after":"/tmp/nova_final"}
res={}
for layer in LAYERS:
  row=[layer]
  for name,opts in CFGS.items():
    r={"before":[],"after":[]}
    for rnd in range(3):
      for k,b in (list(bins.items()) if rnd%2==0 else list(reversed(list(bins.items())))):
        out=subprocess.run([b,"bench","conv","--shape",layer,"--threads","2","--format","json"]+opts,capture_output=True,text=True,check=True).stdout
        r[k].append(json.loads(out)["median_ms"])
    res[f"{layer} {name}"]=r
    row.append(f"{min(r['before']):.3f} -> {min(r['after']):.3f} ({min(r['before'])/min(r['after']):.2f}x)")
  print(" | ".join(row),flush=True)
json.dump(res,open(sys.argv[1],"w"),indent=1)
