"""Shared primitives: clipping, projection, sensitivities, correlated noise."""
import math

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


@pytest.mark.parametrize("shape, block, steps", [(3, 4, 10), ((2, 3), 1, 5), (5, None, 7)])
def test_normal_blocks_are_the_per_step_draws(shape, block, steps):
    """Blocked draws are bit for bit the numbers one draw per step gives (a Generator fills in
    order), for one generator and for several (row r from generator r only)."""
    blocks = prim.NormalBlocks(np.random.default_rng(3), shape, block)
    ref = np.random.default_rng(3)
    for _ in range(steps):
        np.testing.assert_array_equal(blocks.next(), ref.standard_normal(shape))
    gens = [np.random.default_rng(s) for s in (4, 5)]
    blocks = prim.NormalBlocks(gens, shape, block)
    refs = [np.random.default_rng(s) for s in (4, 5)]
    for _ in range(steps):
        np.testing.assert_array_equal(blocks.next(), np.stack([g.standard_normal(shape) for g in refs]))
    scaled, ref = prim.NormalBlocks(np.random.default_rng(3), shape, block, scale=2.5), np.random.default_rng(3)
    for _ in range(steps):
        np.testing.assert_array_equal(scaled.next(), ref.standard_normal(shape) * 2.5)


def _materialised_clipped_sum(X, r, C):
    """The textbook route: the (…, B, d) per-example gradients r_i x_i, clipped, summed."""
    return prim.clip_per_sample(r[..., None] * X, C).sum(axis=-2)


@pytest.mark.parametrize("lead", [(), (3,)])
def test_clipped_least_squares_sum_equals_materialised_clipping(lead):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((*lead, 40, 7))
    X[..., 0, :] = 0.0                       # a zero example: gradient 0, limit inf
    r = rng.standard_normal((*lead, 40)) * 3
    r[..., 1] = 0.0                          # a zero residual
    for C in (0.1, 1.0, 1e6):                # most clipped, some, none
        got = prim.clipped_least_squares_sum(X, r, prim.least_squares_clip_limits(X, C))
        np.testing.assert_allclose(got, _materialised_clipped_sum(X, r, C), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="clip_norm"):
        prim.least_squares_clip_limits(X, 0.0)


# "fused" (numba, optional extra ``fast``) is skipped cleanly where numba is not installed; its
# first use in a process costs numba's import and a compile (≈ 1–3 s, cached on disk after).
KERNELS = ("numpy", pytest.param("fused", marks=pytest.mark.skipif(
    not prim.fused_kernel_available(), reason="numba not installed (pip install -e '.[fast]')")))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("lead", [(), (2,)])
def test_linear_dpsgd_step_equals_per_example_loop(lead, kernel):
    rng = np.random.default_rng(7)
    B, d, C, lr = 30, 5, 0.5, 0.3              # B mod 4 = 2: the fused kernel's remainder rows too
    X, y = rng.standard_normal((*lead, B, d)), rng.standard_normal((*lead, B))
    w, noise = rng.standard_normal((*lead, d)), rng.standard_normal((*lead, d))
    got = prim.linear_dpsgd_step(w, X, y, lr=lr, limits=prim.least_squares_clip_limits(X, C),
                                 noise=noise, kernel=kernel)
    Xs, ys, ws, zs = (a.reshape(-1, *a.shape[len(lead):]) for a in (X, y, w, noise))
    want = []
    for Xr, yr, wr, zr in zip(Xs, ys, ws, zs):
        g = sum(prim.clip_per_sample(x * (x @ wr - yi), C) for x, yi in zip(Xr, yr))
        want.append(wr - lr * (g + zr) / B)
    np.testing.assert_allclose(got, np.reshape(want, got.shape), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not prim.fused_kernel_available(), reason="numba not installed")
@pytest.mark.parametrize("lead", [(), (3,), (2, 2)])
@pytest.mark.parametrize("B, d", [(257, 100), (64, 1000), (3, 7)])
def test_fused_kernel_agrees_with_numpy_path(lead, B, d):
    """Same update as the two-gemv path to rounding (sums reassociated: 1e-12 relative is ~1e4
    ulp, far above the ≈ 1e-15 seen and far below any clipping or noise effect), with zero
    examples (limit inf), zero residuals, every regime of clipping and B mod 4 ≠ 0.  Also what
    "auto" picks: the fused kernel for float64, the numpy path (in float32) for float32."""
    rng = np.random.default_rng(B * d)
    X = rng.standard_normal((*lead, B, d))
    X[..., 0, :] = 0.0
    w, noise = rng.standard_normal((*lead, d)), rng.standard_normal((*lead, d))
    y = np.einsum("...bd,...d->...b", X, w)
    y[..., 1:] += rng.standard_normal((*lead, B - 1)) * 3
    for C in (0.05, 1.0, 1e6):
        lim = prim.least_squares_clip_limits(X, C)
        ref = prim.linear_dpsgd_step(w, X, y, lr=0.7, limits=lim, noise=noise, kernel="numpy")
        got = prim.linear_dpsgd_step(w, X, y, lr=0.7, limits=lim, noise=noise, kernel="fused")
        auto = prim.linear_dpsgd_step(w, X, y, lr=0.7, limits=lim, noise=noise)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(auto, got)
        assert got.shape == ref.shape and got.dtype == np.float64
    X32 = X.astype(np.float32)
    lim32 = prim.least_squares_clip_limits(X32, 1.0).astype(np.float32)
    args = dict(lr=0.7, limits=lim32, noise=noise.astype(np.float32))
    np.testing.assert_array_equal(prim.linear_dpsgd_step(w.astype(np.float32), X32, y.astype(np.float32), **args),
                                  prim.linear_dpsgd_step(w.astype(np.float32), X32, y.astype(np.float32),
                                                         kernel="numpy", **args))


