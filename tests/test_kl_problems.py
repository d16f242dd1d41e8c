"""KL paper: the synthetic problems of empirical/papers/kl/experiments.py have the constants they claim.

Every constant an experiment feeds to a bound or an algorithm (κ, γ, L0, L1, F*) is checked here
numerically: the KL inequality F − F* ≤ γ^κ‖∇F‖^κ on random points of the region where it is
claimed (with equality for the radial loss), Lipschitz and smoothness constants on random pairs,
gradients against finite differences, the cancellation-free excess against F(w) − F*, and the
O(d) cost of a gradient whatever n is.
"""
import math
import tempfile
import time

import numpy as np
import pytest

from empirical.papers.kl.experiments import (MomentPowerRegression, NonconvexKL, PowerRegression,
                                    RadialPowerLoss, SpreadQuarticLoss)


def _radial(p, d=3, n=100, **kw):
    return RadialPowerLoss(n, d, p, **kw)


PROBLEMS = {
    "radial_p2": lambda: _radial(2.0, c=1.5, B=1.0),
    "radial_p3": lambda: _radial(3.0, c=0.7, B=2.0),
    "radial_p4": lambda: _radial(4.0),
    "radial_p6": lambda: _radial(6.0, d=5),
    "radial_p1.5": lambda: _radial(1.5),
    "radial_p4/3": lambda: _radial(4.0 / 3.0, d=2),
    "ncpl_d1": lambda: NonconvexKL(50, 1, 2.0),
    "ncpl_d4": lambda: NonconvexKL(50, 4, 2.0),
    "nckl4_d1": lambda: NonconvexKL(50, 1, 4.0),
    "nckl3_d3": lambda: NonconvexKL(50, 3, 3.0, c=2.0),
    "regr_p2_d3": lambda: PowerRegression.sample(400, 3, 2.0, data_seed=1),
    "regr_p4_d1": lambda: PowerRegression.sample(300, 1, 4.0, data_seed=2),
    "regr_p4_d3": lambda: PowerRegression.sample(500, 3, 4.0, data_seed=3),
    "mregr_p2_d3": lambda: MomentPowerRegression(400, 3, 2.0, data_seed=1),
    "mregr_p4_d3": lambda: MomentPowerRegression(500, 3, 4.0, data_seed=3),
    "spread_d1": lambda: SpreadQuarticLoss(40, 1, 0.3),
    "spread_d5": lambda: SpreadQuarticLoss(50, 5, 0.2, c=2.0),
}


def _inside(prob, rng, m=400):
    """Random points of the region where KL is claimed (radii spread over many scales)."""
    d = prob.d
    U = rng.standard_normal((m, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    if isinstance(prob, RadialPowerLoss):
        R, centre = prob.B, prob.w_star
    elif isinstance(prob, (PowerRegression, MomentPowerRegression)):
        R, centre = prob.kl_radius, prob.w_star
    elif isinstance(prob, SpreadQuarticLoss):
        R, centre = prob.inner_radius, np.zeros(d)
    else:                                   # NonconvexKL: sample a box and keep {G ≤ U}
        W = rng.uniform(-prob.b, prob.b, size=(20 * m, d)) * rng.random((20 * m, 1)) ** 2
        W = W[prob.in_kl_region(W)][:m]
        assert len(W) > 50
        return W
    r = R * np.exp(rng.uniform(math.log(1e-4), 0.0, size=(m, 1)))
    W = centre + r * U
    assert np.all(prob.in_kl_region(W))
    return W


def _kl_ratio(prob, W, kappa=None, gamma=None):
    kappa = prob.kappa if kappa is None else kappa
    gamma = prob.gamma if gamma is None else gamma
    g = np.linalg.norm(prob.gradient(W), axis=1)
    return prob.excess(W) / (gamma * g) ** kappa


@pytest.mark.parametrize("name", [k for k in PROBLEMS if not k.startswith("spread")])
def test_kl_inequality_holds_in_region(name):
    prob = PROBLEMS[name]()
    W = _inside(prob, np.random.default_rng(0))
    ratio = _kl_ratio(prob, W)
    assert np.all(ratio <= 1.0 + 1e-9), ratio.max()


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0, 6.0, 1.5, 4.0 / 3.0])
def test_radial_kl_holds_with_equality(p):
    prob = _radial(p, c=1.3, B=1.5)
    ratio = _kl_ratio(prob, _inside(prob, np.random.default_rng(1)))
    np.testing.assert_allclose(ratio, 1.0, rtol=1e-10)
    assert prob.kappa == pytest.approx(p / (p - 1))


