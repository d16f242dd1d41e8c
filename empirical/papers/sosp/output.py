"""Accuracy of the point the SOSP paper's algorithm returns (Tao et al.):
Theorem 2 bounds α, the accuracy of the output of Gauss-PSGD +
Ada-DP-SPIDER (Definition 2: ‖∇F(x_out)‖ ≤ α and λ_min(∇²F(x_out)) ≥ −√(ρα)).  Both parts are
measured here on the returned point itself, not on the estimation noise the plan sets
(``sosp.ada.*`` fit that noise).  The design is the rate experiments' (:func:`empirical.papers.sosp.rates.
rate_design`: c_χ = 1.5, no exponent supplied).

* ``sosp.out.grad.n`` — ‖∇F(x_out)‖ vs n on CosineSaddle(γ = 1) from the exact saddle, against
  Theorem 2's α (one-sided: an upper bound).
* ``sosp.out.curv.n`` — the second-order accuracy where it binds: over the one-saddle family
  CosineSaddle(γ), γ on a fixed grid, the algorithm (which does not know γ) returns the saddle
  itself for every γ it cannot resolve, so max_γ −λ_min(∇²F_γ(x_out)) is the largest negative
  curvature its output can carry.  Against √(ρα) at Theorem 2's α (one-sided).
* ``sosp.out.grad.eps_frozen`` / ``sosp.out.curv.eps_frozen`` — control: every parameter of the
  plan (α, χ, κ, b1, b2, η, R, Γ, Q, step cap) fixed at ε_plan = 0.5 (n = 1e5 for the gradient
  norm, 3e4 for the curvature: the family's 80 runs per point cost more); only the Gaussian
  noise follows the ε swept (z(ε) from dp-accounting).  A quantity the plan alone sets is flat
  here; one the noise drives moves.  The curvature moves (more noise escapes shallower saddles);
  the gradient norm does not (the stop ‖ĝ‖ ≤ 3χ sets it while the noise stays below χ).
* ``sosp.out.grad.eps`` / ``sosp.out.curv.eps`` / ``sosp.out.grad.d`` / ``sosp.out.grad.m`` —
  the same two accuracies in ε (Theorem 2), d (Theorem 2) and m clients (Theorem 3), the plan
  following the variable; ``sosp.out.grad.d_frozen`` / ``sosp.out.grad.m_frozen`` — controls with
  the plan frozen at d = 16 (the noise's norm still grows as √d) or m = 1 (the server's average
  still divides the noise by √m).
* ``sosp.out.grad.dist.eps`` / ``sosp.out.grad.dist.n`` — Theorem 3's α on the returned point
  of the distributed algorithm (m = 4 clients) in ε and in n per client, one-sided;
  ``sosp.out.grad.dist.eps_frozen`` — its control, the plan frozen at ε = 0.5.
* ``sosp.out.grad.G`` — the gradient norm in G, Assumption 1's Lipschitz constant: s1 = G − s2
  moves G_s alone (M_s, M, ρ, U fixed), one-sided against Theorem 2's G^{2/15}…G^{1/3}.

Private: ``epsilon_*`` columns from dp-accounting at the noise actually added (each query is
one Gaussian release of multiplier z on fresh records).
"""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

from algorithms.sosp.plan import SpiderPlan
from algorithms.sosp.privacy import client_noise_std, gaussian_multiplier, o1_sensitivity
from algorithms.sosp.spider import spider_psgd
from empirical.core.experiment import Check, Experiment
from empirical.papers.sosp.common import (RATE_BASE, geom_grid, privacy_columns, problem, rate_values,
                                   rate_values_effective, register_experiment, theory_settings,
                                   with_G as _with_G)
from empirical.papers.sosp.escape import _SaddlePerRow
from empirical.papers.sosp.rates import rate_design
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

__all__ = ["run_output_grad", "run_output_family"]


def _noise_at(plan: SpiderPlan, epsilon: float) -> SpiderPlan:
    """``plan`` with only its Gaussian noise recalibrated to ε (dp-accounting's z(ε, δ));
    α, χ, κ, b1, b2, η, R, Γ, Q and the step cap are kept."""
    z = gaussian_multiplier(epsilon, plan.delta)
    sigma1 = z * o1_sensitivity(plan.G_sens, plan.b1)
    return dataclasses.replace(plan, epsilon=float(epsilon), z=z, sigma1=sigma1,
                               r_c=client_noise_std(sigma1, plan.m))


