"""Algorithm 1's privacy excess (Lowy, Liu, Asi, Theorem 2.1/B.1):
full-grid sweeps in n, m and ε with a *coupled* metric (errata UL-E1, UL-E19, UL-E22).

Each seed runs Algorithm 1 twice on the streamed quadratic f(x, z) = ½‖x − z‖²: privately, and
from copies of the same data and algorithm generators without output noise (``noise=False``),
the private run drawing its Gaussian from a third stream (``noise_rng``).  Both runs therefore
see the same items, permutations, Laplace score noise and keep coins and differ only by the
output noise.  One SGD step on this loss is affine, x ← (1 − η)x + ηz, so the offset between
the two runs is a fixed linear function of the noises, independent of the items:
``privacy_excess`` = ½‖x_priv − x_np‖² has the same mean as F(x_priv) − F(x_np) exactly (the
cross term ⟨x_np − μ0, Δ⟩ has mean 0; it is kept in ``excess_difference`` and costs a ×10
larger variance) as long as no projection acts and the keep sets agree (``projected``,
``keep_agree`` record both).  The sampling error cancels, so 16–20 seeds resolve the term.

The same linearity gives the schedule's prediction E½‖Δ‖² = ½d Σ_i σ_i² Π_{j>i} c_j², with
c_j = (1 − η_j)(1 − (1 − η_j)^{T_j})/(η_jT_j) the factor by which phase j's averaged SGD
shrinks an offset of its starting point (``predicted_privacy_excess``, from the η_i, T_i, σ_i
the run used).  Tests compare the two: the metric measures the algorithm's noise propagation.

Not registered (no quick grid): one coupled pair costs ≈ 1 CPU-s at n = 2¹⁷ (m = 16) and the
term needs ≥ 16 seeds per point, so even a 3-point quick grid costs ≈ 100 CPU-s (UL-E19);
``tests/test_userlevel_alg1_privacy.py`` sweeps them under ``-m slow``.
"""
from __future__ import annotations

import copy

import numpy as np

from algorithms.userlevel.alg1 import phased_sgd_outlier_removal
from empirical.core.experiment import Check, Experiment
from empirical.papers.userlevel.alg1 import _alg1_settings
from empirical.papers.userlevel.common import PAPER, PRIVACY_RTOL, _privacy_cols
from empirical.papers.userlevel.problems import StreamingQuadratic

__all__ = ["ALG1_PRIV_N", "ALG1_PRIV_M", "ALG1_PRIV_EPS", "ALG1_PRIV_EPS_LOCALISED", "EXPERIMENTS",
           "run_alg1_coupled", "offset_factor", "alg1_privacy_values"]

def offset_factor(eta: float, T: int) -> float:
    """c = (1/T)Σ_{t=1}^{T}(1 − η)^t: how much one phase's average iterate keeps of an offset
    of its starting point on a 1-smooth, 1-strongly convex quadratic (no projection)."""
    if not 0 < eta < 1 or T < 1:
        raise ValueError(f"eta must be in (0, 1) and T >= 1, got eta={eta!r}, T={T!r}")
    return (1 - eta) * (1 - (1 - eta) ** T) / (eta * T)


def _predicted(phases: list, d: int) -> float:
    total = 0.0
    for i, ph in enumerate(phases):
        shrink = np.prod([offset_factor(p["eta_i"], p["T_i"]) ** 2 for p in phases[i + 1:]])
        total += ph["sigma_i"] ** 2 * shrink
    return 0.5 * d * total


