"""KAN paper, the problem: the NTK-teacher generator (G1) guarantees Assumption 3.3's margin,
keeps inputs in the unit ball and labels balanced; the margin estimator brackets γ; the held-out
set estimates the population risk."""
import math

import numpy as np
import pytest

from empirical.papers.kan import problems as kx
from empirical.papers.kan.cor55 import cor55_schedule


@pytest.fixture(scope="module")
def inst():
    return kx.make_instance(16, 4, 6, 0.7, 0)


def test_samples_in_unit_ball_with_guaranteed_margin(inst):
    X, y = inst.sample(500, np.random.default_rng(1))
    assert np.all(np.linalg.norm(X, axis=1) <= 1.0 + 1e-12)
    s = inst.score(X)
    assert np.all(y * s >= inst.gamma0)                 # y_i⟨φ(x_i), u⟩ ≥ γ₀ for every i
    assert abs(y.mean()) < 0.2                          # the mean-orthogonal teacher balances labels
    assert inst.acceptance == pytest.approx(0.3, abs=0.01)


def test_teacher_direction_is_a_unit_vector_in_tangent_space(inst):
    """s(x) = ⟨φ(x), u⟩ with ‖u‖ = 1: check against materialised tangent features."""
    X, _ = inst.sample(20, np.random.default_rng(2))
    a, H = kx.tangent_factors(inst.model, X)
    phi = a[:, :, None] * H[:, None, :]
    aa, hh = inst.anchor_a, inst.anchor_h
    u = np.einsum("k,km,kq->mq", inst.alpha, aa, hh) / inst.u_norm
    assert np.linalg.norm(u) == pytest.approx(1.0, rel=1e-10)
    np.testing.assert_allclose(np.einsum("nmq,mq->n", phi, u), inst.score(X), atol=1e-12)
    # φ is the gradient of f at W₀ (Lemma B.6), so the margin is Assumption 3.3's
    G = inst.model.per_example_gradients(inst.model.W0[None], H)[0]
    np.testing.assert_allclose(G, phi, atol=1e-14)


def test_margin_estimator_brackets_the_true_margin(inst):
    X, y = inst.sample(200, np.random.default_rng(3))
    lo, hi = kx.estimate_margin(inst.model, X, y, iters=5000, tol=1e-2)
    # Frank–Wolfe converges sublinearly: a 1% duality gap is what 5000 steps certify
    assert inst.gamma0 <= lo <= hi <= lo / (1 - 1e-2) + 1e-12
    # the teacher u is feasible, so the margin is at least min_i y_i s(x_i)
    assert lo >= np.min(y * inst.score(X)) - 1e-9
    # flipping one label far inside the data makes it non-separable in the teacher's direction
    y2 = y.copy()
    y2[np.argmax(y * inst.score(X))] *= -1
    lo2, hi2 = kx.estimate_margin(inst.model, X, y2, iters=3000)
    assert hi2 < hi


def test_data_outside_the_unit_ball_is_refused(inst):
    with pytest.raises(ValueError, match="unit ball"):
        kx.estimate_margin(inst.model, np.full((3, 4), 0.9), np.ones(3))


def test_held_out_risk_has_small_standard_error():
    m, d, p, q = 16, 5, 6, 0.8
    H, y = kx._test_set(m, d, p, q, 0)
    inst = kx.make_instance(m, d, p, q, 0)
    from algorithms.kan.correlated_noise import logistic_loss
    per = logistic_loss(y * inst.model.forward(inst.model.W0[None], H)[0])
    se = per.std(ddof=1) / math.sqrt(per.size)
    assert per.size == kx.N_TEST and se < 0.015


def test_cor55_schedule_is_the_corollarys():
    s = cor55_schedule(10000, 0.2, 1.0, 64)
    assert s["B"] == 20 and s["T"] == 500                     # B = ⌈γ√n⌉, T = ⌈√n/γ⌉
    assert s["eta"] == pytest.approx(0.2 ** 2 * 100 / 8)      # min{1, γ²√nε/√d}
    assert cor55_schedule(10 ** 6, 0.5, 1.0, 4)["eta"] == 1.0
