"""Outlier removal and its sensitivity for the user-level SCO paper (Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO"):
the concentration scores and keep probabilities of Algorithm 1 (line 20) and Algorithm 2 (line
11), the outlier-removed mean, and the sensitivity bound of Lemmas B.2/C.2 DERIVED for the removal
rule as implemented (:func:`outlier_mean_sensitivity`, errata UL-E13), with the failure
probabilities of the score test and the keep coins folded into δ (UL-E14).

Each privacy-relevant piece is a module-level function so that a deliberately broken variant
(empirical.privacy.mutants, registered in empirical/papers/userlevel/audit.py) can replace exactly that piece;
the algorithms import them by name and ``Patch.everywhere`` reaches those copies.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from algorithms.validation import check_int, check_nonnegative, check_positive

__all__ = ["FLIP_SLOPE", "alg1_score_floor", "alg2_score_floor", "concentration_scores",
           "flip_quantile", "keep_probabilities", "kept_deficit", "laplace_difference_tail",
           "outlier_mean_sensitivity", "outlier_removed_mean", "release_margin",
           "step_failure_probability", "user_mean_sensitivity"]

#: The flip probability of one keep decision when one neighbour is replaced: a score h moves by
#: at most 1, and the keep probability ramp (h − K/2)/(K/6) has slope 6/K.
FLIP_SLOPE = 6.0


def step_failure_probability(delta_fail: float, steps: int, epsilon: float) -> float:
    """Per-release failure probability ζ whose total, as the proof of Lemma C.2 adds it up
    (4Tζ(2e^{ε/2} + 1), the last line of that proof), equals ``delta_fail``.  ζ covers BOTH
    failure events of a release: the test's Laplace noise being large and the keep coins being
    unlucky (errata UL-E13/UL-E14); each gets ζ/2."""
    check_positive("delta_fail", delta_fail)
    steps = check_int("steps", steps)
    return delta_fail / (4.0 * steps * (2.0 * math.exp(epsilon / 2.0) + 1.0))


def laplace_difference_tail(x: float, b_query: float, b_threshold: float) -> float:
    """P(ν − ξ ≥ x) for x ≥ 0, ν ~ Lap(b_query), ξ ~ Lap(b_threshold) independent (ξ = 0 when
    ``b_threshold`` = 0): the probability that the test passes a dataset whose score is x below
    the threshold.  Closed form of the Laplace convolution."""
    b1, b2 = float(b_query), float(b_threshold)
    if b2 == 0.0:
        return 0.5 * math.exp(-x / b1)
    if abs(b1 - b2) <= 1e-9 * b1:
        return 0.5 * math.exp(-x / b1) * (1.0 + x / (2.0 * b1))
    return (b1 * b1 * math.exp(-x / b1) - b2 * b2 * math.exp(-x / b2)) / (2.0 * (b1 * b1 - b2 * b2))


@lru_cache(maxsize=4096)
def release_margin(zeta: float, b_query: float, b_threshold: float = 0.0) -> float:
    """Smallest margin M with P(ν − ξ ≥ M) ≤ ζ: a release happens only if the true score is
    ≥ threshold − M, except with probability ζ (bisection on the closed-form tail)."""
    lo, hi = 0.0, (b_query + b_threshold) * (math.log(1.0 / zeta) + 5.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if laplace_difference_tail(mid, b_query, b_threshold) <= zeta:
            hi = mid
        else:
            lo = mid
    return hi


@lru_cache(maxsize=4096)
def flip_quantile(K: int, zeta: float) -> int:
    """Smallest f with P(F > f) ≤ ζ, F ~ Bin(K − 1, 6/K): the number of keep decisions (other
    than the replaced point's) that the replacement flips under shared coins.  Each of the
    K − 1 other scores moves by ≤ 1, so each decision flips with probability ≤ 6/K,
    independently: Bin(K − 1, min(1, 6/K)) dominates F."""
    from scipy.stats import binom
    p = min(1.0, FLIP_SLOPE / K)
    f = max(0, int(binom.isf(zeta, K - 1, p)))
    while binom.sf(f, K - 1, p) > zeta:
        f += 1
    while f > 0 and binom.sf(f - 1, K - 1, p) <= zeta:
        f -= 1
    return f


@lru_cache(maxsize=4096)
def kept_deficit(K: int, zeta: float) -> float:
    """Smallest t with sup_μ P(X ≤ μ/3 − t) ≤ ζ over Poisson-binomial X of mean μ ≤ K (Chernoff
    with the Poisson moment generating function, which dominates every Poisson-binomial's).
    Used for the kept count |S| ≥ (2s − K) − μ_ramp/3 + X_ramp (see
    :func:`outlier_mean_sensitivity`)."""
    def worst(t: float) -> float:
        mu = np.geomspace(max(3.0 * t, 1e-12), max(float(K), 3.0 * t + 1.0), 3000)
        a = mu / 3.0 - t
        ok = a > 0
        rate = np.where(ok, mu - a - np.where(ok, a, 1.0) * np.log(mu / np.where(ok, a, 1.0)), mu)
        return float(np.exp(-rate.min()))
    lo, hi = 0.0, 3.0 * math.log(1.0 / zeta) + 3.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if worst(mid) <= zeta else (mid, hi)
    # the μ grid can miss the exact maximiser by ~1e-7 relative: round t up well beyond that
    return hi * (1.0 + 1e-4) + 1e-6


def outlier_mean_sensitivity(radius: float, K: int, s_min: float, zeta: float) -> float:
    """ℓ2 bound Δ on the coupled move ‖g − g′‖ of the outlier-removed mean of K points (scores
    h_j = #{j′: ‖P_j − P_j′‖ ≤ radius}, keep probability clip((h − K/2)/(K/6), 0, 1), coins
    shared), holding with probability ≥ 1 − ζ for EVERY pair of neighbouring point sets whose
    score s = Σh/K is ≥ ``s_min`` on both sides.  Returns inf when s_min leaves no guarantee.

    Derivation (errata UL-E13; replaces the paper's ≲ τ log(1/ζ)/K):
    (i) a kept point has h > K/2, so two kept points share a neighbour: the kept set of each
        side has diameter ≤ 2·radius;
    (ii) with A the points kept on both sides, g − g′ = (|S∖A|/|S|)(mean(S∖A) − ā) −
        (|S′∖A|/|S′|)(mean(S′∖A) − ā), so ‖g − g′‖ ≤ 2·radius·(F + 2)/min(|S|, |S′|), F the
        flipped decisions of the K − 1 common points (+2: the replaced point on each side);
    (iii) F ≤ :func:`flip_quantile` (K, ζ/2) except with probability ζ/2;
    (iv) h ≤ K/2 where p = 0, h = K/2 + pK/6 on the ramp, h ≤ K where p = 1, so Σh ≥ s_min·K
        forces #(p = 1) ≥ 2s_min − K − μ/3 (μ = the ramp's expected kept count) and
        |S| ≥ 2s_min − K − t with t = :func:`kept_deficit` (K, ζ/4), for each side.
    """
    check_positive("radius", radius)
    K = check_int("K", K)
    f = flip_quantile(K, zeta / 2.0)
    kept = 2.0 * s_min - K - kept_deficit(K, zeta / 4.0)
    if kept <= f + 2:
        return math.inf
    return 2.0 * radius * (f + 2) / kept


def alg2_score_floor(K: int, epsilon: float, zeta: float) -> float:
    """s_min of Algorithm 2's releases: AboveThreshold (threshold 4K/5 + Lap(8/ε), queries
    s + Lap(16/ε)) lets a step release only if s ≥ 4K/5 − M, M the ζ-margin of the noise
    difference; −2 for the neighbour's score (sensitivity ≤ 2)."""
    return 0.8 * K - release_margin(zeta, 16.0 / epsilon, 8.0 / epsilon) - 2.0


def alg1_score_floor(C: int, epsilon: float, zeta: float) -> float:
    """s_min of Algorithm 1's release: the Laplace score ŝ = s + Lap(20/ε) ≥ 4C/5 passes only
    if s ≥ 4C/5 − M, M the ζ-margin of Lap(20/ε); −2 for the neighbour's score.  Its score
    counts pairs within τ_i and its keep scores within 2τ_i, so Σh ≥ sC holds a fortiori."""
    return 0.8 * C - release_margin(zeta, 20.0 / epsilon) - 2.0


def user_mean_sensitivity(L: float, K: int) -> float:
    """Replace-one sensitivity 2L/K of a mean of K user gradients of norm ≤ L (item-level
    baseline, where a user is one item)."""
    return 2.0 * L / K


# ================================================================================================
# Outlier removal primitives (shared by Algorithms 1 and 2)
# ================================================================================================
def _pairwise_within(P: np.ndarray, radius: float) -> np.ndarray:
    """Boolean (K, K) matrix 1(‖P_j − P_j'‖ ≤ radius), via the Gram matrix (O(K²d) BLAS).

    The points are centred first: distances are translation invariant, and without centring
    ‖P‖² ≈ 1 swamps radii below ~1e-8 in rounding (Algorithm 1's late phases have τ_i ~ 1e-10).
    """
    P = P - P.mean(axis=0)
    sq = np.einsum("ij,ij->i", P, P)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (P @ P.T)
    return D2 <= radius * radius * (1.0 + 1e-12) + 1e-300


#: Relative slack of the all-within shortcut: far above the Gram route's rounding (~1e-15
#: relative to radius²), so the shortcut never answers where the Gram route could differ.
_ALL_WITHIN_SLACK = 1e-9


def _scores_within(P: np.ndarray, radius: float) -> np.ndarray:
    """h_j = Σ_{j'} 1(‖P_j − P_j'‖ ≤ radius), equal to ``_pairwise_within(P, radius).sum(1)``.

    Shortcut, O(Kd) instead of O(K²): if every centred point has norm ≤ radius/2 (with slack),
    every pair is within radius by the triangle inequality, so h_j = K for all j.  On honest
    data this is the usual case (user gradients spread ~1/√m, the radius is 2τ ∝ √(log(ndm)/m)),
    and the K×K matrix (K_1 in the thousands) was most of a run's time.  Otherwise the Gram
    route, unchanged (same counts bit for bit)."""
    K = P.shape[0]
    # P.mean(axis=0) is this sum ÷ K (numpy's mean divides its sum by the count): the same
    # floats without mean's Python-level overhead, which ran once per step of Algorithm 2
    Pc = P - np.add.reduce(P, axis=0) / K
    if 2.0 * math.sqrt(float(np.einsum("ij,ij->i", Pc, Pc).max(initial=0.0))) <= \
            radius * (1.0 - _ALL_WITHIN_SLACK):
        return np.full(K, K, dtype=np.intp)
    return _pairwise_within(P, radius).sum(axis=1)


def concentration_scores(P: np.ndarray, radius: float) -> np.ndarray:
    """h_j = Σ_{j'} 1(‖P_j − P_j'‖ ≤ radius), the diagonal j' = j included (so h_j ≥ 1)."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 2:
        raise ValueError(f"P must be a (K, d) array, got shape {P.shape}")
    check_nonnegative("radius", radius)
    return _scores_within(P, radius)


def keep_probabilities(h: np.ndarray, K: int) -> np.ndarray:
    """p = 0 if h < K/2, 1 if h ≥ 2K/3, (h − K/2)/(K/6) otherwise (Alg. 1 line 20, Alg. 2 line 11)."""
    K = check_int("K", K)
    h = np.asarray(h, dtype=float)
    return np.clip((h - K / 2.0) / (K / 6.0), 0.0, 1.0)


def outlier_removed_mean(P: np.ndarray, radius: float, uniforms: np.ndarray
                         ) -> tuple[np.ndarray | None, np.ndarray]:
    """Mean of the points kept with probability p_j (coin u_j < p_j): (mean or None, kept mask).

    ``uniforms`` are the coins, passed in so that neighbouring datasets can be coupled.
    """
    h = concentration_scores(P, radius)
    keep = np.asarray(uniforms) < keep_probabilities(h, P.shape[0])
    if not keep.any():
        return None, keep
    return P[keep].mean(axis=0), keep
