"""REFERENCE EMULATION of Winograd convolution and of nova's precision presets, in Python.

This is the *emulation path* used by the validation until nova's Python bindings (issue 7) and
nova's C++ precision-model emulation (issue 4) land; evaluate.py swaps it out for nova's engine
then and says which path produced each number. Nothing here is nova's C++ code.

* Transforms are built exactly, in ``fractions.Fraction``, by the Cook-Toom construction with a
  point at infinity, and verified exactly (``verify``).
* ``winograd_conv2d`` runs a 2D F(m x m, r x r) convolution in torch with the rounding of a preset
  (see PRESETS) applied at the stage boundaries; with preset "fp64" it is a float64 reference.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

INF = "inf"


# ---------------------------------------------------------------------------------------------
# exact Cook-Toom construction
# ---------------------------------------------------------------------------------------------
def parse_points(spec) -> list:
    """'0,1,-1,1/2,inf' or a sequence of numbers/strings -> list of Fraction and the marker INF."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out = []
    for it in items:
        s = str(it).strip().lower()
        if s in ("inf", "infinity", "oo", "\u221e"):
            out.append(INF)
        else:
            try:
                out.append(Fraction(s) if isinstance(it, str) else Fraction(it))
            except (ValueError, ZeroDivisionError) as e:
                raise ValueError(f"bad interpolation point {it!r}: {e}") from None
    finite = [p for p in out if p != INF]
    if len(set(finite)) != len(finite):
        raise ValueError(f"interpolation points must be distinct: {spec!r}")
    if out.count(INF) > 1:
        raise ValueError("at most one point at infinity")
    return out


def _poly_mul(a: list, b: list) -> list:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _poly_from_roots(roots) -> list:
    p = [Fraction(1)]
    for r in roots:
        p = _poly_mul(p, [-r, Fraction(1)])
    return p


@dataclass
class Transform:
    """Exact F(m, r) Winograd transform: y = AT [(G g) * (BT d)] for 1D correlation."""
    m: int
    r: int
    points: list
    AT: list  # m x n Fractions
    G: list  # n x r
    BT: list  # n x n
    name: str = ""
    origin: dict = field(default_factory=dict, repr=False)  # catalogue entry: tile, preset, id, json
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.m + self.r - 1

    def points_str(self) -> str:
        return ",".join("inf" if p == INF else str(p) for p in self.points)

    def mats(self, dtype=np.float64):
        """(AT, G, BT) as numpy arrays (float64 by default), each entry rounded once from exact."""
        key = np.dtype(dtype).str
        if key not in self._cache:
            conv = lambda M: np.array([[float(x) for x in row] for row in M], dtype=np.float64).astype(dtype)
            self._cache[key] = (conv(self.AT), conv(self.G), conv(self.BT))
        return self._cache[key]

    def max_abs_entry(self) -> float:
        return max(abs(float(x)) for M in (self.AT, self.G, self.BT) for row in M for x in row)


def cook_toom(m: int, r: int, points, name: str = "") -> Transform:
    """Build the exact Cook-Toom transform for F(m, r) from n = m + r - 1 points (one may be inf).

    Finite point f: AT column [1, f, .., f^(m-1)]; G row [1, f, .., f^(r-1)] / N_f with
    N_f = prod_{j != f}(f - f_j) over the finite points; BT row = ascending coefficients of
    prod_{j != f}(x - f_j). Point inf: AT column [0..0, 1]; G row [0..0, 1]; BT row =
    coefficients of prod_j (x - f_j) over all finite points.
    """
    if m < 1 or r < 1:
        raise ValueError(f"F({m},{r}): m and r must be >= 1")
    pts = parse_points(points)
    n = m + r - 1
    if len(pts) != n:
        raise ValueError(f"F({m},{r}) needs n = m + r - 1 = {n} points, got {len(pts)}: {points!r}")
    finite = [p for p in pts if p != INF]
    AT = [[Fraction(0)] * n for _ in range(m)]
    G = [[Fraction(0)] * r for _ in range(n)]
    BT = [[Fraction(0)] * n for _ in range(n)]
    for a, f in enumerate(pts):
        if f == INF:
            AT[m - 1][a] = Fraction(1)
            G[a][r - 1] = Fraction(1)
            coeffs = _poly_from_roots(finite)
        else:
            others = [q for q in finite if q != f]
            Nf = math.prod((f - q for q in others), start=Fraction(1))
            for i in range(m):
                AT[i][a] = f ** i
            for k in range(r):
                G[a][k] = f ** k / Nf
            coeffs = _poly_from_roots(others)
        for i, c in enumerate(coeffs):
            BT[a][i] = c
    t = Transform(m, r, pts, AT, G, BT, name=name)
    verify(t)
    return t


