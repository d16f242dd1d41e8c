"""Experiments for the KL paper (Menart et al.): sweeps checked
against ``bounds.rates.kl`` on the problems of :mod:`empirical.papers.kl.problems`.

This is the paper's registering module (its ``dprates.papers`` entry point): importing it registers the
experiments, the κ-overlay summary and the KL privacy audits (:mod:`empirical.papers.kl.audit`).  The
problems and run functions live in :mod:`empirical.papers.kl.problems` (re-exported here), so editing a
check declaration here does not make stored rows stale.

Theorem 9 (Algorithm 4) is checked on the regularised linear loss (see
:class:`empirical.papers.kl.problems.LinearLoss`); the other theorems on problems with a known, tunable
KL exponent.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

import bounds
from algorithms.accounting import zcdp_to_epsilon_closed_form
from empirical.core.experiment import Check, Experiment, Summary, register_summary
from empirical.core.experiment import register as _register
from empirical.papers.kl.problems import *  # noqa: F401,F403  (re-exported: tests and users import them here)
from empirical.papers.kl.problems import (LinearLoss, SpreadQuarticLoss, _privacy_columns,  # noqa: F401
                                   _run_adaptive, _run_ppm, _run_spider, _run_thm9, _w0_F0,
                                   kl_values, make_problem)
from empirical.papers.kl import problems as _problems
from empirical.store.calibration import calibrations

__all__ = list(_problems.__all__) + ["THM9_N", "THM9_D", "THM9_RHO", "KAPPA_OVERLAY"]

# =============================================================================================
# Level bands (levels, not only slopes)
# =============================================================================================
# Every KL rate check expected to hold also checks the *level*: observed/bound at every kept
# grid point must lie in the band below.  The theorems' O(·) constants are not stated, so the
# bands are calibrations: the honest runs of this code base (seeded, so reproducible) on the
# quick grid gave observed/bound in [q_lo, q_hi]; the band is that range, extended to where the
# honest ratio's log-log trend reaches on the full grid, widened by e^m each way with
# m = max(log 1.5, 4·s) (s the largest standard error of a point's mean log metric over seeds).
# So seed noise and the full grid stay inside, while a constant off by more than ≈ 1.5× (a
# noise scale, a sensitivity, an accountant factor) or an exponent error larger than the one
# reported by `dprates audit --mutants` beside each check fails.  On one-sided checks the lower
# edge is a regression guard (the code got better than it was), not a claim of the theorem.
#   (experiment, bound, kind): (lo, hi, q_lo, q_hi, m)
_LEVELS: dict[tuple[str, str, str], tuple[float, float, float, float, float]] = {
    ("kl.thm9.n.kink", "kl:thm9", "two-sided"): (0.0224, 0.0743, 0.0382, 0.0494, 0.41),
    ("kl.adaptive.d.k3_2", "kl:thm4_main", "two-sided"): (0.0525, 0.165, 0.0854, 0.11, 0.41),
    ("kl.adaptive.d.k3_2", "kl:thm4", "one-sided"): (0.0329, 0.139, 0.0537, 0.0801, 0.41),
    ("kl.adaptive.d.k4_3", "kl:thm4_main", "two-sided"): (0.083, 0.275, 0.138, 0.183, 0.41),
    ("kl.adaptive.d.k4_3", "kl:thm4", "one-sided"): (0.0338, 0.209, 0.0591, 0.114, 0.41),
    ("kl.adaptive.d.k4_3_small", "kl:thm4", "one-sided"): (0.0355, 0.103, 0.0548, 0.0664, 0.43),
    ("kl.adaptive.n.k2", "kl:thm4_main", "two-sided"): (0.0109, 0.0376, 0.0179, 0.0214, 0.41),
    ("kl.adaptive.n.k2", "kl:thm4", "one-sided"): (0.0103, 0.0388, 0.0171, 0.0213, 0.41),
    ("kl.adaptive.n.k2_d1", "kl:thm4_floor", "two-sided"): (0.00523, 0.0507, 0.0131, 0.0203, 0.91),
    ("kl.adaptive.n.k2_d1", "kl:thm4", "one-sided"): (0.00523, 0.0507, 0.0131, 0.0203, 0.91),
    ("kl.adaptive.n.k3_2", "kl:thm4_main", "two-sided"): (0.0591, 0.144, 0.0893, 0.0959, 0.41),
    ("kl.adaptive.n.k3_2", "kl:thm4", "one-sided"): (0.033, 0.15, 0.0547, 0.0869, 0.41),
    ("kl.adaptive.n.k3_2_d1", "kl:thm4_floor", "two-sided"): (0.0223, 0.139, 0.0428, 0.072, 0.65),
    ("kl.adaptive.n.k3_2_d1", "kl:thm4", "one-sided"): (0.0222, 0.139, 0.0428, 0.0719, 0.65),
    ("kl.adaptive.n.k4_3", "kl:thm4_main", "two-sided"): (0.0847, 0.235, 0.132, 0.146, 0.41),
    ("kl.adaptive.n.k4_3", "kl:thm4", "one-sided"): (0.0447, 0.234, 0.0765, 0.116, 0.41),
    ("kl.adaptive.n.k4_3_d1", "kl:thm4_floor", "two-sided"): (0.0332, 0.114, 0.0547, 0.0681, 0.50),
    ("kl.adaptive.n.k4_3_d1", "kl:thm4", "one-sided"): (0.0329, 0.114, 0.0542, 0.0678, 0.50),
    ("kl.adaptive.n.k6_5", "kl:thm4_main", "two-sided"): (0.12, 0.317, 0.188, 0.199, 0.41),
    ("kl.adaptive.n.k6_5", "kl:thm4", "one-sided"): (0.0529, 0.225, 0.0935, 0.116, 0.41),
    ("kl.adaptive.rho.k3_2", "kl:thm4_main", "two-sided"): (0.0587, 0.144, 0.0899, 0.0948, 0.41),
    ("kl.adaptive.rho.k3_2", "kl:thm4", "one-sided"): (0.0431, 0.138, 0.0682, 0.0848, 0.41),
    ("kl.adaptive.rho.k4_3", "kl:thm4_main", "two-sided"): (0.0885, 0.24, 0.137, 0.15, 0.41),
    ("kl.adaptive.rho.k4_3", "kl:thm4", "one-sided"): (0.0597, 0.216, 0.0969, 0.123, 0.41),
    ("kl.adaptive.rho.k4_3_d1", "kl:thm4_floor", "two-sided"): (0.0315, 0.115, 0.0541, 0.0664, 0.54),
    ("kl.adaptive.rho.k4_3_d1", "kl:thm4", "one-sided"): (0.0313, 0.114, 0.0539, 0.0661, 0.54),
    # KL-E32: on the whole of Theorem 4 (quick grid 0.0204-0.0213, trend +0.006 per e-fold of n,
    # flat to the full grid's 8e7; the full grid then gave 0.0189-0.0239)
    ("kl.negctl.n.spread", "kl:thm4", "two-sided"): (0.0136, 0.032, 0.0204, 0.0213, 0.41),
    ("kl.ppm.n.k3", "kl:lem3", "one-sided"): (0.000124, 0.00727, 0.000439, 0.00195, 1.19),
    ("kl.ppm.n.k4", "kl:lem3", "one-sided"): (0.000214, 0.0108, 0.000579, 0.00456, 0.86),
    ("kl.regr.n.k2", "kl:thm4_floor", "two-sided"): (0.0267, 0.219, 0.0605, 0.0967, 0.82),
    ("kl.regr.n.k2", "kl:thm4", "one-sided"): (0.0267, 0.219, 0.0605, 0.0965, 0.82),
    ("kl.regr.n.k4_3", "kl:thm4_floor", "two-sided"): (0.11, 0.303, 0.174, 0.202, 0.41),
    ("kl.regr.n.k4_3", "kl:thm4", "one-sided"): (0.11, 0.286, 0.169, 0.191, 0.41),
    ("kl.spider.d.k2", "kl:thm1", "two-sided"): (450, 1.15e+03, 676, 757, 0.41),
    ("kl.spider.d.k3_2", "kl:thm1", "two-sided"): (92.1, 221, 138, 145, 0.41),
    ("kl.spider.d.k4_3", "kl:thm1", "two-sided"): (53.3, 129, 80, 83.8, 0.41),
    ("kl.spider.d.k6_5", "kl:thm1", "two-sided"): (34.3, 83.1, 51.5, 54.2, 0.41),
    ("kl.spider.n.k2", "kl:thm1", "two-sided"): (5.18, 14.6, 8.07, 9.53, 0.41),
    ("kl.spider.n.k3_2", "kl:thm1", "two-sided"): (90.5, 211, 136, 140, 0.41),
    ("kl.spider.n.k4_3", "kl:thm1", "two-sided"): (52.9, 121, 79.6, 80.6, 0.41),
    ("kl.spider.n.k6_5", "kl:thm1", "two-sided"): (33.9, 78, 51, 51.8, 0.41),
    ("kl.spider.n.nc_k4_3", "kl:thm1", "two-sided"): (4.16, 9.43, 6.24, 6.28, 0.41),
    ("kl.spider.rho.k2", "kl:thm1", "two-sided"): (440, 1.04e+03, 660, 692, 0.41),
    ("kl.spider.rho.k3_2", "kl:thm1", "two-sided"): (91, 209, 137, 139, 0.41),
    ("kl.spider.rho.k4_3", "kl:thm1", "two-sided"): (52.9, 121, 79.4, 80.3, 0.41),
    ("kl.spider.rho.k6_5", "kl:thm1", "two-sided"): (34.3, 77.6, 51.5, 51.7, 0.41),
    ("kl.thm5.n.k2", "kl:thm5_worst", "one-sided"): (0.266, 7.75, 0.66, 3.07, 0.41),
    ("kl.thm5.n.k4_3", "kl:thm5_worst", "one-sided"): (0.794, 6, 1.5, 3.11, 0.41),
    ("kl.thm5.n.k4_3_d1", "kl:thm5_best", "two-sided"): (3.65, 14.2, 6.24, 9.02, 0.41),
    ("kl.thm9.d", "kl:thm9", "two-sided"): (0.0176, 0.0789, 0.032, 0.0435, 0.42),
    ("kl.thm9.n", "kl:thm9", "two-sided"): (0.0191, 0.065, 0.0332, 0.0432, 0.41),
    ("kl.thm9.rho", "kl:thm9", "two-sided"): (0.0244, 0.0617, 0.037, 0.0408, 0.41),
}


def _level_reason(q_lo: float, q_hi: float, m: float) -> str:
    return (f"calibration: honest quick-grid runs gave observed/bound in [{q_lo:.3g}, {q_hi:.3g}]; "
            f"band = that range extended to the full grid's trend and widened by e^{m:.2f} each way "
            "(max of 1.5× and 4 standard errors of the seed mean), see _LEVELS")


#: Checks of the shared adaptive declarations whose band reached an asymptotic exponent far
#: from the grid's local slope (an acceptance interval no plausible bug could leave): judged on
#: the local slope alone, a narrower interval.
_LOCAL_BAND = {
    ("kl.adaptive.d.k4_3_small", "kl:thm4", "one-sided"):
        "the band reached the d → ∞ exponent +0.5 (A up to +0.6 around a local slope +0.01): "
        "narrowed to the local slope alone",
    ("kl.adaptive.n.k2", "kl:thm4", "one-sided"):
        "the band reached the n → ∞ exponent −1 (A up to −0.9 around a local slope −1.83): "
        "narrowed to the local slope alone",
}


#: The bands recomputed on held-out seeds (calibration.json; python -m empirical.run.calibration):
#: they replace the judged-run calibrations of ``_LEVELS``.
_HELD_OUT = calibrations(__file__)


def register(exp: Experiment) -> Experiment:
    """Register ``exp`` with the level band of each of its checks: held out (``_HELD_OUT``),
    else listed in ``_LEVELS`` (and the local-slope band of those in ``_LOCAL_BAND``)."""
    checks = []
    for c in exp.checks:
        rec = _HELD_OUT.get((exp.id, c.bound, c.kind))
        if rec is not None and c.level is None and c.expect == "hold":
            c = dataclasses.replace(c, level=rec.band, level_source="calibration",
                                    level_reason=rec.describe(), calibration=rec)
        band = _LEVELS.get((exp.id, c.bound, c.kind))
        if band is not None and c.level is None and c.expect == "hold":
            lo, hi, q_lo, q_hi, m = band
            c = dataclasses.replace(c, level=(lo, hi), level_source="calibration",
                                    level_reason=_level_reason(q_lo, q_hi, m))
        why = _LOCAL_BAND.get((exp.id, c.bound, c.kind))
        if why is not None:
            c = dataclasses.replace(c, use_asymptotic=False, history=why)
        checks.append(c)
    return _register(dataclasses.replace(exp, checks=tuple(checks)))


def _thm9_values(point: dict) -> dict:
    return {k: point[k] for k in ("n", "d", "rho", "beta", "L0", "L1t")}


def _thm9_vacuous(point: dict, bound_value: float) -> str | None:
    # The excess of the start point w0 is ‖x̄‖²/(4L̃1) ≤ L0²/(4L̃1); a bound above it says nothing.
    trivial = point["L0"] ** 2 / (4.0 * point["L1t"])
    if bound_value >= trivial:
        return f"bound {bound_value:.3g} ≥ L0²/(4L̃1) = {trivial:.3g}, the excess of w0 (vacuous)"
    return None


# Competitor: Theorem 7's convex (not strongly convex) rate L0·D·√d/(nε), with D = L0/(2L̃1)
# the distance bound of Algorithm 4's ball and ε the (ε, δ = 1e-5) image of ρ.
_DELTA_FOR_EPS = 1e-5


def _thm7_values(point: dict) -> dict:
    return {"n": point["n"], "d": point["d"], "L0": point["L0"], "D": point["L0"] / (2 * point["L1t"]),
            "epsilon": zcdp_to_epsilon_closed_form(point["rho"], _DELTA_FOR_EPS)}


_TOL_REASON = ("band [local, asymptotic] already spans Theorem 9's log factor; 0.1 allows the "
               "finite-T transient (projection active in the first steps) and 16-seed noise "
               "(the excess is ≈ χ²_d-distributed; at d ≈ 100 the bootstrap CI half-width is ≈ 0.05)")
_BASE = {"beta": 0.1, "L0": 1.0, "L1t": 1.0, "data_seed": 0}

THM9_N = register(Experiment(
    id="kl.thm9.n",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs n (Theorem 9)",
    variable="n",
    quick_grid=(1000, 1778, 3162, 5623, 10000),
    full_grid=tuple(int(round(v)) for v in np.geomspace(1000, 31623, 11)),
    fixed={**_BASE, "d": 100, "rho": 0.01},
    seeds=16,
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl.condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1,
              "negative control: the convex (non-strongly-convex) rate of Theorem 7 has slope −1 "
              "in n; 0.1 is the same tolerance as the main check", values=_thm7_values, reference='Theorem 7 is a worst case over convex Lipschitz losses; this instance is strongly convex, outside that class, so its rate is not a claim about these data'),
    ),
))

THM9_D = register(Experiment(
    id="kl.thm9.d",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs d (Theorem 9)",
    variable="d",
    quick_grid=(16, 32, 64, 128, 256),
    full_grid=(4, 8, 16, 32, 64, 128, 256, 512, 1024),
    fixed={**_BASE, "n": 2000, "rho": 0.01},
    seeds=40,   # at 16 the CI (±0.071) straddled the edge of A (INCONCLUSIVE)
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl.condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1, "competing convex rate √d: slope 1/2 in d",
              values=_thm7_values, reference='Theorem 7 is a worst case over convex Lipschitz losses; this instance is strongly convex, outside that class, so its rate is not a claim about these data'),
    ),
))

THM9_RHO = register(Experiment(
    id="kl.thm9.rho",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs ρ (Theorem 9)",
    variable="rho",
    quick_grid=(0.005, 0.01, 0.02, 0.04, 0.08),
    full_grid=tuple(float(v) for v in np.geomspace(0.0025, 0.64, 9)),
    fixed={**_BASE, "n": 2000, "d": 100},
    seeds=16,
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl.condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1,
              "competing convex rate 1/ε ≈ ρ^(-1/2) (ε = image of ρ at δ = 1e-5)",
              values=_thm7_values, reference='Theorem 7 is a worst case over convex Lipschitz losses; this instance is strongly convex, outside that class, so its rate is not a claim about these data'),
    ),
))


# Theorem 9 where T matters: the kinked instance of empirical.papers.kl.problems_kink (on LinearLoss
# the run converges in two steps, so a wrong T passes every rate check).
from empirical.papers.kl.problems_kink import run_thm9_kink  # noqa: E402

THM9_KINK = register(Experiment(
    id="kl.thm9.n.kink",
    paper="kl",
    title="Alg. 4 noisy GD, kinked strongly convex loss (T matters): excess vs n (Theorem 9)",
    variable="n",
    quick_grid=(1000, 1778, 3162, 5623, 10000),
    full_grid=tuple(int(round(v)) for v in np.geomspace(1000, 31623, 11)),
    fixed={**_BASE, "d": 100, "rho": 0.01, "x_dist": 0.25},
    seeds=16,
    run=run_thm9_kink,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="KinkLoss: L0‖w − x*‖ (Huber δ = 1e-9) + L̃1‖w − w0‖², ‖x* − w0‖ = 1/4",
    algorithm="algorithms.kl.condition.noisy_gd (Algorithm 4)",
    description="The optimisation error ∝ L0²/(L̃1T) is ≈ 1/log²(2/β) of the noise term at "
                "Theorem 9's T, so a smaller T shows in the level and, for T fixed, in the slope.",
    checks=(
        Check("kl:thm9", "two-sided", 0.1,
              "the noise term dσ²/(L̃1T) ∝ d/(n²ρ) dominates at Theorem 9's T (the optimisation "
              "term is ≈ 11% of it at every n, so it moves the level, not the slope); the band "
              "[local, asymptotic] spans the log factor; 0.1 as for kl.thm9.n"),
        Check("kl:thm7", "reject", 0.1,
              "negative control: the convex rate of Theorem 7 (slope −1 in n)",
              values=_thm7_values, reference='Theorem 7 is a worst case over convex Lipschitz losses; this instance is strongly convex, outside that class, so its rate is not a claim about these data'),
    ),
))


_INTRO_DELTA = 1e-5


def _intro_values(point: dict) -> dict:
    """Values for ``kl:thm4_intro``, stated in (ε, δ): ε from ρ by [BS16, Prop. 1.3] at δ = 1e-5."""
    vals = kl_values(point)
    vals["epsilon"] = bounds.get("kl:zcdp_to_dp")(rho=vals["rho"], delta=_INTRO_DELTA)
    return vals


def _with(**override):
    """A ``Check.values`` map: the instance's values with some symbols replaced (a competitor)."""
    return lambda point: kl_values(point, **override)


