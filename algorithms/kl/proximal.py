"""Algorithm 2 of the KL paper (Menart et al.): the private proximal point method for κ ≥ 2
(Theorem 2), with Algorithm 4 (:func:`algorithms.kl.noisy_gd.noisy_gd`) as its inner solver;
ρ-zCDP under replace-one neighbours (Definition 2).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Problem, Result
from algorithms.primitives import as_generators
from algorithms.validation import check_int, check_open_interval, check_positive
from algorithms.kl.common import Observer, _ceil, _check_w0, _privacy_bracket
from algorithms.kl.noisy_gd import noisy_gd


# =============================================================================================
# Algorithm 2: (KL) proximal point method
# =============================================================================================
def proximal_point_rounds(n: int, d: int, *, rho: float, kappa: float, gamma: float, L0: float,
                          L1t: float, F0: float) -> int:
    """Algorithm 2, line 1: T = ⌈(1 + 32 F0^{(κ−2)/κ} γ² L̃1)[log F0 + κ log(n√ρ/(γL0√d))]⌉ (≥ 1)."""
    n, d = check_int("n", n), check_int("d", d)
    rho = check_positive("rho", rho)
    kappa = check_positive("kappa", kappa)
    if kappa < 2.0:
        raise ValueError(f"kappa must be in [2, inf) for Algorithm 2, got {kappa!r}")
    gamma, L0 = check_positive("gamma", gamma), check_positive("L0", L0)
    L1t, F0 = check_positive("L1t", L1t), check_positive("F0", F0)
    T_real = (1.0 + 32.0 * F0 ** ((kappa - 2.0) / kappa) * gamma ** 2 * L1t) * _privacy_bracket(
        n, d, rho, kappa, gamma, L0, F0)
    return max(1, _ceil(T_real))


def proximal_point(problem: Problem, *, rho: float, w0: np.ndarray, L0: float, L1t: float,
                   gamma: float, kappa: float, F0: float, beta: float = 0.1,
                   rng: np.random.Generator | Sequence[np.random.Generator],
                   inner_max_steps: int | None = None,
                   observe: Observer | None = None) -> Result:
    """Algorithm 2 (private proximal point method, κ ≥ 2) with Algorithm 4 as the inner solver
    (``observe`` is passed to every inner call: it sees their gradient releases).

    T = ⌈(1 + 32F0^{(κ−2)/κ}γ²L̃1)[log F0 + κ log(n√ρ/(γL0√d))]⌉ (≥ 1), β' = β/T; for
    t = 1..T: w_t = noisy_gd(F_t, start = centre = w_{t−1}, ρ/T, β'), where
    F_t(w) = F(w) + L̃1‖w − w_{t−1}‖² (L̃1-strongly convex for L̃1-weakly convex F); output w_T.

    Readings (errata KL-E23): the regulariser is L̃1‖w − w_{t−1}‖² as in line 4 (the proof once
    writes L̃1/2); T is a ceiling (≥ 1; it is < 1 only when the privacy scale exceeds F0).  The
    inner solver runs Theorem 9's ⌈n²(ρ/T)log²(2/β')/d⌉ steps, capped at ``inner_max_steps``
    (reported as ``info["capped"]``): that count is infeasible beyond n ≈ 10³.

    Privacy (replace-one): each inner call is exactly (ρ/T)-zCDP by dp-accounting (noisy_gd's
    own calibration, errata KL-E1; the regulariser is data independent and the centre w_{t−1}
    is a previous output), and the T calls compose (adaptively) to exactly ρ (each call gets
    ρ/T·(1 − 10⁻¹⁴) so that floating-point rounding never reports more than ρ).  All rows have the
    same control flow, so they are run together; each row's ``PrivacySpent`` is the same.

    ``info``: "T" (outer rounds), "inner_T" (inner steps used), "inner_T_theory", "capped",
    "beta_prime", "inner_sigma".
    """
    w0 = _check_w0(problem, w0)
    rho = check_positive("rho", rho)
    beta = check_open_interval("beta", beta, 0.0, 1.0)
    T = proximal_point_rounds(problem.n, problem.d, rho=rho, kappa=kappa, gamma=gamma, L0=L0,
                              L1t=L1t, F0=F0)
    if inner_max_steps is not None:
        inner_max_steps = check_int("inner_max_steps", inner_max_steps)
    gens = as_generators(rng)
    single = isinstance(rng, np.random.Generator)
    beta_prime = beta / T
    W: np.ndarray = w0
    events, evals = [], 0
    inner = None
    # ρ/T less a few ulps, so that the accountant's sum of T rounded parts cannot exceed ρ.
    rho_inner = rho / T * (1.0 - 1e-14)
    for _ in range(T):
        inner = noisy_gd(problem, rho=rho_inner, w0=W, L0=L0, L1t=L1t, beta=beta_prime,
                         max_steps=inner_max_steps, rng=rng if single else gens, observe=observe)
        W = inner.w
        events.append(inner.privacy.event)
        evals += inner.grad_evals
    spent = accounting.PrivacySpent.from_event(accounting.composed(events),
                                               relation=accounting.REPLACE_ONE, target_rho=rho,
                                               rounds=T, rho_per_round=inner.privacy.rho,
                                               inner_noise_multiplier=inner.privacy.details["noise_multiplier"])
    info = {"T": T, "inner_T": inner.info["T"], "inner_T_theory": inner.info["T_theory"],
            "capped": inner.info["capped"], "beta_prime": beta_prime,
            "inner_sigma": inner.info["sigma"]}
    return Result(w=W, privacy=spent if single else [spent] * len(gens), grad_evals=evals,
                  info=info)