def verify(t: Transform) -> None:
    """Exact check that y_i = sum_k d_{i+k} g_k for all basis d, g (the bilinear tensor), in Fractions.

    Raises ValueError when the transform is not an exact correlation algorithm.
    """
    n, m, r = t.n, t.m, t.r
    for i in range(n):  # d = e_i
        for k in range(r):  # g = e_k
            prod = [t.G[a][k] * t.BT[a][i] for a in range(n)]
            for o in range(m):
                y = sum((t.AT[o][a] * prod[a] for a in range(n)), Fraction(0))
                want = Fraction(1) if i == o + k else Fraction(0)
                if y != want:
                    raise ValueError(f"transform F({m},{r}) points {t.points_str()} is not exact: "
                                     f"output {o}, d_{i}, g_{k}: {y} != {want}")


def balance_pow2(t: Transform) -> Transform:
    """Exact power-of-two diagonal rescaling of each Winograd position a: G row a times 2^s_a,
    BT row a times 2^t_a, AT column a times 2^-(s_a + t_a), chosen so that the three norms
    ||AT[:,a]||, ||G[a,:]||, ||BT[a,:]|| are as close as powers of two allow to their geometric mean.
    The product is unchanged (verified exactly); only the range of U and V changes."""
    n = t.n
    AT = [row[:] for row in t.AT]
    G = [row[:] for row in t.G]
    BT = [row[:] for row in t.BT]
    for a in range(n):
        na = math.sqrt(sum(float(AT[i][a]) ** 2 for i in range(t.m)))
        ng = math.sqrt(sum(float(x) ** 2 for x in G[a]))
        nb = math.sqrt(sum(float(x) ** 2 for x in BT[a]))
        gm = (na * ng * nb) ** (1.0 / 3.0)
        sg = round(math.log2(gm / ng))
        sb = round(math.log2(gm / nb))
        fg, fb = Fraction(2) ** sg, Fraction(2) ** sb
        G[a] = [x * fg for x in G[a]]
        BT[a] = [x * fb for x in BT[a]]
        for i in range(t.m):
            AT[i][a] = AT[i][a] / (fg * fb)
    out = Transform(t.m, t.r, list(t.points), AT, G, BT, name=(t.name + "+bal") if t.name else "bal")
    verify(out)
    return out


# ---------------------------------------------------------------------------------------------
# point sets of the validation (seed paper, practitioners)
# ---------------------------------------------------------------------------------------------
POINT_SETS = {
    # (m, r): {name: (points, source)}
    (4, 3): {
        "standard": ("0,1,-1,2,-2,inf", "seed paper Table 1 standard points; also Lavin & Gray's F(4,3)"),
        "nova": ("0,5/6,-5/6,7/6,-7/6,inf", "seed paper Table 2 discovered points"),
        "nova-dyadic": ("0,3/4,-3/4,5/4,-5/4,inf", "seed paper Table 4 dtype-aware (dyadic) points"),
        "onednn-old": ("0,5/8,-5/8,3/2,-3/2,inf", "oneDNN's former F(4,3) points"),
    },
    (6, 3): {
        "standard": ("0,1,-1,2,-2,3,-3,inf", "seed paper Table 1 standard points"),
        "nova": ("0,3/5,-3/5,1,-1,7/6,-7/6,inf", "seed paper Table 2 discovered points"),
        "practitioners": ("0,1,-1,2,-2,1/2,-1/2,inf", "NNPACK / ncnn / TVM F(6,3)"),
    },
    (7, 3): {
        # No published F(7,3) set: the standard points only (nova's own is the catalogue entry).
        "standard": ("0,1,-1,2,-2,3,-3,4,inf", "the seed paper's standard points, extended to nine"),
    },
    (8, 3): {
        "standard": ("0,1,-1,2,-2,3,-3,4,-4,inf", "seed paper Table 1 standard points"),
        "nova": ("0,2/5,-2/5,5/6,-5/6,1,-1,7/6,-7/6,inf", "seed paper Table 2 discovered points"),
        "tvm": ("0,1,-1,2,-2,1/2,-1/2,-1/4,4,inf", "TVM's F(8,3) points"),
    },
}


