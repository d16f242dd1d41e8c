"""Algorithm 2 (DP-AMBSSGD) of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression
via Adaptive Clipping" (Theorem 3.7's schedule; privacy Theorem 3.6), and the fixed-clipping
minibatch baseline under the same accounting (``clip="fixed"``).  Each phase's clip level comes from
:func:`algorithms.linreg.dp_stat.dp_stat`; the design, streams, noise and accounting are
:mod:`algorithms.linreg.design`'s (common random numbers: a noise-free reference iterate runs on
the same data)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Result
from algorithms.linreg.design import (CHUNK, LinearRegressionDesign, Observer, _check_observer,
                                      _gaussian_rho, _measures, _streams, _zcdp_to_epsilon,
                                      alpha_for_epsilon, clip_limits, gaussian_noise)
from algorithms.linreg.dp_stat import dp_stat
from algorithms.primitives import as_generators
from algorithms.validation import check_int, check_positive

__all__ = ["dp_ambssgd", "ambssgd_schedule", "AmbssgdSchedule"]


@dataclass(frozen=True)
class AmbssgdSchedule:
    """Theorem 3.7's parameters as used: phases T, batch b, stat size s, step η, log^a n."""

    T: int
    b: int
    s: int
    eta: float
    log_a_n: float


def ambssgd_schedule(n: int, design: LinearRegressionDesign, *, c1: float = 1.0,
                     T: int | None = None, stat_points: bool = True) -> AmbssgdSchedule:
    """T = ⌈c₁κ ln n⌉ (or ``T``), b = ⌊10n/(11T)⌋ and s = ⌊n/(11T)⌋ (s = b/10, T(b + s) ≤ n),
    η = b/(R_x² + (b − 1)‖H‖).  Without stat points (fixed clip): b = ⌊n/T⌋, s = 0."""
    n = check_int("n", n, minimum=2)
    c1 = check_positive("c1", c1)
    T = math.ceil(c1 * design.condition_number * math.log(n)) if T is None else check_int("T", T)
    b, s = (10 * n // (11 * T), n // (11 * T)) if stat_points else (n // T, 0)
    if b < 1 or (stat_points and s < 1):
        raise ValueError(f"n must be at least {11 * T} for T = {T} phases, got {n}")
    eta = b / (design.rx2 + (b - 1) * 1.0)
    return AmbssgdSchedule(T, b, s, eta, math.log(n) ** design.tail_a)


def _clipped_sums(X: np.ndarray, res: np.ndarray, zeta: np.ndarray):
    """Σ_i clip_ζ(x_i r_i) for each column of the residuals ``res`` (…, k, 2), and how many
    examples the first column clips; X (…, k, d), ζ (…): sums (…, 2, d), counts (…).  The
    clipped residual is sign(r)·min(|r|, ζ/‖x‖) (as ``algorithms.primitives``' clipped
    least-squares sum), so no (k, d) per-example gradient is formed."""
    lim = clip_limits(np.sqrt(np.einsum("...kd,...kd->...k", X, X)), zeta[..., None])
    c = np.abs(res)
    count = np.count_nonzero(c[..., 0] > lim, axis=-1)
    np.minimum(c, lim[..., None], out=c)
    np.copysign(c, res, out=c)
    return np.matmul(np.swapaxes(c, -1, -2), X), count


def _residuals(design, gens, V, k):
    """k fresh samples per row and their residuals ⟨x, v⟩ − y for each column v of V (R, d, 2):
    X (R, k, d), res (R, k, 2).  A ``LinearRegressionDesign`` computes them as ⟨x, v − w*⟩ − σz
    (one product, no separate pass for y); a design that overrides ``sample`` (fixed or real
    data) is read through it."""
    if type(design).sample is LinearRegressionDesign.sample:
        X, z = design.sample_noise(gens, k)
        res = np.matmul(X, V - design.w_star[:, None])
        res -= design.sigma * z[..., None]
    else:
        X, y = design.sample(gens, k)
        res = np.matmul(X, V)
        res -= y[..., None]
    return X, res


def _clipped_mean_gradient(design, gens, W, Wref, m, zeta):
    """Mean over m fresh samples per row of clip_ζ(x(⟨x, w⟩ − y)) at the private iterate W and
    at the reference Wref (same samples, same ζ); streamed in chunks.  Also counts clipped
    examples.  Returns (G, Gref, clipped) with G, Gref of shape (R, d)."""
    R, dim = W.shape
    G = np.zeros((R, 2, dim))
    clipped = np.zeros(R)
    V = np.stack([W, Wref], axis=2)        # (R, d, 2): one product gives both residuals
    for start in range(0, m, CHUNK):
        X, res = _residuals(design, gens, V, min(CHUNK, m - start))
        sums, count = _clipped_sums(X, res, zeta)
        G += sums
        clipped += count
    return G[:, 0] / m, G[:, 1] / m, clipped


def dp_ambssgd(design: LinearRegressionDesign, n: int, *, epsilon: float, delta: float,
               rng: np.random.Generator | Sequence[np.random.Generator], clip: str = "adaptive",
               zeta: float | None = None, c1: float = 1.0, T: int | None = None,
               levels: int = 40, rule: str = "slack", dither: bool = True,
               private: bool = True, observe: Observer | None = None) -> Result:
    """Algorithm 2 (DP-AMBSSGD) on n streamed samples per row, with a noise-free reference.

    For t = 0..T−1 (schedule :func:`ambssgd_schedule`): γ_t = DP-STAT(s fresh points, w_t, B, α)
    with B = R_x(‖w*‖_H + σ)log^{2a} n (K₂ = 1), ζ_t = R_x γ_t log^a n; then on b fresh points
    w_{t+1} = w_t − η((1/b)Σ clip_ζt(x(⟨x, w_t⟩ − y)) + α(2ζ_t/b)g_t), g_t ~ N(0, I); output
    w̄ = (2/T) Σ_{t=T/2+1}^{T} w_t (for odd T, the last ⌈T/2⌉ iterates).  The stat points are
    disjoint from the gradient points (the printed indices overlap by one: LR-E12).

    ``clip="fixed"`` runs the fixed-clipping baseline: ζ_t ≡ ``zeta``, no DP-STAT, b = ⌊n/T⌋.
    ``private=False`` sets α = 0 (no noise anywhere, DP-STAT exact: a non-private control).
    ``observe`` (:data:`Observer`) sees each release: DP-STAT's noisy counts (kind ``"stat"``)
    and the noisy mean gradient of each phase (kind ``"grad"``, std α·2ζ_t/b), index t = phase.

    Returns ``Result`` with ``w`` the private output (R, d), ``info``: ``w_reference`` (same data,
    same ζ_t, no gradient noise), ``zeta`` (R, T), ``clip_fraction`` (R,), the schedule, α, B,
    and the privacy columns.
    """
    n = check_int("n", n, minimum=2)
    gens = as_generators(rng)
    observe = _check_observer(observe)
    if clip not in ("adaptive", "fixed"):
        raise ValueError(f"clip must be 'adaptive' or 'fixed', got {clip!r}")
    if clip == "fixed":
        if zeta is None:
            raise ValueError("zeta must be given (in (0, inf)) for clip='fixed'")
        zeta = check_positive("zeta", zeta)
    alpha = alpha_for_epsilon(epsilon, delta) if private else 0.0
    sched = ambssgd_schedule(n, design, c1=c1, T=T, stat_points=clip == "adaptive")
    R, dim = len(gens), design.d
    data, noise = _streams(gens)      # data: shared by the private and the reference iterate
    rx = math.sqrt(design.rx2)
    B = rx * (design.w_norm + design.sigma) * math.log(n) ** (2 * design.tail_a)
    W, Wref = np.zeros((R, dim)), np.zeros((R, dim))
    acc, acc_ref = np.zeros((R, dim)), np.zeros((R, dim))
    tail_start = sched.T // 2                    # average w_{t+1} for t + 1 ≥ ⌊T/2⌋ + 1
    zetas = np.zeros((R, sched.T))
    clipped = np.zeros(R)
    stat_rounds = np.zeros((R, sched.T), dtype=int)
    stat_spent = np.zeros(R)
    stat_guarantee = 0.0
    for t in range(sched.T):
        if clip == "adaptive":
            Xs, ys = design.sample(data, sched.s)
            r = np.abs(np.einsum("rkd,rd->rk", Xs, W) - ys)
            if private:
                st = dp_stat(r, B=B, alpha=alpha, rng=noise, levels=levels, rule=rule,
                             dither=dither, observe=observe, t=t)
                gamma = st.gamma
                stat_rounds[:, t] = st.rounds
                stat_spent = np.maximum(stat_spent, st.rho_spent)
                stat_guarantee = st.rho_guarantee
            else:
                gamma = r.max(axis=1)
            z_t = rx * np.maximum(gamma, np.finfo(float).tiny) * sched.log_a_n
        else:
            z_t = np.full(R, zeta)
        zetas[:, t] = z_t
        G, Gref, c = _clipped_mean_gradient(design, data, W, Wref, sched.b, z_t)
        clipped += c
        if private:
            std = alpha * 2.0 * z_t / sched.b
            G_clean = G
            G = G + std[:, None] * gaussian_noise(noise, dim)
            if observe is not None:
                observe("grad", t, np.arange(R), G, std,
                        **({"clean": G_clean} if _measures(observe) else {}))
        W = W - sched.eta * G
        Wref = Wref - sched.eta * Gref
        if t >= tail_start:
            acc += W
            acc_ref += Wref
    k = sched.T - tail_start
    w_bar, w_ref = acc / k, acc_ref / k
    info = dict(w_reference=w_ref, zeta=zetas, clip_fraction=clipped / (sched.T * sched.b),
                T=sched.T, b=sched.b, s=sched.s, eta=sched.eta, alpha=alpha, B=B,
                log_a_n=sched.log_a_n, rx2=design.rx2, stat_rounds=stat_rounds,
                tail_iterates=k)
    if private:
        grad_rho = _gaussian_rho(alpha, 1)
        # Parallel composition: each record is in one mechanism; the run's cost is the max.
        rho_spent = np.maximum(grad_rho, stat_spent)
        rho_guarantee = max(grad_rho, stat_guarantee)
        eps_g = _zcdp_to_epsilon(rho_guarantee, delta)
        eps_s = np.array([_zcdp_to_epsilon(float(v), delta) for v in rho_spent])
        privacy = accounting.PrivacySpent.from_event(
            accounting.gaussian_event(alpha), target_rho=rho_guarantee, guarantee_rho=rho_guarantee,
            stat_rho_guarantee=stat_guarantee)
        info.update(rho_spent=rho_spent, rho_guarantee=rho_guarantee, epsilon_guarantee=eps_g,
                    epsilon_spent=eps_s, epsilon_target=float(epsilon), delta=delta)
    else:
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
    return Result(w=w_bar, privacy=privacy, grad_evals=sched.T * (sched.b + sched.s), info=info)


# ---------------------------------------------------------------------------------------------
# Algorithm 1: DP-SSGD
# ---------------------------------------------------------------------------------------------
