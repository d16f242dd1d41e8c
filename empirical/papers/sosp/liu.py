"""The prior algorithm the SOSP paper argues against (Tao et al.,
§1 and §3: reference [29], Liu, Ganesh, Oh, Thakurta), run on the SOSP experiments' instance and
checked against its own claimed rate (``sosp:liu_claimed``, (√d/(εn))^{3/7}) and against the
rate the SOSP paper says is achievable (``sosp:thm2``, exponent 2/5).  The algorithm is
:mod:`algorithms.sosp.liu` (DP-SPIDER with η = 1/M, O₁ + extra Gaussian noise near saddles, a
Frozen state, AboveThreshold selection over the iterates on held-out records).

``sosp.liu.best.n`` — the accuracy [29] guarantees: that some iterate is an α-SOSP.  Measured:
min over the iterates handed to AboveThreshold of α_emp(x) = max{‖∇F(x)‖, (−λ_min)₊²/ρ}.  The
iterates do not stop (no threshold test ends the run), so the best one sits at the noise floor
the estimator leaves near the minimum; what the design fixes is the batches, not where the
iterates land.  The returned (selected) point's ‖∇F‖ and −λ_min are stored in every row.
"""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

from algorithms.sosp.liu import liu_design, liu_plan, liu_privacy, liu_sosp
from empirical.core.experiment import Check, Experiment
from algorithms.noise_meter import LAPLACE, NoiseMeter
from empirical.papers.sosp.common import (RATE_BASE, accountant_multiplier, geom_grid, problem,
                                          rate_values, register_experiment, spider_meter)
from empirical.papers.sosp.escape import _SaddlePerRow
from empirical.papers.sosp.problems import CosineSaddle
from empirical.store.calibration import calibrations

#: Calibrated lower band ends, fit on held-out seeds (calibration.json beside this module,
#: recomputed by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str, hi: float, why: str) -> dict:
    """Level-band fields whose lower end is ``eid``'s held-out calibration and whose upper end
    ``hi`` is data-free (``why``); the record states the combined band."""
    r = _HELD_OUT[(eid, bound, kind)]
    r = dataclasses.replace(r, band=(r.band[0], hi))
    return dict(level=r.band, level_source="calibration", calibration=r,
                level_reason=f"upper end {hi:g}: {why}; lower end: {r.describe()}")

__all__ = ["run_liu", "run_liu_family"]


def _design(point: dict, prob: CosineSaddle):
    n, d = int(point["n"]), int(point["d"])
    eps, delta = float(point["epsilon"]), float(point["delta"])
    alpha, kappa, psi = liu_design(n, d, epsilon=eps, delta=delta, G_sens=prob.G_sens,
                                   M_sens=prob.M_sens, M=prob.M, U=prob.U,
                                   c_chi=float(point["c_chi"]))
    plan = liu_plan(n, d, epsilon=eps, delta=delta, alpha=alpha, kappa=kappa, psi=psi,
                    G=prob.G_sens, M=prob.M, U=prob.U, hessian_lipschitz=prob.hessian_lipschitz,
                    G_sens=prob.G_sens, M_sens=prob.M_sens)
    return alpha, kappa, psi, plan


def run_liu_family(point: dict, rngs: list) -> dict:
    """[29]'s algorithm over the one-saddle family CosineSaddle(γ), γ on a fixed grid (the
    design of γ = 1, which bounds M, ρ, U of every γ ≤ 1), as ``sosp.out.curv.n`` runs the SOSP
    paper's.  Per seed: the largest γ whose saddle no iterate leaves (``gamma_unescaped``: the
    curvature [29]'s escape cannot resolve, 0 if every γ is escaped), and the largest
    −λ_min(∇²F_γ(x_sel)) of the selected point over γ (AboveThreshold accepts the first
    candidate with held-out −λ_min ≲ √(ρα)/2, and x₀ is the saddle, so that one is set by the
    selection's threshold)."""
    d = int(point["d"])
    ref = problem({**point, "m": 1})
    alpha, kappa, psi, plan = _design(point, ref)
    grid = np.geomspace(point["gamma_lo"], point["gamma_hi"], int(point["gamma_points"]))
    R = len(rngs)
    g_rows = np.repeat(grid, R)
    prob = _SaddlePerRow(d, g_rows, s1=point["s1"], s2=point["s2"])
    members = {float(g): CosineSaddle(d, gamma=float(g), s1=point["s1"], s2=point["s2"])
               for g in grid}
    gens = [copy.deepcopy(x) for _ in grid for x in rngs]
    res = liu_sosp(prob, plan, gens,
                   held_out=lambda g, X, k, row: members[float(g_rows[row])].held_out_grad_hess(
                       g, X, k))
    y = res.x[:, 0]
    neg = (g_rows * np.cos(y)).reshape(grid.size, R)
    # a γ is escaped when some iterate left its saddle's basin (|y| > π/2)
    left = (np.abs(res.candidates[:, :, 0]) > math.pi / 2).any(axis=1).reshape(grid.size, R)
    stuck = np.where(~left, grid[:, None], 0.0).max(axis=0)
    priv = liu_privacy(res)
    spent = np.asarray(priv["epsilon_spent"], dtype=float).reshape(grid.size, R).max(axis=0)
    curv = math.sqrt(prob.hessian_lipschitz * alpha)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {
        "gamma_unescaped": stuck, "neg_lambda_selected_worst": neg.max(axis=0),
        "alpha": full(alpha), "psi_design": full(psi),
        "curvature_threshold": full(curv), "weak_threshold": full(alpha ** 0.4),
        "selected_is_sosp": (neg.max(axis=0) <= curv).astype(float),
        "selection_failed_any": (res.selected < 0).reshape(grid.size, R).any(axis=0).astype(float),
        "perturbations": res.perturbations.reshape(grid.size, R).sum(axis=0).astype(float),
        "kappa": full(kappa), "eta": full(plan.eta), "chi": full(plan.chi),
        "b1": full(plan.spider.b1), "b2": full(plan.spider.b2), "r_pert": full(plan.r_pert),
        "frozen_steps": full(plan.frozen), "n_select": full(plan.n_select),
        "noise_multiplier": full(plan.spider.z), "c_chi": full(point["c_chi"]),
        "epsilon_target": full(priv["epsilon_target"]),
        "epsilon_guarantee": full(priv["epsilon_guarantee"]), "epsilon_spent": spent,
    }


