"""KAN paper: the model (B-spline basis, closed-form per-example gradients), Algorithm 1 (noise
recurrence, cancellation identity, samplers, projection, clipping), the three privacy
calibrations and bad input.  Closed forms are the paper's (Section 3, App. B, App. F, App. D);
the accountant is dp-accounting."""
import math

import numpy as np
import pytest

from algorithms.kan import correlated_noise as K
from algorithms.primitives import correlated_noise_matrix


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    model = K.KAN.init(6, 3, 6, rng)
    X = rng.uniform(-1, 1, (7, 3)) / math.sqrt(3)
    y = np.where(rng.random(7) < 0.5, -1.0, 1.0)
    return model, X, y


def test_basis_is_partition_of_unity_with_consistent_derivatives():
    v = np.linspace(-1, 1, 101)
    for p in (4, 6, 9):
        assert np.allclose(K.bspline_basis(v, p).sum(-1), 1.0, atol=1e-12)
        e = 1e-6
        fd = (K.bspline_basis(v + e, p) - K.bspline_basis(v - e, p)) / (2 * e)
        assert np.abs(fd - K.bspline_basis(v, p, 1)).max() < 1e-6
        fd2 = (K.bspline_basis(v + e, p, 1) - K.bspline_basis(v - e, p, 1)) / (2 * e)
        assert np.abs(fd2 - K.bspline_basis(v, p, 2)).max() < 1e-4   # N₃'' is only Lipschitz


def test_local_basis_equals_cardinal_spline_reference():
    v = np.concatenate([np.linspace(-1, 1, 57), [-1.0, 1.0, 0.0]])
    for p in (4, 6, 9):
        for k in (0, 1, 2):
            np.testing.assert_allclose(K.bspline_basis(v, p, k),
                                       K._bspline_basis_reference(v, p, k), atol=1e-12)
    # outside [−1, 1] the reference is used (the basis extends to [−1 − 3h, 1 + 3h])
    assert K.bspline_basis(np.array([1.2]), 6).sum() < 1.0


def test_spline_contraction_equals_full_basis():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((5, 7))
    s = np.tanh(2 * rng.standard_normal((3, 4, 5)))
    s[0, 0, :2] = (-1.0, 1.0)
    for k in (0, 1, 2):
        (got,) = K.spline_contract(s, c, 7, (k,))
        want = np.einsum("rnmk,mk->rnm", K._bspline_basis_reference(s, 7, k), c)
        np.testing.assert_allclose(got, want, atol=1e-12)


def _textbook_contract(v, coef, p, derivs):
    """spline_contract as it was written before it went in place: the reference
    its floats and memory layouts must equal bit for bit (stored rows depend on both)."""
    h, _ = K._knots(p)
    x = (np.asarray(v, dtype=float) + 1.0) / h
    j = np.clip(x.astype(np.intp), 0, p - 4)
    f = x - j
    t0, t1, t2, t3 = (row.take(j + np.arange(coef.shape[0]) * (p - 3))
                      for row in K._contract_table(coef, p))
    forms = {0: lambda: ((t3 * f + t2) * f + t1) * f + t0,
             1: lambda: ((3.0 * t3) * f + 2.0 * t2) * f / h + t1 / h,
             2: lambda: ((6.0 * t3) * f + 2.0 * t2) / (h * h)}
    return [forms[k]() for k in derivs]