# What practitioners ship, per tile (the grid's "practitioners' set"): F(4,3)'s Lavin/NNPACK set is the
# seed's "standard" itself, so the distinct shipped F(4,3) set is oneDNN's former {0,+-5/8,+-3/2}.
PRACTITIONERS = {(4, 3): "onednn-old", (6, 3): "practitioners", (8, 3): "tvm"}
# The evaluation grid of the issue: standard, the practitioners' set, the seed's NOVA points, nova's catalogue.
GRID_POINTS = {k: ["standard", PRACTITIONERS[k], "nova", "catalogue"] for k in PRACTITIONERS}
GRID_POINTS[(7, 3)] = ["standard", "catalogue"]  # F(7,3): nothing published, no seed NOVA set


def point_set(m: int, r: int, name: str, preset: str | None = None) -> Transform:
    """A named point set of POINT_SETS; a name ending in '+bal' gets balance_pow2 scaling.

    'catalogue' is nova's catalogue entry (data/catalogue.json) for F(m, r) and `preset` (the entry's
    exact points and exact scaling; 'fp64' takes the fp32 entry); 'catalogue:<preset>' a fixed entry."""
    if name == "catalogue" or name.startswith("catalogue:"):
        which = name.partition(":")[2] or preset
        if not which:
            raise ValueError("point set 'catalogue' needs a preset (the catalogue has one entry per preset)")
        return catalogue_transform(m, r, "fp32" if which == "fp64" else which)
    if name.endswith("+bal"):
        if name.startswith("catalogue"):
            raise ValueError("'catalogue+bal': catalogue entries carry their own exact scaling")
        return balance_pow2(point_set(m, r, name[:-4]))
    try:
        pts, _ = POINT_SETS[(m, r)][name]
    except KeyError:
        raise ValueError(f"no point set {name!r} for F({m},{r}); known: "
                         f"{sorted(POINT_SETS.get((m, r), {})) + ['catalogue']}") from None
    return cook_toom(m, r, pts, name=name)


# ---------------------------------------------------------------------------------------------
# nova's catalogue (data/catalogue.json, format in docs/catalogue.md), parsed here with json + fractions
# ---------------------------------------------------------------------------------------------
REPO = Path(__file__).resolve().parents[1]


def catalogue_path(path=None) -> Path:
    """The argument, else $NOVA_CATALOGUE, else the source tree's data/catalogue.json (as nova does)."""
    p = Path(path or os.environ.get("NOVA_CATALOGUE") or REPO / "data" / "catalogue.json")
    if not p.is_file():
        raise FileNotFoundError(f"nova catalogue {p} not found (regenerate it with tools/regenerate_catalogue.sh "
                                f"or point NOVA_CATALOGUE at it)")
    return p


_CATALOGUES: dict = {}


def load_catalogue(path=None) -> dict:
    """The parsed catalogue file (cached per path)."""
    p = catalogue_path(path)
    key = (str(p), p.stat().st_mtime_ns)
    if key not in _CATALOGUES:
        doc = json.loads(p.read_text())
        if doc.get("format") != "nova-catalogue" or "entries" not in doc:
            raise ValueError(f"{p}: not a nova catalogue (format {doc.get('format')!r})")
        _CATALOGUES[key] = doc
    return _CATALOGUES[key]


