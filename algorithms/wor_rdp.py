"""RDP of the Gaussian mechanism on a without-replacement sample, for calibration *searches*
(the KAN paper's tight calibration, the user-level paper's calibrate_gaussian): dp-accounting's
own floats (Wang, Balle, Kasiviswanathan 2019, Theorem 27), computed faster with one shared
table of forward differences, and used only where a self-check shows they equal dp-accounting's
on this installation.  A reported ε always comes from dp-accounting's accountant
(:mod:`algorithms.accounting`, which re-exports :func:`wor_search_rdp`)."""
from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Callable

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _dpa_rdp_impl

#: Orders at which :func:`_wor_rdp_is_exact` compares the route with dp-accounting (KAN's
#: accountant orders, with fractional ones; the differences are checked to order 256 too).
_WOR_CHECK_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0,
                     14.0, 16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 64.0)


def wor_search_rdp(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """RDP at ``orders`` of one Gaussian (noise multiplier σ) on a without-replacement sample of
    fraction q, for calibration *searches*: dp-accounting's floats, from :func:`_wor_rdp` where
    that reproduces dp-accounting on this installation, else from dp-accounting.  A reported ε
    must come from dp-accounting's accountant itself."""
    if _wor_rdp_is_exact():
        return _wor_rdp(q, sigma, orders)
    return _dpa_rdp_impl._compute_rdp_sample_wor_gaussian(q, sigma, orders)


def _wor_rdp(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """dp-accounting's ``_compute_rdp_sample_wor_gaussian(q, σ, orders)`` (Wang–Balle–
    Kasiviswanathan, Theorem 27) with the same floats, sharing one table of forward differences.

    dp-accounting evaluates each integer order α (both neighbours of a fractional one) from the
    forward differences of exp(cgf) up to α, O(α²) each; the differences up to α are a prefix of
    those up to any larger α (entry i depends on the first i + 2 values only, by the same
    operations), so the table for the largest order serves them all.  Its per-order sum is
    transcribed from dp-accounting 0.6 (Apache-2.0); :func:`_wor_rdp_is_exact` guards it.
    Where numpy's array exp/log1p do not round as libm does (some SIMD builds), the floats differ
    in the last bits, and the alternating differences amplify that to 0.3% at orders near 64;
    the self-check then finds a mismatch on its grid of (q, σ) and the route stays off."""
    ints = {int(a) for a in orders if float(a).is_integer()}
    ints |= {f(a) for a in orders if not float(a).is_integer() for f in (math.floor, math.ceil)}
    if not 0 < q < 1 or max(ints) > 256 or not all(map(math.isfinite, orders)):
        return _dpa_rdp_impl._compute_rdp_sample_wor_gaussian(q, sigma, orders)
    deltas, _ = _forward_diffs(lambda x: x * 1.0 * (x + 1) / (2.0 * sigma**2), max(ints))
    log_a = {a: _wor_log_a(q, sigma, a, deltas) for a in ints}
    out = []
    for alpha in orders:
        if float(alpha).is_integer():
            out.append(log_a[int(alpha)] / (alpha - 1))
        else:
            lo = math.floor(alpha)
            t = alpha - lo
            out.append(((1 - t) * log_a[lo] + t * log_a[math.ceil(alpha)]) / (alpha - 1))
    return np.array(out)


def _forward_diffs(fun: Callable[[float], float], n: int) -> tuple[np.ndarray, np.ndarray]:
    """dp-accounting's ``_get_forward_diffs(fun, n)`` (log-magnitudes and signs of the forward
    differences of exp(fun) at 0) with each differencing pass done on whole arrays.

    Its pass j-loop sets entry j from the *old* entries j and j + 1 only, so a pass is one
    elementwise map; the map below is ``_log_sub_sign`` / ``_log_add`` branch by branch (numpy's
    exp and log1p on arrays give libm's floats, which dp-accounting calls one by one).  ≈ 6×
    faster; :func:`_wor_rdp_is_exact` checks the floats against dp-accounting's own."""
    vec = np.zeros(n + 3)
    signs = np.ones(n + 3, dtype=bool)
    deltas = np.zeros(n + 2)
    signs_deltas = np.zeros(n + 2, dtype=bool)
    for i in range(1, n + 3):
        vec[i] = fun(1.0 * (i - 1))
    for i in range(0, n + 2):
        _diff_pass(vec, signs, n + 2 - i)
        deltas[i] = vec[0]
        signs_deltas[i] = signs[0]
    return deltas, signs_deltas


def _diff_pass(vec: np.ndarray, signs: np.ndarray, k: int) -> None:
    """One pass of dp-accounting's ``_stable_inplace_diff_in_log(vec, signs, k)``, vectorised."""
    x, y = vec[:k].copy(), vec[1:k + 1]           # entries j and j + 1 before the pass
    sx, sy = signs[:k].copy(), signs[1:k + 1]
    with np.errstate(all="ignore"):               # every branch is computed, one is kept
        gt, lt = y > x, y < x
        # equal signs: _log_sub_sign(y, x), sign flipped where entry j + 1 is negative
        mag = np.full(k, -np.inf)
        mag[gt] = y[gt] + np.log1p(-np.exp(x[gt] - y[gt]))
        mag[lt] = x[lt] + np.log1p(-np.exp(y[lt] - x[lt]))
        sub_sign = np.where(sy, ~lt, lt)
        # opposite signs: _log_add(x, y), the sign of entry j + 1
        a, b = np.minimum(x, y), np.maximum(x, y)
        add = np.where(a == -np.inf, b, np.log1p(np.exp(a - b)) + b)
    same = sx == sy
    vec[:k] = np.where(same, mag, add)
    signs[:k] = np.where(same, sub_sign, sy)


def _wor_log_a(q: float, sigma: float, alpha: int, deltas: np.ndarray) -> float:
    """``_compute_rdp_sample_wor_gaussian_int(q, σ, α)`` for 2 ≤ α ≤ 256 from a shared table."""
    if alpha == 1:
        return 0
    cgf = lambda x: x * 1.0 * (x + 1) / (2.0 * sigma**2)      # noqa: E731
    func2 = 1.0 * 2.0 / (2.0 * sigma**2)
    log_f2m1 = func2 + math.log1p(-np.exp(-func2))
    log_a = 0
    for i in range(2, alpha + 1):
        if i == 2:
            s = (2 * np.log(q) + _dpa_rdp_impl._log_comb(alpha, 2)
                 + np.minimum(np.log(4) + log_f2m1, func2 + np.log(2)))
        else:
            delta_lo = deltas[int(2 * np.floor(i / 2.0)) - 1]
            delta_hi = deltas[int(2 * np.ceil(i / 2.0)) - 1]
            s = np.log(4) + 0.5 * (delta_lo + delta_hi)
            s = np.minimum(s, np.log(2) + cgf(i - 1))
            s += i * np.log(q) + _dpa_rdp_impl._log_comb(alpha, i)
        log_a = _dpa_rdp_impl._log_add(log_a, s)
    return float(log_a)


@lru_cache(maxsize=None)
def _wor_rdp_is_exact() -> bool:
    """Once per process: :func:`_wor_rdp` equals dp-accounting's own function bit for bit at
    two (q, σ) of the suite's kind, and :func:`_forward_diffs` its differences up to order 256
    (the user-level paper's largest); a changed dp-accounting turns the route off."""
    try:
        orders = np.array(_WOR_CHECK_ORDERS)
        # A grid over the suite's range of q and σ: a numpy whose array exp/log1p round unlike
        # libm agrees at some (q, σ) and not at others (the differences cancel catastrophically
        # at high orders), so two probes are not enough.
        for q, z in itertools.product((1 / 1000, 1 / 400, 8 / 1000, 0.05, 0.2, 1 / 3, 0.5, 0.9),
                                      (0.3, 1.3, 4.7, 6.9, 12.0, 35.0)):
            if not np.array_equal(_wor_rdp(q, z, orders),
                                  _dpa_rdp_impl._compute_rdp_sample_wor_gaussian(q, z, orders)):
                return False
        cgf = lambda x: x * 1.0 * (x + 1) / (2.0 * 0.7**2)      # noqa: E731
        return all(np.array_equal(a, b) for a, b in   # the largest order either paper uses
                   zip(_forward_diffs(cgf, 256), _dpa_rdp_impl._get_forward_diffs(cgf, 256)))
    except (AttributeError, TypeError, ValueError):
        return False