def test_spline_contraction_in_place_is_the_textbook_form_bit_for_bit():
    """The in-place Horner evaluation (a speed change) gives the textbook expressions' floats and
    layouts for every order of derivatives, C-ordered and transposed inputs (einsum's output),
    the interval ends included; the model's factors and forward pass likewise."""
    rng = np.random.default_rng(11)
    for m, p in ((5, 7), (16, 6), (3, 4)):
        c = rng.standard_normal((m, p))
        s = np.tanh(2 * rng.standard_normal((2, 40, m)))
        s[0, 0, :2] = (-1.0, 1.0)
        for v in (s, np.ascontiguousarray(s.transpose(2, 1, 0)).transpose(2, 1, 0)):
            for derivs in ((0,), (1,), (2,), (0, 1), (1, 0), (0, 1, 2), (2, 0, 1)):
                got = K.spline_contract(v, c, p, derivs)
                want = _textbook_contract(v, c, p, derivs)
                for g, w in zip(got, want, strict=True):
                    assert np.array_equal(g, w) and g.strides == w.strides
    model = K.KAN.init(8, 3, 6, rng)
    W2 = model.W0[None] + rng.standard_normal((2,) + model.W0.shape)
    # (W, H): shared features (einsum, transposed result), per-row features (matmul, C order),
    # and one row at many examples, where einsum's result has an odd stride on its unit axis
    for W, H in ((W2, model.features(rng.uniform(-1, 1, (30, 3)) / 2)),
                 (W2, model.features(rng.uniform(-1, 1, (60, 3)) / 2).reshape(2, 30, -1)),
                 (model.W0[None], model.features(rng.uniform(-1, 1, (20_000, 3)) / 2))):
        s = np.tanh(np.einsum("nq,rmq->rnm", H, W, optimize=True) / math.sqrt(3) if H.ndim == 2
                    else np.matmul(H, np.swapaxes(W, 1, 2)) / math.sqrt(3))
        hc, dhc = _textbook_contract(s, model.c, 6, (0, 1))
        a_want = (1.0 - s * s) * dhc / math.sqrt(8 * 3)
        f, a = model.forward_and_factors(W, H)
        assert np.array_equal(f, hc.sum(axis=-1) / math.sqrt(8))
        assert np.array_equal(model.forward(W, H), f)
        for got in (a, model.factors(W, H)):
            assert np.array_equal(got, a_want) and got.strides == a_want.strides


def test_per_example_gradient_matches_finite_differences(small):
    model, X, _ = small
    H = model.features(X)
    W = model.W0[None] + 0.3 * np.random.default_rng(2).standard_normal((1,) + model.W0.shape)
    G = model.per_example_gradients(W, H)[0]          # (n, m, dp), rank one each
    e = 1e-6
    for i in (0, 4):
        fd = np.zeros(model.W0.shape)
        for j in range(model.m):
            for q in range(model.W0.shape[1]):
                Wp, Wm = W.copy(), W.copy()
                Wp[0, j, q] += e
                Wm[0, j, q] -= e
                fd[j, q] = (model.forward(Wp, H)[0, i] - model.forward(Wm, H)[0, i]) / (2 * e)
        np.testing.assert_allclose(G[i], fd, atol=1e-8)
        assert np.linalg.matrix_rank(G[i], tol=1e-10) == 1


def test_loss_gradient_matches_finite_differences(small):
    model, X, y = small
    H = model.features(X)
    W = model.W0[None].copy()
    g = model.loss_gradient(W, H, y)[0]
    rng = np.random.default_rng(3)
    D = rng.standard_normal(W.shape)
    e = 1e-6
    fd = (model.loss(W + e * D, H, y) - model.loss(W - e * D, H, y))[0] / (2 * e)
    assert fd == pytest.approx(float(np.sum(g * D[0])), rel=1e-6)


def _algorithm1_reference(model, H, y, T, eta, B, C, lam, kappa, R_star, batches, Z):
    """Algorithm 1 line by line with materialised per-example gradients (the slow way)."""
    W0 = model.W0
    W = W0.copy()
    zprev = np.zeros_like(W)
    for t in range(1, T):
        idx = batches[t - 1]
        f = model.forward(W[None], H[idx])[0]
        G = model.per_example_gradients(W[None], H[idx])[0]
        g = (K.logistic_derivative(y[idx] * f) * y[idx])[:, None, None] * G
        norms = np.sqrt((g ** 2).sum(axis=(1, 2)))
        g = g * np.minimum(1, C / norms)[:, None, None]
        v = g.mean(axis=0)
        xi = kappa * (Z[t - 1] - lam * zprev)
        zprev = Z[t - 1]
        W = W - eta * (v + C / B * xi)
        dist = np.linalg.norm(W - W0)
        if dist > R_star:
            W = W0 + (W - W0) * R_star / dist
    return W


