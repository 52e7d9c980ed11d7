import json, statistics, subprocess, sys
old, new, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [l.split("|") for l in sys.argv[4:]]
for layer, dtype in cases:
    a=[];b=[];ta=tb=None
    for r in range(reps):
        for binary in ([old,new] if r%2==0 else [new,old]):
            cmd=[binary,"bench","conv","--shape",layer,"--threads","2","--format","json"]+dtype.split()
            d=json.loads(subprocess.run(cmd,capture_output=True,text=True,check=True).stdout)
            if binary==old: a.append(d["median_ms"]); ta=d.get("tile")
            else: b.append(d["median_ms"]); tb=d.get("tile")
    ratios=[y/x for x,y in zip(a,b)]
    print(f"{layer:>16} {dtype:<40} | old {ta} {min(a):.3f} (median {statistics.median(a):.3f}) | new {tb} {min(b):.3f} (median {statistics.median(b):.3f}) | new/old best {min(b)/min(a):.2f} paired median {statistics.median(ratios):.2f}", flush=True)