def _plan(point: dict, ref) -> tuple:
    """The rate design at (n, ε_plan, d_plan, m_plan) — each the point's ``plan_*`` value if
    given, else the swept one — with the Gaussian noise of the point's ε and the point's d and
    m clients (a control changes only what the plan does not fix).  Returns (design, plan,
    ε_plan, d_plan, m_plan)."""
    n, eps = int(point["n"]), float(point["epsilon"])
    d, m = int(point["d"]), int(point.get("m", 1))
    eps_plan = float(point.get("plan_epsilon", eps))
    d_plan, m_plan = int(point.get("plan_d", d)), int(point.get("plan_m", m))
    des, plan = rate_design({**point, "epsilon": eps_plan, "d": d_plan, "m": m_plan}, ref, n)
    if eps_plan != eps:
        plan = _noise_at(plan, eps)
    if (d_plan, m_plan) != (d, m):
        # the frozen plan on the point's dimension and clients: α, χ, κ, b1, b2, η, R, Γ, z
        # and the per-client σ₁ are the design's; each client adds its σ₁ (errata SOSP-E1)
        plan = dataclasses.replace(plan, d=d, m=m)
    return des, plan, eps_plan, d_plan, m_plan


def run_output_grad(point: dict, rngs: list) -> dict:
    """Gauss-PSGD + Ada-DP-SPIDER from the exact saddle of CosineSaddle(γ = 1) (the rate
    experiments' instance and design); per seed the returned point's ‖∇F‖ and −λ_min."""
    n = int(point["n"])
    prob = problem(point)
    des, plan, eps_plan, d_plan, m_plan = _plan(point, prob)
    R = len(rngs)
    res, oracle = spider_psgd(prob, plan, rngs, true_gradient=prob.gradient)
    grad = np.linalg.norm(prob.gradient(res.x), axis=1)
    th = theory_settings(n, d_plan, m_plan, eps_plan, float(point["delta"]), des.alpha,
                         des.kappa, problem({**point, "d": d_plan, "m": m_plan}))
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {
        "grad_out": grad, "neg_lambda_out": -prob.lambda_min(res.x),
        "alpha_emp": prob.alpha_emp(res.x), "alpha": full(plan.alpha),
        "grad_over_alpha": grad / plan.alpha, "grad_over_chi": grad / plan.chi,
        "is_sosp": (prob.alpha_emp(res.x) <= plan.alpha).astype(float),
        "psi_emp": np.sqrt(oracle.err_sq_sum / np.maximum(oracle.n_queries, 1)),
        "certified": res.certified.astype(float), "capped": res.capped.astype(float),
        "out_of_data": res.out_of_data.astype(float), "steps": res.steps.astype(float),
        "chi": full(plan.chi), "kappa": full(plan.kappa), "eta": full(plan.eta),
        "radius": full(plan.radius), "Gamma": full(plan.Gamma), "Q": full(plan.Q),
        "b1": full(plan.b1), "b2": full(plan.b2), "c_chi": full(des.c_chi),
        "noise_multiplier": full(plan.z), "sigma1": full(plan.sigma1),
        "plan_epsilon": full(eps_plan), "plan_d": full(d_plan), "plan_m": full(m_plan),
        "G_sens": full(prob.G_sens), "M_sens": full(prob.M_sens),
        "used_b1": full(plan.b1), "theory_b1": full(th["b1"]),
        "used_b2": full(plan.b2), "theory_b2": full(th["b2"]),
        "used_Gamma": full(res.info["Gamma"]), "theory_Gamma": full(th["Gamma"]),
        **privacy_columns(oracle.privacy_rows(), R),
    }


