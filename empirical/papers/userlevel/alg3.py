"""Algorithm 3's experiments for the user-level SCO paper (Lowy, Liu, Asi): risk sweeps in m, n, ε,
d (Theorem 3.2/C.3 and Remark 3.6 on the strongly convex quadratic; the item-level baseline of
footnote 3 on the same data), logistic regression (UL-E21), the gradient counts of Theorem
3.2/C.3 and of the non-smooth schedule of Theorem 4.1/D.3, and the m-overlay figure.

The quadratic f(x, z) = ½‖x − z‖² is 1-strongly convex, so its excess risk follows the
*squared* rates of Remark 3.6: checks against Theorem 3.2's convex rates are one-sided, the
two-sided ones use Remark 3.6, tight on this instance (the noise enters the excess as ½‖ζ‖²).
The privacy part of the error is measured by coupled runs (``coupled`` in the point): the same
generator copy runs without Gaussian noise (separate noise stream), and on the quadratic
``privacy_excess`` = ½‖x_priv − x_np‖² has the mean of F(x_priv) − F(x_np) exactly.

The run functions (what each experiment's ``run`` is, and what they import) live in
:mod:`empirical.papers.userlevel.alg3_runs`, so that editing a declaration here does not change the
rows' code fingerprint; they are re-exported here under their old names.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from empirical.core.experiment import Check, Experiment, register
from empirical.papers.userlevel.alg3_runs import (_alg3_settings, _alg3_theory_phase1,  # noqa: F401
                                            _run_alg3_counts, _run_alg3_quadratic)
from empirical.papers.userlevel.common import PAPER, PRIVACY_RTOL, _risk_vacuous, quadratic_values
from empirical.store.calibration import calibrations

#: Calibrated level bands, each fit on held-out seeds (calibration.json beside this module,
#: recomputed by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str, judged: str | None = None) -> dict:
    """The level-band fields of check (bound, kind) from experiment ``eid``'s record; ``judged``
    names the experiment whose check takes ``eid``'s band unchanged (its seeds are neither)."""
    r = _HELD_OUT[(eid, bound, kind)]
    why = r.describe() if judged is None else f"the band of {eid}: {r.describe()}"
    if judged is not None:
        r = dataclasses.replace(r, experiment=judged)
    return dict(level=r.band, level_source="calibration", level_reason=why, calibration=r)

# =============================================================================================
# Experiments
# =============================================================================================
_Q = {"delta": 1e-9, "epsilon": 1.0, "c_K1": 40.0, "c_T": 1.0, "c_K2": 1.0}
_ONE_SIDED_SC = ("one-sided: Theorem 3.2 is an upper bound for convex losses and this instance "
                 "is 1-strongly convex (Remark 3.6's squared rate applies), so the slope may be "
                 "steeper; 0.1 covers 10-seed noise of a χ²_16-like excess (bootstrap "
                 "half-width ≈ 0.09) and the ceil() steps of T_i between grid points")
_ALG3_M_LEVEL_REASON = (
    "observed/bound = the Õ factor of the rates mode, now with the corrected Lemma C.2 "
    "sensitivity (UL-E13): Δ_1 = S·τ/K_1 with S = Δ_1K_1/τ ≈ 329–342 on this grid (recorded "
    "in the rows), against the former 2 log(1/ζ) ≈ 60.  Before the correction (ε = 1) the "
    "measured level was 237–367; the excess scales as σ² ∝ S²/ε² and the bound as 1/ε, so at "
    "ε = 8 the expected level is ≈ 300·(335/60)²/8 ≈ 1200; measured 1380–2750 (the slope is "
    "0.14 steeper than the bound's over the 1.8 decades).  Band ×3 below the lowest and above "
    "the highest measured value: a 2× error in the sensitivity or z (4× in the level) at "
    "either end fails it")

_QUAD_PROBLEM = "QuadraticUsers: f = ½‖x − z‖², z = μ0 + Rademacher/√d (exact F)"
_ALG3_ALGORITHM = "algorithms.userlevel.sco.accelerated_phased_erm (Algorithms 2+3), rates mode"


def _risk_experiment(**kw) -> Experiment:
    """Register a private excess-risk sweep of Algorithm 3 (or of the item-level baseline) run by
    ``_run_alg3_quadratic`` and checked against ``quadratic_values``; ``kw`` gives what the
    sweep declares itself and may override the family's problem, algorithm or bound values."""
    family = dict(paper=PAPER, run=_run_alg3_quadratic, metric="excess",
                  bound_values=quadratic_values, vacuous=_risk_vacuous, problem=_QUAD_PROBLEM,
                  algorithm=_ALG3_ALGORITHM, privacy_rtol=PRIVACY_RTOL)
    return register(Experiment(**{**family, **kw}))


