"""Experiments of Varshney, Thakurta, Jain on DP-SSGD (Algorithm 1) inside the conditions of its
privacy theorem (Theorem 3.1), and on sufficient statistics perturbation, the prior efficient method §1 and Theorem 3.2
Remark ii compare against.  Rows come from :mod:`empirical.papers.linreg.problems` and
:mod:`empirical.papers.linreg.problems_thm31`.

* ``linreg.ssgd.thm31.{n,epsilon,d,sigma}``: DP-SSGD with ε ≤ √(log(n/δ)/n) (Theorem 3.1 with
  constant 1), ε₀ inside the amplification range and Theorem 3.2's sample condition; each row
  carries the three ratios (``thm31_eps_ratio`` ≤ 1, ``eps0_ratio`` ≤ 1, ``thm32_n_ratio`` ≥ 1,
  tested) and ηn.  The step is fixed in advance (Lemma 3.5 holds for any η ≤ 1/(2R_x²) when
  nothing is clipped): Theorem 3.2's c₁/(dR_x²α²) at the sweep's largest α and d (c₁ = 0.05,
  its log^{4a+2} n dropped), held across the sweep, or η = 2/n along n (two relaxation times
  over the run at every n).
* ``linreg.ssp.d``: SSP on linreg.amb.d.feedback's instance, against its own rate.
* ``linreg.ssp.{n,epsilon}``, ``linreg.objpert.{n,epsilon}``: SSP and objective perturbation
  (Kifer, Smith, Thakurta 2012; §1) on the same instance (d = 16), each against its own rate in
  every variable of Theorem 3.2 Remark ii's d²R_x²‖w*‖²/(ε²n²) it is swept in, with §1's n⁻¹ε⁻¹
  rejected; ``linreg.objpert.negctl`` is the control whose rate must fail (a binding ball).
* ``linreg.objpert.{d,w_norm}``: objective perturbation in d and ‖w*‖, one-sided against its own
  bound, with the controls ``linreg.objpert.d.negctl`` (binding ball) and
  ``linreg.objpert.w_norm.fixed_ball`` (a ball that does not follow ‖w*‖).
"""
from __future__ import annotations

import importlib
import math

from empirical.core.contrasts import ComparisonExperiment, Contrast
from empirical.core.experiment import Check, Experiment, Summary, register, register_summary
from empirical.papers.linreg.problems import DELTA
from empirical.papers.linreg.problems_objpert import objpert_values, run_objpert
from empirical.papers.linreg.problems_thm31 import (run_ssgd_thm31, run_ssp, run_ssp_vs_amb,
                                                    ssgd_thm31_values, ssp_values)

__all__ = ["SSGD31_N", "SSGD31_EPS", "SSGD31_D", "SSGD31_SIGMA", "SSP_D", "SSP_VS_AMB", "SSP_N",
           "SSP_EPS", "OBJPERT_N", "OBJPERT_EPS", "OBJPERT_NEGCTL", "OBJPERT_D",
           "OBJPERT_D_NEGCTL", "OBJPERT_WNORM", "OBJPERT_WNORM_CTL", "eta_thm32"]

_TOL_REJ = ("0.15, the main check's tolerance: the competitor must be ruled out at the same "
            "resolution at which the claim is accepted")

# ------------------------------------------------------------------------------------------------
# DP-SSGD (Algorithm 1) inside Theorem 3.1's conditions
# ------------------------------------------------------------------------------------------------
def eta_thm32(n: int, d: int, epsilon: float, c1: float = 0.05) -> float:
    """Theorem 3.2's η = c₁/(dR_x²α²) (log^{4a+2} n dropped) at α = log(n/δ)/(ε√n), R_x² = d + 2."""
    alpha = math.log(n / DELTA) / (epsilon * math.sqrt(n))
    return c1 / (d * (d + 2.0) * alpha**2)


def _eps_cap(n: int) -> float:
    return math.sqrt(math.log(n / DELTA) / n)


def _eps_grid(n: int, scales) -> tuple[float, ...]:
    # rounded down so the largest stays at or below Theorem 3.1's cap
    return tuple(math.floor(s * _eps_cap(n) * 1e5) / 1e5 for s in scales)


_LEVEL_L35 = ("Lemma 3.5 is an expectation bound with explicit constants, valid at any η ≤ "
              "1/(2R_x²) fixed in advance when nothing is clipped: observed/bound ≤ 1.2 (20% for "
              "the few clipped gradients and the seed spread); a tail average over fewer "
              "relaxation times sits below it (by ≈ (ηn)² when ηn ≪ 1, a random walk; ηn ≈ "
              "3·10⁻³–2 here), so the lower end 10⁻⁷ only catches a run that adds no noise")