def run_output_family(point: dict, rngs: list) -> dict:
    """The worst second-order accuracy of the returned point over the one-saddle family
    CosineSaddle(γ), γ on a fixed grid [gamma_lo, gamma_hi]: the full algorithm (run to its
    own return, not stopped after the first escape procedure) from the exact saddle of every γ,
    with the design of γ = 1 (it does not know γ; M, ρ, U bound every γ ≤ 1), on the point's m
    clients (Algorithm 3 at m > 1, homogeneous; the plan's m is ``plan_m`` if given), and per seed
    max_γ −λ_min(∇²F_γ(x_out)).  A γ the algorithm cannot resolve is returned as the saddle
    (−λ_min = γ); a γ it escapes ends near a minimum (−λ_min < 0).  So this is the largest
    curvature an α-SOSP certificate of this algorithm leaves, measured on its output."""
    n, d, m = int(point["n"]), int(point["d"]), int(point.get("m", 1))
    ref = problem(point)
    des, plan, eps_plan, _, m_plan = _plan(point, ref)
    grid = np.geomspace(point["gamma_lo"], point["gamma_hi"], int(point["gamma_points"]))
    R = len(rngs)
    # m clients (Theorem 3, homogeneous: h = 0), each with its own records and noise
    prob = _SaddlePerRow(d, np.repeat(grid, R), s1=point["s1"], s2=point["s2"], m=m)
    gens = [copy.deepcopy(x) for _ in grid for x in rngs]
    res, orc = spider_psgd(prob, plan, gens)
    g_rows = np.repeat(grid, R)
    y = res.x[:, 0]
    neg = (g_rows * np.cos(y)).reshape(grid.size, R)          # −(−γ cos y) along the saddle axis
    v = res.x[:, 1:]
    grad = np.sqrt((g_rows * np.sin(y)) ** 2
                   + np.sum((v / np.sqrt(1.0 + np.sum(v * v, 1, keepdims=True))) ** 2, 1))
    priv = orc.privacy_rows()
    priv["epsilon_spent"] = priv["epsilon_spent"].reshape(grid.size, R).max(axis=0)
    curv = math.sqrt(plan.hessian_lipschitz * plan.alpha)
    th = theory_settings(n, d, m_plan, eps_plan, float(point["delta"]), des.alpha, des.kappa,
                         problem({**point, "m": m_plan}))
    full = lambda v_: np.full(R, float(v_))  # noqa: E731
    stuck = (np.abs(y) < math.pi / 2).reshape(grid.size, R)
    return {
        "neg_lambda_worst": neg.max(axis=0),
        "grad_worst": grad.reshape(grid.size, R).max(axis=0),
        "gamma_left_max": np.where(stuck.any(axis=0),
                                   np.max(np.where(stuck, grid[:, None], 0.0), axis=0), 0.0),
        "certified_any": res.certified.reshape(grid.size, R).any(axis=0).astype(float),
        "alpha": full(plan.alpha), "curvature_threshold": full(curv),
        "is_sosp": (neg.max(axis=0) <= curv).astype(float),
        "chi": full(plan.chi), "kappa": full(plan.kappa), "eta": full(plan.eta),
        "radius": full(plan.radius), "Gamma": full(plan.Gamma), "Q": full(plan.Q),
        "b1": full(plan.b1), "b2": full(plan.b2), "c_chi": full(des.c_chi),
        "noise_multiplier": full(plan.z), "sigma1": full(plan.sigma1),
        "plan_epsilon": full(eps_plan), "G_sens": full(ref.G_sens), "M_sens": full(ref.M_sens),
        "plan_m": full(m_plan),
        "used_b1": full(plan.b1), "theory_b1": full(th["b1"]),
        "used_b2": full(plan.b2), "theory_b2": full(th["b2"]),
        "used_Gamma": full(res.info["Gamma"]), "theory_Gamma": full(th["Gamma"]),
        **privacy_columns(priv, R),
    }


_OUT_BASE = {**RATE_BASE, "d": 16, "m": 1}
_FAMILY = {"gamma_lo": 0.05, "gamma_hi": 1.0, "gamma_points": 10}


def _exp(eid: str, title: str, var: str, quick: tuple, full: tuple, fixed: dict, run, metric: str,
         checks: tuple, seeds: int, values=rate_values, problem_desc: str = "",
         description: str = "") -> Experiment:
    return register_experiment(Experiment(
        id=eid, paper="sosp", title=title, variable=var, quick_grid=quick, full_grid=full,
        fixed={k: v for k, v in {**_OUT_BASE, **fixed}.items() if k != var}, seeds=seeds, run=run,
        metric=metric, bound_values=values,
        checks=checks, problem=problem_desc,
        algorithm="gauss_psgd + AdaDPSpider (Algorithms 1, 2), sosp_rates.rate_design",
        description=description, private=True, privacy_rtol=1e-9))


_GRAD_N_UPPER = ("the certificate ‖∇F(x_out)‖ ≤ α_design and α_design/bound = 2.0–2.1 on "
                 "this grid (the calibration c_χ = 1.5; data-free, from spider_design), +20% for "
                 "the noise in ‖ĝ‖ at the stop")
