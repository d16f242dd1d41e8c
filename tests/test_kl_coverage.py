"""KL paper (Menart et al.): every (rate statement, variable) pair is swept or carries a reason,
and the facts the reasons state hold (Theorem 9's scale identity, Algorithm 2's dependence on
n√ρ alone); κ as a continuum for Theorem 1 (kl.spider.kappa.nslope): its grid is Theorem 1's
n-slope at each κ, computed from the bound, and its competitors differ from it."""
import numpy as np
import pytest

import bounds
import empirical.papers.kl.experiments  # noqa: F401  (registers the paper's experiments)
from empirical.core import coverage
from empirical.core import experiment as registry
from empirical.papers.kl.problems import (_run_ppm, _run_thm9, kappa_of_slope, kl_values,
                                          spider_kappa_point, thm1_slope_at)


def test_no_kl_statement_variable_is_held_or_unjudged_without_a_reason(coverage_gaps):
    assert coverage_gaps["kl"] == []


def test_theorem9_scales_exactly_as_its_declared_reason_says():
    base = {"beta": 0.1, "L0": 1.0, "L1t": 1.0, "data_seed": 0, "n": 400, "d": 16, "rho": 0.01}
    ref = _run_thm9(base, [np.random.default_rng(s) for s in range(2)])["excess"]
    for L0, L1t in ((4.0, 1.0), (1.0, 4.0)):
        got = _run_thm9({**base, "L0": L0, "L1t": L1t},
                        [np.random.default_rng(s) for s in range(2)])["excess"]
        np.testing.assert_allclose(got / ref, L0 ** 2 / L1t, rtol=1e-9)


def test_algorithm2_depends_on_n_and_rho_only_through_n_sqrt_rho_on_the_radial_loss():
    base = {"problem": "radial", "c": 1.0, "B": 1.0, "beta": 0.1, "p": 1.5, "d": 1, "L1t": 0.1,
            "inner_max_steps": 200}
    runs = [_run_ppm({**base, "n": n, "rho": rho}, [np.random.default_rng(s) for s in range(2)])
            ["excess"] for n, rho in ((400, 1.0), (200, 4.0))]
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-12)


def test_kappa_continuum_grid_is_theorem1_slope_at_each_kappa():
    exp = registry.get("kl.spider.kappa.nslope")
    kappas = [kappa_of_slope(exp.fixed, s) for s in exp.quick_grid]
    assert kappas == [1.25, 1.4, 1.55, 1.7, 2.0]
    assert len(set(exp.full_grid)) >= 10 and min(exp.full_grid) < min(exp.quick_grid)
    for k, s in zip(kappas, exp.quick_grid):
        # the secant of kl:thm1 over [n/10, 10n], flatter than its exponent κ by the logs only
        vals = kl_values(spider_kappa_point(exp.fixed, k))
        b = bounds.get("kl:thm1")
        direct = -np.log(b(**{**vals, "n": 1e8}) / b(**{**vals, "n": 1e6})) / np.log(100.0)
        assert s == pytest.approx(direct, rel=1e-9) and 0.9 * k < s < k
    assert spider_kappa_point(exp.fixed, 2.0)["L1_factor"] == 8.0
    with pytest.raises(ValueError, match="kappa"):
        spider_kappa_point(exp.fixed, 2.5)
    with pytest.raises(ValueError, match="slope_thm1"):
        kappa_of_slope(exp.fixed, 3.0)


def test_kappa_continuum_competitors_differ_from_theorem1_across_the_grid():
    exp = registry.get("kl.spider.kappa.nslope")
    xs = np.log(exp.quick_grid)
    fixed = [c for c in exp.checks if c.bound == "kl:thm1"][0]
    thm4 = [c for c in exp.checks if c.bound == "kl:thm4_main_nslope"][0]
    const = [bounds.get("kl:thm1")(**fixed.values(exp.point(x))) for x in exp.quick_grid]
    other = [thm4.values(exp.point(x))["slope_thm4_main"] for x in exp.quick_grid]
    assert np.ptp(const) == 0.0                           # κ-independent: slope 0
    slope = np.polyfit(xs, np.log(other), 1)[0]
    assert slope > 1.4                                    # 2κ/(4−κ) against κ: ≈ 1.6
    k = kappa_of_slope(exp.fixed, exp.quick_grid[-1])
    assert other[-1] == pytest.approx(thm1_slope_at(exp.fixed, k), rel=0.05)   # equal at κ = 2
