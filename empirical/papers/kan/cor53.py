"""KAN paper (Wang et al.), Corollary 5.3 (correlated noise, B = ρn, κ from Theorem
5.1/F.12): population risk in n and ε, and the private/non-private risk ratio in n.

Every check states whether it is one- or two-sided and why; each experiment has a competing rate
that the same data must reject.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from algorithms import privacy_pairs as pairs
from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated, f12_conditions
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.lam import calibration_routes
from empirical.papers.kan.problems import (_common, _instance, held_out, privacy_columns,
                                           sample_rows, width_hi_ratio)
from empirical.store.calibration import calibrations

#: Calibrated band ends, fit on held-out seeds (calibration.json beside this module, recomputed
#: by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str, lo: float, why: str) -> dict:
    """Level-band fields whose upper end is ``eid``'s held-out calibration and whose lower end
    ``lo`` is a design floor, not a calibration (``why``); the record states the combined band."""
    r = _HELD_OUT[(eid, bound, kind)]
    r = dataclasses.replace(r, band=(lo, r.band[1]))
    return dict(level=r.band, level_source="calibration", calibration=r,
                level_reason=f"lower end {lo:g}: {why}; upper end: {r.describe()}")


# =============================================================================================
# Corollary 5.3: λ > 0, B = ρn, T ≍ min{√n/γ, nεγ²/√d}, κ from Theorem 5.1/F.12
# =============================================================================================
def cor53_schedule(n: int, gamma: float, epsilon: float, d: int, m: int, sample_frac: float,
                   T_const: float) -> dict:
    """Corollary 5.3's choices: B = ⌊ρn⌋, T = ⌈c_T·min{√n/γ, nεγ²/√d}⌉ (≍ hides c_T; c_T = 2
    makes F.12's rT ≥ 3 ln(2/δ) hold from n ≈ 600 at γ₀ ≈ 0.32), δ = min{1/(n√m), γ/n} (the
    corollary's own condition), η = 1."""
    return {"B": int(sample_frac * n),
            "T": math.ceil(T_const * min(math.sqrt(n) / gamma, n * epsilon * gamma ** 2 / math.sqrt(d))),
            "delta": min(1.0 / (n * math.sqrt(m)), gamma / n), "eta": 1.0}


