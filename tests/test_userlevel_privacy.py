"""User-level SCO paper: the privacy-critical pieces checked by brute force on small inputs —
score sensitivities, Lemma C.2/B.2's sensitivity of the outlier-removed mean (the constant the
accounting assumes), AboveThreshold's ε-DP, and the coupled one-adversary / majority-adversary
behaviour of Algorithm 3 ."""
import copy
import itertools
import math

import numpy as np
import pytest

from algorithms.userlevel import sco as ul
from empirical.papers.userlevel import audit as aul
from empirical.papers.userlevel.problems import LeastSquaresUsers, QuadraticUsers


def test_score_sensitivity_is_below_two_exhaustively():
    """s = (1/K)Σ_{j,j'}1(|P_j − P_j'| ≤ r) moves by ≤ 2(K−1)/K < 2 when one point changes: all
    6-point configurations on a 5-point grid, every replacement of point 0 (Alg. 2 line 7's and
    Alg. 1 line 14's sensitivity 2, hence Lap(16/ε), Lap(20/ε))."""
    K, grid = 6, np.arange(5.0)
    configs = np.array(list(itertools.product(grid, repeat=K)))            # (5^6, 6)
    D = np.abs(configs[:, :, None] - configs[:, None, :]) <= 1.0
    s = D.sum(axis=(1, 2)) / K
    worst = 0.0
    for c in grid:
        alt = configs.copy()
        alt[:, 0] = c
        s2 = (np.abs(alt[:, :, None] - alt[:, None, :]) <= 1.0).sum(axis=(1, 2)) / K
        worst = max(worst, float(np.max(np.abs(s2 - s))))
    assert worst == pytest.approx(2 * (K - 1) / K)
    # and the function agrees with the brute force on a sample
    P = configs[12345][:, None]
    assert ul.concentration_scores(P, 1.0).sum() / K == pytest.approx(s[12345])


