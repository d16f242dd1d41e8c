"""Algorithm 4 (private model selection, Theorem 4) of Tao et al., "Second-Order Convergence in
Private Stochastic Non-Convex Optimization": m clients release
noisy gradients and Hessians of held-out records at T candidates (eq. 141–142's errors), the
server returns the first candidate passing both thresholds.  The 2T releases per client are
composed adaptively (Lemma 16): the multiplier and the sensitivities are
:func:`algorithms.sosp.privacy.selection_multiplier` and
:func:`algorithms.sosp.privacy.selection_sensitivities`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from algorithms import accounting
from algorithms.primitives import as_generators
from algorithms.sosp.privacy import _selection_noise, selection_multiplier, selection_sensitivities
from algorithms.validation import (check_delta, check_finite_array, check_int, check_open_interval,
                                   check_positive)

__all__ = ["SelectionResult", "private_model_selection"]


@dataclass
class SelectionResult:
    """Per seed row: index of the selected candidate (−1: none passed), the thresholds used, the
    operator norm of the aggregated Hessian noise and the norm of the aggregated gradient noise
    at every candidate, and the privacy columns."""

    selected: np.ndarray
    grad_threshold: float
    hess_threshold: float
    sigma_grad: float
    sigma_hess: float
    z: float
    hess_error: np.ndarray     # (R, T) ‖∇²F̄(x_t) − ∇²F(x_t)‖_op
    grad_error: np.ndarray     # (R, T) ‖∇F̄(x_t) − ∇F(x_t)‖
    privacy: dict


def _selection_releases(gens: Sequence[np.random.Generator], rows: np.ndarray, X: np.ndarray,
                        n: int, m: int, client_grad_hess: Callable, sigma_g: float,
                        sigma_h: float, observe: Callable | None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 4's noisy client releases for a chunk of rows, averaged over clients:
    (k, T, d) gradients and (k, T, d, d) Hessians.  Row i spawns (records, noise) generators from
    gens[i] and draws its records, then θ, then the Hessian noise's upper triangle."""
    T, d = X.shape
    k = len(gens)
    iu = np.triu_indices(d)
    g_bar = np.empty((k, T, d))
    h_bar = np.empty((k, T, d, d))
    # One row at a time with one reused (m, T, d, d) buffer: at m = 10 on the real-data MLP
    # each such array is 60 MB, past glibc's mmap threshold, and the former whole-chunk
    # expression made six of them per row (each a fresh zero-filled mapping).
    H = np.empty((m, T, d, d))
    for i, gen in enumerate(gens):
        kd, kn = gen.spawn(2)
        gj, hj = client_grad_hess(kd, X, n)                      # (m, T, d), (m, T, d, d)
        theta = sigma_g * _selection_noise(kn, (m, T, d))
        upper = sigma_h * _selection_noise(kn, (m, T, iu[0].size))
        # The upper-triangular fill mirrored is exactly H + Hᵀ − H∘I of that fill: off the
        # diagonal x + 0 − 0 = x, on it 2x − x = x (both exact in floating point).
        H[..., iu[0], iu[1]] = upper
        H[..., iu[1], iu[0]] = upper
        g_rel = gj + theta
        np.add(hj, H, out=H)                                     # this row's h_rel
        if observe is not None:
            # an observer measuring the noise also gets each release's noise-free value
            wants = getattr(observe, "measures_noise", False)
            observe("gradient", int(rows[i]), g_rel, sigma_g, X, None,
                    **({"clean": gj} if wants else {}))
            observe("hessian", int(rows[i]), H.copy(), sigma_h, X, None,
                    **({"clean": hj} if wants else {}))
        # the mean over clients sums along a non-innermost axis, in client order, with or
        # without the former leading row axis: the same floats
        g_bar[i] = g_rel.mean(axis=0)
        h_bar[i] = H.mean(axis=0)
    return g_bar, h_bar


def _thresholds(alpha: float, rho_h: float, G_sens: float, M_sens: float, sigma_g: float,
                sigma_h: float, *, m: int, n: int, d: int, omega: float) -> tuple[float, float]:
    """Algorithm 4's tests ‖∇F̄‖ ≤ α + τ_g and λ_min(∇²F̄) ≥ −(√(ρα) + τ_H), with τ_g, τ_H the
    high-probability bounds on the sampling error and the aggregated noise (see
    :func:`private_model_selection`)."""
    tau_g = (2 * G_sens * math.sqrt(2 * math.log(8 * d / omega) / (m * n))
             + sigma_g / math.sqrt(m) * (math.sqrt(d) + math.sqrt(2 * math.log(16 / omega))))
    tau_h = (2 * M_sens * math.sqrt(2 * math.log(8 * d / omega) / (m * n))
             + sigma_h / math.sqrt(m) * (2 * math.sqrt(d) + math.sqrt(2 * math.log(32 / omega))))
    return alpha + tau_g, math.sqrt(rho_h * alpha) + tau_h