def _coupled_row(point: dict, g: np.random.Generator) -> dict:
    n, m, d = (int(round(point[k])) for k in ("n", "m", "d"))
    eps, delta = float(point["epsilon"]), float(point["delta"])
    kw = dict(mode="rates", c_C=point["c_C"], c_eta=point["c_eta"], c_tau=point["c_tau"],
              max_phases=int(round(point["max_phases"])))
    data_rng, alg_rng, noise_rng = g.spawn(3)
    data = StreamingQuadratic(n, m, d, data_rng)
    data0, alg0 = copy.deepcopy(data), copy.deepcopy(alg_rng)
    res = phased_sgd_outlier_removal(data, eps, delta, alg_rng, noise_rng=noise_rng, **kw)
    ref = phased_sgd_outlier_removal(data0, eps, delta, alg0, noise=False, **kw)
    diff = res.x - ref.x
    ex, ex0 = float(data.excess(res.x)[0]), float(data0.excess(ref.x)[0])
    ph = res.phases
    return {"privacy_excess": 0.5 * float(diff @ diff), "excess": ex, "nonprivate_excess": ex0,
            "excess_difference": ex - ex0,
            "predicted_privacy_excess": _predicted(ph, d) if not res.halted else np.nan,
            "halted": int(res.halted), "halted_np": int(ref.halted),
            "keep_agree": int(res.info["kept"] == ref.info["kept"]),
            # the chains project onto ‖x‖ ≤ R/2; an offset that reaches it breaks the linearity
            "max_norm": float(max(np.linalg.norm(res.x), np.linalg.norm(ref.x))),
            "C": res.info["C"], "phases": len(ph), "sigma_1": ph[0]["sigma_i"],
            "eta1T1": ph[0]["eta_i"] * ph[0]["T_i"],
            "eta2T2": ph[1]["eta_i"] * ph[1]["T_i"] if len(ph) > 1 else np.nan,
            "grad_evals": res.grad_evals,
            **_alg1_settings(point, res, data.L, data.R),
            **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()}}


def run_alg1_coupled(point: dict, rngs: list) -> dict:
    """Rows of coupled private/noise-free Algorithm 1 runs (one per generator in ``rngs``).
    Seeds loop in Python: each run is itself vectorised over its C ≈ 300–2000 group chains
    (arrays of C·d per SGD step), so the loop adds < 1% (measured: 0.45 CPU-s per run at
    n = 2¹⁷, m = 16, 544 steps)."""
    cols: dict[str, list] = {}
    for g in rngs:
        for k, v in _coupled_row(point, g).items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}