def test_radial_kl_fails_outside_its_ball():
    prob = _radial(4.0)
    W = np.array([[3.0, 0.0, 0.0]])
    assert not prob.in_kl_region(W)[0]
    assert _kl_ratio(prob, W)[0] > 1.0


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0])
def test_nonconvex_kl_constant_is_tight_in_1d(p):
    prob = NonconvexKL(10, 1, p)
    x = np.linspace(1e-3, prob.b, 20001)[:, None]
    ratio = _kl_ratio(prob, x)
    assert ratio.max() <= 1 + 1e-9 and ratio.max() > 1 - 1e-6     # sup attained (x ≈ 2.20)
    assert x[np.argmax(ratio), 0] == pytest.approx(2.20, abs=0.01)
    assert prob.kappa == pytest.approx(p / (p - 1))


def test_nonconvex_pl_is_nonconvex_with_unique_minimiser():
    prob = NonconvexKL(10, 1, 2.0)
    x = np.linspace(-prob.b, prob.b, 4001)[:, None]
    F = prob.loss(x)
    second = F[2:] - 2 * F[1:-1] + F[:-2]
    assert second.min() < 0                                        # not convex
    assert np.all(np.abs(prob.gradient(x[np.abs(x[:, 0]) > 1e-3])) > 0)   # only 0 is stationary
    assert prob.loss(np.zeros(1)) == 0.0


@pytest.mark.parametrize("d", [1, 5])
def test_spread_quartic_is_pl_near_optimum_and_kl43_globally(d):
    prob = SpreadQuarticLoss(2 * d * 10, d, 0.3)
    W = _inside(prob, np.random.default_rng(2))
    r2 = _kl_ratio(prob, W, kappa=2.0, gamma=prob.kl_gamma(2.0))
    r43 = _kl_ratio(prob, W, kappa=4 / 3, gamma=prob.kl_gamma(4 / 3))
    assert np.all(r2 <= 1 + 1e-9) and np.all(r43 <= 1 + 1e-9)
    small = np.linalg.norm(W, axis=1) < 1e-3
    np.testing.assert_allclose(r2[small], 1.0, rtol=1e-4)         # PL tight as w → w*
    assert np.all(r43[small] < 0.05)                               # κ = 4/3 slack near w*: κ_eff = 2


# ----------------------------------------------------------------------------- Lipschitz, smooth
def _points_everywhere(prob, rng, m=300):
    scale = np.exp(rng.uniform(math.log(1e-3), math.log(20.0), size=(m, 1)))
    centre = getattr(prob, "w_star", np.zeros(prob.d))
    return centre + scale * rng.standard_normal((m, prob.d)) / math.sqrt(prob.d)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_per_example_gradients_bounded_by_L0(name):
    prob = PROBLEMS[name]()
    rng = np.random.default_rng(3)
    W = _points_everywhere(prob, rng)
    idx = rng.choice(prob.n, size=min(prob.n, 40), replace=False)
    G = prob.per_sample_gradients(W, idx)
    assert np.linalg.norm(G, axis=-1).max() <= prob.L0 * (1 + 1e-9)


