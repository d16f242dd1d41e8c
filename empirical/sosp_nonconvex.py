"""Experiments for the SOSP paper (Tao et al., ``sosp_private_nonconvex.txt``), checked against
``bounds.sosp_nonconvex``.  Problems: :mod:`empirical.sosp_problems` (cosine-saddle family with
closed-form ∇F, ∇²F, λ_min).  In this paper ρ is the Hessian-Lipschitz constant
(``hessian_lipschitz``) and m the number of clients.

What is fitted two-sided and what one-sided (α is an upper bound)
-----------------------------------------------------------------
* Two-sided: quantities the theory determines up to constants on these instances — the
  estimation noise ψ_emp = rms_t ‖ĝ_t − ∇F(x_{t−1})‖ of Ada-DP-SPIDER (Lemma 7/9: its
  variance is a sum of sampling and Gaussian terms whose balance gives Theorems 2, 3), the
  smallest escapable curvature γ* (Lemma 1), the escape time (Lemma 1's growth law), and the
  operator norm of Algorithm 4's Hessian error (eq. 142).
* One-sided: the accuracy of the output, α_emp(x_out) = max{‖∇F‖, (−λ_min)₊²/ρ}.  Theorems 1–3
  certify α_emp ≤ α; the output is the first point where ‖ĝ‖ ≤ 3χ and the drift test passes,
  so on a curved basin α_emp lands anywhere in (0, α] (notes pitfall 2): only ≤ is claimed, so
  only ≤ is checked (every row, and the slope may be steeper, not flatter).

One calibrated constant
-----------------------
Rates (Theorems 2, 3): the accuracy α of every run is Remark 2's fixed point α = 4c_χψ(α; κ),
solved per grid point by :func:`algorithms.sosp_nonconvex.spider_design` from Lemma 7's noise
with explicit constants, minimised over κ; c_χ = ``C_CHI`` = 1.5 for every sweep (χ = α/4 must
exceed the noise by a tail factor: Lemma 5).  No exponent enters the design: what the checks
compare with Theorem 2's exponents is how the measured noise of the algorithm scales.
Escape (Theorem 1, Lemma 1): α = c_α ψ with c_α = ``C_ALPHA_ESCAPE`` = 10 for every ψ.
Model selection: the number of candidates T is fixed, or tied to α by T = ⌈c_T U M²/(√ρ α^{5/2})⌉,
c_T = ``C_T`` = 10.

Experiments (ids ``sosp.*``; figures in ``figures/sosp/``):
``sosp.ada.{n,d,epsilon}`` and ``sosp.ada.n.nonprivate`` (Theorem 2), ``sosp.ada.n.frozen_plan``
(negative control: Theorem 2's parameters frozen at n = 1e4, so no n-rate may appear),
``sosp.ada.m`` and ``sosp.ada.m.het`` (Theorem 3 vs the introduction's reading, errata SOSP-E1),
``sosp.escape.threshold.psi`` and ``sosp.escape.time.r`` (Lemma 1), ``sosp.escape.spider.n``
(Lemma 1 under Ada-DP-SPIDER's frozen noise, errata SOSP-E11), ``sosp.select.d`` and
``sosp.select.d.tied`` (Algorithm 4, eq. 142 with T fixed or tied to α).

Privacy: rates and selection are private (``epsilon_*`` columns from dp-accounting, see
``algorithms.sosp_nonconvex``); the escape experiments use a synthetic oracle and are not.
"""
from __future__ import annotations

import copy
import math

import numpy as np

import bounds
from algorithms import accounting
from algorithms.sosp_nonconvex import (AdaDPSpider, GaussianOracle, gauss_psgd, practical_gamma,
                                       private_model_selection, spider_design, spider_plan)
from bounds.sosp_nonconvex import log_delta_value
from empirical.experiment import Check, Experiment, register
from empirical.sosp_problems import CosineSaddle

__all__ = ["C_CHI", "C_ALPHA_ESCAPE", "C_T", "DELTA", "Q_RATE", "rate_values", "run_rate",
           "run_escape_threshold", "run_escape_time", "run_selection", "EXPERIMENTS"]

#: The one calibrated constant of the rate experiments: χ = c_χ·ψ_design (Remark 2's α = 4c_χψ).
C_CHI = 1.5
#: The one calibrated constant of the escape experiments: α = c_α ψ (Theorem 1's 16√C s μ²).
C_ALPHA_ESCAPE = 10.0
#: Candidates of the tied model-selection sweep: T = ⌈c_T U M²/(√ρ α^{5/2})⌉ (Lemma 6's count).
C_T = 10.0
#: δ of every private run.
DELTA = 1e-5
#: Escape rounds per procedure in the rate runs (Lemma 2 with ω₀ = (7/8)^10 ≈ 0.26 in the worst
#: case of Corollary 1's 1/8 per round; the per-round escape probability here is ≈ 1).
Q_RATE = 10

EXPERIMENTS: dict[str, Experiment] = {}


def _reg(exp: Experiment) -> Experiment:
    EXPERIMENTS[exp.id] = register(exp)
    return exp


def _geom(lo: float, hi: float, k: int, integer: bool = True) -> tuple:
    v = np.geomspace(lo, hi, k)
    return tuple(int(round(x)) for x in v) if integer else tuple(float(x) for x in v)


# =============================================================================================
# Rates: Theorems 2 and 3 (Ada-DP-SPIDER, central and distributed)
# =============================================================================================
def _problem(point: dict) -> CosineSaddle:
    return CosineSaddle(int(point["d"]), k=int(point.get("k", 1)), m=int(point.get("m", 1)),
                        h=float(point.get("h", 0.0)), s1=point["s1"], s2=point["s2"])


