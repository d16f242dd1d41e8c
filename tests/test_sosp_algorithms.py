"""SOSP paper, ``algorithms/sosp_*.py`` (through the re-exports of ``algorithms.sosp.nonconvex``)
and ``empirical/papers/sosp/problems.py``: the cosine
saddle's closed forms, the privacy calibration (sensitivities brute-forced, noise multipliers
from dp-accounting, absolute constants), Gauss-PSGD's escape certificate (false certificates
without isotropic noise, escape with it, false-certificate rate ≤ ω), Ada-DP-SPIDER's
bookkeeping (drift, refreshes, Lemma 8, sample budget), the distributed version's shift
cancellation, Algorithm 4, and bad input.
"""
import math

import numpy as np
import pytest

import bounds
from algorithms import accounting
from algorithms.sosp import nonconvex as alg
from bounds.rates.sosp import log_delta_value
from empirical.papers.sosp.problems import CosineSaddle, client_shifts


def _gens(k, base=0):
    return [np.random.default_rng([base, i]) for i in range(k)]


def _plan(prob, n, d, *, alpha, epsilon=0.5, **kw):
    """spider_plan with the problem's constants (G = G_s, M, U, ρ, M_s) at δ = 1e-5."""
    return alg.spider_plan(n, d, epsilon=epsilon, delta=1e-5, alpha=alpha, G=prob.G_sens,
                           M=prob.M, U=prob.U, hessian_lipschitz=prob.hessian_lipschitz,
                           G_sens=prob.G_sens, M_sens=prob.M_sens, **kw)


# ------------------------------------------------------------------------------------ problem
def test_cosine_saddle_closed_forms_match_finite_differences():
    prob = CosineSaddle(6, k=2, gamma=0.8, b=1.3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 6))
    h = 1e-6
    E = np.eye(6)
    g_fd = np.stack([(prob.loss(X + h * E[i]) - prob.loss(X - h * E[i])) / (2 * h) for i in range(6)], -1)
    np.testing.assert_allclose(prob.gradient(X), g_fd, atol=1e-8)
    H_fd = np.stack([(prob.gradient(X + h * E[i]) - prob.gradient(X - h * E[i])) / (2 * h)
                     for i in range(6)], -1)
    np.testing.assert_allclose(prob.hessian(X), H_fd, atol=1e-6)
    np.testing.assert_allclose(prob.lambda_min(X), np.linalg.eigvalsh(prob.hessian(X))[:, 0],
                               atol=1e-12)
    # the saddle and the minimum
    assert prob.lambda_min(np.zeros(6)) == pytest.approx(-0.8)
    xm = np.zeros(6)
    xm[:2] = math.pi
    assert prob.loss(xm) == pytest.approx(prob.F_star)
    assert prob.alpha_emp(xm) == pytest.approx(0.0, abs=1e-12)


def _max_pairwise_distance(P: np.ndarray) -> float:
    """max_{i,j} ‖P_i − P_j‖ through the Gram matrix (a (k, k) array, not (k, k, d)); the
    rounding error of ‖a‖² + ‖b‖² − 2a·b is ~1e-16 here, far below the 1e-12 slack used."""
    sq = np.einsum("ij,ij->i", P, P)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (P @ P.T)
    return float(np.sqrt(max(d2.max(), 0.0)))


def test_records_are_unbiased_and_sensitivities_hold():
    """E f_j = F + ⟨μ_j, x⟩; per-record gradient spread ≤ 2G_s and difference spread ≤
    2M_s‖x − y‖ (brute force over many records and points): the replace-one sensitivities the
    privacy calibration uses.  Single records come from the batched kernels (one generator per
    record), which must give exactly the one-row methods' records."""
    prob = CosineSaddle(5, s1=0.15, s2=0.05)
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=5), rng.normal(size=5)
    g = prob.batch_gradient(rng, x, 200000)[0]
    np.testing.assert_allclose(g, prob.gradient(x), atol=4 * 0.2 / math.sqrt(200000) * 3)
    # single records: b = 1 means are per-record gradients
    k = 2000
    X, Y = np.tile(x, (k, 1)), np.tile(y, (k, 1))
    per = prob.batch_gradients([np.random.default_rng([6, s]) for s in range(k)], X, 1)[:, 0]
    assert _max_pairwise_distance(per) <= 2 * prob.G_sens + 1e-12
    rec = prob.batch_differences([np.random.default_rng([7, s]) for s in range(k)], X, Y, 1)[:, 0]
    assert _max_pairwise_distance(rec) <= 2 * prob.M_sens * np.linalg.norm(x - y) + 1e-12
    one = np.stack([prob.batch_difference(np.random.default_rng([7, s]), x, y, 1)[0]
                    for s in range(50)])
    np.testing.assert_array_equal(one, rec[:50])