@pytest.mark.parametrize("name", [k for k in PROBLEMS if k not in ("radial_p1.5", "radial_p4/3")])
def test_per_example_gradients_are_L1_lipschitz(name):
    prob = PROBLEMS[name]()
    rng = np.random.default_rng(4)
    W = _points_everywhere(prob, rng)
    V = W + rng.standard_normal(W.shape) * np.exp(rng.uniform(-8, 0, size=(W.shape[0], 1)))
    idx = rng.choice(prob.n, size=min(prob.n, 20), replace=False)
    dg = np.linalg.norm(prob.per_sample_gradients(W, idx) - prob.per_sample_gradients(V, idx), axis=-1)
    dw = np.linalg.norm(W - V, axis=1)[:, None]
    assert np.all(dg <= prob.L1 * dw * (1 + 1e-7) + 1e-12)


def test_nonsmooth_radial_has_no_L1():
    with pytest.raises(ValueError, match="not smooth"):
        _ = _radial(1.5).L1


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_gradient_matches_finite_differences(name):
    prob = PROBLEMS[name]()
    rng = np.random.default_rng(5)
    W = _points_everywhere(prob, rng, m=30)
    h = 1e-6
    G = prob.gradient(W)
    for j in range(prob.d):
        E = np.zeros(prob.d)
        E[j] = h
        fd = (prob.loss(W + E) - prob.loss(W - E)) / (2 * h)
        np.testing.assert_allclose(G[:, j], fd, rtol=1e-5, atol=1e-6 * max(1.0, prob.L0))


