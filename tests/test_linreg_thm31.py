"""Linear-regression paper: DP-SSGD inside Theorem 3.1's conditions, sufficient statistics
perturbation and the δ declarations (empirical/papers/linreg/headline.py,
algorithms/linreg/ssp.py).  Predicted slopes come from ``bounds/`` at the experiments' points."""
import math

import numpy as np
import pytest

import bounds
from algorithms import accounting
from algorithms.linreg.design import LinearRegressionDesign
from algorithms.linreg.ssp import ssp, ssp_multiplier, ssp_sensitivity
from empirical.core import coverage
from empirical.core.rowchecks import noise_interval
from empirical.core import experiment as registry
from empirical.papers.linreg import headline as hl
from empirical.papers.linreg.problems import DELTA
from empirical.papers.linreg.problems_thm31 import (exact_gaussian_multiplier, run_ssgd_thm31,
                                                    run_ssp, thm31_point)
from empirical.run.runner import seed_generators

SSGD31 = ("linreg.ssgd.thm31.n", "linreg.ssgd.thm31.epsilon", "linreg.ssgd.thm31.d",
          "linreg.ssgd.thm31.sigma")


@pytest.mark.parametrize("exp_id", SSGD31)
def test_every_grid_point_is_inside_theorem_31(exp_id):
    """ε ≤ √(log(n/δ)/n) and ε₀ inside the amplification range at every point of both grids
    (the conditions are recomputed here from the point, not read from the rows)."""
    exp = registry.get(exp_id)
    for v in exp.full_grid:
        p = thm31_point(exp.point(v))
        n = int(p["n"])
        assert p["epsilon"] <= math.sqrt(math.log(n / DELTA) / n) * (1 + 1e-12)
        alpha = math.log(n / DELTA) / (p["epsilon"] * math.sqrt(n))
        eps0 = accounting.epsilon(accounting.gaussian_event(alpha), DELTA / (2 * n))
        assert eps0 <= math.log(n / (16 * math.log(8 / DELTA)))


def test_rows_carry_the_conditions_and_they_hold():
    exp = registry.get("linreg.ssgd.thm31.sigma")
    p = exp.point(exp.quick_grid[0])
    out = run_ssgd_thm31(p, seed_generators(exp.id, p, 3))
    assert np.all(out["thm31_eps_ratio"] <= 1 + 1e-12)
    assert np.all(out["eps0_ratio"] <= 1)
    assert np.all(np.isfinite(out["epsilon_amplified"]))
    assert np.all(out["thm32_n_ratio"] >= 1)
    assert np.all(out["clip_fraction"] < 0.1)


def test_ssgd_sweeps_predict_from_bounds():
    """The ε and σ sweeps' bound is Lemma 3.5 at Theorem 3.1's α at a fixed η: exponent −2 in ε,
    and in σ the slope of ‖w*‖² + σ² (the clip's), at the experiments' own points."""
    b = bounds.get("linreg:lem35_thm31_privacy")
    e = registry.get("linreg.ssgd.thm31.epsilon")
    for v in e.quick_grid:
        assert b.local_slope("epsilon", hl.ssgd_thm31_values(e.point(v))) == pytest.approx(-2.0)
    s = registry.get("linreg.ssgd.thm31.sigma")
    for v in s.quick_grid:
        assert b.local_slope("sigma", hl.ssgd_thm31_values(s.point(v))) == pytest.approx(
            2 * v**2 / (1 + v**2))


