"""What the drop-in's weight fingerprint (_CachedPlan.unchanged, session 33) costs a layer's eager call:
the Python around the engine's execute (layer call minus plan.execute, medians over 30 alternations of
300-call batches) with the check as built and with it patched out (unchanged() -> True), alternated in
one process, for WinogradConv2d and NovaConv2d on a tiny layer (1x8x4x4 -> 8) and on 1x256x14x14 -> 256
(whose weight is 2.4 MB: the sampled words are spread over it). Prints JSON, microseconds."""
import json
import statistics
import time

import torch
import nova.torch as nt

torch.set_num_threads(2)
checked = nt._CachedPlan.unchanged


def batch(f, n=300):
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n * 1e6


res = {}
for shape in ((1, 8, 4, 4, 8), (1, 256, 14, 14, 256)):
    n, c, h, w, k = shape
    for cls in (nt.NovaConv2d, nt.WinogradConv2d):
        layer = cls.from_conv2d(torch.nn.Conv2d(c, k, 3, padding=1).eval(), threads=2)
        x = torch.randn(n, c, h, w)
        with torch.no_grad():
            out = layer(x)
            plan = layer._last_plan.plan
            with_check, without = [], []
            for _ in range(30):
                e = batch(lambda: plan.execute(x, out))
                nt._CachedPlan.unchanged = checked
                with_check.append(batch(lambda: layer(x)) - e)
                nt._CachedPlan.unchanged = lambda self: True
                without.append(batch(lambda: layer(x)) - e)
            nt._CachedPlan.unchanged = checked
        name = f"{cls.__name__} {'x'.join(map(str, shape))}"
        res[name] = {"overhead_us_checked": round(statistics.median(with_check), 2),
                     "overhead_us_unchecked": round(statistics.median(without), 2),
                     "difference_us": round(statistics.median(a - b for a, b in zip(with_check, without)), 2)}
print(json.dumps(res, indent=1))