ALG3_M = _risk_experiment(
    id="userlevel.alg3.m",
    title="Alg. 3 (user-level DP, outlier gradient removal): excess risk vs items per user m",
    variable="m",
    quick_grid=(4096, 11585, 32768, 92682, 262144),
    full_grid=(1024, 2048, 4096, 11585, 32768, 92682, 262144),
    fixed={**_Q, "epsilon": 8.0, "delta": 1e-10, "c_K1": 36.0, "n": 4096, "d": 16,
           "algorithm": "alg3"},
    seeds=10,
    description="The point of user-level DP: the noise shrinks with m (τ ∝ 1/√m).",
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.1, _ONE_SIDED_SC,
              **_held("userlevel.alg3.m", "userlevel:thm3.2_privacy", "one-sided")),
        Check("userlevel:trivial_sc_privacy", "reject", 0.15,
              "competitor: the user-as-item baseline's privacy error does not shrink with m "
              "(slope 0); 0.15 = 1.5× the main tolerance"),
        Check("userlevel:rem3.6_privacy", "reject", 0.15,
              "the strongly convex rate's m-slope −1 is NOT reached: T_i grows like (nm)^{1/4} "
              "through λ, so the calibrated σ falls only like m^{−0.36}; recorded (UL-E11) and "
              "pinned by this reject"),
    ),
)

BASELINE_M = _risk_experiment(
    id="userlevel.baseline.m",
    title="Item-level baseline (a user = one item, same schedule as Alg. 3 at m = 1): excess vs m",
    variable="m",
    quick_grid=ALG3_M.quick_grid,
    full_grid=ALG3_M.full_grid,
    fixed={**_Q, "epsilon": 8.0, "delta": 1e-10, "c_K1": 36.0, "n": 4096, "d": 16,
           "algorithm": "baseline"},
    seeds=6,
    algorithm="algorithms.userlevel.sco.item_level_baseline (no outlier removal, Δ = 2L/K_i)",
    checks=(
        Check("userlevel:trivial_sc_privacy", "two-sided", 0.1,
              "two-sided: the baseline's noise is calibrated for sensitivity 2L/K_i, which does "
              "not involve m, so its privacy excess is exactly m-free (slope 0) up to seed "
              "noise; 0.1 as for Algorithm 3",
              **_held("userlevel.baseline.m", "userlevel:trivial_sc_privacy", "two-sided")),
        Check("userlevel:rem3.6_privacy", "reject", 0.15,
              "the user-level rate's m-slope −1 (squared −1/2) must be ruled out for the "
              "baseline on the same problem and schedule"),
    ),
)

ALG3_EPS = _risk_experiment(
    id="userlevel.alg3.eps",
    title="Alg. 3: excess risk vs ε",
    variable="epsilon",
    quick_grid=(2.83, 4.0, 5.66, 8.0),
    # the full grid refines the quick range (2^{1/4} steps).  Below 2.83 the certification
    # threshold of the phases' kept counts is near (UL-E23): the former full-grid point ε = 2,
    # where the level leaves this band, is swept with its neighbours by
    # userlevel.alg3.eps.pole (FINDING on both grids), not dropped
    full_grid=(2.83, 3.36, 4.0, 4.76, 5.66, 6.73, 8.0),
    fixed={**{k: v for k, v in _Q.items() if k != "epsilon"}, "delta": 1e-10, "c_K1": 36.0,
           "n": 8192, "m": 65536, "d": 16, "algorithm": "alg3"},
    seeds=24,
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.25,
              "one-sided (upper bound; the instance is strongly convex, Remark 3.6's ε^{−2} "
              "applies).  0.25: the minibatch floor c_K1 log(1/δ)/ε admits more phases as ε "
              "grows (3 → 6 phases on this grid), so the fit is a chord of a piecewise curve, "
              "and 24 seeds give a bootstrap half-width ≈ 0.2 (8 and 16 gave 0.41 and 0.26: "
              "inconclusive)",
              **_held("userlevel.alg3.eps", "userlevel:thm3.2_privacy", "one-sided"), history='UL-E23: the full grid held ε = 2, where the level leaves the band near the certification threshold; split at the pole: ε ≥ 2.83 here, ε ≤ 2.83 in userlevel.alg3.eps.pole (a recorded finding)'),
        Check("userlevel:thm2.1_proof", "reject", 0.15,
              "competitor: the linear-time Algorithm 1's proven ε^{−1/2} (UL-E1); the "
              "accelerated algorithm's error must fall faster in ε"),
    ),
)

