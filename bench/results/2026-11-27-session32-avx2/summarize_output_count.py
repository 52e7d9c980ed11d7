#!/usr/bin/env python3
"""Medians of output_count_profile.sh's log: the output stage's thread time before (old) and after (new),
and the difference as a share of the layer's whole thread time (old). Usage: summarize_output_count.py LOG"""
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 8:
        continue
    _, layer, dtype, layout, which, _, thread_ms, output_ms = f
    runs[(layer, dtype, layout, which)].append((float(thread_ms), float(output_ms)))
for key in sorted({k[:3] for k in runs}):
    old, new = runs[key + ("old",)], runs[key + ("new",)]
    out_old = statistics.median(r[1] for r in old)
    out_new = statistics.median(r[1] for r in new)
    thread_old = statistics.median(r[0] for r in old)
    thread_new = statistics.median(r[0] for r in new)
    print("%-16s %s %-7s output %.3f -> %.3f ms (%+.1f %% of thread time); thread %.3f -> %.3f ms"
          % (*key, out_old, out_new, 100 * (out_new - out_old) / thread_old, thread_old, thread_new))