def liu_theory(n: int, epsilon: float, delta: float, alpha: float, kappa: float,
               prob: CosineSaddle) -> dict:
    """[29]'s noise scales recomputed here from the parametrization of
    :mod:`algorithms.sosp.liu` (not through its plan): n_sel = min{⌈n/10⌉, 2000} held out,
    n_tr = n − n_sel, η = 1/M, b1 = min{n_tr, ⌈n_tr κ/(2Uη)⌉}, b2 = min{n_tr, ⌈n_tr ηχ²/(2U)⌉}
    (χ = α/4), z by bisection of the accountant at (ε, δ), σ₁ = z·2G_s/b1; AboveThreshold's
    Δ = max{2G_s, √(α/ρ)·2M_s}/n_sel, b_T = 2Δ/ε, b_q = 4Δ/ε."""
    n_sel = min(max(1, math.ceil(0.1 * n)), 2000)
    n_tr = n - n_sel
    eta = 1.0 / prob.M
    b1 = min(n_tr, max(1, math.ceil(n_tr * kappa / (2.0 * prob.U * eta))))
    b2 = min(n_tr, max(1, math.ceil(n_tr * eta * (alpha / 4.0) ** 2 / (2.0 * prob.U))))
    z = accountant_multiplier(epsilon, delta)
    sens = max(2.0 * prob.G_sens,
               math.sqrt(alpha / prob.hessian_lipschitz) * 2.0 * prob.M_sens) / n_sel
    return {"z": z, "b1": b1, "b2": b2, "sigma1": z * 2.0 * prob.G_sens / b1,
            "b_threshold": 2.0 * sens / epsilon, "b_query": 4.0 * sens / epsilon}


def liu_meters(meter: NoiseMeter, th: dict, prob: CosineSaddle):
    """(oracle hook, AboveThreshold hook) measuring every release of [29]'s algorithm against
    :func:`liu_theory`'s scales: O₁/O₂ as Ada-DP-SPIDER's (:func:`spider_meter`), the
    threshold's and each query's Laplace noise (channels ``svt_threshold``, ``svt_query``)."""
    meter.channel("svt_threshold", LAPLACE)
    meter.channel("svt_query", LAPLACE)

    def svt(row, nt, nq):
        meter.add("svt_threshold", row, np.array([nt]), th["b_threshold"], family=LAPLACE)
        meter.add("svt_query", row, np.asarray(nq), th["b_query"], family=LAPLACE)
    return spider_meter(meter, th, prob), svt