def private_model_selection(candidates: np.ndarray, *, client_grad_hess: Callable,
                            true_grad_hess: Callable, m: int, n: int, epsilon: float,
                            delta: float, alpha: float, G_sens: float, M_sens: float,
                            hessian_lipschitz: float, omega: float = 0.1,
                            rng: np.random.Generator | Sequence[np.random.Generator],
                            observe: Callable | None = None) -> SelectionResult:
    """Algorithm 4 on T candidates x_1..x_T (shape (T, d), the same list for every seed row).

    Every client j (held-out set S_j, |S_j| = n) releases, for each candidate,
      ∇F̄_j(x_t) = ∇f̂_{S_j}(x_t) + θ_{j,t},  θ ~ N(0, σ_g² I_d),  σ_g = z·2G_s/n;
      ∇²F̄_j(x_t) = ∇²f̂_{S_j}(x_t) + H_{j,t}, H symmetric with upper triangle (incl. diagonal)
                    i.i.d. N(0, σ_H²),  σ_H = z·2M_s√d/n  (Frobenius sensitivity ≤ √d × operator);
    2T Gaussian releases per client composed adaptively: z is calibrated by dp-accounting so that
    they are (ε, δ)-DP together (the paper's σ² ∝ T log(1/δ)/(n²ε²), with its d in σ_H²).
    The server averages and returns the first t with
      ‖∇F̄(x_t)‖ ≤ α + τ_g  and  λ_min(∇²F̄(x_t)) ≥ −(√(ρα) + τ_H),
    τ_g = 2G_s√(2 log(8d/ω)/(mn)) + (σ_g/√m)(√d + √(2 log(16/ω))),
    τ_H = 2M_s√(2 log(8d/ω)/(mn)) + (σ_H/√m)(2√d + √(2 log(32/ω)))
    (high-probability bounds on the sampling error and the noise: the paper's thresholds with the
    actual σ's; the Wigner matrix's ‖H‖_op ≈ 2σ√d).

    ``client_grad_hess(gen, X, n)`` → per-client (m, T, d) gradients and (m, T, d, d) Hessians of
    n fresh held-out records at the T candidates; ``true_grad_hess(X)`` → ((T, d), (T, d, d)).
    ``observe(kind, row, answer, sigma, X, None)``, if given, sees each row's per-client releases:
    kind ``"gradient"`` (m, T, d) and ``"hessian"`` (m, T, d, d) (privacy audits).
    """
    X = check_finite_array("candidates", candidates, ndim=2)
    T, d = X.shape
    m, n = check_int("m", m), check_int("n", n)
    epsilon, delta = check_positive("epsilon", epsilon), check_delta(delta)
    alpha = check_positive("alpha", alpha)
    G_sens, M_sens = check_positive("G_sens", G_sens), check_positive("M_sens", M_sens)
    rho_h = check_positive("hessian_lipschitz", hessian_lipschitz)
    omega = check_open_interval("omega", omega, 0.0, 1.0)
    gens = as_generators(rng)
    z = selection_multiplier(epsilon, delta, 2 * T)
    sens_g, sens_h = selection_sensitivities(G_sens, M_sens, d, n)
    sigma_g, sigma_h = z * sens_g, z * sens_h
    thr_g, thr_h = _thresholds(alpha, rho_h, G_sens, M_sens, sigma_g, sigma_h, m=m, n=n, d=d,
                               omega=omega)
    g_true, h_true = true_grad_hess(X)
    R = len(gens)
    selected = np.full(R, -1, dtype=np.int64)
    hess_err = np.zeros((R, T))
    grad_err = np.zeros((R, T))
    # rows in chunks of ≤ 2^21 Hessian entries (16 MB an array): every row still draws from
    # its own generators, the symmetrisation, averages and eigenvalues run on the chunk
    chunk = max(1, (1 << 21) // (m * T * d * d))
    for lo in range(0, R, chunk):
        rows = np.arange(lo, min(R, lo + chunk))
        g_bar, h_bar = _selection_releases([gens[i] for i in rows], rows, X, n, m,
                                           client_grad_hess, sigma_g, sigma_h, observe)
        grad_err[rows] = np.linalg.norm(g_bar - g_true, axis=-1)
        hess_err[rows] = np.abs(np.linalg.eigvalsh(h_bar - h_true)).max(axis=-1)
        lam = np.linalg.eigvalsh(h_bar)[..., 0]
        passed = (np.linalg.norm(g_bar, axis=-1) <= thr_g) & (lam >= -thr_h)   # (k, T)
        selected[rows] = np.where(passed.any(axis=1), passed.argmax(axis=1), -1)
    eps_g = accounting.epsilon(accounting.gaussian_event(z, 2 * T), delta)
    privacy = {"epsilon_guarantee": eps_g, "epsilon_spent": eps_g, "epsilon_target": epsilon,
               "releases_per_client": 2 * T}
    return SelectionResult(selected=selected, grad_threshold=thr_g, hess_threshold=thr_h,
                           sigma_grad=sigma_g, sigma_hess=sigma_h, z=z, hess_error=hess_err,
                           grad_error=grad_err, privacy=privacy)