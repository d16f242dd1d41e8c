"""Algorithms of Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO"
(``../shared/papers/user_level_sco.txt``): Algorithm 1 (phased SGD with outlier *iterate* removal
and output perturbation), Algorithm 2 (user-level DP accelerated minibatch SGD with outlier
*gradient* removal), Algorithm 3 (accelerated phased ERM calling Algorithm 2), Algorithm 4
(AboveThreshold) and the randomized-smoothing wrapper of Appendix D.

Data model: ``UserData`` holds n users with m items each; algorithms see only its interface and
every per-item gradient is counted (a user's mean gradient costs m evaluations, however it is
computed: problems may use per-user sufficient statistics, as oracle-complexity results count
per-item gradients).

Privacy (user-level, replace-one: neighbours differ in one user's m items).  Each phase touches
only its own fresh users, so by parallel composition a run is as private as its most expensive
phase.  A phase releases

* a pure-DP test (Algorithm 1: one Laplace score, ε/10; Algorithm 2: AboveThreshold over the
  phase's steps, ε/2, Lemma A.9), charged by basic composition, and
* Gaussian releases whose ℓ2-sensitivity is a high-probability bound on the outlier-removed
  mean DERIVED for the removal rule as implemented (:func:`outlier_mean_sensitivity`; the
  paper's Lemmas B.2/C.2 state ≲ τ log(1/ζ)/K with a hidden constant that no value makes safe,
  errata UL-E13), whose failure events — unlucky keep coins and a score test whose Laplace
  noise beats its margin (UL-E14) — are charged to δ_fail = δ/2 as the proof of Lemma C.2 sums
  them, composed by dp-accounting's RDP accountant (Algorithm 2's minibatches are
  drawn WITHOUT replacement so that ``SampledWithoutReplacementDpEvent`` is exact, UL-E8)
  at δ/2.

Two modes.  ``faithful``: every constant as printed (100, 1000, 500, σ_i of Algorithms 1 and 2);
the accountant then reports what those σ_i actually buy.  ``rates``: constants are knobs that
keep every exponent (``c_*`` arguments) and the Gaussian noise multiplier is calibrated by
dp-accounting so that the guarantee equals the target ε exactly.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import dp_accounting as dpa
import numpy as np
from dp_accounting import rdp as dpa_rdp

from algorithms.accounting import REPLACE_ONE
from algorithms.primitives import project_ball
from algorithms.validation import (check_delta, check_int, check_interval, check_nonnegative,
                                   check_positive)

__all__ = ["UserData", "SmoothedUserData", "PhasePrivacy", "UserLevelPrivacy",
           "concentration_scores", "keep_probabilities", "outlier_removed_mean",
           "AboveThreshold", "calibrate_gaussian", "gaussian_epsilon",
           "Alg1Phase", "alg1_schedule", "phased_sgd_outlier_removal", "sgd_average_iterates",
           "Alg3Phase", "alg3_schedule", "accelerated_phased_erm", "item_level_baseline",
           "uniform_ball", "RunResult", "MODES", "minibatch_gradients"]

MODES = ("faithful", "rates")
#: observe(kind, released, sigma, info): called with each Gaussian release (audits).
Observer = Callable[[str, np.ndarray, float, dict], Any]
#: The flip probability of one keep decision when one neighbour is replaced: a score h moves by
#: at most 1, and the keep probability ramp (h − K/2)/(K/6) has slope 6/K.
FLIP_SLOPE = 6.0
#: Integer Rényi orders: dp-accounting's WOR-sampled Gaussian is ~6× faster at integer orders,
#: and fewer orders can only make the reported ε larger (never an under-report).
RDP_ORDERS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 128, 256)


# Each privacy-relevant piece is a module-level function so that a deliberately broken variant
# (empirical.mutants) can replace exactly that piece without editing this file.
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


def phase_steps(T_f: float) -> int:
    """T_i = ⌈T_f⌉ ≥ 1, the step count of a phase of Algorithm 3."""
    return max(1, int(math.ceil(T_f)))


def gaussian_noise(rng: np.random.Generator, sigma: float, d: int) -> np.ndarray:
    """The Gaussian release noise N(0, σ²I_d) of Algorithms 1 and 2."""
    return sigma * rng.standard_normal(d)


# ================================================================================================
# Data interface
# ================================================================================================
class UserData(ABC):
    """n users × m items of a convex L-Lipschitz loss on the ball 𝒳 = B(center, R/2).

    ``R`` is the paper's DIAMETER (Assumption 1.1).  ``grad_evals`` counts per-item gradients.
    Subclasses implement ``_user_mean_gradients(x, users)`` (shape (K, d): ∇F̂(x, Z_u) =
    (1/m)Σ_j ∇f(x, z_{u,j})) and ``_item_gradients(X, users, items)`` (row k: ∇f(X_k, z_{u_k, j_k})).
    """

    def __init__(self, n: int, m: int, d: int, L: float, R: float, beta: float):
        self.n = check_int("n", n)
        self.m = check_int("m", m)
        self.d = check_int("d", d)
        self.L = check_positive("L", L)
        self.R = check_positive("R", R)
        self.beta = check_nonnegative("beta", beta)
        self.center = np.zeros(self.d)
        self.grad_evals = 0

    @property
    def radius(self) -> float:
        return 0.5 * self.R

    def user_mean_gradients(self, x: np.ndarray, users: np.ndarray) -> np.ndarray:
        users = np.asarray(users, dtype=np.intp)
        if users.ndim != 1 or (users.size and (users.min() < 0 or users.max() >= self.n)):
            raise ValueError(f"users must be a 1-D array of user indices in [0, {self.n})")
        self.grad_evals += users.size * self.m
        return self._user_mean_gradients(np.asarray(x, dtype=float), users)

    def item_gradients(self, X: np.ndarray, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users = np.asarray(users, dtype=np.intp)
        items = np.asarray(items, dtype=np.intp)
        if users.shape != items.shape or users.ndim != 1:
            raise ValueError("users and items must be 1-D arrays of equal length")
        if users.size and (users.min() < 0 or users.max() >= self.n or items.min() < 0
                           or items.max() >= self.m):
            raise ValueError(f"users must lie in [0, {self.n}) and items in [0, {self.m})")
        self.grad_evals += users.size
        return self._item_gradients(np.asarray(X, dtype=float), users, items)

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_ball(x, self.center, self.radius)

    @abstractmethod
    def _user_mean_gradients(self, x: np.ndarray, users: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _item_gradients(self, X: np.ndarray, users: np.ndarray, items: np.ndarray) -> np.ndarray: ...


def uniform_ball(rng: np.random.Generator, size: int, d: int, r: float) -> np.ndarray:
    """``size`` points uniform on the ℓ2 ball B(0, r) in R^d: r·U^{1/d}·g/‖g‖, g ~ N(0, I)."""
    g = rng.standard_normal((size, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g * (r * rng.random(size) ** (1.0 / d))[:, None]


class SmoothedUserData(UserData):
    """Randomized smoothing (Appendix D): f_r(x, z) = E_{y ~ Unif B(0, r)} f(x + y, z).

    Each per-item gradient is ∇f(x + y, z) with a FRESH y (one base gradient per evaluation, so
    the count is unchanged), an unbiased estimate of ∇f_r(x, z) (Lemma D.1).  f_r is convex,
    L-Lipschitz and (L√d/r)-smooth; |f_r − f| ≤ Lr.  The base problem must be convex and
    L-Lipschitz on 𝒳 + B(0, r), which holds for losses Lipschitz on all of R^d.
    """

    def __init__(self, base: UserData, r: float, rng: np.random.Generator):
        self.base = base
        self.r = check_positive("r", r)
        self.rng = rng
        super().__init__(base.n, base.m, base.d, base.L, base.R, base.L * math.sqrt(base.d) / self.r)
        self.center = base.center

    def _user_mean_gradients(self, x, users):
        K, m, d = users.size, self.m, self.d
        Y = uniform_ball(self.rng, K * m, d, self.r)
        uu = np.repeat(users, m)
        jj = np.tile(np.arange(m), K)
        g = self.base._item_gradients(x[None, :] + Y, uu, jj)
        return g.reshape(K, m, d).mean(axis=1)

    def _item_gradients(self, X, users, items):
        Y = uniform_ball(self.rng, users.size, self.d, self.r)
        return self.base._item_gradients(X + Y, users, items)


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
    Pc = P - P.mean(axis=0)
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


class AboveThreshold:
    """Algorithm 4 (AboveThreshold [DR14]) for queries of sensitivity ``sensitivity``.

    Δ̂ = Δ + Lap(2·sens/ε) once; for each query q_t: ν_t ~ Lap(4·sens/ε) and answer ⊤ (halt)
    iff q_t + ν_t ≥ Δ̂.  (ε, 0)-DP however many queries are asked (Lemma A.9).
    ``below=True`` is Algorithm 2's upside-down use: ⊤ iff q_t + ν_t < Δ̂ (the negated queries,
    same privacy).  Algorithm 2's scales 8/ε and 16/ε are sensitivity 2 at budget ε/2.
    """

    def __init__(self, threshold: float, epsilon: float, sensitivity: float,
                 rng: np.random.Generator, *, below: bool = False):
        self.epsilon = check_positive("epsilon", epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.rng = rng
        self.below = below
        self.noisy_threshold = float(threshold) + rng.laplace(0.0, 2.0 * self.sensitivity / self.epsilon)
        self.queries = 0

    def fires(self, query: float) -> bool:
        self.queries += 1
        noisy = float(query) + self.rng.laplace(0.0, 4.0 * self.sensitivity / self.epsilon)
        return noisy < self.noisy_threshold if self.below else noisy >= self.noisy_threshold


# ================================================================================================
# Accounting (dp-accounting): calibration and reported ε
# ================================================================================================
def _gaussian_event(z: float, count: int, population: int | None, sample: int | None) -> dpa.DpEvent:
    ev = dpa.GaussianDpEvent(z)
    if population is not None and sample is not None and 2 * sample <= population:
        ev = dpa.SampledWithoutReplacementDpEvent(population, sample, ev)
    return ev if count == 1 else dpa.SelfComposedDpEvent(ev, count)


@lru_cache(maxsize=4096)
def gaussian_epsilon(z: float, count: int, delta: float, population: int | None = None,
                     sample: int | None = None) -> float:
    """ε at ``delta`` (dp-accounting RDP, replace-one) of ``count`` Gaussian releases with noise
    multiplier ``z``, each on a size-``sample`` subsample (without replacement) of ``population``."""
    if count == 0:
        return 0.0
    acc = dpa_rdp.RdpAccountant(orders=RDP_ORDERS, neighboring_relation=REPLACE_ONE)
    acc.compose(_gaussian_event(z, count, None, None))
    eps = float(acc.get_epsilon(delta))
    if population is not None and sample is not None and 2 * sample <= population:
        # The subsampled release is also the plain Gaussian mechanism on the subsample (the
        # changed user is in it or not; either way the sum moves by ≤ Δ), so the smaller of
        # the two valid bounds holds.  dp-accounting's WOR bound is looser than no
        # amplification when sample/population is near 1, and has a floor as z grows.  Above
        # a half-sample the WOR bound is not even tried (using one valid bound is conservative,
        # and each WOR evaluation costs ~50 ms).
        acc = dpa_rdp.RdpAccountant(orders=RDP_ORDERS, neighboring_relation=REPLACE_ONE)
        acc.compose(_gaussian_event(z, count, population, sample))
        eps = min(eps, float(acc.get_epsilon(delta)))
    return eps


@lru_cache(maxsize=1024)
def calibrate_gaussian(target_epsilon: float, count: int, delta: float,
                       population: int | None = None, sample: int | None = None,
                       rtol: float = 1e-5) -> float:
    """Noise multiplier z with ``gaussian_epsilon(z, …)`` = ``target_epsilon`` to relative
    ``rtol``, never above it (the returned z is the bracket end on the private side).

    Illinois (regula falsi) on log ε − log target against log z: ε is decreasing in z, so 6–10
    accountant calls suffice (each WOR-sampled call costs ~50 ms).  dp-accounting's WOR-sampled
    RDP is numerically noisy at ~1e-4 relative (not monotone in z at that scale, UL-E8), so the
    search also stops when the bracket is narrower than 1e-7 in log z; the returned z always
    has ε ≤ target as the (cached, deterministic) accountant computes it."""
    check_positive("target_epsilon", target_epsilon)
    check_int("count", count)
    f = lambda lz: math.log(gaussian_epsilon(math.exp(lz), count, delta, population,  # noqa: E731
                                             sample) / target_epsilon)
    # first guess: the Gaussian mechanism's z ≈ √(2 count log(1.25/δ))·(sample/population)/ε
    frac = 1.0 if population is None or sample is None else sample / population
    lz = math.log(max(1e-3, math.sqrt(2 * count * math.log(1.25 / delta)) * max(frac, 1e-3)
                      / target_epsilon))
    # bracket: lo has ε > target (f > 0), hi has ε ≤ target (f ≤ 0)
    f0 = f(lz)
    if f0 > 0:
        lo, flo, step = lz, f0, 0.5
        hi, fhi = lo + step, f(lo + step)
        while fhi > 0:
            lo, flo, step = hi, fhi, 2 * step
            hi = lo + step
            if hi > math.log(1e8):
                raise ValueError("calibrate_gaussian: no noise multiplier below 1e8 reaches the target")
            fhi = f(hi)
    else:
        hi, fhi, step = lz, f0, 0.5
        lo, flo = hi - step, f(hi - step)
        while flo <= 0:
            hi, fhi, step = lo, flo, 2 * step
            lo = hi - step
            flo = f(lo)
    last = 0
    for _ in range(80):
        if -fhi < rtol or hi - lo < 1e-7:
            break
        c = hi - fhi * (hi - lo) / (fhi - flo)
        fc = f(c)
        if fc > 0:
            lo, flo = c, fc
            if last == 1:          # Illinois: halve the stale end's weight
                fhi *= 0.5
            last = 1
        else:
            hi, fhi = c, fc
            if last == -1:
                flo *= 0.5
            last = -1
    return math.exp(hi)


@dataclass(frozen=True)
class PhasePrivacy:
    """One phase's releases: a pure-DP test (ε_pure) and Gaussian releases (noise multiplier z,
    ``count`` planned, ``done`` made, subsample ``sample`` of ``population``), accounted at
    δ_gauss; ``delta_fail`` bounds the probability that the sensitivity bound fails."""

    eps_pure: float
    z: float
    count: int
    done: int
    delta_gauss: float
    delta_fail: float
    population: int | None = None
    sample: int | None = None
    started: bool = True

    @property
    def guarantee(self) -> float:
        return self.eps_pure + gaussian_epsilon(self.z, self.count, self.delta_gauss,
                                                self.population, self.sample)

    @property
    def spent(self) -> float:
        if not self.started:
            return 0.0
        return self.eps_pure + gaussian_epsilon(self.z, self.done, self.delta_gauss,
                                                self.population, self.sample)


@dataclass(frozen=True)
class UserLevelPrivacy:
    """A run's user-level (ε, δ) privacy: phases use disjoint users (parallel composition), so
    ``guarantee`` = max over planned phases and ``spent`` = max over the releases actually made
    (ex post: a halt stops the releases).  δ = δ_gauss + δ_fail per phase."""

    target_epsilon: float
    delta: float
    phases: tuple[PhasePrivacy, ...]

    @property
    def guarantee_epsilon(self) -> float:
        return max((p.guarantee for p in self.phases), default=0.0)

    @property
    def spent_epsilon(self) -> float:
        return max((p.spent for p in self.phases), default=0.0)

    @property
    def guarantee_delta(self) -> float:
        return max((p.delta_gauss + p.delta_fail for p in self.phases), default=0.0)


@dataclass
class RunResult:
    """Output x, gradient evaluations, privacy, per-phase parameters actually used, diagnostics."""

    x: np.ndarray
    grad_evals: int
    privacy: UserLevelPrivacy | None
    phases: list = field(default_factory=list)
    halted: bool = False
    info: dict = field(default_factory=dict)


def _check_common(epsilon: float, delta: float, mode: str) -> tuple[float, float]:
    eps = check_interval("epsilon", epsilon, 0.0, 10.0, closed_hi=True)
    if eps <= 0:
        raise ValueError(f"epsilon must be in (0, 10], got {epsilon!r}")
    dl = check_delta(delta)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return eps, dl


# ================================================================================================
# Algorithm 1: phased SGD with outlier iterate removal and output perturbation
# ================================================================================================
@dataclass(frozen=True)
class Alg1Phase:
    """Phase i of Algorithm 1: n_i users in C groups of N_i, T_i = N_i·m SGD steps per group at
    step size η_i = η/2^{pi}, concentration radius τ_i, output noise σ_i."""

    i: int
    n_i: int
    N_i: int
    T_i: int
    eta_i: float
    tau_i: float
    sigma_i: float
    z: float
    sensitivity: float


def alg1_schedule(n: int, m: int, d: int, epsilon: float, delta: float, L: float, R: float, *,
                  mode: str = "rates", q: float = 0.25, c_C: float = 15.0, c_eta: float = 1.0,
                  c_tau: float = 1.0, max_phases: int | None = None,
                  calibrate: bool = True) -> tuple[int, list[Alg1Phase]]:
    """Algorithm 1's parameters.  Returns (C, phases).

    C = c_C·log(20nme^ε/δ)/ε (faithful c_C = 100); n_i = ⌊(1 − 2^{−q})n/2^{iq}⌋; N_i = ⌊n_i/C⌋;
    T_i = N_i m; p = J + 3/2 with J = max(1, log m/log n) (m ≤ n^J); η = c_η·R/(L√(dmnε))
    (Theorem B.1; faithful c_η = 1); τ_i = c_τ·η_iL√T_i·log(ndm) (faithful c_τ = 1000).
    σ_i: faithful 100τ_i log²(n/δ)/(εC); rates z·Δ_i with Δ_i the corrected Lemma B.2 bound
    (:func:`outlier_mean_sensitivity` at radius 2τ_i and the score floor the Laplace test
    certifies, :func:`alg1_score_floor`; ζ from :func:`step_failure_probability`) and z
    calibrated so that ε/10 (Laplace score) + ε_RDP(Gaussian, δ/2) = ε.  A phase whose C
    certifies no finite Δ_i is dropped (UL-E14).
    Phases run for i = 1..⌊log2 n⌋ while N_i ≥ 1 (phases with no full group are dropped:
    UL-E9), at most ``max_phases`` of them (rates mode: each phase risks a spurious halt with
    probability ½e^{−Cε/100}, and η_i = η/2^{pi} makes late phases move x by ~nothing).
    """
    n, m, d = check_int("n", n), check_int("m", m), check_int("d", d)
    eps, dl = _check_common(epsilon, delta, mode)
    check_positive("L", L), check_positive("R", R)
    q = check_interval("q", q, 0.0, 1.0)
    if q <= 0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    if mode == "faithful":
        c_C, c_eta, c_tau = 100.0, 1.0, 1000.0
    C = max(1, int(math.ceil(c_C * math.log(20 * n * m * math.exp(eps) / dl) / eps)))
    J = max(1.0, math.log(m) / math.log(n)) if n > 1 else 1.0
    p = J + 1.5
    eta = c_eta * R / (L * math.sqrt(d * m * n * eps))
    zeta = step_failure_probability(dl / 2.0, 1, eps)     # one release per phase
    s_min = alg1_score_floor(C, eps, zeta / 2.0)
    phases = []
    for i in range(1, int(math.floor(math.log2(n))) + 1):
        n_i = int(math.floor((1 - 2**-q) * n / 2 ** (i * q)))
        N_i = n_i // C
        if N_i < 1 or (max_phases is not None and len(phases) >= max_phases):
            break
        T_i = N_i * m
        eta_i = eta / 2 ** (p * i)
        tau_i = c_tau * eta_i * L * math.sqrt(T_i) * math.log(n * d * m)
        sens = outlier_mean_sensitivity(2.0 * tau_i, C, s_min, zeta / 2.0)
        if math.isinf(sens) and (calibrate or mode == "faithful"):
            # C groups are too few for the score test to certify anything at this δ
            # (UL-E14): the phase cannot run privately (UL-E9)
            break
        if mode == "faithful":
            sigma = 100.0 * tau_i * math.log(n / dl) ** 2 / (eps * C)
            z = sigma / sens
        elif not calibrate:
            z = sigma = math.nan
        else:
            z = calibrate_gaussian(0.9 * eps, 1, dl / 2.0)
            sigma = z * sens
        phases.append(Alg1Phase(i, n_i, N_i, T_i, eta_i, tau_i, sigma, z, sens))
    return C, phases


def sgd_average_iterates(data: UserData, groups: np.ndarray, eta: float, x0: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
    """SGD(D, η, T, x0) of Algorithm 1 / Lemma 2.3 for C groups at once (one chain per row of
    ``groups``, shape (C, N) user indices): one pass over the group's N·m items in uniformly
    random order, x_{t+1} = Π_𝒳(x_t − η∇f(x_t, z_t)), output the average (1/T)Σ_{t=1}^{T} x_t of
    the iterates after each step (reading of the notes' UNSURE: x_1..x_T).  Shape (C, d)."""
    groups = np.asarray(groups, dtype=np.intp)
    Cg, N = groups.shape
    m = data.m
    T = N * m
    order = np.argsort(rng.random((Cg, T)), axis=1)          # a random permutation per chain
    users = np.take_along_axis(np.repeat(groups, m, axis=1), order, axis=1)
    items = np.tile(np.arange(m), (Cg, N))
    items = np.take_along_axis(items, order, axis=1)
    X = np.broadcast_to(np.asarray(x0, dtype=float), (Cg, data.d)).copy()
    S = np.zeros_like(X)
    for t in range(T):                                       # sequential by nature; vectorized over chains
        X = data.project(X - eta * data.item_gradients(X, users[:, t], items[:, t]))
        S += X
    return S / T


def phased_sgd_outlier_removal(data: UserData, epsilon: float, delta: float,
                               rng: np.random.Generator, *, mode: str = "rates", q: float = 0.25,
                               c_C: float = 15.0, c_eta: float = 1.0, c_tau: float = 1.0,
                               max_phases: int | None = None, remove_outliers: bool = True,
                               noise: bool = True, observe: Observer | None = None,
                               noise_rng: np.random.Generator | None = None) -> RunResult:
    """Algorithm 1 (linear time).  Users are taken in index order: phase i uses the next n_i
    users, split into C consecutive groups of N_i.  Halting outputs 0 (the centre of 𝒳).  The
    output x_l = x̃_l + ζ_l is not projected (as in the paper).

    ``remove_outliers=False`` is the ablation that averages all C group iterates (and skips the
    score test); ``noise=False`` drops the Gaussian (non-private; for coupled comparisons).
    ``observe("output", x_i, σ_i, info)`` is called with each phase's released x_i (for privacy
    audits, which see exactly what the algorithm releases).
    ``noise_rng``: draw the output noise from this generator instead of ``rng``, so that a
    private run and a ``noise=False`` run given equal ``rng`` copies make the same permutation,
    score-noise and keep-coin draws and differ only by the output noise (coupled privacy excess).
    """
    C, phases = alg1_schedule(data.n, data.m, data.d, epsilon, delta, data.L, data.R, mode=mode,
                              q=q, c_C=c_C, c_eta=c_eta, c_tau=c_tau, max_phases=max_phases)
    if not phases:
        raise ValueError(f"n = {data.n} users give no phase with a full group (C = {C}): "
                         "increase n or lower c_C")
    eps, dl = float(epsilon), float(delta)
    x = data.center.copy()
    start = 0
    records, halted = [], False
    priv = []
    g0 = data.grad_evals
    kept_counts = []
    for ph in phases:
        groups = np.arange(start, start + C * ph.N_i).reshape(C, ph.N_i)
        start += ph.n_i                                  # leftover n_i − C·N_i users stay unused
        Xt = sgd_average_iterates(data, groups, ph.eta_i, x, rng)
        s = _scores_within(Xt, ph.tau_i).sum() / C
        s_hat = s + rng.laplace(0.0, 20.0 / eps)
        priv.append(PhasePrivacy(eps / 10.0, ph.z, 1, 0, dl / 2, dl / 2))
        if remove_outliers and s_hat < 4.0 * C / 5.0:
            halted = True
            records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=0))
            break
        if remove_outliers:
            h = _scores_within(Xt, 2.0 * ph.tau_i)
            keep = rng.random(C) < keep_probabilities(h, C)
            if not keep.any():        # |S_i| = 0 has probability ≈ 0 after the test; output the centre
                halted = True
                records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=0))
                break
            xt = Xt[keep].mean(axis=0)
        else:
            keep = np.ones(C, bool)
            xt = Xt.mean(axis=0)
        kept_counts.append(int(keep.sum()))
        x = xt + (gaussian_noise(rng if noise_rng is None else noise_rng, ph.sigma_i, data.d)
                  if noise else 0.0)
        if observe is not None:
            observe("output", x, ph.sigma_i, dict(phase=ph.i, mean=xt, kept=keep))
        priv[-1] = PhasePrivacy(eps / 10.0, ph.z, 1, 1, dl / 2, dl / 2)
        records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=int(keep.sum())))
    if halted:
        x = np.zeros(data.d)
    # planned-but-not-run phases still count in the guarantee (data-independent schedule)
    planned = [PhasePrivacy(eps / 10.0, ph.z, 1, 0, dl / 2, dl / 2, started=False)
               for ph in phases[len(priv):]]
    privacy = UserLevelPrivacy(eps, dl, tuple(priv + planned)) if noise and remove_outliers else None
    return RunResult(x, data.grad_evals - g0, privacy, records, halted,
                     dict(C=C, mode=mode, q=q, kept=kept_counts))


