"""Shared primitives: clipping, projection, sensitivities, correlated noise."""
import numpy as np
import pytest

from algorithms import accounting as acc
from algorithms import primitives as prim


def test_clip_per_sample():
    g = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    c = prim.clip_per_sample(g, 1.0)
    np.testing.assert_allclose(np.linalg.norm(c, axis=1), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(c[1], g[1])
    with pytest.raises(ValueError, match="clip_norm"):
        prim.clip_per_sample(g, 0.0)


def test_project_ball_rows():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((50, 3)) * 3
    c = np.array([1.0, -1.0, 0.5])
    p = prim.project_ball(w, c, 2.0)
    r = np.linalg.norm(p - c, axis=1)
    assert np.all(r <= 2.0 + 1e-12)
    inside = np.linalg.norm(w - c, axis=1) <= 2.0
    np.testing.assert_array_equal(p[inside], w[inside])
    np.testing.assert_allclose(r[~inside], 2.0)


def test_mean_gradient_sensitivity_relations():
    assert prim.mean_gradient_sensitivity(3.0, 10, acc.REPLACE_ONE) == pytest.approx(0.6)
    assert prim.mean_gradient_sensitivity(3.0, 10, acc.ADD_OR_REMOVE_ONE) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="n must be"):
        prim.mean_gradient_sensitivity(1.0, 0)


def test_mean_gradient_sensitivity_brute_force():
    """Replace-one on clipped gradients: max over neighbours of ‖mean − mean'‖ is 2L/n."""
    rng = np.random.default_rng(1)
    n, d, L = 7, 3, 1.5
    G = prim.clip_per_sample(rng.standard_normal((n, d)) * 5, L)
    worst = 0.0
    for i in range(n):
        for _ in range(200):
            G2 = G.copy()
            G2[i] = -G[i] / np.linalg.norm(G[i]) * L   # the worst replacement is antipodal
            worst = max(worst, np.linalg.norm(G.mean(0) - G2.mean(0)))
    assert worst <= prim.mean_gradient_sensitivity(L, n) + 1e-12
    assert worst == pytest.approx(prim.mean_gradient_sensitivity(L, n), rel=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.7, 0.95])
def test_correlated_noise_stream_equals_matrix_form(lam):
    T, d = 9, 4
    dense = prim.correlated_noise(np.random.default_rng(5), T, d, lam, 2.0)
    rng = np.random.default_rng(5)
    stream = prim.CorrelatedNoiseStream(rng, d, lam, 2.0)
    np.testing.assert_allclose(np.stack([stream.next() for _ in range(T)]), dense)
    Z = np.random.default_rng(5).standard_normal((T, d))
    Cinv = np.linalg.inv(prim.correlated_noise_matrix(lam, T))
    np.testing.assert_allclose(2.0 * Cinv @ Z, dense, atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.7, 0.95])
@pytest.mark.parametrize("T, k, b", [(1, 1, None), (6, 1, None), (12, 2, 6), (12, 3, 4),
                                     (12, 2, 3), (10, 5, 2), (8, 4, 1)])
def test_correlated_sensitivity_matches_brute_force(lam, T, k, b):
    closed = prim.correlated_sensitivity(lam, T, k, b)
    brute = prim.correlated_sensitivity_brute_force(lam, T, k, b)
    assert closed == pytest.approx(brute, rel=1e-12)


def test_correlated_sensitivity_known_values():
    assert prim.correlated_sensitivity(0.0, 10, 3, 3) == pytest.approx(np.sqrt(3))
    assert prim.correlated_sensitivity(0.7, 12, 3, 4) == pytest.approx(2.7931, abs=1e-4)
    lam = 0.9
    assert prim.correlated_sensitivity(lam, 10_000) == pytest.approx(1 / np.sqrt(1 - lam**2))


@pytest.mark.parametrize("lam", [-0.5, -0.9])
def test_negative_lambda_single_participation_exact(lam):
    assert prim.correlated_sensitivity(lam, 8) == pytest.approx(
        prim.correlated_sensitivity_brute_force(lam, 8), rel=1e-12)


def test_correlated_sensitivity_refuses_outside_its_regime():
    with pytest.raises(ValueError, match="lam must be in \\[0, 1\\)"):
        prim.correlated_sensitivity(-0.5, 12, 3, 4)
    with pytest.raises(ValueError, match="lam must be in"):
        prim.correlated_sensitivity(1.0, 12)
    with pytest.raises(ValueError, match="min_separation"):
        prim.correlated_sensitivity(0.5, 12, 3, 7)
    with pytest.raises(ValueError, match="participations"):
        prim.correlated_sensitivity(0.5, 4, 5)


def test_gaussian_mechanism_rows_are_per_generator():
    gens = [np.random.default_rng(s) for s in range(3)]
    out = prim.gaussian_mechanism(gens, np.zeros((3, 4)), 0.5, 2.0)
    np.testing.assert_allclose(out[1], np.random.default_rng(1).standard_normal(4))
    with pytest.raises(ValueError, match="rows"):
        prim.gaussian_mechanism(gens, np.zeros((2, 4)), 0.5, 2.0)