def test_batched_kernels_draw_and_compute_what_the_one_row_methods_do():
    """CosineSaddle.batch_gradients/batch_differences (the kernels Ada-DP-SPIDER calls, all rows
    at once) against the one-row methods row by row: bit-identical records, means and generator
    states afterwards, for single and several clients, heterogeneous shifts, b = 1 and large b,
    d below and above numpy's 8-term pairwise-summation block."""
    rng = np.random.default_rng(11)
    for d, m, b, h in [(4, 1, 1, 0.0), (16, 1, 900, 0.0), (128, 1, 62, 0.0), (16, 16, 6, 2.0),
                       (10, 2, 7, 1.0)]:
        prob = CosineSaddle(d, m=m, h=h)
        X = 0.3 * rng.normal(size=(4, d))
        Y = X + 0.01 * rng.normal(size=(4, d))
        for method, args in (("gradient", (X,)), ("difference", (X, Y))):
            ref = [np.random.default_rng([d, m, s]) for s in range(4)]
            new = [np.random.default_rng([d, m, s]) for s in range(4)]
            one = np.stack([getattr(prob, f"batch_{method}")(g, *(a[i] for a in args), b)
                            for i, g in enumerate(ref)])
            many = getattr(prob, f"batch_{method}s")(new, *args, b)
            np.testing.assert_array_equal(many, one)
            assert [g.random() for g in ref] == [g.random() for g in new]


def test_client_shifts_cancel_exactly():
    for m in (2, 3, 7, 16):
        mu = client_shifts(m, 9, 2.0)
        assert np.all(mu.sum(axis=0) == 0.0) or np.abs(mu.sum(axis=0)).max() < 1e-15
        assert math.sqrt(np.mean(np.sum(mu[:-1] ** 2, 1))) == pytest.approx(2.0, rel=0.5)
    assert np.all(client_shifts(1, 4, 3.0) == 0)


# ---------------------------------------------------------------------------------- privacy
@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
def test_noise_multiplier_spends_exactly_epsilon(eps):
    z = alg.gaussian_multiplier(eps, 1e-5)
    e = accounting.epsilon(accounting.gaussian_event(z), 1e-5)
    assert e <= eps and e == pytest.approx(eps, rel=1e-9)
    # the exact (analytic, Balle–Wang) ε of a Gaussian with std z·Δ is below the RDP one: the
    # RDP-calibrated query is (ε, δ)-DP a fortiori.  (Not dp-accounting's PLD under
    # REPLACE_ONE: it reads z relative to the add/remove sensitivity and doubles it, while our
    # Δ is already the replace-one sensitivity — see the final report.)
    import dp_accounting as dpa

    assert dpa.get_epsilon_gaussian(z, 1e-5) <= eps
    # the classical Gaussian mechanism's σ = √(2 ln(1.25/δ))/ε is more conservative (ε < 1)
    if eps < 1:
        assert z <= math.sqrt(2 * math.log(1.25e5)) / eps


