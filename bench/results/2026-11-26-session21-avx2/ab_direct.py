"""Session 21: the direct path's layers, two nova binaries interleaved (order alternating), 2 threads.
  python3 ab_direct.py reps old_binary new_binary
Prints per layer and layout: each binary's min / median of the repetitions' median_ms and new/old medians."""
import json, statistics, subprocess, sys

reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
layers = [  # (name, args): first layers of image networks, stride-2 downsampling, a 1x1, grouped
    ("1x3x224x224->64 3x3", ["--shape", "1,3,224,224,64", "--algorithm", "direct"]),
    ("1x3x224x224->64 7x7 s2", ["--shape", "1,3,224,224,64", "--kernel", "7", "--stride", "2", "--pad", "3"]),
    ("1x3x224x224->32 3x3 s2", ["--shape", "1,3,224,224,32", "--stride", "2"]),
    ("1x16x112x112->32 s2", ["--shape", "1,16,112,112,32", "--stride", "2"]),
    ("1x32x56x56->64 s2", ["--shape", "1,32,56,56,64", "--stride", "2"]),
    ("1x64x56x56->128 s2", ["--shape", "1,64,56,56,128", "--stride", "2"]),
    ("1x64x56x56->64 1x1", ["--shape", "1,64,56,56,64", "--kernel", "1"]),
    ("1x64x56x56->64 g4", ["--shape", "1,64,56,56,64", "--groups", "4"]),
    ("1x64x56x56->64 d2", ["--shape", "1,64,56,56,64", "--dilation", "2", "--pad", "2"]),
    ("1x64x56x56 depthwise", ["--shape", "1,64,56,56,64", "--groups", "64"]),
    ("1x128x56x56 dw s2", ["--shape", "1,128,56,56,128", "--groups", "128", "--stride", "2"]),
    ("8x32x112x112 depthwise", ["--shape", "8,32,112,112,32", "--groups", "32"]),
]
import os
if os.environ.get("LAYERS"):  # a subset by name, comma-separated substrings
    layers = [l for l in layers if any(k in l[0] for k in os.environ["LAYERS"].split(","))]
for name, args in layers:
    for layout in ("nchw", "nhwc"):
        t = {old: [], new: []}
        for r in range(reps):
            for b in ((old, new) if r % 2 == 0 else (new, old)):
                out = subprocess.run([b, "bench", "conv", *args, "--layout", layout, "--threads", "2", "--format", "json"],
                                     capture_output=True, text=True, timeout=300)
                t[b].append(json.loads(out.stdout)["median_ms"])
        mo, mn = statistics.median(t[old]), statistics.median(t[new])
        print(f"{name:26s} {layout}: old {min(t[old]):.3f}/{mo:.3f}  new {min(t[new]):.3f}/{mn:.3f}  new/old {mn / mo:.2f}",
              flush=True)
