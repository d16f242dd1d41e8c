"""User-level problems: the exact population risks agree with Monte Carlo, per-user statistics
with item gradients, and the smoothing bound |F_r − F| ≤ Lr (Lemma D.1) holds numerically."""
import math

import numpy as np
import pytest

from algorithms import user_level_sco as ul
from empirical.user_level_problems import (LadUsers, LeastSquaresUsers, QuadraticUsers,
                                           StreamingQuadratic)


def test_least_squares_excess_is_exact():
    rng = np.random.default_rng(0)
    d = 6
    data = LeastSquaresUsers(4, 2, d, rng)
    x = rng.normal(size=d) * 0.5
    a = rng.standard_normal((400_000, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    xi = rng.uniform(-0.5, 0.5, 400_000)
    b = a @ data.w_star + xi
    mc = np.mean(0.5 * (a @ x - b) ** 2) - np.mean(0.5 * xi**2)
    assert data.excess(x)[0] == pytest.approx(mc, rel=0.02)


def test_user_statistics_match_items():
    rng = np.random.default_rng(1)
    data = LeastSquaresUsers(5, 7, 3, rng, keep_items=True)
    x = np.array([0.3, -0.2, 0.5])
    users = np.array([0, 3, 4])
    q = data.user_mean_gradients(x, users)
    items = np.concatenate([data.item_gradients(np.tile(x, (7, 1)), np.full(7, u), np.arange(7))
                            .mean(axis=0, keepdims=True) for u in users])
    assert np.allclose(q, items)
    assert data.grad_evals == 3 * 7 + 3 * 7


def test_quadratic_users_per_user_means_are_exact():
    rng = np.random.default_rng(2)
    data = QuadraticUsers(20000, 16, 4, rng)
    dev = data.zbar - data.mu0
    # E‖z̄_u − μ0‖² = E‖ξ‖²/m = 1/16; Rademacher coordinates live on the grid (2k − m)/(m√d)
    assert np.mean(np.sum(dev**2, axis=1)) == pytest.approx(1 / 16, rel=0.03)
    grid = dev * 16 * 2
    assert np.allclose(grid, np.round(grid))
    assert data.excess(data.mu0)[0] == 0.0


def test_lad_excess_matches_monte_carlo_and_lipschitz():
    rng = np.random.default_rng(3)
    d, s = 5, 0.3
    data = LadUsers(2, 2, d, rng, s=s)
    x = data.w_star + np.array([0.4, -0.1, 0.2, 0.0, 0.3])
    a = rng.standard_normal((400_000, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    noise = rng.laplace(0, s, 400_000)
    mc = np.mean(np.abs(a @ (x - data.w_star) - noise)) - np.mean(np.abs(noise))
    assert data.excess(x)[0] == pytest.approx(mc, abs=3e-3)
    assert data.excess(data.w_star)[0] == pytest.approx(0.0, abs=1e-12)


def test_smoothing_changes_the_loss_by_at_most_Lr():
    """Lemma D.1 (and UL-E6's direction): for convex f, f ≤ f_r ≤ f + Lr."""
    rng = np.random.default_rng(4)
    d, s, r = 5, 0.3, 0.2
    data = LadUsers(2, 2, d, rng, s=s)
    x = data.w_star + 0.3
    Y = ul.uniform_ball(rng, 4000, d, r)
    Fr = np.mean(data.excess(x[None, :] + Y))
    F = data.excess(x)[0]
    assert F - 1e-3 <= Fr <= F + 1.0 * r


def test_streaming_quadratic_gradient_is_unbiased():
    data = StreamingQuadratic(10, 10, 3, np.random.default_rng(5))
    X = np.zeros((200_000, 3))
    g = data.item_gradients(X, np.zeros(200_000, int), np.zeros(200_000, int)).mean(axis=0)
    assert np.allclose(g, -data.mu0, atol=0.01)
