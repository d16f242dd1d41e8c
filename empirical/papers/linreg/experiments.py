"""Experiments for the linear-regression paper (Varshney, Thakurta, Jain).  The paper has no
experiments: every sweep here is
ours, on streamed synthetic data with exact excess risk ½(w − w*)ᵀH(w − w*).

Measured quantities (common random numbers, :mod:`algorithms.linreg.adaptive_clipping`): each
seed runs the private iterate and a reference iterate on the *same* data with the same clip
levels but no Gaussian gradient noise.  With no clipping (the clip fraction is stored and tested)
the update is affine, so

* ``privacy`` = ½‖w̄ − w̄_ref‖²_H is exactly the response to the privacy noise (the privacy term);
* ``nonprivate`` = ½‖w̄_ref − w*‖²_H is the non-private term (label noise + bias);
* ``excess`` = ½‖w̄ − w*‖²_H is what the theorems bound.

The privacy term is therefore measured, not assumed: nothing in the metric is computed from a
formula, and a σ = 0 run does not hide it (for DP-AMBSSGD the privacy term itself scales with σ²,
which is the paper's claim under test).

Fixed parameters shared by the DP-AMBSSGD sweeps: Gaussian design with H = I (κ = 1), d = 16,
‖w*‖ = 1, σ = 1, ε = 4, δ = 10⁻⁶, Theorem 3.7's schedule with c₁ = 1 (T = ⌈ln n⌉, b = ⌊10n/(11T)⌋, s = ⌊n/(11T)⌋,
η = b/(R_x² + b − 1)), DP-STAT with L = 40 levels, dithered grid and break threshold s − 3α√(L+1)
(errata LR-E12…E14), α calibrated so that dp-accounting certifies exactly the target (ε, δ).
ε enters the algorithm only through α: the α sweeps regress on α, the ε sweeps on ε (each row
recalibrated exactly, so the calibration's own ε-exponent is part of what is measured; LR-E15).

Rows are computed in :mod:`empirical.papers.linreg.problems` (run functions, problems, bound values);
this module declares the experiments and their checks.

Experiments: ``linreg.amb.{n,d,alpha,epsilon}.*`` (incl. ``linreg.amb.n.transition*``, the branch
transition; DP-AMBSSGD's privacy and non-private terms and the LR-E15 ablations;
``linreg.amb.d.feedback``, finding LR-E18: the adaptive clip's feedback past Lemma 3.11's premise), ``linreg.{sigma,wnorm,sigma0}.{adaptive,fixed}`` (adaptive vs fixed clipping at
equal privacy), ``linreg.d3.lipschitz`` (worst-case clip, d³), ``linreg.kappa.*``,
``linreg.laplace.nonprivate`` (a = 1 design), ``linreg.ssgd.{n,negctl}`` (DP-SSGD, Lemma 3.5, and
the negative control outside its analysis).
"""
from __future__ import annotations

from empirical.core.experiment import Check, Experiment, register
from empirical.store.calibration import calibrations
# Rows are computed in linreg_problems (re-exported here for callers of this module).
from empirical.papers.linreg.problems import (DELTA, SIGMA_ZERO, alpha_values, amb_values,  # noqa: F401
                                       amb_values_sigma0, design_for, epsilon_for_alpha,
                                       run_ambssgd, run_ambssgd_alpha, run_ssgd, ssgd_values,
                                       theory_schedule)

__all__ = ["design_for", "run_ambssgd", "run_ssgd", "amb_values", "DELTA"]

#: Calibrated level bands, each fit on held-out seeds (calibration.json beside this module,
#: recomputed by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str) -> dict:
    """The level-band fields of check (bound, kind) of experiment ``eid`` from its record."""
    return _HELD_OUT[(eid, bound, kind)].check_fields()

# ------------------------------------------------------------------------------------------------
# Tolerances and level bands (each states why)
# ------------------------------------------------------------------------------------------------
_TOL_PRIV = ("0.15: the band [local, asymptotic] spans the bound's log^{4a+1} n; 16 seeds over a "
             "16× range give a CI half-width ≈ 0.1 (the privacy term of one seed is ≈ χ²_d/d, "
             "log-sd ≈ √(2/d) ≈ 0.35, inflated by the phase-to-phase spread of ζ_t)")
_TOL_REJ = ("0.15, the main check's tolerance: the competitor must be ruled out at the same "
            "resolution at which the claim is accepted")
_LEVEL_LEM311 = ("Lemma 3.11 has explicit constants (96, 8·12, K₂ = 1, log^{4a} n): its α-terms "
                 "bound the privacy term whenever nothing is clipped, so observed/bound ≤ 1; the "
                 "lower end 1e-3 only catches a run that adds no noise (the lemma's product terms "
                 "make it ≈ 30–70× loose at b ≈ 10⁴)")
_LEVEL_NONPRIV = ("Theorem 3.7's explicit 8σ²d/n: the tail average over T/2 phases of b fresh "
                  "points has variance ≈ σ²d/(Tb) ≈ 1.1σ²d/n, so observed/bound ≈ 0.14 ≤ 1; the "
                  "lower end is the minimax rate σ²d/(2n) (1/16 of the bound) times 0.8 for "
                  "the geometric mean over seeds of a χ²_d/d-type variable")
_LEVEL_FIXED = ("eq. (60) with ζ_t ≡ ζ has explicit constants (8, 4): observed/bound ≤ 1 when "
                "nothing is clipped (tail iterates nearly independent: ≈ η²/8 ≈ 0.12); the lower "
                "end 1e-3 only catches a run without noise")

