"""Rate experiments of the SOSP paper (Tao et al.): Theorem 2
(Ada-DP-SPIDER, Algorithm 2, under Gauss-PSGD) and Theorem 3 (distributed, Algorithm 3), checked
against ``bounds.rates.sosp``.

``sosp.ada.{n,d,epsilon}`` and ``sosp.ada.n.nonprivate`` (Theorem 2), ``sosp.ada.n.frozen_plan``
(negative control: Theorem 2's parameters frozen at n = 1e4, so no n-rate may appear),
``sosp.ada.m`` and ``sosp.ada.m.het`` (Theorem 3 vs the introduction's reading, errata SOSP-E1);
``sosp.ada.d.dist`` and ``sosp.ada.epsilon.dist`` (Theorem 3's d and ε exponents at m = 4).

What is fitted is the estimation noise ψ_emp = rms_t ‖ĝ_t − ∇F(x_{t−1})‖ of Ada-DP-SPIDER,
two-sided (Lemma 7/9: its variance is a sum of sampling and Gaussian terms whose balance gives
Theorems 2, 3); the accuracy of the output, α_emp ≤ α, is one-sided and checked in every row
(tests), never fitted.  The accuracy α of every run is Remark 2's fixed point α = 4c_χψ(α; κ),
solved per grid point by :func:`algorithms.sosp.plan.spider_design`; c_χ = ``C_CHI`` = 1.5 for
every sweep.  No exponent enters the design.  Private: ``epsilon_*`` columns from dp-accounting.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.sosp.plan import Design, SpiderPlan, spider_design, spider_plan
from algorithms.sosp.psgd import PSGDResult
from algorithms.sosp.spider import AdaDPSpider, spider_psgd
from empirical.core.experiment import Check, Experiment
from algorithms.noise_meter import NoiseMeter
from empirical.papers.sosp.common import (RATE_BASE, geom_grid, privacy_columns, problem, rate_values,
                                   rate_values_effective, register_experiment, spider_meter,
                                   theory_settings)
from empirical.papers.sosp.problems import CosineSaddle

__all__ = ["run_rate", "rate_design"]


def rate_design(point: dict, prob: CosineSaddle, n: int) -> tuple[Design, SpiderPlan]:
    """The design and plan of a rate point with n records per client: α, κ from
    :func:`spider_design` (c_χ = point["c_chi"]), everything else from :func:`spider_plan`
    (Theorem 2/3's b1, b2 with that κ; χ, η, R, Γ of the practical parametrization;
    Q = point["Q"]), with G = G_s, M, U, ρ the problem's."""
    d, m = int(point["d"]), int(point.get("m", 1))
    eps, delta = float(point["epsilon"]), float(point["delta"])
    des = spider_design(n, d, epsilon=eps, delta=delta, G_sens=prob.G_sens, M_sens=prob.M_sens,
                        M=prob.M, U=prob.U, hessian_lipschitz=prob.hessian_lipschitz, m=m,
                        c_chi=float(point["c_chi"]))
    plan = spider_plan(n, d, epsilon=eps, delta=delta, alpha=des.alpha, G=prob.G_sens, M=prob.M,
                       U=prob.U, hessian_lipschitz=prob.hessian_lipschitz, G_sens=prob.G_sens,
                       M_sens=prob.M_sens, m=m, Q=int(point["Q"]), kappa=des.kappa)
    return des, plan


def _settings(plan: SpiderPlan, res: PSGDResult, th: dict, Q: int, rows: int) -> dict:
    """``used_<x>``/``theory_<x>`` pairs: what the run used against the theorem's settings
    recomputed independently (:func:`empirical.papers.sosp.common.theory_settings`)."""
    full = lambda v: np.full(rows, float(v))  # noqa: E731
    return {
        "used_b1": full(plan.b1), "theory_b1": full(th["b1"]),
        "used_b2": full(plan.b2), "theory_b2": full(th["b2"]),
        "used_sigma1": full(plan.sigma1), "theory_sigma1": full(th["sigma1"]),
        "used_noise_multiplier": full(plan.z), "theory_noise_multiplier": full(th["z"]),
        "used_Gamma": full(res.info["Gamma"]), "theory_Gamma": full(th["Gamma"]),
        "used_Q": full(res.info["Q"]), "theory_Q": full(Q),
        "used_eta": full(res.info["eta"]), "theory_eta": full(th["eta"]),
        "used_radius": full(res.info["radius"]), "theory_radius": full(th["radius"]),
        "used_max_steps": full(res.info["max_steps"]), "theory_max_steps": full(th["max_steps"]),
    }