# ================================================================================================
# Algorithms 2 and 3: accelerated phased ERM with outlier gradient removal
# ================================================================================================
@dataclass(frozen=True)
class Alg3Phase:
    """Phase i of Algorithm 3: n_i users, regularisation λ_i = λ2^{pi}, T_i AC-SA steps on
    minibatches of K_i users, noise σ_i = z·Δ_i with Δ_i the gradient sensitivity."""

    i: int
    n_i: int
    lambda_i: float
    T_i: int
    K_i: int
    sigma_i: float
    z: float
    sensitivity: float


def alg3_schedule(n: int, m: int, d: int, epsilon: float, delta: float, L: float, R: float,
                  beta: float, *, mode: str = "rates", q: float = 0.5, lam: float | None = None,
                  p: float | None = None, c_T: float = 1.0, c_K1: float = 60.0, c_K2: float = 1.0,
                  c_tau: float = 1.0, nonsmooth_T: bool = False, removal: bool = True,
                  calibrate: bool = True) -> tuple[float, list[Alg3Phase]]:
    """Algorithm 3's parameters.  Returns (τ, phases).

    λ = (L/R)(1/√(nm) + √d/(εn√m)) (Theorem C.3) unless given; p = 3q + 2.5 + log_n √m (its least
    admissible value); n_i = ⌊(1 − 2^{−q})n/2^{iq}⌋; λ_i = λ2^{pi}.
    faithful: T_i = ⌈(1 + √(β/λ_i))·log(ndm)⌉, K_i = ⌈500 log(n_i²m²e^ε/δ)(1/ε + n_iε/√(T_i log(1/δ)))⌉,
    τ = L log(ndm)/√m, σ_i = 1000τ√T_i log(nde^ε/δ)/(εn_i).
    rates: T_i = ⌈c_T(1 + √(β/λ_i))⌉, K_i = ⌈c_K1 log(1/δ)/ε + c_K2 n_iε/√T_i⌉,
    τ = c_τ L√(log(ndm)/m), σ_i = z·Δ_i with z calibrated by dp-accounting (below).
    ``nonsmooth_T``: Theorem D.3's T_i = 1 + n_i^{3/4}m^{1/2}ε^{1/2}·(log(ndm) if faithful) and
    K_i = n_iε/√T_i + log(nmde^ε/δ)/ε (rates: c_K1 on the second term).
    Both modes cap K_i at n_i and stop at the first phase with n_i < c_K1·log(1/δ)/ε (rates) or
    n_i < 1 (UL-E9): AboveThreshold's margin K_i/5 must beat its Laplace noise 16/ε.

    Gradient sensitivity: the corrected Lemma C.2 bound (UL-E13) at radius 2τ and the score
    floor AboveThreshold certifies (:func:`alg2_score_floor`), ζ per step from
    :func:`step_failure_probability` (UL-E14); a phase with an infinite bound is dropped.  ``removal=False`` (item-level baseline): Δ_i = 2L/K_i (user mean gradients
    have norm ≤ L, replace-one), no AboveThreshold.
    Privacy per phase: ε/2 (AboveThreshold) + ε_RDP(T_i WOR-sampled Gaussians, δ/2) ≤ ε, the
    second calibrated to ε/2 in rates mode (to ε for the baseline).  ``calibrate=False`` skips
    the accountant (z = σ = nan) for runs that add no noise.
    """
    n, m, d = check_int("n", n), check_int("m", m), check_int("d", d)
    eps, dl = _check_common(epsilon, delta, mode)
    check_positive("L", L), check_positive("R", R), check_nonnegative("beta", beta)
    q = check_interval("q", q, 0.0, 1.0)
    if q <= 0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    lam = (L / R) * (1 / math.sqrt(n * m) + math.sqrt(d) / (eps * n * math.sqrt(m))) if lam is None \
        else check_positive("lam", lam)
    p = 3 * q + 2.5 + math.log(math.sqrt(m)) / math.log(n) if p is None else check_positive("p", p)
    logndm = math.log(n * d * m)
    faithful = mode == "faithful"
    tau = (L * logndm / math.sqrt(m)) if faithful else c_tau * L * math.sqrt(logndm / m)
    k_min = 1 if faithful else max(1, int(math.ceil(c_K1 * math.log(1 / dl) / eps)))
    if not removal:
        k_min = 1
    phases = []
    for i in range(1, int(math.floor(math.log2(n))) + 1):
        n_i = int(math.floor((1 - 2**-q) * n / 2 ** (i * q)))
        if n_i < max(k_min, 2):
            break
        lam_i = lam * 2 ** (p * i)
        if nonsmooth_T:
            T_f = 1 + n_i**0.75 * math.sqrt(m * eps) * (logndm if faithful else c_T)
        else:
            T_f = (1 + math.sqrt(beta / lam_i)) * (logndm if faithful else c_T)
        T_i = phase_steps(T_f)
        if faithful and not nonsmooth_T:
            K_f = 500 * math.log(n_i**2 * m**2 * math.exp(eps) / dl) * (
                1 / eps + n_i * eps / math.sqrt(T_i * math.log(1 / dl)))
        elif faithful:
            K_f = n_i * eps / math.sqrt(T_i) + math.log(n * m * d * math.exp(eps) / dl) / eps
        elif nonsmooth_T:
            K_f = c_K2 * n_i * eps / math.sqrt(T_i) + c_K1 * math.log(1 / dl) / eps
        else:
            K_f = c_K1 * math.log(1 / dl) / eps + c_K2 * n_i * eps / math.sqrt(T_i)
        K_i = int(min(n_i, math.ceil(K_f)))
        zeta = step_failure_probability(dl / 2.0, T_i, eps)
        if removal:
            sens = outlier_mean_sensitivity(2.0 * tau, K_i, alg2_score_floor(K_i, eps, zeta / 2.0),
                                            zeta / 2.0)
            if math.isinf(sens) and calibrate:
                # AboveThreshold's noise is too large against K_i/5 for the test to certify
                # any concentration at this δ (UL-E14): the phase cannot run privately (UL-E9)
                break
        if not calibrate:
            sens = sens if removal else user_mean_sensitivity(L, K_i)
            z = sigma = math.nan
        elif removal:
            if faithful:
                sigma = 1000 * tau * math.sqrt(T_i) * math.log(n * d * math.exp(eps) / dl) / (eps * n_i)
                z = sigma / sens
            else:
                z = calibrate_gaussian(eps / 2.0, T_i, dl / 2.0, n_i, K_i)
                sigma = z * sens
        else:
            sens = user_mean_sensitivity(L, K_i)
            z = calibrate_gaussian(eps, T_i, dl, n_i, K_i)
            sigma = z * sens
        phases.append(Alg3Phase(i, n_i, lam_i, T_i, K_i, sigma, z, sens))
    return tau, phases