def test_ssp_noise_sensitivity_and_calibration():
    """Δ = √(2B_x⁴ + 4B_x²B_y²) bounds the replace-one change of (XᵀX, Xᵀy) on the domain
    (checked on random extreme pairs); α is exactly (ε, δ) by dp-accounting and no smaller than
    the analytic Gaussian mechanism's; the release's noise is α·Δ; without noise SSP is OLS."""
    rng = np.random.default_rng(0)
    Bx, By = 2.0, 3.0
    for _ in range(200):
        x, x2 = rng.standard_normal((2, 5))
        x, x2 = Bx * x / np.linalg.norm(x), Bx * x2 / np.linalg.norm(x2)
        y, y2 = By * rng.choice([-1, 1], 2)
        diff = np.concatenate([(np.outer(x, x) - np.outer(x2, x2)).ravel(), x * y - x2 * y2])
        assert np.linalg.norm(diff) <= ssp_sensitivity(Bx, By) * (1 + 1e-12)
    a = ssp_multiplier(2.0, DELTA)
    assert accounting.epsilon(accounting.gaussian_event(a), DELTA) == pytest.approx(2.0, rel=1e-9)
    assert exact_gaussian_multiplier(2.0) <= a
    des = LinearRegressionDesign.make(3)
    gens = [np.random.default_rng(i) for i in range(2)]
    res = ssp(des, 2000, epsilon=2.0, delta=DELTA, B_x=50.0, B_y=50.0, rng=gens, private=False)
    assert np.allclose(res.w, res.info["w_reference"])
    seen = {}
    ssp(des, 2000, epsilon=2.0, delta=DELTA, B_x=5.0, B_y=5.0, rng=gens,
        observe=lambda kind, t, rows, released, sigma: seen.update(sigma=sigma))
    assert seen["sigma"] == pytest.approx(a * ssp_sensitivity(5.0, 5.0))


def test_ssp_rows_measure_their_noise_and_the_non_circular_control():
    """The measured noise of each statistic SSP releases (XᵀX, Xᵀy) is its claimed α·Δ, and the
    privacy term vanishes without noise (the rate is the noise's, not the data's)."""
    exp = registry.get("linreg.ssp.d")
    p = dict(exp.point(8), n=5000)
    out = run_ssp(p, seed_generators(exp.id, p, 4))
    for ch, k1 in (("stats_xx", 64), ("stats_xy", 8)):
        assert np.all(out[f"noise_count_{ch}"] == k1)
        k = out[f"noise_count_{ch}"].sum()
        lo, hi = noise_interval(k, "gauss", 2)                # check_noise's exact interval
        assert lo <= math.sqrt(out[f"noise_gauss_{ch}"].sum() / k) <= hi
    assert np.all(out["used_alpha"] == out["limit_exact_alpha"])
    assert np.all(out["max_exact_alpha"] <= out["limit_exact_alpha"])
    des = LinearRegressionDesign.make(8)
    res = ssp(des, 5000, epsilon=4.0, delta=DELTA, B_x=10.0, B_y=10.0,
              rng=seed_generators(exp.id, p, 2), private=False)
    assert np.all(des.h_norm_sq(res.w - res.info["w_reference"]) < 1e-20)


def test_delta_is_declared_with_its_reason():
    declared = coverage.declared_reasons()
    for bid in ("linreg:thm37_privacy", "linreg:cor38", "linreg:lem35_thm31_privacy"):
        assert "log(1/δ)" in declared[(bid, "delta")]


@pytest.mark.parametrize("name,channel", [("linreg.ssp.xty_noise_omitted", "stats_xy"),
                                          ("linreg.ssp.add_remove_sensitivity", "stats_xx")])
def test_ssp_noise_bugs_fail_the_rows_measured_noise(name, channel):
    """Noise dropped from Xᵀy alone (8 of the 72 coordinates at d = 8: a pooled ratio would
    move by 6%, inside its tolerance at k = 288) and the add/remove sensitivity are each
    outside the measured-noise interval of their own channel."""
    from empirical.core.rowchecks import check_noise
    from empirical.privacy import mutants

    exp = registry.get("linreg.ssp.d")
    p = dict(exp.point(8), n=2000)
    with mutants.applied(mutants.get_mutant(name)):
        out = run_ssp(p, seed_generators(exp.id, p, 4))
    rows = [{k: float(v[i]) for k, v in out.items()} | {"p_d": 8.0} for i in range(4)]
    _, err = check_noise(exp, rows)
    assert channel in err, err