_AMB = {"d": 16, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0, "clip": 0, "stat_rule": 0}
_N_QUICK = (25_000, 50_000, 100_000, 200_000, 400_000)
_N_FULL = _N_QUICK + (800_000, 1_600_000)


def _amb(id_: str, title: str, variable: str, quick, full, fixed: dict, metric: str, checks,
         seeds: int = 16, description: str = "", values=None) -> Experiment:
    return register(Experiment(
        id=id_, paper="linreg", title=title, variable=variable, quick_grid=tuple(quick),
        full_grid=tuple(full), fixed={k: v for k, v in fixed.items() if k != variable},
        seeds=seeds, run=run_ambssgd, metric=metric,
        bound_values=values or amb_values, checks=tuple(checks),
        problem="Gaussian design x ~ N(0, H), y = ⟨x, w*⟩ + N(0, σ²), streamed",
        algorithm=("algorithms.linreg.adaptive_clipping.dp_ambssgd ("
                   + ("Algorithms 2 + 3" if not fixed.get("clip") else "fixed-clip baseline") + ")"),
        description=description, private=True))


# ------------------------------------------------------------------------------------------------
# DP-AMBSSGD: n, d, ε sweeps of the privacy term and the non-private term
# ------------------------------------------------------------------------------------------------
_N_NOTE = ("LR-E15: at n ≤ 4·10⁵ the privacy term falls as ≈ n^{−1.56}, flatter than the bound's "
           "local −1.74 (log³n kept): DP-STAT estimates the (1 − Γ_p/s) quantile of the residuals "
           "with Γ_p ∝ α√L fixed and s ∝ n/T, so γ_t² grows like 2 ln(s/Γ_p), a log whose "
           "relative change per e-fold of n is 1/ln(s/Γ_p) ≈ 0.2–0.3; the fixed-quantile ablation "
           "(linreg.amb.n.privacy_quantile) removes the drift")
AMB_N_PRIVACY = _amb(
    "linreg.amb.n.privacy", "DP-AMBSSGD privacy term vs n (Theorem 3.7: n⁻² up to logs)", "n",
    _N_QUICK, _N_FULL, _AMB, "privacy",
    (Check("linreg:thm37_privacy", "two-sided", 0.15, _TOL_PRIV, expect="finding", note=_N_NOTE),
     Check("linreg:naive_privacy", "reject", 0.15,
           "without batching, per-step noise composes to a 1/n privacy term; " + _TOL_REJ)))

AMB_N_QUANTILE = _amb(
    "linreg.amb.n.privacy_quantile",
    "Ablation: DP-STAT at a fixed quantile level, privacy term vs n (n⁻² up to logs)", "n",
    _N_QUICK[1:], _N_FULL[1:], {**_AMB, "stat_rule": 1}, "privacy", seeds=24, checks=
    (Check("linreg:thm37_privacy", "two-sided", 0.15,
           "0.15: with the threshold (1 − 0.1)s (≥ 5 count-noise std from n = 5·10⁴), γ_t "
           "estimates a fixed quantile of the residuals and ζ_t² ∝ log^{2a} n only, T ∝ log n: "
           "the algorithm's logs are those of the bound; 24 seeds over 8×: CI ≈ ±0.12",
           **_held("linreg.amb.n.privacy_quantile", "linreg:thm37_privacy", "two-sided")),
     Check("linreg:lem311_privacy", "one-sided", 0.15,
           "upper bound with explicit constants: the slope may be steeper, not flatter; 0.15 as "
           "the main check", level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_LEM311),
     Check("linreg:naive_privacy", "reject", 0.15,
           "without batching, per-step noise composes to a 1/n privacy term; " + _TOL_REJ)),
    description="Diagnostic for LR-E15 (not the paper's rule): same privacy guarantee, the "
                "threshold is data independent.")

AMB_N_NONPRIVATE = _amb(
    "linreg.amb.n.nonprivate", "DP-AMBSSGD non-private term vs n (Theorem 3.7: 8σ²d/n)", "n",
    _N_QUICK, _N_FULL, _AMB, "nonprivate",
    (Check("linreg:thm37_nonprivate", "two-sided", 0.12,
           "0.12: the term has no log factor (band = −1); 16 seeds over a 16× range give a CI "
           "half-width ≈ 0.08", level=(0.05, 1.0), level_source="theorem", level_reason=_LEVEL_NONPRIV),
     Check("linreg:thm37_privacy", "reject", 0.12, "the privacy term's n⁻² must not describe the "
           "reference run (which adds no noise); tolerance as the main check")))

