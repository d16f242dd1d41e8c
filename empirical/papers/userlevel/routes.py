"""Second routes of the user-level SCO paper's (Lowy, Liu, Asi) noise calibrations: each
multiplier an algorithm found by search (Algorithm 1's output noise, Theorem 2.1/B.1; Algorithm 2's
gradient noise inside Algorithm 3, Theorem 3.2/C.3; [FKT20]'s item-level output noise behind
footnote 3) and AboveThreshold's Laplace scales (Algorithm 4, Lemma A.9) recomputed along a path
that shares no code with the algorithm's accountant:

* the **exact** ε(δ) of k Gaussian releases of multiplier z (the pair N(0, 1) vs N(√k/z, 1),
  Balle & Wang 2018, Theorem 8: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)), in log space with
  scipy's normal log-CDF and inverted by Brent: no dp-accounting call;
* the Gaussian's **RDP** written out: k·α/(2z²) at the accountant's Rényi orders, converted with
  the conversion the accountant uses (Canonne, Kamath, Steinke 2020, Proposition 12:
  ε = r + log(1 − 1/α) − log(δα)/(α − 1), the minimum over orders);
* AboveThreshold's pure ε from the Laplace scales it used: Δ/b_ρ + 2Δ/b_ν (Lemma A.9's proof).

Each is returned as a pair of row columns for the settings verdict
(:func:`empirical.core.rowchecks.check_settings`): ``max_<x>``/``limit_<x>``.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

__all__ = ["exact_gaussian_delta", "exact_gaussian_epsilon", "rdp_gaussian_epsilon",
           "ROUTE_RTOL", "EXACT_SLACK", "EXACT_UNDER", "SEARCH_RTOL", "SEARCH_LOG_Z",
           "gaussian_route_columns", "pld_route_columns", "composed_gaussian_multiplier",
           "multiplier_route_columns", "above_threshold_columns"]

#: Rényi orders of the algorithms' accountant, restated here (a data constant of the route: with
#: other orders the RDP route differs by up to ~0.3% for reasons that are not bugs).
ORDERS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 128, 256)

#: Largest relative gap between the RDP route and the accountant's ε at the same multiplier:
#: both evaluate the same closed form in double precision (measured gaps ≤ 1e-13); a wrong
#: count, order set or conversion moves it by ≥ 1e-3.
ROUTE_RTOL = 1e-9
#: Largest absolute excess of a PLD accountant's ε over the exact ε at the same multiplier:
#: [FKT20]'s PLD discretises the privacy loss on a grid of 1e-5 and rounds pessimistically, so
#: its ε may exceed the exact one by about one grid step; two steps allowed (measured ≤ 1e-6
#: at ε' = 5e-4…1).  A doubled sensitivity or a halved count moves ε' by ≥ 30% of itself
#: (≥ 1.5e-4 at the smallest ε' run), far beyond it.
EXACT_SLACK = 2e-5
#: A pessimistic PLD is never below the exact ε; 1e-9 is the two root finders' rounding.
EXACT_UNDER = 1e-9
#: The stopping rule of the algorithms' calibration search (Illinois on log ε against log z,
#: algorithms.userlevel.accounting.calibrate_gaussian): it returns a multiplier whose ε is
#: within relative 1e-5 below the target, or one end of a bracket narrower than 1e-7 in log z.
#: These two roundings bound how far a correct multiplier may sit from the route's.
SEARCH_RTOL, SEARCH_LOG_Z = 1e-5, 1e-7


def exact_gaussian_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of N(0, 1) vs N(μ, 1) (Balle & Wang 2018, Theorem 8), in log space so that
    δ ~ 10⁻¹⁷ keeps its relative precision."""
    a, b = mu / 2.0 - epsilon / mu, -mu / 2.0 - epsilon / mu
    la, lb = float(log_ndtr(a)), epsilon + float(log_ndtr(b))
    if lb >= la:
        return 0.0
    return math.exp(la) * -math.expm1(lb - la)


def exact_gaussian_epsilon(z: float, count: int, delta: float) -> float:
    """The exact ε(δ) of ``count`` Gaussian releases of multiplier z (one Gaussian pair with
    μ = √count/z), by Brent on :func:`exact_gaussian_delta` (decreasing in ε)."""
    if not (z > 0 and count >= 1 and 0 < delta < 1):
        raise ValueError(f"z must be > 0, count ≥ 1 and delta in (0, 1); got {z}, {count}, "
                         f"{delta}")
    mu = math.sqrt(count) / z
    if exact_gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while exact_gaussian_delta(mu, hi) > delta:
        hi *= 2.0
    return float(brentq(lambda e: exact_gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-14,
                        rtol=1e-13))


def rdp_gaussian_epsilon(z: float, count: int, delta: float) -> float:
    """ε(δ) of ``count`` Gaussian releases of multiplier z by the Gaussian's RDP
    (count·α/(2z²)) and the conversion of Canonne, Kamath, Steinke (2020), minimised over
    :data:`ORDERS`."""
    a = np.asarray(ORDERS, dtype=float)
    r = count * a / (2.0 * z * z)
    eps = r + np.log1p(-1.0 / a) - np.log(delta * a) / (a - 1.0)
    return float(max(0.0, eps.min()))