# UL-E23.  Same problem, fixed point, check, tolerance and level band as ALG3_EPS, on a grid that
# reaches down to where each phase's kept count nears what AboveThreshold can certify (c_K1 =
# 36).  The last phase to be admitted runs saturated (K_i = n_i) with a sensitivity factor
# Δ_iK_i/τ that diverges at its own threshold: at ε = 2 phase 3 has S_3 = 2767 (σ_3 = 2.7;
# S_1 = 1354), at 2.19 S_3 = 1424; just below ε = 2 phase 3 is not admitted (2 phases, level back
# to ≈ 5·10^3 at 1.9); below ε ≈ 1.75 phase 1 is not (ValueError "no phase").  The grid keeps
# 2.83–8 so that the slope is conclusive on its own (a grid 2–2.83 gave a CI half-width 1.03 with
# 8 seeds).  The check is a finding of the level (finding_on="level"): the slope must pass (an
# inconclusive or failing slope is FAIL) and the level must leave the band (else NOT
# REPRODUCED), so the verdict is decided by the level and the check can fail both ways.
ALG3_EPS_POLE = _risk_experiment(
    id="userlevel.alg3.eps.pole",
    title="Alg. 3: excess risk vs ε near the certification threshold (finding)",
    variable="epsilon",
    quick_grid=(2.0, 2.83, 4.0, 5.66, 8.0),
    full_grid=(1.9, 2.0, 2.19, 2.38, 2.59, 2.83, 4.0, 5.66, 8.0),
    fixed=ALG3_EPS.fixed,
    seeds=16,
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", ALG3_EPS.checks[0].tolerance,
              "one-sided and 0.25 as userlevel.alg3.eps (same problem and schedule; the claim "
              "is an upper bound).  16 seeds over 2–8: CI half-width 0.18 (quick) / 0.14 "
              "(full), so the slope alone passes (−3.27 / −3.14) and the level decides",
              **_held("userlevel.alg3.eps", "userlevel:thm3.2_privacy", "one-sided", judged="userlevel.alg3.eps.pole"),
              expect="finding", finding_on="level",
              note="UL-E23: at ε = 2 the level observed/bound is 1.65·10^4 (> 5348, the held-out band's top; 592–3439 "
                   "on 2.83–8; full grid also 1.43·10^4 at 2.19, 5.0·10^3 at 1.9): the "
                   "saturated last phase's sensitivity factor S_3 = Δ_3K_3/τ = 2767 (its "
                   "kept-count certification threshold is just below ε = 2) makes Theorem "
                   "3.2's Õ not polylog there.  All privacy (coupled noise-free excess < 1% of "
                   "it, test), no halt, ‖x‖ inside 𝒳.  NOT REPRODUCED (verify fails) if the "
                   "level stays in the band, e.g. if a changed sensitivity bound removes the "
                   "pole", history="UL-E23: split off userlevel.alg3.eps at the certification threshold after the level left that check's band at ε = 2; declared a finding of the level"),
        Check("userlevel:thm2.1_proof", "reject", 0.15,
              "competitor as in userlevel.alg3.eps: Algorithm 1's proven ε^{−1/2} (UL-E1), "
              "still ruled out with the threshold points in the fit"),
    ),
)

ALG3_N = _risk_experiment(
    id="userlevel.alg3.n",
    title="Alg. 3: excess risk vs number of users n",
    variable="n",
    quick_grid=(4096, 8192, 16384, 32768),
    full_grid=(4096, 8192, 16384, 32768, 65536),
    # ε = 8, m = 16384 (was ε = 4, m = 256; m·n < 1/δ keeps Theorem 3.2's condition): with the corrected Lemma C.2 sensitivity
    # (UL-E13) the old setting's noise saturates the domain at n ≤ 8192 (σ_1 = 22 and 4.2
    # against the radius 2 of 𝒳, excess ≈ F(0) − F*), so its slope measured the projection
    # (−0.56, errata UL-E16), not the rate
    fixed={**_Q, "epsilon": 8.0, "c_K2": 0.25, "m": 16384, "d": 16, "algorithm": "alg3"},
    seeds=10,
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.2,
              "one-sided (upper bound; the instance is strongly convex).  0.2, not 0.1: the "
              "phase count grows along the grid (3 → 9 phases as n_i ≥ K_min admits more), so "
              "the fitted slope is a chord of a piecewise curve, and 10 seeds of χ²_16-like "
              "noise give a bootstrap half-width ≈ 0.16 at these four points",
              **_held("userlevel.alg3.n", "userlevel:thm3.2_privacy", "one-sided")),
        Check("userlevel:thm2.1", "reject", 0.15,
              "competitor: Algorithm 1's linear-time rate has n-slope −1/2; the accelerated "
              "algorithm's privacy error must fall faster"),
    ),
)