#: LR-E18: at n = 10⁵ the d² claim holds for d ≤ 64 (the quick grid) and is a finding on the full
#: grid, which goes on to d = 128, 256.  DP-STAT sets ζ_t from the residuals at w_t, whose spread
#: σ_r² = σ² + ‖w_t − w*‖² contains the previous phase's privacy error, so each phase feeds a
#: fraction c = 4α²η²d·R_x²q²ln n/b² (q = ζ_t/(R_xσ_r√ln n), the quantile DP-STAT lands on) of it
#: back: the privacy term is ∝ d(d + 2)/(1 − c).  c ≤ 0.06 for d ≤ 64 (Lemma 3.11's explicit
#: premise holds, ratio ≤ 0.37); at d = 128 and 256 c ≈ 0.2 and 0.8, the premise fails (ratio
#: 1.46, 5.69), the slope over d = 4…256 is 2.24 [2.17, 2.31] and the level reaches 42.5 at
#: d = 256 (held-out band 4.53–15.3): FINDING of the slope and the level on the full grid (expect_full), the
#: regime linreg.amb.d.feedback sweeps at a quarter of the n.
_D_GRID_QUICK, _D_GRID_FULL = (8, 16, 32, 64), (4, 8, 16, 32, 64, 128, 256)
_D_FULL_NOTE = ("LR-E18 (full grid only): d = 128, 256 are past the adaptive clip's feedback "
                "regime (gain c ≈ 0.2, 0.8; Lemma 3.11's premise fails, ratio 1.46, 5.69): over "
                "d = 4…256 the slope is 2.24 [2.17, 2.31] (d² FAILS by 0.09 beyond the "
                "tolerance) and observed/bound is 11.6 and 42.5 at d = 128, 256 (held-out band 4.53–15.3): "
                "recorded as a finding of both; NOT REPRODUCED if either returns inside")
AMB_D_PRIVACY = _amb(
    "linreg.amb.d.privacy", "DP-AMBSSGD privacy term vs d (Theorem 3.7: d², prior work d³)", "d",
    _D_GRID_QUICK, _D_GRID_FULL, {**_AMB, "n": 100_000}, "privacy",
    seeds=24, checks=
    (Check("linreg:thm37_privacy", "two-sided", 0.15,
           "0.15: R_x² = d + 2 rather than d gives the algorithm a local slope ≈ 2 − 2/(d+2) "
           "(−0.07 at the grid's centre); DP-STAT's quantile level does not depend on d; 24 "
           "seeds give a CI half-width ≈ 0.12 (the χ²_d spread is largest at d = 8); the clip's "
           "feedback gain is ≤ 0.06 for d ≤ 64 (LR-E18: tested)",
           **_held("linreg.amb.d.privacy", "linreg:thm37_privacy", "two-sided"),
           expect_full="finding", finding_on="slope+level", note=_D_FULL_NOTE, history="LR-E18: failed at d = 128, 256 (past the adaptive clip's feedback); the quick grid kept d ≤ 64 (hold), the full grid declares a finding, and the feedback regime is swept apart in linreg.amb.d.feedback"),
     Check("linreg:prior_efficient", "reject", 0.15,
           "the d³ of prior efficient methods (Thm 3.2 Remark ii); " + _TOL_REJ),
     Check("linreg:thm37_nonprivate", "reject", 0.15, "the non-private d¹; " + _TOL_REJ)),
    description="Quick grid d ≤ 64 at n = 10⁵, inside the stable regime of the adaptive clip "
                "(PASS); the full grid adds d = 128, 256, past it (FINDING, LR-E18).")

_D_FEEDBACK_NOTE = (
    "LR-E18: the adaptive clip feeds the privacy error back: γ_t is a quantile of the residuals "
    "at w_t, whose variance σ² + ‖w_t − w*‖² contains the last phase's privacy error, so the "
    "privacy term is ∝ d(d + 2)/(1 − c) with the per-phase gain c = 4α²η²d·R_x²q²ln n/b² "
    "(q ≈ 2.35 here: the stable ζ_t/(R_xσ√ln n)); c runs from 0.01 (d = 8) to ≈ 0.7 (d = 96), "
    "the logged ζ_t rises by the predicted (1 − c)^{−1/2} (tested) and the slope is 2.41 "
    "(quick), 2.34 (full).  "
    "Theorem 3.7's condition n ≥ Ω̃(κ²d(1 + √log(1/δ)/ε)) holds with Ω̃-constant 1 by "
    "≥ 135×; Lemma 3.11's explicit premise b² ≥ 24ηα²R_x²log²n·d (which its proof uses) fails "
    "from d ≈ 32 (ratio 0.99 → 8.3): the Ω̃ hides a factor ≈ 10² here, and past it d² does not "
    "describe the algorithm as run")
AMB_D_FEEDBACK = _amb(
    "linreg.amb.d.feedback",
    "Finding LR-E18: privacy term vs d at n = 2.5·10⁴, across the adaptive clip's feedback "
    "regime (Theorem 3.7: d²)", "d",
    (8, 16, 32, 64, 96), (4, 8, 16, 32, 48, 64, 80, 96), {**_AMB, "n": 25_000}, "privacy",
    seeds=24, checks=
    (Check("linreg:thm37_privacy", "two-sided", 0.15,
           "0.15 as linreg.amb.d.privacy (the same instance at a quarter of its n); 24 seeds: "
           "CI ≈ ±0.1", expect="finding", finding_on="slope", note=_D_FEEDBACK_NOTE,
           **_held("linreg.amb.d.feedback", "linreg:thm37_privacy", "two-sided"), history="LR-E18: split off linreg.amb.d.privacy after it failed at d = 128, 256; its band was set on the recorded finding's own level (4.6–16.4)"),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "the non-private d¹: the privacy term must grow with d; " + _TOL_REJ)),
    description="Where d²'s premise ends: d up to 96 at n = 2.5·10⁴ (at n = 10⁵ the same "
                "happens at d = 128–256, 10× the CPU); nothing is clipped (tested), so the "
                "growth is the noise response to the logged clips, not clipping bias.")

