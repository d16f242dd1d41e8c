"""Algorithms of the linear-regression paper: the streamed design, DP-STAT (privacy by brute-force
sensitivity and by the accountant, utility over many calls, the literal rule's overshoot),
DP-AMBSSGD (the theorem's schedule, privacy = target, common random numbers, seed-row
independence), DP-SSGD, and bad input."""
import math

import numpy as np
import pytest

from algorithms import accounting
from algorithms.linreg.adaptive_clipping import (GAMMA_SLACK, LinearRegressionDesign,
                                                 alpha_for_epsilon, ambssgd_schedule,
                                                 count_sensitivity, dp_ambssgd, dp_ssgd,
                                                 dp_ssgd_privacy, dp_stat, residual_count)


def _gens(k, tag=0):
    return [np.random.default_rng([tag, r]) for r in range(k)]


def test_design_constants_and_exact_excess():
    des = LinearRegressionDesign.make(8, w_norm=2.0, sigma=0.5)
    assert des.rx2 == pytest.approx(10.0)                     # Tr H + 2‖H‖ for N(0, I)
    assert des.w_norm == pytest.approx(2.0) and des.condition_number == 1.0
    lap = LinearRegressionDesign.make(8, design="laplace")
    assert lap.rx2 == pytest.approx(8 + 5.0) and lap.tail_a == 1.0   # E u⁴ = 6 for Laplace
    kap = LinearRegressionDesign.make(5, condition_number=16.0)
    assert kap.condition_number == pytest.approx(16.0) and kap.w_norm == pytest.approx(1.0)
    # Monte Carlo: E[xxᵀ] = H and E‖x‖²xxᵀ ⪯ R_x² H hold with equality at the top eigenvalue
    X, y = kap.sample(_gens(1), 200_000)
    H = X[0].T @ X[0] / X.shape[1]
    np.testing.assert_allclose(np.diag(H), kap.eigenvalues, rtol=0.02)
    M = np.einsum("k,ki,kj->ij", np.einsum("kd,kd->k", X[0], X[0]), X[0], X[0]) / X.shape[1]
    assert np.max(np.diag(M) / kap.eigenvalues) == pytest.approx(kap.rx2, rel=0.03)
    w = kap.w_star + 0.1
    assert kap.excess(w)[0] == pytest.approx(0.5 * 0.01 * kap.eigenvalues.sum())
    # the excess is the population loss gap: ½E(y − ⟨x,w⟩)² − ½σ²
    resid = y[0] - X[0] @ w
    assert 0.5 * np.mean(resid**2) - 0.5 * kap.sigma**2 == pytest.approx(kap.excess(w)[0], abs=3e-3)


def test_design_bad_input():
    with pytest.raises(ValueError, match="d must be"):
        LinearRegressionDesign.make(0)
    with pytest.raises(ValueError, match="sigma must be"):
        LinearRegressionDesign.make(4, sigma=-1.0)
    with pytest.raises(ValueError, match="condition_number must be"):
        LinearRegressionDesign.make(4, condition_number=0.5)
    with pytest.raises(ValueError, match="design must be"):
        LinearRegressionDesign.make(4, design="cauchy")
    with pytest.raises(ValueError, match="maximum 1"):
        LinearRegressionDesign(np.array([2.0, 1.0]), np.zeros(2), 1.0)


def test_alpha_is_calibrated_to_the_target_by_dp_accounting():
    for eps in (0.25, 1.0, 4.0, 8.0):
        a = alpha_for_epsilon(eps, 1e-6)
        assert accounting.zcdp_to_epsilon(0.5 / a**2, 1e-6) == pytest.approx(eps, rel=1e-9)
        # Theorem 3.6's α (1/α²-zCDP, Bun–Steinke conversion) is larger: 2× the ρ and a looser
        # conversion (LR-E11)
        assert math.sqrt(8 * math.log(1e6)) / eps > a
    with pytest.raises(ValueError, match="epsilon must be"):
        alpha_for_epsilon(-1.0, 1e-6)
    with pytest.raises(ValueError, match="delta must be"):
        alpha_for_epsilon(1.0, 1.5)


