"""Independent recomputation of the outlier-removed mean's sensitivity bound of Lowy, Liu, Asi,
"Faster Algorithms for User-Level Private SCO" (Lemmas B.2 / C.2, as corrected in errata
UL-E13/UL-E14), for the settings verdicts, the measured-noise tests and the brute-force audit.

Deliberately a second implementation of :func:`algorithms.userlevel.sco.outlier_mean_sensitivity`
and the score floors (different numerics: linear scans and ``scipy.optimize`` instead of
bisection, numerical integration instead of the closed-form Laplace tail), so that a bug in the
algorithm's version is not copied into the verdicts that check it.

The bound: for K points with keep scores h (radius r), keep probability clip((h − K/2)/(K/6)),
shared coins, and score s = Σh/K ≥ s_min on both neighbours,
P(‖g − g′‖ > 2r(f + 2)/(2s_min − K − t)) ≤ ζ with f the (ζ/2)-quantile of Bin(K − 1, 6/K) and
t the Chernoff deficit of the kept count at ζ/4 (see the algorithm's docstring for the proof).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate, optimize, stats

__all__ = ["failure_per_release", "laplace_margin", "flips", "deficit", "sensitivity",
           "alg3_phase_sensitivity", "alg1_phase_sensitivity", "constant_sensitivity",
           "lemma_c2_constant"]


def failure_per_release(delta_fail: float, releases: int, epsilon: float) -> float:
    """ζ with 4·releases·ζ·(2e^{ε/2} + 1) = δ_fail (the failure term of Lemma C.2's proof)."""
    return delta_fail / (4.0 * releases * (2.0 * math.exp(epsilon / 2.0) + 1.0))


def _lap_pdf(y: float, b: float) -> float:
    return math.exp(-abs(y) / b) / (2.0 * b)


def _lap_sf(y: float, b: float) -> float:
    return 0.5 * math.exp(-y / b) if y >= 0.0 else 1.0 - 0.5 * math.exp(y / b)


def _tail(x: float, b_query: float, b_threshold: float) -> float:
    """P(ν − ξ ≥ x) by numerical integration over ξ (ν ~ Lap(b_query), ξ ~ Lap(b_threshold))."""
    if b_threshold == 0.0:
        return float(stats.laplace.sf(x, scale=b_query))
    # the Laplace density and survival function written out (scipy.stats' per-call overhead
    # was ~1 ms per integrand evaluation, seconds per margin); still a numerical integral
    f = lambda y: _lap_pdf(y, b_threshold) * _lap_sf(x + y, b_query)  # noqa: E731
    lo, hi = -60.0 * b_threshold, 60.0 * b_threshold
    val, _ = integrate.quad(f, lo, hi, points=[-x, 0.0], limit=400, epsabs=0.0, epsrel=1e-10)
    return float(val)


@lru_cache(maxsize=1024)
def laplace_margin(zeta: float, b_query: float, b_threshold: float = 0.0) -> float:
    """M with P(ν − ξ ≥ M) = ζ (root of the log tail)."""
    g = lambda x: math.log(_tail(x, b_query, b_threshold)) - math.log(zeta)  # noqa: E731
    return float(optimize.brentq(g, 0.0, 80.0 * (b_query + b_threshold), xtol=1e-9))


@lru_cache(maxsize=1024)
def flips(K: int, zeta: float) -> int:
    """Smallest f with P(Bin(K − 1, min(1, 6/K)) > f) ≤ ζ, by a linear scan of the pmf."""
    p = min(1.0, 6.0 / K)
    pmf = stats.binom.pmf(np.arange(K), K - 1, p)
    tail = np.cumsum(pmf[::-1])[::-1] - pmf               # P(F > f) = Σ_{k > f} pmf
    return int(np.argmax(tail <= zeta))


@lru_cache(maxsize=1024)
def deficit(K: int, zeta: float) -> float:
    """Smallest t with max_μ e^{−μ}(eμ/a)^a ≤ ζ, a = μ/3 − t (Poisson Chernoff lower tail),
    μ over (3t, K]."""
    def log_worst(t: float) -> float:
        def neg(lmu: float) -> float:
            mu = math.exp(lmu)
            a = mu / 3.0 - t
            if a <= 0:
                return mu                                 # P(X ≤ 0) ≤ e^{−μ}
            return -(-mu + a + a * math.log(mu / a)) if a < mu else 0.0
        grid = np.linspace(math.log(max(3.0 * t, 1e-9)), math.log(max(K, 3.0 * t + 1.0)), 801)
        vals = [neg(v) for v in grid]
        i = int(np.argmin(vals))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        res = optimize.minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-10})
        return -min(res.fun, vals[i])
    return float(optimize.brentq(lambda t: log_worst(t) - math.log(zeta), 1e-9,
                                 10.0 * math.log(1.0 / zeta) + 10.0, xtol=1e-8))


def sensitivity(radius: float, K: int, s_min: float, zeta: float) -> float:
    """The bound 2r(f + 2)/(2s_min − K − t), inf when the denominator is ≤ f + 2."""
    f = flips(K, zeta / 2.0)
    kept = 2.0 * s_min - K - deficit(K, zeta / 4.0)
    return math.inf if kept <= f + 2 else 2.0 * radius * (f + 2) / kept


def alg3_phase_sensitivity(tau: float, K: int, T: int, epsilon: float, delta: float) -> float:
    """Algorithm 2's phase: radius 2τ, ζ per step for δ_fail = δ/2 over T steps, half to the
    coins and half to AboveThreshold (scales 16/ε query, 8/ε threshold, threshold 4K/5);
    −2 for the neighbour's score."""
    zeta = failure_per_release(delta / 2.0, T, epsilon)
    s_min = 0.8 * K - laplace_margin(zeta / 2.0, 16.0 / epsilon, 8.0 / epsilon) - 2.0
    return sensitivity(2.0 * tau, K, s_min, zeta / 2.0)


def alg1_phase_sensitivity(tau_i: float, C: int, epsilon: float, delta: float) -> float:
    """Algorithm 1's phase: radius 2τ_i, one release (δ_fail = δ/2), Laplace score 20/ε against
    4C/5; −2 for the neighbour's score."""
    zeta = failure_per_release(delta / 2.0, 1, epsilon)
    s_min = 0.8 * C - laplace_margin(zeta / 2.0, 20.0 / epsilon) - 2.0
    return sensitivity(2.0 * tau_i, C, s_min, zeta / 2.0)


def constant_sensitivity(tau: float, K: int, zeta: float, constant: float = 2.0) -> float:
    """The former accounting, c·τ log(1/ζ)/K (UL-E7's constant 2; the paper's ≲ is c = 1):
    kept as the broken control of the brute-force audit (UL-E13)."""
    return constant * tau * math.log(1.0 / zeta) / K


def lemma_c2_constant(zeta: float, s_fraction: float = 0.7, K: int = 10**4) -> float:
    """The absolute constant c with which the derived bound proves Lemma C.2 in its stated form
    ‖g − g′‖ ≲ τ log(1/ζ)/K (the paper's "≲" is up to an absolute constant): c = Δ·K/(τ
    log(1/ζ)) for Δ = :func:`sensitivity` at radius 2τ and score floor s_fraction·K (0.7K: what
    the score test's event implies), at large K (the limit is reached to 10⁻³ by K = 10⁴)."""
    if not 0 < zeta < 1:
        raise ValueError(f"zeta must be in (0, 1), got {zeta!r}")
    return sensitivity(2.0, K, s_fraction * K, zeta) * K / math.log(1.0 / zeta)
