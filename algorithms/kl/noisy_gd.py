"""Algorithm 4 of the KL paper (Menart et al., Appendix E, Theorem 9): noisy projected gradient
descent on the L̃1-strongly convex F̃(w) = F(w) + L̃1‖w − w0‖², ρ-zCDP under replace-one
neighbours (Definition 2); also the inner solver of Algorithm 2 (:mod:`algorithms.kl.proximal`).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Problem, Result
from algorithms.primitives import as_generators, mean_gradient_sensitivity
from algorithms.validation import check_finite_array, check_int, check_open_interval, check_positive
from algorithms.kl.common import (Observer, _counted_gradient, _emit, _inside_threshold,
                                  _noise_block, _project_offset)


def noisy_gd_steps(n: int, d: int, rho: float, beta: float) -> int:
    """Theorem 9's iteration count T = ⌈n²ρ log²(2/β)/d⌉ (at least 1)."""
    n, d = check_int("n", n), check_int("d", d)
    rho = check_positive("rho", rho)
    beta = check_open_interval("beta", beta, 0.0, 1.0)
    return max(1, math.ceil(n * n * rho * math.log(2.0 / beta) ** 2 / d))


def noisy_gd(problem: Problem, *, rho: float, w0: np.ndarray, L0: float, L1t: float,
             beta: float = 0.1, T: int | None = None, max_steps: int | None = None,
             rng: np.random.Generator | Sequence[np.random.Generator],
             observe: Observer | None = None, track_distance: bool = False) -> Result:
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
    w0: start and regularisation centre, shape (d,), or (R, d) with one centre per seed row
        (Algorithm 2 calls this with each row's own previous iterate).
    L0, L1t: Lipschitz and weak-convexity constants (> 0).
    beta: failure probability in (0, 1), used only to set T.
    T: iteration count; default Theorem 9's ⌈n²ρ log²(2/β)/d⌉.
    max_steps: optional cap on T (reported in ``info["capped"]``), for inner loops whose
        theoretical T is infeasible.
    rng: a Generator, or one per seed row (output then has shape (R, d)).
    observe: optional :data:`Observer`, called once per release with kind ``"gradient"``, all
        rows, the released ∇F(w_t) + ξ_t (the data-dependent part; the regulariser's gradient is
        public) and σ — for step-by-step privacy audits and noise measurements.
    track_distance: record ``info["max_dist"]``, max over t of ‖w_t − w0‖ per row, measured on
        the iterates actually produced (the invariant the projection guarantees: ≤ L0/(2L̃1)).
    """
    rho = check_positive("rho", rho)
    L0 = check_positive("L0", L0)
    L1t = check_positive("L1t", L1t)
    beta = check_open_interval("beta", beta, 0.0, 1.0)
    w0 = check_finite_array("w0", w0, ndim=(1, 2))
    if w0.shape[-1] != problem.d:
        raise ValueError(f"w0 must have shape ({problem.d},) or (R, {problem.d}), got {w0.shape}")
    T_theory = noisy_gd_steps(problem.n, problem.d, rho, beta)
    T = T_theory if T is None else check_int("T", T)
    capped = False
    if max_steps is not None and T > check_int("max_steps", max_steps):
        T, capped = max_steps, True

    gens = as_generators(rng)
    single = isinstance(rng, np.random.Generator)
    R, dim = len(gens), problem.d
    if w0.ndim == 2 and (single or w0.shape[0] != R):
        raise ValueError(f"w0 of shape {w0.shape} needs a sequence of {w0.shape[0]} generators, one per row")
    delta_sens = mean_gradient_sensitivity(L0, problem.n, accounting.REPLACE_ONE)
    steps = T - 1
    sigma = delta_sens * accounting.noise_multiplier_for_zcdp(rho, steps) if steps else 0.0
    radius = L0 / (2.0 * L1t)

    evals0 = problem.grad_evals
    w = np.broadcast_to(w0, (R, dim)).copy()
    wsum = w.copy()                      # Σ t·w_t, t = 1 term
    # max_t ‖w_t − w0‖², square-rooted once at the end: sqrt is monotone and correctly
    # rounded, so that is the max of the norms, bit for bit, at one ufunc less per step.
    max_sq = np.zeros(R)
    reg = 2.0 * L1t
    all_rows = np.arange(R)
    diff = w - w0                        # w_t − w0: the regulariser's gradient and the distance
    inside = _inside_threshold(radius, dim)
    gradient, uncounted = _counted_gradient(problem, R)   # this loop runs ~10⁵ steps per call
    # Noise is drawn in blocks whose size depends only on d, so a row's numbers are the same
    # whatever R is and whichever executor runs it.
    block = max(1, (1 << 18) // dim)
    t = 1
    while t <= steps:
        m = min(block, steps - t + 1)
        noise = _noise_block(gens, m, dim)
        noise *= sigma                   # in place: a block is up to 2¹⁸ numbers per row
        for j in range(m):
            data_grad = gradient(w)
            if observe is not None and getattr(observe, "listening", True):
                _emit(observe, "gradient", all_rows, data_grad + noise[j], sigma,
                      lambda: data_grad)
            # w − (∇F(w) + 2L̃1(w − w0) + ξ)/(L̃1 t), one buffer; each operation is the one the
            # formula names, on the same operands (addition commutes exactly), so the numbers
            # are those of the formula written out.
            step = diff * reg
            step += data_grad
            step += noise[j]
            step /= L1t * t
            np.subtract(w, step, out=step)
            w, diff, sq = _project_offset(step, w0, radius, inside, track_distance)
            t += 1
            wsum += t * w
            if track_distance:
                np.maximum(max_sq, sq, out=max_sq)
    w_bar = wsum * (2.0 / (T * (T + 1)))
    max_dist = np.sqrt(max_sq)
    problem.grad_evals += uncounted * steps

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
                        "radius": radius, "max_dist": max_dist if track_distance else None})
