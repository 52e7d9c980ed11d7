"""Session 27: random grouped direct layers with 2, 4 or 8 channels per group in and out (the grouped-lanes form on
NHWC and NCHW16c): NCHW, NHWC and NCHW16c x 1-3 threads bit for bit against NCHW at 1 thread, and within 1e-5 of a
float64 reference. Made from session 26's fuzz_phases.py (the sampling of the layers changed).
  python fuzz_grouped_lanes.py SEED TRIALS   (prints how many plans per layout said they took the lanes form)"""
import sys, numpy as np, nova
rng = np.random.default_rng(int(sys.argv[1]))
def ref(x, w, b, stride, pad, dil, groups, relu):
    N, C, H, W = x.shape; K, Cg, R, S = w.shape
    OH = (H + 2 * pad[0] - dil * (R - 1) - 1) // stride + 1; OW = (W + 2 * pad[1] - dil * (S - 1) - 1) // stride + 1
    xp = np.zeros((N, C, H + 2 * pad[0], W + 2 * pad[1])); xp[:, :, pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    out = np.zeros((N, K, OH, OW)); Kg = K // groups
    for g in range(groups):
        for u in range(R):
            for v in range(S):
                patch = xp[:, g * Cg:(g + 1) * Cg, u * dil:u * dil + stride * (OH - 1) + 1:stride, v * dil:v * dil + stride * (OW - 1) + 1:stride]
                out[:, g * Kg:(g + 1) * Kg] += np.einsum('nchw,kc->nkhw', patch, w[g * Kg:(g + 1) * Kg, :, u, v])
    out += b[None, :, None, None]
    return np.maximum(out, 0) if relu else out
def to_layout(x, layout):
    if layout == 'nchw': return np.ascontiguousarray(x)
    if layout == 'nhwc': return np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    N, C, H, W = x.shape; CB = (C + 15) // 16; y = np.zeros((N, CB * 16, H, W), np.float32); y[:, :C] = x
    return np.ascontiguousarray(y.reshape(N, CB, 16, H, W).transpose(0, 1, 3, 4, 2))
def from_layout(y, layout, shape):
    N, K, OH, OW = shape
    if layout == 'nchw': return y.reshape(shape)
    if layout == 'nhwc': return y.reshape(N, OH, OW, K).transpose(0, 3, 1, 2)
    CB = (K + 15) // 16; return y.reshape(N, CB, OH, OW, 16).transpose(0, 1, 4, 2, 3).reshape(N, CB * 16, OH, OW)[:, :K]
n_phase = {'nchw': 0, 'nhwc': 0, 'nchw16c': 0}
for trial in range(int(sys.argv[2])):
    groups = int(rng.integers(2, 41))
    cg = int(rng.choice([2, 4, 8])); kg = cg
    C, K = cg * groups, kg * groups
    R = int(rng.choice([1, 3, 5, 7])); S = int(rng.choice([1, 3, 5, 7])) if rng.random() < 0.2 else R
    stride = int(rng.choice([1, 1, 2, 3])); dil = int(rng.choice([1, 1, 2])); pad = (int(rng.integers(0, R + 1)), int(rng.integers(0, S + 1)))
    N = int(rng.integers(1, 3)); H = int(rng.integers(1, 30)); W = int(rng.integers(1, 60))
    OH = (H + 2 * pad[0] - dil * (R - 1) - 1) // stride + 1; OW = (W + 2 * pad[1] - dil * (S - 1) - 1) // stride + 1
    if OH < 1 or OW < 1: continue
    relu = bool(rng.random() < 0.5)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32); w = rng.standard_normal((K, cg, R, S)).astype(np.float32); b = rng.standard_normal(K).astype(np.float32)
    expect = ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, pad, dil, groups, relu)
    base = None
    for layout in ('nchw', 'nhwc', 'nchw16c'):
        for threads in (1, 2, 3):
            p = nova.ConvPlan((N, C, H, W, K), kernel=(R, S), padding=pad, stride=stride, dilation=dil, groups=groups, weights=w, bias=b, layout=layout, relu=relu, threads=threads, algorithm='direct')
            if threads == 1 and 'channels in lanes' in repr(p): n_phase[layout] += 1
            xin = to_layout(x, layout); out = np.zeros({'nchw': (N, K, OH, OW), 'nhwc': (N, OH, OW, K), 'nchw16c': (N, (K + 15) // 16, OH, OW, 16)}[layout], np.float32)
            p.execute(xin, out)
            y = from_layout(out, layout, (N, K, OH, OW))
            if base is None:
                base = y.copy()
                err = np.linalg.norm(y - expect) / max(np.linalg.norm(expect), 1e-30)
                assert err < 1e-5, (trial, err, repr(p))
            elif not np.array_equal(y.view(np.uint32), base.view(np.uint32)):
                print('BITS DIFFER', trial, layout, threads, repr(p)); sys.exit(1)
print('ok', n_phase)