def alg1_privacy_values(point: dict) -> dict:
    """StreamingQuadratic's constants: L = R/2 + ‖μ0‖ + 1 = 4, R = 4, β = 1."""
    return {"n": point["n"], "m": point["m"], "d": point["d"], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": 4.0, "R": 4.0, "beta": 1.0}


#: UL-E19's setting: C ≈ 2000 groups at ε = 1 certify a finite corrected Lemma B.2 sensitivity
#: (C ≥ 1220 needed, UL-E14); c_τ = 0.02 is the smallest radius that does not halt honest runs
#: (0.005 halts at phase 2) and c_η = 200 gives η_1T_1 ≈ 1.6–3 (c_η = 1000 puts σ_1 beyond 𝒳).
_FIXED = {"delta": 1e-6, "epsilon": 1.0, "m": 16, "d": 5, "c_C": 60.0, "c_eta": 200.0,
          "c_tau": 0.02, "max_phases": 6}
_PROBLEM = "StreamingQuadratic: f = ½‖x − z‖², z = μ0 + Rademacher/√d (exact F), coupled runs"
_ALGO = ("algorithms.userlevel.sco.phased_sgd_outlier_removal (Algorithm 1), rates mode; "
         "privacy_excess = ½‖x_priv − x_noise-free‖² on the same draws")


def _experiment(id_: str, variable: str, grid: tuple, fixed: dict, seeds: int, checks: tuple,
                title: str) -> Experiment:
    # quick_grid = full_grid: the object is swept only with full=True by the slow test
    return Experiment(id=id_, paper=PAPER, title=title, variable=variable, quick_grid=grid,
                      full_grid=grid, fixed=fixed, seeds=seeds, run=run_alg1_coupled,
                      metric="privacy_excess", bound_values=alg1_privacy_values,
                      problem=_PROBLEM, algorithm=_ALGO, privacy_rtol=PRIVACY_RTOL,
                      checks=checks)


_ONE = ("one-sided: Theorem 2.1/B.1 is an upper bound over convex losses and this instance is "
        "1-strongly convex (an early phase's noise is shrunk by the later phases instead of being "
        "paid as dσ²/(ηT)), so the privacy excess may fall faster; 0.1 covers the log factors of "
        "C, τ and Δ (≤ 0.04 over the grid) and 20-seed noise of a χ²_5-like metric (≈ 14% per "
        "point)")
_FLAT = ("UL-E22: at affordable sizes the privacy excess is phase 1's output noise ½dσ_1², and "
         "σ_1 = zΔ_1 ∝ τ_1/C is free of n, m and ε (τ_1 ∝ η_1√T_1 ∝ 1/√(εC), C ∝ 1/ε); the later "
         "phases shrink it by c_2² only (η_2T_2 = 0.15–0.75 < 1 here), so it falls no faster than "
         "that shrinkage: the schedule's own prediction ½dΣσ_i²Π c_j² falls as n^{−0.27}, m^{−0.24}, "
         "ε^{−0.13} on these grids.  The theorem's rate is reached only once η_2T_2 ≫ 1 "
         "(nm ≈ 100× larger)")


def _level(lo: float, hi: float, what: str) -> str:
    return (f"observed/bound with the bound {what}: the schedule's data-free prediction of the "
            "mean, ½dΣ_iσ_i²Π_{j>i}c_j² (exact on this quadratic, see the module docstring), over "
            f"the bound is {lo:g}–{hi:g} on this grid, and the geometric mean of a χ²_5-like "
            "metric is ≈ 0.8 of its mean; band ×2 beyond the predicted range at each end "
            "(20-seed scatter ±30%, gmean factor 0.7–0.85), so a 2× error in the sensitivity or "
            "z (4× in the level) leaves it.  Not calibrated on the data")


def _checks(note: str, level: tuple[float, float], predicted: tuple[float, float], what: str,
            competitor: Check) -> tuple[Check, Check]:
    """A sweep's checks: Theorem 2.1/B.1's privacy term (the proof's reading), one-sided and a
    FINDING of the slope (``note``; the level is enforced), whose level band is set ×2 beyond the schedule's ``predicted`` range of
    observed/bound (``_level``), and the ``competitor`` the same data must reject."""
    lo, hi = predicted
    return (Check("userlevel:thm2.1_proof", "one-sided", 0.1, _ONE, expect="finding", note=note,
                  finding_on="slope", level=level, level_source="instance", level_reason=_level(lo, hi, what)),
            competitor)


CHECKS_N = _checks(
    _FLAT, level=(1.25, 10.0), predicted=(3.16, 5.13),
    what="LR√d/√(nmε) (both readings agree in n)",
    competitor=Check("userlevel:trivial_privacy", "reject", 0.15,
                     "competitor: the n^{−1} of the user-as-item rate (footnote 3), which is "
                     "also the strongly convex asymptote of this coupled excess "
                     "(½dσ_1²/(η_2T_2)², η_2T_2 ∝ √n); 1.5× the main tolerance"),
)
_FLAT_M = ("UL-E22: inconclusive at 20 seeds (m^{−0.46} [−0.65, −0.28], CI half-width 0.19 > "
           "0.1): the data are consistent with the theorem's −1/2; the flatter m^{−0.24} rests "
           "on the schedule's exact expectation (0.035 outside this CI), which the n and ε sweeps "
           "confirm.  " + _FLAT[len("UL-E22: "):])
CHECKS_M = _checks(
    _FLAT_M, level=(1.0, 8.5), predicted=(2.46, 4.28),
    what="LR√d/√(nmε) (both readings agree in m)",
    competitor=Check("userlevel:trivial_privacy", "reject", 0.15,
                     "competitor: the user-as-item baseline's privacy term does not shrink with "
                     "m (slope 0); 1.5× the main tolerance"),
)
CHECKS_EPS = _checks(
    _FLAT, level=(1.5, 16.0), predicted=(3.76, 8.1), what="the proof's LR√d/√(nmε)",
    competitor=Check("userlevel:thm2.1_privacy", "reject", 0.15,
                     "competitor: the stated reading's ε^{−1} (UL-E1); 1.5× the main tolerance.  "
                     "Rejected at these sizes together with the proof reading's ε^{−1/2} "
                     "(one-sided FINDING): the privacy term decides neither reading here"),
)


ALG1_PRIV_N = _experiment(
    "userlevel.alg1.privacy.n", "n", (131072, 262144, 524288, 1048576),
    {k: v for k, v in _FIXED.items() if k != "n"}, 20, CHECKS_N,
    "Alg. 1: coupled privacy excess vs n (Theorem 2.1/B.1's privacy term)")
ALG1_PRIV_M = _experiment(
    "userlevel.alg1.privacy.m", "m", (8, 16, 32, 64),
    {**{k: v for k, v in _FIXED.items() if k != "m"}, "n": 131072}, 20, CHECKS_M,
    "Alg. 1: coupled privacy excess vs items per user m")
ALG1_PRIV_EPS = _experiment(
    "userlevel.alg1.privacy.eps", "epsilon", (1.0, 2.0, 4.0, 8.0),
    {**{k: v for k, v in _FIXED.items() if k != "epsilon"}, "n": 262144}, 20, CHECKS_EPS,
    "Alg. 1: coupled privacy excess vs ε (UL-E1: stated ε^{−1} or proof ε^{−1/2})")
EXPERIMENTS = (ALG1_PRIV_N, ALG1_PRIV_M, ALG1_PRIV_EPS)


#: UL-E1 at the scale it needs: c_η = 700 (3.5× UL-E19's) puts phase 2 past its transition
#: (η_2T_2 = 1.07 at n = 2¹⁸, against 0.31 at c_η = 200), so phase 1's ε-free noise is
#: contracted and the later phases' ε-dependence shows; the schedule's exact expectation then
#: falls as ε^{−0.51} on this grid (ε^{−0.14} at c_η = 200).  √d·σ_1 = 1.49 keeps the output
#: inside 𝒳 = B(0, 2) (no projection: the coupling stays exact); c_η = 1000 would not (2.1).
#: c_τ = 0.02 as before (0.01 halts every honest run).  48 seeds for a CI half-width ≈ 0.13
#: (UL-E22: 0.19–0.23 at 20); ≈ 1.75 CPU-s per coupled pair, ≈ 340 CPU-s in all.
_FIXED_LOCALISED = {**_FIXED, "c_eta": 700.0, "n": 262144}
CHECKS_EPS_LOCALISED = (
    Check("userlevel:thm2.1_proof", "one-sided", 0.15,
          "one-sided: Theorem 2.1/B.1 is an upper bound over convex losses and this instance is "
          "1-strongly convex (the later phases contract phase 1's noise, so the excess may "
          "fall faster in ε than the proof's ε^{−1/2}: the schedule's asymptote here is "
          "≈ ε^{−0.69}); 0.15 covers the log factors of C and τ_i in ε (≤ 0.04 over 1–8) and "
          "48-seed noise of a χ²_5-like metric (bootstrap half-width ≈ 0.13)",
          level=(10.0, 46.0), level_source="instance", level_reason=_level(21.0, 23.1, "LR√d/√(nmε)")),
    Check("userlevel:thm2.1_privacy", "reject", 0.15,
          "competitor: the stated reading's ε^{−1} (UL-E1); on an instance where the later "
          "phases work (η_2T_2 ≥ 1) the privacy excess must fall like the proof's ε^{−1/2} or "
          "faster, and if it falls slower than ε^{−1} the stated bound is exceeded as ε "
          "decreases; as the main tolerance (0.15)"),
)
ALG1_PRIV_EPS_LOCALISED = _experiment(
    "userlevel.alg1.privacy.eps.localised", "epsilon", (1.0, 2.0, 4.0, 8.0),
    {k: v for k, v in _FIXED_LOCALISED.items() if k != "epsilon"}, 48, CHECKS_EPS_LOCALISED,
    "Alg. 1: coupled privacy excess vs ε where the later phases localise (UL-E1)")
EXPERIMENTS = EXPERIMENTS + (ALG1_PRIV_EPS_LOCALISED,)