def test_spider_noise_has_the_absolute_constants():
    """σ₁ = z·2G_s/b1 and σ₂ = z·2M_s‖Δx‖/b2 (replace-one), measured on the realised noise."""
    prob = CosineSaddle(8, s1=0.15, s2=0.05)
    plan = _plan(prob, 10**6, 8, alpha=0.1, Q=3)
    assert plan.sigma1 == pytest.approx(plan.z * 2 * prob.G_sens / plan.b1, rel=1e-15)
    z = alg.gaussian_multiplier(0.5, 1e-5)
    assert plan.z == z

    class Zero(alg.ClientData):
        d, m, G_sens, M_sens = 8, 1, prob.G_sens, prob.M_sens

        def batch_gradient(self, gen, x, b):
            return np.zeros((1, 8))

        def batch_difference(self, gen, x, x_prev, b):
            return np.zeros((1, 8))

    orc = alg.AdaDPSpider(Zero(), plan, _gens(400))
    rows = np.arange(400)
    g, ok = orc.query(rows, np.zeros((400, 8)), np.zeros(400, bool))
    assert ok.all() and np.std(g) == pytest.approx(plan.sigma1, rel=0.03)
    orc.drift[:] = 0.0                                  # force O₂
    step = 0.01
    X = np.zeros((400, 8))
    X[:, 0] = step
    g2, _ = orc.query(rows, X, np.zeros(400, bool))
    sigma2 = plan.z * 2 * prob.M_sens * step / plan.b2
    assert np.std(g2 - g) == pytest.approx(sigma2, rel=0.03)
    assert orc.n_o1.sum() == 400 and orc.n_o2.sum() == 400
    p = orc.privacy(0)
    assert p["epsilon_guarantee"] == pytest.approx(0.5, rel=1e-9)
    assert p["epsilon_spent"] <= p["epsilon_guarantee"]


def test_plan_matches_theorem2_settings():
    """κ = eq. 104's (bounds' sosp:thm2_kappa at the same values), b1 = ⌈nκ/(2Uη)⌉,
    b2 = ⌈nηχ²/(2U)⌉, χ = α/4, η = √(ρα)/M², R = √(α/ρ)."""
    prob = CosineSaddle(16)
    n, eps, alpha = 10**5, 0.5, 0.15
    plan = _plan(prob, n, 16, alpha=alpha, epsilon=eps)
    kb = bounds.get("sosp:thm2_kappa")(n=n, d=16, epsilon=eps, G=prob.G_sens, U=prob.U, M=prob.M,
                                       hessian_lipschitz=prob.hessian_lipschitz,
                                       log_delta=log_delta_value(1e-5))
    assert plan.kappa == pytest.approx(kb, rel=1e-12)
    eta = math.sqrt(prob.hessian_lipschitz * alpha) / prob.M**2
    assert plan.eta == pytest.approx(eta) and plan.chi == alpha / 4
    assert plan.radius == pytest.approx(math.sqrt(alpha / prob.hessian_lipschitz))
    assert plan.b1 == math.ceil(n * plan.kappa / (2 * prob.U * eta))
    assert plan.b2 == max(1, math.ceil(n * eta * (alpha / 4) ** 2 / (2 * prob.U)))
    assert plan.Q == alg.escape_rounds(0.05) == math.ceil(math.log(20) / math.log(8 / 7))


def test_design_is_remark2_fixed_point():
    prob = CosineSaddle(16)
    kw = dict(G_sens=prob.G_sens, M_sens=prob.M_sens, M=prob.M, U=prob.U,
              hessian_lipschitz=prob.hessian_lipschitz)
    des = alg.spider_design(10**5, 16, epsilon=0.5, delta=1e-5, c_chi=1.5, **kw)
    psi = alg.design_noise(des.alpha, des.kappa, n=10**5, d=16, m=1,
                           z=alg.gaussian_multiplier(0.5, 1e-5), **kw)
    assert des.alpha == pytest.approx(4 * 1.5 * psi, rel=1e-9)
    # the chosen κ is (locally) optimal: neighbours give a larger α
    for f in (0.8, 1.25):
        other = alg.spider_design(10**5, 16, epsilon=0.5, delta=1e-5, c_chi=1.5,
                                  kappa_grid=[des.kappa * f], **kw)
        assert other.alpha >= des.alpha * (1 - 1e-9)


