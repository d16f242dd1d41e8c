"""Lower bounds on the true ε of KAN's Algorithm 1 (Theorem 5.1/F.12, Theorem 5.4/D.9, and the
tight accountant of :mod:`algorithms.kan.privacy`): the exact privacy loss of an achievable
neighbouring pair, computed by dp-accounting's privacy-loss-distribution (PLD) code, a route
independent of the RDP accountant that calibrates κ.

The pair.  Algorithm 1 at λ = 0 releases, at each of its ``steps`` steps, the sum of the
clipped gradients of a batch plus N(0, (C_clip κ)² I).  Replace-one: every example but the
canary has clipped gradient −C_clip e₁, and the canary has +C_clip e₁ in D and −C_clip e₁ in D′
(so D′ is n copies of one example).  Under D′ every batch sums to −B C_clip e₁; under D the sum
moves by 2C_clip e₁ when the canary is in the batch.  Zero-out: every example but the canary has
clipped gradient 0 (feature h(x) = 0), the canary +C_clip e₁ in D and 0 in D′.  With fresh
batches (B of n without replacement, independently over steps) the canary is in a batch with
probability q = B/n, so the release's e₁ coordinate (centred) is, per step and independently,

* replace-one: P = (1 − q)N(0, κ²) + q N(2, κ²) against Q = N(0, κ²);
* zero-out:    P = (1 − q)N(0, κ²) + q N(1, κ²) against Q = N(0, κ²)

(units of C_clip; the other coordinates are identical under D and D′).  The privacy claim of
the theorems covers every clipped-gradient sequence, so the ε of this pair (either direction)
is a LOWER bound on the true ε of the mechanism.  Both distributions are binned (a
post-processing, which can only lower ε) and the PLD is built with dp-accounting's optimistic
discretisation
(``pessimistic_estimate=False``), so the number returned stays a lower bound up to the PLD's
float rounding.  With q = 1 the pair is the Gaussian mechanism with shift 2 (replace-one) or 1
(zero-out), whose ε is also given in closed form by :func:`gaussian_epsilon_exact`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

__all__ = ["pair_epsilon_lower", "gaussian_epsilon_exact", "cyclic_sensitivity",
           "cyclic_epsilon_exact", "fresh_truncation_epsilon", "block_sensitivity_exact",
           "kappa_thm_d9", "kappa_thm_f12", "RELATIONS"]

RELATIONS = ("replace-one", "zero-out")


def gaussian_epsilon_exact(z: float, delta: float) -> float:
    """ε(δ) of the Gaussian mechanism with noise std = z × sensitivity, from the exact
    hockey-stick formula δ(ε) = Φ(1/(2z) − εz) − e^ε Φ(−1/(2z) − εz) (Balle & Wang 2018),
    solved for ε by bisection here (scipy only; no dp-accounting)."""
    if not z > 0:
        raise ValueError(f"z must be in (0, inf), got {z!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")

    def d_of(eps: float) -> float:
        a, b = 1.0 / (2.0 * z) - eps * z, -1.0 / (2.0 * z) - eps * z
        return stats.norm.cdf(a) - math.exp(eps) * stats.norm.cdf(b)

    if d_of(0.0) <= delta:
        return 0.0
    hi = 1.0
    while d_of(hi) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: d_of(e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12))


def _binned(sigma: float, q: float, shift: float, bins: int):
    """Bin masses of P = (1 − q)N(0, σ²) + qN(shift, σ²) and Q = N(0, σ²) on a grid covering
    [−14σ, shift + 14σ] (tails folded into the end bins)."""
    edges = np.linspace(-14.0 * sigma, shift + 14.0 * sigma, bins + 1)

    def masses(c: np.ndarray) -> np.ndarray:
        m = np.diff(c)
        m[0] += c[0]
        m[-1] += 1.0 - c[-1]
        return m

    c0 = stats.norm.cdf(edges / sigma)
    P = masses((1.0 - q) * c0 + q * stats.norm.cdf((edges - shift) / sigma))
    Q = masses(c0)
    return P, Q


def pair_epsilon_lower(noise_multiplier: float, q: float, steps: int, delta: float,
                       relation: str = "replace-one", *, bins: int = 4000,
                       value_discretization: float = 1e-4) -> float:
    """ε(δ) of the achievable pair of the module docstring over ``steps`` fresh-batch steps
    with inclusion probability ``q`` = B/n and noise multiplier κ, the larger of its two
    directions: a lower bound on the true ε of Algorithm 1 at λ = 0 (dp-accounting's PLD,
    optimistic discretisation; ``value_discretization`` 1e-4 loses at most steps × 1e-4)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if not noise_multiplier > 0:
        raise ValueError(f"noise_multiplier must be in (0, inf), got {noise_multiplier!r}")
    if not 0 < q <= 1:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be an integer in [1, inf), got {steps!r}")
    P, Q = _binned(float(noise_multiplier), float(q),
                   2.0 if relation == "replace-one" else 1.0, bins)
    keep = (P > 0) & (Q > 0)
    lp = {i: math.log(p) for i, p in enumerate(P) if keep[i]}
    lq = {i: math.log(v) for i, v in enumerate(Q) if keep[i]}
    best = 0.0
    for lower, upper in ((lq, lp), (lp, lq)):
        dist = pld.from_two_probability_mass_functions(
            lower, upper, pessimistic_estimate=False,
            value_discretization_interval=value_discretization)
        if steps > 1:
            dist = dist.self_compose(int(steps))
        best = max(best, float(dist.get_epsilon_for_delta(delta)))
    return best


