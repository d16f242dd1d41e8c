"""Theorem 8's lower-bound construction of the KL paper (empirical/papers/kl/lower.py): the instance is
the theorem's (minimisers ±a, F* = (1 − ρ_f)a, S and S′ differ in 1/ε records, f convex and
1-Lipschitz), Algorithm 2's excess on it stays above (1/4)(1/(nε))^κ with the slope the paper
says is tight, and the control shows the level is the privacy's."""
import math

import numpy as np
import pytest

from algorithms.accounting import epsilon_to_zcdp_closed_form, zcdp_to_epsilon_closed_form
from empirical.core import experiment as registry
from empirical.papers.kl import experiments as kl_condition  # noqa: F401  (registers the paper)
from empirical.core.checks import analyse
from empirical.papers.kl.lower import Thm8Construction
from empirical.run.runner import sweep

IDS = ["kl.thm8lb.n.k2", "kl.thm8lb.n.k2.nonprivate"]


@pytest.mark.parametrize("kappa", [2.0, 3.0])
def test_construction_is_the_theorems(kappa):
    n, eps = 200, 0.5
    S, Sp = Thm8Construction(n, kappa, eps, 1), Thm8Construction(n, kappa, eps, -1)
    assert S.rho_f == pytest.approx(1 / (n * eps))
    assert S.a == pytest.approx(S.rho_f ** (kappa - 1) / 2)     # ρ_f^{1/(τ−1)}/2, τ = κ/(κ−1)
    assert round((S.p_plus - Sp.p_plus) * n) == round(1 / eps)  # 1/ε records differ
    for P in (S, Sp):
        # a grid fine around ±a (a = 5e-5 at κ = 3) and reaching the linear continuation
        w = np.unique(np.concatenate([np.linspace(-2, 2, 4001),
                                      np.linspace(-10 * P.a, 10 * P.a, 4001)]))[:, None]
        F = P.loss(w)
        assert w[np.argmin(F), 0] == pytest.approx(P.w_star, abs=P.a * 1e-2)
        assert F.min() == pytest.approx(P.F_star, rel=1e-6, abs=1e-12)
        np.testing.assert_allclose(P.excess(w), F - P.F_star, atol=1e-12)
        g = P.gradient(w)[:, 0]
        assert np.all(np.diff(g) >= -1e-12) and np.max(np.abs(g)) <= 1 + 1e-12   # convex, 1-Lip
        # the per-record gradients average to the full gradient
        ps = P.per_sample_gradients(w[::400], np.arange(n))
        np.testing.assert_allclose(ps.mean(axis=1)[:, 0], P.gradient(w[::400])[:, 0], atol=1e-12)


def test_construction_refuses_bad_input():
    with pytest.raises(ValueError, match="kappa"):
        Thm8Construction(100, 1.5, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        Thm8Construction(100, 2.0, 0.3)
    with pytest.raises(ValueError, match="n must be even"):
        Thm8Construction(101, 2.0, 0.5)


def test_the_run_is_inside_the_theorems_conditions():
    """ε = 0.5 ≤ ln 2, δ = 1e-3 ≤ (1 − e^{−ε})/16, and the ρ-zCDP run is (0.5, δ)-DP."""
    fixed = registry.get("kl.thm8lb.n.k2").fixed
    eps, delta = fixed["epsilon"], fixed["delta"]
    assert eps <= math.log(2) and delta <= (1 - math.exp(-eps)) / 16
    rho = epsilon_to_zcdp_closed_form(eps, delta)
    assert zcdp_to_epsilon_closed_form(rho, delta) <= eps * (1 + 1e-12)


@pytest.fixture(scope="module")
def analyses(results_root):
    return {i: analyse(registry.get(i), sweep(registry.get(i), results=results_root, workers=2))
            for i in IDS}


@pytest.mark.parametrize("exp_id", IDS)
def test_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert all(r.verdict in ("PASS",) for r in a.results), [r.message for r in a.results]


def test_excess_stays_above_the_lower_bound_at_every_point(analyses):
    lb = [r for r in analyses["kl.thm8lb.n.k2"].results if r.bound == "kl:thm8"][0]
    assert min(lb.ratios) >= 1.0
