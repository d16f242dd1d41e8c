"""Experiments for the KL paper (Menart et al.): sweeps checked
against ``bounds.rates.kl`` on the problems of :mod:`empirical.papers.kl.problems`.

This is the paper's registering module (its ``dprates.papers`` entry point): importing it registers the
experiments, the κ-overlay summary and the KL privacy audits (:mod:`empirical.papers.kl.audit`).  The
problems and run functions live in :mod:`empirical.papers.kl.problems` (re-exported here), so editing a
check declaration here does not make stored rows stale.  Theorem 9's experiments are declared
here; those of Theorems 1, 2, 4 and 5 in :mod:`~empirical.papers.kl.exp_spider`,
:mod:`~empirical.papers.kl.exp_proximal` and :mod:`~empirical.papers.kl.exp_adaptive`, with the
shared level bands in :mod:`~empirical.papers.kl.declare`.

Theorem 9 (Algorithm 4) is checked on the regularised linear loss (see
:class:`empirical.papers.kl.problems.LinearLoss`); the other theorems on problems with a known, tunable
KL exponent.
"""
from __future__ import annotations

import numpy as np

from algorithms.accounting import zcdp_to_epsilon_closed_form
from empirical.core.experiment import Check, Experiment
from empirical.papers.kl.problems import _run_thm9
from empirical.papers.kl.problems import *  # noqa: F401,F403  (re-exported: tests and users import them here)
from empirical.papers.kl import problems as _problems
from empirical.papers.kl.declare import register

__all__ = list(_problems.__all__) + ["THM9_N", "THM9_D", "THM9_RHO", "KAPPA_OVERLAY"]


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


# The experiments of Theorems 1, 2, 4 and 5, declared by theorem (exp_spider imports
# exp_adaptive: its misspecification experiment shares Algorithm 3's grid).
from empirical.papers.kl import exp_proximal, exp_spider  # noqa: E402,F401
from empirical.papers.kl.exp_adaptive import ADAPTIVE, KAPPA_OVERLAY, REGRESSION  # noqa: E402,F401
from empirical.papers.kl.exp_proximal import PPM, PPM_CAP_FACTOR  # noqa: E402,F401
from empirical.papers.kl.exp_spider import SPIDER  # noqa: E402,F401

# Variables of the rates that no sweep isolates, and why (the coverage table shows them).
from empirical.core.coverage import declare_unswept as _declare_unswept  # noqa: E402

_GAMMA_ADAPTIVE = ("Algorithm 3 is not given γ: γ is a property of the instance, and on every "
                   "family here (radial: γ = c^{−1/p}/p, L0 = pcB^{p−1}, L1 = p(p−1)cB^{p−2}) it "
                   "cannot move without L0, L1 and F0 moving with it; the d-free term depends on "
                   "γ only through max{γ², 1} = 1 (γ ≤ 0.85 on every instance).  Theorem 1's γ, "
                   "an input of Algorithm 1, is swept (kl.spider.gamma.k4_3)")
for _b in ("kl:thm4", "kl:thm4_main", "kl:thm4_floor"):
    _declare_unswept(_b, "gamma", _GAMMA_ADAPTIVE)
_CONSTANTS = ("a constant of the instance: the losses' only knobs (the scale c and the Huber "
              "radius B) move L0, L1, γ and F0 together, so no sweep isolates one of them; they "
              "scale the level, which the level bands check at every grid point")
for _b, _vars in (("kl:thm1", ("L0", "L1", "F0")), ("kl:thm4", ("L0", "L1")),
                  ("kl:thm4_main", ("L0", "L1")), ("kl:thm4_floor", ("L0", "L1")),
                  ("kl:thm2", ("L0", "F0")), ("kl:lem3", ("L0", "F0"))):
    for _v in _vars:
        _declare_unswept(_b, _v, _CONSTANTS)
_KAPPA = ("κ is the exponent of the rate, not a scale: a log-log slope in κ has no meaning.  It "
          "is covered by instances at κ = 6/5, 4/3, 3/2, 2 (and 3, 4 for Theorem 2), each with "
          "the exponent in n, ρ and d predicted at its own κ (kl.summary.adaptive_kappa)")
for _b in ("kl:thm1", "kl:thm2", "kl:lem3", "kl:thm4", "kl:thm4_main", "kl:thm4_floor"):
    _declare_unswept(_b, "kappa", _KAPPA)

# Privacy audits of the KL algorithms register with `dprates audit` when this paper loads.
import empirical.papers.kl.audit  # noqa: E402,F401

# Theorem 8's lower-bound construction, run (registers kl.thm8lb.*).
import empirical.papers.kl.lower  # noqa: E402,F401

# [48] = WYX17's noisy GD under PL, the prior algorithm (registers kl.wyx17.*).
import empirical.papers.kl.prior  # noqa: E402,F401

# Theorem 6's construction (App. B.4), run (registers kl.thm6lb.*).
import empirical.papers.kl.lower_thm6  # noqa: E402,F401
