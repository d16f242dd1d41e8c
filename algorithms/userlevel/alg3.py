"""Algorithms 2, 3 and 4 of the user-level SCO paper (Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO"):
accelerated phased ERM (Algorithm 3, Theorem 3.2/C.3) calling user-level DP accelerated
minibatch SGD with outlier *gradient* removal (Algorithm 2; its minibatch gradient alone is
``minibatch_gradients``, the object of Lemma 3.5), AboveThreshold (Algorithm 4, Lemma A.9),
and the user-as-item baseline of footnote 3 (``item_level_baseline``).  With
``nonsmooth_T`` the schedule is Theorem D.3's (non-smooth losses through
:class:`algorithms.userlevel.data.SmoothedUserData`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.userlevel.accounting import (Observer, PhasePrivacy, RunResult, UserLevelPrivacy,
                                              _check_common, calibrate_gaussian, gaussian_noise)
from algorithms.userlevel.data import UserData
from algorithms.userlevel.outliers import (_scores_within, alg2_score_floor, keep_probabilities,
                                            outlier_mean_sensitivity, step_failure_probability,
                                            user_mean_sensitivity)
from algorithms.validation import check_int, check_interval, check_nonnegative, check_positive

__all__ = ["AboveThreshold", "Alg3Phase", "accelerated_phased_erm", "al24_phased_gd",
           "alg3_schedule", "item_level_baseline", "minibatch_gradients", "phase_steps"]


def phase_steps(T_f: float) -> int:
    """T_i = ⌈T_f⌉ ≥ 1, the step count of a phase of Algorithm 3."""
    return max(1, int(math.ceil(T_f)))

class AboveThreshold:
    """Algorithm 4 (AboveThreshold [DR14]) for queries of sensitivity ``sensitivity``.

    Δ̂ = Δ + Lap(2·sens/ε) once; for each query q_t: ν_t ~ Lap(4·sens/ε) and answer ⊤ (halt)
    iff q_t + ν_t ≥ Δ̂.  (ε, 0)-DP however many queries are asked (Lemma A.9).
    ``below=True`` is Algorithm 2's upside-down use: ⊤ iff q_t + ν_t < Δ̂ (the negated queries,
    same privacy).  Algorithm 2's scales 8/ε and 16/ε are sensitivity 2 at budget ε/2.
    """

    def __init__(self, threshold: float, epsilon: float, sensitivity: float,
                 rng: np.random.Generator, *, below: bool = False,
                 observe: Observer | None = None):
        self.epsilon = check_positive("epsilon", epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.rng = rng
        self.below = below
        # only a noise-measuring observer (algorithms.noise_meter) sees the Laplace draws
        self.observe = observe if getattr(observe, "measures_noise", False) else None
        self.noisy_threshold = float(threshold) + rng.laplace(0.0, 2.0 * self.sensitivity / self.epsilon)
        if self.observe is not None:
            self.observe("threshold", self.noisy_threshold, 2.0 * self.sensitivity / self.epsilon,
                         {}, clean=float(threshold))
        self.queries = 0

    def fires(self, query: float) -> bool:
        self.queries += 1
        noisy = float(query) + self.rng.laplace(0.0, 4.0 * self.sensitivity / self.epsilon)
        if self.observe is not None:
            self.observe("query", noisy, 4.0 * self.sensitivity / self.epsilon, {},
                         clean=float(query))
        return noisy < self.noisy_threshold if self.below else noisy >= self.noisy_threshold


# ================================================================================================
# Algorithms 2 and 3: accelerated phased ERM with outlier gradient removal
# ================================================================================================
@dataclass(frozen=True)
class Alg3Phase:
    """Phase i of Algorithm 3: n_i users, regularisation λ_i = λ2^{pi}, T_i AC-SA steps on
    minibatches of K_i users, noise σ_i = z·Δ_i with Δ_i the gradient sensitivity."""

    i: int
    n_i: int
    lambda_i: float
    T_i: int
    K_i: int
    sigma_i: float
    z: float
    sensitivity: float


def alg3_schedule(n: int, m: int, d: int, epsilon: float, delta: float, L: float, R: float,
                  beta: float, *, mode: str = "rates", q: float = 0.5, lam: float | None = None,
                  p: float | None = None, c_T: float = 1.0, c_K1: float = 60.0, c_K2: float = 1.0,
                  c_tau: float = 1.0, nonsmooth_T: bool = False, removal: bool = True,
                  calibrate: bool = True, solver: str = "acsa") -> tuple[float, list[Alg3Phase]]:
    """Algorithm 3's parameters.  Returns (τ, phases).

    λ = (L/R)(1/√(nm) + √d/(εn√m)) (Theorem C.3) unless given; p = 3q + 2.5 + log_n √m (its least
    admissible value); n_i = ⌊(1 − 2^{−q})n/2^{iq}⌋; λ_i = λ2^{pi}.
    faithful: T_i = ⌈(1 + √(β/λ_i))·log(ndm)⌉, K_i = ⌈500 log(n_i²m²e^ε/δ)(1/ε + n_iε/√(T_i log(1/δ)))⌉,
    τ = L log(ndm)/√m, σ_i = 1000τ√T_i log(nde^ε/δ)/(εn_i).
    rates: T_i = ⌈c_T(1 + √(β/λ_i))⌉, K_i = ⌈c_K1 log(1/δ)/ε + c_K2 n_iε/√T_i⌉,
    τ = c_τ L√(log(ndm)/m), σ_i = z·Δ_i with z calibrated by dp-accounting (below).
    ``nonsmooth_T``: Theorem D.3's T_i = 1 + n_i^{3/4}m^{1/2}ε^{1/2}·(log(ndm) if faithful) and
    K_i = n_iε/√T_i + log(nmde^ε/δ)/ε (rates: c_K1 on the second term).
    Both modes cap K_i at n_i and stop at the first phase with n_i < c_K1·log(1/δ)/ε (rates) or
    n_i < 1 (UL-E9): AboveThreshold's margin K_i/5 must beat its Laplace noise 16/ε.

    Gradient sensitivity: the corrected Lemma C.2 bound (UL-E13) at radius 2τ and the score
    floor AboveThreshold certifies (:func:`alg2_score_floor`), ζ per step from
    :func:`step_failure_probability` (UL-E14); a phase with an infinite bound is dropped.  ``removal=False`` (item-level baseline): Δ_i = 2L/K_i (user mean gradients
    have norm ≤ L, replace-one), no AboveThreshold.
    Privacy per phase: ε/2 (AboveThreshold) + ε_RDP(T_i WOR-sampled Gaussians, δ/2) ≤ ε, the
    second calibrated to ε/2 in rates mode (to ε for the baseline).  ``calibrate=False`` skips
    the accountant (z = σ = nan) for runs that add no noise.
    ``solver="gd"`` is the [AL24] reading (:func:`al24_phased_gd`): every phase uses all its
    users in every step (K_i = n_i, no subsampling) and plain gradient descent, whose
    κ_i = β/λ_i condition number sets T_i = ⌈c_T(1 + β/λ_i)⌉ (faithful: ×log(ndm)) in place of
    the accelerated √(β/λ_i).
    """
    if solver not in ("acsa", "gd"):
        raise ValueError(f"solver must be 'acsa' or 'gd', got {solver!r}")
    n, m, d = check_int("n", n), check_int("m", m), check_int("d", d)
    eps, dl = _check_common(epsilon, delta, mode)
    check_positive("L", L), check_positive("R", R), check_nonnegative("beta", beta)
    q = check_interval("q", q, 0.0, 1.0)
    if q <= 0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    lam = (L / R) * (1 / math.sqrt(n * m) + math.sqrt(d) / (eps * n * math.sqrt(m))) if lam is None \
        else check_positive("lam", lam)
    p = 3 * q + 2.5 + math.log(math.sqrt(m)) / math.log(n) if p is None else check_positive("p", p)
    logndm = math.log(n * d * m)
    faithful = mode == "faithful"
    tau = (L * logndm / math.sqrt(m)) if faithful else c_tau * L * math.sqrt(logndm / m)
    k_min = 1 if faithful else max(1, int(math.ceil(c_K1 * math.log(1 / dl) / eps)))
    if not removal:
        k_min = 1
    phases = []
    for i in range(1, int(math.floor(math.log2(n))) + 1):
        n_i = int(math.floor((1 - 2**-q) * n / 2 ** (i * q)))
        if n_i < max(k_min, 2):
            break
        lam_i = lam * 2 ** (p * i)
        if solver == "gd":
            T_f = (1 + beta / lam_i) * (logndm if faithful else c_T)
        elif nonsmooth_T:
            T_f = 1 + n_i**0.75 * math.sqrt(m * eps) * (logndm if faithful else c_T)
        else:
            T_f = (1 + math.sqrt(beta / lam_i)) * (logndm if faithful else c_T)
        T_i = phase_steps(T_f)
        if faithful and not nonsmooth_T:
            K_f = 500 * math.log(n_i**2 * m**2 * math.exp(eps) / dl) * (
                1 / eps + n_i * eps / math.sqrt(T_i * math.log(1 / dl)))
        elif faithful:
            K_f = n_i * eps / math.sqrt(T_i) + math.log(n * m * d * math.exp(eps) / dl) / eps
        elif nonsmooth_T:
            K_f = c_K2 * n_i * eps / math.sqrt(T_i) + c_K1 * math.log(1 / dl) / eps
        else:
            K_f = c_K1 * math.log(1 / dl) / eps + c_K2 * n_i * eps / math.sqrt(T_i)
        K_i = n_i if solver == "gd" else int(min(n_i, math.ceil(K_f)))
        zeta = step_failure_probability(dl / 2.0, T_i, eps)
        if removal:
            sens = outlier_mean_sensitivity(2.0 * tau, K_i, alg2_score_floor(K_i, eps, zeta / 2.0),
                                            zeta / 2.0)
            if math.isinf(sens) and calibrate:
                # AboveThreshold's noise is too large against K_i/5 for the test to certify
                # any concentration at this δ (UL-E14): the phase cannot run privately (UL-E9)
                break
        if not calibrate:
            sens = sens if removal else user_mean_sensitivity(L, K_i)
            z = sigma = math.nan
        elif removal:
            if faithful:
                sigma = 1000 * tau * math.sqrt(T_i) * math.log(n * d * math.exp(eps) / dl) / (eps * n_i)
                z = sigma / sens
            else:
                z = calibrate_gaussian(eps / 2.0, T_i, dl / 2.0, n_i, K_i)
                sigma = z * sens
        else:
            sens = user_mean_sensitivity(L, K_i)
            z = calibrate_gaussian(eps, T_i, dl, n_i, K_i)
            sigma = z * sens
        phases.append(Alg3Phase(i, n_i, lam_i, T_i, K_i, sigma, z, sens))
    return tau, phases


def _acsa_constants(t: int, mu: float, smooth: float) -> tuple[float, float]:
    """AC-SA [GL12] step sizes for a μ-strongly convex, (β+μ)-smooth objective: α_t = 2/(t+1),
    γ_t = 4·smooth/(t(t+1))."""
    return 2.0 / (t + 1), 4.0 * smooth / (t * (t + 1))


def accelerated_phased_erm(data: UserData, epsilon: float, delta: float, rng: np.random.Generator,
                           *, mode: str = "rates", q: float = 0.5, lam: float | None = None,
                           c_T: float = 1.0, c_K1: float = 60.0, c_K2: float = 1.0,
                           c_tau: float = 1.0, nonsmooth_T: bool = False, removal: bool = True,
                           noise: bool = True, halt: bool = True,
                           noise_rng: np.random.Generator | None = None,
                           schedule_m: int | None = None,
                           observe: Observer | None = None, solver: str = "acsa",
                           max_phases: int | None = None) -> RunResult:
    """Algorithm 3 (phased regularised ERM), each phase solved by Algorithm 2 (AC-SA on
    F̂_i(x) = (1/n_i)Σ_{Z∈D_i}F̂(x, Z) + (λ_i/2)‖x − x_{i−1}‖² with outlier-removed, noisy user
    minibatch gradients).  Phase i uses the next n_i users (disjoint phases).

    Algorithm 2 per step t: draw K_i users (without replacement, UL-E8); q_t(Z) = ∇F̂(x^{md}, Z)
    (the AC-SA query point; UL-E10); s = (1/K)Σ_{Z,Z'}1(‖q(Z) − q(Z')‖ ≤ 2τ); AboveThreshold
    (threshold 4K/5 + Lap(8/ε) once per phase, queries s + Lap(16/ε)) halts the run (output 0) at
    the first ŝ < Δ̂; otherwise keep Z w.p. p(h(Z)), g = mean of kept q's, ĝ = g + N(0, σ_i²I),
    one AC-SA step with ĝ + λ_i(x^{md} − x_{i−1}).  Output of a phase: the AC-SA aggregate x^{ag}.

    ``removal=False`` is the item-level baseline (the user is one item of gradient norm ≤ L):
    plain mean of the K_i user gradients, noise for sensitivity 2L/K_i, no test.  ``noise=False``
    drops the Gaussian (non-private); ``halt=False`` records but ignores AboveThreshold.
    ``schedule_m`` computes the schedule (λ, p, T_i, K_i, τ) as if users had that many items
    (the baseline uses 1: a user is one item); gradients still cost data.m each.
    ``noise_rng`` draws the Gaussian noise (default ``rng``): with a separate stream, a run with
    ``noise=False`` from a copy of ``rng`` is coupled to the private run (same minibatches,
    Laplace draws and coins), which isolates the privacy part of the error.
    ``observe("gradient", ĝ, σ_i, info)`` is called with every released noisy gradient (privacy
    audits score the step-by-step releases, which the privacy proof covers); an observer with a
    true ``measures_noise`` also gets ``clean=`` (the release without its noise) and
    AboveThreshold's Laplace draws (kinds ``"threshold"`` and ``"query"``, with their scales).
    ``solver="gd"``: the [AL24] reading (:func:`al24_phased_gd`): full-batch steps
    x ← Π(x − (ĝ + λ_i(x − x_{i−1}))/(β + λ_i)) and the phase's output is the mean of its
    iterates x_1 … x_{T_i}.
    ``max_phases`` runs at most that many phases of the schedule: a noise-free run computes
    no sensitivity, so it would also run the phases a private run drops (UL-E14); the private
    run's phase count keeps the two coupled.
    """
    noise_rng = rng if noise_rng is None else noise_rng
    sm = data.m if schedule_m is None else check_int("schedule_m", schedule_m)
    tau, phases = alg3_schedule(data.n, sm, data.d, epsilon, delta, data.L, data.R, data.beta,
                                mode=mode, q=q, lam=lam, c_T=c_T, c_K1=c_K1, c_K2=c_K2,
                                c_tau=c_tau, nonsmooth_T=nonsmooth_T, removal=removal,
                                calibrate=noise, solver=solver)
    if max_phases is not None:
        phases = phases[:check_int("max_phases", max_phases)]
    if not phases:
        raise ValueError(f"n = {data.n} users give no phase that can run privately (n_i ≥ the "
                         "minibatch floor and a finite Lemma C.2 sensitivity, UL-E13/UL-E14): "
                         "increase n or epsilon")
    eps, dl = float(epsilon), float(delta)
    g0 = data.grad_evals
    x_prev = data.center.copy()
    start = 0
    priv, records = [], []
    halted = False
    removed_total = 0
    at_fired = 0
    for ph in phases:
        users = np.arange(start, start + ph.n_i)
        start += ph.n_i
        at = (AboveThreshold(4.0 * ph.K_i / 5.0, eps / 2.0, 2.0, rng, below=True, observe=observe)
              if removal else None)
        x = x_prev.copy()
        x_ag = x_prev.copy()
        mu_i, smooth = ph.lambda_i, data.beta + ph.lambda_i
        done = 0
        gd = solver == "gd"
        for t in range(1, ph.T_i + 1):
            if gd:
                x_md = x
            else:
                a, g_t = _acsa_constants(t, mu_i, smooth)
                x_md = ((1 - a) * (mu_i + g_t) * x_ag + a * ((1 - a) * mu_i + g_t) * x) / (
                    g_t + (1 - a * a) * mu_i)
            batch = users[rng.choice(ph.n_i, size=ph.K_i, replace=False)]
            Q = data.user_mean_gradients(x_md, batch)
            if removal:
                h = _scores_within(Q, 2.0 * tau)
                s = h.sum() / ph.K_i
                if at.fires(s):
                    at_fired += 1
                    if halt:
                        halted = True
                        break
                keep = rng.random(ph.K_i) < keep_probabilities(h, ph.K_i)
                n_kept = int(keep.sum())
                removed_total += ph.K_i - n_kept
                # the kept rows' mean as sum ÷ count: np.mean's floats, without its overhead
                g = np.add.reduce(Q[keep], axis=0) / n_kept if n_kept else np.zeros(data.d)
            else:
                g = Q.mean(axis=0)
            g_clean = g
            if noise:
                g = g + gaussian_noise(noise_rng, ph.sigma_i, data.d)
            if observe is not None:
                observe("gradient", g, ph.sigma_i, dict(phase=ph.i, t=t, batch=batch, x=x_md),
                        **({"clean": g_clean} if getattr(observe, "measures_noise", False)
                           else {}))
            done += 1
            G = g + ph.lambda_i * (x_md - x_prev)
            if gd:
                x = data.project(x - G / smooth)
                x_ag = x_ag + (x - x_ag) / done
                continue
            x = data.project((a * mu_i * x_md + ((1 - a) * mu_i + g_t) * x - a * G) / (mu_i + g_t))
            x_ag = a * x + (1 - a) * x_ag
        priv.append(PhasePrivacy(eps / 2.0 if removal else 0.0, ph.z, ph.T_i, done,
                                 dl / 2.0 if removal else dl, dl / 2.0 if removal else 0.0,
                                 ph.n_i, ph.K_i))
        records.append(dict(ph.__dict__, steps=done))
        if halted:
            break
        x_prev = x_ag
    planned = [PhasePrivacy(eps / 2.0 if removal else 0.0, ph.z, ph.T_i, 0,
                            dl / 2.0 if removal else dl, dl / 2.0 if removal else 0.0,
                            ph.n_i, ph.K_i, started=False) for ph in phases[len(priv):]]
    out = np.zeros(data.d) if halted else x_prev
    privacy = UserLevelPrivacy(eps, dl, tuple(priv + planned)) if (noise and halt) else None
    return RunResult(out, data.grad_evals - g0, privacy, records, halted,
                     dict(tau=tau, mode=mode, removed=removed_total, at_fired=at_fired,
                          schedule=phases))


def minibatch_gradients(data: UserData, x: np.ndarray, pool: np.ndarray, K: int, tau: float,
                        rng: np.random.Generator, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` independent copies of Algorithm 2's pre-noise gradient g at a fixed x (lines
    5–12): K users drawn without replacement from ``pool``, scores with radius 2τ, Z kept w.p.
    p(h(Z)), g = mean of the kept q(Z).  Returns (g of shape (draws, d), kept fraction per draw).
    Vectorized over draws (one (draws, K, K) distance tensor)."""
    pool = np.asarray(pool, dtype=np.intp)
    K = check_int("K", K)
    if K > pool.size:
        raise ValueError(f"K must be in [1, {pool.size}] (the pool size), got {K}")
    idx = np.argsort(rng.random((draws, pool.size)), axis=1)[:, :K]
    Q = data.user_mean_gradients(x, pool[idx].ravel()).reshape(draws, K, data.d)
    Qc = Q - Q.mean(axis=1, keepdims=True)
    sq = np.einsum("rkd,rkd->rk", Qc, Qc)
    D2 = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("rkd,rjd->rkj", Qc, Qc)
    h = (D2 <= (2.0 * tau) ** 2 * (1 + 1e-12)).sum(axis=2)
    keep = rng.random((draws, K)) < keep_probabilities(h, K)
    cnt = np.maximum(keep.sum(axis=1), 1)
    g = np.einsum("rk,rkd->rd", keep, Q) / cnt[:, None]
    return g, keep.mean(axis=1)