# --- vacuous-point rules -------------------------------------------------------------------------
def _spider_vacuous(point: dict, bound_value: float) -> str | None:
    # kl:thm1 is (γL0√(dK log(1/β'))/(n√ρ))^κ with constant 1; Algorithm 1's Φ̂ floor is 32^κ
    # times it.  When the floor reaches F0 every round targets F0: the algorithm is trivial.
    vals = kl_values(point)
    floor = 32.0 ** vals["kappa"] * bound_value
    if floor >= vals["F0"]:
        return f"Φ̂ floor 32^κ·bound = {floor:.3g} ≥ F0 = {vals['F0']:.3g} (Spider trivial)"
    return None


def _excess_vacuous(point: dict, bound_value: float) -> str | None:
    F0 = kl_values(point)["F0"]
    if bound_value >= F0:
        return f"bound {bound_value:.3g} ≥ F0 = {F0:.3g}, the start point's excess (vacuous)"
    return None


def _grad_vacuous(point: dict, bound_value: float) -> str | None:
    L0 = make_problem(point).L0
    if bound_value >= L0:
        return f"bound {bound_value:.3g} ≥ L0 = {L0:.3g}, which any point satisfies (vacuous)"
    return None


def _geom(lo: float, hi: float, k: int, integer: bool = True) -> tuple:
    v = np.geomspace(lo, hi, k)
    return tuple(int(round(x)) for x in v) if integer else tuple(float(x) for x in v)


