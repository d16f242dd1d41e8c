"""KAN paper (Wang et al.), Theorem 4.1 / C.13 in T and B for a private run: Algorithm 1 with
correlated noise (λ = 0.5) whose κ is calibrated by Theorem 5.1 / F.12 from (ε, δ, T, B, n, λ) at
every grid point, swept in T and in B, against A_corr and C.13 evaluated at the run's own
(η, T, B, δ, λ, κ, m, d, γ₀); and the same at λ = 0 with κ from Theorem 5.4 / D.9 against
Theorem D.14 (A_van).

Because the calibration moves κ with T and B (F.12: κ² ∝ rT + √(3rT ln(2/δ)), r = B/n; D.9:
κ ∝ B√T/n), the bound's
slope in T or B is that of the calibrated bound, not of A_corr at a fixed κ.  Each run is paired
with a κ = 0 row on the same data and batches (``opt_risk_nonprivate``): the noise-free run at the
same (η, T, B), whose rate (Theorem E.1's A_non) is the control the private slope must differ
from.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import privacy_pairs as pairs
from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated, f12_conditions
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.lam import calibration_routes
from empirical.papers.kan.problems import (CONSTANT_ONE_LEVEL, _common, _instance,
                                           privacy_columns, sample_rows, width_hi_ratio)


def private_delta(n: int, m: int, gamma: float) -> float:
    """δ = min{1/(n√m), γ/n}, the corollaries' own condition (Corollary 5.3)."""
    return min(1.0 / (n * math.sqrt(m)), gamma / n)


def _schedule(point: dict) -> dict:
    inst = _instance(point)
    n = int(point["n"])
    return {"n": n, "T": int(point["T"]), "B": int(point["B"]), "eta": float(point["eta"]),
            "delta": private_delta(n, inst.model.m, inst.gamma0), "inst": inst}


def _run_private(point: dict, rngs: list) -> dict:
    """Per seed the private run (κ from F.12 for λ > 0, from D.9 at λ = 0, at this point's T and
    B) and a κ = 0 row on the same data, batches and Z (paired)."""
    s = _schedule(point)
    inst, n, T, B = s["inst"], s["n"], s["T"], s["B"]
    eps, lam = float(point["epsilon"]), float(point["lam"])
    cal = _calibration(lam)
    why = f12_conditions(T, B, n, eps, s["delta"]) if cal == "thm5.1" else None
    if why:    # the grids stay inside F.12's conditions; outside them κ would not be certified
        raise ValueError(f"kan.private: (T={T}, B={B}) is outside Theorem F.12's conditions: {why}")
    priv = calibrate(eps, s["delta"], lam=lam, T=T, n=n, B=B, sampler="fresh", calibration=cal)
    H, y = sample_rows(inst, n, rngs)
    H, y = np.repeat(H, 2, axis=0), np.repeat(y, 2, axis=0)
    R = len(rngs)
    meter = NoiseMeter(R)
    run = dp_sgd_correlated(inst.model, H, y, T=T, eta=s["eta"], B=B, C_clip=point["C_clip"],
                            lam=lam, noise_multiplier=[priv.noise_multiplier, 0.0],
                            R_star=math.inf, rng=rngs, rows_per_seed=2,
                            eval_every=max(1, T // 16),
                            observe=correlated_hook(meter, np.full(2 * R, lam), 2, measured=0))
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / B)
    opt = run.avg_train_loss.reshape(R, 2)
    return {"opt_risk": opt[:, 0], "opt_risk_nonprivate": opt[:, 1],
            "noise_excess": opt[:, 0] - opt[:, 1],
            "max_drift": run.max_drift.reshape(R, 2)[:, 0],
            "clip_fraction": run.clip_fraction.reshape(R, 2)[:, 0],
            "gamma0": np.full(R, inst.gamma0), "lam": np.full(R, lam),
            # F.12's participation condition as used (D.9 has none); Theorem 4.1's upper width
            # end (λ = 0: Theorem D.14 has none)
            **({"f12_rT": np.full(R, B * T / n),
                "f12_rT_needed": np.full(R, 3 * math.log(2 / s["delta"])),
                "width_hi_ratio": np.full(R, width_hi_ratio(_values(point)))}
               if cal == "thm5.1" else {}),
            **meter.columns(),
            **calibration_routes(priv, cal, lam, T, n, B, "fresh", eps, s["delta"], R),
            **privacy_columns(priv, R), **_common(point, run, R)}


def _calibration(lam: float) -> str:
    """Theorem 5.1 / F.12 (zero-out) for λ > 0; Theorem 5.4 / D.9 (replace-one) at λ = 0."""
    return "thm5.1" if lam > 0 else "thm5.4"


