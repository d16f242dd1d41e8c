"""Theorem 6's lower-bound construction of the KL paper (empirical/papers/kl/lower_thm6.py): the
instance has the proof's constants (growth, Lipschitz and smoothness on W̃₁, Theorem 7's data-term
smoothness), its minimiser and F* are exact, a non-private optimiser beats the bound's rate on it
(so the one-sided-lower checks can fail), and the experiments come out as declared."""
import math

import numpy as np
import pytest

import bounds
from algorithms.kl.wyx17 import wyx17_noisy_gd
from empirical.core import experiment as registry
from empirical.core.checks import analyse
from empirical.papers.kl import experiments as kl_condition  # noqa: F401  (registers the paper)
from empirical.papers.kl.lower_thm6 import (Thm6Construction, run_thm6, thm6_parameters,
                                             thm6_values)
from empirical.run.runner import sweep

IDS = ["kl.thm6lb.n.spider_k2", "kl.thm6lb.n.adaptive_k2", "kl.thm6lb.epsilon.spider_k2"]


@pytest.mark.parametrize("tau", [2.0, 4.0])
def test_construction_has_the_proofs_constants(tau):
    P = Thm6Construction(2000, 64, tau, 1.0)
    par = P.par
    # Theorem 7's data-term smoothness 2λ_H = √d L0/(nεD), N = √d/ε code rows
    assert P.N == 8
    assert 2 * P.lam_H == pytest.approx(math.sqrt(64) / (2000 * 1.0 * P.D))
    # the growth term's gradient is ≤ L0/2 on W̃₁ (so F̃₁ is 2L0-Lipschitz there)
    r = par["radius"]
    assert tau * P.c_tau * r ** (tau - 1) == pytest.approx(0.5, rel=1e-12)
    # minimiser: zero gradient, F* below random points, growth (λ_g, τ) around it
    assert np.linalg.norm(P.gradient(P.w_star)) < 1e-14
    rng = np.random.default_rng(1)
    for s in (1e-3, 1e-2, 1e-1):
        W = P.w_star + s * rng.standard_normal((20, 64))
        exc = P.excess(W)
        dist = np.linalg.norm(W - P.w_star, axis=1)
        assert np.all(exc >= par["lambda_g"] ** tau * dist ** tau * (1 - 1e-9))
    # per-record gradients average to the full gradient
    W = rng.standard_normal((2, 64)) * 0.1
    ps = P.per_sample_gradients(W, np.arange(P.n))
    np.testing.assert_allclose(ps.mean(axis=1), P.gradient(W), atol=1e-14)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="tau"):
        thm6_parameters(100, 4, 1.5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        thm6_parameters(100, 4, 2.0, 2.0)


def test_without_noise_the_excess_falls_far_below_the_bound():
    """The private runs' excess is not forced by the instance: noise-free gradient descent (step
    1/L1) reaches ≤ 1e-18 where the bound (constant 1) is 4e-4…4e-8."""
    for n in (1000, 100000):
        P = Thm6Construction(n, 100, 2.0, 1.0)
        res = wyx17_noisy_gd(P, rho=1.0, w0=P.start(), L0=1.0, L1=P.L1, T=20,
                             rng=np.random.default_rng(0), noise_factor=0.0)
        lb = bounds.get("kl:thm6")(**thm6_values({"n": n, "d": 100, "tau": 2.0, "epsilon": 1.0}))
        assert abs(float(P.excess(res.w)[0])) < 1e-12 * lb


def test_at_tau_4_the_private_algorithms_return_the_start():
    """Why no experiment runs at τ = 4 (κ = 4/3): both algorithms end within 1% of F0, the excess of w₀ = 0, which
    is 0.39–0.45 × the bound at constant 1."""
    for alg in ("spider", "adaptive"):
        for n in (1000, 100000):
            out = run_thm6({"n": n, "d": 100, "tau": 4.0, "epsilon": 1.0, "algorithm": alg},
                           [np.random.default_rng(i) for i in range(3)])
            np.testing.assert_allclose(out["excess"], out["F0"], rtol=1e-2)
            assert 0.35 < out["F0"][0] / out["lower_bound"][0] < 0.5


@pytest.fixture(scope="module")
def analyses(results_root):
    return {i: analyse(registry.get(i), sweep(registry.get(i), results=results_root, workers=1))
            for i in IDS}


@pytest.mark.parametrize("exp_id", IDS)
def test_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert all(r.verdict == "PASS" for r in a.results), [r.message for r in a.results]
