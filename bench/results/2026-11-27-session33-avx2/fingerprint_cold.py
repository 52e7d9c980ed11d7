"""The drop-in's weight fingerprint (_nova._memory_fingerprint, 16 sampled words) on memory out of the
caches, as in a network between a layer's calls: after a pass over 256 MB, one call on each of many
weight tensors (each sample a cache miss, and a TLB miss on large tensors); against repeated calls on one
tensor (warm). 5 rounds, each evicting first; medians. Prints microseconds per call."""
import statistics
import time

import torch
import nova._nova as nv

evict = torch.zeros(64 << 20)  # 256 MB
for c, count in ((8, 2000), (64, 1000), (256, 100), (512, 40)):
    ws = [torch.randn(c, c, 3, 3) for _ in range(count)]
    regions = [(w.data_ptr(), w.numel() * 4) for w in ws]
    cold, warm = [], []
    for _ in range(5):
        evict.add_(1.0)
        t0 = time.perf_counter()
        for r in regions:
            nv._memory_fingerprint(*r)
        cold.append((time.perf_counter() - t0) / count * 1e6)
        r = regions[0]
        t0 = time.perf_counter()
        for _ in range(count):
            nv._memory_fingerprint(*r)
        warm.append((time.perf_counter() - t0) / count * 1e6)
    print(f"{c}x{c}x3x3 ({ws[0].numel() * 4 / 1e6:.3f} MB, {count} tensors): cold {statistics.median(cold):.2f} us "
          f"(range {min(cold):.2f}-{max(cold):.2f}), warm {statistics.median(warm):.2f} us")