def rate_values(point: dict) -> dict:
    """Symbol values of Theorems 2/3 at a point: G = G_s (per-record gradient spread, what both
    the sampling variance and the sensitivity of O₁ see: the landscape part of f is common to all
    records), M the landscape's smoothness (η = √(ρα)/M²; it bounds M_s), U = 2kγ, ρ = the
    Hessian-Lipschitz bound, log_delta = 8 log(1.25/δ) (errata SOSP-E2)."""
    prob = _problem(point)
    return {"n": float(point["n"]), "d": float(point["d"]), "epsilon": float(point["epsilon"]),
            "m": float(point.get("m", 1)), "log_delta": log_delta_value(point["delta"]),
            "G": prob.G_sens, "U": prob.U, "M": prob.M,
            "hessian_lipschitz": prob.hessian_lipschitz}


def run_rate(point: dict, rngs: list) -> dict:
    """Gauss-PSGD + (distributed) Ada-DP-SPIDER from the exact saddle x₀ = 0, R seed rows.

    Parameters: α, κ from :func:`spider_design` (c_χ = point["c_chi"]), everything else from
    :func:`spider_plan` (Theorem 2/3's b1, b2 with that κ; χ, η, R, Γ of the practical
    parametrization; Q = point["Q"]).  Every parameter used is returned as a column."""
    n, d, m = int(point["n"]), int(point["d"]), int(point.get("m", 1))
    # negative control: the plan of n = plan_n used at every n (and only plan_n records)
    n = int(point.get("plan_n", n))
    eps, delta = float(point["epsilon"]), float(point["delta"])
    prob = _problem(point)
    des = spider_design(n, d, epsilon=eps, delta=delta, G_sens=prob.G_sens, M_sens=prob.M_sens,
                        M=prob.M, U=prob.U, hessian_lipschitz=prob.hessian_lipschitz, m=m,
                        c_chi=float(point["c_chi"]))
    plan = spider_plan(n, d, epsilon=eps, delta=delta, alpha=des.alpha, G=prob.G_sens, M=prob.M,
                       U=prob.U, hessian_lipschitz=prob.hessian_lipschitz, G_sens=prob.G_sens,
                       M_sens=prob.M_sens, m=m, Q=int(point["Q"]), kappa=des.kappa)
    R = len(rngs)
    oracle = AdaDPSpider(prob, plan, rngs, true_gradient=prob.gradient)
    res = gauss_psgd(oracle, np.zeros(d), chi=plan.chi, eta=plan.eta, radius=plan.radius,
                     Gamma=plan.Gamma, Q=plan.Q, max_steps=plan.max_steps, rows=R)
    psi_emp = np.sqrt(oracle.err_sq_sum / np.maximum(oracle.n_queries, 1))
    alpha_emp = prob.alpha_emp(res.x)
    priv = [oracle.privacy(r) for r in range(R)]
    full = lambda v: np.full(R, float(v))  # noqa: E731
    th = _theory_settings(n, d, m, eps, delta, des.alpha, des.kappa, prob)
    # measured noise: Σ‖injected noise‖² against Σσ², O₁'s σ from the theorem (recomputed here),
    # O₂'s from the oracle's step-dependent σ₂.  Σσ²Z² has relative std √(2Σσ⁴)/Σσ² (the
    # σ's differ, so this is not 1/√(count/2)), and √ halves it; |ratio − 1| must stay within 6
    # of those standard errors (a draw scaled wrongly or dropped fails the settings verdict;
    # false alarm ≈ 1e-9 per row)
    var2 = oracle.n_o1 * m * d * th["sigma1"] ** 2 + oracle.noise_var["o2"]
    var4 = oracle.n_o1 * m * d * th["sigma1"] ** 4 + oracle.noise_var4["o2"]
    ratio = np.sqrt((oracle.noise_sq["o1"] + oracle.noise_sq["o2"]) / var2)
    rel_se = 0.5 * np.sqrt(2.0 * var4) / var2
    settings = {
        "used_b1": full(plan.b1), "theory_b1": full(th["b1"]),
        "used_b2": full(plan.b2), "theory_b2": full(th["b2"]),
        "used_sigma1": full(plan.sigma1), "theory_sigma1": full(th["sigma1"]),
        "used_noise_multiplier": full(plan.z), "theory_noise_multiplier": full(th["z"]),
        "used_Gamma": full(res.info["Gamma"]), "theory_Gamma": full(th["Gamma"]),
        "used_Q": full(res.info["Q"]), "theory_Q": full(int(point["Q"])),
        "used_eta": full(res.info["eta"]), "theory_eta": full(th["eta"]),
        "used_radius": full(res.info["radius"]), "theory_radius": full(th["radius"]),
        "used_max_steps": full(res.info["max_steps"]), "theory_max_steps": full(th["max_steps"]),
        "max_noise_rel_dev": np.abs(ratio - 1.0),
        "limit_noise_rel_dev": 6.0 * rel_se,
    }
    return {**settings,
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
        "epsilon_target": np.array([p["epsilon_target"] for p in priv]),
        "epsilon_guarantee": np.array([p["epsilon_guarantee"] for p in priv]),
        "epsilon_spent": np.array([p["epsilon_spent"] for p in priv]),
    }


def _accountant_z(eps: float, delta: float) -> float:
    """z with dp-accounting's ε(Gaussian(z), δ) = ε, by bisection here (independent of the
    algorithm's calibration code)."""
    from scipy.optimize import brentq

    return brentq(lambda v: accounting.epsilon(accounting.gaussian_event(v), delta) - eps,
                  1e-6, 1e4, xtol=1e-15, rtol=1e-14)


