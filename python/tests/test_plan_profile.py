"""ConvPlan.set_profiling / stage_profile: the stages of a plan's algorithm get time, the others none, the
stages fit in threads x wall time, and profiling leaves the result unchanged (bit for bit)."""
import pytest

np = pytest.importorskip("numpy")
import nova  # noqa: E402

STAGES = ["pack_ms", "scales_ms", "input_ms", "convert_ms", "gemm_ms", "output_ms", "direct_ms"]


def plan_and_data(**kwargs):
    rng = np.random.default_rng(3)
    shape = (1, 24, 19, 17, 20)
    w = rng.uniform(-1, 1, (20, 24, 3, 3)).astype(np.float32)
    x = rng.uniform(-1, 1, shape[:4]).astype(np.float32)
    plan = nova.ConvPlan(shape, weights=w, threads=2, **kwargs)
    return plan, x, np.zeros(plan.output_shape, np.float32)


@pytest.mark.parametrize("algorithm, runs, idle", [("winograd", ["input_ms", "gemm_ms", "output_ms"], "direct_ms"),
                                                  ("direct", ["direct_ms"], "gemm_ms")])
def test_stages_of_the_algorithm_get_time(algorithm, runs, idle):
    plan, x, y = plan_and_data(algorithm=algorithm)
    plan.execute(x, y)
    before = y.copy()
    assert plan.stage_profile()["executes"] == 0
    plan.set_profiling(True)
    for _ in range(3):
        plan.execute(x, y)
    p = plan.stage_profile()
    assert p["executes"] == 3 and p["threads"] == 2 and p["wall_ms"] > 0
    for s in runs:
        assert p[s] > 0, s
    assert p[idle] == 0
    assert all(p[s] >= 0 for s in STAGES)
    assert sum(p[s] for s in STAGES) <= p["wall_ms"] * 2 + 3e-3
    assert p["idle_ms"] == pytest.approx(p["wall_ms"] * 2 - sum(p[s] for s in STAGES))
    np.testing.assert_array_equal(y, before)
    plan.set_profiling(False)
    assert plan.stage_profile()["executes"] == 0