_CONDS = ("inside Theorem 3.1: ε ≤ √(log(n/δ)/n) (row field thm31_eps_ratio ≤ 1), ε₀ inside the "
          "amplification range (eps0_ratio ≤ 1, epsilon_amplified finite), and Theorem 3.2's "
          "n ≥ κd log^{2a+1}(κd + 1) log(1/δ)/ε (thm32_n_ratio ≥ 1), all tested on the rows")


def _ssgd31(id_: str, title: str, variable: str, quick, full, fixed: dict, checks, *,
            seeds: int = 48, description: str = "") -> Experiment:
    return register(Experiment(
        id=id_, paper="linreg", title=title, variable=variable, quick_grid=tuple(quick),
        full_grid=tuple(full), fixed=fixed, seeds=seeds, run=run_ssgd_thm31, metric="privacy",
        bound_values=ssgd_thm31_values, checks=tuple(checks),
        problem="Gaussian design x ~ N(0, I), y = ⟨x, w*⟩ + N(0, σ²), streamed",
        algorithm="algorithms.linreg.adaptive_clipping.dp_ssgd (Algorithm 1)",
        description=_CONDS + ". " + description))


_N31_Q = (4000, 8000, 16000)
SSGD31_N = _ssgd31(
    "linreg.ssgd.thm31.n", "DP-SSGD privacy term vs n at ε = √(log(n/δ)/n), inside Theorem 3.1",
    "n", _N31_Q, _N31_Q + (32000, 64000, 128000),
    {"d": 2, "sigma": 1.0, "w_norm": 1.0, "eps_scale": 1.0, "eta_rule": 3, "eta_K": 2.0},
    (Check("linreg:lem35_thm31_privacy", "two-sided", 0.15,
           "0.15: with η = 2/n the tail average spans the same two relaxation times at every n, "
           "so the measured term keeps a fixed fraction of Lemma 3.5's variance term and the "
           "slope is the lemma's (α² ∝ log(n/δ)/ε²n at ε ∝ √(log(n/δ)/n): ≈ n⁻¹ with logs); "
           "48 seeds of χ²_2 over 4×: CI ≈ ±0.3 on the quick grid, ±0.15 over the full grid's 32×; the bound's asymptotic exponent (−2, at fixed ε) does not apply along ε ∝ n^{−1/2}, so the band is the local slope alone",
           level=(1e-7, 1.2), level_source="theorem", level_reason=_LEVEL_L35,
           use_asymptotic=False),
     Check("linreg:naive_privacy_boundary", "reject", 0.15,
           "without amplification by shuffling (α ∝ 1/ε) the privacy term at ε = "
           "√(log(n/δ)/n) would not fall with n (slope ≈ 0); " + _TOL_REJ)),
    description="d = 2 keeps the quick grid inside the no-clipping premise at η = 2/n.")

_EPS31_N = 4000
_EPS31 = _eps_grid(_EPS31_N, (0.1, 0.3, 1.0))
_EPS31_FULL = _eps_grid(_EPS31_N, (0.1, 0.2, 0.3, 0.5, 1.0))
SSGD31_EPS = _ssgd31(
    "linreg.ssgd.thm31.epsilon", "DP-SSGD privacy term vs ε ≤ √(log(n/δ)/n), inside Theorem 3.1",
    "epsilon", _EPS31, _EPS31_FULL,
    {"n": _EPS31_N, "d": 4, "sigma": 1.0, "w_norm": 1.0, "eta_rule": 2,
     "eta_fixed": eta_thm32(_EPS31_N, 4, _EPS31[0])},
    (Check("linreg:lem35_thm31_privacy", "two-sided", 0.15,
           "0.15: at a fixed η and no clipping the response to the privacy noise is linear in "
           "its std 2ζα, so the term is ∝ α² ∝ ε⁻² (Theorem 3.1's α = log(n/δ)/(ε√n)) whatever "
           "the mixing; 48 seeds of χ²_4 over 10×: CI ≈ ±0.15",
           level=(1e-7, 1.2), level_source="theorem", level_reason=_LEVEL_L35),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "an ε-free term (slope 0): the measured term must respond to the privacy noise; "
           + _TOL_REJ)),
    description="n = 4000, d = 4, ε from 0.1 to 1 times the cap; η is Theorem 3.2's at the "
                "smallest ε, held across the sweep; Theorem 3.2's sample condition "
                "(thm32_n_ratio) holds only near the cap, but Lemma 3.5, the bound checked, has "
                "none.")