def catalogue_entry(m: int, r: int, preset: str, path=None) -> dict:
    tile = f"F({m},{r})"
    doc = load_catalogue(path)
    hits = [e for e in doc["entries"] if e.get("tile") == tile and e.get("preset") == preset]
    if len(hits) != 1:
        have = sorted({(e.get("tile"), e.get("preset")) for e in doc["entries"]})
        raise ValueError(f"catalogue {catalogue_path(path)}: {len(hits)} entries for {tile} {preset}; has {have}")
    return hits[0]


def _fracs(rows, shape, what) -> list:
    if len(rows) != shape[0] or any(len(row) != shape[1] for row in rows):
        raise ValueError(f"{what}: expected {shape[0]}x{shape[1]} entries")
    return [[Fraction(str(x)) for x in row] for row in rows]


def transform_from_json(obj: dict, name: str = "") -> Transform:
    """A Transform from nova's transform JSON (format 'nova-transform'): the exact matrices AT, G, BT as
    rational strings, taken as they are (not re-derived from the points) and verified exactly; then
    checked to be the Cook-Toom transform of its points up to the diagonal scaling it records
    (scaling_factors, check_recorded_scaling)."""
    if obj.get("format") != "nova-transform":
        raise ValueError(f"not a nova transform (format {obj.get('format')!r})")
    m, r = int(obj["m"]), int(obj["r"])
    n = m + r - 1
    pts = parse_points(obj["points"])
    if len(pts) != n:
        raise ValueError(f"F({m},{r}) needs {n} points, the JSON has {len(pts)}")
    t = Transform(m, r, pts, _fracs(obj["AT"], (m, n), "AT"), _fracs(obj["G"], (n, r), "G"),
                  _fracs(obj["BT"], (n, n), "BT"), name=name or obj.get("id", ""))
    verify(t)
    check_recorded_scaling(t, obj.get("scaling"))
    return t


def catalogue_transform(m: int, r: int, preset: str, path=None) -> Transform:
    """nova's catalogue entry for F(m, r) and `preset` as an exactly verified Transform named 'catalogue'."""
    e = catalogue_entry(m, r, preset, path)
    t = transform_from_json(e["transform"], name="catalogue")
    if [str(p) for p in t.points] != [str(p) for p in parse_points(e["points"])]:
        raise ValueError(f"catalogue F({m},{r}) {preset}: entry points {e['points']} != transform points")
    t.origin = dict(tile=e["tile"], preset=preset, id=e["transform"].get("id", ""),
                    json=json.dumps(e["transform"]))
    return t


def scaling_factors(t: Transform) -> tuple[list, list]:
    """Exact per-position factors (c, g) with AT[:, a] = c_a AT_ct[:, a], G[a] = g_a G_ct[a] and
    BT[a] = BT_ct[a] / (c_a g_a), where *_ct is cook_toom(t.points) (the wincnn construction).
    Raises ValueError when t is not the Cook-Toom transform of its points up to such a scaling."""
    ct = cook_toom(t.m, t.r, t.points)

    def ratio(new, old, what, a):
        q = {x / y for x, y in zip(new, old) if y != 0}
        if len(q) != 1 or any((y == 0) != (x == 0) for x, y in zip(new, old)):
            raise ValueError(f"{what} at position {a} (point {t.points[a]}) is not a multiple of Cook-Toom's")
        return q.pop()

    c, g = [], []
    for a in range(t.n):
        ca = ratio([t.AT[i][a] for i in range(t.m)], [ct.AT[i][a] for i in range(t.m)], "AT column", a)
        ga = ratio(t.G[a], ct.G[a], "G row", a)
        ba = ratio(t.BT[a], ct.BT[a], "BT row", a)
        if ca * ga * ba != 1:
            raise ValueError(f"position {a}: scalings of AT, G, BT do not cancel ({ca} * {ga} * {ba})")
        c.append(ca)
        g.append(ga)
    return c, g