@pytest.mark.parametrize("sampler", K.SAMPLERS)
def test_algorithm1_matches_line_by_line_reference(small, sampler):
    model, X, y = small
    H = model.features(X)
    T, B, C, lam, kappa, R_star = 9, 3, 0.05, 0.6, 2.0, 0.05
    run = K.dp_sgd_correlated(model, H, y, T=T, eta=0.7, B=B, C_clip=C, lam=lam,
                              noise_multiplier=kappa, R_star=R_star,
                              rng=[np.random.default_rng(5)], sampler=sampler)
    g = np.random.default_rng(5)
    batches = K.batch_schedule(sampler, len(y), B, T - 1, g)
    Z = np.stack([g.standard_normal(model.W0.shape) for _ in range(T - 1)])
    W = _algorithm1_reference(model, H, y, T, 0.7, B, C, lam, kappa, R_star, batches, Z)
    np.testing.assert_allclose(run.W[0], W, atol=1e-12)
    assert run.clip_fraction[0] > 0          # C = 0.05 clips: the clipped path is exercised
    assert run.projection_active[0] > 0      # R* = 0.05 binds


def test_noise_cancellation_identity_and_drift_closed_form():
    """Σ_{s≤t}(Z_s − λZ_{s−1}) = Z_t + (1−λ)Σ_{s<t}Z_s (Lemma C.1), so with no gradient the
    unprojected drift is E‖W_T − W₀‖² = η²c² mdp (1 + (1−λ)²(T−2)) exactly (T−1 steps).  The
    model is made flat (c = 0) so the gradient vanishes and only the noise moves W."""
    rng = np.random.default_rng(7)
    m, d, p = 4, 2, 5
    model = K.KAN(rng.standard_normal((m, d * p)), np.zeros((m, p)), d, p)
    X = rng.uniform(-0.5, 0.5, (10, d))
    y = np.ones(10)
    T, eta, B = 50, 0.5, 10
    gens = [np.random.default_rng(s) for s in range(400)]
    for lam in (0.0, 0.5, 0.9):
        run = K.dp_sgd_correlated(model, model.features(X), y, T=T, eta=eta, B=B, C_clip=1.0,
                                  lam=lam, noise_multiplier=3.0, R_star=math.inf, rng=gens,
                                  eval_every=T)
        c = 3.0 / B
        pred = eta ** 2 * c ** 2 * m * d * p * (1 + (1 - lam) ** 2 * (T - 2))
        # 400 seeds × 40 coordinates: the mean of a scaled χ² has relative s.e. ≈ 1.2%
        assert run.final_drift_sq.mean() == pytest.approx(pred, rel=0.05)


def test_paired_rows_share_batches_and_noise(small):
    model, X, y = small
    H = model.features(X)
    run = K.dp_sgd_correlated(model, np.stack([H, H]), np.stack([y, y]), T=6, eta=0.5, B=4,
                              C_clip=1.0, lam=[0.0, 0.0], noise_multiplier=[1.0, 1.0],
                              R_star=math.inf, rng=[np.random.default_rng(1)], rows_per_seed=2)
    np.testing.assert_array_equal(run.W[0], run.W[1])


def test_cyclic_sampler_separation_and_fresh_sampler_uniform():
    g = np.random.default_rng(0)
    sched = K.batch_schedule("cyclic", 100, 10, 35, g)
    pat = K.participation_pattern("cyclic", 100, 10, 35)
    for i in np.unique(sched):
        steps = np.flatnonzero((sched == i).any(axis=1))
        assert np.all(np.diff(steps) == pat["min_separation"])
        assert steps.size <= pat["participations"]
    fresh = K.batch_schedule("fresh", 20, 5, 4000, g)
    assert all(len(set(b)) == 5 for b in fresh[:50])
    freq = np.bincount(fresh.ravel(), minlength=20) / fresh.size
    np.testing.assert_allclose(freq, 1 / 20, atol=0.01)