_GRAD_N = _exp(
    "sosp.out.grad.n", "‖∇F‖ of the returned point vs n, d=16, ε=0.5 (Theorem 2's α)", "n",
    geom_grid(1e4, 1e6, 5), geom_grid(1e4, 1e7, 7), {"epsilon": 0.5}, run_output_grad,
    "grad_out",
    (Check("sosp:thm2", "one-sided", 0.1,
           "one-sided: Theorem 2 certifies ‖∇F(x_out)‖ ≤ α, an upper bound (the stop ‖ĝ‖ ≤ 3χ "
           "lands anywhere below it); the slope may be steeper, not flatter; 0.1 because 12 "
           "seeds of a landing point that is uniform-like below 3χ give a CI half-width ≈ 0.06",
           **_held("sosp.out.grad.n", "sosp:thm2", "one-sided", 2.5, _GRAD_N_UPPER),
           expect="finding", expect_full="hold", finding_on="slope",
           note="SOSP-E14: the returned point's gradient norm falls as n^{-0.19} over "
                "n = 1e4…1e6, not as α (n^{-0.39}): the stop lands far below 3χ while the "
                "step η = √(ρα)/M² is near 1 (grad/χ rises 0.81 → 2.4, saturating at 2.6 by "
                "n = 1e7); α bounds every row.  Full grid (to 1e7): −0.24, and −0.34 from 1e6 "
                "to 1e7: the slope steepens toward α's"),),
    seeds=96, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle")
_GRAD_N.declare_full_only(
    "quick grid (n = 1e4–1e6): the 99% CI of the finding straddles A at 12 seeds; full grid "
    "(n = 1e4–1e7): −0.252 ± 0.020 at 48 seeds (30 CPU-s) on the edge −0.233, ≈ 54 seeds asked; "
    "96 seeds (≈ 60 CPU-s)")
_CURV_N = _exp(
    "sosp.out.curv.n", "Largest −λ_min(∇²F(x_out)) over the saddle family vs n (Theorem 2's √(ρα))",
    "n", (30000, 100000, 300000), geom_grid(1e4, 1e7, 7), {"epsilon": 0.5, **_FAMILY},
    run_output_family, "neg_lambda_worst",
    (Check("sosp:thm2_curvature", "one-sided", 0.15,
           "one-sided: Definition 2 with Theorem 2's α certifies −λ_min(x_out) ≤ √(ρα), an upper "
           "bound; with Ada-DP-SPIDER's frozen noise shallower saddles may be escaped (errata "
           "SOSP-E11), so the slope may be steeper, not flatter; 0.15 because 6 seeds × a "
           "10-value γ grid (factor 1.39 per step) resolve this threshold's slope to ±0.1",
           level=(0.1, 2.0),
           level_source="instance", level_reason="upper: Lemma 1 escapes every γ above √(ρα_design) and α_design/bound "
                        "= 2.0–2.1 on this grid (data-free), so ≤ √2.1 = 1.45 times one γ-grid "
                        "step 1.39: 2.0; lower: with no curvature a round's frozen push Γησ₁ "
                        "stays ≤ 0.2R on this grid, so curvatures ≥ 0.1√(ρ·bound) are never all "
                        "escaped"),),
    seeds=6, problem_desc="CosineSaddle(k=1, γ on 10 grid values in [0.05, 1], b=1), x0 = saddle")
_GRAD_EPS = _exp(
    "sosp.out.grad.eps_frozen", "Control: ‖∇F(x_out)‖ vs the noise's ε, plan frozen at ε=0.5, n=1e5",
    "epsilon", (0.5, 1.0, 2.0, 4.0), geom_grid(0.5, 4.0, 7, integer=False),
    {"n": 100000, "plan_epsilon": 0.5}, run_output_grad, "grad_out",
    (Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output's gradient norm is driven by the Gaussian noise "
           "(∝ z(ε), slope −0.91 at the noise actually added); it must be ruled out if the stop "
           "threshold 3χ, which the frozen plan fixes, sets it; 0.1 as for sosp.out.grad.n",
           values=rate_values_effective),),
    seeds=12, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle")
_CURV_EPS = _exp(
    "sosp.out.curv.eps_frozen",
    "Control: largest −λ_min(x_out) over the saddle family vs the noise's ε, plan frozen at ε=0.5, n=3e4",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.5, 4.0, 7, integer=False),
    {"n": 30000, "plan_epsilon": 0.5, **_FAMILY}, run_output_family, "neg_lambda_worst",
    (Check("sosp:thm2_sampling", "reject", 0.1,
           "competing reading: the plan alone sets the output's curvature (ε-free, slope 0, as "
           "the sampling term of Theorem 2); it must be ruled out if the noise drives the "
           "escape; 0.1 as for sosp.out.curv.n's CI"),),
    seeds=8, problem_desc="CosineSaddle(k=1, γ on 10 grid values in [0.05, 1], b=1), x0 = saddle")