def _measured_noise(oracle: AdaDPSpider, sigma1: float, m: int, d: int) -> dict:
    """Σ‖injected noise‖² against Σσ² per row (``max_``/``limit_`` pair of the settings
    verdict), O₁'s σ from the theorem (recomputed), O₂'s from the oracle's step-dependent σ₂.
    Σσ²Z² has relative std √(2Σσ⁴)/Σσ² (the σ's differ, so this is not 1/√(count/2)), and √
    halves it; |ratio − 1| must stay within 6 of those standard errors (a draw scaled wrongly or
    dropped fails the settings verdict; false alarm ≈ 1e-9 per row)."""
    var2 = oracle.n_o1 * m * d * sigma1 ** 2 + oracle.noise_var["o2"]
    var4 = oracle.n_o1 * m * d * sigma1 ** 4 + oracle.noise_var4["o2"]
    ratio = np.sqrt((oracle.noise_sq["o1"] + oracle.noise_sq["o2"]) / var2)
    rel_se = 0.5 * np.sqrt(2.0 * var4) / var2
    return {"max_noise_rel_dev": np.abs(ratio - 1.0), "limit_noise_rel_dev": 6.0 * rel_se}


def run_rate(point: dict, rngs: list) -> dict:
    """Gauss-PSGD + (distributed) Ada-DP-SPIDER from the exact saddle x₀ = 0, R seed rows, with
    :func:`rate_design`'s parameters.  Every parameter used is returned as a column."""
    n, d, m = int(point["n"]), int(point["d"]), int(point.get("m", 1))
    # negative control: the plan of n = plan_n used at every n (and only plan_n records)
    n = int(point.get("plan_n", n))
    eps, delta = float(point["epsilon"]), float(point["delta"])
    prob = problem(point)
    des, plan = rate_design(point, prob, n)
    R = len(rngs)
    th = theory_settings(n, d, m, eps, delta, des.alpha, des.kappa, prob)
    meter = NoiseMeter(R)
    hook = spider_meter(meter, th, prob)
    res, oracle = spider_psgd(prob, plan, rngs, true_gradient=prob.gradient, observe=hook)
    psi_emp = np.sqrt(oracle.err_sq_sum / np.maximum(oracle.n_queries, 1))
    alpha_emp = prob.alpha_emp(res.x)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {**_settings(plan, res, th, int(point["Q"]), R),
        **_measured_noise(oracle, th["sigma1"], m, d), **meter.columns(),
        "used_o2_sigma_max": oracle.o2_sigma_max, "theory_o2_sigma_max": hook.o2_sigma_max,
        "psi_emp": psi_emp,
        "alpha_emp": alpha_emp,
        "alpha": full(plan.alpha),
        "is_sosp": (alpha_emp <= plan.alpha).astype(float),
        "escaped": prob.escaped(res.x).astype(float),
        "certified": res.certified.astype(float),
        "capped": res.capped.astype(float),
        "out_of_data": res.out_of_data.astype(float),
        "err_max_over_chi": oracle.err_max / plan.chi,
        "steps": res.steps.astype(float),
        "escape_procedures": res.procedures.astype(float),
        "escape_rounds_escaped": res.escapes.astype(float),
        "samples_per_client": oracle.samples.astype(float),
        "o1_calls": oracle.n_o1.astype(float), "o2_calls": oracle.n_o2.astype(float),
        "b1": full(plan.b1), "b2": full(plan.b2), "b1_real": full(plan.b1_real),
        "b2_real": full(plan.b2_real), "kappa": full(plan.kappa),
        "kappa_thm": full(max(plan.kappa_1, plan.kappa_2)), "eta": full(plan.eta),
        "chi": full(plan.chi), "radius": full(plan.radius), "Gamma": full(plan.Gamma),
        "Q": full(plan.Q), "max_steps": full(plan.max_steps), "c_chi": full(des.c_chi),
        "psi_design": full(des.psi), "noise_multiplier": full(plan.z),
        "sigma1": full(plan.sigma1), "o2_sigma_max": oracle.o2_sigma_max,
        "G_sens": full(prob.G_sens), "M_sens": full(prob.M_sens),
        **privacy_columns(oracle.privacy_rows(), R),
    }