def _acsa_constants(t: int, mu: float, smooth: float) -> tuple[float, float]:
    """AC-SA [GL12] step sizes for a μ-strongly convex, (β+μ)-smooth objective: α_t = 2/(t+1),
    γ_t = 4·smooth/(t(t+1))."""
    return 2.0 / (t + 1), 4.0 * smooth / (t * (t + 1))


def accelerated_phased_erm(data: UserData, epsilon: float, delta: float, rng: np.random.Generator,
                           *, mode: str = "rates", q: float = 0.5, lam: float | None = None,
                           c_T: float = 1.0, c_K1: float = 60.0, c_K2: float = 1.0,
                           c_tau: float = 1.0, nonsmooth_T: bool = False, removal: bool = True,
                           noise: bool = True, halt: bool = True,
                           noise_rng: np.random.Generator | None = None,
                           schedule_m: int | None = None,
                           observe: Observer | None = None) -> RunResult:
    """Algorithm 3 (phased regularised ERM), each phase solved by Algorithm 2 (AC-SA on
    F̂_i(x) = (1/n_i)Σ_{Z∈D_i}F̂(x, Z) + (λ_i/2)‖x − x_{i−1}‖² with outlier-removed, noisy user
    minibatch gradients).  Phase i uses the next n_i users (disjoint phases).

    Algorithm 2 per step t: draw K_i users (without replacement, UL-E8); q_t(Z) = ∇F̂(x^{md}, Z)
    (the AC-SA query point; UL-E10); s = (1/K)Σ_{Z,Z'}1(‖q(Z) − q(Z')‖ ≤ 2τ); AboveThreshold
    (threshold 4K/5 + Lap(8/ε) once per phase, queries s + Lap(16/ε)) halts the run (output 0) at
    the first ŝ < Δ̂; otherwise keep Z w.p. p(h(Z)), g = mean of kept q's, ĝ = g + N(0, σ_i²I),
    one AC-SA step with ĝ + λ_i(x^{md} − x_{i−1}).  Output of a phase: the AC-SA aggregate x^{ag}.

    ``removal=False`` is the item-level baseline (the user is one item of gradient norm ≤ L):
    plain mean of the K_i user gradients, noise for sensitivity 2L/K_i, no test.  ``noise=False``
    drops the Gaussian (non-private); ``halt=False`` records but ignores AboveThreshold.
    ``schedule_m`` computes the schedule (λ, p, T_i, K_i, τ) as if users had that many items
    (the baseline uses 1: a user is one item); gradients still cost data.m each.
    ``noise_rng`` draws the Gaussian noise (default ``rng``): with a separate stream, a run with
    ``noise=False`` from a copy of ``rng`` is coupled to the private run (same minibatches,
    Laplace draws and coins), which isolates the privacy part of the error.
    ``observe("gradient", ĝ, σ_i, info)`` is called with every released noisy gradient (privacy
    audits score the step-by-step releases, which the privacy proof covers).
    """
    noise_rng = rng if noise_rng is None else noise_rng
    sm = data.m if schedule_m is None else check_int("schedule_m", schedule_m)
    tau, phases = alg3_schedule(data.n, sm, data.d, epsilon, delta, data.L, data.R, data.beta,
                                mode=mode, q=q, lam=lam, c_T=c_T, c_K1=c_K1, c_K2=c_K2,
                                c_tau=c_tau, nonsmooth_T=nonsmooth_T, removal=removal,
                                calibrate=noise)
    if not phases:
        raise ValueError(f"n = {data.n} users give no phase that can run privately (n_i ≥ the "
                         "minibatch floor and a finite Lemma C.2 sensitivity, UL-E13/UL-E14): "
                         "increase n or epsilon")
    eps, dl = float(epsilon), float(delta)
    g0 = data.grad_evals
    x_prev = data.center.copy()
    start = 0
    priv, records = [], []
    halted = False
    removed_total = 0
    at_fired = 0
    for ph in phases:
        users = np.arange(start, start + ph.n_i)
        start += ph.n_i
        at = AboveThreshold(4.0 * ph.K_i / 5.0, eps / 2.0, 2.0, rng, below=True) if removal else None
        x = x_prev.copy()
        x_ag = x_prev.copy()
        mu_i, smooth = ph.lambda_i, data.beta + ph.lambda_i
        done = 0
        for t in range(1, ph.T_i + 1):
            a, g_t = _acsa_constants(t, mu_i, smooth)
            x_md = ((1 - a) * (mu_i + g_t) * x_ag + a * ((1 - a) * mu_i + g_t) * x) / (
                g_t + (1 - a * a) * mu_i)
            batch = users[rng.choice(ph.n_i, size=ph.K_i, replace=False)]
            Q = data.user_mean_gradients(x_md, batch)
            if removal:
                h = _scores_within(Q, 2.0 * tau)
                s = h.sum() / ph.K_i
                if at.fires(s):
                    at_fired += 1
                    if halt:
                        halted = True
                        break
                keep = rng.random(ph.K_i) < keep_probabilities(h, ph.K_i)
                removed_total += int(ph.K_i - keep.sum())
                g = Q[keep].mean(axis=0) if keep.any() else np.zeros(data.d)
            else:
                g = Q.mean(axis=0)
            if noise:
                g = g + gaussian_noise(noise_rng, ph.sigma_i, data.d)
            if observe is not None:
                observe("gradient", g, ph.sigma_i, dict(phase=ph.i, t=t, batch=batch, x=x_md))
            done += 1
            G = g + ph.lambda_i * (x_md - x_prev)
            x = data.project((a * mu_i * x_md + ((1 - a) * mu_i + g_t) * x - a * G) / (mu_i + g_t))
            x_ag = a * x + (1 - a) * x_ag
        priv.append(PhasePrivacy(eps / 2.0 if removal else 0.0, ph.z, ph.T_i, done,
                                 dl / 2.0 if removal else dl, dl / 2.0 if removal else 0.0,
                                 ph.n_i, ph.K_i))
        records.append(dict(ph.__dict__, steps=done))
        if halted:
            break
        x_prev = x_ag
    planned = [PhasePrivacy(eps / 2.0 if removal else 0.0, ph.z, ph.T_i, 0,
                            dl / 2.0 if removal else dl, dl / 2.0 if removal else 0.0,
                            ph.n_i, ph.K_i, started=False) for ph in phases[len(priv):]]
    out = np.zeros(data.d) if halted else x_prev
    privacy = UserLevelPrivacy(eps, dl, tuple(priv + planned)) if (noise and halt) else None
    return RunResult(out, data.grad_evals - g0, privacy, records, halted,
                     dict(tau=tau, mode=mode, removed=removed_total, at_fired=at_fired,
                          schedule=phases))