# --------------------------------------------------------------------------------------------
# The returned point's accuracy in ε, d and m (Theorems 2 and 3), each beside a control whose
# plan is frozen (only the noise, the dimension or the clients move): a slope the plan alone
# sets is flat in its control; one the noise drives moves there too.
# --------------------------------------------------------------------------------------------
def _grad_check(eid: str, bound: str, values, upper: float, ratio: str) -> Check:
    return Check(
        bound, "one-sided", 0.1,
        "one-sided: Theorems 2/3 certify ‖∇F(x_out)‖ ≤ α, an upper bound (the stop ‖ĝ‖ ≤ 3χ "
        "lands anywhere below it); the slope may be steeper, not flatter; 0.1 as for "
        "sosp.out.grad.n (10 seeds: CI half-width ≈ 0.07 over the grid's span)",
        values=values, **_held(eid, bound, "one-sided", upper,
                               f"the certificate ‖∇F(x_out)‖ ≤ α_design with α_design/bound = "
                               f"{ratio} on the full grid (data-free, spider_design), +20% for "
                               f"the noise in ‖ĝ‖ at the stop"))


_GRAD_EPS = _exp(
    "sosp.out.grad.eps", "‖∇F‖ of the returned point vs ε, d=16, n=1e5 (Theorem 2's α)",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.25, 8.0, 6, integer=False), {"n": 100000},
    run_output_grad, "grad_out",
    (_grad_check("sosp.out.grad.eps", "sosp:thm2", rate_values_effective, 2.8, "1.98–2.32"),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output's gradient norm follows the Gaussian noise alone "
           "(∝ z(ε)); control: sosp.out.grad.eps_frozen (same n, d, ε grid, plan frozen); 0.1 "
           "as for the main check", values=rate_values_effective)),
    seeds=10, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle")
_CURV_EPS_PLAN = _exp(
    "sosp.out.curv.eps",
    "Largest −λ_min(∇²F(x_out)) over the saddle family vs ε, n=3e4 (Theorem 2's √(ρα))",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.25, 8.0, 6, integer=False),
    {"n": 30000, **_FAMILY}, run_output_family, "neg_lambda_worst",
    (Check("sosp:thm2_curvature", "one-sided", 0.15,
           "one-sided: Definition 2 with Theorem 2's α certifies −λ_min(x_out) ≤ √(ρα), an upper "
           "bound (errata SOSP-E11: shallower saddles may be escaped); the bound at the noise "
           "added (errata SOSP-E12); 0.15 as for sosp.out.curv.n; control: "
           "sosp.out.curv.eps_frozen (the noise alone moves the curvature)",
           values=rate_values_effective, level=(0.1, 2.2), level_source="instance",
           level_reason="upper: Lemma 1 escapes every γ above √(ρα_design) and α_design/bound "
                        "= 1.95–2.35 on the full grid (data-free), so ≤ √2.35 = 1.53 times one "
                        "γ-grid step 1.39: 2.2; lower: as for sosp.out.curv.n"),),
    seeds=4, problem_desc="CosineSaddle(k=1, γ on 10 grid values in [0.05, 1], b=1), x0 = saddle")
