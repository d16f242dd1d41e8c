"""KL paper, Theorem 9 end to end: Algorithm 4 (noisy projected GD), its zCDP accounting, and the
n, d and ρ slopes of its excess risk against ``bounds.get("kl:thm9")``.

Predictions are never typed here: every expected slope is computed by empirical.core.checks from the
bound at the experiment's own parameters, and each check states its tolerance and reason in
empirical/papers/kl/experiments.py.
"""
import math

import numpy as np
import pytest

import bounds
from algorithms import accounting as acc
from algorithms.kl.condition import noisy_gd, noisy_gd_steps
from empirical.papers.kl import experiments as klx
from empirical.core.checks import analyse
from empirical.run.runner import sweep

#: Named at module level so that tests/conftest.py pre-sweeps them with every other experiment.
THM9_IDS = [klx.THM9_N.id, klx.THM9_D.id, klx.THM9_RHO.id]


# ------------------------------------------------------------------------------------ algorithm
def _problem(n=50, d=3):
    return klx.LinearLoss.sample(n, d, L0=1.0, data_seed=1)


def test_steps_follow_theorem_9():
    assert noisy_gd_steps(100, 10, 0.5, 0.1) == math.ceil(100**2 * 0.5 * math.log(20) ** 2 / 10)
    assert noisy_gd_steps(1, 10**6, 1e-6, 0.5) == 1


@pytest.mark.parametrize("rho", [0.01, 0.5, 3.0])
def test_spends_exactly_rho_by_dp_accounting(rho):
    p = _problem()
    r = noisy_gd(p, rho=rho, w0=np.zeros(3), L0=1.0, L1t=1.0, T=200, rng=np.random.default_rng(0))
    assert r.privacy.rho == pytest.approx(rho, rel=1e-10)
    assert r.privacy.target_rho == rho and r.privacy.relation == acc.REPLACE_ONE
    # replace-one sensitivity of the mean gradient of 1-Lipschitz losses
    assert r.privacy.details["sensitivity"] == pytest.approx(2.0 / 50)
    # the paper's printed σ² = 4L0²T/(n²ρ) would have spent only (T−1)/(2T)·ρ (errata KL-E1)
    paper_sigma = math.sqrt(4 * 200 / (50**2 * rho))
    paper_event = acc.gaussian_event(paper_sigma / r.privacy.details["sensitivity"], 199)
    assert acc.zcdp_rho(paper_event) == pytest.approx(rho * 199 / 400, rel=1e-10)
    assert r.privacy.epsilon(1e-6) <= acc.zcdp_to_epsilon_closed_form(rho, 1e-6)


def test_rows_are_independent_of_batching():
    p = _problem()
    kw = dict(rho=0.3, w0=np.zeros(3), L0=1.0, L1t=1.0, T=300)
    gens = [np.random.default_rng(s) for s in (3, 4, 5)]
    batch = noisy_gd(p, rng=gens, **kw).w
    alone = noisy_gd(p, rng=[np.random.default_rng(4)], **kw).w[0]
    np.testing.assert_array_equal(batch[1], alone)
    single = noisy_gd(p, rng=np.random.default_rng(4), **kw)
    np.testing.assert_array_equal(single.w, alone)


def test_iterates_stay_in_ball_and_count_gradients():
    p = _problem()
    r = noisy_gd(p, rho=1e-4, w0=np.ones(3), L0=1.0, L1t=2.0, T=100, rng=np.random.default_rng(1))
    assert np.linalg.norm(r.w - 1.0) <= 1.0 / 4.0 + 1e-12       # radius L0/(2L̃1), w̄ convex comb.
    assert r.grad_evals == 99 * 50                               # T−1 full gradients of n examples


def test_converges_without_noise_budget_pressure():
    p = _problem(n=2000)
    r = noisy_gd(p, rho=1e6, w0=np.zeros(3), L0=1.0, L1t=1.0, T=4000, rng=np.random.default_rng(2))
    assert p.regularized_excess(r.w, np.zeros(3), 1.0)[0] < 1e-6