# ---------------------------------------------------------------------------------------------
# Privacy
# ---------------------------------------------------------------------------------------------
def test_f12_and_d9_formulas_and_their_inverses():
    k = K.noise_multiplier_thm_f12(0.5, 300, 200, 1000, 0.8, 1e-4)
    rT = 60
    tau = rT + math.sqrt(3 * rT * math.log(2 / 1e-4))
    assert k ** 2 == pytest.approx(8 * ((1 - 0.5 ** 300) / 0.5) ** 2 * tau * math.log(2.5 / 1e-4) / 0.64)
    assert K.epsilon_thm_f12(k, 0.5, 300, 200, 1000, 1e-4) == pytest.approx(0.8)
    assert K.epsilon_thm_f12(k, 0.5, 300, 200, 1000, 1e-4, constant=2.0) == pytest.approx(0.4)
    k9 = K.noise_multiplier_thm_d9(30, 1000, 40, 0.5, 1e-5)
    assert K.epsilon_thm_d9(k9, 30, 1000, 40, 1e-5) == pytest.approx(0.5)


def test_contiguous_block_is_the_worst_participation_set():
    import itertools
    for lam in (0.3, 0.8):
        C = correlated_noise_matrix(lam, 10)
        for tau in (1, 3, 5):
            brute = max(np.linalg.norm(C[:, list(P)].sum(axis=1))
                        for P in itertools.combinations(range(10), tau))
            assert K.contiguous_block_sensitivity(lam, 10, tau) == pytest.approx(brute)
            # Lemma F.11's bound ((1−λ^T)/(1−λ))√τ holds and is not attained
            assert brute < (1 - lam ** 10) / (1 - lam) * math.sqrt(tau)


@pytest.mark.parametrize("sampler", K.SAMPLERS)
@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_tight_calibration_hits_target_and_paper_calibration_is_conservative(sampler, lam):
    kw = dict(lam=lam, T=200, n=1000, B=200, sampler=sampler)
    tight = K.calibrate(0.8, 1e-4, **kw, calibration="tight")
    assert tight.epsilon_guarantee == pytest.approx(0.8, rel=1e-6)
    assert tight.epsilon_spent <= tight.epsilon_guarantee
    paper = K.calibrate(0.8, 1e-4, **kw, calibration="thm5.1")
    assert paper.epsilon_guarantee == pytest.approx(0.8)
    assert paper.epsilon_spent < 0.8 and paper.noise_multiplier > tight.noise_multiplier
    assert paper.epsilon_spent == pytest.approx(
        K.tight_epsilon(paper.noise_multiplier, lam=lam, steps=199, n=1000, B=200,
                        sampler=sampler, delta=1e-4))


def test_gaussian_epsilon_inverts_dp_accounting():
    from dp_accounting.pld import privacy_loss_mechanism as plm
    e = K.gaussian_epsilon(3.0, 1e-5)
    assert plm.GaussianPrivacyLoss(3.0, sensitivity=1.0).get_delta_for_epsilon(e) == pytest.approx(1e-5, rel=1e-6)
    assert K.gaussian_noise_multiplier(e, 1e-5) == pytest.approx(3.0, rel=1e-8)


def test_discontinuity_at_lambda_zero_is_about_n_over_4B():
    """F.12 as λ → 0⁺ (zero-out, linear in B/n) against D.9 at λ = 0 (replace-one, quadratic):
    κ² ratio = bounds' ``kan:calibration_gap`` exactly, and its leading terms 8rT ln(2.5/δ) and
    32r²T ln(1/δ) give n/(4B)·ln(2.5/δ)/ln(1/δ) once rT ≫ ln(1/δ) (Theorems F.12 and D.9).  At a realistic
    rT = 40 the √(3rT ln(2/δ)) term doubles it (506 against 250)."""
    import bounds

    n, B, eps, dl = 100000, 100, 1.0, 1e-5
    for T, rel in ((4_000_000, 0.06), (40_000, None)):
        ratio = (K.noise_multiplier_thm_f12(1e-12, T, B, n, eps, dl) ** 2
                 / K.noise_multiplier_thm_d9(B, n, T, eps, dl) ** 2)
        assert ratio == pytest.approx(bounds.get("kan:calibration_gap")(n=n, B=B, T=T, epsilon=eps,
                                                                        delta=dl), rel=1e-6)
        if rel:
            lead = n / (4 * B) * math.log(2.5 / dl) / math.log(1 / dl)
            assert ratio == pytest.approx(lead, rel=rel)
        else:
            assert ratio > 2 * n / (4 * B) * 0.95


