"""Objective perturbation for linear regression (Kifer, Smith, Thakurta 2012, Algorithm 1 with
Gaussian noise; Chaudhuri et al. 2011), the DP-ERM method Varshney, Thakurta, Jain, "(Nearly)
Optimal Private Linear Regression via Adaptive Clipping" cite in §1 beside DP-SGD (privacy term
L‖C‖√d/(εN) with L ≈ d for ‖C‖ = O(1)) and whose class Theorem 3.2 Remark ii puts at
≈ d²R_x²‖w*‖²/(ε²n²).

Each record is projected onto ‖x‖ ≤ B_x, |y| ≤ B_y (as in :mod:`algorithms.linreg.ssp`), and the
output is

    w = argmin_{‖w‖ ≤ B_w}  Σ_i ½(⟨x_i, w⟩ − y_i)² + (Λ/2)‖w‖² + ⟨b, w⟩,   b ~ N(0, σ_b² I_d).

On the ball C = {‖w‖ ≤ B_w} the per-record gradient (⟨x, w⟩ − y)x has norm at most
ζ = B_x(B_xB_w + B_y), so under replace-one the noise's argument moves by at most 2ζ, and the
Hessian xxᵀ of one record is rank one with eigenvalue at most λ = B_x².  KST12's privacy proof
splits the privacy loss into the Jacobian of b ↦ w, whose ratio between neighbours is
(1 + xᵀM₀⁻¹x)/(1 + x′ᵀM₀⁻¹x′) ∈ [(1 + λ/Λ)⁻¹, 1 + λ/Λ] (M₀ ⪰ ΛI the other records' Hessian plus
Λ), so ε_J = log(1 + λ/Λ), and the Gaussian density ratio of b, a Gaussian mechanism of
ℓ₂-sensitivity 2ζ.  Λ = 2λ/ε is KST12's regulariser (ε_J = log(1 + ε/2) < ε); the noise
multiplier z = σ_b/(2ζ) is calibrated by dp-accounting so that the Gaussian part is exactly
(ε − ε_J, δ)-DP under replace-one, in place of KST12's closed-form noise.  The reported ε is
ε_J plus dp-accounting's ε of that Gaussian event: the split of the privacy loss that KST12's
proof makes, read as a composition (the Gaussian part's shift depends on the output through the
gradient at w; no audit checks the split).

A noise-free, unregularised, unconstrained solve on the same projected data (ordinary least
squares) is returned beside the private one, so ½‖w − w_ref‖²_H is the privacy term alone (the
noise, the regulariser Λ and the constraint together).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Result
from algorithms.linreg.design import LinearRegressionDesign, Observer, _check_observer, \
    _measures, _streams, gaussian_noise
from algorithms.linreg.ssp import projected_statistics, ssp_multiplier
from algorithms.primitives import as_generators
from algorithms.validation import check_delta, check_finite_array, check_int, check_positive

__all__ = ["objpert_parameters", "objpert_solve", "objective_perturbation"]


def objpert_parameters(epsilon: float, delta: float, B_x: float, B_y: float,
                       B_w: float) -> dict:
    """KST12's constants on the domain: ζ (Lipschitz constant over the ball), λ (the rank-one
    Hessian's eigenvalue bound), Λ = 2λ/ε, ε_J = log(1 + λ/Λ), the Gaussian part's ε_G = ε − ε_J,
    its noise multiplier z (dp-accounting, exactly (ε_G, δ)) and the noise std σ_b = 2ζz."""
    eps = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    B_x = check_positive("B_x", B_x)
    B_y = check_positive("B_y", B_y)
    B_w = check_positive("B_w", B_w)
    zeta = B_x * (B_x * B_w + B_y)
    lam = B_x**2
    Lam = 2.0 * lam / eps
    eps_j = math.log1p(lam / Lam)
    eps_g = eps - eps_j
    z = ssp_multiplier(eps_g, delta)
    return {"zeta": zeta, "lambda": lam, "Lambda": Lam, "epsilon_jacobian": eps_j,
            "epsilon_gaussian": eps_g, "noise_multiplier": z, "noise_std": 2.0 * zeta * z,
            "sensitivity": 2.0 * zeta}


def objpert_solve(A: np.ndarray, c: np.ndarray, B_w: float) -> tuple[np.ndarray, np.ndarray]:
    """argmin_{‖w‖ ≤ B_w} ½wᵀAw − cᵀw for symmetric positive definite A, per row (A: (R, d, d),
    c: (R, d)), and whether the constraint was active.  Outside the ball the minimiser is
    (A + μI)⁻¹c with ‖(A + μI)⁻¹c‖ = B_w (μ > 0; no hard case since A ≻ 0), found by bisection
    on log μ in A's eigenbasis."""
    A = check_finite_array("A", A, ndim=3)
    c = check_finite_array("c", c, ndim=2)
    B_w = check_positive("B_w", B_w)
    if A.shape[1:] != (c.shape[1], c.shape[1]) or A.shape[0] != c.shape[0]:
        raise ValueError(f"A must have shape (R, d, d) and c (R, d), got {A.shape} and {c.shape}")
    ev, Q = np.linalg.eigh(0.5 * (A + np.swapaxes(A, 1, 2)))
    if np.any(ev <= 0):
        raise ValueError("A must be positive definite (its smallest eigenvalue is "
                         f"{float(ev.min()):.3g})")
    g = np.einsum("rji,rj->ri", Q, c)
    w = np.einsum("rij,rj->ri", Q, g / ev)
    active = np.linalg.norm(w, axis=1) > B_w
    if np.any(active):
        ga, eva = g[active], ev[active]
        lo = np.full(len(ga), -60.0)
        hi = np.log(np.linalg.norm(ga, axis=1) / B_w)   # at μ = ‖c‖/B_w the norm is ≤ B_w
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            norm = np.linalg.norm(ga / (eva + np.exp(mid)[:, None]), axis=1)
            outside = norm > B_w
            lo = np.where(outside, mid, lo)
            hi = np.where(outside, hi, mid)
        mu = np.exp(hi)
        w[active] = np.einsum("rij,rj->ri", Q[active], ga / (eva + mu[:, None]))
    return w, active