def effective_epsilon(eps: float, delta: float) -> float:
    """The ε at which the classical Gaussian mechanism, z_cl = √(2 ln(1.25/δ))/ε (the
    calibration inside Theorem 2's log_delta = 8 ln(1.25/δ)), adds the noise the accountant's z
    adds: ε_eff = √(2 ln(1.25/δ))/z(ε).  z·ε is not constant (3.24 → 3.97 over ε = 0.05…0.8 at
    δ = 1e-5: the RDP → (ε, δ) conversion), so z ∝ ε^{−0.93} there and a rate ∝ ε^{−2/5} in the
    classical calibration is ∝ ε^{−0.37} in the noise actually added (errata SOSP-E12)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / _accountant_z(eps, delta)


def rate_values_effective(point: dict) -> dict:
    """:func:`rate_values` with ε replaced by :func:`effective_epsilon`: the bound evaluated at
    the noise the algorithm adds.  Used only where ε is swept (elsewhere ε is fixed and the
    substitution is a constant factor, which no slope sees)."""
    vals = rate_values(point)
    vals["epsilon"] = effective_epsilon(float(point["epsilon"]), float(point["delta"]))
    return vals


def _theory_gamma(alpha: float, rho_h: float, M: float, r_c: float) -> int:
    """Lemma 1's round length, recomputed here (not through ``practical_gamma``):
    Γ = ⌈(log(R√(2η√(ρα))/(η r_c))₊ + 2)/(η√(ρα))⌉, η = √(ρα)/M², R = √(α/ρ)."""
    curv = math.sqrt(rho_h * alpha)
    eta, radius = curv / M**2, math.sqrt(alpha / rho_h)
    growth = max(math.log(radius * math.sqrt(2.0 * eta * curv) / (eta * r_c)), 0.0) + 2.0
    return max(1, math.ceil(growth / (eta * curv)))


def _theory_settings(n: int, d: int, m: int, eps: float, delta: float, alpha: float,
                     kappa: float, prob: CosineSaddle) -> dict:
    """Theorem 2/3's settings at (α, κ), recomputed here from parameters (5) and Lemma 1 — not
    through ``spider_plan``/``practical_gamma`` — so that the settings verdict compares two
    computations (a wrong step count, batch or noise in the algorithm's plan shows):
    η = √(ρα)/M², χ = α/4, R = √(α/ρ), b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉} (≤ n),
    z with dp-accounting ε(Gaussian(z), δ) = ε (bisection here), σ₁ = z·2G_s/b1,
    Γ = ⌈(log(R√(2η√(ρα))/(η r_c))₊ + 2)/(η√(ρα))⌉ at r_c = σ₁/√m, step cap 20U/(ηχ²)."""
    rho_h, M, U = prob.hessian_lipschitz, prob.M, prob.U
    curv = math.sqrt(rho_h * alpha)
    eta, chi, radius = curv / M**2, alpha / 4.0, math.sqrt(alpha / rho_h)
    b1 = min(n, max(1, math.ceil(n * kappa / (2.0 * U * eta))))
    b2 = min(n, max(1, math.ceil(n * eta * chi**2 / (2.0 * U))))
    z = _accountant_z(eps, delta)
    sigma1 = z * 2.0 * prob.G_sens / b1
    return {"b1": b1, "b2": b2, "z": z, "sigma1": sigma1, "eta": eta, "radius": radius,
            "Gamma": _theory_gamma(alpha, rho_h, M, sigma1 / math.sqrt(m)),
            "max_steps": max(1, math.ceil(20.0 * U / (eta * chi**2)))}


def _rate_vacuous(point: dict, bound_value: float) -> str | None:
    # α must stay below the saddle's curvature scale: with √(ρα) ≥ γ = 1 the saddle is no
    # longer α-strict and "escape" means nothing (notes §6.0).
    vals = rate_values(point)
    if math.sqrt(vals["hessian_lipschitz"] * bound_value) >= 1.0:
        return f"√(ρ·bound) = {math.sqrt(vals['hessian_lipschitz'] * bound_value):.3g} ≥ γ = 1"
    return None


_RATE_BASE = {"s1": 0.15, "s2": 0.05, "delta": DELTA, "c_chi": C_CHI, "Q": Q_RATE, "k": 1}

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
    return _reg(Experiment(
        id=f"sosp.ada.{var}" + (f".{tag}" if tag else ""), paper="sosp", title=title,
        variable=var, quick_grid=quick, full_grid=full, fixed={**_RATE_BASE, **fixed},
        seeds=seeds, run=run_rate, metric="psi_emp", bound_values=rate_values, checks=checks,
        vacuous=_rate_vacuous, problem="CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle",
        algorithm="algorithms.sosp_nonconvex.gauss_psgd + AdaDPSpider (Algorithms 1, 2/3)",
        description=description, private=True, privacy_rtol=1e-9))


_thm2_main = Check("sosp:thm2", "two-sided", 0.03, _RATE_TOL, level=_RATE_LEVEL,
                   level_reason=_RATE_LEVEL_REASON)

_rate_exp("n", "", {"d": 16, "epsilon": 0.5, "m": 1}, _geom(1e4, 1e6, 5), _geom(1e4, 1e7, 7),
          (_thm2_main, Check("sosp:thm2_sampling", "reject", 0.03, _REJECT_SAMPLING)),
          title="Ada-DP-SPIDER noise ψ_emp vs n, d=16, ε=0.5 (Theorem 2)")
# Negative control: the same measurement with the plan frozen at n = 1e4 (α, κ, b1, b2, Γ of
# that n, and only 1e4 records) at every n.  ψ_emp must then be flat: the −0.39 of sosp.ada.n
# comes from the algorithm's n-dependent parameters, not from the problem or the measurement.
_reg(Experiment(
    id="sosp.ada.n.frozen_plan", paper="sosp",
    title="Negative control: Ada-DP-SPIDER with Theorem 2's plan frozen at n=1e4: ψ_emp vs n",
    variable="n", quick_grid=_geom(1e4, 1e6, 3), full_grid=_geom(1e4, 1e7, 5),
    fixed={**_RATE_BASE, "d": 16, "epsilon": 0.5, "m": 1, "plan_n": 10000}, seeds=12,
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
          _geom(0.025, 1.6, 7, integer=False),
          (Check("sosp:thm2_privacy", "two-sided", 0.03, _EPS_TOL, level=_RATE_LEVEL,
                 level_reason=_RATE_LEVEL_REASON, values=rate_values_effective),
           Check("sosp:thm2", "one-sided", 0.03,
                 "one-sided: the full bound (local slope −0.33, asymptotic 0) is an upper bound "
                 "whose flattening by the sampling term depends on free constants; the noise may "
                 "fall faster in ε, not slower; 0.03 as for the other rate checks"),
           Check("sosp:thm2_sampling", "reject", 0.03,
                 "competing rate: the non-private term is ε-free (slope 0); 0.03 as for the "
                 "other rate checks")),
          title="Ada-DP-SPIDER noise ψ_emp vs ε, n=1e5, d=16 (Theorem 2)")
_rate_exp("n", "nonprivate", {"d": 4, "epsilon": 1e4, "m": 1}, _geom(1e4, 1e6, 5),
          _geom(1e4, 1e7, 7),
          (Check("sosp:thm2", "two-sided", 0.03, _RATE_TOL, level=_RATE_LEVEL,
                 level_reason=_RATE_LEVEL_REASON),
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
                     level_reason=_RATE_LEVEL_REASON),
               Check("sosp:thm3_intro", "reject", 0.03, _REJECT_INTRO),
               Check("sosp:thm3_sampling", "reject", 0.03, _REJECT_MN)),
              title=f"Distributed Ada-DP-SPIDER noise ψ_emp vs m clients, n=1e5 each, "
                    f"{'heterogeneous (h=2)' if _h else 'homogeneous'} (Theorem 3)",
              seeds=10)


# =============================================================================================
# Escape (Theorem 1, Lemma 1): synthetic oracle, non-private
# =============================================================================================
#: Upper bounds of the escape instances (γ ≤ 1, b = 1): M = max(γ, b), ρ = max(γ, 3b).
_ESC_M, _ESC_RHO = 1.0, 3.0


def _escape_problem(d: int, gamma: float) -> CosineSaddle:
    return CosineSaddle(d, k=1, gamma=gamma, b=1.0, s1=0.0, s2=1e-12)


def _gamma_grid(point: dict) -> np.ndarray:
    return np.geomspace(point["gamma_lo"], point["gamma_hi"], int(point["gamma_points"]))


def run_escape_threshold(point: dict, rngs: list) -> dict:
    """γ* per seed: the smallest curvature γ on a fixed absolute grid from which Gauss-PSGD's
    first escape procedure (started at the exact saddle x̃ = 0, λ_min = −γ) escapes, at that γ
    and at every larger grid γ.  All γ of one seed share that seed's noise sequence (identical
    generator copies), so the threshold is a property of one noise path.  α = c_α ψ, oracle
    ∇F + N(0, (ψ²/d) I) (r = ψ/√d, σ = 0), Γ from the practical formula, Q = point["Q"]."""
    d, psi = int(point["d"]), float(point["psi"])
    alpha = float(point["c_alpha"]) * psi
    r = psi / math.sqrt(d)
    grid = _gamma_grid(point)
    G = grid.size
    R = len(rngs)
    gens = [copy.deepcopy(g) for g in rngs for _ in range(G)]
    gam = np.tile(grid, R)

    rows_gamma = gam          # γ of each (seed, grid) row, looked up by the oracle
    chi = alpha / 4.0
    eta = math.sqrt(_ESC_RHO * alpha) / _ESC_M**2
    radius = math.sqrt(alpha / _ESC_RHO)
    Gamma = practical_gamma(alpha, _ESC_RHO, _ESC_M, r)
    Q = int(point["Q"])

    def grad(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        # ∇F of CosineSaddle(γ_row, b = 1), each row with its own γ
        g = np.empty_like(X)
        g[:, 0] = -rows_gamma[rows] * np.sin(X[:, 0])
        v = X[:, 1:]
        g[:, 1:] = v / np.sqrt(1.0 + np.sum(v * v, axis=1, keepdims=True))
        return g

    oracle = GaussianOracle(grad, d, sigma=0.0, r=r, rng=gens, rowwise=True)
    res = gauss_psgd(oracle, np.zeros(d), chi=chi, eta=eta, radius=radius, Gamma=Gamma, Q=Q,
                     max_steps=(Q + 1) * Gamma + 1, rows=R * G, stop_on_first_procedure=True)
    esc = res.first_procedure_escaped.reshape(R, G)
    # smallest index from which every larger γ escapes
    ok_from = np.flip(np.cumprod(np.flip(esc, axis=1), axis=1), axis=1).astype(bool)
    idx = np.where(ok_from.any(axis=1), ok_from.argmax(axis=1), G)
    gstar = np.where(idx < G, grid[np.minimum(idx, G - 1)], np.nan)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {"used_Gamma": full(res.info["Gamma"]),
            "theory_Gamma": full(_theory_gamma(alpha, _ESC_RHO, _ESC_M, r)),
            "gamma_star": gstar, "alpha": full(alpha), "curvature_threshold": full(math.sqrt(_ESC_RHO * alpha)),
            "Gamma": full(Gamma), "Q": full(Q), "eta": full(eta), "radius": full(radius),
            "r": full(r), "c_alpha": full(point["c_alpha"]),
            "escaped_at_threshold": esc[:, np.searchsorted(grid, math.sqrt(_ESC_RHO * alpha)):].all(axis=1).astype(float)}


def _escape_threshold_values(point: dict) -> dict:
    return {"psi": point["psi"], "c_alpha": point["c_alpha"], "hessian_lipschitz": _ESC_RHO}


def _thm1_values(point: dict) -> dict:
    return {"psi": point["psi"], "c_alpha": point["c_alpha"]}


_reg(Experiment(
    id="sosp.escape.threshold.psi", paper="sosp",
    title="Smallest curvature γ* Gauss-PSGD escapes from vs noise ψ (Lemma 1: √(ρα), α = c_α ψ)",
    variable="psi", quick_grid=(3e-4, 1e-3, 3e-3, 1e-2, 3e-2), full_grid=_geom(1e-4, 3e-2, 9, False),
    fixed={"d": 10, "c_alpha": C_ALPHA_ESCAPE, "Q": 10, "gamma_lo": 1e-3, "gamma_hi": 1.0,
           "gamma_points": 61},
    seeds=8, run=run_escape_threshold, metric="gamma_star",
    bound_values=_escape_threshold_values,
    checks=(
        Check("sosp:lem1_curvature", "two-sided", 0.08,
              "two-sided: Lemma 1 guarantees escape above √(ρα), and with Γ ∝ 1/(η√(ρα)) "
              "curvature well below it cannot carry the noise to R within Γ steps, so γ* ∝ "
              "√(ρψ); 0.08 covers Γ's log(R/(ηr)) factor (it moves γ*/√(ρα) from ≈ 0.8 to ≈ 0.65 "
              "across the grid: ≤ 0.06 in slope) and the γ grid (15 per decade)",
              level=(0.3, 1.3),
              level_reason="Lemma 1: γ* ≤ √(ρα) (ratio ≤ 1, +1 grid step = 1.17 and seed spread); "
                           "below 0.3 noise alone would escape with no curvature to amplify it "
                           "(the drift in Γ steps is ηr√(dΓ) ≪ R at every ψ)"),
        Check("sosp:thm1", "reject", 0.08,
              "competing law: a threshold linear in the noise (γ* ∝ α ∝ ψ, slope 1, as the "
              "first-order test ‖ĝ‖ ≤ 3χ scales); tolerance as for the main check",
              values=_thm1_values),
    ),
    problem="CosineSaddle(k=1, γ swept on a fixed grid, b=1), d=10, x̃ = exact saddle",
    algorithm="algorithms.sosp_nonconvex.gauss_psgd (Algorithm 1), GaussianOracle (σ=0, r=ψ/√d)",
    private=False))


class _SaddlePerRow(CosineSaddle):
    """CosineSaddle(γ_r) for oracle row r: the records (and so every sensitivity) are the
    family's, the landscape's curvature is the row's own (``gammas[r]``), so a γ grid runs as the
    rows of one batch."""

    def __init__(self, d: int, gammas: np.ndarray, **kw):
        super().__init__(d, gamma=float(np.max(gammas)), **kw)
        self.gammas = np.asarray(gammas, dtype=float)

    def row_gradient(self, X: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        if rows is None:
            raise ValueError("rows must be the oracle's row indices (each row has its own γ)")
        g = self.gradient(X)
        g[:, :self.k] = -self.gammas[rows][:, None] * np.sin(X[:, :self.k])
        return g

    # The one-row methods of ClientData cannot know which row's γ to use: refused (not a stub;
    # AdaDPSpider calls the batched methods with the row indices).
    def batch_gradient(self, gen, x, b):
        raise TypeError("_SaddlePerRow has a γ per oracle row: call batch_gradients(..., rows)")

    def batch_difference(self, gen, x, x_prev, b):
        raise TypeError("_SaddlePerRow has a γ per oracle row: call batch_differences(..., rows)")


def run_escape_spider(point: dict, rngs: list) -> dict:
    """γ* per seed under the DP oracle: Gauss-PSGD + Ada-DP-SPIDER started at the exact saddle of
    CosineSaddle(γ) for every γ of a fixed absolute grid (each γ re-using the seed's generators,
    so one seed = one noise path), stopped when the first escape procedure ends.  The design
    (α, κ, b1, b2, Γ, Q) is that of ``run_rate`` for γ = 1: it does not know γ (M, ρ, U are
    upper bounds valid for every γ ≤ 1).  γ* is the smallest grid γ from which every larger γ
    escapes.  Near the saddle the Gaussian part of the estimate is the last O₁'s noise plus small
    O₂ increments — frozen within a round, not the fresh noise Lemma 1 assumes."""
    n, d = int(point["n"]), int(point["d"])
    eps, delta = float(point["epsilon"]), float(point["delta"])
    ref = _problem(point)
    des = spider_design(n, d, epsilon=eps, delta=delta, G_sens=ref.G_sens, M_sens=ref.M_sens,
                        M=ref.M, U=ref.U, hessian_lipschitz=ref.hessian_lipschitz,
                        c_chi=float(point["c_chi"]))
    plan = spider_plan(n, d, epsilon=eps, delta=delta, alpha=des.alpha, G=ref.G_sens, M=ref.M,
                       U=ref.U, hessian_lipschitz=ref.hessian_lipschitz, G_sens=ref.G_sens,
                       M_sens=ref.M_sens, Q=int(point["Q"]), kappa=des.kappa)
    grid = _gamma_grid(point)
    R = len(rngs)
    # every (γ, seed) pair is one row of ONE run (γ-major), each with its own copy of the seed's
    # generator: rows do not interact, so this is the per-γ runs at once (identical rows)
    prob = _SaddlePerRow(d, np.repeat(grid, R), s1=point["s1"], s2=point["s2"])
    gens = [copy.deepcopy(x) for _ in grid for x in rngs]
    orc = AdaDPSpider(prob, plan, gens)
    res = gauss_psgd(orc, np.zeros(d), chi=plan.chi, eta=plan.eta, radius=plan.radius,
                     Gamma=plan.Gamma, Q=plan.Q, max_steps=(plan.Q + 1) * (plan.Gamma + 1) + 2,
                     rows=R * grid.size, stop_on_first_procedure=True)
    esc = res.first_procedure_escaped.reshape(grid.size, R).T
    used_gamma = res.info["Gamma"]
    ok_from = np.flip(np.cumprod(np.flip(esc, axis=1), axis=1), axis=1).astype(bool)
    idx = np.where(ok_from.any(axis=1), ok_from.argmax(axis=1), grid.size)
    gstar = np.where(idx < grid.size, grid[np.minimum(idx, grid.size - 1)], np.nan)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    z = plan.z
    th = _theory_settings(n, d, 1, eps, delta, des.alpha, des.kappa, ref)
    return {"used_Gamma": full(used_gamma), "theory_Gamma": full(th["Gamma"]),
            "used_b1": full(plan.b1), "theory_b1": full(th["b1"]),
            "used_b2": full(plan.b2), "theory_b2": full(th["b2"]),
            "used_sigma1": full(plan.sigma1), "theory_sigma1": full(th["sigma1"]),
            "gamma_star": gstar, "alpha": full(plan.alpha),
            "curvature_threshold": full(math.sqrt(plan.hessian_lipschitz * plan.alpha)),
            "kappa": full(plan.kappa), "b1": full(plan.b1), "b2": full(plan.b2),
            "Gamma": full(plan.Gamma), "Q": full(plan.Q), "c_chi": full(des.c_chi),
            "noise_multiplier": full(z), "sigma1": full(plan.sigma1),
            "epsilon_target": full(eps),
            "epsilon_guarantee": full(accounting.epsilon(accounting.gaussian_event(z), delta)),
            "epsilon_spent": full(accounting.epsilon(accounting.gaussian_event(z), delta))}


_reg(Experiment(
    id="sosp.escape.spider.n", paper="sosp",
    title="Smallest curvature γ* escaped with the DP oracle (Ada-DP-SPIDER, frozen noise) vs n",
    variable="n", quick_grid=(30000, 100000, 300000, 1000000),
    full_grid=_geom(1e4, 1e7, 7),
    fixed={**_RATE_BASE, "d": 16, "epsilon": 0.5, "m": 1, "gamma_lo": 0.05, "gamma_hi": 1.0,
           "gamma_points": 20},
    seeds=8, run=run_escape_spider, metric="gamma_star", bound_values=rate_values,
    checks=(
        Check("sosp:thm2_curvature", "one-sided", 0.15,
              "one-sided: Lemma 1 only guarantees escape above √(ρα) — under fresh noise; with "
              "Ada-DP-SPIDER's frozen noise a constant push along v_min adds to the curvature's "
              "amplification, so shallower saddles may be escaped and γ* may fall faster with n, "
              "not slower; 0.15 because 8 seeds × a 13-per-decade γ grid resolve the slope of "
              "this noisy threshold only to ±0.1 (CI half-width), which is all this budget buys",
              level=(0.1, 1.6),
              level_reason="γ*/√(ρ·bound) ≤ √(α_design/bound) = √2.05 = 1.43 (+1 grid step): "
                           "Lemma 1's guarantee at the run's α; ≥ 0.1 because with no curvature "
                           "a round's frozen push Γησ₁ is ≤ 0.2R on this grid (no escape)"),
    ),
    problem="CosineSaddle(k=1, γ swept on a fixed grid, b=1, s1=0.15, s2=0.05), d=16",
    algorithm="gauss_psgd + AdaDPSpider (Algorithms 1, 2), design of γ = 1",
    private=True, privacy_rtol=1e-9))


def run_escape_time(point: dict, rngs: list) -> dict:
    """Steps until the first escape procedure's drift reaches R, from the exact saddle
    (λ_min = −γ), with oracle ∇F + N(0, r²I) and α, η, R fixed (they do not depend on r here).
    Γ is set generously (the practical formula at r, times 3) so rounds never time out and the
    first round's escape time is what is measured."""
    d, r = int(point["d"]), float(point["r"])
    alpha, gamma = float(point["alpha"]), float(point["gamma"])
    prob = _escape_problem(d, gamma)
    eta = math.sqrt(_ESC_RHO * alpha) / _ESC_M**2
    radius = math.sqrt(alpha / _ESC_RHO)
    Gamma = 3 * practical_gamma(alpha, _ESC_RHO, _ESC_M, r)
    R = len(rngs)
    oracle = GaussianOracle(prob.gradient, d, sigma=0.0, r=r, rng=rngs)
    res = gauss_psgd(oracle, np.zeros(d), chi=alpha / 4.0, eta=eta, radius=radius, Gamma=Gamma,
                     Q=1, max_steps=Gamma + 2, rows=R, stop_on_first_procedure=True)
    t = np.where(res.first_procedure_escaped, res.first_escape_step - 1, np.nan).astype(float)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {"escape_steps": t, "Gamma": full(Gamma), "eta": full(eta), "radius": full(radius),
            "escaped": res.first_procedure_escaped.astype(float)}