_RAD = {"problem": "radial", "c": 1.0, "B": 1.0, "beta": 0.1}
_KAPPA_TAG = {4.0: "k4_3", 3.0: "k3_2", 6.0: "k6_5", 2.0: "k2", 1.5: "k3", 4.0 / 3.0: "k4"}
_KAPPA_TEX = {4.0: "4/3", 3.0: "3/2", 6.0: "6/5", 2.0: "2", 1.5: "3", 4.0 / 3.0: "4"}


# --- KL Spider (Algorithm 1, Theorem 1) --------------------------------------------------------------
_SPIDER_TOL = ("two-sided: on the radial/nonconvex instances Spider's output tracks the Φ̂ floor "
               "(its stopping rule fires at ‖∇‖ ∝ Φ̂^{1/κ} and KL is tight), so Theorem 1 is tight "
               "here; the band [local, asymptotic] spans the log factors of K and log(1/β'); "
               "0.1 covers the per-round rounding of T_k; 3 seeds suffice because the stopping rule makes runs nearly deterministic (CI half-width ≤ 0.02)")
_SPIDER_REJECT = ("competing rate: Theorem 4's first term (what Algorithm 3 gets without knowing κ), "
                  "exponent 2κ/(4−κ) < κ; tolerance 0.1 as for the main check")


