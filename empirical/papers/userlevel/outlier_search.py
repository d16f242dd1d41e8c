"""Brute force of the sensitivity of Algorithm 2's outlier-removed mean (user-level SCO paper,
Lowy, Liu, Asi; Lemma C.2, errata UL-E13): exact tails on three-group configurations and a random
search over neighbouring point sets (tests/test_userlevel_audit.py, test_userlevel_privacy.py).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.userlevel import sco as ul

__all__ = ["three_group_points", "three_group_tail", "needed_constant", "OLD_CONSTANT",
           "corrected_bound_units", "coupled_moves", "random_configuration", "random_search"]


def three_group_points(K: int, frac: float = 0.387, d: int = 2, radius: float = 1.0
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(P, P′): K points in three groups at −r·e1, 0, +r·e1 (sizes a, K − 2a, a with
    a = ⌊frac·K⌋, r the concentration radius 2τ); P′ moves one point of the +r group to
    −1.5r·e1 (within r of the −r group only).  The outer groups' scores h = K − a sit on the
    ramp (K/2, 2K/3) of the keep probabilities, and the move shifts every one of them by one
    step, in the direction that pulls the kept mean towards −e1 on both sides."""
    a = int(math.floor(frac * K))
    pos = np.r_[np.full(a, -1.0), np.zeros(K - 2 * a), np.full(a, 1.0)] * radius
    P = np.zeros((K, d))
    P[:, 0] = pos
    P2 = P.copy()
    P2[-1, 0] = -1.5 * radius
    return P, P2


def three_group_tail(K: int, thresholds: np.ndarray, frac: float = 0.387) -> dict:
    """Exact tail P(‖g − g′‖·K/r > t) of the coupled move of the outlier-removed mean on
    :func:`three_group_points` (r = 2τ; coins shared, i.e. the maximal coupling per point), by
    enumeration over the binomial counts of kept points.  The scores and keep probabilities
    come from the algorithm's own ``concentration_scores``/``keep_probabilities`` on the actual
    points (so the configuration is the one the algorithm sees); the test statistic's condition
    s ≥ 0.7K (event E_i of Lemma C.2, what ŝ ≥ 4K/5 with |noise| ≤ K/20 implies) is returned.
    Empty kept sets (probability < 1e-40 here) are ignored."""
    from scipy.stats import binom

    P, P2 = three_group_points(K, frac)
    r = 1.0
    h, h2 = ul.concentration_scores(P, r), ul.concentration_scores(P2, r)
    p, p2 = ul.keep_probabilities(h, K), ul.keep_probabilities(h2, K)
    a = int(np.sum(P[:, 0] < 0))
    b = K - 2 * a
    L_idx, R_idx = np.arange(a), np.arange(K - a, K - 1)          # R without the moved point
    pL, pL2 = float(p[L_idx[0]]), float(p2[L_idx[0]])
    pR, pR2 = float(p[R_idx[0]]), float(p2[R_idx[0]])
    pc, pc2 = float(p[-1]), float(p2[-1])
    assert np.all(p[a:K - a] == 1) and np.all(p2[a:K - a] == 1)   # the middle group is kept
    assert pL2 >= pL and pR >= pR2
    c = a - 1
    qL = (pL2 - pL) / (1 - pL) if pL < 1 else 0.0
    qR = (pR - pR2) / (1 - pR2) if pR2 < 1 else 0.0
    t = np.asarray(thresholds, float)
    tail = np.zeros(t.size)
    LD = np.arange(a + 1)
    wLD = binom.pmf(LD, a, pL)
    R2 = np.arange(c + 1)
    wR2 = binom.pmf(R2, c, pR2)
    for c0, w0 in ((0, 1 - pc), (1, pc)):
        for c1, w1 in ((0, 1 - pc2), (1, pc2)):
            if w0 * w1 == 0:
                continue
            for i in np.nonzero(wLD > 1e-40)[0]:
                le = np.arange(a - i + 1)[:, None]
                wle = binom.pmf(le, a - i, qL)
                for j in np.nonzero(wR2 > 1e-40)[0]:
                    re = np.arange(c - j + 1)[None, :]
                    wre = binom.pmf(re, c - j, qR)
                    nD, nD2 = b + i + j + re + c0, b + i + le + j + c1
                    if np.any(nD == 0) or np.any(nD2 == 0):
                        continue
                    gD = r * ((j + re + c0) - i) / nD
                    gD2 = r * (j - (i + le) - 1.5 * c1) / nD2
                    move = np.abs(gD - gD2) * K / r
                    W = w0 * w1 * wLD[i] * wR2[j] * wle * wre
                    tail += np.array([W[move > x].sum() for x in t])
    s, s2 = h.sum() / K, h2.sum() / K
    return {"tail": tail, "s": s / K, "s_prime": s2 / K, "a": a, "p_outer": pL}