_ALPHA_NOTE = ("LR-E15: DP-STAT's count slack Γ_p = 3α√(L+1) sets the quantile level 1 − Γ_p/s "
               "that γ_t estimates, so ζ_t² falls as α grows (≈ 2.4× over the grid) and the "
               "privacy term grows as ≈ α^{1.7}, not α²; at a fixed quantile level "
               "(linreg.amb.alpha.privacy_quantile) the slope is 2")


_ALPHAS = (0.75, 1.5, 3.0, 6.0)
AMB_ALPHA_PRIVACY = register(Experiment(
    id="linreg.amb.alpha.privacy", paper="linreg",
    title="DP-AMBSSGD privacy term vs noise multiplier α (Lemma 3.11 / Thm 3.7: α² ∝ ε⁻²)",
    variable="alpha", quick_grid=_ALPHAS, full_grid=(0.5,) + _ALPHAS + (12.0,),
    fixed={k: v for k, v in {**_AMB, "n": 200_000}.items() if k != "epsilon"}, seeds=16,
    run=run_ambssgd_alpha, metric="privacy", bound_values=alpha_values,
    problem="Gaussian design, H = I, streamed", algorithm="dp_ambssgd (Algorithms 2 + 3)",
    checks=(
        Check("linreg:adaptive_privacy_alpha", "two-sided", 0.15,
              "0.15: Lemma 3.11's privacy term is ∝ α² (Theorem 3.7's ε⁻² is this with Thm 3.6's "
              "α ∝ 1/ε; ε enters the algorithm only through α, so α is the regressor); 16 seeds "
              "over an 8× range: CI ≈ ±0.1", expect="finding", note=_ALPHA_NOTE),
        Check("linreg:lem311_privacy", "one-sided", 0.15,
              "upper bound with explicit constants: the observed slope may be flatter, not "
              "steeper; 0.15 as the main check", level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_LEM311, use_asymptotic=False, history='the band reached the α → ∞ exponent 4 (A up to +4.15, 2.08 above the local slope): narrowed to the local slope alone'),
        Check("linreg:lem311_nonprivate", "reject", 0.15,
              "the α-free non-private part; " + _TOL_REJ)),
    description="ε = ε(α) from dp-accounting; each row certifies exactly that ε."))

AMB_ALPHA_QUANTILE = register(Experiment(
    id="linreg.amb.alpha.privacy_quantile", paper="linreg",
    title="Ablation: DP-STAT at a fixed quantile level, privacy term vs α (α²)",
    variable="alpha", quick_grid=_ALPHAS, full_grid=(0.5,) + _ALPHAS + (12.0,),
    fixed={k: v for k, v in {**_AMB, "n": 200_000, "stat_rule": 1}.items() if k != "epsilon"},
    seeds=24, run=run_ambssgd_alpha, metric="privacy", bound_values=alpha_values,
    problem="Gaussian design, H = I, streamed", algorithm="dp_ambssgd, DP-STAT rule 'quantile'",
    checks=(
        Check("linreg:adaptive_privacy_alpha", "two-sided", 0.15,
              "0.15: with the threshold (1 − 0.1)s (≥ 3.7 count-noise std on the grid) γ_t "
              "estimates a quantile that does not depend on α; CI ≈ ±0.1",
              **_held("linreg.amb.alpha.privacy_quantile", "linreg:adaptive_privacy_alpha", "two-sided")),
        Check("linreg:lem311_nonprivate", "reject", 0.15,
              "the α-free non-private part; " + _TOL_REJ)),
    description="Diagnostic for LR-E15 (not the paper's rule): same privacy guarantee."))


# ------------------------------------------------------------------------------------------------
# The n⁻² → n⁻¹ branch transition of the total excess (Theorem 3.7 / Lemma 3.11)
# ------------------------------------------------------------------------------------------------
#: d = 8 puts the crossing of the measured privacy and non-private terms (n ≈ 10⁵ at ε = 4) inside
#: a grid that starts where DP-STAT's slack is small enough that nothing is clipped (n ≥ 2.5·10⁴:
#: at 1.25·10⁴ up to 0.2% of the gradients are clipped, outside Lemma 3.11's premise).
_TRANS = {**_AMB, "d": 8}
_TRANS_QUICK = (25_000, 50_000, 100_000, 200_000, 400_000)
_TRANS_FULL = _TRANS_QUICK + (800_000, 1_600_000)
_TRANS_NOTE = ("the measured privacy share of the excess falls from ≈ 0.6 to ≈ 0.3 along the "
               "grid (common random numbers), so the sweep crosses from the privacy branch to "
               "the statistical branch")
_HEAD_LEVEL = ("Corollary 3.8's and Theorem 1.1's statistical term 8σ²d/n has an explicit "
               "constant and their privacy term is read with Õ constant 1, so observed/bound ≤ 1 "
               "is the statement; the lower end is the minimax σ²d/(2n) (1/16 of the bound) "
               "times 0.8 for the geometric mean over seeds")
_HEAD_TOL = ("0.15: an upper bound, so one-sided: its local slope over the grid is ≈ −1.00 "
             "(its privacy term has fallen below its statistical one by n ≈ 7, far left of the "
             "grid), and the data may fall faster, not slower; 16 seeds over 16×: CI ≈ ±0.13")