def test_dp_stat_count_has_replace_one_sensitivity_one_by_brute_force():
    """The only data access of DP-STAT is c = |{j : |r_j| ≤ γ}|.  Replacing one record (any
    residual value, including 0, the threshold itself and huge values) changes c by ≤ 1, and by
    exactly 1 for some replacement: the Gaussian noise std α√(L+1) is calibrated to Δ = 1."""
    rng = np.random.default_rng(0)
    for s in (1, 2, 5, 9):
        r = np.abs(rng.standard_normal(s))
        for gamma in (0.0, 0.3, float(np.median(r)), 10.0):
            reps = np.concatenate([r, [0.0, gamma, gamma * (1 + 1e-12), 1e300]])
            sens = count_sensitivity(r, gamma, reps)
            assert sens <= 1
        assert max(count_sensitivity(r, g, np.array([0.0, 1e300])) for g in (0.3, 10.0)) == 1


def test_dp_stat_privacy_from_the_accountant():
    r = np.abs(np.random.default_rng(1).standard_normal((4, 500)))
    st = dp_stat(r, B=10.0, alpha=2.0, rng=_gens(4), levels=40)
    assert st.noise_std == pytest.approx(2.0 * math.sqrt(41))
    # longest path: L + 1 = 41 counts each ½(α√41)⁻² → ½α⁻²
    assert st.rho_guarantee == pytest.approx(1 / (2 * 2.0**2), rel=1e-12)
    assert np.all(st.rho_spent <= st.rho_guarantee * (1 + 1e-12))
    assert np.all((st.rounds >= 1) & (st.rounds <= 41))
    np.testing.assert_allclose(st.rho_spent, st.rounds / (2 * 41 * 4.0), rtol=1e-12)


def test_dp_stat_utility_over_many_calls():
    """Lemma 3.10 with the break threshold s − Γ_p: at the output, the count below γ is at least
    s − Γ_p − 4·std, and below γ/2 it was under s − Γ_p + 4·std (the previous round continued),
    in every one of 300 calls (each event has probability ≥ 1 − 41·3e-5).  So γ is within a
    factor 2 of the (1 − Γ_p/s) quantile of the residuals."""
    s, alpha, R = 600, 1.5, 300
    rng = np.random.default_rng(2)
    r = np.abs(rng.standard_normal((R, s))) * rng.uniform(0.1, 10, (R, 1))
    st = dp_stat(r, B=100.0, alpha=alpha, rng=_gens(R, 7))
    gp = GAMMA_SLACK * st.noise_std
    c = residual_count(r, st.gamma)
    c_half = residual_count(r, st.gamma / 2)
    assert np.all(c >= s - gp - 4 * st.noise_std)
    assert np.all(c_half < s - gp + 4 * st.noise_std)
    q = np.quantile(r, 1 - 2 * gp / s, axis=1)
    assert np.all(st.gamma <= 2 * r.max(axis=1)) and np.all(st.gamma >= 0.5 * q)


def test_dp_stat_literal_rule_overshoots_heavy_tailed():
    """LR-E13: with the printed rule 'break iff c_priv ≥ s', once every residual is below γ each
    further round breaks with probability ≈ ½, so γ overshoots the maximum by 2^k with
    probability ≈ 2^{−k}; the slack rule never exceeds twice the maximum."""
    s, R = 400, 400
    r = np.abs(np.random.default_rng(3).standard_normal((R, s)))
    lit = dp_stat(r, B=100.0, alpha=2.0, rng=_gens(R, 11), rule="literal").gamma
    slack = dp_stat(r, B=100.0, alpha=2.0, rng=_gens(R, 11), rule="slack").gamma
    ratio = lit / r.max(axis=1)
    assert np.mean(ratio >= 4) > 0.15 and np.mean(ratio >= 16) > 0.02
    assert np.max(slack / r.max(axis=1)) <= 2.0


def test_dp_stat_bad_input():
    r = np.ones((2, 5))
    with pytest.raises(ValueError, match="B must be"):
        dp_stat(r, B=0.0, alpha=1.0, rng=_gens(2))
    with pytest.raises(ValueError, match="rule must be"):
        dp_stat(r, B=1.0, alpha=1.0, rng=_gens(2), rule="max")
    with pytest.raises(ValueError, match="rows but"):
        dp_stat(r, B=1.0, alpha=1.0, rng=_gens(3))
    with pytest.raises(ValueError, match="abs_residuals must be in"):
        dp_stat(-r, B=1.0, alpha=1.0, rng=_gens(2))


