"""KL paper (Menart et al.), Theorems 4 and 5: adaptive noisy GD (Algorithm 3) swept in n, ρ and
d on the radial instances (both terms of Theorem 4 in turn), on data (p-th-power regression), the
negative control whose per-example minimisers differ, Theorem 5's gradient norm with
exponential-mechanism selection, and the κ-overlay summary.
"""
from __future__ import annotations

import numpy as np

import bounds
from empirical.core.experiment import Check, Experiment, Summary, register_summary
from empirical.papers.kl.problems import _run_adaptive, kl_values
from empirical.papers.kl.declare import (_KAPPA_TAG, _KAPPA_TEX, _RAD, _excess_vacuous, _geom,
                                         _grad_vacuous, _intro_values, register)


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
              "Algorithm 3's d-free floor keeps it slower; the data must rule that slope out"),
        Check("kl:thm5_abstract", "reject", 0.1,
              "competitor: the abstract's 'as fast as Õ(√d/(n√ρ))' (KL-E15), n-slope −1: at "
              "d = 1 the d-free term the abstract drops rules; 0.1 as for the main check"))}
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


# --- Theorem 5 in ρ and in d, at d = 1 … 256 where the d-free term 1/(√n ρ^{1/4}) rules ----------------
# At n = 1e6 the best case's first term √d/(n√ρ) is ≤ 1.6% of its d-free term over both grids
# (d ≤ 256 at ρ = 1; ρ ≥ 0.01 at d = 1), so Algorithm 3 stops at the noise of N_t and its
# selected iterate's gradient norm follows ρ^{−1/4}, flat in d.  The abstract's rate (KL-E15)
# drops that term: ρ^{−1/2}, d^{1/2}, which both sweeps must rule out.
_THM5_ABSTRACT = ("competitor: the abstract's 'as fast as Õ(√d/(n√ρ))' (KL-E15), Theorem 5's "
                  "first term without the d-free one: the data must rule its slope out; 0.1 as "
                  "for the main check")
THM5[("rho", "k4_3_d1")] = _adaptive_exp(
    "rho", "k4_3_d1", {**_RAD, "p": 4.0, "d": 1, "n": 10**6, "select_exponential": 1},
    (0.01, 0.04, 0.16, 0.64, 2.56), _geom(0.0025, 10.24, 9, integer=False), regime="n/a",
    metric="grad_norm", exp_id="kl.thm5.rho.k4_3_d1", vacuous=_grad_vacuous,
    title="Adaptive noisy GD + exponential mechanism, radial p=4, d=1, n=1e6: ‖∇F(w_t*)‖ vs ρ "
          "(Theorem 5)",
    problem="RadialPowerLoss(p=4), d=1, n=1e6",
    description="Theorem 5 in its privacy parameter: the n-sweeps (kl.thm5.n.*) hold ρ = 1.",
    checks=(
        Check("kl:thm5_best", "two-sided", 0.1,
              "two-sided: at d = 1 the best case's d-free term L0√A/(√n ρ^{1/4}), the noise of "
              "N_t at which the run stops, is attained, as in kl.thm5.n.k4_3_d1; the band spans "
              "√A; 0.1 for 6 seeds (the selected iterate's log-norm spreads by ≈ 0.25 per seed: "
              "CI half-width ≈ 0.04 over 2.4 decades)"),
        Check("kl:thm5_worst", "one-sided", 0.1, _THM5_TOL),
        Check("kl:thm5_abstract", "reject", 0.1, _THM5_ABSTRACT)))