AMB_N_TRANSITION = _amb(
    "linreg.amb.n.transition",
    "DP-AMBSSGD total excess vs n across the n⁻² → n⁻¹ branch transition (Lemma 3.11 in full)",
    "n", _TRANS_QUICK, _TRANS_FULL, _TRANS, "excess", seeds=16, checks=
    (Check("linreg:lem311_main", "two-sided", 0.15,
           "0.15: the full bound (both branches with Lemma 3.11's explicit constants; its "
           "‖w*‖² bias term, which decays only as n^{−1/4} at c₁ = 1 and is negligible in the "
           "data, left out: LR-E6) has a local slope that moves from ≈ −1.7 to ≈ −1.5 along the "
           "grid (least squares over it ≈ −1.6) and asymptotic exponent −1, so the band "
           "[local, −1] is where a sum of the two branches must fall; 16 seeds over 16×: CI ≈ "
           "±0.13; " + _TRANS_NOTE,
           level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_LEM311,
           wide_reason="a transition sweep: the data must fall between the privacy branch's local slope and the statistical branch's −1 somewhere along the grid; the two reject checks rule out either branch alone"),
     Check("linreg:thm37_privacy", "reject", 0.15,
           "the privacy branch alone (n⁻² with logs: local ≈ −1.7): the statistical term must "
           "show in the data; " + _TOL_REJ),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "the statistical branch alone (n⁻¹): the privacy term must show in the data; "
           + _TOL_REJ),
     Check("linreg:cor38", "one-sided", 0.15, _HEAD_TOL, level=(0.05, 1.0),
           level_source="theorem", level_reason=_HEAD_LEVEL),
     Check("linreg:thm11", "one-sided", 0.15, _HEAD_TOL, level=(0.05, 1.0),
           level_source="theorem", level_reason=_HEAD_LEVEL),
     Check("linreg:cor38_privacy", "reject", 0.15,
           "Corollary 3.8's privacy term alone (n⁻²): the statistical term must show; "
           + _TOL_REJ)),
    description="d = 8, ε = 4: the grid straddles the crossing of the two measured terms, so "
                "Theorem 1.1 / Corollary 3.8 are checked here with both terms (one-sided: upper "
                "bounds, level at their explicit 8σ²d/n); their own crossing, n ≈ d log(1/δ)/ε² "
                "≈ 7, lies four decades left of the measured one (LR-E5).  Window slopes along "
                "the grid are compared with each branch in tests/test_linreg_transition.py.")


AMB_N_TRANSITION_Q = _amb(
    "linreg.amb.n.transition_quantile",
    "Ablation: DP-STAT at a fixed quantile level, total excess across the branch transition",
    "n", _TRANS_QUICK, _TRANS_FULL, {**_TRANS, "stat_rule": 1}, "excess", seeds=16, checks=
    (Check("linreg:lem311_main", "two-sided", 0.15,
           "0.15 as linreg.amb.n.transition; with the threshold (1 − 0.1)s the privacy branch "
           "has the bound's logs only (linreg.amb.n.privacy_quantile), so the bend of the full "
           "bound should show in the data", level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_LEM311,
           wide_reason="a transition sweep: the data must fall between the privacy branch's local slope and the statistical branch's −1 somewhere along the grid; the two reject checks rule out either branch alone"),
     Check("linreg:thm37_privacy", "reject", 0.15, "the privacy branch alone; " + _TOL_REJ),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "the statistical branch alone; " + _TOL_REJ)),
    description="Diagnostic for LR-E15 (not the paper's rule): same privacy guarantee.")


# ------------------------------------------------------------------------------------------------
# ε sweep of the privacy term (Theorem 3.7's ε⁻²), α calibrated exactly by dp-accounting
# ------------------------------------------------------------------------------------------------
_EPSILONS = (1.5, 3.0, 6.0, 12.0)
_EPS_NOTE = ("LR-E15: the privacy term falls as ≈ ε^{−1.4}, not ε^{−2}.  DP-STAT's slack "
             "Γ_p ∝ α sets the quantile γ_t estimates, so ζ_t² grows as ε grows (α falls); the "
             "fixed-quantile ablation (linreg.amb.epsilon.privacy_quantile) removes that and "
             "gives ≈ ε^{−1.94}, inside the tolerance of ε^{−2}.  The exact calibration's "
             "α² ∝ ε^{−1.78} on this grid (RDP→DP conversion, flatter near ε ~ log(1/δ)) is "
             "not what flattens it")
AMB_EPS_PRIVACY = _amb(
    "linreg.amb.epsilon.privacy", "DP-AMBSSGD privacy term vs ε (Theorem 3.7: ε⁻²)", "epsilon",
    _EPSILONS, (0.75,) + _EPSILONS, {**_AMB, "n": 100_000}, "privacy", seeds=24, checks=
    (Check("linreg:thm37_privacy", "two-sided", 0.15,
           "0.15: Theorem 3.7's privacy term has exponent −2 in ε (local −2 on the grid: ε "
           "appears only as ε⁻²; the algorithm's α is recalibrated from each ε by "
           "dp-accounting); 24 seeds over 8×: CI ≈ ±0.13", expect="finding", note=_EPS_NOTE),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "the ε-free statistical term: the privacy term must move with ε; " + _TOL_REJ)),
    description="A genuine ε sweep: each row runs at its ε with α = α(ε, δ) calibrated exactly "
                "(guarantee = target).")

