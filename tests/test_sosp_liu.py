"""[29]'s algorithm (algorithms/sosp/liu.py) and its experiment (empirical/papers/sosp/liu.py): the
design's exponent comes from the step size, AboveThreshold and the privacy accounting behave as
stated, bad input is refused, and ``sosp.liu.best.n``'s verdicts are as declared."""
import math

import numpy as np
import pytest

from algorithms import accounting
from algorithms.sosp.liu import above_threshold, liu_design, liu_plan
from empirical.core import experiment as registry
from empirical.papers.sosp import experiments as sosp_nonconvex  # noqa: F401  (registers the paper)
from empirical.core.checks import analyse
from empirical.run.runner import sweep

IDS = ["sosp.liu.best.n"]
_KW = dict(epsilon=0.5, delta=1e-5, G_sens=0.2, M_sens=0.05, M=1.05, U=2.0)


def test_design_exponent_is_three_sevenths_in_the_privacy_regime():
    """With η = 1/M the balance of Lemma 7's two privacy terms gives α ∝ x^{3/7}: far in the
    privacy regime (sampling terms negligible: d = 4096, ε = 0.05) the design's n-slope is
    −3/7 within 0.01 (κ is optimised numerically; nothing fixes the exponent)."""
    kw = {**_KW, "epsilon": 0.05}
    a1 = liu_design(10**6, 4096, **kw)[0]
    a2 = liu_design(10**8, 4096, **kw)[0]
    slope = math.log(a2 / a1) / math.log(100.0)
    assert slope == pytest.approx(-3 / 7, abs=0.01)
    assert abs(slope - (-2 / 5)) > 0.02


def test_plan_refuses_bad_input():
    with pytest.raises(ValueError, match="select_fraction"):
        liu_plan(1000, 4, alpha=0.1, kappa=0.01, psi=0.01, G=1, M=1, U=1, hessian_lipschitz=1,
                 G_sens=0.2, M_sens=0.05, epsilon=1.0, delta=1e-5, select_fraction=1.5)
    with pytest.raises(ValueError, match="alpha"):
        liu_plan(1000, 4, alpha=-0.1, kappa=0.01, psi=0.01, G=1, M=1, U=1, hessian_lipschitz=1,
                 G_sens=0.2, M_sens=0.05, epsilon=1.0, delta=1e-5)


def test_above_threshold_selects_the_first_passing_query():
    gen = np.random.default_rng(0)
    scores = np.array([1.0, 0.9, 0.2, 0.1, 0.05])
    assert above_threshold(scores, 0.5, 1e-9, 1e-9, gen) == 2
    assert above_threshold(np.array([1.0, 0.9]), 0.5, 1e-9, 1e-9, gen) == -1


def test_svt_scales_give_epsilon():
    p = liu_plan(10**5, 16, alpha=0.1, kappa=0.01, psi=0.01, G=0.2, M=1.05, U=2.0,
                 hessian_lipschitz=3.05, G_sens=0.2, M_sens=0.05, epsilon=0.5, delta=1e-5)
    assert p.sensitivity / p.b_threshold + 2 * p.sensitivity / p.b_query == pytest.approx(0.5)
    eps_g = accounting.epsilon(accounting.gaussian_event(p.spider.z), 1e-5)
    assert eps_g == pytest.approx(0.5, rel=1e-9) and eps_g <= 0.5
    assert p.eta == pytest.approx(1 / 1.05) and p.n_train + p.n_select == 10**5


@pytest.fixture(scope="module")
def rows(results_root):
    return {i: sweep(registry.get(i), results=results_root, workers=2) for i in IDS}


def test_verdicts_as_declared(rows):
    a = analyse(registry.get("sosp.liu.best.n"), rows["sosp.liu.best.n"])
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    # [29]'s claim passes; the competitor (Theorem 2's 2/5) is open at the tolerance set before
    # any run (SOSP-E16; tests/_open_verdicts.py): a run that decides it fails here on purpose
    assert [(r.bound, r.verdict) for r in a.results] == \
        [("sosp:liu_claimed", "PASS"), ("sosp:thm2", "INCONCLUSIVE")], [r.message for r in a.results]
    # the data decide for [29]'s claim on this instance: the slope is nearer its 3/7 bound's
    # local slope than Theorem 2's, or steeper than both
    liu, thm2 = a.results
    assert a.fit.slope + a.fit.half_width < thm2.local


def test_every_row_is_private_and_its_outputs_are_sosps(rows):
    """ε guarantee = max{ε_Gaussian, ε_SVT} = target (parallel composition over disjoint
    training and held-out records); every run finds an α-SOSP among its iterates, and the
    AboveThreshold-selected point is one (on this instance: a strict saddle with γ = 1)."""
    for r in rows["sosp.liu.best.n"]:
        assert r["epsilon_guarantee"] == pytest.approx(r["epsilon_target"], rel=1e-9)
        assert r["epsilon_spent"] <= r["epsilon_guarantee"] * (1 + 1e-12)
        assert r["samples"] <= r["n_train"]
        assert r["alpha_best"] <= r["alpha"]
        assert r["selection_passed"] == 1.0 and r["selected_is_sosp"] == 1.0


def test_liu_iterates_escape_every_saddle_of_the_family():
    """[29]'s second-order behaviour where the condition binds (the one-saddle family
    CosineSaddle(γ), γ ∈ [0.05, 1], design of γ = 1, n = 1e4, ε = 0.5): its iterates leave every
    saddle, down to γ = 0.05, far below √(ρα) ≈ 1.08 and below the weaker tolerance α^{2/5} ≈ 0.68
    of the SOSP paper's §3.1 — the repeated O₁ + perturbation at η = 1/M escapes where Lemma 1's
    single procedure does not (sosp.out.curv.n leaves ≈ 0.3–0.6).  The selected point is the
    first candidate passing AboveThreshold, the saddle x₀ itself whenever γ ≲ √(ρα)/2: its
    second-order accuracy is the selection threshold's, ≤ √(ρα)."""
    from empirical.papers.sosp.common import RATE_BASE
    from empirical.papers.sosp.liu import run_liu_family
    pt = {**RATE_BASE, "n": 10000, "d": 16, "epsilon": 0.5, "m": 1, "gamma_lo": 0.05,
          "gamma_hi": 1.0, "gamma_points": 10}
    r = run_liu_family(pt, [np.random.default_rng([2, i]) for i in range(3)])
    assert np.all(r["gamma_unescaped"] <= 0.05)
    assert np.all(r["neg_lambda_selected_worst"] <= r["curvature_threshold"])
    assert np.all(r["epsilon_guarantee"] == pytest.approx(0.5, rel=1e-9))