ALG3_D = _risk_experiment(
    id="userlevel.alg3.d",
    title="Alg. 3: excess risk vs dimension d",
    variable="d",
    quick_grid=(8, 16, 32, 64, 128),
    full_grid=(2, 4, 8, 16, 32, 64, 128, 256),
    # ALG3_M's setting at m = 2^20 (nm < 1/δ): the noise norm √d·σ_1 stays ≤ 0.9 < the radius 2
    # of 𝒳 up to d = 128 (at m = 32768 it reached 5.4 at d = 256 and the projection flattened
    # the slope to 0.79).  The nominal crossover n* = d log(1/δ)/ε² reaches n = 4096 only at
    # d ≈ 11 400 (not affordable), yet the coupled runs show the excess is all privacy (UL-E18):
    # the grid is on the privacy side in fact and on the statistical side nominally
    fixed={**_Q, "epsilon": 8.0, "delta": 1e-10, "c_K1": 36.0, "n": 4096, "m": 1048576,
           "algorithm": "alg3"},
    seeds=24,
    checks=(
        Check("userlevel:rem3.6_privacy", "two-sided", 0.1,
              "two-sided: the noise ζ ~ N(0, σ²I_d) enters the excess as ½‖ζ‖² = dσ²/2 and σ "
              "depends on d only through τ ∝ √log(ndm) and λ's √d term (< 3% of λ here), so "
              "Remark 3.6's d-slope 1 is exact up to those logs (≤ +0.05 over the grid); 0.1 "
              "covers them and 24-seed noise of a χ²_d-like excess (bootstrap half-width 0.05)",
              **_held("userlevel.alg3.d", "userlevel:rem3.6_privacy", "two-sided"), history='UL-E18: first swept at m = 32768, where the noise norm reached 5.4 at d = 256 and the projection onto 𝒳 flattened the slope to 0.79 (FAIL); moved to m = 2^20 (nm < 1/δ), where the noise stays inside 𝒳 up to d = 128'),
        Check("userlevel:thm3.2_privacy", "reject", 0.15,
              "competitor: the convex rate's √d (slope 1/2); on this strongly convex instance "
              "the squared rate's d must be seen, so 1/2 must be ruled out; 0.15 = 1.5× the "
              "main tolerance"),
    ),
)

