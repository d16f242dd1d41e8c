"""Sufficient statistics perturbation (SSP), the prior efficient method Varshney, Thakurta, Jain,
"(Nearly) Optimal Private Linear Regression via Adaptive Clipping" compare against (§1: Smith et
al. 2017, Sheffet 2019, sample complexity Ω̃(d^{3/2}); Theorem 3.2 Remark ii: privacy term
≈ d²R_x²‖w*‖²/(ε²n²), d³/(ε²n²) for x ~ N(0, I)).

Each record is projected onto the bounded domain ‖x‖ ≤ B_x, |y| ≤ B_y (x scaled down to norm B_x,
y clipped to ±B_y), then one Gaussian mechanism releases the pair (XᵀX, Xᵀy) and the estimate is
w = (XᵀX + E)⁻¹(Xᵀy + e) (E symmetrised: post-processing).  Replace-one sensitivity of the pair
in ℓ₂: ‖xxᵀ − x′x′ᵀ‖²_F = ‖x‖⁴ + ‖x′‖⁴ − 2(xᵀx′)² ≤ 2B_x⁴ and ‖xy − x′y′‖ ≤ 2B_xB_y, so
Δ = √(2B_x⁴ + 4B_x²B_y²); the noise std is α·Δ with α calibrated by dp-accounting so that one
Gaussian release is exactly (ε, δ)-DP.  A noise-free reference solve on the same projected data
is returned beside the private one, so ½‖w − w_ref‖²_H is the privacy term alone.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.base import Result
from algorithms.linreg.design import CHUNK, LinearRegressionDesign, Observer, _check_observer, \
    _measures, _streams, gaussian_noise
from algorithms.primitives import as_generators
from algorithms.validation import check_delta, check_int, check_positive

__all__ = ["ssp", "ssp_sensitivity", "ssp_multiplier", "projected_statistics"]


def projected_statistics(design: LinearRegressionDesign, data: Sequence[np.random.Generator],
                         n: int, B_x: float, B_y: float,
                         R: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Σ x̃x̃ᵀ, Σ x̃ỹ, rows projected) over ``n`` rows streamed from ``design`` per seed: each x
    scaled into the ball of radius B_x and each y clipped to [−B_y, B_y], the bounded domain
    on which SSP's and objective perturbation's sensitivities hold."""
    d = design.d
    A = np.zeros((R, d, d))
    b = np.zeros((R, d))
    clipped = np.zeros(R)
    for start in range(0, n, CHUNK):
        X, y = design.sample(data, min(CHUNK, n - start))
        norm = np.sqrt(np.einsum("rkd,rkd->rk", X, X))
        scale = np.minimum(1.0, B_x / np.maximum(norm, 1e-300))
        yc = np.clip(y, -B_y, B_y)
        clipped += np.count_nonzero((scale < 1.0) | (yc != y), axis=1)
        if np.any(scale < 1.0):         # rare on the instances: skip the copy of X otherwise
            X = X * scale[..., None]    # (a new array: a caller's fixed data stay untouched)
        A += np.matmul(np.swapaxes(X, 1, 2), X)
        b += np.einsum("rkd,rk->rd", X, yc)
    return A, b, clipped


def ssp_sensitivity(B_x: float, B_y: float) -> float:
    """Replace-one ℓ₂ sensitivity of (XᵀX, Xᵀy) on ‖x‖ ≤ B_x, |y| ≤ B_y: √(2B_x⁴ + 4B_x²B_y²)."""
    B_x = check_positive("B_x", B_x)
    B_y = check_positive("B_y", B_y)
    return math.sqrt(2.0 * B_x**4 + 4.0 * B_x**2 * B_y**2)


@functools.lru_cache(maxsize=256)
def ssp_multiplier(epsilon: float, delta: float) -> float:
    """The noise multiplier α of one Gaussian release that dp-accounting certifies exactly
    (ε, δ)-DP (Brent's method in log α on dp-accounting's ε of the Gaussian event)."""
    eps = check_positive("epsilon", epsilon)
    delta = check_delta(delta)

    def f(log_a: float) -> float:
        return math.log(accounting.epsilon(accounting.gaussian_event(math.exp(log_a)), delta) / eps)

    lo, hi = math.log(1e-3), math.log(1e4)
    if f(lo) < 0 or f(hi) > 0:
        raise ValueError(f"epsilon must be in a range reachable with α in [1e-3, 1e4], got {eps}")
    return math.exp(brentq(f, lo, hi, xtol=1e-13, rtol=1e-13))


def ssp(design: LinearRegressionDesign, n: int, *, epsilon: float, delta: float, B_x: float,
        B_y: float, rng: np.random.Generator | Sequence[np.random.Generator],
        private: bool = True, observe: Observer | None = None) -> Result:
    """SSP on n streamed samples per seed row, with a noise-free reference on the same data.

    ``observe(kind, t, rows, released, sigma)`` sees the one release (kind ``"stats"``: the
    flattened pair, shape (R, d² + d), std α·Δ); a measuring observer also gets ``clean=``.
    ``private=False`` adds no noise (α = 0)."""
    n = check_int("n", n, minimum=2)
    B_x = check_positive("B_x", B_x)
    B_y = check_positive("B_y", B_y)
    observe = _check_observer(observe)
    gens = as_generators(rng)
    data, noise = _streams(gens)
    R, d = len(gens), design.d
    A, b, clipped = projected_statistics(design, data, n, B_x, B_y, R)
    sens = ssp_sensitivity(B_x, B_y)
    alpha = ssp_multiplier(epsilon, delta) if private else 0.0
    std = alpha * sens
    clean = np.concatenate([A.reshape(R, -1), b], axis=1)
    released = clean + std * gaussian_noise(noise, d * d + d) if std > 0 else clean.copy()
    if observe is not None:
        observe("stats", 0, np.arange(R), released, np.full(R, std),
                **({"clean": clean} if _measures(observe) else {}))
    A_p = released[:, :d * d].reshape(R, d, d)
    A_p = 0.5 * (A_p + np.swapaxes(A_p, 1, 2))
    w = np.linalg.solve(A_p, released[:, d * d:, None])[..., 0]
    w_ref = np.linalg.solve(A, b[..., None])[..., 0]
    info = {"w_reference": w_ref, "alpha": alpha, "sensitivity": sens, "noise_std": std,
            "clip_fraction": clipped / n, "B_x": B_x, "B_y": B_y}
    if private:
        ev = accounting.gaussian_event(alpha)
        rho = accounting.zcdp_rho(ev)
        privacy = accounting.PrivacySpent.from_event(ev, target_rho=rho, guarantee_rho=rho)
        info["epsilon_guarantee"] = accounting.epsilon(ev, delta)
    else:
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
        info["epsilon_guarantee"] = 0.0
    return Result(w=w, privacy=privacy, grad_evals=n, info=info)
