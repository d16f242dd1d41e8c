"""User-level problems: the exact population risks agree with Monte Carlo, per-user statistics
with item gradients, and the smoothing bound |F_r − F| ≤ Lr (Lemma D.1) holds numerically."""
import math

import numpy as np
import pytest

from algorithms.userlevel import sco as ul
from empirical.papers.userlevel.problems import (LadUsers, LeastSquaresUsers, LogisticUsers,
                                           QuadraticUsers, StreamingQuadratic)


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


@pytest.mark.parametrize("d", [3, 4, 9])
def test_logistic_risk_by_quadrature_against_monte_carlo(d):
    """F(x) by the disk rule against 400 000 Monte Carlo features (labels integrated exactly):
    agreement to 4 MC standard errors; refining the rule moves F by < 1e-12; F − F* ≥ 0 at
    random points and its gradient vanishes at w* (well specified), so F* = F(w*)."""
    rng = np.random.default_rng(20 + d)
    data = LogisticUsers(3, 2, d, rng)
    fine = LogisticUsers(3, 2, d, rng, nodes=80, angles=128)
    a = rng.standard_normal((400_000, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    p = 1.0 / (1.0 + np.exp(-(a @ data.w_star)))
    for x in (np.zeros(d), rng.normal(size=d) * 0.7):
        u = a @ x
        vals = p * np.logaddexp(0, -u) + (1 - p) * np.logaddexp(0, u)
        assert data._risk(x[None])[0] == pytest.approx(vals.mean(), abs=4 * vals.std() / 632 + 1e-12)
        assert abs(fine.excess(x)[0] - data.excess(x)[0]) < 1e-12
    X = rng.normal(size=(50, d))
    assert np.all(data.excess(X) >= -1e-14)
    h = 1e-5
    grad = [(data.excess(data.w_star + h * e)[0] - data.excess(data.w_star - h * e)[0]) / (2 * h)
            for e in np.eye(d)]
    assert np.max(np.abs(grad)) < 1e-8


def test_logistic_gradients_match_the_loss_and_reject_bad_input():
    rng = np.random.default_rng(3)
    data = LogisticUsers(4, 5, 3, rng)
    x = np.array([0.2, -0.4, 0.1])
    users = np.array([0, 2, 3])
    g = data.user_mean_gradients(x, users)
    items = data.item_gradients(np.repeat(x[None], 15, 0), np.repeat(users, 5), np.tile(np.arange(5), 3))
    assert np.allclose(g, items.reshape(3, 5, 3).mean(axis=1))
    # finite differences of the empirical loss of user 2
    a, y = data.a[2], data.y[2]
    f = lambda z: np.mean(np.logaddexp(0, -y * (a @ z)))  # noqa: E731
    fd = [(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
    assert np.allclose(g[1], fd, atol=1e-8)
    assert np.all(np.linalg.norm(items, axis=1) <= data.L + 1e-12)
    with pytest.raises(ValueError, match="d must be"):
        LogisticUsers(4, 2, 2, rng)
    with pytest.raises(ValueError, match="w_norm must be"):
        LogisticUsers(4, 2, 3, rng, w_norm=3.0)


@pytest.mark.parametrize("shape,d", [((7,), 1), ((4096, 5), 4), ((40_000,), 3), ((300, 70), 7),
                                     ((1000, 37), 9), ((20_000,), 16), ((2, 3), 64), ((0, 5), 4)])
def test_sphere_blocks_equal_one_shot_normalisation_bit_for_bit(shape, d):
    """``_sphere`` fills blocks (and sums squares column by column for d < 8) for speed: its draws
    must be exactly those of normalising one ``standard_normal((*shape, d))`` call, and leave
    the generator where that call does (otherwise every stored row would change).  Shapes cross
    the block size (2^14 vectors), d on both sides of numpy's pairwise-sum cut-off (8)."""
    from empirical.papers.userlevel import problems as ulp

    r1, r2 = np.random.default_rng([5, d]), np.random.default_rng([5, d])
    g = r1.standard_normal((*shape, d))
    want = g / np.linalg.norm(g, axis=-1, keepdims=True)
    got = ulp._sphere(r2, shape, d)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert r1.random() == r2.random()
