"""Session 22: the AVX2 FP32 estimate with U's streaming overlapping the GEMMs (where U is prefetched),
on the layers whose automatic tile it changes: the old binary's automatic choice, the new one's, and every
forced tile, interleaved, 2 threads, NCHW and NCHW16c. Prints min / median of the repetitions' median_ms.

  python3 ab_choice_overlap.py REPS OLD NEW [N,C,H,W,K ...]   (default: the two layers below)
"""
import json, statistics, subprocess, sys

reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def run(binary, shape, args):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--threads", "2", "--format", "json", *args],
                       capture_output=True, text=True, timeout=300)
    j = json.loads(r.stdout)
    return j["median_ms"], j.get("tile") or j.get("algorithm")


for shape in sys.argv[4:] or ["1,512,14,14,512", "1,512,28,28,512"]:
    for lay in ["nchw", "nchw16c"]:
        vs = [("old auto", old, []), ("new auto", new, [])] + [(t, new, ["--tile", t]) for t in ("2,3", "4,3", "6,3", "7,3")]
        times, tiles = {v[0]: [] for v in vs}, {}
        for rep in range(reps):
            for name, b, a in (vs if rep % 2 == 0 else vs[::-1]):
                ms, tile = run(b, shape, a + ["--layout", lay])
                times[name].append(ms)
                tiles[name] = tile
        print(f"{shape} {lay}: " + "  ".join(f"{n} [{tiles[n]}] {min(t):.3f}/{statistics.median(t):.3f}"
                                            for n, t in times.items()), flush=True)