_GRAD_D = _exp(
    "sosp.out.grad.d", "‖∇F‖ of the returned point vs d, n=1e5, ε=0.5 (Theorem 2's α)",
    "d", (4, 8, 16), (4, 8, 16, 32, 64, 128), {"n": 100000, "epsilon": 0.5}, run_output_grad,
    "grad_out", (_grad_check("sosp.out.grad.d", "sosp:thm2", rate_values, 2.7, "1.97–2.20"),),
    seeds=6, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle")
_GRAD_D_FROZEN = _exp(
    "sosp.out.grad.d_frozen",
    "Control: ‖∇F(x_out)‖ vs d with the plan frozen at d=16, n=1e5, ε=0.5",
    "d", (4, 8, 16), (4, 8, 16, 32, 64, 128), {"n": 100000, "epsilon": 0.5, "plan_d": 16},
    run_output_grad, "grad_out",
    (Check("sosp:thm2", "reject", 0.1,
           "control: the plan's d-slope (Theorem 2's α through the design); with the plan "
           "frozen a quantity the plan sets is flat and this slope is ruled out; 0.1 as for "
           "sosp.out.grad.d"),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output's gradient norm follows the Gaussian noise's norm "
           "(√d at a fixed per-coordinate σ₁, which the frozen plan keeps); 0.1 as above")),
    seeds=6, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle")
_GRAD_M = _exp(
    "sosp.out.grad.m",
    "‖∇F‖ of the returned point vs the number of clients m, n=3e4, d=16, ε=0.5 (Theorem 3's α)",
    "m", (1, 2, 4), (1, 2, 4, 8, 16, 32), {"n": 30000, "epsilon": 0.5}, run_output_grad,
    "grad_out", (_grad_check("sosp.out.grad.m", "sosp:thm3", rate_values, 2.7, "2.06–2.22"),),
    seeds=96, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05, m clients, h=0), x0 = saddle")
_GRAD_M.declare_full_only(
    "quick grid (m = 1–4): CI ±0.47 at 6 seeds, ≈ ±0.12 at 96, against tol 0.1; full grid (m = "
    "1–32): −0.046 ± 0.13 at 6 seeds, −0.137 ± 0.038 at 40 (on the edge −0.100); 96 seeds "
    "(≈ 36 CPU-s)")
_GRAD_M_FROZEN = _exp(
    "sosp.out.grad.m_frozen",
    "Control: ‖∇F(x_out)‖ vs m with the plan frozen at m=1, n=3e4, d=16, ε=0.5",
    "m", (1, 2, 4), (1, 2, 4, 8, 16, 32), {"n": 30000, "epsilon": 0.5, "plan_m": 1},
    run_output_grad, "grad_out",
    (Check("sosp:thm3", "reject", 0.1,
           "control: the plan's m-slope (Theorem 3's α through the design); with the plan "
           "frozen at m = 1 a quantity the plan sets is flat and this slope is ruled out, while "
           "the server's average still divides the noise and sampling error by √m; 0.1 as for "
           "sosp.out.grad.m"),),
    seeds=6, problem_desc="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05, m clients, h=0), x0 = saddle")
_GRAD_M_FROZEN.declare_full_only("quick grid (m = 1–4, 6 seeds): CI ±0.46 against tol 0.1, ≈ 21 seeds needed; full grid (m = 1–32): sosp:thm3 REJECTED, +0.093 ± 0.15")


# --------------------------------------------------------------------------------------------
# The returned point's accuracy in G, the Lipschitz constant of Assumption 1 (Theorem 2).  On
# the cosine-saddle family G = G_s = s1 + s2 is the exact supremum of the data part's gradient
# norm (attained: a = u, w = 1 at ⟨u, x⟩ = 0), and s1 moves it alone: M_s = s2, M, ρ and U
# do not involve s1.  So the sweep sets s1 = G − s2 and holds every other constant.
# --------------------------------------------------------------------------------------------
def run_output_grad_G(point: dict, rngs: list) -> dict:
    """:func:`run_output_grad` on CosineSaddle with s1 = G − s2 (the point's G)."""
    return run_output_grad(_with_G(point), rngs)


def rate_values_G(point: dict) -> dict:
    """:func:`rate_values` at s1 = G − s2: the bound's G is the instance's G_s = s1 + s2."""
    return rate_values(_with_G(point))


_G_BASE = {k: v for k, v in _OUT_BASE.items() if k != "s1"}
_GRAD_G = register_experiment(Experiment(
    id="sosp.out.grad.G", paper="sosp",
    title="‖∇F‖ of the returned point vs the Lipschitz constant G, n=1e5, d=16, ε=0.5 "
          "(Theorem 2's α)",
    # G ≤ 1: O₁'s batch b1 = nκ/(2Uη) grows with G (7184 at G = 1.6), and from G ≈ 1.6 on
    # every run exhausts its n = 1e5 records before the certificate (out_of_data), outside
    # Theorem 2's premise that n records suffice
    variable="G", quick_grid=(0.1, 0.316, 1.0), full_grid=geom_grid(0.1, 1.0, 6, integer=False),
    fixed={**_G_BASE, "n": 100000, "epsilon": 0.5}, seeds=12, run=run_output_grad_G,
    metric="grad_out", bound_values=rate_values_G,
    checks=(
        Check("sosp:thm2", "one-sided", 0.1,
              "one-sided: Theorem 2 certifies ‖∇F(x_out)‖ ≤ α, an upper bound (the stop "
              "‖ĝ‖ ≤ 3χ lands anywhere below it); the slope may be flatter in G than α's "
              "(G^{2/15} in the privacy term, G^{1/3} in the sampling term: local +0.18 here), "
              "not steeper; 0.1 as for sosp.out.grad.n (12 seeds over one decade: CI "
              "half-width ≈ 0.1)",
              **_held("sosp.out.grad.G", "sosp:thm2", "one-sided", 2.6,
                      "the certificate ‖∇F(x_out)‖ ≤ α_design with α_design/bound = 1.99–2.11 "
                      "on the full grid (data-free, spider_design), +20% for the noise in ‖ĝ‖ "
                      "at the stop")),
        Check("sosp:thm4_gradient_error", "reject", 0.1,
              "competing reading: the output's gradient norm follows the error of one noisy "
              "gradient release (eq. 141: linear in G, the Gaussian std z·2G/b and the sampling "
              "spread both ∝ G at a fixed batch), which it would if the plan did not adapt its "
              "batches and threshold to G; 0.1 as for the main check",
              values=lambda p: {**rate_values_G(p), "T": 1.0, "omega": 0.1}),
    ),
    problem="CosineSaddle(k=1, γ=b=1, s1=G−0.05, s2=0.05), x0 = saddle",
    algorithm="gauss_psgd + AdaDPSpider (Algorithms 1, 2), sosp_rates.rate_design",
    description="G = s1 + s2 is the exact supremum of the per-record gradient spread; s1 moves "
                "G alone (M_s = s2, M, ρ, U fixed).",
    private=True, privacy_rtol=1e-9))


# --------------------------------------------------------------------------------------------
# Theorem 3 on the returned point in ε and n (m = 4 clients, homogeneous): the plan follows
# the variable; in ε beside a control whose plan is frozen at ε = 0.5 (only the Gaussian
# noise follows ε), as sosp.out.grad.eps / .eps_frozen do for Theorem 2.
# --------------------------------------------------------------------------------------------
_DIST = {"m": 4, "d": 16}
_DIST_DESC = "CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05, m=4 clients, h=0), x0 = saddle"
_GRAD_DIST_EPS = _exp(
    "sosp.out.grad.dist.eps",
    "‖∇F‖ of the returned point vs ε, m=4 clients, n=3e4 each, d=16 (Theorem 3's α)",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.25, 8.0, 6, integer=False),
    {**_DIST, "n": 30000}, run_output_grad, "grad_out",
    (_grad_check("sosp.out.grad.dist.eps", "sosp:thm3", rate_values_effective, 2.9,
                 "2.01–2.42"),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output's gradient norm follows the Gaussian noise alone "
           "(∝ z(ε)); control: sosp.out.grad.dist.eps_frozen (same n, m, d, ε grid, plan "
           "frozen); 0.1 as for the main check", values=rate_values_effective)),
    seeds=10, problem_desc=_DIST_DESC)
