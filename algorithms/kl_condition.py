"""Algorithms of Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private Non-Convex
Optimization under the KL Condition with Optimal Rates" (``kl_condition_zcdp.txt``).

All are full-batch and ρ-zCDP under replace-one neighbours (the paper's Definition 2), so the
mean gradient of L0-Lipschitz losses has sensitivity 2L0/n
(:func:`algorithms.primitives.mean_gradient_sensitivity`).  Every function spends exactly the
target ρ as computed by dp-accounting; where the paper's printed noise spends a different amount
the correction is documented (docs/errata.md).

* :func:`noisy_gd` — Algorithm 4 (Appendix E, Theorem 9).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Problem, Result
from algorithms.primitives import (as_generators, mean_gradient_sensitivity, project_ball)
from algorithms.validation import check_finite_array, check_int, check_open_interval, check_positive

__all__ = ["noisy_gd", "noisy_gd_steps"]


def noisy_gd_steps(n: int, d: int, rho: float, beta: float) -> int:
    """Theorem 9's iteration count T = ⌈n²ρ log²(2/β)/d⌉ (at least 1)."""
    n, d = check_int("n", n), check_int("d", d)
    rho = check_positive("rho", rho)
    beta = check_open_interval("beta", beta, 0.0, 1.0)
    return max(1, math.ceil(n * n * rho * math.log(2.0 / beta) ** 2 / d))


def noisy_gd(problem: Problem, *, rho: float, w0: np.ndarray, L0: float, L1t: float,
             beta: float = 0.1, T: int | None = None, max_steps: int | None = None,
             rng: np.random.Generator | Sequence[np.random.Generator]) -> Result:
    """Algorithm 4: noisy projected gradient descent on F̃(w) = F(w) + L̃1‖w − w0‖².

    For t = 1..T−1: w_{t+1} = Π_{B(w0, L0/(2L̃1))}(w_t − η_t(∇F̃(w_t) + ξ_t)), η_t = 1/(L̃1 t),
    ξ_t ~ N(0, σ²I); output w̄ = 2/(T(T+1)) Σ_{t=1}^T t·w_t, with w_1 = w0.

    Privacy (replace-one): each ∇F̃(w_t) has sensitivity Δ = 2L0/n (the regulariser is data
    independent).  The paper's σ² = 4L0²T/(n²ρ) makes each of the T−1 releases Δ²/(2σ²) =
    ρ/(2T)-zCDP, ρ/2 in total; we set σ = Δ·√((T−1)/(2ρ)) so that the total is exactly ρ
    (errata KL-E1).  Slopes are unaffected; the constant improves by 2.

    Parameters
    ----------
    problem: the data term F, with L0-Lipschitz, L̃1-weakly convex per-example losses.
    rho: zCDP budget, > 0.
    w0: start and regularisation centre, shape (d,).
    L0, L1t: Lipschitz and weak-convexity constants (> 0).
    beta: failure probability in (0, 1), used only to set T.
    T: iteration count; default Theorem 9's ⌈n²ρ log²(2/β)/d⌉.
    max_steps: optional cap on T (reported in ``info["capped"]``), for inner loops whose
        theoretical T is infeasible.
    rng: a Generator, or one per seed row (output then has shape (R, d)).
    """
    rho = check_positive("rho", rho)
    L0 = check_positive("L0", L0)
    L1t = check_positive("L1t", L1t)
    beta = check_open_interval("beta", beta, 0.0, 1.0)
    w0 = check_finite_array("w0", w0, ndim=1)
    if w0.shape[0] != problem.d:
        raise ValueError(f"w0 must have shape ({problem.d},), got {w0.shape}")
    T_theory = noisy_gd_steps(problem.n, problem.d, rho, beta)
    T = T_theory if T is None else check_int("T", T)
    capped = False
    if max_steps is not None and T > check_int("max_steps", max_steps):
        T, capped = max_steps, True

    gens = as_generators(rng)
    single = isinstance(rng, np.random.Generator)
    R, dim = len(gens), problem.d
    delta_sens = mean_gradient_sensitivity(L0, problem.n, accounting.REPLACE_ONE)
    steps = T - 1
    sigma = delta_sens * accounting.noise_multiplier_for_zcdp(rho, steps) if steps else 0.0
    radius = L0 / (2.0 * L1t)

    evals0 = problem.grad_evals
    w = np.broadcast_to(w0, (R, dim)).copy()
    wsum = w.copy()                      # Σ t·w_t, t = 1 term
    # Noise is drawn in blocks whose size depends only on d, so a row's numbers are the same
    # whatever R is and whichever executor runs it.
    block = max(1, (1 << 18) // dim)
    t = 1
    while t <= steps:
        m = min(block, steps - t + 1)
        noise = np.stack([g.standard_normal((m, dim)) for g in gens], axis=1) * sigma
        for j in range(m):
            grad = problem.gradient(w) + 2.0 * L1t * (w - w0)
            w = project_ball(w - (grad + noise[j]) / (L1t * t), w0, radius)
            t += 1
            wsum += t * w
    w_bar = wsum * (2.0 / (T * (T + 1)))

    if steps:
        z = sigma / delta_sens
        event = accounting.gaussian_event(z, steps)
    else:
        z, event = math.inf, accounting.composed([])
    spent = accounting.PrivacySpent.from_event(event, relation=accounting.REPLACE_ONE,
                                               target_rho=rho, sensitivity=delta_sens,
                                               noise_multiplier=z, releases=steps)
    evals = (problem.grad_evals - evals0) // R
    return Result(w=w_bar[0] if single else w_bar, privacy=spent, grad_evals=evals,
                  info={"T": T, "T_theory": T_theory, "capped": capped, "sigma": sigma,
                        "radius": radius})