def test_cap_is_reported():
    p = _problem()
    r = noisy_gd(p, rho=1.0, w0=np.zeros(3), L0=1.0, L1t=1.0, max_steps=10, rng=np.random.default_rng(0))
    assert r.info["capped"] and r.info["T"] == 10 and r.info["T_theory"] > 10
    assert r.privacy.rho == pytest.approx(1.0)


@pytest.mark.parametrize("kw, name", [
    (dict(rho=0.0), "rho"), (dict(rho=-1.0), "rho"), (dict(L0=0.0), "L0"),
    (dict(L1t=float("nan")), "L1t"), (dict(beta=1.0), "beta"), (dict(beta=0.0), "beta"),
    (dict(w0=np.array([np.nan, 0, 0])), "w0"), (dict(w0=np.zeros(4)), "w0"), (dict(T=0), "T"),
])
def test_bad_parameters_raise(kw, name):
    args = dict(rho=1.0, w0=np.zeros(3), L0=1.0, L1t=1.0, rng=np.random.default_rng(0))
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        noisy_gd(_problem(), **args)


def test_problem_validation():
    with pytest.raises(ValueError, match="n must be"):
        klx.LinearLoss(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="finite"):
        klx.LinearLoss(np.array([[np.inf, 0.0]]))
    p = _problem()
    with pytest.raises(ValueError, match="shape"):
        p.gradient(np.zeros(4))
    with pytest.raises(ValueError, match="idx"):
        p.per_sample_gradients(np.zeros(3), np.array([50]))
    np.testing.assert_allclose(p.per_sample_gradients(np.zeros(3), np.arange(50)).mean(0), p.gradient(np.zeros(3)))
    assert np.all(np.linalg.norm(p.X, axis=1) <= 1.0 + 1e-12)          # L0 = 1 holds


# ---------------------------------------------------------------------------------------- slopes
@pytest.fixture(scope="module")
def analyses(results_root):
    out = {}
    for exp in (klx.THM9_N, klx.THM9_D, klx.THM9_RHO):
        out[exp.variable] = analyse(exp, sweep(exp, results=results_root, workers=2))
    return out


def _result(analysis, bound_id):
    (r,) = [r for r in analysis.results if r.bound == bound_id]
    return r


@pytest.mark.parametrize("var", ["n", "d", "rho"])
def test_thm9_slope(analyses, var):
    """Two-sided: the observed slope lies within tolerance of Theorem 9's band and the CI is
    narrower than the tolerance."""
    a = analyses[var]
    r = _result(a, "kl:thm9")
    b = bounds.get("kl:thm9")
    assert r.asymptotic == float(b.exponent(var))           # the prediction comes from bounds/
    assert r.verdict == "PASS", r.message


def test_thm9_convex_rate_is_a_reference_the_data_would_reject(analyses):
    """Theorem 7 is a convex worst case; the instance is strongly convex, so the rate is drawn
    as a REFERENCE (never REJECTED), while the data alone would rule it out."""
    r = _result(analyses["n"], "kl:thm7")
    assert r.local == pytest.approx(float(bounds.get("kl:thm7").exponent("n")), abs=1e-6)
    assert r.verdict == "REFERENCE" and r.ok, r.message
    assert "would give REJECTED" in r.message
    assert not r.observed.covers(r.local)


@pytest.mark.parametrize("var", ["d", "rho"])
def test_thm9_competing_convex_rate_is_a_reference(analyses, var):
    assert _result(analyses[var], "kl:thm7").verdict == "REFERENCE"


def test_every_run_spent_its_target(results_root):
    for exp in (klx.THM9_N, klx.THM9_D, klx.THM9_RHO):
        rows = sweep(exp, results=results_root)          # already stored: no recomputation
        spent = np.array([r["rho_spent"] for r in rows])
        target = np.array([r["rho_target"] for r in rows])
        np.testing.assert_allclose(spent, target, rtol=1e-9)


def test_vacuous_points_are_dropped_and_reported():
    exp = klx.THM9_N
    # A grid point where the bound exceeds the start point's excess must be dropped, not fitted.
    small = exp.point(30)
    b = bounds.get("kl:thm9")(**exp.bound_values(small))
    assert exp.vacuous(small, b) is not None