def _spider_exp(var: str, tag: str, fixed: dict, quick: tuple, full: tuple, *, seeds: int = 3,
                title: str, problem: str, reject_bound: str = "kl:thm4_main",
                reject_reason: str = _SPIDER_REJECT) -> Experiment:
    return register(Experiment(
        id=f"kl.spider.{var}.{tag}", paper="kl", title=title, variable=var,
        quick_grid=quick, full_grid=full, fixed=fixed, seeds=seeds, run=_run_spider,
        metric="excess", bound_values=kl_values, vacuous=_spider_vacuous, problem=problem,
        algorithm="algorithms.kl.condition.kl_spider (Algorithm 1)",
        checks=(Check("kl:thm1", "two-sided", 0.1, _SPIDER_TOL),
                Check(reject_bound, "reject", 0.1, reject_reason))))


SPIDER = {}
for _p, _lo, _hi, _k in ((4.0, 10**5.5, 10**8.5, 5), (3.0, 10**5.5, 10**8.5, 5), (6.0, 10**6, 10**8, 3)):
    _t = _KAPPA_TAG[_p]
    SPIDER[("n", _t)] = _spider_exp(
        "n", _t, {**_RAD, "p": _p, "d": 1, "rho": 1.0}, _geom(_lo, _hi, _k),
        _geom(_lo / 10**0.5, _hi * 10**0.5, 9),
        title=f"KL Spider, radial loss p={_p:g} (κ={_KAPPA_TEX[_p]}): excess vs n (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), d=1")
# κ = 2 on the nonconvex PL function (the radial p = 2 loss is a staircase under GD).
SPIDER[("n", "k2")] = _spider_exp(
    "n", "k2", {"problem": "ncvx", "p": 2.0, "b": 2.5, "c": 1.0, "beta": 0.1, "d": 1, "rho": 1.0},
    _geom(10**5.5, 10**8.5, 3), _geom(10**5, 10**9, 9), seeds=2,
    title="KL Spider, nonconvex PL Σ(w²+3sin²w) (κ=2): excess vs n (Theorem 1)",
    problem="NonconvexKL(p=2), d=1",
    reject_bound="kl:thm4_floor",
    reject_reason=("competing rate: Theorem 4's d-free term (1/(n√ρ))^{κ/2}, the floor of "
                   "Algorithm 3, slope −1 at κ = 2 (the first term coincides with −κ here)"))
SPIDER[("n", "nc_k4_3")] = _spider_exp(
    "n", "nc_k4_3", {"problem": "ncvx", "p": 4.0, "b": 2.5, "c": 1.0, "beta": 0.1, "d": 1, "rho": 1.0},
    _geom(10**6, 10**8.5, 3), _geom(10**6, 10**10, 9),
    title="KL Spider, nonconvex KL (Σ(w²+3sin²w))² (κ=4/3): excess vs n (Theorem 1)",
    problem="NonconvexKL(p=4), d=1")
