"""Algorithm 1 of the KL paper (Menart et al.): KL Spider for κ ∈ [1, 2] (Theorem 1, Lemma 8),
ρ-zCDP under replace-one neighbours (Definition 2): the data-independent plan
(:func:`kl_spider_plan`) and the run (:func:`kl_spider`).  Seed rows: ``rng`` is one Generator or
a sequence (one row each); every row draws its noise from its own generator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Problem, Result
from algorithms.primitives import as_generators, mean_gradient_sensitivity, row_norms
from algorithms.validation import check_int, check_interval, check_open_interval, check_positive
from algorithms.kl.common import (Observer, _all, _ceil, _check_w0, _counted_gradient, _draw, _emit,
                                  _privacy_bracket, _spider_update)


# =============================================================================================
# Algorithm 1: KL Spider
# =============================================================================================
@dataclass(frozen=True)
class SpiderPlan:
    """The data-independent schedule of Algorithm 1 (everything fixed before any data is read).

    ``phi_hat[k−1]``, ``T_k[k−1]`` for rounds k = 1..K; ``sigma_hat`` the full-gradient noise std
    and ``sigma_k`` the per-round difference noise std actually used (the paper's printed values
    times ``scale``); ``paper_rho_worst`` what the printed σ̂, σ_k spend in our worst case (every
    round runs T_k steps, T_k − 1 differences); ``paper_rho_lemma8`` what they spend with
    Lemma 8's count (T_k differences per round): 2ρ + ρ/8 under replace-one.
    """

    K: int
    K_real: float
    c: float
    beta_prime: float
    floor: float
    trivial: bool
    phi_hat: np.ndarray
    T_k: np.ndarray
    sigma_hat: float
    sigma_k: np.ndarray
    scale: float
    sens_full: float
    sens_diff: np.ndarray
    paper_rho_worst: float
    paper_rho_lemma8: float
    worst_case_rho: float
    z_full: float
    z_by_T: dict


def _spider_event(z_full: float, n_full: int, z_by_T: dict, counts_by_T: dict):
    """One composed event: ``n_full`` full-gradient releases and, per distinct round length T,
    ``counts_by_T[T]`` difference releases with multiplier ``z_by_T[T]`` (composition commutes,
    so grouping by T keeps the accountant fast without changing the total)."""
    events = [accounting.gaussian_event(z_full, n_full)] if n_full else []
    events += [accounting.gaussian_event(z_by_T[T], int(m)) for T, m in sorted(counts_by_T.items()) if m]
    return accounting.composed(events)


def kl_spider_plan(n: int, d: int, *, rho: float, kappa: float, gamma: float, L0: float, L1: float,
                   F0: float, beta: float = 0.1) -> SpiderPlan:
    """Algorithm 1, lines 1–7, and our privacy calibration (see :func:`kl_spider`)."""
    n, d = check_int("n", n), check_int("d", d)
    rho = check_positive("rho", rho)
    kappa = check_interval("kappa", kappa, 1.0, 2.0, closed_hi=True)
    gamma = check_positive("gamma", gamma)
    L0, L1 = check_positive("L0", L0), check_positive("L1", L1)
    F0 = check_positive("F0", F0)
    beta = check_open_interval("beta", beta, 0.0, 1.0)

    e = (2.0 - kappa) / kappa
    c = 1.0 + F0 ** e / (64.0 * gamma ** 2 * L1)
    K_real = (1.0 + 64.0 * (1.0 / F0) ** e * gamma ** 2 * L1) * _privacy_bracket(
        n, d, rho, kappa, gamma, L0, F0)
    K = max(1, _ceil(K_real))
    base = gamma * L0 * math.sqrt(K * d) / (n * math.sqrt(rho) * F0 ** (1.0 / kappa))
    beta_prime = beta / K * base ** (2.0 - kappa)
    if beta_prime < 1.0:
        floor = min((32.0 * gamma * L0 * math.sqrt(K * d * math.log(1.0 / beta_prime))
                     / (n * math.sqrt(rho))) ** kappa, F0)
        trivial = floor >= F0
    else:
        # β' ≥ 1 needs γL0√(Kd)/(n√ρ) > F0^{1/κ}: the privacy scale already exceeds F0, the floor
        # expression is undefined (log(1/β') ≤ 0) and every round targets F0.
        floor, trivial = F0, True
    phi = np.empty(K)
    prev = F0
    for k in range(K):
        prev = max(prev / c, floor)
        phi[k] = prev
    T_k = np.array([max(1, _ceil((F0 / ph) ** e)) for ph in phi], dtype=np.int64)

    sens_full = mean_gradient_sensitivity(L0, n, accounting.REPLACE_ONE)     # 2 L0 / n
    # ‖(∇f(w';x) − ∇f(w;x)) − (∇f(w';x') − ∇f(w;x'))‖/n ≤ 2 L1 ‖w' − w‖/n, ‖w' − w‖ = Φ̂^{1/κ}/(4γL1)
    sens_diff = phi ** (1.0 / kappa) / (2.0 * gamma * n)
    paper_sigma_hat = L0 * math.sqrt(K) / (n * math.sqrt(rho))
    paper_sigma_k = phi ** (1.0 / kappa) * np.sqrt(T_k * K) / (gamma * n * math.sqrt(rho))
    # z = σ/Δ depends on the round only through T_k (the Φ̂^{1/κ} cancels).
    z_paper = {int(T): float(paper_sigma_k[i] / sens_diff[i]) for i, T in enumerate(T_k)}
    counts_worst: dict = {}
    counts_l8: dict = {}
    for T in T_k:
        counts_worst[int(T)] = counts_worst.get(int(T), 0) + int(T) - 1
        counts_l8[int(T)] = counts_l8.get(int(T), 0) + int(T)
    z_full_paper = paper_sigma_hat / sens_full
    paper_rho_worst = accounting.zcdp_rho(_spider_event(z_full_paper, K, z_paper, counts_worst))
    paper_rho_lemma8 = accounting.zcdp_rho(_spider_event(z_full_paper, K, z_paper, counts_l8))
    # Every release's zCDP is Δ²/(2σ²): multiplying all σ by s divides the total by s².  The
    # loop only absorbs floating-point rounding so that the accountant's worst case is ≤ ρ.
    scale = math.sqrt(paper_rho_worst / rho)
    for i in range(60):
        z_by_T = {T: z * scale for T, z in z_paper.items()}
        worst_case_rho = accounting.zcdp_rho(_spider_event(z_full_paper * scale, K, z_by_T, counts_worst))
        if worst_case_rho <= rho:
            break
        scale *= 1.0 + 2.0 ** (i - 52)
    return SpiderPlan(K=K, K_real=K_real, c=c, beta_prime=beta_prime, floor=floor, trivial=trivial,
                      phi_hat=phi, T_k=T_k, sigma_hat=z_full_paper * scale * sens_full,
                      sigma_k=np.array([z_by_T[int(T)] for T in T_k]) * sens_diff, scale=scale, sens_full=sens_full,
                      sens_diff=sens_diff, paper_rho_worst=paper_rho_worst,
                      paper_rho_lemma8=paper_rho_lemma8, worst_case_rho=worst_case_rho,
                      z_full=z_full_paper * scale, z_by_T=z_by_T)


#: How a row left a Spider round: it ran all T_k steps, stopped on the gradient test, or hit
#: ``max_steps``.
_RAN, _STOPPED, _CAPPED = 0, 1, 2


def _spider_round(gradient: Callable, gens: Sequence[np.random.Generator], W: np.ndarray,
                  rows: np.ndarray, whole: bool, T: int, threshold: float, step_len: float,
                  sigma_hat: float, sigma_k: float, room: np.ndarray | None,
                  observe: Observer | None) -> tuple:
    """One round of Algorithm 1 (its full release and up to T steps) for the listed rows
    (ascending; ``whole``: every row of W, which is then updated in place, else W[rows] is
    worked on and written back).

    Rows that leave (stop on the test, or reach ``room``, the steps left before the cap) are
    dropped from the working arrays, so every later gradient, draw and update is on exactly the
    rows still moving, in the same order: the calls and operands of the masked per-step loop
    this replaces, without its masks, gathers and scatters.  Returns (t, reason, gradient rows):
    t and reason (``_RAN``/``_STOPPED``/``_CAPPED``) as ints when every row left at the same step
    for the same reason (the usual case: every row stops at t = 0), else arrays aligned with
    ``rows``; gradient rows is the number of rows the oracle evaluated (the caller counts them)."""
    Wc = W if whole else W[rows]
    G = gradient(Wc)
    est = G + sigma_hat * _draw(gens, rows, W.shape[1])
    if observe is not None and getattr(observe, "listening", True):
        _emit(observe, "full", rows, est, sigma_hat, lambda: G)
    grad_rows = rows.size
    ids = rows                    # rows still moving
    pos = None                    # their positions in ``rows`` (None: all of them)
    t_exit = reason = None        # per-row results, allocated when rows leave at different steps
    for t in range(T):
        norms = row_norms(est)
        stop = norms < threshold
        leave = stop if room is None else stop | (room <= t)
        n_leave = np.count_nonzero(leave)
        if n_leave:
            if pos is None and n_leave == ids.size and (room is None or _all(stop)):
                return t, _STOPPED, grad_rows
            if pos is None:
                pos = np.arange(rows.size)
                t_exit, reason = np.full(rows.size, T), np.full(rows.size, _RAN)
            if Wc is not W:
                W[ids[leave]] = Wc[leave]
            t_exit[pos[leave]] = t
            reason[pos[leave]] = np.where(stop[leave], _STOPPED, _CAPPED)
            if n_leave == ids.size:
                return t_exit, reason, grad_rows
            keep = ~leave
            ids, pos, Wc, est, G, norms = ids[keep], pos[keep], Wc[keep], est[keep], G[keep], norms[keep]
            if room is not None:
                room = room[keep]
        Wc -= (step_len / norms)[:, None] * est
        if t + 1 < T:
            G_new = gradient(Wc)
            grad_rows += ids.size
            prev = est
            est = _spider_update(est, G_new, G, sigma_k * _draw(gens, ids, W.shape[1]))
            if observe is not None and getattr(observe, "listening", True):
                # what the round has released so far: the new estimate (the previous one is
                # public, so this is equivalent to releasing the noisy difference); its
                # noise-free value is the previous release plus the exact difference
                _emit(observe, "difference", ids, est, sigma_k, lambda: prev + (G_new - G))
            G = G_new
    if Wc is not W:
        W[ids] = Wc
    return (T, _RAN, grad_rows) if pos is None else (t_exit, reason, grad_rows)


def kl_spider(problem: Problem, *, rho: float, w0: np.ndarray, L0: float, L1: float, gamma: float,
              kappa: float, F0: float, beta: float = 0.1,
              rng: np.random.Generator | Sequence[np.random.Generator],
              max_steps: int | None = None, observe: Observer | None = None,
              noise_factor: float = 1.0) -> Result:
    """Algorithm 1 (KL Spider): noisy normalized gradient descent with Spider gradient estimates.

    Schedule (lines 1–7, :func:`kl_spider_plan`), e = (2−κ)/κ:
      c = 1 + F0^e/(64γ²L1),  K = ⌈(1 + 64(1/F0)^e γ²L1)[log F0 + κ log(n√ρ/(γL0√d))]⌉ (≥ 1),
      β' = (β/K)(γL0√(Kd)/(n√ρ F0^{1/κ}))^{2−κ},
      Φ̂_0 = F0,  Φ̂_k = max{Φ̂_{k−1}/c, min{(32γL0√(Kd log(1/β'))/(n√ρ))^κ, F0}},
      T_k = ⌈(F0/Φ̂_k)^e⌉,  σ̂ = s·L0√K/(n√ρ),  σ_k = s·Φ̂_k^{1/κ}√(T_k K)/(γn√ρ).
    Round k = 1..K, starting from w_{1,0} = w0:
      ∇_{k,0} = ∇F(w_{k,0}) + N(0, σ̂²I);
      for t = 0..T_k−1: stop the round if ‖∇_{k,t}‖ < (7/(8γ))Φ̂_k^{1/κ}; otherwise
        w_{k,t+1} = w_{k,t} − η_{k,t}∇_{k,t},  η_{k,t} = Φ̂_k^{1/κ}/(4γL1‖∇_{k,t}‖),
        and, if another step follows (t+1 < T_k),
        ∇_{k,t+1} = ∇_{k,t} + [∇F(w_{k,t+1}) − ∇F(w_{k,t})] + N(0, σ_k²I);
      w_{k+1,0} = the round's last iterate.  Output w̄ = w_{K+1,0}.

    Readings (errata KL-E20, KL-E21):
    * w_{0,0} in line 1 is read w_{1,0} (the loop starts at k = 1).
    * ``while t ≤ T_k`` and ``w_{k+1,0} = w_{k,t−1}`` are off by one (the latter is undefined if
      the round stops at t = 0, and Lemma 9/Theorem 1's proof use w_{k,t} at a gradient stop and
      T_k descent steps at a timeout): we take exactly T_k steps at most, stop on the test, carry
      the current iterate, and skip the difference after the last step (it would never be used).
    * K and T_k are not integers as printed: ceilings (K ≥ 1).  If β' ≥ 1 (possible only when
      the privacy scale exceeds F0) the floor is F0.
    * The input condition F0 ≤ (L0γ)^κ is the paper's; it is not enforced (it holds for the true
      F(w0) − F* under KL + Lipschitz, and floating point makes equality fragile).

    Privacy (replace-one, the paper's Definition 2; errata KL-E22): the full gradient has
    sensitivity 2L0/n; a gradient difference has ‖(∇f(w';x)−∇f(w;x)) − (∇f(w';x')−∇f(w;x'))‖/n
    ≤ 2L1‖w'−w‖/n = Φ̂_k^{1/κ}/(2γn), which needs **per-sample** L1-smoothness (and L0-Lipschitz)
    along the trajectory.  With the printed σ̂, σ_k (s = 1) the K full gradients cost 2ρ and the
    differences up to ρ/8 (Lemma 8 says 2ρ with sensitivities L0/n and Φ̂^{1/κ}/n; Theorem 1
    says ρ).  We multiply both by s = √(ρ_printed/ρ), ρ_printed the printed noise's worst-case
    spend (every round runs all T_k steps, T_k − 1 differences), so that worst case is exactly
    ρ by dp-accounting.  That worst case is the run's guarantee (``guarantee_rho``: the stops
    depend on noisy releases, so the number of releases is data dependent and only the longest
    path is certified); each row also reports what it actually released (``rho``, less after
    early stops).  The schedule is data independent, so s is too.

    ``noise_factor`` multiplies both noises (σ̂ and σ_k): 1 is Algorithm 1; 0 runs the
    noise-free control of the experiments (same plan and stopping rule, not private: its
    privacy report is that of the noise it did not add).
    ``max_steps`` caps the total number of inner steps per row (the row stops where it is;
    ``info["capped"]``).  Rows are vectorized with masks; each row's noise comes from its own
    generator.  ``observe`` (optional :data:`Observer`) sees each release: kind ``"full"`` (the
    noisy ∇_{k,0}, σ̂) and ``"difference"`` (the updated estimate ∇_{k,t+1}, σ_k).
    ``info``: "K", "floor", "steps" (per row), "T_k" (planned, list), "phi_hat"
    (Φ̂_K), "capped", and the plan's "beta_prime", "c", "scale", "sigma_hat", "trivial",
    "rounds_stopped_early" (per row), "paper_rho_worst", "paper_rho_lemma8", "worst_case_rho".
    """
    w0 = _check_w0(problem, w0)
    if not (isinstance(noise_factor, (int, float)) and 0.0 <= noise_factor < float("inf")):
        raise ValueError(f"noise_factor must be in [0, inf), got {noise_factor!r}")
    plan = kl_spider_plan(problem.n, problem.d, rho=rho, kappa=kappa, gamma=gamma, L0=L0, L1=L1,
                          F0=F0, beta=beta)
    kappa, gamma, L1 = float(kappa), float(gamma), float(L1)
    if max_steps is not None:
        max_steps = check_int("max_steps", max_steps, minimum=0)
    gens = as_generators(rng)
    single = isinstance(rng, np.random.Generator)
    R, d = len(gens), problem.d

    z_full, z_by_T = plan.z_full, plan.z_by_T
    worst_case_rho = plan.worst_case_rho

    W = np.broadcast_to(w0, (R, d)).copy()
    steps = np.zeros(R, dtype=np.int64)
    grad_calls = np.zeros(R, dtype=np.int64)
    full_releases = np.zeros(R, dtype=np.int64)
    early = np.zeros(R, dtype=np.int64)
    diff_counts = {T: np.zeros(R, dtype=np.int64) for T in z_by_T}
    alive = np.ones(R, dtype=bool)
    capped = np.zeros(R, dtype=bool)
    # Counts shared by every row (rounds that all rows left at the same step for the same
    # reason, without a step cap), kept as ints and added once at the end.
    shared = {"steps": 0, "grads": 0, "full": 0, "early": 0, "diffs": dict.fromkeys(z_by_T, 0)}

    all_rows = np.arange(R)
    gradient, per_row = _counted_gradient(problem, 1)
    grad_rows = 0
    for k in range(plan.K):
        # Rows leave for good only at the step cap, so without one every round has every row.
        rows = all_rows if max_steps is None else np.flatnonzero(alive)
        if rows.size == 0:
            break
        phi_root = plan.phi_hat[k] ** (1.0 / kappa)
        T = int(plan.T_k[k])
        threshold = 7.0 / (8.0 * gamma) * phi_root
        step_len = phi_root / (4.0 * gamma * L1)
        room = None if max_steps is None else max_steps - steps[rows]
        t, reason, n_grad = _spider_round(gradient, gens, W, rows, rows.size == R, T, threshold,
                                          step_len, noise_factor * plan.sigma_hat,
                                          noise_factor * plan.sigma_k[k], room, observe)
        grad_rows += n_grad
        if isinstance(t, int):          # every row left at step t, all stopped or all ran T
            if room is None:
                diffs = min(t, T - 1)
                shared["steps"] += t
                shared["grads"] += 1 + diffs
                shared["full"] += 1
                shared["early"] += reason == _STOPPED
                shared["diffs"][T] += diffs
                continue
            stopped, hit = int(reason == _STOPPED), None
        else:
            stopped = (reason == _STOPPED).astype(np.int64)
            hit = None if room is None else rows[reason == _CAPPED]
        diffs = np.minimum(t, T - 1)
        steps[rows] += t
        grad_calls[rows] += 1 + diffs
        full_releases[rows] += 1
        diff_counts[T][rows] += diffs
        early[rows] += stopped
        if hit is not None:
            capped[hit] = True
            alive[hit] = False
    steps += shared["steps"]
    grad_calls += shared["grads"]
    full_releases += shared["full"]
    early += shared["early"]
    for T, m in shared["diffs"].items():
        diff_counts[T] += m
    problem.grad_evals += per_row * grad_rows

    # Rows with the same release counts spent the same: one accountant call per distinct count
    # (most rows share the stops of their round), the frozen record shared by those rows.
    Ts = list(diff_counts)
    counts = np.column_stack([full_releases] + [diff_counts[T] for T in Ts])
    keys, inverse = np.unique(counts, axis=0, return_inverse=True)
    spent = [accounting.PrivacySpent.from_event(
        _spider_event(z_full, int(key[0]), z_by_T, {T: int(c) for T, c in zip(Ts, key[1:])}),
        relation=accounting.REPLACE_ONE, target_rho=float(rho),
        full_gradient_releases=int(key[0]), difference_releases=int(key[1:].sum()),
        sensitivity_full=plan.sens_full, noise_multiplier_full=z_full,
        worst_case_rho=worst_case_rho, guarantee_rho=worst_case_rho) for key in keys]
    privacy = [spent[i] for i in np.asarray(inverse).reshape(-1)]
    info = {"K": plan.K, "floor": plan.floor, "steps": steps, "T_k": [int(T) for T in plan.T_k],
            "phi_hat": float(plan.phi_hat[-1]), "capped": bool(capped.any()),
            "capped_rows": capped, "beta_prime": plan.beta_prime, "c": plan.c,
            "K_real": plan.K_real, "scale": plan.scale, "sigma_hat": plan.sigma_hat,
            "trivial": plan.trivial, "rounds_stopped_early": early,
            "paper_rho_worst": plan.paper_rho_worst, "paper_rho_lemma8": plan.paper_rho_lemma8,
            "worst_case_rho": worst_case_rho}
    evals = grad_calls * problem.n
    return Result(w=W[0] if single else W, privacy=privacy[0] if single else privacy,
                  grad_evals=int(evals[0]) if single else evals, info=info)
