import json, subprocess, sys
LAYERS=["1,64,56,56,64","1,128,28,28,128","1,256,14,14,256","1,512,7,7,512","8,64,56,56,64","8,128,28,28,128","8,256,14,14,256","8,512,7,7,512","1,64,224,224,64"]
CFGS=[("fp16","fp16",[]),("bf16","bf16",[]),("int8","int8",["--calibrate"]),("fp32","fp32",[])]
# The two binaries: HEAD before the change and after it, built in the release tree and copied aside.
bins={"before":"/tmp/nova_base","after":"/tmp/nova_new"}
res={}
for layer in LAYERS:
  for dt,io,extra in CFGS:
    for rnd in range(3):
      for name,b in (bins.items() if rnd%2==0 else reversed(list(bins.items()))):
        out=subprocess.run([b,"bench","conv","--shape",layer,"--dtype",dt,"--io",io,"--threads","2","--format","json"]+extra,capture_output=True,text=True,check=True).stdout
        ms=json.loads(out)["median_ms"]
        res.setdefault((layer,dt),{}).setdefault(name,[]).append(ms)
    r=res[(layer,dt)]
    print(f"{layer:16s} {dt}/{io}: before {min(r['before']):.3f} after {min(r['after']):.3f} ms  before/after {min(r['before'])/min(r['after']):.2f}",flush=True)
json.dump({f"{k[0]} {k[1]}":v for k,v in res.items()},open(sys.argv[1],"w"),indent=1)