# --- logistic regression (the second smooth problem) ---------------------------------
def _logistic_values(point: dict) -> dict:
    """Symbol values of LogisticUsers (‖a‖ = 1: L = 1, β = 1/4; R = 4)."""
    return {"n": point["n"], "m": point["m"], "d": point["d"], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": 1.0, "R": 4.0, "beta": 0.25}


ALG3_LOGISTIC_M = _risk_experiment(
    id="userlevel.alg3.logistic.m",
    title="Alg. 3 on logistic regression: excess risk vs items per user m",
    variable="m",
    quick_grid=(32, 64, 128, 256),
    full_grid=(16, 32, 64, 128, 256, 512, 1024),
    # ALG3_M's privacy setting (ε = 8, δ = 1e-10, n = 4096: the smallest n at which phases
    # certify a finite sensitivity, UL-E14); items are stored, so nmd bounds m (64 MB at 512)
    fixed={**_Q, "epsilon": 8.0, "delta": 1e-10, "c_K1": 36.0, "n": 4096, "d": 4,
           "algorithm": "alg3", "problem": "logistic"},
    # 40 seeds: the per-seed excess varies ×3 (sd of its log 0.5–0.9; at 12 seeds the CI
    # half-width was 0.23, inconclusive)
    seeds=40,
    bound_values=_logistic_values,
    vacuous=None,      # _risk_vacuous's F − F* ≤ LR uses the quadratic's L and R
    problem="LogisticUsers: well-specified logistic loss, a ~ Unif(S^{d−1}), F by disk quadrature",
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.15,
              "one-sided (upper bound, convex loss): the slope may be steeper than −1/2, not "
              "flatter; 0.15 covers 40 seeds of an excess whose log has sd 0.5–0.9 (bootstrap "
              "half-width 0.145) and the ceil() of T_i", expect="finding", finding_on="slope",
              **_held("userlevel.alg3.logistic.m", "userlevel:thm3.2_privacy", "one-sided"),
              note="UL-E21: the excess falls only as m^{−0.19} here: the last phase's noise "
                   "σ_4 ∝ τ ∝ m^{−1/2} enters as σ_4/λ_4 and λ_4 = λ2^{4p} with "
                   "p = 4 + log_n √m falls more "
                   "slowly than m^{−1/2}; the logistic curvature (≈ 0.06) is far below λ_3, λ_4, "
                   "so nothing else damps it (on the quadratic μ = 1 does)"),
        Check("userlevel:trivial_privacy", "one-sided", 0.15,
              "one-sided: the user-level algorithm's excess must fall at least as fast in m as "
              "the item-level rate's (slope 0, footnote 3); 0.15 as above (40 seeds: bootstrap "
              "half-width 0.145)",
              **_held("userlevel.alg3.logistic.m", "userlevel:trivial_privacy", "one-sided")),
        Check("userlevel:trivial_privacy", "reject", 0.1,
              "competitor: the item-level m-slope 0 must be ruled out (Algorithm 3 still gains "
              "from m here, only less than Theorem 3.2 says); 0.1: outside the CI and ≥ 0.1 "
              "from the observed slope (measured 0.188)"),
    ),
)


# Theorem 3.2's other variables on the same logistic instance: n (users) and ε, at the m-sweep's
# smallest m = 32 (the cheapest point; the item store is n·m·d).  The quick grids are cheap and
# narrow; the full grids (n: 1.5 decades, ε: 0.7 decades) decide.
_LOGISTIC_FIXED = {k: v for k, v in ALG3_LOGISTIC_M.fixed.items() if k != "m"}
_LOGISTIC_COMMON = dict(bound_values=_logistic_values, vacuous=None,
                        problem=ALG3_LOGISTIC_M.problem)

ALG3_LOGISTIC_N = _risk_experiment(
    id="userlevel.alg3.logistic.n", full_only="quick grid (n = 4096–16384, 12 seeds): CI ±0.55 against tol 0.2, ≈ 490 seeds needed; full grid (n = 4096–131072): PASS −1.004 [−1.197, −0.818], Algorithm 1's −1/2 REJECTED",
    title="Alg. 3 on logistic regression: excess risk vs number of users n",
    variable="n",
    quick_grid=(4096, 8192, 16384),
    full_grid=(4096, 8192, 16384, 32768, 65536, 131072),
    # n = 4096 is the smallest n whose phases certify a finite sensitivity at ε = 8 (UL-E14)
    fixed={**{k: v for k, v in _LOGISTIC_FIXED.items() if k != "n"}, "m": 32},
    seeds=12,
    **_LOGISTIC_COMMON,
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.2,
              "one-sided (upper bound, convex loss): the slope may be steeper than −1, not "
              "flatter; 0.2 as for userlevel.alg3.n: the phase count grows along the grid (more "
              "phases certify as n grows), so the fit is a chord of a piecewise curve; the full "
              "grid's 12 seeds of an excess whose log has sd 0.5–0.9 give a CI half-width ≈ 0.15 "
              "over 1.5 decades (the quick grid's, over 0.6 decades, ≈ 0.55)",
              **_held("userlevel.alg3.logistic.n", "userlevel:thm3.2_privacy", "one-sided")),
        Check("userlevel:thm2.1", "reject", 0.15,
              "competitor: Algorithm 1's linear-time rate has n-slope −1/2; 0.15 as in "
              "userlevel.alg3.n"),
    ),
)

