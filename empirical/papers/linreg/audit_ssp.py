"""Privacy audit and injected bugs of sufficient statistics perturbation (SSP), the prior efficient
method Varshney, Thakurta, Jain compare against (§1; Theorem 3.2 Remark ii), at the point of the
``linreg.ssp.*`` experiments (ε = 4, δ = 10⁻⁶, B_x and B_y of ``ssp_bounds`` at n = 2.5·10⁴,
d = 8, σ = ‖w*‖ = 1).  Imported by the paper's unit; :mod:`empirical.papers.linreg.mutants`
registers the mutants (``linreg.ssp.xty_noise_omitted``, ``linreg.ssp.add_remove_sensitivity``)
built from the injected bugs below.

SSP releases the pair (XᵀX, Xᵀy) of the projected records once, with Gaussian noise of std α·Δ
on each of its d² + d coordinates, Δ = √(2B_x⁴ + 4B_x²B_y²) its claimed replace-one ℓ₂
sensitivity; w is post-processing.  The audit reads the release itself (``observe``) and stops
the run there.

Canary placement.  Replacing (x, y) by (x′, y′) with ‖x‖ = ‖x′‖ = B_x, xᵀx′ = B_x²·t and
y′ = −y = −B_y moves the release by ‖xxᵀ − x′x′ᵀ‖²_F + ‖xy − x′y′‖² = 2B_x⁴(1 − t²) +
2B_x²B_y²(1 + t), largest at t* = min(1, B_y²/(2B_x²)): there Δ_actual² = 2B_x⁴ + 2B_x²B_y² +
B_y⁴/2 < Δ² (the claimed Δ adds the two parts' separate maxima, which no pair attains at once).
The exact ε of the release on that pair is a Gaussian's with multiplier α·Δ/Δ_actual
(dp-accounting's PLD), below the claim: an honest audit cannot reach the claim.  The quick
search tries t*; ``--search full`` adds t = 0 (orthogonal) and t = 1 (XᵀX unchanged).

Statistics, none using the σ the algorithm reports: the projection of each statistic's release
on its own shift (one canary direction per channel: XᵀX alone, Xᵀy alone), and both joined
with weights 1/σ̂² measured on a fixed-seed calibration run on D (release minus the noise-free
value there).  A statistic whose noise was dropped then separates the sides whatever σ is
reported.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from algorithms import accounting
from algorithms.linreg import ssp as ssp_mod
from empirical.papers.linreg.audit import FixedStream
from empirical.papers.linreg.problems import DELTA
from empirical.papers.linreg.problems_thm31 import ssp_bounds
from empirical.privacy.audit import AuditTarget, exact_gaussian_epsilon, register_audit, spawn_rows
from empirical.privacy.mutants import with_mutant

__all__ = ["SSP_EPSILON", "SSP_DELTA", "ssp_pair", "ssp_claim", "ssp_claim_at", "ssp_exact",
           "worst_cosine",
           "actual_sensitivity", "measured_variances", "xty_noise_omitted",
           "add_remove_sensitivity"]

SSP_EPSILON, SSP_DELTA = 4.0, DELTA
#: the linreg.ssp.* experiments' domain at their quick grid's first point
_POINT = {"n": 25_000, "d": 8, "sigma": 1.0, "w_norm": 1.0}
_BX, _BY = ssp_bounds(_POINT)
_D = 2                # x and x′ span a plane; more dimensions add nothing to the pair
_N = 2                # the canary and one record (0, 0), shared by D and D′


def worst_cosine(B_x: float = _BX, B_y: float = _BY) -> float:
    """t* = min(1, B_y²/(2B_x²)): the cosine between x and x′ that moves the release most."""
    return min(1.0, B_y * B_y / (2.0 * B_x * B_x))


def actual_sensitivity(t: float, B_x: float = _BX, B_y: float = _BY) -> float:
    """‖release(D′) − release(D)‖ of the placement at cosine t (module docstring)."""
    return math.sqrt(2.0 * B_x**4 * (1.0 - t * t) + 2.0 * B_x**2 * B_y**2 * (1.0 + t))


def ssp_pair(t: float) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(X, y) of D and D′: record 0 is (B_x·e1, B_y) in D and (B_x(t·e1 + √(1 − t²)·e2), −B_y)
    in D′, record 1 is (0, 0) in both; every record is inside SSP's domain, so no projection."""
    X0, y0 = np.zeros((_N, _D)), np.zeros(_N)
    X0[0, 0], y0[0] = _BX, _BY
    X1, y1 = X0.copy(), y0.copy()
    X1[0] = _BX * np.array([t, math.sqrt(max(0.0, 1.0 - t * t))])
    y1[0] = -_BY
    return (X0, y0), (X1, y1)