def check_recorded_scaling(t: Transform, scaling: dict | None) -> None:
    """The JSON's recorded D1 (AT columns) and D2 (G rows), relative to the 'lagrange' construction
    (G rows [1, f, f^2, ..] without the normalizer), must equal the matrices' actual scaling, exactly."""
    c, g = scaling_factors(t)
    if not scaling:
        return
    if scaling.get("relative_to", "lagrange") != "lagrange":
        raise ValueError(f"scaling relative to {scaling.get('relative_to')!r} not understood")
    finite = [p for p in t.points if p != INF]
    for a, f in enumerate(t.points):
        Nf = Fraction(1) if f == INF else math.prod((f - q for q in finite if q != f), start=Fraction(1))
        d1, d2 = Fraction(str(scaling["D1"][a])), Fraction(str(scaling["D2"][a]))
        if d1 != c[a] or d2 != g[a] / Nf:
            raise ValueError(f"recorded scaling at position {a} (D1 {d1}, D2 {d2}) does not match the matrices "
                             f"(D1 {c[a]}, D2 {g[a] / Nf})")


# ---------------------------------------------------------------------------------------------
# precision presets (emulation)
# ---------------------------------------------------------------------------------------------
PRESETS = {
    "fp64": "float64 everywhere (reference; not a deployment preset)",
    "fp32": "transforms, products and accumulation in fp32 (torch float32 arithmetic)",
    "fp16-storage": "d, g and transforms in fp32; U = G g G^T and V = B^T d B rounded to fp16 "
                    "(RNE, overflow to inf); products and channel accumulation fp32; output transform fp32",
    "fp16-all": "transform matrices rounded to fp16; d rounded to fp16; every multiply and add of the "
                "input, filter and output transforms rounded to fp16 (sequential sums); GEMM fp16 operands, "
                "fp32 accumulation, M rounded to fp16; output Y in fp16 (the seed's MI300X kernel)",
    "bf16-storage": "as fp16-storage with bfloat16 (RNE) instead of fp16",
    "int8-tensor": "U, V computed in fp32 then quantized symmetric int8 (RNE, clamp +-127); one scale for U "
                   "per layer, one for V per image (v_scale='batch': per tensor over the batch, as nova's C++ "
                   "presets); int32-exact products and sums; dequantize; output fp32",
    "int8-channel": "as int8-tensor with U scaled per output channel (V per image, or per tensor)",
    "int8-tap": "as int8-tensor with U scaled per Winograd position xi and V per (image, xi) "
                "(v_scale='batch': per xi over the batch)",
}
# Where the int8 presets take V's scale from. 'image' (the network default): each image's own amax, so a
# network's predictions do not depend on the batch size. 'batch': the whole input tensor of the layer call
# (all images of the batch), nova's C++ definition (`nova error`); the two agree at batch size 1.
V_SCALES = ("image", "batch")
EVAL_PRESETS = ["fp32", "fp16-storage", "fp16-all", "bf16-storage", "int8-tensor", "int8-channel", "int8-tap"]


def _rnd(dtype):
    if dtype is None:
        return lambda t: t
    return lambda t: t.to(dtype).to(torch.float32)


def _seq_matmul_fp16(X: torch.Tensor, Mt: torch.Tensor) -> torch.Tensor:
    """X @ Mt over the last dim in fp16 arithmetic: torch's CPU float16 multiply and add compute each
    operation exactly and round it once to fp16 (RNE), so every product and every partial sum is
    rounded; terms are summed in index order, zero entries of Mt skipped. X, Mt: float16."""
    acc = None
    for i in range(Mt.shape[0]):
        row = Mt[i]
        if not bool(row.any()):
            continue
        term = X[..., i:i + 1] * row
        acc = term if acc is None else acc + term
    if acc is None:
        acc = torch.zeros(X.shape[:-1] + (Mt.shape[1],), dtype=X.dtype)
    return acc