# d and ρ sweeps on the radial loss, whose L0 does not grow with d (the nonconvex function's
# does, ∝ √d, which would mix the two).  κ = 6/5 needs n = 1e8 for Spider to leave its
# trivial regime (Φ̂ floor ≥ F0) over the whole ρ grid.  κ = 2 uses p = 2 with a declared
# L1 eight times the true one: with η = 1/(2L1) GD on c r² halves r exactly each step, which
# quantises the excess in powers of 4; at 8L1 the quanta are (7/8)².
# Theorem 1 holds for any upper bound on L1 and is evaluated at the declared value.
_SPIDER_DR = {4.0: (10**7, {}), 3.0: (10**7, {}), 6.0: (10**8, {}), 2.0: (10**7, {"L1_factor": 8.0})}
for _p, (_n, _extra) in _SPIDER_DR.items():
    _t = _KAPPA_TAG[_p]
    # at κ = 2 Theorem 4's first term has Theorem 1's d- and ρ-exponents (κ/(4−κ) = κ/2 = 1),
    # so the competitor the data must rule out is its d-free term (exponents 0 and −κ/4).
    _rej = ({"reject_bound": "kl:thm4_floor",
             "reject_reason": "competing rate: Theorem 4's d-free term (1/(n√ρ))^{κ/2}, the floor "
                              "of Algorithm 3 (d-exponent 0, ρ-exponent −1/2 at κ = 2; its first "
                              "term has Theorem 1's exponents here); 0.1 as for the main check, "
                              "well above the CI half-width (≤ 0.02) of these near-deterministic "
                              "runs"}
            if _p == 2.0 else {})
    _lbl = f"radial loss p={_p:g}" + (", L1 declared ×8" if _extra else "")
    SPIDER[("d", _t)] = _spider_exp(
        "d", _t, {**_RAD, "p": _p, "n": _n, "rho": 1.0, **_extra}, (1, 4, 16, 64, 256),
        (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
        title=f"KL Spider, {_lbl} (κ={_KAPPA_TEX[_p]}): excess vs d (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), n={_n:.0e}", **_rej)
    SPIDER[("rho", _t)] = _spider_exp(
        "rho", _t, {**_RAD, "p": _p, "n": _n, "d": 1, **_extra}, (0.01, 0.04, 0.16, 0.64, 2.56),
        _geom(0.0025, 10.24, 13, integer=False),
        title=f"KL Spider, {_lbl} (κ={_KAPPA_TEX[_p]}): excess vs ρ (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), n={_n:.0e}, d=1", **_rej)


# --- Adaptive noisy GD (Algorithm 3, Theorem 4) ------------------------------------------------------
def _adaptive_vacuous(point: dict, bound_value: float) -> str | None:
    vals = kl_values(point)
    thm4 = bounds.get("kl:thm4")
    if thm4.conditions and not thm4.applies(**vals):
        return "Theorem 4's condition L0²log(n√ρ/β)/(L1 n) ≤ √ρ fails"
    return _excess_vacuous(point, bound_value)


_MAIN_TOL = ("two-sided: Algorithm 3's noise is a fixed fraction (1/√A) of the gradient norm, so "
             "its privacy cost per step ∝ 1/‖∇F‖² is exactly what Theorem 4's first term balances; "
             "on the radial loss (KL with equality) that balance is attained, so the term is tight; "
             "the band spans its log factors (A, p_max); 0.1 covers seed noise of the last iterate "
             "(4-6 seeds, CI half-width ≤ 0.06)")
_FLOOR_TOL = ("two-sided: at small d the run stops when ‖∇F‖ reaches the noise σ̂ = L0/(√n ρ^{1/4}) of "
              "the norm estimate N_t, and KL (tight here) turns that into excess ∝ (1/(n√ρ))^{κ/2}: "
              "Theorem 4's second term is attained; the band spans log A; 0.1 covers seed noise "
              "(the stopping time is random: CI half-width ≈ 0.05)")
_FULL_TOL = ("one-sided: the full three-term bound is only claimed as an upper bound; 0.1 as for "
             "the per-term checks")


def _adaptive_checks(regime: str) -> tuple:
    if regime == "main":
        return (Check("kl:thm4_main", "two-sided", 0.1, _MAIN_TOL),
                Check("kl:thm4_floor", "reject", 0.1,
                      "the other term of Theorem 4 (d-free, exponent κ/2): the large-d data must "
                      "rule it out; 0.1 as for the main check"),
                Check("kl:thm4", "one-sided", 0.1, _FULL_TOL))
    return (Check("kl:thm4_floor", "two-sided", 0.1, _FLOOR_TOL),
            Check("kl:thm4_main", "reject", 0.1,
                  "the other term of Theorem 4 (exponent 2κ/(4−κ)): at d = 1 the data must rule it "
                  "out; 0.1 as for the main check"),
            Check("kl:thm4", "one-sided", 0.1, _FULL_TOL))


def _adaptive_exp(var: str, tag: str, fixed: dict, quick: tuple, full: tuple, *, regime: str,
                  title: str, problem: str, seeds: int = 6, checks: tuple | None = None,
                  run=_run_adaptive, metric: str = "excess", vacuous=_adaptive_vacuous,
                  exp_id: str | None = None, description: str = "") -> Experiment:
    return register(Experiment(
        id=exp_id or f"kl.adaptive.{var}.{tag}", paper="kl", title=title, variable=var,
        quick_grid=quick, full_grid=full, fixed=fixed, seeds=seeds, run=run, metric=metric,
        bound_values=kl_values, vacuous=vacuous, problem=problem,
        algorithm="algorithms.kl.condition.adaptive_noisy_gd (Algorithm 3)",
        checks=checks or _adaptive_checks(regime), description=description))


ADAPTIVE = {}
_D_LARGE = 10**5
# κ = 2 uses the radial p = 2 loss with a declared L1 eight times the true one: with η = 1/(2L1)
# GD on c r² halves r exactly at every step, a staircase in n; Theorem 4 holds
# for any upper bound on L1 and the bound is evaluated at the declared value.
_ADAPT_N = {4.0: (10**5, 10**7), 3.0: (10**5, 10**7), 6.0: (10**6, 10**7), 2.0: (10**4.5, 10**6)}
for _p, (_lo, _hi) in _ADAPT_N.items():
    _t = _KAPPA_TAG[_p]
    _fx = {**_RAD, "p": _p, "d": _D_LARGE, "rho": 1.0}
    if _p == 2.0:
        _fx["L1_factor"] = 8.0
    ADAPTIVE[("n", _t)] = _adaptive_exp(
        "n", _t, _fx, _geom(_lo, _hi, 4 if _p == 6.0 else 5), _geom(_lo / 10**0.5, _hi * 10**0.5, 9),
        regime="main", seeds=6 if _p in (3.0, 2.0) else 4,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d={_D_LARGE:g}: excess vs n "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), d={_D_LARGE}")
for _p in (4.0, 3.0, 2.0):
    _t = _KAPPA_TAG[_p]
    _fx = {**_RAD, "p": _p, "d": 1, "rho": 1.0}
    if _p == 2.0:
        _fx["L1_factor"] = 8.0
    ADAPTIVE[("n", _t + "_d1")] = _adaptive_exp(
        "n", _t + "_d1", _fx, _geom(10**6, 10**8, 5) if _p == 4.0 else _geom(10**5.5, 10**8.5, 5),
        _geom(10**5, 10**9, 9), regime="floor", seeds=16 if _p == 2.0 else 6,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d=1: excess vs n "
              "(Theorem 4, d-free term)",
        problem=f"RadialPowerLoss(p={_p:g}), d=1")
# The first term rules for d ≳ (n√ρ)^{κ/2}: 1e4 at κ = 4/3, 3e4 at κ = 3/2 (n = 1e6), so the
# κ = 3/2 grid starts higher (at d = 3e3 the d-free term still bends the curve: slope 0.41).
for _p, _dlo, _dhi, _k in ((4.0, 3 * 10**3, 3 * 10**5, 5), (3.0, 10**4, 10**6, 4)):
    _t = _KAPPA_TAG[_p]
    ADAPTIVE[("d", _t)] = _adaptive_exp(
        "d", _t, {**_RAD, "p": _p, "n": 10**6, "rho": 1.0}, _geom(_dlo, _dhi, _k),
        _geom(_dlo / 3, _dhi * 3, 7), regime="main", seeds=6 if _p == 4.0 else 4,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), n=1e6: excess vs d "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), n=1e6")
    ADAPTIVE[("rho", _t)] = _adaptive_exp(
        "rho", _t, {**_RAD, "p": _p, "n": 10**6, "d": _D_LARGE}, (0.01, 0.04, 0.16, 0.64, 2.56),
        _geom(0.0025, 10.24, 9, integer=False), regime="main",
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d={_D_LARGE:g}: excess vs ρ "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), n=1e6, d={_D_LARGE}")
ADAPTIVE[("d", "k4_3_small")] = _adaptive_exp(
    "d", "k4_3_small", {**_RAD, "p": 4.0, "n": 10**7, "rho": 1.0}, (1, 3, 10, 30, 100),
    (1, 2, 4, 8, 16, 32, 64, 128, 256), regime="floor",
    # the d-free term has no d, so the claim is one-sided on the full bound, and the first
    # term's d-dependence must be absent
    checks=(Check("kl:thm4", "one-sided", 0.1, _FULL_TOL),
            Check("kl:thm4_main", "reject", 0.1,
                  "Theorem 4's first term (d-slope κ/(4−κ)): at small d the d-free term rules and "
                  "the excess must not grow with d; 0.1 as for the other checks")),
    title="Adaptive noisy GD, radial p=4 (κ=4/3), n=1e7, small d: excess vs d (Theorem 4, d-free term)",
    problem="RadialPowerLoss(p=4), n=1e7")