def _values(point: dict) -> dict:
    """Theorem 4.1's (D.14's at λ = 0) symbols at what the run uses; κ recomputed from the
    calibration's formula (F.12, or D.9 at λ = 0)."""
    s = _schedule(point)
    lam, eps = float(point["lam"]), float(point["epsilon"])
    kappa = (pairs.kappa_thm_f12(lam, s["T"], s["B"], s["n"], eps, s["delta"]) if lam > 0
             else pairs.kappa_thm_d9(s["B"], s["n"], s["T"], eps, s["delta"]))
    return {"n": s["n"], "d": s["inst"].d, "m": s["inst"].model.m, "gamma": s["inst"].gamma0,
            "eta": s["eta"], "T": s["T"], "B": s["B"], "delta": s["delta"],
            "lam": lam, "noise_multiplier": kappa}


_FIXED = {"n": 400, "m": 16, "d": 5, "p": 6, "margin_quantile": 0.95, "epsilon": 1.0,
          "lam": 0.5, "eta": 1.0, "C_clip": 0.5}
_PROBLEM = "NTK teacher with margin γ₀ (G1), m = 16, n = 400; L_S on the training sample"
_ALGORITHM = ("dp_sgd_correlated, λ = 0.5, fresh batches, κ from Theorem F.12 (zero-out) at "
              "each point's (ε, δ, T, B, n, λ); a κ = 0 row on the same data, batches and Z")
_DESC = ("κ is recalibrated at every grid point, so the bound's slope is that of A_corr along "
         "the calibration (κ² ∝ rT + √(3rT ln(2/δ)), r = B/n).  Every point satisfies F.12's "
         "ε ≤ 1 and rT ≥ 3 ln(2/δ) (rows f12_rT, f12_rT_needed).  At constant 1 the bound is "
         "above log 2 (vacuous) on both grids: its quadratic noise term ηκ²md((1−λ)² + λ²η)/B² "
         "carries it.  Outside Theorem 4.1's width window (m·γ₀⁴ in the rows' width_m_gamma4), as "
         "every affordable KAN run.")

#: Theorem 4.1 / C.13 with constant 1 at the run's own parameters.
_LEVEL = CONSTANT_ONE_LEVEL

PRIVATE_T = register(Experiment(
    id="kan.private.T",
    paper="kan",
    title="Private Alg. 1 (λ = 0.5, B = n/2, κ from F.12 at ε = 1 and each T): optimisation "
          "risk vs T against Theorem 4.1 / C.13 at the run's κ",
    variable="T",
    quick_grid=(64, 128, 256),
    full_grid=(64, 128, 256, 512, 1024),
    fixed=_FIXED | {"B": 200},
    seeds=4,
    run=_run_private,
    metric="opt_risk",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM,
    description=_DESC
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.125, m/m_hi = 90–1.5·10⁴ (rows "
                  "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:A_corr", "one-sided", 0.15,
              "one-sided: an upper bound, so the risk may grow more slowly in T (or fall) but not "
              "faster.  0.15: 4 seeds of a risk whose seed spread is ≈ 5–10% (CI half-width "
              "≈ 0.05–0.1 on a 4× range of T)",
              **_LEVEL),
        Check("kan:thmC.13", "one-sided", 0.15,
              "Theorem C.13 with the logs its proof carries, at the same values; one-sided, "
              "same tolerance", **_LEVEL),
        Check("kan:fullbatch_gd_opt", "reject", 0.15,
              "control: the noise-free optimisation term 1/(γ²ηT) of Theorem E.1 / App. E "
              "(slope −1), which the paired κ = 0 row approaches; the private risk's slope must "
              "differ from it"),
    ),
))

PRIVATE_B = register(Experiment(
    id="kan.private.B",
    paper="kan",
    title="Private Alg. 1 (λ = 0.5, T = 128, κ from F.12 at ε = 1 and each B): optimisation "
          "risk vs B against Theorem 4.1 / C.13 at the run's κ",
    variable="B",
    quick_grid=(100, 200, 400),
    full_grid=(100, 141, 200, 283, 400),
    fixed=_FIXED | {"T": 128},
    seeds=6,   # at 4 the competitor's CI (±0.15) straddled its asymptotic edge
    run=_run_private,
    metric="opt_risk",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM,
    description=_DESC + "  B ≥ 100 because F.12's rT ≥ 3 ln(2/δ) needs B ≥ 79 at T = 128."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.125, m/m_hi = 138–718 (rows "
                  "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:A_corr", "one-sided", 0.15,
              "one-sided: an upper bound, so the risk may fall faster in B but not more slowly.  "
              "0.15: 6 seeds (CI half-width ≈ 0.1 on a 4× range of B)",
              **_LEVEL, expect="finding", finding_on="slope",
              note="KAN-E44: the calibrated bound falls like its quadratic noise term (slope "
                   "≈ −1.2 in B) from far above log 2, while the risk cannot fall below the "
                   "noise-free risk, flat in B (kan.nonpriv.B: batch effect ≈ 10⁻³ of the "
                   "bound); the risk stays below the bound at every point"),
        Check("kan:thmC.13", "one-sided", 0.15,
              "Theorem C.13 with the logs its proof carries, at the same values; one-sided, "
              "same tolerance", **_LEVEL, expect="finding", finding_on="slope",
              note="KAN-E44: as for A_corr: the bound falls like its quadratic noise term from far above log 2; the risk stays below it"),
        Check("kan:A_non_minibatch", "reject", 0.15,
              "competitor: the B-dependence Theorem E.1 charges without noise, 1/(γ√(BT)) + η/B "
              "(batch sampling alone; the paired κ = 0 row is flat in B, as kan.nonpriv.B "
              "measures); the data must rule it out"),
    ),
))