def _rate_vacuous(point: dict, bound_value: float) -> str | None:
    # α must stay below the saddle's curvature scale: with √(ρα) ≥ γ = 1 the saddle is no
    # longer α-strict and "escape" means nothing.
    vals = rate_values(point)
    if math.sqrt(vals["hessian_lipschitz"] * bound_value) >= 1.0:
        return f"√(ρ·bound) = {math.sqrt(vals['hessian_lipschitz'] * bound_value):.3g} ≥ γ = 1"
    return None


_RATE_TOL = ("two-sided, tolerance 0.03: ψ_emp is the realised noise of the algorithm, whose "
             "variance is the balance of Lemma 7's sampling and Gaussian terms (tight: they are "
             "computed, not bounded, on this instance), so Theorem 2's exponents must show; the "
             "band [local, asymptotic] spans the crossover between its two terms; 0.03 covers "
             "the integer rounding of b1, b2 (≤ 4% per point) and the κ-grid of the design "
             "(factor 10^{1/20}), i.e. ≤ 0.02 in slope over two decades; CI half-width ≈ 0.01")
_RATE_LEVEL = (0.1, 0.5)
_RATE_LEVEL_REASON = ("ψ_emp/bound = (ψ_emp/ψ_design)(ψ_design/bound): the calibration (c_χ = 1.5) "
                      "puts ψ_design/bound in [0.33, 0.48] on every grid (data-free), and ψ_emp/"
                      "ψ_design lies in [0.4, 0.8] because Lemma 7's terms are upper bounds (the "
                      "per-record gradient variance is 0.025 < G_s² = 0.04; drift < κ between "
                      "refreshes) while the last O₁'s Gaussian noise is always there; so "
                      "[0.13, 0.38], widened to [0.1, 0.5].  It catches a wrong constant "
                      "(replace-one vs add/remove noise, a lost 1/√m) that a slope cannot")
_REJECT_SAMPLING = ("competing rate: the non-private −1/3 (Theorem 2's first term alone); "
                    "tolerance 0.03 as for the main check")
_REJECT_PRIVACY = ("competing rate: the privacy term's exponent (−2/5 in n), which must not "
                   "show when ε is huge; tolerance 0.03 as for the main check")

def _rate_exp(var: str, tag: str, fixed: dict, quick: tuple, full: tuple, checks: tuple, *,
              title: str, seeds: int = 12, description: str = "") -> Experiment:
    return register_experiment(Experiment(
        id=f"sosp.ada.{var}" + (f".{tag}" if tag else ""), paper="sosp", title=title,
        variable=var, quick_grid=quick, full_grid=full, fixed={**RATE_BASE, **fixed},
        seeds=seeds, run=run_rate, metric="psi_emp", bound_values=rate_values, checks=checks,
        vacuous=_rate_vacuous, problem="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle",
        algorithm="algorithms.sosp.nonconvex.gauss_psgd + AdaDPSpider (Algorithms 1, 2/3)",
        description=description, private=True, privacy_rtol=1e-9))


_thm2_main = Check("sosp:thm2", "two-sided", 0.03, _RATE_TOL, level=_RATE_LEVEL,
                   level_source="instance", level_reason=_RATE_LEVEL_REASON)

_rate_exp("n", "", {"d": 16, "epsilon": 0.5, "m": 1}, geom_grid(1e4, 1e6, 5), geom_grid(1e4, 1e7, 7),
          (_thm2_main, Check("sosp:thm2_sampling", "reject", 0.03, _REJECT_SAMPLING)),
          title="Ada-DP-SPIDER noise ψ_emp vs n, d=16, ε=0.5 (Theorem 2)")