SSGD31_EPS.declare_full_only("quick grid (3 points over 1 decade, 48 seeds): −2.007, CI ±0.157 against tol 0.15, ≈ 58 seeds needed; full grid (5 points): PASS −2.001")

_D31_N = 4000
SSGD31_D = _ssgd31(
    "linreg.ssgd.thm31.d", "DP-SSGD privacy term vs d at ε = √(log(n/δ)/n), inside Theorem 3.1",
    "d", (8, 16, 32), (4, 8, 16, 32),
    {"n": _D31_N, "sigma": 1.0, "w_norm": 1.0, "eps_scale": 1.0, "eta_rule": 2,
     "eta_fixed": eta_thm32(_D31_N, 32, _eps_cap(_D31_N))},
    (Check("linreg:lem35_thm31_privacy", "two-sided", 0.15,
           "0.15: at a fixed η (ηR_x² ≪ 1) each coordinate's response to the noise is the same, "
           "so the mean term is ∝ d·ζ² ∝ d² (ζ² ∝ d, Corollary 3.3's clip), Lemma 3.5's "
           "slope; the geometric mean of a χ²_d-type term is (2/d)e^{ψ(d/2)} of its mean, "
           "0.88–0.97 for d = 8…32 (+0.05 on the slope); 48 seeds over 4×: CI ≈ ±0.1",
           level=(1e-7, 1.2), level_source="theorem", level_reason=_LEVEL_L35),
     Check("linreg:prior_efficient", "reject", 0.15,
           "the d³ of prior efficient methods (Thm 3.2 Remark ii); " + _TOL_REJ),
     Check("linreg:thm37_nonprivate", "reject", 0.15, "the non-private d¹; " + _TOL_REJ)),
    description="n = 4000; η is Theorem 3.2's at d = 32, held across the sweep; Theorem 3.2's "
                "sample condition (thm32_n_ratio) holds only for d ≤ 4, but Lemma 3.5, the "
                "bound checked, has none.")