AMB_EPS_QUANTILE = _amb(
    "linreg.amb.epsilon.privacy_quantile",
    "Ablation: DP-STAT at a fixed quantile level, privacy term vs ε (ε⁻² up to calibration)",
    "epsilon", _EPSILONS, (0.75,) + _EPSILONS, {**_AMB, "n": 100_000, "stat_rule": 1}, "privacy",
    seeds=16, checks=
    (Check("linreg:thm37_privacy", "two-sided", 0.15,
           "0.15: with the threshold (1 − 0.1)s (≥ 2.6 count-noise std at ε = 1.5, more above) "
           "ζ_t does not depend on ε (to 10%, tested), so the privacy term follows α²(ε); "
           "Theorem 3.7 states it with Theorem 3.6's α ∝ 1/ε, exponent −2 (the exact "
           "calibration's α² falls as ε^{−1.78} on this grid, tested; ζ_t's residual 10% drift "
           "with the count noise is within the CI); CI ≈ ±0.13",
           **_held("linreg.amb.epsilon.privacy_quantile", "linreg:thm37_privacy", "two-sided")),
     Check("linreg:thm37_nonprivate", "reject", 0.15, "the ε-free statistical term; " + _TOL_REJ)),
    description="Diagnostic for LR-E15 (not the paper's rule): same privacy guarantee.")


# ------------------------------------------------------------------------------------------------
# The headline: adaptive vs fixed clipping, σ and ‖w*‖ sweeps
# ------------------------------------------------------------------------------------------------
_SIGMAS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
_FLOOR_REASON = ("fixed clipping's privacy floor: ζ = 4R_x log n·‖w*‖ does not shrink with σ, so "
                 "the privacy term does not vanish as σ → 0 (Thm 3.2 Remark iii)")
_HEAD = {**_AMB, "n": 100_000}

SIGMA_ADAPTIVE = _amb(
    "linreg.sigma.adaptive", "Adaptive clipping: excess vs σ (Theorem 3.7: σ², vanishes at σ = 0)",
    "sigma", _SIGMAS, (1e-5,) + _SIGMAS, _HEAD, "excess", seeds=10, checks=
    (Check("linreg:thm37_main", "two-sided", 0.1,
           "0.1: both terms of the bound are ∝ σ² (band = 2); γ_t tracks σ_r = √(‖w_t−w*‖²+σ²) "
           "so the log factors do not depend on σ; seed CI ≈ ±0.03 over four decades",
           **_held("linreg.sigma.adaptive", "linreg:thm37_main", "two-sided")),
     Check("linreg:fixed_clip_floor", "reject", 0.1, _FLOOR_REASON + "; 0.1 as the main check")))

SIGMA_FIXED = _amb(
    "linreg.sigma.fixed", "Fixed clipping (Thm 3.2's ζ): excess vs σ — a floor", "sigma", _SIGMAS,
    (1e-5,) + _SIGMAS, {**_HEAD, "clip": 1}, "excess", seeds=10, checks=
    (Check("linreg:fixed_clip", "two-sided", 0.1,
           "0.1: the bound (eq. (60) with ζ fixed) has local slope ≈ 0.1 over σ ∈ [1e-4, 1] "
           "((‖w*‖ + σ)² in ζ², σ²d in the variance) and exponent 2 as σ → ∞: the band is wide, "
           "so the level band carries the check; CI ≈ ±0.03", level=(1e-3, 1.0),
           level_source="theorem", level_reason=_LEVEL_FIXED, use_asymptotic=False, history='the band reached the σ → ∞ exponent 2 (A up to +2.1 around a local slope +0.13): narrowed to the local slope alone'),
     Check("linreg:thm37_main", "reject", 0.1,
           "adaptive clipping's σ²: a fixed clip cannot follow σ → 0; 0.1 as the main check")))

_WNORMS = (0.1, 1.0, 10.0, 100.0)
WNORM_ADAPTIVE = _amb(
    "linreg.wnorm.adaptive", "Adaptive clipping: excess vs ‖w*‖ (Theorem 3.7: flat)", "w_norm",
    _WNORMS, (0.01,) + _WNORMS + (1000.0,), {**_HEAD, "sigma": 0.1}, "excess", seeds=10, checks=
    (Check("linreg:thm37_main", "two-sided", 0.1,
           "0.1: the bound without its n⁻¹⁰⁰ bias term is free of ‖w*‖ (band = 0); the bias of "
           "the first phases contracts by ≈ 0.06 per phase and is < 10⁻⁴ of the total at "
           "‖w*‖ = 100; seed CI ≈ ±0.03",
           **_held("linreg.wnorm.adaptive", "linreg:thm37_main", "two-sided")),
     Check("linreg:fixed_clip", "reject", 0.1,
           "fixed clipping's (‖w*‖ + σ)² growth; 0.1 as the main check")))

WNORM_FIXED = _amb(
    "linreg.wnorm.fixed", "Fixed clipping: excess vs ‖w*‖ (grows as ‖w*‖²)", "w_norm",
    _WNORMS, (0.01,) + _WNORMS + (1000.0,), {**_HEAD, "sigma": 0.1, "clip": 1}, "excess", seeds=10, checks=
    (Check("linreg:fixed_clip", "two-sided", 0.1,
           "0.1 about the local slope of (‖w*‖ + σ)², the instance's own rate (≈ 1.8 on the "
           "quick grid, 1.58 over the full grid's 0.01…1000, where σ dominates at the small "
           "end); seed CI ≈ ±0.03", level=(1e-3, 1.0), level_source="theorem",
           level_reason=_LEVEL_FIXED, use_asymptotic=False,
           history="the band first reached the ‖w*‖ → ∞ exponent 2 as well; on the full grid "
                   "that band (local 1.58 to 2) was too wide to fail and was refused, so the "
                   "band is the local slope alone on both grids"),
     Check("linreg:thm37_main", "reject", 0.1, "adaptive clipping's ‖w*‖-free rate; 0.1")))