def test_bad_input_raises_valueerror_naming_the_parameter(small):
    model, X, y = small
    H = model.features(X)
    base = dict(T=3, eta=0.1, B=2, C_clip=1.0, lam=0.5, noise_multiplier=1.0, R_star=1.0,
                rng=[np.random.default_rng(0)])
    for key, bad, word in [("lam", 1.0, "lam"), ("lam", -0.1, "lam"), ("B", 99, "B"),
                           ("noise_multiplier", -1.0, "noise_multiplier"), ("eta", 0.0, "eta"),
                           ("C_clip", 0.0, "C_clip"), ("R_star", 0.0, "R_star")]:
        with pytest.raises(ValueError, match=word):
            K.dp_sgd_correlated(model, H, y, **{**base, key: bad})
    with pytest.raises(ValueError, match="unit ball"):
        model.features(np.ones((2, 3)))
    with pytest.raises(ValueError, match="sampler"):
        K.batch_schedule("poisson", 10, 2, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="epsilon <= 1"):
        K.noise_multiplier_thm_f12(0.5, 300, 200, 1000, 2.0, 1e-4)
    with pytest.raises(ValueError, match="lam must be 0"):
        K.calibrate(0.5, 1e-4, lam=0.5, T=300, n=1000, B=200, sampler="fresh", calibration="thm5.4")
    with pytest.raises(ValueError, match="calibration"):
        K.calibrate(0.5, 1e-4, lam=0.5, T=300, n=1000, B=200, sampler="fresh", calibration="x")


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_tight_fresh_accountant_bounds_the_f8_dominating_pair(lam):
    """The fresh-batch tight accountant is sound for Theorem F.8's dominating pair
    P = Σ_y r^{|y|}(1−r)^{T−|y|} N(Cy, κ²I), Q = N(0, κ²I) (d = 1, all 2^T patterns): at the κ it
    calibrates for (ε, δ), a Monte-Carlo hockey-stick estimate in both directions stays below δ
    (6·10⁴ draws; the margin is 4 standard errors)."""
    import itertools

    steps, n, B, eps, delta = 8, 4, 3, 1.0, 0.1
    r = B / n
    kappa = K.tight_noise_multiplier(eps, lam=lam, steps=steps, n=n, B=B, sampler="fresh",
                                     delta=delta)
    C = correlated_noise_matrix(lam, steps)
    Y = np.array(list(itertools.product((0.0, 1.0), repeat=steps)))
    means = Y @ C.T                                              # (2^T, T): C y
    logw = Y.sum(1) * math.log(r) + (steps - Y.sum(1)) * math.log(1 - r)
    rng = np.random.default_rng(0)
    N = 60_000

    def loss(x):   # log p(x)/q(x)
        a = logw + (x @ means.T - 0.5 * (means ** 2).sum(1)) / kappa ** 2
        mx = a.max(axis=1, keepdims=True)
        return (mx + np.log(np.exp(a - mx).sum(axis=1, keepdims=True)))[:, 0]

    comp = rng.choice(len(Y), size=N, p=np.exp(logw))
    xp = means[comp] + kappa * rng.standard_normal((N, steps))
    xq = kappa * rng.standard_normal((N, steps))
    for vals in (np.maximum(0.0, 1 - np.exp(eps - loss(xp))), np.maximum(0.0, 1 - np.exp(eps + loss(xq)))):
        est, se = vals.mean(), vals.std() / math.sqrt(N)
        assert est + 4 * se <= delta
    # and it is not vacuous: half the noise breaks (ε, δ) for the same pair
    xp2 = means[comp] + 0.5 * kappa * rng.standard_normal((N, steps))
    kappa_half = 0.5 * kappa
    a = logw + (xp2 @ means.T - 0.5 * (means ** 2).sum(1)) / kappa_half ** 2
    mx = a.max(axis=1, keepdims=True)
    l2 = (mx + np.log(np.exp(a - mx).sum(axis=1, keepdims=True)))[:, 0]
    assert np.maximum(0.0, 1 - np.exp(eps - l2)).mean() > delta


