"""Input validation at the public boundary: every check raises ``ValueError`` naming the
parameter and its allowed range, never returns NaN or clamps silently."""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["check_positive", "check_nonnegative", "check_open_interval", "check_interval",
           "check_int", "check_finite_array", "check_delta", "check_epsilon"]


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_positive(name: str, value) -> float:
    """``value`` in (0, ∞)."""
    v = _real(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be in (0, inf), got {value!r}")
    return v


def check_nonnegative(name: str, value) -> float:
    """``value`` in [0, ∞)."""
    v = _real(name, value)
    if v < 0:
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return v


def check_open_interval(name: str, value, lo: float, hi: float) -> float:
    """``value`` in (lo, hi)."""
    v = _real(name, value)
    if not lo < v < hi:
        raise ValueError(f"{name} must be in ({lo}, {hi}), got {value!r}")
    return v


def check_interval(name: str, value, lo: float, hi: float, *, closed_hi: bool = False) -> float:
    """``value`` in [lo, hi) (or [lo, hi] with ``closed_hi``)."""
    v = _real(name, value)
    ok = lo <= v <= hi if closed_hi else lo <= v < hi
    if not ok:
        raise ValueError(f"{name} must be in [{lo}, {hi}{']' if closed_hi else ')'}, got {value!r}")
    return v


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` an integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_epsilon(value, name: str = "epsilon") -> float:
    """Privacy ε in (0, ∞)."""
    return check_positive(name, value)


def check_delta(value, name: str = "delta") -> float:
    """Privacy δ in (0, 1)."""
    return check_open_interval(name, value, 0.0, 1.0)


def check_finite_array(name: str, value, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """A float array with only finite entries (and the given number of dimensions)."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if a.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return a