def _escape_time_values(point: dict) -> dict:
    return {"r": point["r"], "alpha": point["alpha"], "gamma": point["gamma"], "M": _ESC_M,
            "hessian_lipschitz": _ESC_RHO}


def _diffusive_values(point: dict) -> dict:
    return {**_escape_time_values(point), "d": point["d"]}


_reg(Experiment(
    id="sosp.escape.time.r", paper="sosp",
    title="Escape time from an exact saddle vs isotropic noise r: log(R/(ηr))/(ηγ) (Lemma 1)",
    variable="r", quick_grid=(1e-9, 1e-7, 1e-5, 1e-3), full_grid=_geom(1e-12, 1e-2, 11, False),
    fixed={"d": 10, "alpha": 0.05, "gamma": 0.5},
    seeds=16, run=run_escape_time, metric="escape_steps", bound_values=_escape_time_values,
    checks=(
        Check("sosp:lem1_escape_time", "two-sided", 0.03,
              "two-sided: along v_min the iterate grows as (1+ηγ)^t ηr|Z|/√(2ηγ) (Lemma 19's "
              "𝒫_p), so the escape time is log(R√(2ηγ)/(ηr|Z|))/log(1+ηγ): the bound's law up "
              "to an additive constant in the log and a constant factor; 0.03 covers the "
              "additive constant (E log|Z| and √(2ηγ): ±0.7 on a log of 6–20, ≤ 0.02 in slope)",
              level=(0.8, 1.6),
              level_reason="steps/bound = ηγ/log(1+ηγ) (discrete growth, = 1.1 at ηγ = 0.19) "
                           "times (1 + shift/log(R/(ηr))) with |shift| ≤ 1 on this grid"),
        Check("sosp:lem1_diffusive", "reject", 0.03,
              "competing law: pure diffusion (R²/(η²r²d), slope −2), what escape would cost "
              "without the exponential growth along the negative curvature", values=_diffusive_values),
    ),
    problem="CosineSaddle(k=1, γ=0.5, b=1), d=10, x̃ = exact saddle",
    algorithm="algorithms.sosp_nonconvex.gauss_psgd (escape procedure), GaussianOracle (σ=0)",
    private=False))