def test_design_scan_brackets_the_root_a_scalar_scan_brackets():
    """The design scans α − 4c_χψ(α; κ) on a grid with array arithmetic; it must pick exactly
    the bracket the scalar design_noise picks, so the design (and every parameter of a run) is
    unchanged: the same α, κ to the last bit, on a coarse κ grid (the default grid is the same
    code, 141 points)."""
    from scipy.optimize import brentq

    prob = CosineSaddle(16)
    kw = dict(G_sens=prob.G_sens, M_sens=prob.M_sens, M=prob.M, U=prob.U,
              hessian_lipschitz=prob.hessian_lipschitz)
    grid = np.geomspace(1e-6, 1e-1, 6)
    alphas = np.geomspace(1e-8, 1e3, 221)
    for n, eps in ((10**4, 0.5), (10**6, 1e4)):
        des = alg.spider_design(n, 16, epsilon=eps, delta=1e-5, c_chi=1.5, kappa_grid=grid, **kw)
        full = dict(n=n, d=16, m=1, z=alg.gaussian_multiplier(eps, 1e-5), **kw)

        def f(a, kappa):
            return a - 6.0 * alg.design_noise(a, kappa, **full)

        roots = []
        for kappa in grid:
            v = np.array([f(a, kappa) for a in alphas])
            i = np.flatnonzero((v[:-1] < 0) & (v[1:] >= 0))
            roots.append(brentq(f, alphas[i[0]], alphas[i[0] + 1], args=(kappa,), xtol=1e-15,
                                rtol=1e-12) if i.size else math.inf)
        j = int(np.argmin(roots))
        # the refinement between grid neighbours can only lower α from the best grid root
        assert des.alpha <= roots[j]
        assert grid[max(j - 1, 0)] <= des.kappa <= grid[min(j + 1, grid.size - 1)]
        for kappa, root in zip(grid, roots):
            if math.isfinite(root):   # one-point grid: no refinement, the root itself
                one = alg.spider_design(n, 16, epsilon=eps, delta=1e-5, c_chi=1.5,
                                        kappa_grid=[kappa], **kw)
                assert one.alpha == root


# ------------------------------------------------------------------------ Gauss-PSGD escape
def _escape_run(d=6, gamma=0.5, sigma=0.0, r=0.0, blind=False, rows=8, Q=5, alpha=0.05, seed=0):
    prob = CosineSaddle(d, gamma=gamma, s1=0.0, s2=1e-12)
    rho_h, M = 3.0, 1.0
    eta = math.sqrt(rho_h * alpha) / M**2
    Gamma = alg.practical_gamma(alpha, rho_h, M, max(r, 1e-6))
    B = np.eye(d)[:, :1] if blind else None
    orc = alg.GaussianOracle(prob.gradient, d, sigma=sigma, r=r, rng=_gens(rows, seed), blind=B)
    res = alg.gauss_psgd(orc, np.zeros(d), chi=alpha / 4, eta=eta, radius=math.sqrt(alpha / rho_h),
                         Gamma=Gamma, Q=Q, max_steps=(Q + 1) * Gamma + 5, rows=rows,
                         stop_on_first_procedure=True)
    return prob, res, math.sqrt(rho_h * alpha)


def test_noiseless_gd_returns_the_saddle_as_a_false_certificate():
    """E2(a): ψ = 0 — the gradient vanishes at the saddle, nothing moves, and after Q rounds
    Algorithm 1 returns x̃ although λ_min = −γ < −√(ρα): Lemma 1 needs r > 0."""
    prob, res, thr = _escape_run(sigma=0.0, r=0.0, gamma=0.5)
    assert res.certified.all()
    assert np.all(res.x == 0.0)
    assert np.all(prob.lambda_min(res.x) < -thr)


def test_noise_orthogonal_to_the_escape_direction_gives_a_false_certificate():
    """E2(b): sampling noise with no component along v_min = e₁ and r = 0 diffuses in the other
    coordinates only; the iterate never leaves the saddle's unstable manifold."""
    prob, res, thr = _escape_run(sigma=0.02, r=0.0, blind=True, gamma=0.5)
    assert res.certified.all()
    assert np.all(res.x[:, 0] == 0.0) and np.all(prob.lambda_min(res.x) < -thr)


def test_isotropic_noise_escapes():
    """E2(c): the same with a small isotropic r > 0 escapes in every run."""
    prob, res, thr = _escape_run(sigma=0.02, r=1e-6, blind=True, gamma=0.5)
    assert res.first_procedure_escaped.all() and not res.certified.any()


