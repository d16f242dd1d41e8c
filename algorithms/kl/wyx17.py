"""The prior algorithm the KL paper (Menart et al.) compares against under the PL condition:
noisy gradient descent of [48] = WYX17 (Wang, Ye, Xu 2017), cited in the KL paper's Section 1 and
Section 1.2 for the rate Õ(d/(n²ε²)) on the excess empirical risk of L0-Lipschitz, L1-smooth
losses satisfying the PL condition (κ = 2), and after Theorem 5 (Section 5.1) for the rate
Õ((√d/(n√ρ))^{1/2}) on the gradient norm of smooth non-convex losses.

The KL paper gives the algorithm only by name ("noisy gradient descent"); the reading implemented
is the plain full-batch form: constant step η = 1/L1, no projection,

    w_{t+1} = w_t − (∇F(w_t) + ξ_t)/L1,   ξ_t ~ N(0, σ²I),   t = 1..T,

with σ = (2L0/n)·√(T/(2ρ)), so that the T releases (each of replace-one sensitivity 2L0/n) spend
exactly ρ (zCDP; dp-accounting on the noise actually drawn).  Under PL (F − F* ≤ ‖∇F‖²/(2μ)) the
optimisation error contracts by (1 − μ/L1) per step, so the step count is logarithmic,
T = ⌈c_T (L1/μ) log(n²ρ/d)⌉: with c_T = 2 the optimisation error F0·(d/(n²ρ))² falls below the
noise's dσ²/(2μ)-order term, which is the rate.  For stationary points the count is the
polynomial T = ⌈n√ρ/√d⌉ and the output a uniformly random iterate (data independent, so it costs
nothing).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Problem, Result
from algorithms.primitives import as_generators, mean_gradient_sensitivity
from algorithms.validation import check_finite_array, check_int, check_positive
from algorithms.kl.common import Observer, _counted_gradient, _emit, _noise_block

__all__ = ["wyx17_noisy_gd", "wyx17_pl_steps", "wyx17_stationary_steps"]


def wyx17_pl_steps(n: int, d: int, rho: float, L1: float, mu: float, c_T: float = 2.0) -> int:
    """T = ⌈c_T (L1/μ) log(n²ρ/d)⌉ (at least 1): the logarithmic count of noisy GD under PL."""
    n, d = check_int("n", n), check_int("d", d)
    rho, L1, mu = check_positive("rho", rho), check_positive("L1", L1), check_positive("mu", mu)
    c_T = check_positive("c_T", c_T)
    return max(1, math.ceil(c_T * (L1 / mu) * math.log(max(n * n * rho / d, math.e))))


def wyx17_stationary_steps(n: int, d: int, rho: float) -> int:
    """T = ⌈n√ρ/√d⌉ (at least 1): the count of noisy GD for stationary points."""
    n, d = check_int("n", n), check_int("d", d)
    rho = check_positive("rho", rho)
    return max(1, math.ceil(n * math.sqrt(rho) / math.sqrt(d)))


def wyx17_noisy_gd(problem: Problem, *, rho: float, w0: np.ndarray, L0: float, L1: float, T: int,
                   rng: np.random.Generator | Sequence[np.random.Generator],
                   output: str = "last", noise_factor: float = 1.0,
                   observe: Observer | None = None) -> Result:
    """Noisy gradient descent w_{t+1} = w_t − (∇F(w_t) + ξ_t)/L1 for T steps, ρ-zCDP.

    Parameters
    ----------
    problem: F, with L0-Lipschitz, L1-smooth per-example losses.
    rho: zCDP budget (> 0) that σ is calibrated to.
    w0: start, shape (d,).
    L0, L1: Lipschitz and smoothness constants (> 0); η = 1/L1.
    T: number of noisy steps (releases), ≥ 1 (:func:`wyx17_pl_steps`, :func:`wyx17_stationary_steps`).
    rng: a Generator, or one per seed row (output then has shape (R, d)).
    output: ``"last"`` (w_{T+1}, the PL form) or ``"random"`` (w_τ, τ uniform on 1..T+1 per row,
        drawn from the row's generator after its noise; the stationary-point form).
    noise_factor: multiplies σ; 1 is the algorithm.  The privacy reported is computed from the
        noise actually drawn (σ·noise_factor), so a factor above 1 spends less than ρ and a
        factor 0 is not private (``privacy.rho`` = inf).
    observe: optional :data:`Observer`, called once per release with kind ``"gradient"``.
    """
    rho = check_positive("rho", rho)
    L0, L1 = check_positive("L0", L0), check_positive("L1", L1)
    T = check_int("T", T)
    w0 = check_finite_array("w0", w0, ndim=1)
    if w0.shape[0] != problem.d:
        raise ValueError(f"w0 must have shape ({problem.d},), got {w0.shape}")
    if output not in ("last", "random"):
        raise ValueError(f"output must be 'last' or 'random', got {output!r}")
    if not (isinstance(noise_factor, (int, float)) and 0.0 <= noise_factor < math.inf):
        raise ValueError(f"noise_factor must be in [0, inf), got {noise_factor!r}")
    gens = as_generators(rng)
    single = isinstance(rng, np.random.Generator)
    R, dim = len(gens), problem.d
    sens = mean_gradient_sensitivity(L0, problem.n, accounting.REPLACE_ONE)
    sigma = sens * accounting.noise_multiplier_for_zcdp(rho, T) * noise_factor

    evals0 = problem.grad_evals
    gradient, uncounted = _counted_gradient(problem, R)
    w = np.broadcast_to(w0, (R, dim)).copy()
    # The random output index is fixed before the run from each row's own stream (spawned, so
    # the noise draws are the same whichever output is asked for).
    picks = (np.array([g.spawn(1)[0].integers(1, T + 2) for g in gens]) if output == "random"
             else np.full(R, T + 1))
    out = w.copy() if output == "random" else None
    rows = np.arange(R)
    block = max(1, (1 << 18) // dim)
    t = 1
    while t <= T:
        m = min(block, T - t + 1)
        noise = _noise_block(gens, m, dim) * sigma
        for j in range(m):
            g = gradient(w)
            if observe is not None and getattr(observe, "listening", True):
                _emit(observe, "gradient", rows, g + noise[j], sigma, lambda: g)
            w = w - (g + noise[j]) / L1
            t += 1
            if out is not None:
                hit = picks == t
                if hit.any():
                    out[hit] = w[hit]
    problem.grad_evals += uncounted * T
    w_out = w if out is None else out        # rows with τ = 1 kept w0

    if sigma > 0.0:
        z = sigma / sens
        event = accounting.gaussian_event(z, T)
    else:
        z, event = 0.0, None
    if event is not None:
        spent = accounting.PrivacySpent.from_event(event, relation=accounting.REPLACE_ONE,
                                                   target_rho=rho, sensitivity=sens,
                                                   noise_multiplier=z, releases=T)
    else:
        spent = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE,
                                        math.inf, rho, {"releases": T}, math.inf)
    evals = (problem.grad_evals - evals0) // R
    return Result(w=w_out[0] if single else w_out, privacy=spent, grad_evals=evals,
                  info={"T": T, "sigma": sigma, "picks": picks})