# Negative control: the same measurement with the plan frozen at n = 1e4 (α, κ, b1, b2, Γ of
# that n, and only 1e4 records) at every n.  ψ_emp must then be flat: the −0.39 of sosp.ada.n
# comes from the algorithm's n-dependent parameters, not from the problem or the measurement.
register_experiment(Experiment(
    id="sosp.ada.n.frozen_plan", paper="sosp",
    title="Negative control: Ada-DP-SPIDER with Theorem 2's plan frozen at n=1e4: ψ_emp vs n",
    variable="n", quick_grid=geom_grid(1e4, 1e6, 3), full_grid=geom_grid(1e4, 1e7, 5),
    fixed={**RATE_BASE, "d": 16, "epsilon": 0.5, "m": 1, "plan_n": 10000}, seeds=12,
    run=run_rate, metric="psi_emp", bound_values=rate_values,
    checks=(Check("sosp:thm2", "reject", 0.03,
                  "negative control: with the parameters frozen, Theorem 2's n-rate must NOT "
                  "appear (the measurement has no n-dependence of its own); 0.03 as for the rate "
                  "checks"),
            Check("sosp:thm2_sampling", "reject", 0.03,
                  "negative control: nor the non-private −1/3; 0.03 as for the rate checks")),
    problem="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle",
    algorithm="gauss_psgd + AdaDPSpider with spider_plan/spider_design evaluated at n = 1e4",
    private=True, privacy_rtol=1e-9))

_rate_exp("d", "", {"n": 100000, "epsilon": 0.5, "m": 1}, (4, 8, 16, 32, 64, 128),
          (4, 8, 16, 32, 64, 128, 256),
          (_thm2_main, Check("sosp:thm2_sampling", "reject", 0.03,
                             "competing rate: the non-private term is d-free (slope 0); 0.03 as "
                             "for the main check")),
          title="Ada-DP-SPIDER noise ψ_emp vs d, n=1e5, ε=0.5 (Theorem 2)")
_EPS_TOL = ("two-sided against the privacy term, the only term of Theorem 2 that depends on ε "
            "(the full bound's local slope depends on the ratio of its two terms, whose Õ "
            "constants are free), evaluated at the noise the algorithm adds: ε → ε_eff = "
            "√(2 ln(1.25/δ))/z(ε) (the accountant's z is ∝ ε^{−0.93} here, not ε^{−1}; "
            "errata SOSP-E12), so the local slope is −0.37 and the band [−0.37, −0.40]; the "
            "ε-free sampling variance (0.4% → 12% of Lemma 7's variance at the design) flattens "
            "it by ≤ 0.01 more (data-free design: −0.361); tolerance 0.03 as for the other rate "
            "checks, fixed before the data (it replaces a 0.06 chosen after seeing them)")
_rate_exp("epsilon", "", {"n": 100000, "d": 16, "m": 1}, (0.05, 0.1, 0.2, 0.4, 0.8),
          geom_grid(0.025, 1.6, 7, integer=False),
          (Check("sosp:thm2_privacy", "two-sided", 0.03, _EPS_TOL, level=_RATE_LEVEL,
                 level_source="instance", level_reason=_RATE_LEVEL_REASON, values=rate_values_effective),
           Check("sosp:thm2", "one-sided", 0.03,
                 "one-sided: the full bound (local slope −0.33, asymptotic 0) is an upper bound "
                 "whose flattening by the sampling term depends on free constants; the noise may "
                 "fall faster in ε, not slower; 0.03 as for the other rate checks"),
           Check("sosp:thm2_sampling", "reject", 0.03,
                 "competing rate: the non-private term is ε-free (slope 0); 0.03 as for the "
                 "other rate checks")),
          title="Ada-DP-SPIDER noise ψ_emp vs ε, n=1e5, d=16 (Theorem 2)",
          # 16 seeds: at 12 the 95% CI (±0.020) straddled the edge of A (INCONCLUSIVE)
          seeds=16)