def test_false_certificate_rate_is_at_most_omega():
    """Theorem 1 / Lemma 2: at an exact α-strict saddle (γ = √(ρα)), with Q = ⌈ln(1/ω)/ln(8/7)⌉
    rounds, the fraction of runs that certify the saddle is ≤ ω (ω = 0.05, 300 runs; the
    binomial 95% upper quantile at rate 0.05 would be 0.075 — we require the rate itself)."""
    omega = 0.05
    Q = alg.escape_rounds(omega)
    alpha = 0.05
    gamma = math.sqrt(3.0 * alpha)
    prob, res, thr = _escape_run(gamma=gamma, r=0.05 / math.sqrt(6), rows=300, Q=Q, alpha=alpha,
                                 seed=3)
    assert res.certified.mean() <= omega


def test_row_results_do_not_depend_on_the_batch():
    """Row r's numbers depend only on its generator (Ada-DP-SPIDER + Gauss-PSGD)."""
    prob = CosineSaddle(4)
    plan = _plan(prob, 20000, 4, alpha=0.3, Q=3)

    def run(gens):
        res, orc = alg.spider_psgd(prob, plan, gens, true_gradient=prob.gradient)
        return res.x, orc.err_sq_sum

    many = run(_gens(3))
    one = run(_gens(3)[1:2])
    np.testing.assert_array_equal(many[0][1], one[0][0])
    np.testing.assert_array_equal(many[1][1], one[1][0])


class _OneRowSaddle(CosineSaddle):
    """CosineSaddle served through ClientData's default batched methods (one-row calls in
    turn): the reference for the fast kernels inside Ada-DP-SPIDER."""

    batch_gradients = alg.ClientData.batch_gradients
    batch_differences = alg.ClientData.batch_differences


def test_spider_run_is_the_same_through_the_one_row_methods():
    """Gauss-PSGD + distributed Ada-DP-SPIDER (m = 3, heterogeneous) gives bit-identical
    outputs, noise, errors and counts whether the oracle's rows are served by the batched
    kernels or by the one-row methods one row at a time."""
    out = []
    for cls in (CosineSaddle, _OneRowSaddle):
        prob = cls(6, m=3, h=1.0)
        kw = dict(epsilon=0.5, delta=1e-5, M=prob.M, U=prob.U, G_sens=prob.G_sens,
                  hessian_lipschitz=prob.hessian_lipschitz, M_sens=prob.M_sens, m=3)
        des = alg.spider_design(20000, 6, **kw)
        plan = alg.spider_plan(20000, 6, alpha=des.alpha, G=prob.G_sens, Q=3, kappa=des.kappa,
                               **kw)
        res, orc = alg.spider_psgd(prob, plan, _gens(4, 9), true_gradient=prob.gradient)
        out.append((res.x, res.steps, orc.err_sq_sum, orc.noise_sq["o1"], orc.noise_sq["o2"],
                    orc.n_o1, orc.n_o2, orc.o2_sigma_max))
    assert out[0][1].min() > 10 and out[0][6].min() > 0      # O₂ steps were taken
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_spider_bookkeeping_lemma8_and_budget():
    """The drift resets at every O₁; refreshes obey Lemma 8's |𝒯| ≤ 6η(U + 5Tηχ²)/κ at the
    observed T; every client uses at most n records; a row that would need more stops."""
    prob = CosineSaddle(8)
    n = 30000
    des = alg.spider_design(n, 8, epsilon=0.5, delta=1e-5, G_sens=prob.G_sens, M_sens=prob.M_sens,
                            M=prob.M, U=prob.U, hessian_lipschitz=prob.hessian_lipschitz)
    plan = _plan(prob, n, 8, alpha=des.alpha, Q=10, kappa=des.kappa)
    res, orc = alg.spider_psgd(prob, plan, _gens(6), true_gradient=prob.gradient)
    assert np.all(orc.samples <= n)
    assert np.all(orc.samples == orc.n_o1 * plan.b1 + orc.n_o2 * plan.b2)
    T = res.steps
    lemma8 = 6 * plan.eta * (prob.U + 5 * T * plan.eta * plan.chi**2) / plan.kappa
    assert np.all(orc.n_o1 <= lemma8)
    # tiny n: the budget stops the run instead of reusing records
    small = _plan(prob, 3 * plan.b1, 8, alpha=des.alpha, Q=10, kappa=des.kappa)
    res2, orc2 = alg.spider_psgd(prob, small, _gens(2), true_gradient=prob.gradient)
    assert res2.out_of_data.all() and np.all(orc2.samples <= small.n)