# =============================================================================================
# Private model selection (Algorithm 4, Theorem 4)
# =============================================================================================
def _selection_T(point: dict) -> int:
    if point.get("T_tied", 0):
        prob = _problem(point)
        vals = rate_values(point)
        alpha = bounds.get("sosp:thm3")(**{k: vals[k] for k in bounds.get("sosp:thm3").variables})
        steps = prob.U * prob.M**2 / (math.sqrt(prob.hessian_lipschitz) * alpha**2.5)
        return max(2, math.ceil(float(point["c_T"]) * steps))
    return int(point["T"])


def _candidates(prob: CosineSaddle, T: int) -> np.ndarray:
    """T−1 strict saddles (y₁ = 0.3(t/T), v small: λ_min ≈ −γ cos y₁ < 0) and, last, the
    minimum (π, 0): an α-SOSP for every α, as Theorem 4 assumes."""
    X = np.zeros((T, prob.d))
    X[:-1, 0] = 0.3 * np.arange(T - 1) / T
    X[:-1, 1:] = 0.05
    X[-1, 0] = math.pi
    return X


def run_selection(point: dict, rngs: list) -> dict:
    """Algorithm 4 on T candidates; metric: the geometric mean over candidates of
    ‖∇²F̄(x_t) − ∇²F(x_t)‖_op (sampling error of the held-out Hessians + the aggregated
    symmetric Gaussian noise), per seed row."""
    d, m, n = int(point["d"]), int(point["m"]), int(point["n"])
    prob = _problem(point)
    T = _selection_T(point)
    X = _candidates(prob, T)
    alpha = float(point["alpha"])
    res = private_model_selection(
        X, client_grad_hess=prob.held_out_grad_hess,
        true_grad_hess=lambda Y: (prob.gradient(Y), prob.hessian(Y)), m=m, n=n,
        epsilon=float(point["epsilon"]), delta=float(point["delta"]), alpha=alpha,
        G_sens=prob.G_sens, M_sens=prob.M_sens, hessian_lipschitz=prob.hessian_lipschitz,
        omega=float(point["omega"]), rng=rngs)
    R = len(rngs)
    sel = res.selected
    chosen = np.where(sel >= 0, sel, T - 1)
    a_sel = prob.alpha_emp(X[chosen])
    full = lambda v: np.full(R, float(v))  # noqa: E731
    # Algorithm 4's noise as the theorem sets it, recomputed here: z with dp-accounting's
    # ε(Gaussian(z)^{⊗2T}, δ) = ε (bisection), σ_g = z·2G_s/n, σ_H = z·2M_s√d/n
    from scipy.optimize import brentq

    eps, delta = float(point["epsilon"]), float(point["delta"])
    z_th = brentq(lambda v: accounting.epsilon(accounting.gaussian_event(v, 2 * T), delta) - eps,
                  1e-6, 1e5, xtol=1e-15, rtol=1e-14)
    settings = {"used_noise_multiplier": full(res.z), "theory_noise_multiplier": full(z_th),
                "used_sigma_grad": full(res.sigma_grad),
                "theory_sigma_grad": full(z_th * 2.0 * prob.G_sens / n),
                "used_sigma_hess": full(res.sigma_hess),
                "theory_sigma_hess": full(z_th * 2.0 * prob.M_sens * math.sqrt(d) / n)}
    return {**settings, "hess_error": np.exp(np.mean(np.log(res.hess_error), axis=1)),
            "grad_error": np.exp(np.mean(np.log(res.grad_error), axis=1)),
            "selected": sel.astype(float), "selected_is_sosp": (a_sel <= alpha).astype(float),
            "alpha_selected": a_sel, "T": full(T), "sigma_hess": full(res.sigma_hess),
            "sigma_grad": full(res.sigma_grad), "noise_multiplier": full(res.z),
            "hess_threshold": full(res.hess_threshold), "grad_threshold": full(res.grad_threshold),
            "epsilon_target": full(res.privacy["epsilon_target"]),
            "epsilon_guarantee": full(res.privacy["epsilon_guarantee"]),
            "epsilon_spent": full(res.privacy["epsilon_spent"])}