ADAPTIVE[("rho", "k4_3_d1")] = _adaptive_exp(
    "rho", "k4_3_d1", {**_RAD, "p": 4.0, "n": 10**7, "d": 1}, (0.01, 0.04, 0.16, 0.64, 2.56),
    _geom(0.0025, 10.24, 9, integer=False), regime="floor",
    seeds=10,   # at 6 the CI straddled the kl:thm4_main competitor's interval (INCONCLUSIVE)
    checks=_adaptive_checks("floor") + (
        Check("kl:thm4_intro", "reject", 0.1,
              "the introduction's reading of Theorem 4 (errata KL-E10): d-free term (1/n)^{κ/2} "
              "with no privacy parameter, ρ mapped to ε by the zCDP→DP conversion at δ = 1e-5; "
              "its ρ-slope (≈ 0 at d = 1) must be ruled out; 0.1 as for the other checks of this "
              "sweep: it exceeds the seed noise (CI half-width ≈ 0.06) and the local-vs-asymptotic "
              "gap of the log factors (≈ 0.02), so a rejection is not a noise artifact",
              values=_intro_values),),
    title="Adaptive noisy GD, radial p=4 (κ=4/3), d=1: excess vs ρ (Theorem 4, d-free term)",
    problem="RadialPowerLoss(p=4), n=1e7, d=1")


# --- Data-driven case: realizable p-th-power regression --------------------------------------------
# MomentPowerRegression keeps a gradient O(d^p) by one pass over the data, so n reaches 1e8.  At
# d = 4 the d-free term of Theorem 4 rules (the first term needs d ≳ (n√ρ)^{κ/2}).
_REGR_TOL = ("two-sided: F(v) = mean⟨a_i, v⟩^p is p-homogeneous, so ‖∇F‖ ≍ ‖v‖^{p−1} and F ≍ "
             "‖∇F‖^κ: the KL exponent is attained (only γ, from Jensen's λ_min^{p/2}, is loose, "
             "which moves the level, not the slope); the run stops at the noise σ̂ of N_t as on "
             "the radial loss, so the d-free term is attained; the band spans log A; 0.1 covers "
             "seed noise of the random stopping time (12-24 seeds: CI half-width ≤ 0.08)")
REGRESSION = {}
for _p, _grid, _full, _seeds in ((4.0, _geom(10**6.5, 10**8, 4), _geom(10**6.5, 10**8.5, 5), 12),
                                 (2.0, _geom(10**4, 10**7, 4), _geom(10**4, 10**8, 9), 24)):
    _t = _KAPPA_TAG[_p]
    REGRESSION[_t] = _adaptive_exp(
        "n", _t, {"problem": "regr_moment", "p": _p, "B": 1.0, "beta": 0.1, "d": 4, "rho": 1.0,
                  "data_seed": 0},
        _grid, _full, regime="floor", exp_id=f"kl.regr.n.{_t}", seeds=_seeds,
        checks=(Check("kl:thm4_floor", "two-sided", 0.1, _REGR_TOL),) + _adaptive_checks("floor")[1:],
        title=f"Adaptive noisy GD, realizable |⟨a,w⟩−y|^{_p:g} regression (κ={_KAPPA_TEX[_p]}), d=4: "
              "excess vs n (Theorem 4, d-free term)",
        problem=f"MomentPowerRegression(p={_p:g}), a_i uniform in the unit ball of R^4")


# --- Misspecification: Spider told the wrong κ --------------------------------------------------------
def _misspec_values(point: dict) -> dict:
    return kl_values(point, kappa=point["kappa_declared"])


def _misspec_vacuous(point: dict, bound_value: float) -> str | None:
    vals = _misspec_values(point)
    floor = 32.0 ** vals["kappa"] * bound_value
    if floor >= vals["F0"]:
        return f"Φ̂ floor at the declared κ = {floor:.3g} ≥ F0 (Spider trivial)"
    return None


MISSPEC_SPIDER = register(Experiment(
    id="kl.misspec.n.spider_k2", paper="kl",
    title="KL Spider told κ=2 on the radial p=4 loss (true κ=4/3), d=1: excess vs n",
    variable="n", quick_grid=ADAPTIVE[("n", "k4_3_d1")].quick_grid,
    full_grid=ADAPTIVE[("n", "k4_3_d1")].full_grid,
    fixed={**_RAD, "p": 4.0, "d": 1, "rho": 1.0, "kappa_declared": 2.0}, seeds=5,
    run=_run_spider, metric="excess", bound_values=_misspec_values, vacuous=_misspec_vacuous,
    problem="RadialPowerLoss(p=4), d=1", algorithm="algorithms.kl.condition.kl_spider, κ=2 declared",
    description="Compare kl.adaptive.n.k4_3_d1: same instance and grid, Algorithm 3 keeps its rate.",
    checks=(
        Check("kl:thm1", "reject", 0.1,
              "the rate Theorem 1 promises at the declared κ = 2 (slope ≈ −2): the instance is not "
              "(γ, 2)-KL, so the guarantee does not apply and the data must show it is not attained"),
        Check("kl:thm1", "reject", 0.1,
              "the rate of correctly specified Spider (true κ = 4/3, slope ≈ −1.25): told κ = 2, "
              "Spider stalls and does not even attain that", values=_with()),
    )))