def item_level_baseline(data: UserData, epsilon: float, delta: float, rng: np.random.Generator,
                        **kw) -> RunResult:
    """The user-as-item baseline: Algorithm 3's schedule with no outlier removal, each user's mean
    gradient treated as one item of norm ≤ L (sensitivity 2L/K_i), noise calibrated to the full
    ε, schedule computed for m = 1 (the algorithm does not know users have m items).
    User-level private, but its noise does not shrink with m (footnote 3's rate)."""
    return accelerated_phased_erm(data, epsilon, delta, rng, removal=False, schedule_m=1, **kw)


def al24_phased_gd(data: UserData, epsilon: float, delta: float, rng: np.random.Generator,
                   **kw) -> RunResult:
    """[AL24] as the user-level SCO paper describes it (§1, §3): outlier removal on ALL of a
    phase's users' gradients in every step (no minibatches, so no amplification by
    subsampling: "unlike [AL24], we draw random minibatches"), Gaussian noise on the inliers'
    mean, inside the same λ-regularised phased ERM, solved by plain gradient descent.  The paper
    gives [AL24]'s count, β(nm)^{3/2}, not its schedule; T_i = ⌈c_T(1 + β/λ_i)⌉ full-batch
    steps of n_im gradients give Σ_i T_in_im ≈ (n_1/n)2^{−p}·nm·β/λ, i.e. β(nm)^{3/2}(R/L) at
    Theorem C.3's λ = (L/R)/√(nm) up to the constant (n_1/n)2^{−p}: that count.  Privacy as Algorithm 3's (AboveThreshold at ε/2, the Gaussian
    composed over T_i unsampled steps at ε/2, Lemma C.2's sensitivity at K = n_i)."""
    return accelerated_phased_erm(data, epsilon, delta, rng, solver="gd", **kw)