def _transform2d(X: torch.Tensor, L: torch.Tensor, fp16_ops: bool = False) -> torch.Tensor:
    """L X L^T over the last two dims of X (L: p x q, X: ... x q x q). Written as two products with a
    2-D right operand so torch runs each as one large GEMM."""
    if fp16_ops:
        Lt = L.T.to(torch.float16)
        Y = _seq_matmul_fp16(X.to(torch.float16), Lt)  # X L^T
        return _seq_matmul_fp16(Y.transpose(-1, -2), Lt).transpose(-1, -2)  # L (X L^T)
    p, q = L.shape
    K2 = torch.kron(L, L)  # (p*p, q*q): (L X L^T)_ij = sum_kl L_ik L_jl X_kl
    Y = X.reshape(-1, q * q) @ K2.T  # one GEMM (copies X to contiguous first if needed)
    return Y.reshape(X.shape[:-2] + (p, p))


INT8_QMAX = 127  # symmetric int8 levels; tests raise it to check the quantization plumbing


def _quant(T: torch.Tensor, amax: torch.Tensor):
    """Symmetric quantization: q = clamp(round_half_even(T / s), -Q, Q), s = amax / Q, Q = INT8_QMAX.
    The scale is computed in float32 (float64 for float64 input)."""
    Q = float(INT8_QMAX)
    s = torch.where(amax > 0, amax / Q, torch.ones_like(amax))
    q = torch.clamp(torch.round(T / s), -Q, Q)
    return q, s


@dataclass
class Stats:
    nan: int = 0
    inf: int = 0
    calls: int = 0


def filter_transform(t: Transform, weight: torch.Tensor, preset: str) -> torch.Tensor:
    """U = G g G^T for weight (K, C, r, r) -> (K, C, n, n), in the preset's working precision
    (before the preset's storage rounding / quantization)."""
    if preset == "fp64":
        _, G, _ = (torch.from_numpy(a) for a in t.mats(np.float64))
        return _transform2d(weight.double(), G)
    _, G, _ = (torch.from_numpy(a) for a in t.mats(np.float32))
    if preset == "fp16-all":
        return _transform2d(weight.float().to(torch.float16), G.to(torch.float16), fp16_ops=True).float()
    return _transform2d(weight.float(), G)


