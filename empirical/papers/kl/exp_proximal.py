"""KL paper (Menart et al.), Theorem 2: the private proximal point method (Algorithm 2 with
Algorithm 4 as its inner solver) swept in n for κ ≥ 2, with Lemma 3's inner bound.
"""
from __future__ import annotations

from empirical.core.experiment import Check, Experiment
from empirical.papers.kl.problems import _run_ppm, kl_values
from empirical.papers.kl.declare import (_KAPPA_TAG, _KAPPA_TEX, _RAD, _excess_vacuous, _geom,
                                         register)


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


# --- Theorem 2 in d ---------------------------------------------------------------------------------
# The n-sweeps hold d = 1; Theorem 2's rate is (γL0√(Td·log)/(n√ρ))^κ, so d enters as d^{κ/2} up to
# the log of T_ALG2 and LOG_ALG2 (local slope +1.28 at κ = 3, n = 1e3; asymptotic 1.5).  Larger d
# means fewer inner steps (Theorem 9's n²(ρ/T)log²/d), so the cap does not bind more than at d = 1.
PPM_D = register(Experiment(
    id="kl.ppm.d.k3", paper="kl",
    title="Proximal point (inner noisy GD), radial p=1.5 (κ=3), n=1e3: excess vs d (Theorem 2)",
    variable="d", quick_grid=(1, 8, 64), full_grid=(1, 4, 16, 64, 256),
    fixed={**_RAD, "p": 1.5, "n": 1000, "rho": 1.0, "L1t": 0.1, "inner_max_steps": 1000},
    seeds=16, run=_run_ppm, metric="excess", bound_values=kl_values, vacuous=_excess_vacuous,
    problem="RadialPowerLoss(p=1.5) (convex, non-smooth at w*), n=1e3",
    algorithm="algorithms.kl.condition.proximal_point (Algorithm 2 + Algorithm 4), inner T ≤ 1000",
    description="Theorem 2 in its other variable: the n-sweeps (kl.ppm.n.*) hold d = 1.",
    checks=(Check("kl:thm2", "one-sided", 0.3,
                  "one-sided: Theorem 2 only claims an upper bound; 0.3 as for the n-sweeps (the "
                  "excess spreads over a decade across seeds at d = 1: 16 seeds, CI half-width "
                  "≈ 0.2); judged on the local slope alone (at n = 1e3 the logs of T and of "
                  "Lemma 3 are far from the d → ∞ exponent κ/2)", use_asymptotic=False,
                  history="first declared with the band reaching the asymptotic +1.5, which the "
                          "declaration check refused (acceptance up to 0.52 above the local "
                          "slope); narrowed to the local slope"),)))