_GRAD_DIST_EPS_FROZEN = _exp(
    "sosp.out.grad.dist.eps_frozen",
    "Control: ‖∇F(x_out)‖ vs the noise's ε, plan frozen at ε=0.5, m=4 clients, n=3e4 each",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.25, 8.0, 6, integer=False),
    {**_DIST, "n": 30000, "plan_epsilon": 0.5}, run_output_grad, "grad_out",
    (Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output's gradient norm follows the Gaussian noise alone "
           "(∝ z(ε), slope −0.91 at the noise added), which it would if the noise and not the "
           "stop threshold 3χ (frozen here) set it; 0.1 as for sosp.out.grad.dist.eps; the "
           "plan's own slope is what sosp.out.grad.dist.eps measures beside this one",
           values=rate_values_effective,
           history="declared first beside a second competitor, sosp:thm3 (the plan's "
                   "ε-slope); removed after the full grid because it could not be decided: "
                   "Theorem 3's asymptotic ε-exponent is 0, the value a flat control has, so "
                   "a reject could only come out INCONCLUSIVE or NOT REJECTED (full grid: "
                   "+0.022 [−0.066, +0.104], local −0.268 ruled out, asymptotic 0 not "
                   "decided)"),),
    seeds=10, problem_desc=_DIST_DESC)
_GRAD_DIST_N = _exp(
    "sosp.out.grad.dist.n",
    "‖∇F‖ of the returned point vs n per client, m=4 clients, d=16, ε=0.5 (Theorem 3's α)",
    "n", geom_grid(1e4, 1e5, 3), geom_grid(1e4, 1e6, 5), {**_DIST, "epsilon": 0.5},
    run_output_grad, "grad_out",
    (dataclasses.replace(
        _grad_check("sosp.out.grad.dist.n", "sosp:thm3", rate_values, 2.7, "2.10–2.18"),
        history="declared at 10 seeds beside a competitor, sosp:thm3_sampling ((mn)^{−1/3}); "
                "full grid at 10 seeds −0.234 [−0.314, −0.161], INCONCLUSIVE on the edge "
                "−0.233; at 40 seeds of another stream −0.266 [−0.295, −0.235], PASS, and the "
                "competitor NOT REJECTED: its exponent −1/3 is Theorem 3's own asymptotic n-exponent, the "
                "band's far end, so no data consistent with the bound can reject it; removed; "
                "then −0.247 [−0.277, −0.216] at 40 seeds of the judged stream, INCONCLUSIVE "
                "(≈ 184 seeds asked): 200 seeds"),),
    seeds=200, problem_desc=_DIST_DESC)
_GRAD_DIST_N.declare_full_only(
    "quick grid (n = 1e4–1e5 per client, m = 4): CI ±0.2 at 10 seeds against tol 0.1; full "
    "grid (n = 1e4–1e6): ±0.03 at 40 seeds (16 CPU-s), 0.014 from the edge; 200 seeds (≈ 80 "
    "CPU-s)")