def objective_perturbation(design: LinearRegressionDesign, n: int, *, epsilon: float,
                           delta: float, B_x: float, B_y: float, B_w: float,
                           rng: np.random.Generator | Sequence[np.random.Generator],
                           private: bool = True, observe: Observer | None = None) -> Result:
    """Objective perturbation on n streamed samples per seed row, with an OLS reference on the
    same projected data.

    ``observe(kind, t, rows, released, sigma)`` sees the noisy linear term (kind ``"linear"``:
    Xᵀy − b, shape (R, d), std σ_b); a measuring observer also gets ``clean=`` (Xᵀy).
    ``private=False`` adds no noise and no regulariser (the OLS solve, constrained to the ball)."""
    n = check_int("n", n, minimum=2)
    par = objpert_parameters(epsilon, delta, B_x, B_y, B_w)
    observe = _check_observer(observe)
    gens = as_generators(rng)
    data, noise = _streams(gens)
    R, d = len(gens), design.d
    A, c, clipped = projected_statistics(design, data, n, B_x, B_y, R)
    std = par["noise_std"] if private else 0.0
    Lam = par["Lambda"] if private else 0.0
    released = c - std * gaussian_noise(noise, d) if std > 0 else c.copy()
    if observe is not None:
        observe("linear", 0, np.arange(R), released, np.full(R, std),
                **({"clean": c} if _measures(observe) else {}))
    w, active = objpert_solve(A + Lam * np.eye(d), released, B_w)
    w_ref = np.linalg.solve(A, c[..., None])[..., 0]
    info = {"w_reference": w_ref, "clip_fraction": clipped / n, "constraint_active": active,
            "B_x": B_x, "B_y": B_y, "B_w": B_w, **par}
    if private:
        ev = accounting.gaussian_event(par["noise_multiplier"])
        rho = accounting.zcdp_rho(ev)
        privacy = accounting.PrivacySpent.from_event(
            ev, target_rho=rho, guarantee_rho=rho, epsilon_jacobian=par["epsilon_jacobian"])
        info["epsilon_guarantee"] = par["epsilon_jacobian"] + accounting.epsilon(ev, delta)
    else:
        info.update(noise_std=0.0, Lambda=0.0)
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
        info["epsilon_guarantee"] = 0.0
    return Result(w=w, privacy=privacy, grad_evals=n, info=info)