def needed_constant(K: int, zetas, frac: float = 0.387) -> dict:
    """The smallest c with P(‖g − g′‖ > c·τ log(1/ζ)/K) ≤ ζ on the three-group configuration,
    for each ζ (c·τ log(1/ζ)/K = (c/2)·log(1/ζ)·r/K with r = 2τ), and the probability that the
    former accounting's constant 2 (:data:`OLD_CONSTANT`, the broken control) is exceeded."""
    zetas = np.asarray(zetas, float)
    grid = np.linspace(0.0, 80.0, 1601)
    out = three_group_tail(K, np.r_[grid, 0.5 * OLD_CONSTANT * np.log(1 / zetas)], frac)
    tail, at_c = out["tail"][:grid.size], out["tail"][grid.size:]
    need = [2.0 * grid[int(np.argmax(tail <= z))] / math.log(1 / z) for z in zetas]
    return {"needed": np.array(need), "exceed_at_constant": at_c, "s": out["s"],
            "s_prime": out["s_prime"]}


#: The accounting's former hidden constant (UL-E7): Δ = 2τ log(1/ζ)/K.  Broken (UL-E13); kept
#: only as the control that the brute force must catch.
OLD_CONSTANT = 2.0


def corrected_bound_units(K: int, s_min: float, zeta: float) -> float:
    """The corrected bound (:func:`algorithms.userlevel.sco.outlier_mean_sensitivity`) in units
    of r/K (r = the keep-score radius 2τ), at score floor ``s_min`` (in units of K points)."""
    return ul.outlier_mean_sensitivity(1.0, K, s_min, zeta) * K


def coupled_moves(P: np.ndarray, P2: np.ndarray, radius: float, draws: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``draws`` coupled moves ‖g − g′‖ of the outlier-removed mean (shared coins, the maximal
    coupling per point), scores and keep probabilities from the algorithm's own primitives;
    vectorized over draws.  Draws where either side keeps nobody are returned as 0 (the
    algorithm releases nothing then)."""
    K = P.shape[0]
    p = ul.keep_probabilities(ul.concentration_scores(P, radius), K)
    p2 = ul.keep_probabilities(ul.concentration_scores(P2, radius), K)
    U = rng.random((draws, K))
    k1, k2 = U < p, U < p2
    n1, n2 = k1.sum(axis=1), k2.sum(axis=1)
    ok = (n1 > 0) & (n2 > 0)
    g1 = (k1 @ P) / np.maximum(n1, 1)[:, None]
    g2 = (k2 @ P2) / np.maximum(n2, 1)[:, None]
    return np.where(ok, np.linalg.norm(g1 - g2, axis=1), 0.0)


def random_configuration(K: int, rng: np.random.Generator, d: int = 2, radius: float = 1.0
                         ) -> tuple[np.ndarray, np.ndarray]:
    """An adversarial-looking pair: 2–4 clusters on a line at random spacings in [0.5r, 2r]
    with random sizes (point clouds of width ≤ 0.2r), one random point moved to a random place
    within 3r of the centre.  Spacings near r, 2r put scores on the keep ramp, where the
    replacement flips decisions."""
    k = int(rng.integers(2, 5))
    w = rng.dirichlet(np.ones(k))
    sizes = np.maximum(1, np.round(w * K).astype(int))
    sizes[-1] = K - sizes[:-1].sum()
    if sizes[-1] < 1:
        sizes = np.r_[K - k + 1, np.ones(k - 1, int)]
    centres = np.r_[0.0, np.cumsum(rng.uniform(0.5, 2.0, k - 1))] * radius
    pos = np.repeat(centres - centres.mean(), sizes)
    P = np.zeros((K, d))
    P[:, 0] = pos
    P[:, 1:] = rng.uniform(-0.1, 0.1, (K, d - 1)) * radius
    P2 = P.copy()
    P2[int(rng.integers(K))] = rng.uniform(-3.0, 3.0, d) * radius
    return P, P2


def random_search(K: int, configs: int, draws: int, zeta: float, seed: int = 0) -> dict:
    """Brute force over :func:`random_configuration` pairs (and the three-group pair) with both
    scores ≥ ``s_floor`` = the lower of the two actual scores: for each pair, the frequency with
    which the coupled move exceeds the corrected bound (at s_min = that floor) and the former
    constant-2 bound.  Returns the worst frequencies and the largest move/bound ratio seen."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, K, 4242])))
    worst_new, worst_old, ratio, used = 0.0, 0.0, 0.0, 0
    pairs = [three_group_points(K, 0.38)] + [random_configuration(K, rng) for _ in range(configs)]
    for P, P2 in pairs:
        s = min(ul.concentration_scores(P, 1.0).sum(), ul.concentration_scores(P2, 1.0).sum()) / K
        bound = ul.outlier_mean_sensitivity(1.0, K, s, zeta)
        if not np.isfinite(bound):
            continue
        used += 1
        mv = coupled_moves(P, P2, 1.0, draws, rng)
        old = OLD_CONSTANT * 0.5 * math.log(1 / zeta) / K          # τ = r/2
        worst_new = max(worst_new, float(np.mean(mv > bound)))
        worst_old = max(worst_old, float(np.mean(mv > old)))
        ratio = max(ratio, float(mv.max() / bound))
    return {"pairs": used, "worst_new": worst_new, "worst_old": worst_old, "max_ratio": ratio}