def test_smoothness_matches_finite_differences():
    """KAN.smoothness = ¼‖∇f‖² + ‖∇²f‖₂ per example (the quantity the paper's β bounds), against
    the gradient from the rank-one factors and the Hessian's top |eigenvalue| by differences."""
    rng = np.random.default_rng(3)
    model = K.KAN.init(3, 2, 5, rng)
    X = rng.uniform(-1, 1, (4, 2)) / np.sqrt(2)
    H = model.features(X)
    W = model.W0[None] + 0.3 * rng.standard_normal((1,) + model.W0.shape)
    got = model.smoothness(W, H)[0]
    g = model.per_example_gradients(W, H)[0].reshape(len(X), -1)
    eps, D = 1e-5, model.dim
    for i in range(len(X)):
        hess = np.empty((D, D))
        for k in range(D):
            e = np.zeros(D)
            e[k] = eps
            Wp, Wm = (W + s * e.reshape(W.shape) for s in (1, -1))
            gp = model.per_example_gradients(Wp, H[i:i + 1])[0, 0].ravel()
            gm = model.per_example_gradients(Wm, H[i:i + 1])[0, 0].ravel()
            hess[:, k] = (gp - gm) / (2 * eps)
        want = 0.25 * g[i] @ g[i] + np.abs(np.linalg.eigvalsh((hess + hess.T) / 2)).max()
        assert got[i] == pytest.approx(want, rel=1e-5)


def test_wor_rdp_inside_searches_is_dp_accountings_bit_for_bit(monkeypatch):
    """Calibration searches evaluate the WOR-sampled Gaussian's RDP with one shared table of
    forward differences (a speed change): its floats must be dp-accounting's own at every order
    (integer and fractional), over the suite's range of q and σ, so that the κ a search returns,
    and every stored row, stay as they were; ε from the search route equals the accountant's.
    A changed dp-accounting (simulated: its function off by one ulp) must turn the route off."""
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_impl

    from algorithms import accounting as acc
    from algorithms.kan import privacy as kp

    orders = np.array(kp._RDP_ORDERS)
    assert kp._RDP_ORDERS == acc._WOR_CHECK_ORDERS      # the route's self-check sees KAN's orders
    rng = np.random.default_rng(5)
    # numpy's array exp/log1p are libm's floats on most builds but not all (numpy 2.4's SIMD
    # paths differ in the last bit, amplified to 0.3% at orders near 64): what searches use,
    # wor_search_rdp, must be dp-accounting's floats either way: the route itself where its
    # self-check passes, dp-accounting's function where it does not.
    exact = acc._wor_rdp_is_exact()
    for q in (1 / 1000, 21 / 8000, 8 / 1000, 0.05, 0.2, 1 / 3, 0.5, 0.9):
        for z in np.exp(rng.uniform(np.log(0.25), np.log(40.0), 2)):
            want = dpa_impl._compute_rdp_sample_wor_gaussian(q, float(z), orders)
            assert np.array_equal(acc.wor_search_rdp(q, float(z), orders), want)
            if exact:
                assert np.array_equal(acc._wor_rdp(q, float(z), orders), want)
    for kappa, n, B, steps, delta in ((2.5, 8000, 21, 300, 1e-6), (0.8, 1000, 8, 136, 1e-6),
                                      (5.0, 2000, 200, 50, 1e-5)):
        ev = kp._wor_event(kappa, n, B, steps)
        assert (kp._rdp_epsilon(ev, delta, kp.REPLACE_ONE, search=True)
                == kp._rdp_epsilon(ev, delta, kp.REPLACE_ONE, search=False))
    for sigma in (0.3, 1.0, 4.2, 33.0) if exact else ():  # the vectorised differences, to 256
        cgf = lambda x: x * 1.0 * (x + 1) / (2.0 * sigma**2)  # noqa: E731
        for got, want in zip(acc._forward_diffs(cgf, 256), dpa_impl._get_forward_diffs(cgf, 256)):
            assert np.array_equal(got, want)
    acc._wor_rdp_is_exact.cache_clear()
    original = dpa_impl._compute_rdp_sample_wor_gaussian
    monkeypatch.setattr(dpa_impl, "_compute_rdp_sample_wor_gaussian",
                        lambda q, z, o: np.nextafter(original(q, z, o), np.inf))
    try:
        assert not acc._wor_rdp_is_exact()
    finally:
        acc._wor_rdp_is_exact.cache_clear()