def test_heterogeneity_cancels_in_the_server_average():
    """Algorithm 3 with client shifts μ_j (Σμ_j = 0) runs the same trajectory as without: the
    shifts enter every client's O₁ and cancel in the average; O₂ never sees them."""
    from empirical.papers.sosp.experiments import run_rate

    base = dict(n=20000, d=8, epsilon=0.5, m=4, delta=1e-5, s1=0.15, s2=0.05, c_chi=1.5, Q=5, k=1)
    a = run_rate({**base, "h": 0.0}, _gens(3, 5))
    b = run_rate({**base, "h": 2.0}, _gens(3, 5))
    np.testing.assert_allclose(a["psi_emp"], b["psi_emp"], rtol=1e-6)
    np.testing.assert_array_equal(a["steps"], b["steps"])


# ------------------------------------------------------------------------------ Algorithm 4
def test_model_selection_privacy_and_choice():
    prob = CosineSaddle(6, m=2)
    X = np.zeros((5, 6))
    X[:4, 0] = 0.1
    X[-1, 0] = math.pi
    res = alg.private_model_selection(
        X, client_grad_hess=prob.held_out_grad_hess,
        true_grad_hess=lambda Y: (prob.gradient(Y), prob.hessian(Y)), m=2, n=5000, epsilon=2.0,
        delta=1e-5, alpha=0.05, G_sens=prob.G_sens, M_sens=prob.M_sens,
        hessian_lipschitz=prob.hessian_lipschitz, rng=_gens(4))
    assert res.privacy["epsilon_guarantee"] == pytest.approx(2.0, rel=1e-9)
    assert res.privacy["epsilon_guarantee"] <= 2.0
    assert res.z == alg.selection_multiplier(2.0, 1e-5, 10)
    assert res.sigma_hess == pytest.approx(res.z * 2 * prob.M_sens * math.sqrt(6) / 5000)
    # the saddles (λ_min ≈ −0.995) are rejected, the minimum selected
    assert np.all(res.selected == 4)


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,name", [
    (dict(epsilon=0.0), "epsilon"), (dict(delta=1.0), "delta"), (dict(alpha=-1.0), "alpha"),
    (dict(G=0.0), "G"), (dict(hessian_lipschitz=float("nan")), "hessian_lipschitz"),
    (dict(m=0), "m"), (dict(Q=0), "Q"), (dict(kappa=-0.1), "kappa")])
def test_plan_bad_input(kw, name):
    base = dict(epsilon=0.5, delta=1e-5, alpha=0.1, G=0.2, M=1.0, U=2.0, hessian_lipschitz=3.0,
                G_sens=0.2, M_sens=0.05)
    with pytest.raises(ValueError, match=name):
        alg.spider_plan(1000, 4, **{**base, **kw})