def _run_cor53(point: dict, rngs: list, paired: bool = False) -> dict:
    """Per seed the run with κ from F.12 (λ = ``lam``); with ``paired`` a second row with the same
    data, batches and Z and κ = 0 (the non-private run at the same (η, T, B)).  The private row
    is the same either way (its generator, batches and noise do not depend on the second row)."""
    inst = _instance(point)
    n, d, m = int(point["n"]), inst.d, inst.model.m
    sch = cor53_schedule(n, inst.gamma0, point["epsilon"], d, m, point["sample_frac"],
                         point["T_const"])
    why = f12_conditions(sch["T"], sch["B"], n, point["epsilon"], sch["delta"])
    if why:   # the grid is chosen inside F.12's conditions; outside them κ would not be certified
        raise ValueError(f"kan.cor53: n={n} is outside Theorem F.12's conditions: {why}")
    lam = float(point["lam"])
    priv = calibrate(point["epsilon"], sch["delta"], lam=lam, T=sch["T"], n=n, B=sch["B"],
                     sampler="fresh", calibration="thm5.1")
    kr = 2 if paired else 1          # rows per seed
    H, y = sample_rows(inst, n, rngs)
    H, y = np.repeat(H, kr, axis=0), np.repeat(y, kr, axis=0)
    Ht, yt = held_out(inst, point)
    R = len(rngs)
    meter = NoiseMeter(R)       # the private row (first of each seed's kr) measured
    run = dp_sgd_correlated(inst.model, H, y, T=sch["T"], eta=sch["eta"], B=sch["B"],
                            C_clip=point["C_clip"], lam=lam,
                            noise_multiplier=[priv.noise_multiplier, 0.0][:kr], R_star=math.inf,
                            rng=rngs, rows_per_seed=kr, H_test=Ht, y_test=yt,
                            eval_every=max(1, sch["T"] // 10), eval_subsample=1000,
                            observe=correlated_hook(meter, np.full(R * kr, lam), kr, measured=0))
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / sch["B"])
    pop = run.avg_test_loss.reshape(R, kr)
    opt = run.avg_train_loss.reshape(R, kr)
    rT = sch["B"] * sch["T"] / n
    pair = ({"pop_risk_nonprivate": pop[:, 1], "private_over_nonprivate": pop[:, 0] / pop[:, 1],
             "opt_risk_nonprivate": opt[:, 1]} if paired else {})
    return {"pop_risk": pop[:, 0], "opt_risk": opt[:, 0], **pair,
            "max_drift": run.max_drift.reshape(R, kr)[:, 0],
            "clip_fraction": run.clip_fraction.reshape(R, kr)[:, 0],
            "gamma0": np.full(R, inst.gamma0), "lam": np.full(R, lam),
            # F.12's participation condition, as used (it holds on every kept grid point)
            "f12_rT": np.full(R, rT), "f12_rT_needed": np.full(R, 3 * math.log(2 / sch["delta"])),
            # the width the corollary assumes (m ≍ γ⁻⁶) beside the width used
            "width_cor53": np.full(R, inst.gamma0 ** -6),
            "width_hi_ratio": np.full(R, width_hi_ratio(_thm52_values(point))), **meter.columns(),
            **calibration_routes(priv, "thm5.1", lam, sch["T"], n, sch["B"], "fresh",
                                 float(point["epsilon"]), sch["delta"], R),
            **privacy_columns(priv, R), **_common(point, run, R)}


def _run_cor53_paired(point: dict, rngs: list) -> dict:
    """:func:`_run_cor53` with the non-private row (the ratio experiment's metric needs it)."""
    return _run_cor53(point, rngs, paired=True)


def _cor53_values(point: dict) -> dict:
    inst = _instance(point)
    sch = cor53_schedule(int(point["n"]), inst.gamma0, point["epsilon"], inst.d, inst.model.m,
                         point["sample_frac"], point["T_const"])
    return {"n": point["n"], "d": inst.d, "epsilon": point["epsilon"], "gamma": inst.gamma0,
            "delta": sch["delta"], "m": inst.model.m, "sample_frac": point["sample_frac"]}


def _thm52_values(point: dict) -> dict:
    """Theorem 5.2's symbols at what the run really uses: the schedule's (η, T, B, δ), F.12's κ
    (the calibration that set it), λ, m, d and the instance's γ₀."""
    inst = _instance(point)
    n = int(point["n"])
    sch = cor53_schedule(n, inst.gamma0, point["epsilon"], inst.d, inst.model.m,
                         point["sample_frac"], point["T_const"])
    kappa = pairs.kappa_thm_f12(float(point["lam"]), sch["T"], sch["B"], n, point["epsilon"],
                                sch["delta"])
    return {"n": n, "d": inst.d, "m": inst.model.m, "gamma": inst.gamma0, "eta": sch["eta"],
            "T": sch["T"], "B": sch["B"], "delta": sch["delta"], "lam": float(point["lam"]),
            "noise_multiplier": kappa}


_COR53_FIXED = {"m": 32, "d": 5, "p": 6, "margin_quantile": 0.95, "epsilon": 1.0, "lam": 0.5,
                "sample_frac": 0.5, "T_const": 2.0, "C_clip": 0.5}
_COR53_DESC = ("Feasible regime: γ₀ ≈ 0.32 (margin quantile 0.95), ρ = 1/2, c_T = 2 and the "
               "corollary's own δ = min{1/(n√m), γ/n} put every grid point inside F.12's "
               "rT ≥ 3 ln(2/δ) (rows: f12_rT, f12_rT_needed); n < n_c = d/(γ⁶ε²) ≈ 4500, the "
               "privacy branch (T = 2nεγ²/√d).  Not inside the corollary's width: m = 32 "
               "against m ≍ γ⁻⁶ ≈ 900 (rows: width_cor53).")

