"""Algorithm 1 of the user-level SCO paper (Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO"): phased SGD with
outlier *iterate* removal and output perturbation (Theorem 2.1/B.1, linear time), and its SGD
subroutine (``sgd_average_iterates``, the object of Lemma 2.3/B.4).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.userlevel.accounting import (Observer, PhasePrivacy, RunResult, UserLevelPrivacy,
                                              _check_common, calibrate_gaussian, gaussian_noise)
from algorithms.userlevel.data import UserData
from algorithms.userlevel.outliers import (_scores_within, alg1_score_floor, keep_probabilities,
                                            outlier_mean_sensitivity, step_failure_probability)
from algorithms.validation import check_int, check_interval, check_positive

__all__ = ["Alg1Phase", "alg1_schedule", "phased_sgd_outlier_removal", "sgd_average_iterates"]


# ================================================================================================
# Algorithm 1: phased SGD with outlier iterate removal and output perturbation
# ================================================================================================
@dataclass(frozen=True)
class Alg1Phase:
    """Phase i of Algorithm 1: n_i users in C groups of N_i, T_i = N_i·m SGD steps per group at
    step size η_i = η/2^{pi}, concentration radius τ_i, output noise σ_i."""

    i: int
    n_i: int
    N_i: int
    T_i: int
    eta_i: float
    tau_i: float
    sigma_i: float
    z: float
    sensitivity: float


def alg1_schedule(n: int, m: int, d: int, epsilon: float, delta: float, L: float, R: float, *,
                  mode: str = "rates", q: float = 0.25, c_C: float = 15.0, c_eta: float = 1.0,
                  c_tau: float = 1.0, max_phases: int | None = None,
                  calibrate: bool = True) -> tuple[int, list[Alg1Phase]]:
    """Algorithm 1's parameters.  Returns (C, phases).

    C = c_C·log(20nme^ε/δ)/ε (faithful c_C = 100); n_i = ⌊(1 − 2^{−q})n/2^{iq}⌋; N_i = ⌊n_i/C⌋;
    T_i = N_i m; p = J + 3/2 with J = max(1, log m/log n) (m ≤ n^J); η = c_η·R/(L√(dmnε))
    (Theorem B.1; faithful c_η = 1); τ_i = c_τ·η_iL√T_i·log(ndm) (faithful c_τ = 1000).
    σ_i: faithful 100τ_i log²(n/δ)/(εC); rates z·Δ_i with Δ_i the corrected Lemma B.2 bound
    (:func:`outlier_mean_sensitivity` at radius 2τ_i and the score floor the Laplace test
    certifies, :func:`alg1_score_floor`; ζ from :func:`step_failure_probability`) and z
    calibrated so that ε/10 (Laplace score) + ε_RDP(Gaussian, δ/2) = ε.  A phase whose C
    certifies no finite Δ_i is dropped (UL-E14).
    Phases run for i = 1..⌊log2 n⌋ while N_i ≥ 1 (phases with no full group are dropped:
    UL-E9), at most ``max_phases`` of them (rates mode: each phase risks a spurious halt with
    probability ½e^{−Cε/100}, and η_i = η/2^{pi} makes late phases move x by ~nothing).
    """
    n, m, d = check_int("n", n), check_int("m", m), check_int("d", d)
    eps, dl = _check_common(epsilon, delta, mode)
    check_positive("L", L), check_positive("R", R)
    q = check_interval("q", q, 0.0, 1.0)
    if q <= 0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    if mode == "faithful":
        c_C, c_eta, c_tau = 100.0, 1.0, 1000.0
    C = max(1, int(math.ceil(c_C * math.log(20 * n * m * math.exp(eps) / dl) / eps)))
    J = max(1.0, math.log(m) / math.log(n)) if n > 1 else 1.0
    p = J + 1.5
    eta = c_eta * R / (L * math.sqrt(d * m * n * eps))
    zeta = step_failure_probability(dl / 2.0, 1, eps)     # one release per phase
    s_min = alg1_score_floor(C, eps, zeta / 2.0)
    phases = []
    for i in range(1, int(math.floor(math.log2(n))) + 1):
        n_i = int(math.floor((1 - 2**-q) * n / 2 ** (i * q)))
        N_i = n_i // C
        if N_i < 1 or (max_phases is not None and len(phases) >= max_phases):
            break
        T_i = N_i * m
        eta_i = eta / 2 ** (p * i)
        tau_i = c_tau * eta_i * L * math.sqrt(T_i) * math.log(n * d * m)
        sens = outlier_mean_sensitivity(2.0 * tau_i, C, s_min, zeta / 2.0)
        if math.isinf(sens) and (calibrate or mode == "faithful"):
            # C groups are too few for the score test to certify anything at this δ
            # (UL-E14): the phase cannot run privately (UL-E9)
            break
        if mode == "faithful":
            sigma = 100.0 * tau_i * math.log(n / dl) ** 2 / (eps * C)
            z = sigma / sens
        elif not calibrate:
            z = sigma = math.nan
        else:
            z = calibrate_gaussian(0.9 * eps, 1, dl / 2.0)
            sigma = z * sens
        phases.append(Alg1Phase(i, n_i, N_i, T_i, eta_i, tau_i, sigma, z, sens))
    return C, phases


def sgd_average_iterates(data: UserData, groups: np.ndarray, eta: float, x0: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
    """SGD(D, η, T, x0) of Algorithm 1 / Lemma 2.3 for C groups at once (one chain per row of
    ``groups``, shape (C, N) user indices): one pass over the group's N·m items in uniformly
    random order, x_{t+1} = Π_𝒳(x_t − η∇f(x_t, z_t)), output the average (1/T)Σ_{t=1}^{T} x_t of
    the iterates after each step (the paper does not say whether the average runs over x_1..x_T or x_0..x_{T−1}; we read x_1..x_T).  Shape (C, d)."""
    groups = np.asarray(groups, dtype=np.intp)
    Cg, N = groups.shape
    m = data.m
    T = N * m
    order = np.argsort(rng.random((Cg, T)), axis=1)          # a random permutation per chain
    users = np.take_along_axis(np.repeat(groups, m, axis=1), order, axis=1)
    items = np.tile(np.arange(m), (Cg, N))
    items = np.take_along_axis(items, order, axis=1)
    X = np.broadcast_to(np.asarray(x0, dtype=float), (Cg, data.d)).copy()
    S = np.zeros_like(X)
    for t in range(T):                                       # sequential by nature; vectorized over chains
        X = data.project(X - eta * data.item_gradients(X, users[:, t], items[:, t]))
        S += X
    return S / T


def phased_sgd_outlier_removal(data: UserData, epsilon: float, delta: float,
                               rng: np.random.Generator, *, mode: str = "rates", q: float = 0.25,
                               c_C: float = 15.0, c_eta: float = 1.0, c_tau: float = 1.0,
                               max_phases: int | None = None, remove_outliers: bool = True,
                               noise: bool = True, observe: Observer | None = None,
                               noise_rng: np.random.Generator | None = None) -> RunResult:
    """Algorithm 1 (linear time).  Users are taken in index order: phase i uses the next n_i
    users, split into C consecutive groups of N_i.  Halting outputs 0 (the centre of 𝒳).  The
    output x_l = x̃_l + ζ_l is not projected (as in the paper).

    ``remove_outliers=False`` is the ablation that averages all C group iterates (and skips the
    score test); ``noise=False`` drops the Gaussian (non-private; for coupled comparisons).
    ``observe("output", x_i, σ_i, info)`` is called with each phase's released x_i (for privacy
    audits, which see exactly what the algorithm releases); an observer with a true
    ``measures_noise`` also gets ``clean=`` (x_i without its noise) and the Laplace score test
    (kind ``"score"``, scale 20/ε).
    ``noise_rng``: draw the output noise from this generator instead of ``rng``, so that a
    private run and a ``noise=False`` run given equal ``rng`` copies make the same permutation,
    score-noise and keep-coin draws and differ only by the output noise (coupled privacy excess).
    """
    C, phases = alg1_schedule(data.n, data.m, data.d, epsilon, delta, data.L, data.R, mode=mode,
                              q=q, c_C=c_C, c_eta=c_eta, c_tau=c_tau, max_phases=max_phases)
    if not phases:
        raise ValueError(f"n = {data.n} users give no phase with a full group (C = {C}): "
                         "increase n or lower c_C")
    eps, dl = float(epsilon), float(delta)
    x = data.center.copy()
    start = 0
    records, halted = [], False
    priv = []
    g0 = data.grad_evals
    kept_counts = []
    for ph in phases:
        groups = np.arange(start, start + C * ph.N_i).reshape(C, ph.N_i)
        start += ph.n_i                                  # leftover n_i − C·N_i users stay unused
        Xt = sgd_average_iterates(data, groups, ph.eta_i, x, rng)
        s = _scores_within(Xt, ph.tau_i).sum() / C
        s_hat = s + rng.laplace(0.0, 20.0 / eps)
        if getattr(observe, "measures_noise", False):
            observe("score", s_hat, 20.0 / eps, dict(phase=ph.i), clean=s)
        priv.append(PhasePrivacy(eps / 10.0, ph.z, 1, 0, dl / 2, dl / 2))
        if remove_outliers and s_hat < 4.0 * C / 5.0:
            halted = True
            records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=0))
            break
        if remove_outliers:
            h = _scores_within(Xt, 2.0 * ph.tau_i)
            keep = rng.random(C) < keep_probabilities(h, C)
            if not keep.any():        # |S_i| = 0 has probability ≈ 0 after the test; output the centre
                halted = True
                records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=0))
                break
            xt = Xt[keep].mean(axis=0)
        else:
            keep = np.ones(C, bool)
            xt = Xt.mean(axis=0)
        kept_counts.append(int(keep.sum()))
        x = xt + (gaussian_noise(rng if noise_rng is None else noise_rng, ph.sigma_i, data.d)
                  if noise else 0.0)
        if observe is not None:
            observe("output", x, ph.sigma_i, dict(phase=ph.i, mean=xt, kept=keep),
                    **({"clean": xt} if getattr(observe, "measures_noise", False) else {}))
        priv[-1] = PhasePrivacy(eps / 10.0, ph.z, 1, 1, dl / 2, dl / 2)
        records.append(dict(ph.__dict__, s=s, s_hat=s_hat, kept=int(keep.sum())))
    if halted:
        x = np.zeros(data.d)
    # planned-but-not-run phases still count in the guarantee (data-independent schedule)
    planned = [PhasePrivacy(eps / 10.0, ph.z, 1, 0, dl / 2, dl / 2, started=False)
               for ph in phases[len(priv):]]
    privacy = UserLevelPrivacy(eps, dl, tuple(priv + planned)) if noise and remove_outliers else None
    return RunResult(x, data.grad_evals - g0, privacy, records, halted,
                     dict(C=C, mode=mode, q=q, kept=kept_counts))