# ------------------------------------------------------------------------------------------------
# σ = 0: geometric convergence in the number of phases (adaptive) vs a floor growing with T (fixed)
# ------------------------------------------------------------------------------------------------
SIGMA0_ADAPTIVE = _amb(
    "linreg.sigma0.adaptive", "σ = 0, adaptive: excess vs phases T (geometric decay)", "T",
    (4, 6, 8, 10), (4, 6, 8, 10, 12), {**_HEAD, "sigma": 0.0}, "excess",
    values=amb_values_sigma0, checks=(
        Check("linreg:lem311_bias", "one-sided", 1.5,
              "Lemma 3.11 at σ = Δ = 0 is its bias term ∝ e^{−ημT/4}/T²; only an upper bound is "
              "claimed (the observed decay is faster: ζ_t ∝ ‖w_t − w*‖ shrinks the noise with "
              "the error); 1.5 because the slope of a geometric decay is ≈ −15 here with seed "
              "CI ≈ ±1.1", level=(1e-40, 1.0),
              level_source="theorem", level_reason="the lemma's explicit constant (4e^{−ημ}/(η²μ²T²)): observed/bound ≤ "
                           "1 at every T is the claim; no lower end (exact convergence allowed)", wide_reason="a geometric decay has no log-log exponent: the slope (≈ −15) only excludes a decay slower than the bound's; the level band (observed/bound ≤ 1 at every T, the lemma with its explicit constant) is the check"),
        Check("linreg:fixed_clip_privacy", "reject", 1.5,
              "fixed clipping's floor grows ∝ T at fixed n (b = n/T); tolerance as the main "
              "check")))

SIGMA0_FIXED = _amb(
    "linreg.sigma0.fixed", "σ = 0, fixed clip: excess vs phases T (floor ∝ T)", "T",
    (3, 6, 12, 24), (3, 6, 12, 24, 48), {**_HEAD, "sigma": 0.0, "clip": 1}, "excess",
    values=amb_values_sigma0, checks=(
        Check("linreg:fixed_clip_privacy", "two-sided", 0.15,
              "0.15: the bound 32ζ²α²d·T/n² has slope exactly 1 in T (b = n/T); seed CI ≈ ±0.07 "
              "over an 8× range of T", level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_FIXED),
        Check("linreg:lem311_bias", "reject", 0.15, "adaptive clipping's geometric decay; 0.15")))

# ------------------------------------------------------------------------------------------------
# Heavy-tailed design: Laplace coordinates (sub-exponential, a = 1 in the Tail condition)
# ------------------------------------------------------------------------------------------------
LAPLACE_NONPRIVATE = _amb(
    "linreg.laplace.nonprivate",
    "Laplace design (a = 1): DP-AMBSSGD non-private term vs n (Theorem 3.7: 8σ²d/n)", "n",
    _N_QUICK[1:], _N_FULL[1:], {**_AMB, "design": 1}, "nonprivate", seeds=24, checks=
    (Check("linreg:thm37_nonprivate", "two-sided", 0.15,
           "0.15: 8σ²d/n has no log factor for any a; with ζ_t = R_xγ_t log n (a = 1) nothing is "
           "clipped (tested), so the reference run is plain one-pass minibatch SGD; 16 seeds over "
           "8×: CI ≈ ±0.1", level=(0.05, 1.0), level_source="theorem", level_reason=_LEVEL_NONPRIV),
     Check("linreg:thm37_privacy", "reject", 0.15, "the privacy term's n⁻²; " + _TOL_REJ)),
    description="Heavy-tailed covariates: x = u with u_j i.i.d. Laplace of unit variance "
                "(R_x² = d + 5).")


# ------------------------------------------------------------------------------------------------
# Condition number: H = diag(geomspace(1, 1/κ, d)), T = ⌈κ ln n⌉ phases
# ------------------------------------------------------------------------------------------------
_KAPPAS = (1.0, 2.0, 4.0, 8.0)
KAPPA_PRIVACY = _amb(
    "linreg.kappa.privacy", "DP-AMBSSGD privacy term vs condition number κ (Theorem 3.7: ≤ κ²)",
    "condition_number", _KAPPAS, _KAPPAS + (16.0,), {**_AMB, "n": 200_000}, "privacy",
    seeds=24, checks=
    (Check("linreg:thm37_privacy", "one-sided", 0.15,
           "upper bound only: Theorem 3.7's κ² is the worst case over spectra (Tr H⁻¹ ≤ κd); on a "
           "geometric spectrum Tr H⁻¹ ≈ d(κ−1)/(κ ln κ)·κ and T ∝ κ give ≈ κ²/ln κ, flatter; "
           "0.15 covers the seed CI (24 seeds: ≈ ±0.14; few ill-conditioned directions dominate "
           "the privacy term, so one seed's spread is wider than at κ = 1)",
           **_held("linreg.kappa.privacy", "linreg:thm37_privacy", "one-sided")),
     Check("linreg:thm37_nonprivate", "reject", 0.15,
           "a κ-free privacy term (the non-private term's exponent 0); " + _TOL_REJ)))