def _selection_values(point: dict) -> dict:
    prob = _problem(point)
    return {"d": float(point["d"]), "m": float(point["m"]), "n": float(point["n"]),
            "epsilon": float(point["epsilon"]), "log_delta": log_delta_value(point["delta"]),
            "omega": float(point["omega"]), "M": prob.M_sens, "T": float(_selection_T(point))}


def _selection_grad_values(point: dict) -> dict:
    v = _selection_values(point)
    v["G"] = _problem(point).G_sens
    del v["M"]
    return v


_SEL_BASE = {"m": 2, "n": 200, "epsilon": 1.0, "delta": DELTA, "omega": 0.1, "alpha": 0.05,
             "s1": 0.15, "s2": 0.05, "k": 1}
_SEL_TOL = ("two-sided: the aggregated noise is a symmetric Gaussian matrix with entry std "
            "σ_H/√m, σ_H ∝ √d (Frobenius sensitivity 2M√d/n), whose operator norm is ≈ 2σ√d "
            "(Wigner), so eq. 142's d-exponent 1 is attained; the band spans the sampling term; "
            "0.1 covers the finite-d Wigner correction (E‖H‖/(2σ√d) rises from 0.91 at d = 16 "
            "to 0.97 at d = 64: +0.04 in slope; from d = 4 it would be +0.1, which is why the "
            "grid starts at 16; it stops at 64 because LAPACK's threaded eigensolver dominates "
            "the run time beyond) and 6-seed noise (CI half-width ≈ 0.02)")