def test_outlier_removed_mean_sensitivity_model():
    """Lemma C.2 (and B.2 with C for K): on the event that the test passes (s ≥ 0.7K, what
    ŝ ≥ 4K/5 with |Laplace| ≤ K/20 implies), the coupled mean of the kept points moves by at most
    Δ = c·τ log(1/ζ)/K except with probability ≤ ζ.  Adversarial search: two clusters 1.5τ–4.5τ
    apart (borderline scores), the replaced point anywhere; removal coins coupled.

    Scope: this two-cluster search space only.  UL-E13 (tests/test_userlevel_audit.py) finds
    a three-cluster configuration that exceeds c = 2 with probability ≫ ζ at every ζ.

    Finding UL-E7: with the hidden constant c = 1 the exceedance frequency is ≈ ζ at ζ = 1e-3
    (0.06–0.17% across searches: borderline, not a safe constant); with c = 2, the constant the
    accounting used until UL-E13, it is ≤ ζ/10 here (but not on three clusters)."""
    rng = np.random.default_rng(0)
    K, d, tau = 12, 2, 1.0
    out = []
    for _ in range(400):
        a = rng.integers(K // 2, K + 1)
        c2 = np.array([rng.uniform(1.5, 4.5), 0.0])
        P = np.where((np.arange(K) < a)[:, None], rng.normal(0, 0.3, (K, d)),
                     c2 + rng.normal(0, 0.3, (K, d)))
        if ul.concentration_scores(P, 2 * tau).sum() / K < 0.7 * K:
            continue
        p = ul.keep_probabilities(ul.concentration_scores(P, 2 * tau), K)
        U = rng.random((200, K))
        cands = np.concatenate([rng.normal(0, 2.0, (20, d)),
                                P[rng.integers(0, K, 5)] + rng.normal(0, 0.5, (5, d))])
        for c in cands:
            P2 = P.copy()
            P2[0] = c
            p2 = ul.keep_probabilities(ul.concentration_scores(P2, 2 * tau), K)
            k1, k2 = U < p, U < p2
            ok = k1.any(1) & k2.any(1)
            g1 = (k1[ok] @ P) / k1[ok].sum(1, keepdims=True)
            g2 = (k2[ok] @ P2) / k2[ok].sum(1, keepdims=True)
            out.append(np.linalg.norm(g1 - g2, axis=1) * K / tau)
    r = np.concatenate(out)
    assert r.size > 100_000
    c = aul.OLD_CONSTANT          # the former accounting's constant (history of UL-E7/UL-E13)
    for zeta in (1e-2, 1e-3):
        assert np.mean(r > c * math.log(1 / zeta)) <= zeta / 10
    # c = 1 is borderline: the exceedance is of the order of ζ itself (pinned, UL-E7)
    assert 0.2e-3 <= np.mean(r > math.log(1e3)) <= 5e-3


def _above_threshold_vectorized(q, thr, eps, sens, rng, size):
    nt = thr + rng.laplace(0, 2 * sens / eps, size)
    nu = rng.laplace(0, 4 * sens / eps, (size, len(q)))
    fire = (np.asarray(q)[None, :] + nu) >= nt[:, None]
    first = np.where(fire.any(1), fire.argmax(1), len(q))
    return np.bincount(first, minlength=len(q) + 1) / size


def test_above_threshold_class_matches_algorithm4():
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    at = ul.AboveThreshold(1.0, 0.5, 2.0, g1)
    nt = 1.0 + g2.laplace(0, 2 * 2.0 / 0.5)
    assert at.noisy_threshold == nt
    for q in (0.0, 5.0, -3.0):
        assert at.fires(q) == (q + g2.laplace(0, 4 * 2.0 / 0.5) >= nt)


def test_above_threshold_is_epsilon_dp():
    """Lemma A.9 by Monte Carlo: the distribution of the halting index on neighbouring query
    sequences (each query moved by ≤ its sensitivity, the adversarial direction) obeys
    P ≤ e^ε P' up to sampling error."""
    eps, sens, N = 1.0, 2.0, 400_000
    q = np.array([0.0, 1.0, 3.0])
    q2 = q + sens * np.array([1, -1, 1])
    pa = _above_threshold_vectorized(q, 4.0, eps, sens, np.random.default_rng(1), N)
    pb = _above_threshold_vectorized(q2, 4.0, eps, sens, np.random.default_rng(2), N)
    se = 4 * np.sqrt(np.maximum(pa, pb) / N)
    assert np.all(pa <= math.exp(eps) * pb + se + 1e-12)
    assert np.all(pb <= math.exp(eps) * pa + se + 1e-12)


#: ε of the Algorithm 3 privacy tests at n = 4096: below ≈ 4 no phase's score test certifies
#: a finite sensitivity at δ = 1e-9 (UL-E14), so the algorithm refuses to run.
EPS3 = 8.0


def _coupled(data_a, data_b, **kw):
    g = np.random.default_rng(11)
    ga, gb = copy.deepcopy(g), copy.deepcopy(g)
    na, nb = np.random.default_rng(12), np.random.default_rng(12)
    ra = ul.accelerated_phased_erm(data_a, EPS3, 1e-9, ga, noise_rng=na, **kw)
    rb = ul.accelerated_phased_erm(data_b, EPS3, 1e-9, gb, noise_rng=nb, **kw)
    return ra, rb


def test_one_adversarial_user_is_removed_and_moves_output_less_than_noise():
    """E10: D' = D with user 0 (in phase 1) replaced by an adversary whose mean gradient sits
    ≈ 2.3 away.  Same generators on both runs.  With removal the output moves by far less than
    the output noise; without removal (the ablation) it moves ≥ 3× more."""
    n, m, d = 4096, 4096, 4
    D = QuadraticUsers(n, m, d, np.random.default_rng(5))
    Dp = copy.deepcopy(D)
    Dp.zbar[0] = -0.5 * D.R * np.eye(d)[0]
    ra, rb = _coupled(D, Dp, c_K1=40)
    shift = np.linalg.norm(ra.x - rb.x)
    assert rb.info["removed"] >= 1 and not rb.halted
    # output noise: spread of the private output over independent noise draws
    outs = [ul.accelerated_phased_erm(D, EPS3, 1e-9, np.random.default_rng(11),
                                      noise_rng=np.random.default_rng(100 + s), c_K1=40).x
            for s in range(4)]
    sigma_out = float(np.sqrt(np.mean(np.var(outs, axis=0))))
    assert shift <= 0.25 * sigma_out
    # ablation: no removal, same τ-free noise model
    ab_a, ab_b = _coupled(D, Dp, c_K1=40, removal=False)
    assert np.linalg.norm(ab_a.x - ab_b.x) >= 3 * shift


def test_majority_adversaries_force_a_halt_and_clean_data_never_does():
    n, m, d = 4096, 4096, 4
    n_1 = ul.alg3_schedule(n, m, d, EPS3, 1e-9, 4.0, 4.0, 1.0, c_K1=40, calibrate=False)[1][0].n_i
    halts = [ul.accelerated_phased_erm(QuadraticUsers(n, m, d, np.random.default_rng(s),
                                                      adversarial=int(0.45 * n_1)),
                                       EPS3, 1e-9, np.random.default_rng(50 + s), c_K1=40).halted
             for s in range(5)]
    clean = [ul.accelerated_phased_erm(QuadraticUsers(n, m, d, np.random.default_rng(s)),
                                       EPS3, 1e-9, np.random.default_rng(50 + s), c_K1=40).halted
             for s in range(5)]
    assert all(halts) and not any(clean)


def test_alg1_drops_a_corrupted_group():
    """Algorithm 1's analogue (iv): a group whose users all carry flipped labels produces an SGD
    average far from the others and gets keep-probability 0 (h < C/2)."""
    n, m, d = 2**15, 16, 5
    # c_τ = 0.05: τ_1 ≈ 0.5, below the ≈ 1.7 the flipped-label group's average moves
    # c_C = 60: fewer groups certify nothing under the corrected Lemma B.2 (UL-E13/UL-E14)
    C, ph = ul.alg1_schedule(n, m, d, 1.0, 1e-6, 3.5, 4.0, c_C=60.0, c_eta=200.0, c_tau=0.05,
                             max_phases=1, calibrate=False)
    N1 = ph[0].N_i
    data = LeastSquaresUsers(n, m, d, np.random.default_rng(1), keep_items=True, adversarial=N1)
    res = ul.phased_sgd_outlier_removal(data, 1.0, 1e-6, np.random.default_rng(2), c_C=60.0,
                                        c_eta=200.0, c_tau=0.05, max_phases=1)
    assert not res.halted
    assert res.phases[0]["kept"] <= C - 1


def test_score_test_failure_probability_is_inside_delta():
    """UL-E14 fixed: the event that the score test passes a badly concentrated set (its Laplace
    noise beats the margin M) is charged to δ instead of assumed away.  M is the exact
    ζ-quantile of the noise difference (checked here by Monte Carlo at ζ = 1e-3, where 4·10⁵
    draws resolve it to ±10%); the per-release ζ, summed as Lemma C.2's proof sums it, is δ/2;
    and the former rates-mode knobs (c_K1 = 36 at ε = 1,
    n = 4096), whose test failed with probability 4–7%, now refuse to run."""
    rng = np.random.default_rng(9)
    d = rng.laplace(0, 16.0, 400_000) - rng.laplace(0, 8.0, 400_000)
    assert np.mean(d >= ul.release_margin(1e-3, 16.0, 8.0)) == pytest.approx(1e-3, rel=0.12)
    lap = rng.laplace(0, 20.0, 400_000)
    assert np.mean(lap >= ul.release_margin(1e-3, 20.0)) == pytest.approx(1e-3, rel=0.12)
    for T, eps in ((1, 1.0), (33, 8.0)):
        z = ul.step_failure_probability(5e-11, T, eps)
        assert 4 * T * z * (2 * math.exp(eps / 2) + 1) == pytest.approx(5e-11)
    # (the run's reported δ_gauss + δ_fail = δ: test_alg3_guarantee_equals_target_and_spent_below)
    with pytest.raises(ValueError, match="privately"):
        ul.accelerated_phased_erm(QuadraticUsers(4096, 64, 4, np.random.default_rng(1)), 1.0,
                                  1e-10, np.random.default_rng(2), c_K1=36)


def test_calibration_search_epsilon_is_the_accountants_bit_for_bit():
    """Algorithm 1/3's noise calibration searches with ``gaussian_epsilon(search=True)`` (the WOR RDP
    with vectorised forward differences, a speed change): at every (z, count, n_i, K_i) it must
    return dp-accounting's ε exactly (so the calibrated z and every stored row are unchanged),
    including the unsampled and above-half-sample cases that skip the WOR bound; and the
    calibrated z meets its target by the accountant's own (reported) ε."""
    from algorithms.userlevel import accounting as ua

    rng = np.random.default_rng(12)
    cases = [(float(np.exp(rng.uniform(-1.0, 3.0))), int(rng.integers(1, 40)), pop,
              int(rng.integers(2, pop // 2 + 1))) for pop in (120, 999, 4096, 20_000)]
    cases += [(1.7, 5, None, None), (1.7, 5, 100, 80), (0.9, 0, 100, 10)]
    for z, count, pop, sample in cases:
        assert ua.gaussian_epsilon(z, count, 1e-9, pop, sample, search=True) == \
            ua.gaussian_epsilon(z, count, 1e-9, pop, sample)
    z = ua.calibrate_gaussian(0.5, 7, 5e-10, 3393, 58)
    assert ua.gaussian_epsilon(z, 7, 5e-10, 3393, 58) <= 0.5
