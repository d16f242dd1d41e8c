"""The DP-SOSP algorithm of Liu, Ganesh, Oh, Thakurta (NeurIPS 2023, reference [29] of Tao et al.),
as the SOSP paper describes it (§1 "Limitations", §3.1–3.2 and
the comparison after Algorithm 2), whose claimed rate Õ(n^{−1/3} + (√d/(εn))^{3/7}) the SOSP
paper calls fundamentally incorrect (``bounds`` id ``sosp:liu_claimed``).

What [29] does, per the SOSP paper:

* the gradient oracle is DP-SPIDER with the model-drift trigger of O₁ (as Ada-DP-SPIDER);
* near a potential saddle (‖ĝ‖ ≤ 3χ) it also calls O₁ and adds *extra* Gaussian noise
  N(0, r²I) "at the same scale as the DP gradient estimation error" on top of the DP estimate,
  then stays in a *Frozen* state for Γ_F steps in which no further perturbation is added;
* the step size is η = 1/M (§3.1: valid for exact gradient descent; the SOSP paper's point is
  that stochastic gradients need a smaller step);
* it outputs all iterates and selects one privately with AboveThreshold on held-out records,
  testing the gradient norm and the smallest Hessian eigenvalue (§3.2, [29] Lemma 4.5).

Parametrization here (the SOSP paper gives none of [29]'s constants): the same practical
design as :mod:`algorithms.sosp.plan` with [29]'s step size — b1 = nκ/(2Uη), b2 = nηχ²/(2U) over
the training records, χ = α/4, α the fixed point α = 4c_χψ(α; κ) of Lemma 7's noise with
η = 1/M, minimised over κ (:func:`liu_design`).  With η independent of α, the balance of the two
privacy terms gives κ ∝ α^{4/3} and α ∝ x^{3/7}, x = √(d log(1/δ))/(nε): [29]'s claimed exponent
comes out of this design (with the paper's η = √(ρα)/M² the same balance gives 2/5).
Γ_F = ⌈(log(R√(2η√(ρα))/(η r)) + 2)/(η√(ρα))⌉ (the growth time that carries noise r to
R = √(α/ρ) along curvature √(ρα), at η = 1/M); r = ψ_design/√d per coordinate.

Privacy: every training record enters one Gaussian release of multiplier z (DP-SPIDER, parallel
composition over disjoint batches: ε_G from dp-accounting); the injected perturbation is
data-independent; AboveThreshold runs on disjoint held-out records with Laplace noise
Lap(b_T) on the threshold and Lap(b_q) on each query of sensitivity Δ, which is
(Δ/b_T + 2Δ/b_q)-DP (Lyu, Su, Li 2017, Alg. 1 with c = 1).  The records are disjoint, so the
whole run is (max{ε_G, ε_SVT}, δ)-DP (parallel composition).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.primitives import as_generators
from algorithms.sosp.plan import SpiderPlan
from algorithms.sosp.privacy import gaussian_multiplier, o1_sensitivity
from algorithms.sosp.spider import AdaDPSpider, ClientData
from algorithms.validation import check_delta, check_int, check_nonnegative, check_positive

__all__ = ["LiuPlan", "liu_noise", "liu_design", "liu_plan", "LiuResult", "liu_sosp",
           "above_threshold", "liu_select", "liu_privacy"]


def liu_noise(alpha: float, kappa: float, *, n: int, d: int, z: float, G_sens: float,
              M_sens: float, M: float, U: float) -> float:
    """Lemma 7's rms estimation noise of DP-SPIDER at step size η = 1/M ([29]'s):
    ψ² = G_s²/b1 + M_s²κ/b2 + d z²(4G_s²/b1² + 4M_s²κ/b2²), b1 = min{n, nκ/(2Uη)},
    b2 = max{1, nηχ²/(2U)}, χ = α/4."""
    eta, chi = 1.0 / M, alpha / 4.0
    b1 = min(float(n), n * kappa / (2.0 * U * eta))
    b2 = max(1.0, n * eta * chi**2 / (2.0 * U))
    var = (G_sens**2 / b1 + M_sens**2 * kappa / b2
           + d * z**2 * (4.0 * G_sens**2 / b1**2 + 4.0 * M_sens**2 * kappa / b2**2))
    return math.sqrt(var)


def liu_design(n: int, d: int, *, epsilon: float, delta: float, G_sens: float, M_sens: float,
               M: float, U: float, c_chi: float = 1.5) -> tuple[float, float, float]:
    """(α, κ, ψ): the smallest α with α = 4c_χ·liu_noise(α; κ) over a log grid of κ (refined by
    bisection in log κ between the best grid neighbours).  No exponent is supplied."""
    n, d = check_int("n", n), check_int("d", d)
    z = gaussian_multiplier(check_positive("epsilon", epsilon), check_delta(delta))
    c_chi = check_positive("c_chi", c_chi)
    kw = dict(n=n, d=d, z=z, G_sens=check_positive("G_sens", G_sens),
              M_sens=check_nonnegative("M_sens", M_sens), M=check_positive("M", M),
              U=check_positive("U", U))
    alphas = np.geomspace(1e-8, 1e3, 221)

    def root(kappa: float) -> float:
        gap = np.array([a - 4.0 * c_chi * liu_noise(a, kappa, **kw) for a in alphas])
        idx = np.flatnonzero((gap[:-1] < 0) & (gap[1:] >= 0))
        if idx.size == 0:
            return math.inf
        i = idx[0]
        return brentq(lambda a: a - 4.0 * c_chi * liu_noise(a, kappa, **kw), alphas[i],
                      alphas[i + 1], xtol=1e-15, rtol=1e-12)

    grid = np.geomspace(1e-7, 1.0, 71)
    vals = np.array([root(k) for k in grid])
    if not np.isfinite(vals).any():
        raise ValueError("no accuracy α in [1e-8, 1e3] satisfies α = 4c_χψ(α; κ) on the κ grid")
    j = int(np.argmin(vals))
    lo, hi = math.log(grid[max(j - 1, 0)]), math.log(grid[min(j + 1, grid.size - 1)])
    best_a, best_k = float(vals[j]), float(grid[j])
    # golden-section search in log κ (α(κ) is unimodal near its minimum)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a_, b_ = lo, hi
    for _ in range(40):
        c1, c2 = b_ - g * (b_ - a_), a_ + g * (b_ - a_)
        if root(math.exp(c1)) <= root(math.exp(c2)):
            b_ = c2
        else:
            a_ = c1
    k_opt = math.exp(0.5 * (a_ + b_))
    a_opt = root(k_opt)
    if a_opt < best_a:
        best_a, best_k = a_opt, k_opt
    return best_a, best_k, liu_noise(best_a, best_k, **kw)


@dataclass(frozen=True)
class LiuPlan:
    """Every parameter of a run of [29]'s algorithm (module docstring)."""

    spider: SpiderPlan       # the DP-SPIDER oracle's parameters (η = 1/M, n = training records)
    alpha: float
    chi: float
    eta: float
    kappa: float
    r_pert: float            # per-coordinate std of the injected perturbation
    frozen: int              # Γ_F
    max_steps: int
    n_train: int
    n_select: int
    candidates: int          # iterates handed to AboveThreshold (evenly spaced, and the last)
    threshold: float         # AboveThreshold accepts s(x) ≤ threshold (noisy)
    hess_scale: float        # s(x) = max{‖∇f̂_S(x)‖, hess_scale·(−λ_min(∇²f̂_S(x)))}
    sensitivity: float       # Δ of s under replace-one on the held-out set
    b_threshold: float       # Laplace scale on the threshold
    b_query: float           # Laplace scale on each query
    epsilon: float
    delta: float