# =============================================================================================
# λ = 0: Theorem D.14 (A_van) at the κ Theorem 5.4 / D.9 sets at each point
# =============================================================================================
_FIXED0 = _FIXED | {"lam": 0.0}
_ALGORITHM0 = ("dp_sgd_correlated, λ = 0 (independent noise), fresh batches, κ from Theorem D.9 "
               "(replace-one) at each point's (ε, δ, T, B, n); a κ = 0 row on the same data, "
               "batches and Z")
_DESC0 = ("D.9's κ² = 16B²T/(n²ε) + 32B²T log(1/δ)/(n²ε²) moves as B√T/n, so the noise std "
          "C_clip·κ/B per step is ∝ √T/n and does not depend on B: the bound's noise terms are "
          "flat in B and grow like T.  At constant 1 the bound is above log 2 (vacuous).  Outside "
          "Theorem D.14's width condition (m ≳ log(m/δ)(log⁴T + log²(n/δ))/γ⁴, ≈ 10⁶ here), as "
          "every affordable KAN run; its polylog-free form carries no conditions and is the "
          "primary check.")
#: A_van as printed carries log(1/δ)² ≈ 55 and (log²T + log(n/δ)) on its terms: ≈ 55× its
#: polylog-free form here, so its floor is lower by that factor (and the same 10³ beyond it).
_LEVEL_LOGS = dict(_LEVEL, level=(1e-5, 3.0),
                   level_reason="≲ with constant 1 at the run's own parameters, every printed log "
                                "kept: the risk may exceed the bound by at most the hidden "
                                "constant (3); the lower end flags a bound off by more than 10³ "
                                "beyond its logs' factor (≈ 55 here)")
_VAN_REASON = ("Theorem D.14 with its polylogs dropped (the same exponents as A_van), at the "
               "run's own parameters and D.9 κ: an upper bound, so one-sided")

PRIVATE_T0 = register(Experiment(
    id="kan.private.d9.T",
    paper="kan",
    title="Private Alg. 1 at λ = 0 (B = n/2, κ from D.9 at ε = 1 and each T): optimisation "
          "risk vs T against Theorem D.14 at the run's κ",
    variable="T",
    quick_grid=(64, 128, 256),
    full_grid=(64, 128, 256, 512, 1024),
    fixed=_FIXED0 | {"B": 200},
    seeds=4,
    run=_run_private,
    metric="opt_risk",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM0,
    description=_DESC0
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.125 (row width_m_gamma4), below "
                  "m ≳ γ⁻⁴; λ = 0 has no upper end.",
    checks=(
        Check("kan:A_van_simplified", "one-sided", 0.15,
              _VAN_REASON + "; the risk may grow more slowly in T (or fall), not faster.  0.15: "
              "4 seeds (CI half-width ≈ 0.05–0.1 on a 4× range of T)", **_LEVEL),
        Check("kan:A_van", "one-sided", 0.15,
              "Theorem D.14 as printed (A_van with its logs), at the same values; one-sided, "
              "same tolerance", **_LEVEL_LOGS),
        Check("kan:fullbatch_gd_opt", "reject", 0.15,
              "control: the noise-free optimisation term 1/(γ²ηT) (slope −1), which the paired "
              "κ = 0 row approaches; the private risk's slope must differ from it"),
    ),
))

PRIVATE_B0 = register(Experiment(
    id="kan.private.d9.B",
    paper="kan",
    title="Private Alg. 1 at λ = 0 (T = 128, κ from D.9 at ε = 1 and each B): optimisation "
          "risk vs B against Theorem D.14 at the run's κ",
    variable="B",
    quick_grid=(100, 200, 400),
    full_grid=(50, 71, 100, 141, 200, 283, 400),
    fixed=_FIXED0 | {"T": 128},
    seeds=4,
    run=_run_private,
    metric="opt_risk",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM0,
    description=_DESC0 + "  D.9 has no participation condition, so the full grid reaches "
                         "B = 50."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.125 (row width_m_gamma4), below "
                  "m ≳ γ⁻⁴; λ = 0 has no upper end.",
    checks=(
        Check("kan:A_van_simplified", "one-sided", 0.15,
              _VAN_REASON + "; the risk may fall faster in B, not more slowly.  0.15: 4 seeds "
              "(CI half-width ≈ 0.1: the noise std per step does not depend on B, so the "
              "seeds spread less than kan.private.B's)", **_LEVEL),
        Check("kan:A_van", "one-sided", 0.15,
              "Theorem D.14 as printed (A_van with its logs), at the same values; one-sided, "
              "same tolerance", **_LEVEL_LOGS),
        Check("kan:A_non_minibatch", "reject", 0.15,
              "competitor: the B-dependence Theorem E.1 charges without noise, 1/(γ√(BT)) + η/B "
              "(batch sampling alone); the data must rule it out"),
    ),
))