def test_other_bad_input():
    with pytest.raises(ValueError, match="n"):
        alg.spider_plan(0, 4, epsilon=0.5, delta=1e-5, alpha=0.1, G=0.2, M=1.0, U=2.0,
                        hessian_lipschitz=3.0, G_sens=0.2, M_sens=0.05)
    with pytest.raises(ValueError, match="Gamma"):
        alg.gauss_psgd(alg.GaussianOracle(lambda X: X, 2, sigma=0, r=0, rng=_gens(1)),
                       np.zeros(2), chi=0.1, eta=0.1, radius=0.1, Gamma=0, Q=1, max_steps=10)
    with pytest.raises(ValueError, match="chi"):
        alg.gauss_psgd(alg.GaussianOracle(lambda X: X, 2, sigma=0, r=0, rng=_gens(1)),
                       np.zeros(2), chi=-1, eta=0.1, radius=0.1, Gamma=1, Q=1, max_steps=10)
    with pytest.raises(ValueError, match="x0"):
        alg.gauss_psgd(alg.GaussianOracle(lambda X: X, 2, sigma=0, r=0, rng=_gens(1)),
                       np.array([np.nan, 0.0]), chi=1, eta=0.1, radius=0.1, Gamma=1, Q=1,
                       max_steps=10)
    with pytest.raises(ValueError, match="r"):
        alg.GaussianOracle(lambda X: X, 2, sigma=0.0, r=-1.0, rng=_gens(1))
    with pytest.raises(ValueError, match="blind"):
        alg.GaussianOracle(lambda X: X, 3, sigma=0.0, r=0.1, rng=_gens(1), blind=np.eye(2))
    with pytest.raises(ValueError, match="omega0"):
        alg.escape_rounds(1.0)
    with pytest.raises(ValueError, match="k"):
        CosineSaddle(3, k=3)
    with pytest.raises(ValueError, match="s1"):
        CosineSaddle(3, s1=0.0, s2=0.0)
    with pytest.raises(ValueError, match="omega"):
        prob = CosineSaddle(3)
        alg.private_model_selection(np.zeros((2, 3)), client_grad_hess=prob.held_out_grad_hess,
                                    true_grad_hess=lambda Y: (prob.gradient(Y), prob.hessian(Y)),
                                    m=1, n=10, epsilon=1.0, delta=1e-5, alpha=0.1, G_sens=0.2,
                                    M_sens=0.05, hessian_lipschitz=3.0, omega=0.0, rng=_gens(1))
    with pytest.raises(ValueError, match="G_sens"):
        prob = CosineSaddle(3)
        plan = alg.spider_plan(1000, 3, epsilon=0.5, delta=1e-5, alpha=0.1, G=0.2, M=1.0, U=2.0,
                               hessian_lipschitz=3.0, G_sens=0.1, M_sens=0.05)
        alg.AdaDPSpider(prob, plan, _gens(1))


def test_index3_saddle_chain_is_escaped():
    """P-multi (k = 3 cosine coordinates): the start is an index-3 saddle; every output of
    Gauss-PSGD + Ada-DP-SPIDER is an α-SOSP with all three coordinates out of the saddle's basin."""
    from empirical.papers.sosp.experiments import run_rate

    out = run_rate(dict(n=100000, d=8, epsilon=0.5, m=1, h=0.0, delta=1e-5, s1=0.15, s2=0.05,
                        c_chi=1.5, Q=10, k=3), _gens(6, 11))
    assert np.all(out["is_sosp"] == 1.0) and np.all(out["escaped"] == 1.0)
    assert np.all(out["certified"] == 1.0)


def test_escape_radius_larger_than_the_basin_false_certifies():
    """R must come from a valid Hessian-Lipschitz bound.  With ρ underestimated
    so that R = √(α/ρ) exceeds the saddle-to-minimum distance (π), no round can reach R: the
    saddle is returned as a certificate although λ_min = −γ."""
    d, gamma, alpha = 4, 0.5, 0.05
    prob = CosineSaddle(d, gamma=gamma, s1=0.0, s2=1e-12)
    eta = math.sqrt(3.0 * alpha)
    orc = alg.GaussianOracle(prob.gradient, d, sigma=0.0, r=0.01, rng=_gens(4))
    res = alg.gauss_psgd(orc, np.zeros(d), chi=alpha / 4, eta=eta, radius=2 * math.pi, Gamma=60,
                         Q=3, max_steps=10**4, rows=4, stop_on_first_procedure=True)
    assert res.certified.all()
    assert np.all(prob.lambda_min(res.x) < -math.sqrt(3.0 * alpha))


def test_blockwise_record_normalisation_is_the_whole_array_formula_bit_for_bit():
    """batch_gradients normalises its record arrays block by block (a speed change): each row's
    norm is reduced on its own, so the floats must equal ``v / norm(v, axis=-1)`` on the whole
    array, across block boundaries (2^12 rows) and for non-contiguous input (whole-array path)."""
    from empirical.papers.sosp.problems import _normalise_last_axis

    rng = np.random.default_rng(3)
    for shape in ((3, 2, 1, 2466, 16), (2, 2, 3, 50, 4), (1, 2, 1, 9000, 3)):
        v = rng.standard_normal(shape)
        want = v / np.linalg.norm(v, axis=-1, keepdims=True)
        _normalise_last_axis(v)
        assert np.array_equal(v, want)
    w = rng.standard_normal((40, 2, 16))[:, 1]
    want = w / np.linalg.norm(w, axis=-1, keepdims=True)
    _normalise_last_axis(w)
    assert np.array_equal(w, want)