ALG3_LOGISTIC_EPS = _risk_experiment(
    id="userlevel.alg3.logistic.eps",
    title="Alg. 3 on logistic regression: excess risk vs ε",
    variable="epsilon",
    quick_grid=(2.83, 5.66, 10.0),
    full_grid=(2.0, 2.83, 4.0, 5.66, 8.0, 10.0),
    # n = 8192: at 4096 no phase certifies a finite sensitivity below ε ≈ 2.8 (UL-E14); the
    # algorithm accepts ε ≤ 10
    fixed={**{k: v for k, v in _LOGISTIC_FIXED.items() if k not in ("epsilon", "n")},
           "n": 8192, "m": 32},
    seeds=6,
    **_LOGISTIC_COMMON,
    checks=(
        Check("userlevel:thm3.2_privacy", "one-sided", 0.25,
              "one-sided (upper bound, convex loss): the slope may be steeper than −1, not "
              "flatter; 0.25 as for userlevel.alg3.eps: the minibatch floor c_K1 log(1/δ)/ε "
              "admits more phases as ε grows (2 → 6 on the full grid), so the fit is a chord of a "
              "piecewise curve; 6 seeds over 0.7 decades give a CI half-width ≈ 0.35, decisive "
              "only for a slope well away from the edge (the verify budget caps the seeds)",
              **_held("userlevel.alg3.logistic.eps", "userlevel:thm3.2_privacy", "one-sided")),
        Check("userlevel:thm2.1_proof", "reject", 0.15,
              "competitor: Algorithm 1's proven ε^{−1/2} (UL-E1), as in userlevel.alg3.eps"),
    ),
)


# --- gradient counts -------------------------------------------------------------------------
_COUNT = {"delta": 1e-6, "epsilon": 1.0, "c_K1": 1.0, "c_T": 4.0, "c_K2": 1.0, "d": 10}
_COUNT_TOL = ("two-sided: the count Σ_i T_iK_im is deterministic given the schedule (all seeds "
              "equal, CI width 0), so the tolerance covers only what the theorem's Õ hides: the "
              "ceil() of T_i, K_i and the phase count ⌊log2 n⌋ (≈ 0.05 over a 16× range), and "
              "the min/sum form of its bracket; 0.08")


#: ``Experiment.extra`` of a sweep whose metric the schedule fixes (a deterministic count, CI
#: width 0): it checks the schedule's arithmetic against the theorem's count, not a rate.
SCHEDULE_CHECK = {"check_type": "schedule"}
SCHEDULE_CHECK_NOTE = ("Schedule check, not a rate measurement: the gradient count is fixed by "
                       "the schedule (deterministic, CI width 0), so this checks the schedule's "
                       "arithmetic against the theorem's count.")


def _count_experiment(**kw) -> Experiment:
    """Register a gradient-count sweep of Algorithm 3's schedule (``_run_alg3_counts``: no noise,
    no halting, so it certifies no privacy and is declared non-private); the count is
    deterministic, so 2 seeds only confirm that: a schedule check (``SCHEDULE_CHECK``), not a
    rate measurement."""
    kw["description"] = SCHEDULE_CHECK_NOTE + (" " + kw["description"] if kw.get("description")
                                               else "")
    family = dict(paper=PAPER, run=_run_alg3_counts, metric="grad_evals", seeds=2,
                  bound_values=quadratic_values, private=False, extra=SCHEDULE_CHECK,
                  problem="QuadraticUsers (per-user sufficient statistics; m gradients counted "
                          "per user)",
                  algorithm="accelerated_phased_erm, rates mode c_K1 = 1, halt=False (counts only)")
    return register(Experiment(**{**family, **kw}))


ALG3_GRADS_M = _count_experiment(
    id="userlevel.alg3.grads.m",
    title="Alg. 3 gradient evaluations vs m (Theorem 3.2's count)",
    variable="m",
    quick_grid=(16, 256, 4096, 65536, 1048576),
    full_grid=(4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304),
    fixed={**_COUNT, "n": 4096, "algorithm": "alg3"},
    checks=(
        Check("userlevel:thm3.2-gradients", "two-sided", 0.08, _COUNT_TOL,
              level=(0.05, 2.0),
              level_source="theorem", level_reason="Σ T_iK_im against the theorem's expression with its O-constants 1: "
                           "T_i = ⌈1 + √(β/λ_i)⌉ and K_i = ⌈log(1/δ)/ε + n_iε/√T_i⌉ sum over "
                           "phases to between 1/20 and 2 times it (phase 1 dominates; the "
                           "geometric tail adds ≤ 1/(1 − 2^{−q})); a saturated schedule (K_i = "
                           "n_i) overshoots the upper end"),
        Check("userlevel:thm2.1-gradients", "reject", 0.05,
              "competitor: linear time (Algorithm 1), slope 1 in m"),
        Check("userlevel:alg3_saturated-gradients", "reject", 0.05,
              "competitor: the saturated schedule (K_i = n_i, literal 500·log constants), "
              "slope 5/4 in m"),
        Check("userlevel:al24-gradients", "reject", 0.05,
              "prior work [AL24]: β(nm)^{3/2}, slope 3/2 in m (as in n, userlevel.alg3.grads.n)"),
    ),
)