def liu_plan(n: int, d: int, *, epsilon: float, delta: float, alpha: float, kappa: float,
             psi: float, G: float, M: float, U: float, hessian_lipschitz: float,
             G_sens: float, M_sens: float, select_fraction: float = 0.1,
             select_cap: int = 2000, candidates: int = 64,
             max_steps_factor: float = 4.0) -> LiuPlan:
    """[29]'s parameters at accuracy α, drift threshold κ and design noise ψ: η = 1/M, χ = α/4,
    b1 = ⌈n_tr κ/(2Uη)⌉, b2 = ⌈n_tr ηχ²/(2U)⌉ over n_tr = n − n_sel training records
    (n_sel = min{⌈select_fraction·n⌉, select_cap} held out for AboveThreshold), z from
    dp-accounting at (ε, δ), r = ψ/√d, Γ_F as in the module docstring, step cap
    max_steps_factor·U/(ηχ²) (the records run out first: b2 per step spends n_tr/2 in
    U/(ηχ²) steps).  AboveThreshold: threshold α/2 on s(x) = max{‖∇f̂‖, √(α/ρ)(−λ_min)} (so
    s ≤ α/2 means ‖∇‖ ≤ α/2 and −λ_min ≤ √(ρα)/2), Δ = max{2G_s, √(α/ρ)·2M_s}/n_sel,
    b_T = 2Δ/ε, b_q = 4Δ/ε (ε/2 + ε/2)."""
    n, d = check_int("n", n), check_int("d", d)
    epsilon, delta = check_positive("epsilon", epsilon), check_delta(delta)
    alpha, kappa = check_positive("alpha", alpha), check_positive("kappa", kappa)
    psi = check_positive("psi", psi)
    G, M, U = check_positive("G", G), check_positive("M", M), check_positive("U", U)
    rho = check_positive("hessian_lipschitz", hessian_lipschitz)
    G_sens, M_sens = check_positive("G_sens", G_sens), check_nonnegative("M_sens", M_sens)
    if not 0.0 < select_fraction < 1.0:
        raise ValueError(f"select_fraction must be in (0, 1), got {select_fraction}")
    n_sel = min(max(1, math.ceil(select_fraction * n)), check_int("select_cap", select_cap))
    n_tr = n - n_sel
    eta, chi = 1.0 / M, alpha / 4.0
    b1 = min(n_tr, max(1, math.ceil(n_tr * kappa / (2.0 * U * eta))))
    b2 = min(n_tr, max(1, math.ceil(n_tr * eta * chi**2 / (2.0 * U))))
    z = gaussian_multiplier(epsilon, delta)
    sigma1 = z * o1_sensitivity(G_sens, b1)
    r = psi / math.sqrt(d)
    curv, radius = math.sqrt(rho * alpha), math.sqrt(alpha / rho)
    growth = max(math.log(radius * math.sqrt(2.0 * eta * curv) / (eta * r)), 0.0) + 2.0
    frozen = max(1, math.ceil(growth / (eta * curv)))
    max_steps = max(1, math.ceil(max_steps_factor * U / (eta * chi**2)))
    spider = SpiderPlan(n=n_tr, d=d, m=1, epsilon=epsilon, delta=delta, alpha=alpha, chi=chi,
                        eta=eta, radius=radius, kappa=kappa, kappa_1=kappa, kappa_2=kappa,
                        b1=b1, b2=b2, b1_real=n_tr * kappa / (2.0 * U * eta),
                        b2_real=n_tr * eta * chi**2 / (2.0 * U), z=z, sigma1=sigma1, r_c=sigma1,
                        Gamma=frozen, Q=1, G=G, M=M, U=U, hessian_lipschitz=rho,
                        G_sens=G_sens, M_sens=M_sens, max_steps=max_steps)
    hess_scale = math.sqrt(alpha / rho)
    sens = max(2.0 * G_sens, hess_scale * 2.0 * M_sens) / n_sel
    return LiuPlan(spider=spider, alpha=alpha, chi=chi, eta=eta, kappa=kappa, r_pert=r,
                   frozen=frozen, max_steps=max_steps, n_train=n_tr, n_select=n_sel,
                   candidates=check_int("candidates", candidates), threshold=alpha / 2.0,
                   hess_scale=hess_scale, sensitivity=sens, b_threshold=2.0 * sens / epsilon,
                   b_query=4.0 * sens / epsilon, epsilon=epsilon, delta=delta)