def minibatch_gradients(data: UserData, x: np.ndarray, pool: np.ndarray, K: int, tau: float,
                        rng: np.random.Generator, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` independent copies of Algorithm 2's pre-noise gradient g at a fixed x (lines
    5–12): K users drawn without replacement from ``pool``, scores with radius 2τ, Z kept w.p.
    p(h(Z)), g = mean of the kept q(Z).  Returns (g of shape (draws, d), kept fraction per draw).
    Vectorized over draws (one (draws, K, K) distance tensor)."""
    pool = np.asarray(pool, dtype=np.intp)
    K = check_int("K", K)
    if K > pool.size:
        raise ValueError(f"K must be in [1, {pool.size}] (the pool size), got {K}")
    idx = np.argsort(rng.random((draws, pool.size)), axis=1)[:, :K]
    Q = data.user_mean_gradients(x, pool[idx].ravel()).reshape(draws, K, data.d)
    Qc = Q - Q.mean(axis=1, keepdims=True)
    sq = np.einsum("rkd,rkd->rk", Qc, Qc)
    D2 = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("rkd,rjd->rkj", Qc, Qc)
    h = (D2 <= (2.0 * tau) ** 2 * (1 + 1e-12)).sum(axis=2)
    keep = rng.random((draws, K)) < keep_probabilities(h, K)
    cnt = np.maximum(keep.sum(axis=1), 1)
    g = np.einsum("rk,rkd->rd", keep, Q) / cnt[:, None]
    return g, keep.mean(axis=1)


def item_level_baseline(data: UserData, epsilon: float, delta: float, rng: np.random.Generator,
                        **kw) -> RunResult:
    """The user-as-item baseline: Algorithm 3's schedule with no outlier removal, each user's mean
    gradient treated as one item of norm ≤ L (sensitivity 2L/K_i), noise calibrated to the full
    ε, schedule computed for m = 1 (the algorithm does not know users have m items).
    User-level private, but its noise does not shrink with m (footnote 3's rate)."""
    return accelerated_phased_erm(data, epsilon, delta, rng, removal=False, schedule_m=1, **kw)