_reg(Experiment(
    id="sosp.select.d", paper="sosp",
    title="Algorithm 4: Hessian error ‖∇²F̄ − ∇²F‖ vs d at a fixed number of candidates T=20",
    variable="d", quick_grid=(16, 24, 32, 48, 64), full_grid=(16, 32, 64, 128, 256),
    fixed={**_SEL_BASE, "T": 10, "T_tied": 0}, seeds=6, run=run_selection, metric="hess_error",
    bound_values=_selection_values,
    checks=(
        Check("sosp:thm4_hessian_error", "two-sided", 0.1, _SEL_TOL,
              level=(1.5, 3.5),
              level_reason="error/bound → 4zε/√(T·8 log(1.25/δ)) × E‖W‖/(2√d): the first factor "
                           "is 2.36 for the accountant's z of 2T Gaussian releases at (ε, δ) = "
                           "(1, 1e-5) (the Õ hides it), the Wigner factor is 0.91–0.97 on the grid, "
                           "the sampling term adds ≤ 10%"),
        Check("sosp:thm4_gradient_error", "reject", 0.1,
              "competing rate: the gradient release's error √d (eq. 141; what Hessian-vector "
              "products would reduce the d-dependence to, Remark 5); 0.1 as for the main check",
              values=_selection_grad_values),
    ),
    problem="CosineSaddle(k=1) held-out records, m=4 clients × n=500, T candidates",
    algorithm="algorithms.sosp_nonconvex.private_model_selection (Algorithm 4)",
    private=True, privacy_rtol=1e-9))