_SIG31_N = 4000
SSGD31_SIGMA = _ssgd31(
    "linreg.ssgd.thm31.sigma", "DP-SSGD privacy term vs σ at ε = √(log(n/δ)/n), inside "
    "Theorem 3.1 (Theorem 3.2 Remark iii: it does not vanish with σ)",
    "sigma", (0.25, 1.0, 4.0), (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    {"n": _SIG31_N, "d": 4, "w_norm": 1.0, "eps_scale": 1.0, "eta_rule": 2,
     "eta_fixed": eta_thm32(_SIG31_N, 4, _eps_cap(_SIG31_N))},
    (Check("linreg:lem35_thm31_privacy", "two-sided", 0.15,
           "0.15: the clip ζ = √d√(‖w*‖² + σ²) log n sets the noise std 2ζα, so at a fixed η "
           "the term is ∝ ‖w*‖² + σ² (local slope ≈ 1.2 over σ = 0.25…4; the σ → ∞ "
           "exponent 2 is not reached, so the band is the local slope alone); 32 seeds of "
           "χ²_4 over 16×: CI ≈ ±0.12",
           level=(1e-7, 1.2), level_source="theorem", level_reason=_LEVEL_L35,
           use_asymptotic=False),
     Check("linreg:thm37_privacy", "reject", 0.15,
           "DP-AMBSSGD's σ² (the adaptive clip's claim): fixed clipping keeps the ‖w*‖² floor; "
           + _TOL_REJ)),
    description="n = 4000, d = 4; η is Theorem 3.2's at σ's sweep (α does not depend on σ).")


# ------------------------------------------------------------------------------------------------
# Sufficient statistics perturbation on linreg.amb.d.privacy's instance
# ------------------------------------------------------------------------------------------------
SSP_D = register(Experiment(
    id="linreg.ssp.d", paper="linreg", full_only="quick grid (d = 8–32, 16 seeds): CI ±0.189 against tol 0.15, 0.025 from A's edge, ≈ 891 seeds needed; full grid (d = 4–96): PASS +1.748 [+1.669, +1.827], d³ REJECTED",
    title="Sufficient statistics perturbation: privacy term vs d (the prior method's rate, "
          "on linreg.amb.d.feedback's instance)",
    variable="d", quick_grid=(8, 16, 32), full_grid=(4, 8, 16, 32, 64, 96),
    fixed={"n": 25_000, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0}, seeds=16, run=run_ssp,
    metric="privacy", bound_values=ssp_values,
    problem="Gaussian design x ~ N(0, I), y = ⟨x, w*⟩ + N(0, σ²), streamed",
    algorithm="algorithms.linreg.ssp.ssp (SSP: Gaussian noise on XᵀX and Xᵀy)",
    checks=(
        Check("linreg:ssp_privacy", "two-sided", 0.15,
              "0.15: first-order perturbation of the normal equations is exact up to "
              "O(‖E‖/n) ≈ 1% here; B_x² = (√(d+2) + √(2 ln n))² flattens the d-slope to ≈ 1.6 "
              "over d = 8…32, far from the d ≫ log n where its exponent 3 applies (so the band "
              "is the local slope alone); 16 seeds of χ²_d-type terms over 4×: CI ≈ ±0.18",
              use_asymptotic=False,
              level=(0.8, 2.0), level_source="instance",
              level_reason="the bound is the instance's first-order value ½dα²Δ²(1 + ‖w*‖²)/n² "
                           "with α² read as log(1/δ)/ε²; dp-accounting's α = 1.268 at ε = 4 "
                           "gives α²ε²/log(1/δ) = 1.86, the symmetrised E halves the variance of "
                           "Ew* ((1 + ‖w*‖²/2)/(1 + ‖w*‖²) = 0.75) and the geometric mean of a "
                           "χ²_d-type term is 0.85–0.95 of its mean: observed/bound ≈ 1.2–1.3; "
                           "band ×/÷ 1.6 around it for the second-order terms"),
        Check("linreg:prior_efficient", "reject", 0.15,
              "the d³ the paper quotes for prior efficient methods (Thm 3.2 Remark ii): it "
              "needs d ≫ log n; " + _TOL_REJ),
        Check("linreg:thm37_nonprivate", "reject", 0.15, "the non-private d¹; " + _TOL_REJ)),
    description="Same n, ε, σ, ‖w*‖ as linreg.amb.d.feedback (DP-AMBSSGD); the measured-noise "
                "check compares the release's noise with α·Δ recomputed from dp-accounting and "
                "the sensitivity formula."))

_VS_WHY = ("Theorem 3.2 Remark ii and Theorem 3.7 Remark v: prior efficient methods' privacy term "
           "is ≈ d²R_x²‖w*‖²/(ε²n²), O(d) above DP-AMBSSGD's σ²d²/(ε²n²) (Õ); paired by seed "
           "(own child streams), log of the privacy terms (they span decades), one-sided, 95% "
           "t-interval over 16 seeds")
SSP_VS_AMB = register(ComparisonExperiment(
    id="linreg.ssp.vs_amb", paper="linreg",
    title="DP-AMBSSGD vs sufficient statistics perturbation at equal (ε, δ): privacy terms vs d",
    variable="d", quick_grid=(8, 32), full_grid=(8, 16, 32, 64), fixed={
        "n": 25_000, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0}, seeds=16, run=run_ssp_vs_amb,
    metric="privacy_amb", bound_values=lambda p: {}, checks=(),
    contrasts=(
        Contrast("DP-AMBSSGD < SSP (privacy term)", "greater", "privacy_amb", "privacy_ssp",
                 _VS_WHY, sign=-1, log=True, expect="finding"),
        Contrast("DP-AMBSSGD's gain over SSP along d", "report", "privacy_amb", "privacy_ssp",
                 "no verdict: the quoted rates put the gain ∝ d; the log ratio at each d is "
                 "shown", sign=-1, log=True)),
    problem="Gaussian design x ~ N(0, I), y = ⟨x, w*⟩ + N(0, σ²), streamed",
    algorithm="dp_ambssgd (Algorithms 2 + 3) and algorithms.linreg.ssp.ssp",
    description="linreg.amb.d.feedback's instance (n = 2.5·10⁴, ε = 4, σ = ‖w*‖ = 1): the "
                "claimed O(d) advantage of adaptive clipping over SSP at σ = ‖w*‖ (errata LR-E20)."))


def _plot_vs_amb(analyses: list, root) -> object:
    # imported by name so that drawing code stays out of the rows' code fingerprint
    return importlib.import_module("empirical.papers.linreg.plots").plot_vs_amb(analyses, root)


register_summary(Summary("linreg.ssp.vs_amb", "linreg", (SSP_VS_AMB.id,), _plot_vs_amb))


# ------------------------------------------------------------------------------------------------
# The prior methods' own rates in n and ε on linreg.ssp.d's instance (d = 16): sufficient
# statistics perturbation and objective perturbation (Kifer, Smith, Thakurta 2012)
# ------------------------------------------------------------------------------------------------
_PRIOR_FIXED = {"d": 16, "sigma": 1.0, "w_norm": 1.0}
_PRIOR_PROBLEM = "Gaussian design x ~ N(0, I), y = ⟨x, w*⟩ + N(0, σ²), streamed"
_N_PRIOR_Q = (8000, 20_000, 50_000)
_N_PRIOR_F = (8000, 16_000, 25_000, 50_000, 100_000, 200_000, 400_000)
_EPS_SSP_Q, _EPS_SSP_F = (2.0, 8.0, 32.0), (2.0, 4.0, 8.0, 16.0, 32.0)
_EPS_OP_Q, _EPS_OP_F = (1.0, 4.0, 16.0), (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
_TOL_N_PRIOR = ("0.15: first-order perturbation of the normal equations, whose error is O(‖E‖/n) "
                "≤ 0.2 at the smallest n; B_x² and B_y² carry log n, which the bound carries too "
                "(local slope ≈ −1.88 against the exponent −2, the band between them); 16 seeds "
                "of χ²_16-type terms (log-sd ≈ 0.35) over 6×: CI ≈ ±0.15 (±0.05 over the full grid's 50×)")
_TOL_EPS_PRIOR = ("0.2: dp-accounting's α² is 0.68–0.94 of the RDP closed form the bound uses, "
                  "a ratio that grows with ε and tilts the slope by ≈ +0.07 (SSP) to +0.10 "
                  "(objective perturbation) over the grid; 16 seeds over 16×: CI ≈ ±0.1; the "
                  "band is the bound's local slope alone (its ε → ∞ exponent, −1, is the RDP "
                  "curve's regime of no privacy)")
_DPERM_REJ = ("§1's convex-Lipschitz DP-ERM rate L‖C‖√d/(εN) (n⁻¹, ε⁻¹), the rate the paper "
              "attaches to DP-SGD and objective perturbation: the instance is strongly convex "
              "(XᵀX ≈ nI), so the method's privacy term must fall faster; " + _TOL_REJ)
_LEVEL_SSP_RDP = ("the bound is the instance's first-order value ½dα²Δ²(1 + ‖w*‖²)/n² with the "
                  "RDP closed-form α, an upper bound on dp-accounting's (ratio α²_used/α²_bound "
                  "0.77, 0.86, 0.94 at ε = 2, 8, 32); the symmetrised E halves the variance of "
                  "Ew* (× 0.75) and the geometric mean of a χ²_16-type term is ≈ 0.9 of its "
                  "mean: observed/bound ≈ 0.5–0.65; the band [0.3, 1.2] leaves 20% above 1 for "
                  "second-order terms and ÷ 1.7 below")
_LEVEL_OP = ("the bound is the instance's first-order value ½(d(2ζα)² + Λ²‖w*‖²)/n² with the RDP "
             "closed-form α at ε_G, an upper bound on dp-accounting's (α²_used/α²_bound = 0.68 "
             "at ε = 1, 0.79 at ε = 4, 0.90 at ε = 16); the geometric mean of a χ²_16-type term "
             "is ≈ 0.9 of its mean: observed/bound ≈ 0.6–0.8; the band [0.3, 1.2] leaves 20% "
             "above 1 for second-order terms (‖E‖ is absent: XᵀX is used exactly) and ÷ 2 below")
_OP_ALGO = ("algorithms.linreg.objpert.objective_perturbation (Kifer et al. 2012, Algorithm 1 with "
            "Gaussian noise, on the ball ‖w‖ ≤ 2‖w*‖)")
_OP_DESC = ("KST12's regulariser Λ = 2B_x²/ε and ball ‖w‖ ≤ B_w = 2‖w*‖ on SSP's domain; the "
            "Gaussian part's multiplier by dp-accounting at ε − log(1 + ε/2); rows carry the "
            "constants used beside their recomputed values, the measured noise of the "
            "perturbed linear term, and max_constraint_active ≤ 0 (the first-order bound's "
            "premise: the ball never binds).")

SSP_N = register(Experiment(
    id="linreg.ssp.n", paper="linreg",
    title="Sufficient statistics perturbation: privacy term vs n (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="n", quick_grid=_N_PRIOR_Q, full_grid=_N_PRIOR_F,
    fixed={**_PRIOR_FIXED, "epsilon": 4.0}, seeds=16, run=run_ssp, metric="privacy",
    bound_values=ssp_values, problem=_PRIOR_PROBLEM,
    algorithm="algorithms.linreg.ssp.ssp (SSP: Gaussian noise on XᵀX and Xᵀy)",
    checks=(
        Check("linreg:ssp_privacy", "two-sided", 0.15,
              "two-sided: the bound is the instance's own first-order value, not a worst case; "
              + _TOL_N_PRIOR, level=(0.8, 2.0), level_source="instance",
              level_reason=SSP_D.checks[0].level_reason),
        Check("linreg:dperm_privacy", "reject", 0.15, _DPERM_REJ)),
    description="d = 16, ε = 4 as linreg.ssp.d; the measured-noise check compares the "
                "release's noise with α·Δ recomputed from dp-accounting."))

SSP_EPS = register(Experiment(
    id="linreg.ssp.epsilon", paper="linreg",
    title="Sufficient statistics perturbation: privacy term vs ε (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="epsilon", quick_grid=_EPS_SSP_Q, full_grid=_EPS_SSP_F,
    fixed={**_PRIOR_FIXED, "n": 25_000}, seeds=16, run=run_ssp, metric="privacy",
    bound_values=ssp_values, problem=_PRIOR_PROBLEM,
    algorithm="algorithms.linreg.ssp.ssp (SSP: Gaussian noise on XᵀX and Xᵀy)",
    checks=(
        Check("linreg:ssp_privacy_rdp", "two-sided", 0.2,
              "two-sided: the bound is the instance's own first-order value; " + _TOL_EPS_PRIOR,
              use_asymptotic=False, level=(0.3, 1.2), level_source="instance",
              level_reason=_LEVEL_SSP_RDP),
        Check("linreg:dperm_privacy", "reject", 0.2, _DPERM_REJ.replace(_TOL_REJ, "0.2 as the "
              "main check")),
        Check("linreg:thm37_nonprivate", "reject", 0.2,
              "an ε-free term (slope 0): the measured term must respond to the privacy noise; "
              "0.2 as the main check")),
    description="n = 25 000, d = 16 as linreg.ssp.d; ε from 2 (‖E‖/n ≈ 0.12) upwards, where "
                "the first-order expansion holds."))

OBJPERT_N = register(Experiment(
    id="linreg.objpert.n", paper="linreg",
    title="Objective perturbation (Kifer et al. 2012): privacy term vs n (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="n", quick_grid=_N_PRIOR_Q, full_grid=_N_PRIOR_F,
    fixed={**_PRIOR_FIXED, "epsilon": 4.0}, seeds=24, run=run_objpert, metric="privacy",
    bound_values=objpert_values, problem=_PRIOR_PROBLEM, algorithm=_OP_ALGO,
    checks=(
        Check("linreg:objpert_privacy", "two-sided", 0.15,
              "two-sided: the bound is the instance's own first-order value, not a worst case; "
              + _TOL_N_PRIOR, level=(0.3, 1.2), level_source="instance", level_reason=_LEVEL_OP),
        Check("linreg:dperm_privacy", "reject", 0.15, _DPERM_REJ)),
    description=_OP_DESC))

OBJPERT_EPS = register(Experiment(
    id="linreg.objpert.epsilon", paper="linreg",
    title="Objective perturbation (Kifer et al. 2012): privacy term vs ε (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="epsilon", quick_grid=_EPS_OP_Q, full_grid=_EPS_OP_F,
    fixed={**_PRIOR_FIXED, "n": 25_000}, seeds=16, run=run_objpert, metric="privacy",
    bound_values=objpert_values, problem=_PRIOR_PROBLEM, algorithm=_OP_ALGO,
    checks=(
        Check("linreg:objpert_privacy", "two-sided", 0.2,
              "two-sided: the bound is the instance's own first-order value; ε enters through "
              "α(ε − log(1 + ε/2)) and Λ = 2B_x²/ε (local slope ≈ −2.2 at ε = 4); "
              + _TOL_EPS_PRIOR, use_asymptotic=False, level=(0.3, 1.2), level_source="instance",
              level_reason=_LEVEL_OP),
        Check("linreg:dperm_privacy", "reject", 0.2, _DPERM_REJ.replace(_TOL_REJ, "0.2 as the "
              "main check")),
        Check("linreg:thm37_nonprivate", "reject", 0.2,
              "an ε-free term (slope 0): the measured term must respond to the privacy noise; "
              "0.2 as the main check")),
    description=_OP_DESC))

OBJPERT_NEGCTL = register(Experiment(
    id="linreg.objpert.negctl", paper="linreg",
    title="Control: objective perturbation with a ball of radius ‖w*‖/2 (the constraint binds): "
          "its first-order rate fails",
    variable="n", quick_grid=(2000, 4000, 8000), full_grid=_N_PRIOR_F,
    fixed={**_PRIOR_FIXED, "epsilon": 4.0, "bw_scale": 0.5}, seeds=4, run=run_objpert,
    metric="privacy", bound_values=objpert_values, problem=_PRIOR_PROBLEM,
    algorithm=_OP_ALGO.replace("2‖w*‖", "‖w*‖/2"),
    checks=(
        Check("linreg:objpert_privacy", "reject", 0.15,
              "the same algorithm and privacy with B_w = ‖w*‖/2: the output is pinned to the "
              "ball, ½‖w − w_ref‖²_H stays near ½(‖w*‖/2)² whatever n, and the n⁻² of the noise "
              "must not describe it (the rate of linreg.objpert.n comes from the noise through "
              "XᵀX, not from how the term is measured); 0.15 as linreg.objpert.n"),),
    description="Expected to break: shows the objective-perturbation checks can fail where "
                "the first-order analysis does not apply."))


_OP_ONE_SIDED = ("one-sided: objective perturbation's bound is an upper bound on the instance "
                 "(the RDP closed-form α is above dp-accounting's, so the level sits below 1 "
                 "and a steeper slope is allowed, a flatter one is not); ")
OBJPERT_D = register(Experiment(
    id="linreg.objpert.d", paper="linreg",
    full_only="quick grid (d = 4–32): CI ±0.16 against a distance 0.09 to A's edge, ≈ 99 seeds "
              "needed; full grid (d = 4–96): PASS +1.863 [+1.783, +1.947] against A ≤ +1.958, "
              "d³ and d¹ REJECTED",
    title="Objective perturbation (Kifer et al. 2012): privacy term vs d (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="d", quick_grid=(4, 8, 16, 32), full_grid=(4, 8, 16, 32, 64, 96),
    fixed={"n": 25_000, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0}, seeds=32,
    run=run_objpert, metric="privacy", bound_values=objpert_values, problem=_PRIOR_PROBLEM,
    algorithm=_OP_ALGO,
    checks=(
        Check("linreg:objpert_privacy", "one-sided", 0.15,
              _OP_ONE_SIDED + "0.15: B_x² = (√(d+2) + √(2 ln n))² and ζ ∝ B_x² flatten the "
              "d-slope to ≈ 1.75 over d = 4…32, far from the d ≫ log n where its exponent 3 "
              "applies (the band is the local slope alone); 32 seeds of χ²_d-type terms: CI "
              "≈ ±0.17 over the quick grid's 8× (d = 4 alone has log-sd ≈ 0.7), ≈ ±0.09 over "
              "the full grid's 24×",
              use_asymptotic=False, level=(0.3, 1.2), level_source="instance",
              level_reason=_LEVEL_OP),
        Check("linreg:prior_efficient", "reject", 0.15,
              "the d³ the paper quotes for prior efficient methods (Thm 3.2 Remark ii): it "
              "needs d ≫ log n; " + _TOL_REJ),
        Check("linreg:thm37_nonprivate", "reject", 0.15, "the non-private d¹; " + _TOL_REJ)),
    description=_OP_DESC))

OBJPERT_D_NEGCTL = register(Experiment(
    id="linreg.objpert.d.negctl", paper="linreg",
    title="Control: objective perturbation with a ball of radius ‖w*‖/2 (the constraint binds) "
          "along d: its first-order rate fails",
    variable="d", quick_grid=(8, 16, 32), full_grid=(4, 8, 16, 32, 64),
    fixed={"n": 4000, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0, "bw_scale": 0.5}, seeds=4,
    run=run_objpert, metric="privacy", bound_values=objpert_values, problem=_PRIOR_PROBLEM,
    algorithm=_OP_ALGO.replace("2‖w*‖", "‖w*‖/2"),
    checks=(
        Check("linreg:objpert_privacy", "reject", 0.15,
              "the same algorithm and privacy with B_w = ‖w*‖/2: the output is pinned to the "
              "ball, ½‖w − w_ref‖²_H ≈ ½(‖w*‖/2)² whatever d, and the d-slope of the noise "
              "must not describe it (the d-rate of linreg.objpert.d comes from the noise, not "
              "from how the term is measured); 0.15 as linreg.objpert.d"),),
    description="Expected to break: the d-sweep's checks can fail where the first-order "
                "analysis does not apply."))

OBJPERT_WNORM = register(Experiment(
    id="linreg.objpert.w_norm", paper="linreg",
    title="Objective perturbation (Kifer et al. 2012): privacy term vs ‖w*‖ (its own rate, on "
          "linreg.ssp.d's instance)",
    variable="w_norm", quick_grid=(0.5, 2.0, 8.0), full_grid=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
    fixed={"n": 25_000, "d": 16, "epsilon": 4.0, "sigma": 1.0}, seeds=16, run=run_objpert,
    metric="privacy", bound_values=objpert_values, problem=_PRIOR_PROBLEM, algorithm=_OP_ALGO,
    checks=(
        Check("linreg:objpert_privacy", "one-sided", 0.15,
              _OP_ONE_SIDED + "0.15: ‖w*‖ enters through the ball B_w = 2‖w*‖ and "
              "B_y = √(‖w*‖² + σ²)√(2 ln 2n) in ζ = B_x(B_xB_w + B_y), so the local slope "
              "(≈ 1.8) lies below the exponent 2, reached once ‖w*‖ ≫ σ (the band spans both); "
              "16 seeds of χ²_16-type terms (log-sd ≈ 0.35) over 16×: CI ≈ ±0.1",
              level=(0.3, 1.2), level_source="instance", level_reason=_LEVEL_OP),
        Check("linreg:ssp_privacy", "reject", 0.15,
              "SSP's rate in ‖w*‖ on the same instance (its ‖w*‖² through Ew* on top of the "
              "‖w*‖² in B_y²: local slope ≈ 2.5): the other prior method's rate must be told "
              "apart; " + _TOL_REJ),
        Check("linreg:thm37_nonprivate", "reject", 0.15,
              "the ‖w*‖-free statistical term (slope 0): the measured term must respond to the "
              "noise the ball and B_y set; " + _TOL_REJ)),
    description=_OP_DESC))

OBJPERT_WNORM_CTL = register(Experiment(
    id="linreg.objpert.w_norm.fixed_ball", paper="linreg",
    title="Control: objective perturbation with its ball fixed at B_w = 16 (not following ‖w*‖) "
          "along ‖w*‖: the rate in ‖w*‖ must go",
    variable="w_norm", quick_grid=(0.5, 2.0, 8.0), full_grid=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    fixed={"n": 25_000, "d": 16, "epsilon": 4.0, "sigma": 1.0, "bw_abs": 16.0}, seeds=8,
    run=run_objpert, metric="privacy", bound_values=objpert_values, problem=_PRIOR_PROBLEM,
    algorithm=_OP_ALGO.replace("2‖w*‖", "16"),
    checks=(
        Check("linreg:objpert_privacy", "reject", 0.15,
              "the same algorithm with B_w = 16 ≥ 2‖w*‖ on the whole grid (the ball never "
              "binds): ζ = B_x(16B_x + B_y) then moves only through B_y, so the privacy term's "
              "‖w*‖-slope falls to ≈ 0.15, and the ≈ 1.8 of linreg.objpert.w_norm (computed "
              "with B_w = 2‖w*‖) must not describe it: the rate in ‖w*‖ comes from the noise "
              "the ball sets, not from the instance; 0.15 as linreg.objpert.w_norm"),),
    description="Expected to break: shows linreg.objpert.w_norm's slope is the algorithm's."))

# ------------------------------------------------------------------------------------------------
# δ: not swept (its level is checked instead)
# ------------------------------------------------------------------------------------------------
from empirical.core.coverage import declare_unswept as _declare_unswept  # noqa: E402
import bounds as _bounds  # noqa: E402

_DELTA_REASON = ("δ enters only through log(1/δ) or log(n/δ): over the usable range 10⁻¹²…10⁻³ "
                 "that factor moves by 4× with no power of δ to fit, so a slope in δ is not "
                 "defined; the level is checked instead: every run is at δ = 10⁻⁶, its level band "
                 "is at the bound's log factor there, and α is recalibrated at the run's δ by "
                 "dp-accounting and recomputed independently (settings verdict used_alpha = "
                 "theory_alpha)")
for _id in _bounds.ids("linreg"):
    _b = _bounds.get(_id)
    if "delta" in _b.variables and _b.kind != "conversion":
        _declare_unswept(_id, "delta", _DELTA_REASON)