# --- Proximal point (Algorithm 2, Theorem 2, κ ≥ 2) -------------------------------------------------
# Theorem 9's inner count n²(ρ/T)log²(2/β')/d is 10⁴-10⁸ steps per call here, so the inner
# solver is capped at ``inner_max_steps``.  A cap is harmless only where the inner run has
# reached its noise floor: the capped optimisation error ∝ 1/C does not shrink with n while the
# noise floor ∝ 1/n² does, so every cap binds beyond some n (at κ = 3, C = 1000 … 16000 agree
# up to n = 1e4; at n = 3e4, C = 1000 gives 15× the excess of C = 4000).  Each grid below stops
# where C and 4C still agree within seed noise, which tests/test_kl_experiments.py pins
# (errata KL-E30 has the probe table).
PPM_CAP_FACTOR = 4          # the cap-insensitivity check compares inner_max_steps with 4× it
_PPM_TOL = ("one-sided: Theorem 2 only claims an upper bound (its proof may have a gap "
            "for κ > 2, errata KL-E13), so only 'not flatter than the bound' is checked; 0.3 "
            "because the per-seed excess is heavy-tailed (10-90% quantiles 100× apart at one n): "
            "64 seeds give a CI half-width ≈ 0.15 over 2 decades, and 0.3 is twice that")
_PPM_LEM3 = ("evidence for the finding: the rate of the inner solver's noise floor (Lemma 3, "
             "L0²dT/(L̃1n²ρ), exponent −2 up to the logs of T and β'), which the proof must beat "
             "for κ > 2: the observed slope must not be flatter than it; one-sided and 0.3 as for "
             "the main check")
PPM = {}
for _p, _hi, _cap, _note in (
        (1.5, 10**4.0, 1000, "KL-E30: observed ≈ −2.1 at κ = 3 over n ∈ [1e2, 1e4], flatter than "
                             "Theorem 2's local −2.6 (asymptotic −3)"),
        (4.0 / 3.0, 10**3.5, 4000, "KL-E30: observed ≈ −2.3 at κ = 4 over n ∈ [1e2, 3e3], far "
                                   "flatter than Theorem 2's local −3.5 (asymptotic −4)")):
    _t = _KAPPA_TAG[_p]
    PPM[_t] = register(Experiment(
        id=f"kl.ppm.n.{_t}", paper="kl",
        title=f"Proximal point (inner noisy GD), radial p={_p:.3g} (κ={_KAPPA_TEX[_p]}), d=1: excess vs n "
              "(Theorem 2)",
        variable="n", quick_grid=_geom(10**2, _hi, 5), full_grid=_geom(10**2, _hi, 9),
        fixed={**_RAD, "p": _p, "d": 1, "rho": 1.0, "L1t": 0.1, "inner_max_steps": _cap},
        seeds=64, run=_run_ppm, metric="excess", bound_values=kl_values, vacuous=_excess_vacuous,
        problem=f"RadialPowerLoss(p={_p:.3g}) (convex, non-smooth at w*), d=1",
        algorithm=f"algorithms.kl.condition.proximal_point (Algorithm 2 + Algorithm 4), inner T ≤ {_cap}",
        description=f"Inner steps capped at {_cap}; on this grid the excess does not change when the "
                    f"cap is multiplied by {PPM_CAP_FACTOR} (tests, errata KL-E30).",
        checks=(Check("kl:thm2", "one-sided", 0.3, _PPM_TOL, expect="finding", note=_note),
                Check("kl:lem3", "one-sided", 0.3, _PPM_LEM3))))


# --- Theorem 5: gradient norm of Algorithm 3 + exponential-mechanism selection ---------------------
_THM5_TOL = ("one-sided: Theorem 5 only bounds ‖∇F(w_t*)‖ from above, and its worst case "
             "(d^{1/4}/(√n ρ^{1/4})) is the flat end of the band it allows; 0.1 for 6 seeds")
_THM5_LARGE_D = (
    Check("kl:thm5_worst", "one-sided", 0.1, _THM5_TOL),
    Check("kl:prior_stationary_noisy_gd", "reject", 0.1,
          "competitor: the (√d/(n√ρ))^{1/2} rate of plain noisy GD [48] (= Theorem 5's worst "
          "case): with large gradients along the path Algorithm 3 must beat it"))
_THM5_CHECKS = {
    "k4_3": _THM5_LARGE_D, "k2": _THM5_LARGE_D,
    "k4_3_d1": (
        Check("kl:thm5_best", "two-sided", 0.1,
              "two-sided: at d = 1 the best case's d-free term L0√A/(√n ρ^{1/4}) (the noise of "
              "N_t, at which the run stops) is attained; the band spans √A; 0.1 for 6 seeds"),
        Check("kl:prior_stationary", "reject", 0.1,
              "competitor: the best prior stationary rate (√d/(n√ρ))^{2/3} [ABG+23]: at d = 1 "
              "Algorithm 3's d-free floor keeps it slower; the data must rule that slope out"))}
THM5 = {}
for _tag, _fx, _grid in (
        ("k4_3", {**_RAD, "p": 4.0, "d": _D_LARGE, "rho": 1.0}, _geom(10**5, 10**6.5, 4)),
        ("k2", {**_RAD, "p": 2.0, "d": _D_LARGE, "rho": 1.0, "L1_factor": 8.0}, _geom(10**4.5, 10**6, 4)),
        ("k4_3_d1", {**_RAD, "p": 4.0, "d": 1, "rho": 1.0}, _geom(10**4, 10**7, 5))):
    THM5[_tag] = _adaptive_exp(
        "n", _tag, {**_fx, "select_exponential": 1}, _grid,
        _geom(_grid[0] / 10**0.5, _grid[-1] * 10**0.5, 9), regime="n/a", metric="grad_norm",
        exp_id=f"kl.thm5.n.{_tag}", vacuous=_grad_vacuous,
        title=f"Adaptive noisy GD + exponential mechanism, radial p={_fx['p']:g}, d={_fx['d']:g}: "
              "‖∇F(w_t*)‖ vs n (Theorem 5)",
        problem=f"RadialPowerLoss(p={_fx['p']:g}), d={_fx['d']}",
        checks=_THM5_CHECKS[_tag])