@dataclass
class LiuResult:
    """Per seed row: the candidates (R, C, d) handed to AboveThreshold, the selected index
    (−1: none passed; then the last iterate is returned), the returned x (R, d), the number of
    perturbations, steps, whether the step cap or the records ended the run; the oracle."""

    candidates: np.ndarray
    selected: np.ndarray
    x: np.ndarray
    perturbations: np.ndarray
    steps: np.ndarray
    capped: np.ndarray
    out_of_data: np.ndarray
    oracle: AdaDPSpider
    epsilon_svt: float


def _svt_noise(gen: np.random.Generator, b_threshold: float, b_query: float,
               k: int) -> tuple[float, np.ndarray]:
    """AboveThreshold's Laplace draws for one row: the threshold's Lap(b_T), then k queries'
    Lap(b_q), in that order from ``gen``."""
    return float(gen.laplace(0.0, b_threshold)), gen.laplace(0.0, b_query, size=k)


def above_threshold(scores: np.ndarray, threshold: float, b_threshold: float, b_query: float,
                    gen: np.random.Generator,
                    observe: Callable[[float, np.ndarray], None] | None = None) -> int:
    """AboveThreshold on the queries q_t = −s_t against −threshold: the first t with
    −s_t + Lap(b_q) ≥ −threshold + Lap(b_T), else −1.  All of a row's Laplace draws come from
    ``gen`` (the threshold's first).  ``observe(threshold_noise, query_noises)``, if given, sees
    the draws (measured-noise checks: each release minus its noise-free value)."""
    s = np.asarray(scores, dtype=float)
    nt, nq = _svt_noise(gen, b_threshold, b_query, s.size)
    if observe is not None:
        observe(nt, nq)
    noisy_thr = -threshold + nt
    q = -s + nq
    hit = np.flatnonzero(q >= noisy_thr)
    return int(hit[0]) if hit.size else -1