@pytest.mark.skipif(not prim.fused_kernel_available(), reason="numba not installed")
def test_fused_kernel_propagates_nan_and_clips_inf_as_numpy_does():
    X, w = np.eye(4, 3), np.zeros(3)
    lim = prim.least_squares_clip_limits(X, 1.0)
    for y in (np.array([np.nan, 0.0, 1.0, 0.0]), np.array([np.inf, -np.inf, 0.5, 0.0])):
        ref = prim.linear_dpsgd_step(w, X, y, lr=1.0, limits=lim, noise=np.zeros(3), kernel="numpy")
        got = prim.linear_dpsgd_step(w, X, y, lr=1.0, limits=lim, noise=np.zeros(3), kernel="fused")
        np.testing.assert_array_equal(got, ref)


def test_linear_dpsgd_step_bad_inputs_name_the_parameter(monkeypatch):
    X, y, w = np.ones((4, 3)), np.ones(4), np.ones(3)
    lim = prim.least_squares_clip_limits(X, 1.0)
    for kw, name in ((dict(y=np.ones(3)), "y"), (dict(w=np.ones(2)), "w"),
                     (dict(noise=np.ones(4)), "noise"), (dict(limits=np.ones(3)), "limits"),
                     (dict(lr=-1.0), "lr"), (dict(lr=math.inf), "lr"), (dict(lr=0), "lr"),
                     (dict(lr=float("nan")), "lr"), (dict(X=np.ones(3)), "X"),
                     (dict(noise=[0.0, 0.0]), "noise"), (dict(kernel="numba"), "kernel")):
        args = {**dict(w=w, X=X, y=y, lr=0.1, limits=lim, noise=np.zeros(3)), **kw}
        with pytest.raises(ValueError, match=name):
            prim.linear_dpsgd_step(**args)
    # the fast path for a float lr and arrays accepts what the validators accept (an int lr,
    # list inputs) with the same result, on either kernel
    ref = prim.linear_dpsgd_step(w, X, y, lr=1.0, limits=lim, noise=np.zeros(3), kernel="numpy")
    alt = prim.linear_dpsgd_step(list(w), X, list(y), lr=1, limits=list(lim), noise=[0.0] * 3,
                                 kernel="numpy")
    np.testing.assert_array_equal(ref, alt)
    if prim.fused_kernel_available():
        alt = prim.linear_dpsgd_step(list(w), X, list(y), lr=1, limits=list(lim), noise=[0.0] * 3)
        np.testing.assert_allclose(alt, ref, rtol=1e-12, atol=1e-12)
    # without numba: "auto" is the numpy path, "fused" a ValueError saying how to get it
    monkeypatch.setattr(prim, "_HAVE_NUMBA", False)
    np.testing.assert_array_equal(prim.linear_dpsgd_step(w, X, y, lr=1.0, limits=lim,
                                                         noise=np.zeros(3)), ref)
    with pytest.raises(ValueError, match=r"kernel='fused' needs numba.*\[fast\]"):
        prim.linear_dpsgd_step(w, X, y, lr=1.0, limits=lim, noise=np.zeros(3), kernel="fused")


def _project_ball_reference(w, center, r):
    """project_ball before its fast exit (commit 52c6549): the exact test on every call."""
    diff = w - center
    norms = np.sqrt(np.einsum("...i,...i->...", diff, diff))[..., None]
    inside = norms <= r
    if inside.all():
        return w
    return np.where(inside, w, center + diff * (r / np.maximum(norms, np.finfo(float).tiny)))


@pytest.mark.parametrize("d", [1, 3, 50, 1000])
def test_project_ball_fast_exit_is_bit_identical(d):
    """Rows inside, on and just beyond the sphere (radius × (1 ± k ulp)): the fast exit returns
    exactly what the exact test returns."""
    rng = np.random.default_rng(d)
    c = rng.standard_normal(d)
    u = rng.standard_normal((400, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    for r in (1e-3, 0.7, 3.0):
        for scale in (0.5, 1 - 1e-12, 1 - 4e-16, 1.0, 1 + 2e-16, 1 + 1e-12):
            w = c + u * (r * scale)
            for rows in (w, w[:1]):
                np.testing.assert_array_equal(prim.project_ball(rows, c, r),
                                              _project_ball_reference(rows, c, r))
    huge = c + u * 1e170                       # squared norms overflow; r² too
    np.testing.assert_array_equal(prim.project_ball(huge, c, 1e200), _project_ball_reference(huge, c, 1e200))
    with pytest.raises(ValueError, match="radius"):
        prim.project_ball(u, c, -1.0)
    with pytest.raises(ValueError, match="radius"):
        prim.project_ball(u, c, float("inf"))


def test_row_norms_equal_linalg_norm():
    x = np.random.default_rng(8).standard_normal((5, 7, 33)) * 1e3
    np.testing.assert_array_equal(prim.row_norms(x), np.linalg.norm(x, axis=-1))