def winograd_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: int,
                    t: Transform, preset: str = "fp32", U: torch.Tensor | None = None,
                    stats: Stats | None = None, v_scale: str = "image") -> torch.Tensor:
    """2D correlation (PyTorch Conv2d semantics: stride 1, dilation 1, groups 1, zero padding)
    by F(m x m, r x r) Winograd with the preset's rounding. Returns float32 (float64 for 'fp64').

    v_scale (int8 presets only): 'image' = V's scale per image (per (image, xi) for int8-tap), the
    network default, independent of the batch size; 'batch' = per tensor over the whole batch (per xi
    over the batch for int8-tap), nova's C++ presets."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    if v_scale not in V_SCALES:
        raise ValueError(f"unknown v_scale {v_scale!r}; known: {', '.join(V_SCALES)}")
    if x.dim() != 4 or weight.dim() != 4:
        raise ValueError(f"expected x (N,C,H,W) and weight (K,C,r,r), got {tuple(x.shape)}, {tuple(weight.shape)}")
    N, C, H, W = x.shape
    K, C2, r, r2 = weight.shape
    if C2 != C or r != r2 or r != t.r:
        raise ValueError(f"weight {tuple(weight.shape)} does not fit x {tuple(x.shape)} and F({t.m},{t.r})")
    m, n = t.m, t.n
    Ho, Wo = H + 2 * padding - r + 1, W + 2 * padding - r + 1
    if Ho < 1 or Wo < 1:
        raise ValueError(f"output would be empty: input {H}x{W}, padding {padding}, kernel {r}")
    th, tw = -(-Ho // m), -(-Wo // m)
    T = th * tw
    wd = torch.float64 if preset == "fp64" else torch.float32
    AT, _, BT = (torch.from_numpy(a) for a in t.mats(np.float64 if preset == "fp64" else np.float32))
    xp = F.pad(x.to(wd), (padding, padding + tw * m - Wo, padding, padding + th * m - Ho))
    # tiles, laid out (n, n, C, N, th, tw) -> the input transform acts on dims 0,1 via its transpose
    d = xp.unfold(2, n, m).unfold(3, n, m)  # N, C, th, tw, n, n
    if U is None:
        U = filter_transform(t, weight, preset)  # K, C, n, n

    if preset == "fp16-all":
        V = _transform2d(d, BT, fp16_ops=True).float()  # N, C, th, tw, n, n
        V = V.permute(4, 5, 1, 0, 2, 3).reshape(n * n, C, N * T)
    else:
        # (N*C*T, n*n) @ kron(B^T, B^T)^T as one GEMM, then to (n*n, C, N*T)
        dd = d.permute(1, 0, 2, 3, 4, 5).reshape(C * N * T, n * n)
        V = (dd @ torch.kron(BT, BT).T).T.reshape(n * n, C, N * T)
    Uf = U.permute(2, 3, 0, 1).reshape(n * n, K, C)

    if preset in ("fp64", "fp32"):
        M = torch.bmm(Uf.to(wd).contiguous(), V.contiguous())
    elif preset in ("fp16-storage", "bf16-storage"):
        rd = _rnd(torch.float16 if preset == "fp16-storage" else torch.bfloat16)
        M = torch.bmm(rd(Uf).contiguous(), rd(V).contiguous())  # products exact in fp32, fp32 accumulation
    elif preset == "fp16-all":
        M = _rnd(torch.float16)(torch.bmm(_rnd(torch.float16)(Uf).contiguous(), V.contiguous()))
    elif preset.startswith("int8"):
        Vb = V.reshape(n * n, C, N, T)
        if preset == "int8-tensor":
            au = Uf.abs().amax().view(1, 1, 1)
        elif preset == "int8-channel":
            au = Uf.abs().amax(dim=(0, 2)).view(1, K, 1)
        elif preset == "int8-tap":
            au = Uf.abs().amax(dim=(1, 2)).view(n * n, 1, 1)
        else:
            raise ValueError(preset)
        if preset == "int8-tap":  # V per position xi: per (image, xi) or per xi over the batch
            av = (Vb.abs().amax(dim=(1, 3)).view(n * n, 1, N, 1) if v_scale == "image"
                  else Vb.abs().amax(dim=(1, 2, 3)).view(n * n, 1, 1, 1))
        else:  # V per tensor: per image or over the batch
            av = (Vb.abs().amax(dim=(0, 1, 3)).view(1, 1, N, 1) if v_scale == "image"
                  else Vb.abs().amax().view(1, 1, 1, 1))
        qu, su = _quant(Uf, au)
        qv, sv = _quant(Vb, av)
        # integer products and sums are exact: in float32 while |sum| <= Q*Q*C <= 2^24, else float64
        gd = torch.float32 if float(INT8_QMAX) ** 2 * C <= 2 ** 24 else torch.float64
        Mi = torch.bmm(qu.to(gd).contiguous(), qv.reshape(n * n, C, N * T).to(gd).contiguous())
        scale = su.view(su.shape[0], su.shape[1], 1, 1) * sv  # (n*n|1, K|1, N, 1): the dequantization
        M = (Mi.reshape(n * n, K, N, T) * scale.to(gd)).to(torch.float32).reshape(n * n, K, N * T)
    else:
        raise ValueError(preset)

    # output transform: (n*n, K, N*T) -> (K*N*T, n*n) @ kron(A^T, A^T)^T -> (K, N, th, tw, m, m)
    if preset == "fp16-all":
        Mt = M.reshape(n, n, K, N * T).permute(2, 3, 0, 1)
        Y = _transform2d(Mt, AT, fp16_ops=True).float()
    else:
        Y = M.reshape(n * n, K * N * T).T @ torch.kron(AT, AT).to(M.dtype).T
    Y = Y.reshape(K, N, th, tw, m, m).permute(1, 0, 2, 4, 3, 5).reshape(N, K, th * m, tw * m)
    Y = Y[:, :, :Ho, :Wo]
    if bias is not None:
        Y = Y + bias.to(Y.dtype).view(1, -1, 1, 1)
    if stats is not None:
        stats.calls += 1
        if not bool(torch.isfinite(Y).all()):
            stats.nan += int(torch.isnan(Y).sum())
            stats.inf += int(torch.isinf(Y).sum())
    return Y.contiguous()