# --------------------------------------------------------------------------------------------
# Theorem 3's second-order accuracy on the returned point (m = 4 clients): the saddle family's
# largest −λ_min(x_out) in ε, the plan following ε, beside a control whose plan is frozen at
# ε = 0.5 (only the Gaussian noise follows ε), as sosp.out.curv.eps / .eps_frozen at m = 1.
# --------------------------------------------------------------------------------------------
_CURV_DIST = {"epsilon": 0.5, "m": 4, "n": 30000, **_FAMILY}
_CURV_DIST_DESC = ("CosineSaddle(k=1, γ on 10 grid values in [0.05, 1], b=1, m=4 clients, h=0), "
                   "x0 = saddle")
_CURV_DIST_EPS = _exp(
    "sosp.out.curv.dist.eps",
    "Largest −λ_min(∇²F(x_out)) over the saddle family vs ε, m=4 clients, n=3e4 each "
    "(Theorem 3's √(ρα))",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.25, 8.0, 6, integer=False), _CURV_DIST,
    run_output_family, "neg_lambda_worst",
    (Check("sosp:thm3_curvature", "one-sided", 0.15,
           "one-sided: Definition 2 with Theorem 3's α certifies −λ_min(x_out) ≤ √(ρα), an upper "
           "bound (errata SOSP-E11: shallower saddles may be escaped), so the slope may be "
           "steeper, not flatter; the bound at the noise added (errata SOSP-E12), its local slope "
           "alone (the ε-exponent 0 is the sampling term's, far from this grid); 0.15 as for "
           "sosp.out.curv.n (8 seeds × a 10-value γ grid, factor 1.39 per step); control: "
           "sosp.out.curv.dist.eps_frozen (the noise alone moves the curvature the other way)",
           values=rate_values_effective, use_asymptotic=False, level=(0.1, 2.2),
           level_source="instance",
           level_reason="upper: Lemma 1 escapes every γ above √(ρα_design) and α_design/bound "
                        "= 2.0–2.42 on the full grid (data-free, spider_design at m = 4), so ≤ "
                        "√2.42 = 1.56 times one γ-grid step 1.39: 2.2; lower: as for "
                        "sosp.out.curv.n (the server's average divides each round's push by "
                        "√m = 2)"),
     Check("sosp:noise_scale", "reject", 0.15,
           "competing reading: the output's curvature follows the Gaussian noise's scale alone "
           "(∝ z(ε), −0.91 at the noise added), as a quantity set by one release would; 0.15 as "
           "for the main check", values=rate_values_effective)),
    seeds=8, problem_desc=_CURV_DIST_DESC)
_CURV_DIST_EPS.declare_full_only(
    "a point costs 1.2–1.8 CPU-s at 6 seeds (10 γ × seeds rows, m = 4 clients); 8 seeds on 3 "
    "quick points would take ≈ 6 CPU-s of the paper's 3 CPU-s quick-grid allowance")
_CURV_DIST_EPS_FROZEN = _exp(
    "sosp.out.curv.dist.eps_frozen",
    "Control: largest −λ_min(x_out) over the saddle family vs the noise's ε, plan frozen at "
    "ε=0.5, m=4 clients, n=3e4 each",
    "epsilon", (0.5, 1.41421, 4.0), geom_grid(0.5, 4.0, 7, integer=False),
    {**_CURV_DIST, "plan_epsilon": 0.5}, run_output_family, "neg_lambda_worst",
    (Check("sosp:thm2_sampling", "reject", 0.15,
           "competing reading: the plan alone sets the output's curvature (ε-free, slope 0, as "
           "the sampling term of Theorem 2); it must be ruled out if the noise drives the escape; "
           "0.15 as for sosp.out.curv.dist.eps"),
     Check("sosp:thm3_curvature", "reject", 0.15,
           "the plan's own ε-slope (Theorem 3's √(ρα) at the noise added, local slope): with "
           "the plan frozen a quantity the plan sets would follow it nowhere, one the noise "
           "drives moves the other way (less noise escapes fewer saddles); 0.15 as above",
           values=rate_values_effective, use_asymptotic=False)),
    seeds=8, problem_desc=_CURV_DIST_DESC)
_CURV_DIST_EPS_FROZEN.declare_full_only(
    "a point costs 1.2–2.2 CPU-s at 6 seeds (10 γ × seeds rows, m = 4 clients); 8 seeds on 3 "
    "quick points would take ≈ 6 CPU-s of the paper's 3 CPU-s quick-grid allowance")