#: The level of Theorem 5.2 and C.23 on kan.cor53.n: both are upper bounds with constant 1 and
#: every log as stated, judged as findings of the slope (KAN-E42).
_POPULATION_LEVEL = dict(
    level=(1e-3, 3.0), level_source="theorem", use_asymptotic=False,
    level_reason="≲ with constant 1 and every log kept as stated: the risk may not exceed the "
                 "bound by more than the hidden constant (3); the lower end flags a bound that "
                 "is off by more than 10³",
    expect="finding", finding_on="slope")


COR53_N = register(Experiment(
    id="kan.cor53.n",
    paper="kan",
    title="Cor. 5.3 (λ = 0.5, B = n/2, T = 2·min{√n/γ, nεγ²/√d}, κ from F.12 at ε = 1): "
          "population risk vs n",
    variable="n",
    quick_grid=(600, 1200, 2400),
    full_grid=(600, 1200, 2400, 4800, 9600),
    fixed=_COR53_FIXED,
    seeds=20,   # at 4 the CI (±0.057) straddled the edge of A (INCONCLUSIVE)
    run=_run_cor53,
    metric="pop_risk",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, fresh batches B = n/2, κ from Theorem F.12 (zero-out)",
    description=_COR53_DESC
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.35, m/m_hi = 34–83 (rows "
                  "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:cor5.3", "one-sided", 0.15,
              "one-sided: an upper bound (polylog dropped); the averaged population risk may "
              "fall faster.  0.15 covers 20 seeds (CI half-width ≈ 0.02; at 4 seeds, ≈ 0.06, the 99% interval a finding needs straddled A) and the iterate "
              "average's start at log 2",
              expect="finding",
              note="KAN-E30: slope ≈ −0.3 against the corollary's local −0.83 on n ∈ [600, 2400]; "
                   "m γ₀⁶ = 0.034, so the corollary's width m ≍ γ⁻⁶ fails by 30× (as KAN-E26 for "
                   "Cor 5.5); the private/non-private ratio stays bounded (kan.cor53.ratio.n)"),
        Check("kan:thm5.2", "one-sided", 0.15,
              "Theorem 5.2 itself, (1 + ηT/n)(A_corr + (√m + R_*)δ), evaluated at each point's "
              "own η, T, B, δ, λ, F.12 κ, m and γ₀ (not the corollary's simplification): an "
              "upper bound, so one-sided; 0.15 as for the corollary",
              values=_thm52_values,
              **_POPULATION_LEVEL,
              note="KAN-E42: at the run's own parameters the theorem falls like n^−1.1 from "
                   "16 to 3.5 (above log 2, vacuous) on the quick grid while the risk falls "
                   "like n^−0.3; the risk stays below it at every point (the level band holds)"),
        Check("kan:thmC.23", "one-sided", 0.15,
              "Theorem C.23, the appendix form with its logs (1 + ηT log(1/δ)/n)(A_corr + "
              "log(n/δ)(√m + R_*)δ), at the same values; one-sided, same tolerance",
              values=_thm52_values,
              **_POPULATION_LEVEL,
              note="KAN-E42: at the run's own parameters C.23 falls like n^−1.0 from 25.8 "
                   "to 6.2 (above log 2, vacuous) on the quick grid while the risk falls like "
                   "n^−0.3; the risk stays below it at every point (the level band holds)"),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in n, ruled out by the same data"),
    ),
))