def _clean(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The noise-free release (XᵀX flattened, Xᵀy), as SSP lays it out."""
    return np.concatenate([(X.T @ X).ravel(), X.T @ y])


class _Released(Exception):
    """Raised by the observer once the release is read: the score is a function of it alone
    (w is post-processing), so the solves need not run."""


def _release_of(X: np.ndarray, y: np.ndarray, gens: list) -> np.ndarray:
    """SSP's one release on (X, y), one row per generator, read through ``observe``."""
    seen = {}

    def observe(kind, t, rows, released, sigma):
        seen["r"] = np.array(released, dtype=float)
        raise _Released

    try:
        ssp_mod.ssp(FixedStream.of(X, y), _N, epsilon=SSP_EPSILON, delta=SSP_DELTA, B_x=_BX,
                    B_y=_BY, rng=gens, observe=observe)
    except _Released:
        return seen["r"]
    raise RuntimeError("ssp made no release")


_CAL_ROWS = 400      # calibration rows: each channel's variance to ±10% (≥ 4·400 coordinates)


_CAL_SEED = (2026, 29, 7)


def measured_variances(t: float) -> tuple[float, float]:
    """Per-coordinate noise variance of the XᵀX and Xᵀy parts of the release, measured on D
    with fixed seeds (release minus the noise-free value): the joint statistic's weights.  Not
    cached: under a mutant the measurement must see the mutated noise."""
    (X0, y0), _ = ssp_pair(t)
    gens = [np.random.Generator(np.random.PCG64(s))
            for s in np.random.SeedSequence(list(_CAL_SEED)).spawn(_CAL_ROWS)]
    e = _release_of(X0, y0, gens) - _clean(X0, y0)
    k = _D * _D
    return float(np.mean(e[:, :k] ** 2)), float(np.mean(e[:, k:] ** 2))


def _ssp_release(t: float, stat: str) -> Callable:
    """Scores of the release on the placement at cosine t: the projection on the shift
    clean(D′) − clean(D) of the XᵀX part (``"xx"``), the Xᵀy part (``"xy"``), or both weighted
    by their measured noise (``"weighted"``)."""
    k = _D * _D

    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        pair = ssp_pair(t)
        c0 = _clean(*pair[0])
        shift = _clean(*pair[1]) - c0
        if stat == "xx":
            w = np.r_[np.ones(k), np.zeros(_D)]
        elif stat == "xy":
            w = np.r_[np.zeros(k), np.ones(_D)]
        else:
            v_xx, v_xy = measured_variances(t)
            # a floor far below any calibrated noise: a channel without noise gets a huge
            # finite weight
            w = np.r_[np.full(k, 1.0 / max(v_xx, 1e-300)), np.full(_D, 1.0 / max(v_xy, 1e-300))]
        r = _release_of(*pair[side], spawn_rows(rng, trials))
        return (r - c0) @ (w * shift)
    return release


def _label(name: str, stat: str) -> str:
    return f"{name}, {stat}"


_PLACEMENTS = {"t*": worst_cosine(), "orthogonal": 0.0, "aligned": 1.0}
_STATS = ("weighted", "xy", "xx")
_QUICK = {_label("t*", s): _ssp_release(_PLACEMENTS["t*"], s) for s in _STATS}
# (the aligned placement leaves XᵀX unchanged: its "xx" statistic carries nothing)
_FULL = {_label(p, s): _ssp_release(t, s) for p, t in _PLACEMENTS.items() if p != "t*"
         for s in _STATS if not (p == "aligned" and s == "xx")}


def ssp_claim() -> float:
    """ε(δ) SSP reports for this instance (``info["epsilon_guarantee"]``, dp-accounting of its
    Gaussian event), from a one-row run so that an accountant bug shows in the claim."""
    return float(_ssp_info()["epsilon_guarantee"])


def _ssp_info() -> dict:
    X0, y0 = _BX * np.eye(_D), np.zeros(_D)       # XᵀX invertible: the solves run
    res = ssp_mod.ssp(FixedStream.of(X0, y0), _D, epsilon=SSP_EPSILON, delta=SSP_DELTA, B_x=_BX,
                      B_y=_BY, rng=[np.random.default_rng(0)])
    return res.info


def ssp_claim_at(delta: float) -> float:
    """The claimed profile δ ↦ ε(δ): dp-accounting's ε at ``delta`` of the Gaussian event with
    the multiplier α SSP reports (calibrated at ε = 4, δ = 10⁻⁶), as SSP computes its
    ``epsilon_guarantee`` at its own δ."""
    return float(accounting.epsilon(accounting.gaussian_event(float(_ssp_info()["alpha"])),
                                    delta))


def ssp_exact(t: float | None = None) -> float:
    """PLD ε(δ) of the release on the placement at cosine t (default t*): a Gaussian with
    multiplier α·Δ/Δ_actual, α and Δ recomputed here (``ssp_multiplier`` is dp-accounting's
    exact calibration, tests/test_linreg_thm31.py; Δ by its formula)."""
    t = worst_cosine() if t is None else t
    (X0, y0), (X1, y1) = ssp_pair(t)
    moved = float(np.linalg.norm(_clean(X1, y1) - _clean(X0, y0)))
    delta_claimed = math.sqrt(2.0 * _BX**4 + 4.0 * _BX**2 * _BY**2)
    z = ssp_mod.ssp_multiplier(SSP_EPSILON, SSP_DELTA) * delta_claimed / moved
    return exact_gaussian_epsilon(z, 1, SSP_DELTA)


# =============================================================================================
# injected bugs
# =============================================================================================
def xty_noise_omitted(orig):
    """``make(orig)`` for ``gaussian_noise`` in the SSP module: the last d of the d² + d
    coordinates (the Xᵀy part) get no noise; XᵀX's noise and everything reported unchanged."""
    def gaussian_noise(gens, shape):
        z = orig(gens, shape)
        k = int(shape)
        d = int(round((math.sqrt(1.0 + 4.0 * k) - 1.0) / 2.0))
        z[:, d * d:] = 0.0
        return z
    return gaussian_noise


def add_remove_sensitivity(orig):
    """``make(orig)`` for ``ssp_sensitivity`` in the SSP module: the add/remove sensitivity
    √(B_x⁴ + B_x²B_y²) (one record's (xxᵀ, xy)) for the replace-one claim."""
    return lambda B_x, B_y: math.sqrt(B_x**4 + B_x**2 * B_y**2)


register_audit(AuditTarget(
    name="linreg.ssp", paper="linreg",
    algorithm=f"algorithms.linreg.ssp.ssp (SSP), ε = {SSP_EPSILON:g}, the linreg.ssp.* domain",
    relation="replace-one", delta=SSP_DELTA, claimed_epsilon=ssp_claim,
    claimed_epsilon_at=ssp_claim_at, candidates=_QUICK,
    full_candidates=_FULL, view="mechanism", trials=40_000, full_trials=200_000,
    search_trials=4_000, exact_epsilon=ssp_exact,
    note="canary (B_x·e1, B_y) vs (B_x·(t e1 + √(1−t²) e2), −B_y) beside one (0, 0) record, "
         "t searched (t* = B_y²/(2B_x²) moves the release most); statistic: each part's "
         "projection on its shift, or both weighted by measured noise; exact ε at t*'s actual "
         "sensitivity, below the claim"))
register_audit(AuditTarget(
    name="linreg.ssp.xty_noise_omitted", paper="linreg",
    algorithm="SSP adding no noise to Xᵀy (accounting unchanged)",
    relation="replace-one", delta=SSP_DELTA, claimed_epsilon=ssp_claim,
    claimed_epsilon_at=ssp_claim_at,
    release=with_mutant("linreg.ssp.xty_noise_omitted",
                        _ssp_release(_PLACEMENTS["t*"], "weighted")),
    view="mechanism", trials=2_000, expect="broken",
    note="placement t*, both parts weighted by their measured noise: the Xᵀy part's measured "
         "variance is 0, so its shift separates D from D′"))