def cyclic_sensitivity(lam: float, steps: int, n: int, B: int) -> float:
    """max over the example's block j ∈ [0, ⌊n/B⌋) of ‖C 1_P‖, P = {t < steps : t ≡ j mod
    ⌊n/B⌋}, C[t, s] = λ^{t−s} (s ≤ t): the cyclic sampler's sensitivity per unit of clip norm,
    by direct recursion v_t = λ v_{t−1} + 1[t ∈ P] (λ ∈ [0, 1), gradients aligned)."""
    nb = n // B
    best = 0.0
    for j in range(min(nb, steps)):
        v, sq = 0.0, 0.0
        for t in range(steps):
            v = lam * v + (1.0 if t >= j and (t - j) % nb == 0 else 0.0)
            sq += v * v
        best = max(best, sq)
    return math.sqrt(best)


def cyclic_epsilon_exact(noise_multiplier: float, lam: float, steps: int, n: int, B: int,
                         delta: float, relation: str = "zero-out") -> float:
    """ε(δ) of Algorithm 1 with cyclic batches: one Gaussian mechanism (the releases
    decorrelated by C) with sensitivity 2·:func:`cyclic_sensitivity` (replace-one) or 1×
    (zero-out) against noise std κ; exact, by :func:`gaussian_epsilon_exact`."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    mult = 2.0 if relation == "replace-one" else 1.0
    return gaussian_epsilon_exact(noise_multiplier / (mult * cyclic_sensitivity(lam, steps, n, B)),
                                  delta)


def _binomial_tail(steps: int, r: float, tau: int) -> float:
    """P(Bin(steps, r) > τ), summed term by term from log-gamma (no scipy.stats)."""
    if r >= 1.0:
        return 0.0 if tau >= steps else 1.0
    lr, l1r = math.log(r), math.log1p(-r)
    return math.fsum(math.exp(math.lgamma(steps + 1) - math.lgamma(k + 1) - math.lgamma(steps - k + 1)
                              + k * lr + (steps - k) * l1r) for k in range(tau + 1, steps + 1))


def block_sensitivity_exact(lam: float, steps: int, tau: int) -> float:
    """max over contiguous blocks of τ participation steps (every start) of ‖C 1_P‖, C[t, s] =
    λ^{t−s}, by the recursion v_t = λ v_{t−1} + 1[t ∈ P] run for all starts at once."""
    tau = min(int(tau), steps)
    starts = np.arange(steps - tau + 1)
    v = np.zeros(starts.size)
    sq = np.zeros(starts.size)
    for t in range(steps):
        v = lam * v + ((starts <= t) & (t < starts + tau))
        sq += v * v
    return float(math.sqrt(sq.max()))


#: The fractions f of δ at which the truncation route puts its participation cap τ (the least τ
#: with P(Bin(steps, r) > τ) ≤ f·δ), as in the accountant being cross-checked.
TRUNCATION_FRACTIONS = (0.02, 0.1, 0.3, 0.5, 0.8)


def fresh_truncation_epsilon(noise_multiplier: float, lam: float, steps: int, n: int, B: int,
                             delta: float, relation: str = "zero-out") -> float:
    """ε(δ) of Algorithm 1 with fresh batches (B of n without replacement at every step) by the
    truncation argument of Theorems F.8–F.12, recomputed on a route of its own: with
    probability 1 − P(Bin(steps, B/n) > τ) the example takes part at most τ times; the releases
    are then one Gaussian mechanism of sensitivity mult·max_P ‖C 1_P‖ (mult = 2 replace-one, 1
    zero-out), so ε ≤ min_τ ε_Gauss(κ/(mult·sens_τ), δ − tail_τ).  Tail by exact binomial sums,
    sensitivity by :func:`block_sensitivity_exact`, ε by :func:`gaussian_epsilon_exact`; τ at
    :data:`TRUNCATION_FRACTIONS` of δ.  An upper bound on ε, valid for every λ ∈ [0, 1)."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if not 1 <= B <= n:
        raise ValueError(f"B must be in [1, n={n}], got {B!r}")
    if not 0 <= lam < 1:
        raise ValueError(f"lam must be in [0, 1), got {lam!r}")
    mult = 2.0 if relation == "replace-one" else 1.0
    r = B / n
    if r >= 1.0:
        caps = [steps]
    else:
        caps = set()
        for f in TRUNCATION_FRACTIONS:
            tau = 0
            while tau < steps and _binomial_tail(steps, r, tau) > f * delta:
                tau += 1
            caps.add(tau)
    best = math.inf
    for tau in sorted(caps):
        if tau < 1:
            continue
        tail = _binomial_tail(steps, r, tau)
        if tail >= delta:
            continue
        sens = block_sensitivity_exact(lam, steps, tau)
        best = min(best, gaussian_epsilon_exact(noise_multiplier / (mult * sens), delta - tail))
    return best


def kappa_thm_d9(B: int, n: int, T: int, epsilon: float, delta: float) -> float:
    """Theorem D.9's noise multiplier, written out here: κ = √(16B²T/(n²ε) + 32B²T
    ln(1/δ)/(n²ε²))."""
    return math.sqrt(16.0 * B**2 * T / (n**2 * epsilon)
                     + 32.0 * B**2 * T * math.log(1.0 / delta) / (n**2 * epsilon**2))


def kappa_thm_f12(lam: float, T: int, B: int, n: int, epsilon: float, delta: float) -> float:
    """Theorem F.12's noise multiplier, written out here: κ = √8 ((1 − λ^T)/(1 − λ))
    √((rT + √(3rT ln(2/δ))) ln(2.5/δ))/ε, r = B/n (λ = 0: factor 1)."""
    factor = 1.0 if lam == 0 else (1.0 - lam**T) / (1.0 - lam)
    rT = B * T / n
    return (math.sqrt(8.0) * factor
            * math.sqrt((rT + math.sqrt(3.0 * rT * math.log(2.0 / delta))) * math.log(2.5 / delta))
            / epsilon)