def gaussian_route_columns(tag: str, z: float, count: int, delta: float,
                           accountant_epsilon: float) -> dict:
    """Columns checking one unsampled Gaussian calibration of ``count`` releases at multiplier
    z whose accountant (dp-accounting RDP) reported ``accountant_epsilon`` at δ: the RDP route
    must reproduce it (``max_<tag>_rdp_route_gap`` ≤ :data:`ROUTE_RTOL`) and the exact ε must
    not exceed it (an RDP bound is an upper bound: ``max_<tag>_exact_over_rdp`` ≤ 1 + 1e-9)."""
    rdp = rdp_gaussian_epsilon(z, count, delta)
    exact = exact_gaussian_epsilon(z, count, delta)
    return {f"max_{tag}_rdp_route_gap": abs(rdp - accountant_epsilon) / accountant_epsilon,
            f"limit_{tag}_rdp_route_gap": ROUTE_RTOL,
            f"max_{tag}_exact_over_rdp": exact / accountant_epsilon,
            f"limit_{tag}_exact_over_rdp": 1.0 + 1e-9,
            f"{tag}_epsilon_exact": exact}


def pld_route_columns(tag: str, z: float, delta: float, accountant_epsilon: float) -> dict:
    """Columns checking one Gaussian calibration made with a pessimistic PLD accountant: its
    ε at multiplier z may exceed the exact ε of one release by at most :data:`EXACT_SLACK`
    (absolute: the discretisation) and fall below it by at most :data:`EXACT_UNDER`."""
    exact = exact_gaussian_epsilon(z, 1, delta)
    gap = accountant_epsilon - exact
    return {f"max_{tag}_pld_over_exact": gap, f"limit_{tag}_pld_over_exact": EXACT_SLACK,
            f"max_{tag}_pld_under_exact": -gap / exact, f"limit_{tag}_pld_under_exact": EXACT_UNDER,
            f"{tag}_epsilon_exact": exact}


@lru_cache(maxsize=256)
def _single_multiplier(target_epsilon: float, delta: float) -> float:
    """The multiplier z of ONE Gaussian release whose RDP route ε(δ) is ``target_epsilon`` (Brent
    on :func:`rdp_gaussian_epsilon`, decreasing in z)."""
    f = lambda z: rdp_gaussian_epsilon(z, 1, delta) - target_epsilon  # noqa: E731
    lo, hi = 1e-3, 1.0
    while f(hi) > 0:
        hi *= 2.0
    return float(brentq(f, lo, hi, xtol=1e-14, rtol=1e-13))


def composed_gaussian_multiplier(target_epsilon: float, count: int, delta: float) -> float:
    """The multiplier of ``count`` composed Gaussian releases whose ε(δ) is ``target_epsilon``,
    by the exact composition of Gaussians: ``count`` releases of multiplier z are one release
    of multiplier z/√count (the sum of the shifts' squares), so z = √count · z₁(ε, δ) with z₁
    the single release's (RDP route, no dp-accounting call, no count inside the search)."""
    if not (target_epsilon > 0 and count >= 1 and 0 < delta < 1):
        raise ValueError(f"target_epsilon must be > 0, count ≥ 1 and delta in (0, 1); got "
                         f"{target_epsilon}, {count}, {delta}")
    return math.sqrt(count) * _single_multiplier(target_epsilon, delta)


def multiplier_route_columns(tag: str, z: float, count: int, delta: float, target_epsilon: float,
                             amplified: bool) -> dict:
    """Columns checking the multiplier z that a calibration search found for ``count`` Gaussian
    releases at (``target_epsilon``, δ) against :func:`composed_gaussian_multiplier` with the
    theorem's count.  The limit is the search's own rounding carried along the route: the
    multiplier whose route ε is :data:`SEARCH_RTOL` below the target, relative to the route's,
    plus :data:`SEARCH_LOG_Z`.  Two-sided without amplification (the accountant then computes
    the same unamplified bound: a halved or doubled count moves z by a factor √2); one-sided
    (z may only be smaller) where the accountant may use WOR amplification, which can only lower
    the multiplier it needs."""
    route = composed_gaussian_multiplier(target_epsilon, count, delta)
    slack = composed_gaussian_multiplier(target_epsilon * math.exp(-SEARCH_RTOL), count, delta)
    gap = z / route - 1.0
    return {f"{tag}_multiplier": z, f"{tag}_multiplier_route": route,
            f"max_{tag}_multiplier_route_gap": gap if amplified else abs(gap),
            f"limit_{tag}_multiplier_route_gap": slack / route - 1.0 + SEARCH_LOG_Z}


def above_threshold_columns(sensitivity: float, threshold_scale: float, query_scale: float,
                            charged_epsilon: float) -> dict:
    """AboveThreshold's pure ε recomputed from the Laplace scales it drew with
    (Δ/b_ρ + 2Δ/b_ν, Lemma A.9's proof: the threshold's shift Δ costs Δ/b_ρ, the halting
    query's shift 2Δ costs 2Δ/b_ν) against the ε its phase was charged (relative 1e-9: both
    are closed forms)."""
    eps = sensitivity / threshold_scale + 2.0 * sensitivity / query_scale
    return {"max_at_route_gap": abs(eps - charged_epsilon) / charged_epsilon,
            "limit_at_route_gap": 1e-9, "at_epsilon_route": eps}