ALG3_GRADS_N = _count_experiment(
    id="userlevel.alg3.grads.n",
    title="Alg. 3 gradient evaluations vs n (Theorem 3.2's count)",
    variable="n",
    quick_grid=(2048, 4096, 8192, 16384, 32768),
    # the pre-asymptotic regime on both grids (UL-E12); n ≥ 32768, where the count reaches the
    # expression's slope, is userlevel.alg3.grads.n.large: one chord over 1024–262144 (local
    # slopes 0.91 → 1.09) fitted +1.028, 0.075 from the band, and read NOT REPRODUCED (UL-E23)
    full_grid=(1024, 2048, 4096, 8192, 16384, 32768),
    fixed={**_COUNT, "m": 64, "d": 2, "algorithm": "alg3"},
    checks=(
        Check("userlevel:thm3.2-gradients", "two-sided", 0.08, _COUNT_TOL, level=(0.05, 2.0),
              level_source="theorem", level_reason=ALG3_GRADS_M.checks[0].level_reason, expect="finding",
              finding_on="slope",
              note="UL-E12: for n ≤ 32768 the schedule's count grows like n^{1.01} (quick) / "
                   "n^{0.99} (full, 1024–32768) at m = 64, not like the expression's local "
                   "n^{1.10}: K_1's additive log(1/δ)/ε floor (22% of K_1 at n = 1024) and the "
                   "saturated late phases flatten it; userlevel.alg3.grads.n.large shows the "
                   "expression's slope reached above n = 32768", history='UL-E12/UL-E23: one chord over n = 1024…262144 fitted +1.028, 0.075 from the band, and read NOT REPRODUCED; split at n = 32768 into this pre-asymptotic finding and userlevel.alg3.grads.n.large'),
        Check("userlevel:alg3_saturated-gradients", "reject", 0.05,
              "competitor: the saturated schedule's slope 5/4 in n"),
        Check("userlevel:al24-gradients", "reject", 0.05,
              "prior work [AL24]: β(nm)^{3/2}, slope 3/2"),
    ),
)

ALG3_GRADS_N_LARGE = _count_experiment(
    id="userlevel.alg3.grads.n.large",
    title="Alg. 3 gradient evaluations vs n, n ≥ 32768 (Theorem 3.2's count, asymptotic side)",
    variable="n",
    quick_grid=(32768, 65536, 131072, 262144),
    full_grid=(32768, 65536, 131072, 262144, 524288, 1048576),
    fixed=ALG3_GRADS_N.fixed,
    checks=(
        Check("userlevel:thm3.2-gradients", "two-sided", 0.08,
              _COUNT_TOL + ".  Here K_1's additive log(1/δ)/ε floor is ≤ 5% of K_1 and no "
              "phase is saturated, so the count follows the expression (UL-E12's other side)",
              level=(0.05, 2.0), level_source="theorem", level_reason=ALG3_GRADS_M.checks[0].level_reason, history='UL-E12/UL-E23: the n ≥ 32768 half of userlevel.alg3.grads.n after the one-chord fit over 1024…262144 read NOT REPRODUCED'),
        Check("userlevel:thm2.1-gradients", "reject", 0.05,
              "competitor: linear time (Algorithm 1), slope 1 in n: the super-linear growth "
              "must be the schedule's (T_1 ∝ λ_1^{−1/2} grows like n^{0.23}), not a fit artefact"),
        Check("userlevel:alg3_saturated-gradients", "reject", 0.05,
              "competitor: the saturated schedule's slope 5/4 in n"),
    ),
)


_NS = {**_COUNT, "c_K1": 0.05, "nonsmooth": 1, "algorithm": "alg3"}
_NS_TOL = ("two-sided: Σ_i T_iK_im with Theorem D.3's T_i = 1 + c_T n_i^{3/4}m^{1/2}ε^{1/2} and "
           "K_i = ⌈n_iε/√T_i + c_K1 log(1/δ)/ε⌉ (c_K1 = 0.05 makes the log term < 1 user) is "
           "deterministic; 0.08 covers the ceil() and the phase tail (≈ 0.05 here)")
_NS_LEVEL = ("count/expression: deterministic (no seed dependence), the rates-mode constants "
             "(c_T = 4, the ceil() of T_i and K_i) and the geometric sum over phases; a "
             "schedule with 2× too many or too few gradients at either end of the grid leaves "
             "the band; ")