def test_ambssgd_uses_theorem37s_schedule_and_is_certified_at_its_target():
    des = LinearRegressionDesign.make(8, sigma=1.0)
    n = 40_000
    res = dp_ambssgd(des, n, epsilon=4.0, delta=1e-6, rng=_gens(3))
    i = res.info
    T = math.ceil(math.log(n))
    assert (i["T"], i["b"], i["s"]) == (T, 10 * n // (11 * T), n // (11 * T))
    assert T * (i["b"] + i["s"]) <= n
    assert i["eta"] == pytest.approx(i["b"] / (des.rx2 + i["b"] - 1))
    assert i["alpha"] == alpha_for_epsilon(4.0, 1e-6)
    assert i["B"] == pytest.approx(math.sqrt(des.rx2) * 2.0 * math.log(n))
    assert i["epsilon_guarantee"] == pytest.approx(4.0, rel=1e-9)
    assert np.all(i["epsilon_spent"] <= i["epsilon_guarantee"] * (1 + 1e-12))
    assert i["rho_guarantee"] == pytest.approx(0.5 / i["alpha"] ** 2)
    assert np.all(i["clip_fraction"] == 0)
    assert i["tail_iterates"] == T - T // 2
    # ζ_t = R_x γ_t √ln n: positive, and of the order of R_x·σ_r·√ln n
    z = i["zeta"] / (math.sqrt(des.rx2) * math.sqrt(math.log(n)))
    assert np.all((z[:, 1:] > 0.5) & (z[:, 1:] < 10))


def test_ambssgd_common_random_numbers_and_seed_rows():
    """The reference iterate sees the same data as the private one, whatever α: with nothing
    clipped its trajectory does not depend on ζ_t, so it equals a fully non-private run on the
    same seeds; and a seed row's numbers do not depend on the other rows in the batch."""
    des = LinearRegressionDesign.make(8, sigma=1.0)
    a = dp_ambssgd(des, 40_000, epsilon=8.0, delta=1e-6, rng=_gens(3, 5))
    b = dp_ambssgd(des, 40_000, epsilon=8.0, delta=1e-6, rng=_gens(3, 5), private=False)
    assert np.all(a.info["clip_fraction"] == 0) and np.all(b.info["clip_fraction"] == 0)
    np.testing.assert_allclose(a.info["w_reference"], b.w, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(b.w, b.info["w_reference"], rtol=1e-12, atol=1e-15)
    one = dp_ambssgd(des, 40_000, epsilon=8.0, delta=1e-6, rng=_gens(3, 5)[1:2])
    np.testing.assert_array_equal(one.w[0], a.w[1])
    assert not np.allclose(a.w, a.info["w_reference"])


def test_fixed_clip_baseline_has_the_same_accounting():
    des = LinearRegressionDesign.make(8, sigma=0.0)
    res = dp_ambssgd(des, 20_000, epsilon=2.0, delta=1e-6, rng=_gens(2), clip="fixed", zeta=50.0)
    i = res.info
    assert i["s"] == 0 and i["b"] == 20_000 // i["T"]
    assert np.all(i["zeta"] == 50.0)
    assert i["epsilon_guarantee"] == pytest.approx(2.0, rel=1e-9)
    with pytest.raises(ValueError, match="zeta must be"):
        dp_ambssgd(des, 20_000, epsilon=2.0, delta=1e-6, rng=_gens(2), clip="fixed")
    with pytest.raises(ValueError, match="clip must be"):
        dp_ambssgd(des, 20_000, epsilon=2.0, delta=1e-6, rng=_gens(2), clip="auto")
    with pytest.raises(ValueError, match="n must be at least"):
        ambssgd_schedule(20, des)


def test_dp_ssgd_tail_average_reference_and_privacy():
    des = LinearRegressionDesign.make(4, sigma=1.0)
    n = 3000
    alpha = math.log(n / 1e-6) / (4.0 * math.sqrt(n))
    zeta = 2.0 * math.sqrt(2.0) * math.log(n)
    a = dp_ssgd(des, n, zeta=zeta, alpha=alpha, eta=1 / 16, rng=_gens(3, 9))
    b = dp_ssgd(des, n, zeta=zeta, alpha=0.0, eta=1 / 16, rng=_gens(3, 9))
    assert a.info["tail_iterates"] == n - n // 2
    np.testing.assert_allclose(a.info["w_reference"], b.w, rtol=1e-10, atol=1e-13)
    assert np.all(a.info["clip_fraction"] < 0.01)
    assert a.privacy.guarantee_rho == pytest.approx(0.5 / alpha**2, rel=1e-12)
    # excess ≈ Tr(H⁻¹(Σ + 4ζ²α²I))/n (Lemma 3.5's leading term) within seed noise
    lead = (4 * 1.0 + 4 * zeta**2 * alpha**2 * 4) / n
    assert 0.2 * lead < np.mean(des.excess(a.w)) < 3 * lead
    with pytest.raises(ValueError, match="zeta must be"):
        dp_ssgd(des, n, zeta=0.0, alpha=alpha, eta=0.1, rng=_gens(1))


def test_dp_ssgd_shuffling_certificate():
    """LR-E7: at Corollary 3.3's α = log(n/δ)/(ε√n) with ε = 4 the per-step ε₀ is far outside
    Feldman et al.'s range, so no amplified guarantee exists (only ½α⁻²-zCDP); at ε = 0.05
    (inside Theorem 3.1's ε ≲ √(log(n/δ)/n) = 0.048) the amplified ε is ≈ 0.4, i.e. Theorem
    3.1's hidden constant is ≈ 8."""
    n, delta = 10_000, 1e-6
    big = dp_ssgd_privacy(math.log(n / delta) / (4 * math.sqrt(n)), n, delta)
    assert math.isnan(big["epsilon_amplified"]) and big["epsilon0"] > 10
    small = dp_ssgd_privacy(math.log(n / delta) / (0.05 * math.sqrt(n)), n, delta)
    assert 0.2 < small["epsilon_amplified"] < 0.8
    assert math.isnan(big["delta_amplified"])


def _fmt21(eps0: float, n: int, delta_hat: float, delta0: float) -> dict:
    """Both readings of FMT21 Thm 3.8 that LR-E7 could not settle, recomputed from the formulas:
    ε by their Thm 3.1 ((e^ε₀ − 1)/(e^ε₀ + 1) form) or by the authors' closed-form code (factor
    (1 − e^{−ε₀})/(1 + e^{−ε₀−ε̃}), ε̃ = log(1 + bracket)); δ slack e^ε·n·δ₀ (Thm A.3's O(·) with
    constant 1) or (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ₀."""
    e0 = math.exp(eps0)
    bracket = 8 * math.sqrt(e0 * math.log(4 / delta_hat) / n) + 8 * e0 / n
    eps_thm = math.log(1 + (e0 - 1) / (e0 + 1) * bracket)
    eps_code = math.log(1 + (1 - 1 / e0) / (1 + 1 / (e0 * (1 + bracket))) * bracket)
    return {"eps_thm": eps_thm, "eps_code": eps_code,
            "delta_a3": delta_hat + math.exp(eps_code) * n * delta0,
            "delta_38": delta_hat + (math.exp(eps_code) + 1) * (1 + 1 / (2 * e0)) * n * delta0}


def test_amplified_guarantee_is_the_weaker_of_both_fmt21_readings():
    """LR-E7: with δ̂ = δ/2 and δ₀ = δ/(2n) (ε₀ from dp-accounting at δ₀), the reported amplified
    ε is the larger of the two closed forms (the authors' code; their Thm 3.1 form is smaller)
    and it holds at δ̂ + (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ₀, larger than Theorem A.3's δ̂ + e^ε·n·δ₀:
    whichever reading of FMT21 is right, (ε, δ_reported)-DP follows.  The range condition is
    the code's ε₀ ≤ log(n/(16 log(4/δ̂))) (stricter than the printed log(2/δ̂)).  Can fail: the
    module's previous δ(1 + e^ε)/2 is below the reported δ here."""
    n, alpha, delta = 1000, 4.0, 1e-5
    p = dp_ssgd_privacy(alpha, n, delta)
    eps0 = accounting.epsilon(accounting.gaussian_event(alpha), delta / (2 * n))
    assert p["epsilon0"] == pytest.approx(eps0, rel=1e-12)
    assert eps0 <= math.log(n / (16 * math.log(8 / delta)))          # inside the code's range
    r = _fmt21(eps0, n, delta / 2, delta / (2 * n))
    assert p["epsilon_amplified"] == pytest.approx(r["eps_code"], rel=1e-12)
    assert p["epsilon_amplified"] > r["eps_thm"]
    assert p["delta_amplified"] == pytest.approx(r["delta_38"], rel=1e-12)
    assert p["delta_amplified"] > r["delta_a3"] > delta * (1 + math.exp(r["eps_thm"])) / 2
    # below the unamplified one-step ε (what shuffling buys) at the same δ
    eps1 = accounting.epsilon(accounting.gaussian_event(alpha), p["delta_amplified"])
    assert p["epsilon_amplified"] < eps1
    # between the printed range log(n/(16 log(2/δ̂))) and the code's, no amplified ε is claimed
    lo, hi = math.log(n / (16 * math.log(8 / delta))), math.log(n / (16 * math.log(4 / delta)))
    a_mid = brentq_alpha(0.5 * (lo + hi), delta / (2 * n))
    assert math.isnan(dp_ssgd_privacy(a_mid, n, delta)["epsilon_amplified"])


def brentq_alpha(eps0: float, delta0: float) -> float:
    """The Gaussian multiplier whose dp-accounting ε at δ₀ is ε₀."""
    from scipy.optimize import brentq
    return brentq(lambda a: accounting.epsilon(accounting.gaussian_event(a), delta0) - eps0,
                  0.3, 50.0, xtol=1e-10)


def test_observe_hooks_see_every_release_with_its_noise():
    """DP-AMBSSGD: one "grad" release per phase (the noisy mean gradient, std α·2ζ_t/b) and every
    noisy count of DP-STAT ("stat", std α√(L+1)); DP-SSGD: one "grad" release per step (the noisy
    clipped gradient, std 2ζα).  The hook changes nothing: outputs are bit-identical without it."""
    des = LinearRegressionDesign.make(4, sigma=1.0)
    seen = []

    def obs(kind, t, rows, released, sigma):
        seen.append((kind, t, np.array(rows), np.array(released), np.array(sigma)))

    a = dp_ambssgd(des, 5_000, epsilon=2.0, delta=1e-6, rng=_gens(3), observe=obs)
    b = dp_ambssgd(des, 5_000, epsilon=2.0, delta=1e-6, rng=_gens(3))
    np.testing.assert_array_equal(a.w, b.w)
    grads = [s for s in seen if s[0] == "grad"]
    stats = [s for s in seen if s[0] == "stat"]
    assert [s[1] for s in grads] == list(range(a.info["T"]))
    # every (phase, row) pair of DP-STAT released exactly stat_rounds[row, phase] counts
    per = np.zeros_like(a.info["stat_rounds"])
    for _, t, rows, rel, sig in stats:
        per[rows, t] += 1
        np.testing.assert_allclose(sig, a.info["alpha"] * math.sqrt(41))
    np.testing.assert_array_equal(per, a.info["stat_rounds"])
    for _, t, rows, rel, sig in grads:
        assert rel.shape == (3, 4)
        np.testing.assert_allclose(sig, a.info["alpha"] * 2 * a.info["zeta"][:, t] / a.info["b"])
    seen.clear()
    n = 400
    c = dp_ssgd(des, n, zeta=50.0, alpha=0.5, eta=0.05, rng=_gens(2, 7), observe=obs)
    d = dp_ssgd(des, n, zeta=50.0, alpha=0.5, eta=0.05, rng=_gens(2, 7))
    np.testing.assert_array_equal(c.w, d.w)
    assert [s[1] for s in seen] == list(range(n)) and all(s[0] == "grad" for s in seen)
    np.testing.assert_allclose(seen[0][4], 2 * 50.0 * 0.5)
    # the releases carry the noise: their spread over n steps is at least its std
    spread = np.std(np.concatenate([s[3] for s in seen]))
    assert spread >= 0.9 * 2 * 50.0 * 0.5


def test_observe_and_t_are_validated():
    des = LinearRegressionDesign.make(2)
    with pytest.raises(ValueError, match="observe must be"):
        dp_ambssgd(des, 1000, epsilon=1.0, delta=1e-6, rng=_gens(1), observe=3)
    with pytest.raises(ValueError, match="observe must be"):
        dp_ssgd(des, 10, zeta=1.0, alpha=1.0, eta=0.1, rng=_gens(1), observe="x")
    with pytest.raises(ValueError, match="t must be"):
        dp_stat(np.zeros((1, 3)), B=1.0, alpha=1.0, rng=_gens(1), t=-1)
