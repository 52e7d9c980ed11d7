"""The core bindings against independent references: Python's exact fractions and numpy."""
from fractions import Fraction

import re

import numpy as np
import pytest

nova = pytest.importorskip("nova")


def fractions(rows):
    return [[Fraction(x) for x in row] for row in rows]


def test_transform_matches_wincnn_and_verifies():
    t = nova.Transform("F(4,3)", "0,±1,±2,inf")
    assert (t.m, t.r, t.n) == (4, 3, 6)
    assert t.points == ["0", "1", "-1", "2", "-2", "inf"]
    assert t.verify() == (True, "")
    # wincnn's published G for F(4,3): first row 1/4, inf row [0, 0, 1].
    assert fractions(t.exact("G"))[0] == [Fraction(1, 4), 0, 0]
    assert fractions(t.exact("G"))[5] == [0, 0, 1]


def test_float64_arrays_compute_the_correlation():
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    rng = np.random.default_rng(0)
    d = rng.standard_normal(t.n)
    g = rng.standard_normal(t.r)
    y = t.AT @ ((t.G @ g) * (t.BT @ d))
    direct = np.array([sum(g[k] * d[i + k] for k in range(t.r)) for i in range(t.m)])
    np.testing.assert_allclose(y, direct, rtol=1e-12, atol=1e-12)
    assert t.AT.shape == (6, 8) and t.G.shape == (8, 3) and t.BT.shape == (8, 8)


def test_balanced_input_rows_are_power_of_two_rescalings_with_l1_norms_in_two_to_four():
    # In Python's exact fractions: each B^T row's L1 norm in [2, 4), a power of two times the plain row, A^T's
    # column times its inverse, G unchanged; and the balanced transform verifies.
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    b = t.balance_input_rows()
    assert b.verify() == (True, "")
    bt, bt0 = fractions(b.exact("BT")), fractions(t.exact("BT"))
    at, at0 = fractions(b.exact("AT")), fractions(t.exact("AT"))
    assert fractions(b.exact("G")) == fractions(t.exact("G"))
    for p in range(t.n):
        assert 2 <= sum(abs(x) for x in bt[p]) < 4
        ratio = next(x / y for x, y in zip(bt[p], bt0[p]) if y != 0)
        power = ratio if ratio >= 1 else 1 / ratio
        assert power.denominator == 1 and power.numerator & (power.numerator - 1) == 0  # a power of two
        assert all(x == y * ratio for x, y in zip(bt[p], bt0[p]))
        assert all(at[i][p] * ratio == at0[i][p] for i in range(t.m))


def test_exact_entries_satisfy_the_identity_in_fractions():
    t = nova.Transform("4,3", "0,±3/4,±5/4,inf", scaling="lagrange")
    AT, G, BT = (fractions(t.exact(w)) for w in ("AT", "G", "BT"))
    for i in range(t.m):
        for k in range(t.r):
            for j in range(t.n):
                s = sum(AT[i][p] * G[p][k] * BT[p][j] for p in range(t.n))
                assert s == (1 if j == i + k else 0)


def test_json_round_trip_and_rescaling():
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    back = nova.Transform.from_json(t.to_json())
    assert back.exact("BT") == t.exact("BT")
    r = t.rescaled("lagrange")
    assert r.scaling == "lagrange" and r.verify()[0]
    assert "#pragma once" in t.to_cpp("f63")


@pytest.mark.parametrize(
    "tile, points, message",
    [
        ("4,3", "0,0.5,1/2,1,-1,inf", "duplicate point 1/2"),
        ("4,3", "0,1,-1,2,inf,inf", "two infinities"),
        ("6,3", "0,1,-1,inf", "needs n = m+r-1 = 8"),
        ("2,3", "0,1/0,-1,inf", "zero denominator"),
        ("0,3", "", "at least 1"),
        ("40,3", "", "limit of 32"),
    ],
)
def test_bad_input_raises_value_error(tile, points, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        nova.Transform(tile, points)


def test_bad_json_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="not valid JSON"):
        nova.Transform.from_json("{oops")
    with pytest.raises(ValueError):
        nova.load_transform(str(tmp_path / "missing.json"))


def test_json_points_must_be_the_matrices_own():
    """A file naming other points than its matrices have was taken at its word (verify() passed and
    analyze() reported kappa_2(V) of the named points, 42.47 instead of 23.53); now it is refused."""
    import json
    j = json.loads(nova.Transform("4,3", "0,±1,±1/2,inf").to_json())
    j["points"] = ["0", "1", "-1", "2", "-2", "inf"]
    with pytest.raises(ValueError, match=r"the points \{0, 1, -1, 2, -2, inf\} do not match the matrices"):
        nova.Transform.from_json(json.dumps(j))