_reg(Experiment(
    id="sosp.select.d.tied", paper="sosp",
    title="Algorithm 4: Hessian error vs d with T = ⌈c_T UM²/(√ρ α^{5/2})⌉ tied to Theorem 3's α",
    variable="d", quick_grid=(16, 24, 32, 48, 64), full_grid=(16, 32, 64, 128, 256),
    fixed={**_SEL_BASE, "T_tied": 1, "c_T": C_T}, seeds=6, run=run_selection,
    metric="hess_error", bound_values=lambda p: {**rate_values(p), "omega": float(p["omega"]),
                                                 "c_T": float(p["c_T"]),
                                                 "M_s": _problem(p).M_sens},
    checks=(
        Check("sosp:thm4_hessian_error_tied", "two-sided", 0.1,
              _SEL_TOL + "; with T ∝ α^{−5/2} ∝ d^{−1/2} the exponent is 3/4 (T rounded to an "
                         "integer ≥ 2: ≤ 0.02 in slope)"),
        Check("sosp:thm4_hessian_error", "reject", 0.1,
              "competing prediction: the fixed-T exponent 1 (the slope a suite would predict if "
              "it ignored how T is set, notes E5: T held at its value at the first grid d); 0.1 "
              "as for the main check",
              values=lambda p: {**_selection_values(p),
                                "T": float(_selection_T({**p, "d": 16}))}),
    ),
    problem="CosineSaddle(k=1) held-out records, m=4 clients × n=500",
    algorithm="algorithms.sosp_nonconvex.private_model_selection (Algorithm 4)",
    private=True, privacy_rtol=1e-9))


# Privacy audits, measured-noise helpers and mutants of this paper's algorithms register with the
# paper (the lazy loader imports this module).  Imported by name, not by an import statement:
# the audit harness is not row code, and a static import would put it into every SOSP row's code
# fingerprint (empirical/runner.py), so that editing an audit would recompute every sweep.
# Without the audit harness (empirical/audit.py, mutants.py) the experiments still load.
import importlib as _importlib  # noqa: E402

try:
    _importlib.import_module("empirical.sosp_audit")
except ModuleNotFoundError as _exc:  # only a missing harness is tolerated, never a bug in ours
    if _exc.name not in ("empirical.audit", "empirical.mutants"):
        raise