NS_GRADS_N = _count_experiment(
    id="userlevel.ns.grads.n",
    title="Smoothed Alg. 3 (Theorem D.3 schedule) gradient evaluations vs n",
    variable="n",
    quick_grid=(256, 1024, 4096, 16384),
    full_grid=(256, 512, 1024, 2048, 4096, 8192, 16384, 32768),
    fixed={**_NS, "m": 4},
    algorithm="accelerated_phased_erm with Theorem D.3's T_i, K_i (nonsmooth_T), halt=False",
    checks=(
        Check("userlevel:thm4.1-gradients", "two-sided", 0.08, _NS_TOL,
              level=(0.35, 1.4), level_source="instance", level_reason=_NS_LEVEL + "measured 0.61–0.76"),
        Check("userlevel:thm4.1-gradients_derived", "two-sided", 0.08, _NS_TOL,
              level=(0.35, 1.4), level_source="instance", level_reason=_NS_LEVEL + "measured 0.61–0.73"),
        Check("userlevel:thm3.2-gradients", "reject", 0.05,
              "competitor: the smooth count (slope ≈ 9/8 in n), not the non-smooth 11/8"),
    ),
)

NS_GRADS_EPS = _count_experiment(
    id="userlevel.ns.grads.eps",
    title="Smoothed Alg. 3 gradient evaluations vs ε: Theorem 4.1's printed ε^{1/4} vs D.3's ε^{5/4}",
    variable="epsilon",
    # ε = 4 only on the full grid (40% of this sweep's cost): the count is deterministic (CI
    # width 0) and over 0.5–2 the slope is +1.142 (4 included: +1.171), 0.05 from the derived
    # band (tolerance 0.08) and 0.9 from the printed ε^{1/4}: UL-E3 is decided either way
    quick_grid=(0.5, 1.0, 2.0),
    full_grid=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    fixed={**{k: v for k, v in _NS.items() if k != "epsilon"}, "n": 4096, "m": 4},
    algorithm=NS_GRADS_N.algorithm,
    description="Decides UL-E3: the printed count mn(1 + n^{3/8}m^{1/4}ε^{1/4}) against the "
                "Σ T_iK_im that D.3's own T_i ∝ ε^{1/2}, K_i ∝ nε/√T_i give (ε^{5/4}).",
    checks=(
        Check("userlevel:thm4.1-gradients_derived", "two-sided", 0.08, _NS_TOL,
              level=(0.35, 1.25), level_source="instance", level_reason=_NS_LEVEL + "measured 0.61–0.66 (0.5–4)"),
        Check("userlevel:thm4.1-gradients", "reject", 0.1,
              "the printed ε^{1/4} (local slope ≈ 0.2 here, the mn term included) must be "
              "ruled out if D.3's schedule is what Theorem 4.1 counts"),
    ),
)


# --- m-overlay figure: user-level vs item-level on one problem and schedule --------------------
def _plot_m_overlay(analyses: list, root):
    from pathlib import Path

    from empirical.store.figures import save_figure      # imported first: it selects the Agg backend

    import matplotlib.pyplot as plt  # noqa: E402

    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=110)
    styles = {"userlevel.alg3.m": ("tab:blue", "Algorithm 3 (user-level, outlier removal)"),
              "userlevel.baseline.m": ("tab:red", "item-level baseline (a user = one item)")}
    for a in analyses:
        if a.fit is None:
            continue
        col, lab = styles[a.experiment.id]
        for v, metric in a.per_point.items():
            ax.scatter(np.full(metric.size, v), metric, s=8, alpha=0.3, color=col, linewidths=0)
        f = a.fit
        ax.plot(f.x, f.y, "o-", color=col,
                label=f"{lab}: slope {f.slope:+.2f} [{f.ci_low:+.2f}, {f.ci_high:+.2f}]")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items per user m")
    ax.set_ylabel("excess risk F(x) − F*")
    ax.set_title("Same users, same ε = 1, same accountant: only the user-level algorithm\n"
                 "turns more items per user into less error (UL-E11)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.25)
    fig.tight_layout()
    return save_figure(fig, Path(root) / "userlevel" / "userlevel.summary.m.png")


from empirical.core.experiment import Summary, register_summary  # noqa: E402

M_OVERLAY = register_summary(Summary(
    id="userlevel.summary.m", paper=PAPER,
    experiments=("userlevel.alg3.m", "userlevel.baseline.m"), plot=_plot_m_overlay))