KAPPA_NONPRIVATE = _amb(
    "linreg.kappa.nonprivate", "DP-AMBSSGD non-private term vs κ (Thm 3.7 Remark iv: κ-free)",
    "condition_number", _KAPPAS, _KAPPAS + (16.0,), {**_AMB, "n": 200_000}, "nonprivate",
    seeds=16, checks=
    (Check("linreg:thm37_nonprivate", "two-sided", 0.15,
           "0.15: 8σ²d/n has no κ (band = 0); the tail average over T/2 ∝ κ phases of b ∝ 1/κ "
           "points keeps σ²Tr(H⁻¹Σ)/(Tb) = σ²d/(Tb) fixed; 16 seeds over 8×: CI ≈ ±0.12",
           level=(0.05, 1.0), level_source="theorem", level_reason=_LEVEL_NONPRIV),
     Check("linreg:thm37_privacy", "reject", 0.15,
           "the privacy term's κ²; a κ-dependent non-private term would be Lemma 3.11's product "
           "term (LR-E16); " + _TOL_REJ)))


# ------------------------------------------------------------------------------------------------
# d³ vs d²: the worst-case clip of prior DP-SGD analyses
# ------------------------------------------------------------------------------------------------
D3_LIPSCHITZ = _amb(
    "linreg.d3.lipschitz", "Worst-case clip ζ ∝ R_x²‖w*‖: privacy term vs d (d³)", "d",
    (8, 16, 32, 64), (4, 8, 16, 32, 64, 128, 256), {**_HEAD, "sigma": 0.1, "clip": 2}, "privacy", seeds=16, checks=
    (Check("linreg:lipschitz_clip_privacy", "two-sided", 0.15,
           "0.15: ζ² ∝ (d+2)²‖w*‖² so the algorithm's slope is ≈ 3 − 4/(d+2) locally, as the "
           "bound's local slope; seed CI ≈ ±0.05", level=(1e-3, 1.0), level_source="theorem", level_reason=_LEVEL_FIXED),
     Check("linreg:thm37_privacy", "reject", 0.15, "adaptive clipping's d²; " + _TOL_REJ)))


# ------------------------------------------------------------------------------------------------
# DP-SSGD (Algorithm 1): Lemma 3.5 where its analysis holds
# ------------------------------------------------------------------------------------------------
_SSGD = {"d": 8, "epsilon": 4.0, "sigma": 1.0, "w_norm": 1.0}
SSGD_N = register(Experiment(
    id="linreg.ssgd.n", paper="linreg",
    title="DP-SSGD privacy term vs n (Lemma 3.5 at Cor. 3.3's α, ζ, η)", variable="n",
    quick_grid=(4000, 8000, 16000, 32000, 64000),
    full_grid=(4000, 8000, 16000, 32000, 64000, 128000, 256000), fixed=_SSGD, seeds=16, run=run_ssgd, metric="privacy", bound_values=ssgd_values,
    problem="Gaussian design, H = I, streamed", algorithm="dp_ssgd (Algorithm 1)",
    checks=(
        Check("linreg:lem35_cor33_privacy", "two-sided", 0.15,
              "0.15: Lemma 3.5's variance term is the exact stationary variance of tail-averaged "
              "SGD up to the factor 1/(1 − ηR_x²) (Jain et al.), so the rate is tight; its "
              "local slope keeps ζ² ∝ ln²n and α² ∝ ln²(n/δ)/n; 16 seeds over 16×: CI ≈ ±0.11; the "
              "grid starts at n = 4000 because at n = 2000 1.3% of the gradients are clipped "
              "(outside the lemma's premise)",
              level=(0.3, 1.2),
              level_source="theorem", level_reason="Lemma 3.5 is an expectation bound with explicit constants; the tail "
                           "average of n/2 iterates attains ≈ 1/(1 + ηR_x²/(1 − ηR_x²)) ≈ 0.7 of "
                           "it; geometric mean over seeds ≈ 0.85 of the mean; +20% for the "
                           "finite-n correlation of the first tail iterates"),
        Check("linreg:naive_privacy", "reject", 0.15,
              "without amplification by shuffling (α ∝ 1/ε, not 1/(ε√n)) the rate is n⁻¹; "
              "0.15 as the main check")),
    description="Utility only: at this α the shuffling theorem (Thm 3.1) does not certify the "
                "nominal ε (LR-E7); the stored guarantee is parallel composition, ½α⁻²-zCDP."))

SSGD_NEGCTL = register(Experiment(
    id="linreg.ssgd.negctl", paper="linreg",
    title="Negative control: DP-SSGD at ε = 0.5 (outside its analysis): Lemma 3.5's rate fails",
    variable="n", quick_grid=(2000, 4000, 8000, 16000, 32000),
    full_grid=(2000, 4000, 8000, 16000, 32000, 64000, 128000),
    fixed={**_SSGD, "epsilon": 0.5}, seeds=16, run=run_ssgd, metric="privacy",
    bound_values=ssgd_values, problem="Gaussian design, H = I, streamed",
    algorithm="dp_ssgd (Algorithm 1)",
    checks=(
        Check("linreg:lem35_cor33_privacy", "reject", 0.15,
              "Theorem 3.2 Remark iii: DP-SSGD's analysis needs η ≲ 1/(dα² polylog) (Lemma A.9, "
              "no clipping); at ε = 0.5 Corollary 3.3's η = 1/(4d) violates it, 14–76% of the "
              "gradients are clipped and the no-clipping rate must not describe the data; 0.15 "
              "as in linreg.ssgd.n"),),
    description="Expected to break: the control shows the checks can fail where the paper says "
                "its analysis does not apply."))