THM5[("d", "k4_3_small")] = _adaptive_exp(
    "d", "k4_3_small", {**_RAD, "p": 4.0, "n": 10**6, "rho": 1.0, "select_exponential": 1},
    (1, 4, 16, 64, 256), (1, 2, 4, 8, 16, 32, 64, 128, 256), regime="n/a",
    metric="grad_norm", exp_id="kl.thm5.d.k4_3_small", vacuous=_grad_vacuous,
    title="Adaptive noisy GD + exponential mechanism, radial p=4, n=1e6, small d: ‖∇F(w_t*)‖ vs d "
          "(Theorem 5)",
    problem="RadialPowerLoss(p=4), n=1e6",
    description="Theorem 5 in d where its d-free term rules (d ≪ n√ρ): the n-sweeps hold d = 1 "
                "or d = 1e5.",
    checks=(
        Check("kl:thm5_best", "two-sided", 0.1,
              "two-sided: at d ≤ 256 ≪ n√ρ = 1e6 the best case is its d-free term (the first "
              "term is ≤ 1.6% of it), the stop at the noise of N_t, so the norm is flat in d; "
              "judged on the local slope alone (the d → ∞ exponent 1/2 is reached only at "
              "d ≳ n√ρ); 0.1 for 6 seeds (CI half-width ≈ 0.05 over 2.4 decades)",
              use_asymptotic=False),
        Check("kl:thm5_worst", "one-sided", 0.1, _THM5_TOL),
        Check("kl:thm5_abstract", "reject", 0.1, _THM5_ABSTRACT),
        Check("kl:prior_stationary", "reject", 0.1,
              "competitor: the best prior stationary rate (√d/(n√ρ))^{2/3} [ABG+23], d-slope "
              "1/3: flat data must rule it out; 0.1 as for the main check"),
        Check("kl:prior_stationary_noisy_gd", "reject", 0.1,
              "competitor: plain noisy GD's (√d/(n√ρ))^{1/2} [48], d-slope 1/4; 0.1 as for the "
              "main check")))


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


# --- KL-E31: the noise-free control of Algorithm 3's d-free term ---------------------------------
# kl.adaptive.n.k4_3_d1 attains Theorem 4's d-free term (the stop at ‖∇F‖ ≈ σ̂, the noise of the
# norm release N_t).  The same instance and code with both noises removed (noise_factor 0) is
# a control whose slope must differ: without N_t's noise the stopping rule fires only at
# ‖∇F‖ ≤ σ_min√(dA), and the run ends when the filter's budget runs out.
NOISEFREE_ADAPTIVE = register(Experiment(
    id="kl.adaptive.n.k4_3_d1.noisefree", paper="kl",
    title="Adaptive noisy GD without its noise (control), radial p=4 (κ=4/3), d=1: excess vs n",
    variable="n", quick_grid=_geom(10**5, 10**6, 3), full_grid=_geom(10**5, 10**8, 7),
    fixed={**_RAD, "p": 4.0, "d": 1, "rho": 1.0, "noise_factor": 0.0}, seeds=2,
    run=_run_adaptive, metric="excess", bound_values=kl_values, vacuous=_adaptive_vacuous,
    problem="RadialPowerLoss(p=4), d=1", private=False,
    algorithm="algorithms.kl.condition.adaptive_noisy_gd (Algorithm 3) with noise_factor=0",
    description="Control of kl.adaptive.n.k4_3_d1 (KL-E31): same instance, schedule, filter and "
                "stopping rule, no noise in N_t or in the gradients (not private; the run is "
                "deterministic, so two seeds and a zero-width interval).  The private run's "
                "slope is the d-free term's; this one's must not be.",
    checks=(
        Check("kl:thm4_floor", "reject", 0.1,
              "the rate the private run attains on this instance (kl.adaptive.n.k4_3_d1 passes "
              "it): it comes from the noise σ̂ = L0/(√n ρ^{1/4}) of N_t, at which the private "
              "run stops; without that noise the slope must leave it, or the rate check would "
              "not depend on the noise; tolerance 0.1 as for the private check"),
        Check("kl:thm4_main", "two-sided", 0.1,
              "without noise the run stops when the filter's budget is spent, each step costing "
              "2L0²dA/(n²‖∇F‖²): the balance of Theorem 4's first term, which the noise-free "
              "run attains even at d = 1; the band [local, asymptotic] spans A and p_max; 0.1 "
              "as for the main check (deterministic: CI width 0)"),
    )))