_rate_exp("n", "nonprivate", {"d": 4, "epsilon": 1e4, "m": 1}, geom_grid(1e4, 1e6, 5),
          geom_grid(1e4, 1e7, 7),
          (Check("sosp:thm2", "two-sided", 0.03, _RATE_TOL, level=_RATE_LEVEL,
                 level_source="instance", level_reason=_RATE_LEVEL_REASON),
           Check("sosp:thm2_privacy", "reject", 0.03, _REJECT_PRIVACY)),
          title="Ada-DP-SPIDER noise ψ_emp vs n at ε=1e4, d=4: the non-private −1/3 (Theorem 2)")

# --- distributed (Theorem 3) -------------------------------------------------------------------
_DIST_TOL = _RATE_TOL.replace("Lemma 7", "Lemma 9").replace("Theorem 2", "Theorem 3")
_REJECT_INTRO = ("competing reading (errata SOSP-E1): §1 contribution 3's (√d/(εmn))^{2/5}, "
                 "privacy term ∝ m^{−2/5}, with Theorem 3's constants; tolerance 0.03")
_REJECT_MN = ("competing rate: the non-private (mn)^{−1/3}, what the privacy term would give if "
              "averaging m clients divided the noise std by m; tolerance 0.03")
for _h, _tag in ((0.0, ""), (2.0, "het")):
    _rate_exp("m", _tag, {"n": 100000, "d": 16, "epsilon": 0.5, "h": _h}, (1, 2, 4, 8, 16),
              (1, 2, 4, 8, 16, 32, 64),
              (Check("sosp:thm3", "two-sided", 0.03, _DIST_TOL, level=_RATE_LEVEL,
                     level_source="instance", level_reason=_RATE_LEVEL_REASON),
               Check("sosp:thm3_intro", "reject", 0.03, _REJECT_INTRO),
               Check("sosp:thm3_sampling", "reject", 0.03, _REJECT_MN)),
              title=f"Distributed Ada-DP-SPIDER noise ψ_emp vs m clients, n=1e5 each, "
                    f"{'heterogeneous (h=2)' if _h else 'homogeneous'} (Theorem 3)",
              seeds=10)


# --- Theorem 3 beyond m: its d and ε exponents at m = 4 clients (quick grids within the verify
# budget, narrow; the full grids, 1.8 decades each, decide) ------------------------------------
_DIST_EPS_TOL = _EPS_TOL.replace("Theorem 2", "Theorem 3").replace("Lemma 7", "Lemma 9")
_rate_exp("d", "dist", {"n": 100000, "epsilon": 0.5, "m": 4}, (4, 8, 16),
          (4, 8, 16, 32, 64, 128, 256),
          (Check("sosp:thm3", "two-sided", 0.03, _DIST_TOL, level=_RATE_LEVEL,
                 level_source="instance", level_reason=_RATE_LEVEL_REASON),
           Check("sosp:thm3_sampling", "reject", 0.03,
                 "competing rate: the non-private term is d-free (slope 0); 0.03 as for the "
                 "main check")),
          title="Distributed Ada-DP-SPIDER noise ψ_emp vs d, m=4 clients, n=1e5 each, ε=0.5 "
                "(Theorem 3)", seeds=6).declare_full_only("quick grid (d = 4–16, 6 seeds): CI ±0.080 against tol 0.03, ≈ 32 seeds needed; full grid (d = 4–256): PASS +0.199 ± 0.025")
_rate_exp("epsilon", "dist", {"n": 100000, "d": 16, "m": 4}, (0.2, 0.4, 0.8),
          geom_grid(0.025, 1.6, 7, integer=False),
          (Check("sosp:thm3_privacy", "two-sided", 0.03, _DIST_EPS_TOL, level=_RATE_LEVEL,
                 level_source="instance", level_reason=_RATE_LEVEL_REASON,
                 values=rate_values_effective),
           Check("sosp:thm3_sampling", "reject", 0.03,
                 "competing rate: the non-private term is ε-free (slope 0); 0.03 as for the "
                 "main check")),
          title="Distributed Ada-DP-SPIDER noise ψ_emp vs ε, m=4 clients, n=1e5 each, d=16 "
                "(Theorem 3)", seeds=6).declare_full_only("quick grid (ε = 0.2–0.8, 6 seeds): CI ±0.050 against tol 0.03, ≈ 388 seeds needed; full grid (ε = 0.025–1.6): PASS −0.372 ± 0.023")
