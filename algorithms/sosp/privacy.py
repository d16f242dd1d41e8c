"""Privacy of Algorithms 2–4 of Tao et al., "Second-Order Convergence in Private Stochastic
Non-Convex Optimization": noise multipliers calibrated with
dp-accounting, replace-one sensitivities, and the noise draws.

Replace-one neighbours (errata SOSP-E2).  Each query of Ada-DP-SPIDER (Algorithms 2, 3) uses a
fresh, disjoint batch (each record at most once), so the run is (ε, δ)-DP if each query is
(parallel composition, Lemma 17: the paper's argument).  A query is a Gaussian mechanism with a
fixed noise multiplier z, calibrated with dp-accounting so that ε(GaussianDpEvent(z), δ) = ε;
its std is z times the query's sensitivity: 2G_s/b1 for O₁ (G_s bounds ‖∇f(x;z) − ∇f(x;z')‖/2,
the spread of per-record gradients), 2M_s‖x_{t−1} − x_{t−2}‖/b2 for O₂ (M_s bounds the
per-record smoothness of the data-dependent part).  The step ‖x_{t−1} − x_{t−2}‖ is a function
of earlier released outputs, so the sensitivity of O₂ is fixed before the batch is touched and z
does not depend on data.  This is the paper's calibration with c1 = c2 = z²ε²/log(1/δ)
(≈ 8 log(1.25/δ)/log(1/δ) for the classical Gaussian mechanism; we use the accountant's z).
Algorithm 4 (Theorem 4) composes its 2T releases per client adaptively (Lemma 16), with z
calibrated for the composition.

Every sensitivity and noise draw is a module-level function, so that the mutation self-test
(:mod:`empirical.papers.sosp.audit`) can inject a bug into exactly one of them; the algorithm modules
import them by name, and ``Patch.everywhere`` replaces those copies too.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.validation import check_delta, check_int, check_positive

__all__ = ["gaussian_multiplier", "selection_multiplier", "o1_sensitivity", "o2_sensitivity",
           "selection_sensitivities", "client_noise_std"]


# =============================================================================================
# Noise calibration (dp-accounting)
# =============================================================================================
def _calibrate(make_event: Callable[[float], object], epsilon: float, delta: float) -> float:
    """The noise multiplier z with RDP-accountant ε(make_event(z), δ) = ε (Brent, rtol 1e-13).

    ε is continuous and strictly decreasing in z, so the root is unique; the bracket is widened
    until it holds the root."""
    f = lambda z: accounting.epsilon(make_event(z), delta) - epsilon  # noqa: E731
    lo, hi = 1e-2, 1.0
    while f(lo) < 0:
        lo /= 10.0
    while f(hi) > 0:
        hi *= 4.0
    z = brentq(f, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    # ε(z) ≤ target: step z up by ulps until the accountant agrees (never over-spend).
    for _ in range(64):
        if f(z) <= 0:
            break
        z = np.nextafter(z, np.inf)
    return float(z)


@lru_cache(maxsize=256)
def gaussian_multiplier(epsilon: float, delta: float) -> float:
    """z such that one Gaussian mechanism with std z·Δ₂ is (ε, δ)-DP by dp-accounting (RDP)."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    return _calibrate(lambda z: accounting.gaussian_event(z), epsilon, delta)


@lru_cache(maxsize=256)
def selection_multiplier(epsilon: float, delta: float, releases: int) -> float:
    """z such that ``releases`` adaptively composed Gaussian mechanisms (each std z·Δ₂) are
    (ε, δ)-DP by dp-accounting (RDP) — Algorithm 4's 2T releases per client."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    releases = check_int("releases", releases)
    return _calibrate(lambda z: accounting.gaussian_event(z, releases), epsilon, delta)


# =============================================================================================
# Sensitivities and noise draws
# =============================================================================================
def o1_sensitivity(G_sens: float, b1: int) -> float:
    """Replace-one ℓ₂ sensitivity of O₁'s batch mean over b1 records: 2G_s/b1 (G_s bounds half
    the spread ‖∇f(x;z) − ∇f(x;z')‖ of two records' gradients at any x)."""
    return 2.0 * G_sens / b1


def o2_sensitivity(M_sens: float, step: float, b2: int) -> float:
    """Replace-one ℓ₂ sensitivity of O₂'s gradient-difference mean over b2 records between x_{t−1}
    and x_{t−2} with ‖x_{t−1} − x_{t−2}‖ = step: 2M_s·step/b2 (M_s bounds half the spread of two
    records' gradient differences per unit step).  The step is a function of earlier releases,
    so the sensitivity is fixed before the batch is read (SOSP-E2)."""
    return 2.0 * M_sens * step / b2


def selection_sensitivities(G_sens: float, M_sens: float, d: int, n: int) -> tuple[float, float]:
    """Algorithm 4's replace-one sensitivities over n held-out records: gradient 2G_s/n, Hessian
    (upper triangle incl. diagonal, ℓ₂) ≤ Frobenius ≤ √d × operator, i.e. 2M_s√d/n (attained by
    records with Hessians ±M_s·I)."""
    return 2.0 * G_sens / n, 2.0 * M_sens * math.sqrt(d) / n


def client_noise_std(sigma: float, m: int) -> float:
    """Each client's own noise std in Algorithm 3: the single-client σ whatever m is.  ICRL-DP
    protects a client's transcript against the server, which sees each client's release before
    averaging, so the average's 1/√m cannot be spent on privacy (errata SOSP-E1)."""
    return sigma


def _spider_noise(gen: np.random.Generator, shape: tuple) -> np.ndarray:
    """Standard normals for one Ada-DP-SPIDER query (scaled by the query's σ by the caller)."""
    return gen.standard_normal(shape)


def _selection_noise(gen: np.random.Generator, shape: tuple) -> np.ndarray:
    """Standard normals for Algorithm 4's releases (scaled by σ_g or σ_H by the caller)."""
    return gen.standard_normal(shape)