COR53_RATIO_N = register(Experiment(
    id="kan.cor53.ratio.n",
    paper="kan",
    title="Cor. 5.3's regime: private/non-private population risk at equal (η, T, B) vs n",
    variable="n",
    quick_grid=(600, 1200, 2400),
    full_grid=(600, 1200, 2400, 4800, 9600),
    fixed=_COR53_FIXED,
    seeds=4,
    run=_run_cor53_paired,
    metric="private_over_nonprivate",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, B = n/2, κ from F.12 and κ = 0 (paired: same data, "
              "batches, Z)",
    description=_COR53_DESC + "  The corollary's content in its privacy branch: the noise is "
                              "subdominant, so the private risk stays within a constant factor "
                              "of the non-private run's."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.35, m/m_hi = 34–83 (rows "
                  "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:cor5.3_noise_ratio", "one-sided", 0.1,
              "one-sided: the noise terms over the optimisation term are O(1) in n under the "
              "corollary's choices (bound slope ≈ 0), so the ratio may fall but not grow.  0.1: "
              "the ratio is paired (same data, batches, Z), its seed spread is ≈ 5% (CI "
              "half-width ≈ 0.08 on 4 seeds over a 4× range of n)",
              level=(0.6, 1.0),
              level_source="theorem", level_reason="observed/bound ≤ 1 is the ratio bound with constant 1 (≈ 1.38 here); "
                           "the private risk is not below the non-private one on average, so "
                           "observed ≥ 1/1.38 = 0.72, less seed noise (0.6)"),
        Check("kan:wang_dpgd", "reject", 0.1,
              "competitor: a ratio falling like the private term √d/(γ⁴nε) alone (slope −1), "
              "i.e. noise that dominates at small n and vanishes; the data must rule it out"),
    ),
))


_COR53_EPS_FIXED = {k: v for k, v in _COR53_FIXED.items() if k != "epsilon"} | {"n": 2400}

#: The ε sweep's level floor: the corollary is an upper bound with its constants and
#: polylog(n/δ) hidden, so the lower end only excludes a vanishing risk.
_COR53_FLOOR = ("design floor (an upper bound with its constants and polylog(n/δ) hidden: it "
                "only excludes a vanishing risk)")

COR53_EPS = register(Experiment(
    id="kan.cor53.eps",
    paper="kan",
    title="Cor. 5.3 (λ = 0.5, B = n/2, T = 2·min{√n/γ, nεγ²/√d}, κ from F.12, n = 2400): "
          "population risk vs ε",
    variable="epsilon",
    quick_grid=(0.4, 0.63, 1.0),
    full_grid=(0.35, 0.4, 0.5, 0.63, 0.8, 1.0),
    fixed=_COR53_EPS_FIXED,
    seeds=4,
    run=_run_cor53,
    metric="pop_risk",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, fresh batches B = n/2, κ from Theorem F.12 (zero-out)",
    description="F.12 needs ε ≤ 1 and rT ≥ 3 ln(2/δ); with T = 2nεγ²/√d the second admits only "
                "ε ≳ 0.33 at n = 2400 (rows f12_rT, f12_rT_needed), so the ε range is at most 3× "
                "and both grids stay inside it (a point outside raises).  " + _COR53_DESC
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.35, m/m_hi = 74–93 (rows "
                  "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:cor5.3", "one-sided", 0.15,
              "one-sided: an upper bound (polylog dropped) whose ε-dependence is the private term "
              "√d/(γ⁴nε) beside 1/(γ√n); the risk may fall faster in ε but not slower.  0.15: 4 "
              "seeds (CI half-width ≈ 0.05 on a 2.5–2.9× range of ε) and the iterate average's "
              "start at log 2",
              **_held("kan.cor53.eps", "kan:cor5.3", "one-sided", 1e-3, _COR53_FLOOR),
              use_asymptotic=False,
              expect="finding", finding_on="slope",
              history='the band reached the ε → ∞ exponent 0 (A up to +0.15, 0.83 above the local slope −0.68), so a risk 0.42 flatter than the bound passed: narrowed to the local slope alone'),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in ε, ruled out by the same data"),
    ),
))
