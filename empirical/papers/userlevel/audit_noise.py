"""Measured noise of the user-level SCO paper's (Lowy, Liu, Asi) Algorithms 1 and 3 against the
theorems' σ recomputed independently (Theorem C.3 / Lemma C.2 for Algorithm 3, Theorem B.1 /
Lemma B.2 for Algorithm 1; tests/test_userlevel_audit.py).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.userlevel import sco as ul
from empirical.papers.userlevel import sensitivity as uls
from empirical.papers.userlevel.audit_canary import (ALG1, ALG3, CanaryUsers, _alg1_kw,
                                                     _alg3_kw, independent_multiplier)

__all__ = ["measure_alg3_noise", "measure_alg1_noise"]


def measure_alg3_noise(runs: int = 200, seed: int = 0) -> dict:
    """Algorithm 3 on the honest data of :data:`ALG3` (every gradient 0, so each release IS its
    noise).  Returns the measured per-coordinate std of phase 1's releases, the count, and the
    theorem's σ_1 = z·Δ_1 recomputed here: τ = L√(log(ndm)/m), Δ_1 the corrected Lemma C.2
    bound (empirical.papers.userlevel.sensitivity, UL-E13),
    T_1 = ⌈c_T⌉ (β = 0), n_1 = ⌊(1 − 2^{−½})n/2^{½}⌋, K_1 = n_1 (c_K2 n_1ε/√T_1 ≥ n_1),
    z with dp-accounting's ε(T_1 Gaussians, δ/2) = ε/2 (2K_1 > n_1: no amplification)."""
    n, m, d, eps, dl, L = (ALG3[k] for k in ("n", "m", "d", "epsilon", "delta", "L"))
    T = int(math.ceil(ALG3["c_T"]))
    n1 = int(math.floor((1 - 2 ** -0.5) * n / 2 ** 0.5))
    K = n1
    tau = L * math.sqrt(math.log(n * d * m) / m)
    sigma = independent_multiplier(eps / 2.0, T, dl / 2.0) * uls.alg3_phase_sensitivity(
        tau, K, T, eps, dl)
    data = CanaryUsers(np.zeros((n, d)), m, L, ALG3["R"])
    acc: list[np.ndarray] = []
    used = []

    def obs(kind, released, s, info):
        if info["phase"] == 1:
            acc.append(np.array(released))
            used.append(s)
    for g in np.random.SeedSequence([seed, 31]).spawn(runs):
        ul.accelerated_phased_erm(data, eps, dl, np.random.Generator(np.random.PCG64(g)),
                                  observe=obs, **_alg3_kw())
    z = np.concatenate(acc)
    return {"std": float(np.sqrt(np.mean(z * z))), "count": int(z.size), "sigma": sigma,
            "sigma_used": float(np.max(used)), "T": T, "K": K}


def measure_alg1_noise(runs: int = 400, seed: int = 0) -> dict:
    """Algorithm 1 on honest data of :data:`ALG1` (all gradients 0): the released x_1 minus the
    outlier-removed mean is the noise; σ_1 = z·Δ_1 recomputed here with z from
    ε(Gaussian, δ/2) = 0.9ε (the Laplace score takes ε/10), Δ_1 the corrected Lemma B.2 bound,
    τ_1 = c_τη_1L√T_1 log(ndm), η_1 = c_ηR/(L√(dmnε))/2^{p}, p = J + 3/2, J = max(1, log m/log n),
    C = ⌈c_C log(20nme^ε/δ)/ε⌉, T_1 = ⌊n_1/C⌋m."""
    n, m, d, eps, dl, L, R = (ALG1[k] for k in ("n", "m", "d", "epsilon", "delta", "L", "R"))
    C = int(math.ceil(ALG1["c_C"] * math.log(20 * n * m * math.exp(eps) / dl) / eps))
    n1 = int(math.floor((1 - 2 ** -0.25) * n / 2 ** 0.25))
    T1 = (n1 // C) * m
    p = max(1.0, math.log(m) / math.log(n)) + 1.5
    eta1 = ALG1["c_eta"] * R / (L * math.sqrt(d * m * n * eps)) / 2 ** p
    tau1 = ALG1["c_tau"] * eta1 * L * math.sqrt(T1) * math.log(n * d * m)
    sigma = independent_multiplier(0.9 * eps, 1, dl / 2.0) * uls.alg1_phase_sensitivity(
        tau1, C, eps, dl)
    data = CanaryUsers(np.zeros((n, d)), m, L, R)
    acc = []

    def obs(kind, released, s, info):
        acc.append(np.asarray(released) - info["mean"])
    for g in np.random.SeedSequence([seed, 32]).spawn(runs):
        ul.phased_sgd_outlier_removal(data, eps, dl, np.random.Generator(np.random.PCG64(g)),
                                      observe=obs, **_alg1_kw())
    z = np.concatenate(acc)
    return {"std": float(np.sqrt(np.mean(z * z))), "count": int(z.size), "sigma": sigma, "C": C}