def liu_select(candidates: np.ndarray, plan: LiuPlan, held_out: Callable,
               gens: Sequence[np.random.Generator],
               observe: Callable | None = None) -> np.ndarray:
    """[29]'s private selection: per row r, the held-out statistics of ``candidates[r]`` (C, d)
    on n_sel fresh records (``held_out(gens[r], candidates[r], n_sel, r)`` → gradients (1, C, d),
    Hessians (1, C, d, d)), the scores s = max{‖∇f̂‖, hess_scale·(−λ_min)₊}, and
    AboveThreshold's index (−1: none passed).  ``observe(row, threshold_noise, query_noises)``
    sees each row's Laplace draws."""
    R = candidates.shape[0]
    selected = np.full(R, -1, dtype=np.int64)
    for r in range(R):
        gh, Hh = held_out(gens[r], candidates[r], plan.n_select, r)
        gnorm = np.linalg.norm(gh[0], axis=-1)
        lam = np.linalg.eigvalsh(Hh[0])[:, 0]
        scores = np.maximum(gnorm, plan.hess_scale * np.maximum(-lam, 0.0))
        obs = None if observe is None else (lambda nt, nq, r=r: observe(r, nt, nq))
        selected[r] = above_threshold(scores, plan.threshold, plan.b_threshold, plan.b_query,
                                      gens[r], observe=obs)
    return selected