# --- Negative control: per-example minimisers differ -> effective κ = 2 ---------------------------
NEGCTL = _adaptive_exp(
    "n", "", {"problem": "spread", "s": 0.5, "c": 1.0, "B": 1.0, "beta": 0.1, "d": _D_LARGE,
              "rho": 1.0, "kappa_eff": 2.0},
    # n must be a multiple of 2d (balanced design): 2d·(4, 6, 10, 16, 25), ratios ≈ 1.6; below
    # n = 8e5 the bound exceeds F0 (vacuous).
    tuple(2 * _D_LARGE * k for k in (4, 6, 10, 16, 25)),
    tuple(2 * _D_LARGE * k for k in (1, 2, 4, 10, 20, 40, 100, 200, 400)), regime="main",
    exp_id="kl.negctl.n.spread",
    title=f"Negative control: adaptive NGD, spread quartic (x_i = ±0.5e_j), d={_D_LARGE:g} (κ_eff = 2)",
    problem="SpreadQuarticLoss(s=0.5): f_i = ‖w − x_i‖⁴ Huberized, x_i = ±s e_j",
    description="Same loss shape, algorithm, d and grid as kl.adaptive.n.k4_3; only the "
                "per-example minimisers differ.",
    # KL-E32: the check is on the whole of Theorem 4 at κ = 2, not its first term alone.  On the
    # full grid (n up to 8e7 = 800d) the d-free term (slope −κ/2 = −1) reaches the first term
    # (ratio 0.29 at 2e7, 1.05 at 8e7) and the run starts to stop at the noise of N_t
    # (stopped_by = floor), so the first term alone is no longer the tight one there.
    checks=(Check("kl:thm4", "two-sided", 0.1,
                  "evaluated at κ = 2 with the instance's PL constant γ₂ = 1/(2√(ac)): near w* the "
                  "loss is quadratic, so Theorem 4 at κ = 2 is tight; both terms, because on the "
                  "full grid the d-free term reaches the first one (KL-E32: observed/bound stays "
                  "in [0.019, 0.024] over n = 8e5…8e7 while observed/first term doubles); the "
                  "band reaches the d-free asymptote −1, so the reject check below on that term "
                  "alone is what keeps the slope from drifting there; 0.1 as for the "
                  "shared-minimiser sweeps",
                  wide_reason="both terms of Theorem 4 at κ = 2 shape the data across the full "
                              "grid, so the band spans the first term's local slope to the "
                              "d-free −1; the kl:thm4_floor reject check below keeps the slope "
                              "off that far end",
                  history="KL-E32: first declared on Theorem 4's first term alone, which failed "
                          "on the full grid where the d-free term reaches it (observed/first "
                          "term doubling over n = 8e5…8e7); redefined on the whole bound at "
                          "κ = 2 with the reject check on the d-free term"),
            Check("kl:thm4_floor", "reject", 0.1,
                  "Theorem 4's d-free term alone at κ = 2 (slope −1): the first term still shapes "
                  "the data on both grids, so the far end of the band above must be ruled out"),
            Check("kl:thm4_main", "reject", 0.1,
                  "the κ = 4/3 rate the same quartic has when all examples share the minimiser "
                  "(kl.adaptive.n.k4_3); the spread data must rule it out",
                  values=lambda p: kl_values({**p, "kappa_eff": 4.0 / 3.0}))))


# --- κ-overlay figure ----------------------------------------------------------------------------------
def _plot_kappa_overlay(analyses: list, root) -> "Path":
    import sympy as sp
    from pathlib import Path

    from empirical.store.figures import save_figure      # imported first: it selects the Agg backend

    import matplotlib.pyplot as plt  # noqa: E402

    kap = bounds.sym("kappa")
    main = sp.lambdify(kap, bounds.get("kl:thm4_main").exponent("n"), "numpy")
    floor = sp.lambdify(kap, bounds.get("kl:thm4_floor").exponent("n"), "numpy")
    opt = sp.lambdify(kap, bounds.get("kl:thm1").exponent("n"), "numpy")
    ks = np.linspace(1.0, 2.0, 101)
    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=110)
    ax.plot(ks, np.broadcast_to(main(ks), ks.shape), color="tab:orange",
            label="Thm 4 first term: −2κ/(4−κ) (kl:thm4_main)")
    ax.plot(ks, np.broadcast_to(floor(ks), ks.shape), color="tab:purple", ls=":",
            label="Thm 4 d-free term: −κ/2 (kl:thm4_floor)")
    ax.plot(ks, np.broadcast_to(opt(ks), ks.shape), color="tab:green", ls="--",
            label="optimal, κ known (Thm 1): −κ (kl:thm1)")
    for a in analyses:
        if a.fit is None:
            continue
        k = kl_values(a.experiment.point(a.kept[0]))["kappa"]
        small_d = a.experiment.fixed.get("d", 0) == 1
        f = a.fit
        ax.errorbar([k], [f.slope], yerr=[[f.slope - f.ci_low], [f.ci_high - f.slope]],
                    fmt="s" if small_d else "o", color="tab:purple" if small_d else "tab:blue",
                    capsize=3, label=("observed, d = 1" if small_d else f"observed, d = {_D_LARGE:g}"))
        r = a.results[0]
        ax.plot([k], [r.local], marker="_", ms=14, color="tab:red")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    uniq["local slope of the checked term (red dash)"] = plt.Line2D([], [], marker="_", ms=14,
                                                                     color="tab:red", ls="")
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="lower left")
    ax.set_xlabel("KL exponent κ of the instance (radial loss, p = κ/(κ−1))")
    ax.set_ylabel("n-slope of the excess (log-log)")
    ax.set_title("Adaptive noisy GD, same code and inputs (no κ, no γ):\n"
                 "observed n-slopes (95% CI) against Theorem 4's exponents", fontsize=9)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, Path(root) / "kl" / "kl.summary.adaptive_kappa.png")


KAPPA_OVERLAY = register_summary(Summary(
    id="kl.summary.adaptive_kappa", paper="kl",
    experiments=tuple(ADAPTIVE[("n", _KAPPA_TAG[p])].id for p in (6.0, 4.0, 3.0, 2.0))
    + tuple(ADAPTIVE[("n", _KAPPA_TAG[p] + "_d1")].id for p in (4.0, 3.0, 2.0)),
    plot=_plot_kappa_overlay))


# Privacy audits of the KL algorithms register with `dprates audit` when this paper loads.
import empirical.papers.kl.audit  # noqa: E402,F401

# Theorem 8's lower-bound construction, run (registers kl.thm8lb.*).
import empirical.papers.kl.lower  # noqa: E402,F401