def run_liu(point: dict, rngs: list) -> dict:
    """[29]'s algorithm on CosineSaddle(γ = 1) from the exact saddle, at the design
    :func:`algorithms.sosp.liu.liu_design` (c_χ = point["c_chi"], no exponent supplied)."""
    prob = problem({**point, "m": 1})
    alpha, kappa, psi, plan = _design(point, prob)
    R = len(rngs)
    meter = NoiseMeter(R)
    th = liu_theory(int(point["n"]), float(point["epsilon"]), float(point["delta"]), alpha,
                    kappa, prob)
    hook, svt_hook = liu_meters(meter, th, prob)
    res = liu_sosp(prob, plan, rngs,
                   held_out=lambda g, X, k, _row: prob.held_out_grad_hess(g, X, k),
                   true_gradient=prob.gradient, observe=hook, observe_svt=svt_hook)
    o = res.oracle
    best = prob.alpha_emp(res.candidates).min(axis=1)
    grad_sel = np.linalg.norm(prob.gradient(res.x), axis=1)
    neg_sel = -prob.lambda_min(res.x)
    curv = math.sqrt(prob.hessian_lipschitz * alpha)
    priv = liu_privacy(res)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {
        **meter.columns(),
        "used_b1": full(plan.spider.b1), "theory_b1": full(th["b1"]),
        "used_b2": full(plan.spider.b2), "theory_b2": full(th["b2"]),
        "used_sigma1": full(plan.spider.sigma1), "theory_sigma1": full(th["sigma1"]),
        "used_svt_b_threshold": full(plan.b_threshold),
        "theory_svt_b_threshold": full(th["b_threshold"]),
        "used_svt_b_query": full(plan.b_query), "theory_svt_b_query": full(th["b_query"]),
        "alpha_best": best, "alpha": full(alpha), "psi_design": full(psi),
        "psi_emp": np.sqrt(o.err_sq_sum / np.maximum(o.n_queries, 1)),
        "grad_selected": grad_sel, "neg_lambda_selected": neg_sel,
        "selected_is_sosp": ((grad_sel <= alpha) & (neg_sel <= curv)).astype(float),
        "selection_passed": (res.selected >= 0).astype(float),
        "perturbations": res.perturbations.astype(float), "steps": res.steps.astype(float),
        "capped": res.capped.astype(float), "out_of_data": res.out_of_data.astype(float),
        "o1_calls": o.n_o1.astype(float), "o2_calls": o.n_o2.astype(float),
        "samples": o.samples.astype(float),
        "kappa": full(kappa), "eta": full(plan.eta), "chi": full(plan.chi),
        "b1": full(plan.spider.b1), "b2": full(plan.spider.b2),
        "r_pert": full(plan.r_pert), "frozen_steps": full(plan.frozen),
        "max_steps": full(plan.max_steps), "n_train": full(plan.n_train),
        "n_select": full(plan.n_select), "candidates": full(res.candidates.shape[1]),
        "svt_threshold": full(plan.threshold), "svt_sensitivity": full(plan.sensitivity),
        "svt_b_threshold": full(plan.b_threshold), "svt_b_query": full(plan.b_query),
        "noise_multiplier": full(plan.spider.z), "sigma1": full(plan.spider.sigma1),
        "c_chi": full(point["c_chi"]), "G_sens": full(prob.G_sens), "M_sens": full(prob.M_sens),
        "epsilon_gaussian": full(priv["epsilon_gaussian"]), "epsilon_svt": full(priv["epsilon_svt"]),
        "epsilon_target": full(priv["epsilon_target"]),
        "epsilon_guarantee": full(priv["epsilon_guarantee"]),
        "epsilon_spent": np.asarray(priv["epsilon_spent"], dtype=float),
    }


_LIU_UPPER = ("the design's α (the accuracy [29]'s parameters certify, c_χ = 1.5) is 2.19–2.37 × "
              "the bound on the full grid (data-free, liu_design)")
register_experiment(Experiment(
    id="sosp.liu.best.n", paper="sosp",
    title="[29] (Liu et al.): accuracy of its best iterate vs n, d=16, ε=0.5 — its 3/7 vs Theorem 2's 2/5",
    variable="n", quick_grid=geom_grid(1e4, 1e5, 3), full_grid=geom_grid(1e4, 1e6, 5),
    fixed={**RATE_BASE, "d": 16, "epsilon": 0.5, "m": 1}, seeds=12, run=run_liu,
    metric="alpha_best", bound_values=rate_values,
    checks=(Check("sosp:liu_claimed", "one-sided", 0.08,
                  "one-sided: [29] claims an upper bound (some iterate is an α-SOSP with α of "
                  "this order); the best iterate may fall faster, not slower; 0.08, set before "
                  "any run: the minimum over ≈ 8 candidates of 12 seeds gives a CI half-width "
                  "≈ 0.05 over one decade of n",
                  **_held("sosp.liu.best.n", "sosp:liu_claimed", "one-sided", 2.5, _LIU_UPPER)),
            Check("sosp:thm2", "reject", 0.08,
                  "competing rate: the SOSP paper's position (§1, §3.1) that [29]'s rate is too "
                  "optimistic and the achievable rate is Theorem 2's (exponent 2/5 in x); if "
                  "[29]'s algorithm did no better than that, its best iterate would fall with "
                  "Theorem 2's local slope; tolerance as for the main check, kept after the full "
                  "grid's separation came out 0.072 (CI half-width 0.025): a tolerance is not "
                  "narrowed to reach a verdict")),
    problem="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle",
    algorithm="algorithms.sosp.liu.liu_sosp ([29] as the SOSP paper describes it)",
    private=True, privacy_rtol=1e-9))