def liu_sosp(data: ClientData, plan: LiuPlan,
             rng: np.random.Generator | Sequence[np.random.Generator], *,
             held_out: Callable[[np.random.Generator, np.ndarray, int, int],
                                tuple[np.ndarray, np.ndarray]],
             true_gradient: Callable[[np.ndarray], np.ndarray] | None = None,
             observe: Callable | None = None,
             observe_svt: Callable | None = None) -> LiuResult:
    """[29]'s algorithm from x₀ = 0, vectorized over seed rows: DP-SPIDER steps
    x ← x − ηĝ; when ‖ĝ‖ ≤ 3χ outside the Frozen state, ĝ is discarded and the next query is a
    forced O₁ at the same x, to which N(0, r²I) is added, then Γ_F Frozen steps follow; the run
    ends when the training records or the step cap run out.  The iterates at ``candidates``
    evenly spaced steps (and the last) go to AboveThreshold on n_sel fresh held-out records
    (``held_out(gen, X, n_sel, row)`` → gradients (1, C, d), Hessians (1, C, d, d)); the selected
    iterate is returned (the last one if none passes).  ``observe`` is the DP-SPIDER oracle's
    hook (:class:`algorithms.sosp.spider.AdaDPSpider`), ``observe_svt`` :func:`liu_select`'s."""
    gens = as_generators(rng)
    R, d = len(gens), plan.spider.d
    kids = [g.spawn(3) for g in gens]      # oracle, perturbation, selection streams
    oracle = AdaDPSpider(data, plan.spider, [k[0] for k in kids], true_gradient=true_gradient,
                         observe=observe)
    pert_gens = [k[1] for k in kids]
    sel_gens = [k[2] for k in kids]
    X = np.zeros((R, d))
    alive = np.ones(R, dtype=bool)
    pending = np.zeros(R, dtype=bool)
    frozen = np.zeros(R, dtype=np.int64)
    steps = np.zeros(R, dtype=np.int64)
    perts = np.zeros(R, dtype=np.int64)
    capped = np.zeros(R, dtype=bool)
    no_data = np.zeros(R, dtype=bool)
    stride = max(1, math.ceil(plan.max_steps / plan.candidates))
    cand = [[] for _ in range(R)]
    thr2 = (3.0 * plan.chi) ** 2
    while alive.any():
        hit = alive & (steps >= plan.max_steps)
        capped |= hit
        alive &= ~hit
        rows = np.flatnonzero(alive)
        if rows.size == 0:
            break
        g, ok = oracle.query(rows, X[rows], pending[rows])
        if not ok.all():
            no_data[rows[~ok]] = True
            alive[rows[~ok]] = False
            g, rows = g[ok], rows[ok]
        if rows.size == 0:
            break
        for i in np.flatnonzero(steps[rows] % stride == 0):
            cand[rows[i]].append(X[rows[i]].copy())
        steps[rows] += 1
        pert = pending[rows]
        for i in np.flatnonzero(pert):
            g[i] += plan.r_pert * pert_gens[rows[i]].standard_normal(d)
        pending[rows[pert]] = False
        perts[rows[pert]] += 1
        frozen[rows[pert]] = plan.frozen
        small = (~pert) & (frozen[rows] == 0) & (np.einsum("ij,ij->i", g, g) <= thr2)
        pending[rows[small]] = True
        move = ~small
        X[rows[move]] -= plan.eta * g[move]
        dec = rows[move & ~pert]
        frozen[dec] = np.maximum(frozen[dec] - 1, 0)
    C = max(len(c) for c in cand) + 1
    cands = np.empty((R, C, d))
    for r in range(R):
        cs = cand[r] + [X[r].copy()]
        cs += [cs[-1]] * (C - len(cs))            # pad by repeating the last iterate
        cands[r] = np.array(cs)
    selected = liu_select(cands, plan, held_out, sel_gens, observe=observe_svt)
    out = X.copy()
    pick = np.flatnonzero(selected >= 0)
    out[pick] = cands[pick, selected[pick]]
    eps_svt = plan.sensitivity / plan.b_threshold + 2.0 * plan.sensitivity / plan.b_query
    return LiuResult(candidates=cands, selected=selected, x=out, perturbations=perts,
                     steps=steps, capped=capped, out_of_data=no_data, oracle=oracle,
                     epsilon_svt=eps_svt)


def liu_privacy(res: LiuResult) -> dict:
    """ε target, guarantee and spent per row: DP-SPIDER's ε_G (dp-accounting at its z, one
    Gaussian per training record) and AboveThreshold's ε_SVT on disjoint held-out records, so
    max{ε_G, ε_SVT} by parallel composition."""
    p = res.oracle.plan
    eps_g = accounting.epsilon(accounting.gaussian_event(p.z), p.delta)
    guarantee = max(eps_g, res.epsilon_svt)
    spent = np.where(res.oracle.n_queries > 0, guarantee, res.epsilon_svt)
    return {"epsilon_target": p.epsilon, "epsilon_guarantee": guarantee,
            "epsilon_spent": spent, "epsilon_gaussian": eps_g, "epsilon_svt": res.epsilon_svt}