@pytest.mark.parametrize("name", ["ncpl_d4", "regr_p4_d3", "spread_d5", "radial_p4"])
def test_per_sample_gradients_average_to_gradient(name):
    prob = PROBLEMS[name]()
    W = _points_everywhere(prob, np.random.default_rng(6), m=7)
    np.testing.assert_allclose(prob.per_sample_gradients(W, np.arange(prob.n)).mean(axis=1),
                               prob.gradient(W), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- exact excess
def test_spread_excess_matches_explicit_mean_over_examples():
    prob = SpreadQuarticLoss(60, 3, 0.25, c=1.7)
    rng = np.random.default_rng(7)
    W = _points_everywhere(prob, rng, m=200)
    X = np.concatenate([prob.s * np.eye(3), -prob.s * np.eye(3)])
    dist = np.linalg.norm(W[:, None, :] - X[None], axis=2)
    h = np.where(dist <= prob.B, dist**4, prob.B**4 + 4 * prob.B**3 * (dist - prob.B))
    direct = prob.c * h.mean(axis=1) - prob.F_star           # cancellation harmless at these w
    moderate = np.linalg.norm(W, axis=1) > 1e-2
    np.testing.assert_allclose(prob.excess(W)[moderate], direct[moderate], rtol=1e-9)
    assert prob.excess(np.zeros(3))[0] == 0.0
    tiny = np.full((1, 3), 1e-9)                              # where the direct formula cancels
    assert prob.excess(tiny)[0] == pytest.approx(prob.c * prob.a * 3e-18, rel=1e-8)


def test_regression_excess_matches_naive_residuals():
    prob = PowerRegression.sample(200, 3, 4.0, data_seed=9)
    W = prob.w_star + 0.3 * np.random.default_rng(8).standard_normal((20, 3))
    y = prob.A @ prob.w_star
    res = np.abs(W @ prob.A.T - y)
    h = np.where(res <= 1.0, res**4, 1.0 + 4.0 * (res - 1.0))
    np.testing.assert_allclose(prob.excess(W), h.mean(axis=1), rtol=1e-9)


def test_radial_and_nonconvex_excess_are_exact_far_below_float_resolution():
    rad = _radial(1.5)
    w = rad.w_star + np.array([1e-120, 0.0, 0.0])
    assert rad.excess(w)[0] == pytest.approx(1e-180, rel=1e-12)
    nc = NonconvexKL(10, 1, 4.0)
    assert nc.excess(np.array([1e-60]))[0] == pytest.approx((4e-120) ** 2, rel=1e-9)   # G ≈ 4x²


def test_start_points_and_F0():
    rad = _radial(4.0)
    assert rad.excess(rad.start())[0] == pytest.approx(rad.c * (rad.B / 2) ** 4)
    nc = NonconvexKL(10, 1, 2.0)
    assert nc.in_kl_region(nc.start())[0]
    assert NonconvexKL(10, 6, 4.0).in_kl_region(NonconvexKL(10, 6, 4.0).start())[0]
    sp_ = SpreadQuarticLoss(20, 2, 0.3)
    assert sp_.in_kl_region(sp_.start())[0]


# ----------------------------------------------------------------------------- cost
@pytest.mark.parametrize("make", [
    lambda: RadialPowerLoss(10**8, 1000, 4.0),
    lambda: NonconvexKL(10**8, 1000, 3.0),
    lambda: SpreadQuarticLoss(2 * 1000 * 5 * 10**4, 1000, 0.3),
])
def test_gradient_cost_does_not_grow_with_n(make):
    prob = make()
    W = 0.01 * np.random.default_rng(9).standard_normal((8, prob.d))
    t0 = time.perf_counter()
    for _ in range(20):
        prob.gradient(W)
        prob.excess(W)
    assert time.perf_counter() - t0 < 1.0                  # O(R·d) each; O(n) would take minutes
    assert prob.grad_evals == 20 * 8 * prob.n              # but counted as n per row (oracle model)


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("make, match", [
    (lambda: RadialPowerLoss(10, 2, 1.0), "p"),
    (lambda: RadialPowerLoss(10, 2, 4.0, c=0.0), "c"),
    (lambda: RadialPowerLoss(10, 2, 4.0, B=-1.0), "B"),
    (lambda: RadialPowerLoss(10.5, 2, 4.0), "n"),
    (lambda: RadialPowerLoss(10, 0, 4.0), "d"),
    (lambda: RadialPowerLoss(10, 2, 4.0, w_star=np.zeros(3)), "w_star"),
    (lambda: RadialPowerLoss(10, 2, float("nan")), "p"),
    (lambda: NonconvexKL(10, 1, 1.5), "p"),
    (lambda: NonconvexKL(10, 1, 4.0, b=0.0), "b"),
    (lambda: NonconvexKL(10, 1, 4.0).start(3.0), "r0"),
    (lambda: PowerRegression(np.ones((5, 2)) * 0.5, np.zeros(2), 4.0), "rank"),
    (lambda: PowerRegression(np.ones((5, 1)) * 2.0, np.zeros(1), 4.0), "norm"),
    (lambda: PowerRegression(np.ones((5, 1)) * 0.5, np.zeros(1), 1.5), "p"),
    (lambda: PowerRegression(np.ones((5, 1)) * 0.5, np.zeros(2), 4.0), "w_star"),
    (lambda: SpreadQuarticLoss(30, 4, 0.3), "multiple of 2d"),
    (lambda: SpreadQuarticLoss(16, 4, 1.0), "s"),
    (lambda: SpreadQuarticLoss(16, 4, 0.3).kl_gamma(1.5), "kappa"),
])
def test_bad_inputs_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("p", [2.0, 4.0])
@pytest.mark.parametrize("d", [1, 3])
def test_moment_regression_is_the_stored_regression(p, d):
    """Same rows (the design spans two generator blocks), same constants, and the same F and ∇F
    to rounding, inside the KL region (polynomial form) and outside it (streamed)."""
    n = 300_000
    stored = PowerRegression.sample(n, d, p, data_seed=5)
    moment = MomentPowerRegression(n, d, p, data_seed=5)
    for attr in ("kappa", "gamma", "L0", "L1", "kl_radius"):
        assert getattr(moment, attr) == pytest.approx(getattr(stored, attr), rel=1e-12), attr
    scales = np.array([[1e-4], [1e-2], [0.3], [1.5], [4.0]])
    W = stored.w_star + np.random.default_rng(0).standard_normal((5, d)) * scales
    inside = moment.in_kl_region(W)
    assert inside.any() and not inside.all()
    np.testing.assert_allclose(moment.loss(W), stored.loss(W), rtol=1e-12)
    np.testing.assert_allclose(moment.gradient(W), stored.gradient(W), rtol=1e-11, atol=1e-15)
    assert moment.streamed_evals == 2 * int((~inside).sum())          # loss + gradient
    idx = np.array([0, 7, n - 1])
    np.testing.assert_allclose(moment.per_sample_gradients(W, idx), stored.per_sample_gradients(W, idx))


def test_moment_regression_gradient_cost_does_not_grow_with_n():
    """The polynomial form touches no data: a gradient at n = 10^6 does exactly the work of one
    at n = 10^3 (no streaming inside the KL region)."""
    small, big = MomentPowerRegression(10**3, 4, 4.0), MomentPowerRegression(10**6, 4, 4.0)
    W = np.tile(big.start(), (8, 1))
    for prob in (small, big):
        prob.gradient(W)
        assert prob.streamed_evals == 0


def test_design_moments_are_the_16_column_gram_bit_for_bit():
    """The fourth moments from the 10 distinct products a_j a_k equal, bit for bit, the Gram
    matrix of vec(a_i a_iᵀ) they replaced (same sums of the same products), so rows computed
    before the change stay valid; a design of two generator blocks."""
    from empirical.papers.kl.problems_regression import _design_moments, regression_design

    n, d = 300_000, 4
    A = np.concatenate(list(regression_design(n, d, 2)))
    Q = (A[:, :, None] * A[:, None, :]).reshape(n, d * d)
    G = sum(Q[s:s + (1 << 18)].T @ Q[s:s + (1 << 18)] for s in range(0, n, 1 << 18)) / n
    got = _design_moments(n, d, 4.0, 2)
    assert np.array_equal(got["G"], G)
    assert np.array_equal(got["M2"], sum(A[s:s + (1 << 18)].T @ A[s:s + (1 << 18)]
                                         for s in range(0, n, 1 << 18)) / n)


def test_design_moments_cache_is_shared_exact_and_keyed(tmp_path, monkeypatch):
    """A second process-level build reads the file (the builder is not called), the arrays
    round-trip exactly, another input (data seed) or a file of another key is a miss, a corrupt
    file is rebuilt, a directory others can write is not used, DPRATES_CACHE=off writes
    nothing, and the default is a directory under the temporary directory.  The cache can fail: each assertion
    names what a broken cache would do."""
    import empirical.papers.kl.problems_regression as kp

    monkeypatch.setenv("DPRATES_CACHE", str(tmp_path))
    monkeypatch.setattr(kp, "MOMENT_CACHE_MIN_ROWS", 0)
    first = MomentPowerRegression(3000, 4, 4.0, data_seed=1)
    files = list(tmp_path.glob("kl-design-moments-*.npz"))
    assert len(files) == 1                                       # written once, atomically
    real = kp._design_moments
    calls = []
    monkeypatch.setattr(kp, "_design_moments", lambda *a: calls.append(a) or real(*a))
    again = MomentPowerRegression(3000, 4, 4.0, data_seed=1)
    assert calls == []                                          # read, not rebuilt
    assert np.array_equal(again.G, first.G) and np.array_equal(again.M2, first.M2)
    assert again.gamma == first.gamma and again.excess(again.start()) == first.excess(first.start())
    other = MomentPowerRegression(3000, 4, 4.0, data_seed=2)
    assert len(calls) == 1 and not np.array_equal(other.G, first.G)   # the seed is in the key
    files[0].write_bytes(b"not a zip file")
    MomentPowerRegression(3000, 4, 4.0, data_seed=1)
    assert len(calls) == 2                                      # corrupt file: rebuilt
    # a file holding another key under this name (a truncated-digest collision) is refused
    os_name = files[0]
    other_file = next(f for f in tmp_path.glob("kl-design-moments-*.npz") if f != os_name)
    os_name.write_bytes(other_file.read_bytes())
    again = MomentPowerRegression(3000, 4, 4.0, data_seed=1)
    assert len(calls) == 3 and np.array_equal(again.G, first.G)
    shared = tmp_path / "shared"                 # writable by others: could hold forged files
    shared.mkdir()
    shared.chmod(0o777)
    (shared / files[0].name).write_bytes(files[0].read_bytes())
    monkeypatch.setenv("DPRATES_CACHE", str(shared))
    MomentPowerRegression(3000, 4, 4.0, data_seed=1)
    assert len(calls) == 4 and [f.name for f in shared.iterdir()] == [files[0].name]
    monkeypatch.setenv("DPRATES_CACHE", "off")
    default = tmp_path / "tmp"
    monkeypatch.setattr(tempfile, "tempdir", str(default))    # where the default would go
    MomentPowerRegression(3000, 4, 4.0, data_seed=3)
    assert len(calls) == 5 and not default.exists()
    monkeypatch.delenv("DPRATES_CACHE")
    MomentPowerRegression(3000, 4, 4.0, data_seed=3)
    assert len(calls) == 6 and len(list(default.glob("dprates-cache-*/kl-design-moments-*.npz"))) == 1


@pytest.mark.parametrize("kw, name", [({"p": 3.0}, "p"), ({"p": 4.0, "B": 0.0}, "B"),
                                      ({"p": 4.0, "n": 0}, "n")])
def test_moment_regression_rejects_bad_parameters(kw, name):
    args = {"n": 100, "d": 2, **kw}
    with pytest.raises(ValueError, match=name):
        MomentPowerRegression(args.pop("n"), args.pop("d"), args.pop("p"), **args)


# ------------------------------------------- gradients kept to a few ufuncs -----------
def _radial_gradient_as_written(prob, W):
    """RadialPowerLoss's gradient as first written (einsum norm, error-state switch)."""
    diff = W - prob.w_star
    r = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = prob.c * prob.p * np.power(np.minimum(r, prob.B), prob.p - 1.0) / r
    scale[r == 0] = 0.0
    return diff * scale[:, None]


def _ncvx_gradient_as_written(prob, W):
    """NonconvexKL's gradient as first written (no shared |w|, no inside/q = 1 branches)."""
    from empirical.papers.kl.problems_shapes import _g, _g1
    a = np.abs(W)
    G = (_g(np.minimum(a, prob.b)) + _g1(prob.b) * (a - np.minimum(a, prob.b))).sum(axis=1)
    phi1 = prob.q * np.power(np.minimum(G, prob.U), prob.q - 1)
    gt1 = np.sign(W) * np.where(a <= prob.b, np.abs(_g1(np.minimum(a, prob.b))), _g1(prob.b))
    return (prob.c * phi1)[:, None] * gt1


@pytest.mark.parametrize("d", [1, 4])
@pytest.mark.parametrize("kind, p", [("radial", 4.0 / 3.0), ("radial", 6.0), ("ncvx", 2.0),
                                     ("ncvx", 4.0)])
def test_fast_gradients_are_the_formula_bit_for_bit(kind, p, d):
    """The per-step gradients of the sweeps (radial, nonconvex) give the same bits as the formula
    written out, on rows inside the KL region, beyond B or b, at the minimiser (0/0 → 0) and
    with a NaN: the speed-ups change no stored row."""
    rng = np.random.default_rng(7)
    W = np.concatenate([rng.normal(scale=0.3, size=(20, d)), rng.normal(scale=4.0, size=(5, d)),
                        np.zeros((1, d))])
    rows = [W, W[:20], W[-1:], np.vstack([W[:3], np.full((1, d), np.nan)])]
    if kind == "radial":
        prob, ref = RadialPowerLoss(100, d, p), _radial_gradient_as_written
    else:
        prob, ref = NonconvexKL(100, d, p), _ncvx_gradient_as_written
    for X in rows:
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(prob.gradient(X), ref(prob, X))
