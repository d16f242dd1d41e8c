"""KAN paper (Wang et al.), Theorem 4.1's λ structure and Theorem 5.1's calibration: the λ
sweeps of Algorithm 1 (``algorithms.kan.correlated_noise``) at a fixed noise multiplier and under
each calibration (Theorem 5.1 / F.12, tight accounting with fresh and cyclic batches), checked
against the λ-factors of ``bounds.rates.kan.correlated_noise`` on the NTK-teacher problem of
:mod:`empirical.papers.kan.problems`, and the λ summary figure.
"""
from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from algorithms import privacy_pairs as pairs
from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import (_common, _instance, _test_set, make_instance,
                                           privacy_columns, sample_rows, width_hi_ratio)


# =============================================================================================
# λ at a fixed noise multiplier (Theorem 4.1's λ structure, Remark 4.2)
# =============================================================================================
def _paired_lam_rows(point: dict, rngs: list, kappas: list[float], lams: list[float],
                     n: int, B: int, sampler: str, meter: NoiseMeter | None = None):
    inst = _instance(point)
    H, y = sample_rows(inst, n, rngs)
    k = len(lams)
    H = np.repeat(H, k, axis=0)
    y = np.repeat(y, k, axis=0)
    # the meter measures the last row of each seed (the λ row; rows of a seed share Z)
    hook = (None if meter is None else
            correlated_hook(meter, np.tile(np.asarray(lams, dtype=float), len(rngs)), k))
    run = dp_sgd_correlated(inst.model, H, y, T=int(point["T"]), eta=point["eta"], B=B,
                            C_clip=point["C_clip"], lam=lams, noise_multiplier=kappas,
                            R_star=math.inf, rng=rngs, sampler=sampler, rows_per_seed=k,
                            eval_every=int(point["eval_every"]),
                            eval_subsample=int(point.get("eval_subsample", n)), observe=hook)
    return inst, run


def _width_hi(point: dict, inst, kappa: float, B: int, lam: float) -> float:
    """m/m_hi of Theorem 4.1's window for the λ row (:func:`width_hi_ratio`)."""
    return width_hi_ratio({"B": B, "eta": point["eta"], "noise_multiplier": kappa,
                           "gamma": inst.gamma0, "d": inst.d, "T": point["T"], "lam": lam,
                           "m": inst.model.m})


def _run_lam_fixed(point: dict, rngs: list) -> dict:
    """Rows per seed: non-private, λ = 0 and λ at the same κ, same batches and Z.
    Metric: E(λ)/E(0), E = avg L_S(noisy) − avg L_S(non-private) (paired)."""
    lam, kappa = float(point["lam"]), float(point["noise_multiplier"])
    n = int(point["n"])
    inst, run = _paired_lam_rows(point, rngs, [0.0, kappa, kappa], [0.0, 0.0, lam], n, n, "fresh")
    L = run.avg_train_loss.reshape(len(rngs), 3)
    e0, el = L[:, 1] - L[:, 0], L[:, 2] - L[:, 0]
    dsq = run.final_drift_sq.reshape(len(rngs), 3)
    R = len(rngs)
    T, m, dp = int(point["T"]), inst.model.m, inst.model.dim // inst.model.m
    c = point["C_clip"] * kappa / n
    steps = T - 1
    # closed form of the noise drift (cancellation identity): E‖ηcΣ_s(Z_s − λZ_{s−1})‖² =
    # η²c² mdp (1 + (1 − λ)²(steps − 1))
    pred = point["eta"] ** 2 * c * c * m * dp * (1 + (1 - lam) ** 2 * (steps - 1))
    hi = _width_hi(point, inst, kappa, n, lam)
    return {"noise_excess_ratio": el / e0, "excess_lam": el, "excess_lam0": e0,
            "width_hi_ratio": np.full(R, hi),
            "loss_nonprivate": L[:, 0], "drift_sq_noise": dsq[:, 2], "drift_sq_signal": dsq[:, 0],
            "drift_sq_noise_pred": np.full(R, pred), "noise_std": np.full(R, c),
            "lam": np.full(R, lam), "noise_multiplier": np.full(R, kappa),
            "gamma0": np.full(R, inst.gamma0), "clip_fraction": run.clip_fraction.reshape(R, 3)[:, 2],
            **_common(point, run, R)}


#: Quick grid of the four λ sweeps.  λ = 0.8 was dropped (a fifth of their cost): on the other four
#: points every verdict and level stayed and the CIs moved by < 0.05 (re-analysed from the same
#: seeds); the full grids keep 0.8 and 0.85.
_LAM_QUICK = (0.3, 0.5, 0.7, 0.9)


def _lam_values(point: dict) -> dict:
    return {"lam": point["lam"], "eta": point["eta"], "T": point["T"]}


def _lam_ratio_values(point: dict) -> dict:
    """Symbol values of A_corr's noise ratio at this run's parameters (full batch: B = n; γ = γ₀,
    the margin the instance guarantees)."""
    inst = _instance(point)
    lam = 1.0 - point["lam_gap"] if "lam_gap" in point else point["lam"]
    return {"lam": lam, "lam_gap": 1.0 - lam, "eta": point["eta"], "T": point["T"],
            "B": point["n"], "m": point["m"], "d": point["d"],
            "noise_multiplier": point["noise_multiplier"], "gamma": inst.gamma0}


@lru_cache(maxsize=8)
def beta_hat(m: int, d: int, p: int, q: float, seed: int = 0) -> float:
    """The paper's β (sup_x ¼‖∇f‖² + ‖∇²f‖, Lemma B.7) measured at W₀ over the instance's
    held-out sample: a lower estimate of β, so 12β̂η > 1 already breaks η ≤ 1/(12β)."""
    inst = make_instance(m, d, p, q, seed)
    H, _ = _test_set(m, d, p, q, seed)
    return float(inst.model.smoothness(inst.model.W0[None], H).max())


def _lam_ratio_explicit_values(point: dict) -> dict:
    key = (int(point["m"]), int(point["d"]), int(point["p"]), float(point["margin_quantile"]),
           int(point.get("instance_seed", 0)))
    return {**_lam_ratio_values(point), "beta": beta_hat(*key)}


#: Level band of E(λ)/E(0) ÷ A_corr's noise ratio at fixed κ (kan:lam_fixed_kappa_ratio).
_RATIO_LEVEL = (0.05, 1.3)
_RATIO_LEVEL_REASON = (
    "E(λ)/E(0) ÷ (L(1−λ) + Q((1−λ)²+ηλ²))/(L+Q) at the run's L : Q (A_corr's own split, "
    "≈ 1 : 63 here).  One-sided in substance (A_corr is an upper bound): any non-negative mix of "
    "the two noise terms gives E(λ)/E(0) ≤ max(1−λ, (1−λ)²+ηλ²), which is ≤ 1.21 × the ratio on "
    "[0, 1) (the maximum, at λ = 1 − 1/√2, is reached only by an all-linear excess); 1.3 adds one "
    "8-seed standard error of the log ratio (≈ 0.07).  The lower end is not the theorem's: 0.05 "
    "only excludes an excess that vanishes as λ → 1 (a floorless (1−λ)² gives 0.003 at λ = 0.95, "
    "(1−λ) at λ = 0.995 gives 0.005); the printed ηλ² overstates the floor ≈ 10× (level ≈ 0.1 "
    "for λ ≥ 0.9, KAN-E22)")

LAM_FIXED = register(Experiment(
    id="kan.lam.fixed_kappa",
    paper="kan",
    title="Alg. 1 full batch, λ at a fixed noise multiplier: noise-induced excess E(λ)/E(0) "
          "(Thm 4.1's (1−λ) and (1−λ)²+ηλ² factors, Remark 4.2)",
    variable="lam",
    quick_grid=_LAM_QUICK,
    full_grid=(0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    fixed={"n": 100, "m": 32, "d": 5, "p": 6, "margin_quantile": 0.5, "T": 300, "eta": 1.0,
           "C_clip": 1.0, "noise_multiplier": 20.0, "eval_every": 5},
    seeds=8,
    run=_run_lam_fixed,
    metric="noise_excess_ratio",
    bound_values=_lam_ratio_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1), full batch B = n",
    algorithm="algorithms.kan.correlated_noise.dp_sgd_correlated (Algorithm 1), κ fixed, unprojected",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.0099, m/m_hi = 17–31 (rows "
                "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:lam_fixed_kappa_ratio", "one-sided", 0.3,
              "ratio test on E(λ)/E(0) against A_corr's whole noise part at fixed κ, linear and "
              "quadratic terms at the run's split (KAN-E37): an upper bound, so the excess may fall "
              "faster but not slower; 0.3 allows 8 paired seeds (bootstrap CI half-width ≈ 0.25: "
              "the denominator E(0) varies with the data set)",
              level=_RATIO_LEVEL, level_source="theorem", level_reason=_RATIO_LEVEL_REASON),
        Check("kan:lam_linear", "one-sided", 0.3,
              "slope only: the linear factor 1−λ bounds how slowly the excess may fall while the "
              "quadratic term is small (12βη ≤ 1); 0.3 as above.  Its level (E(λ)/E(0) ÷ (1−λ) ≤ 1.2) "
              "was this experiment's level check until KAN-E37: it holds to λ = 0.9 and fails at "
              "λ = 0.95 (1.72), where the ηλ² floor dominates; the level is now judged against the "
              "full factor above, and (1−λ) alone is rejected near λ → 1 by kan.lam.fixed_kappa.floor"),
        Check("kan:lam_quadratic", "reject", 0.3,
              "A_corr's quadratic factor (1−λ)² + ηλ² with the printed constant 1 at η = 1 has its "
              "minimum at λ* = 1/(1+η) = 0.5 and rises beyond; the data must rule that rise out "
              "(errata KAN-E22; the theorem asks 12βη ≤ 1, the measured 12β̂η is 17.6, KAN-E38)"),
        Check("kan:lam_fixed_kappa_ratio_explicit", "reject", 0.3,
              "the explicit-constant reading (Lemma C.3's 12βηλ²) at β̂, the paper's β measured on "
              "this instance (sup ¼‖∇f‖² + ‖∇²f‖ at W₀, 2000 held-out inputs): 12β̂η ≈ 17.6, so "
              "the factor rises to ≈ 15× its λ = 0 value at λ = 0.95; the data must rule it out "
              "(KAN-E38: the run is outside η ≤ 1/(12β), and the observed floor is ≈ 200× below "
              "12β̂η)",
              values=_lam_ratio_explicit_values),
    ),
))


def _run_lam_floor(point: dict, rngs: list) -> dict:
    """kan.lam.fixed_kappa's run at λ = 1 − lam_gap."""
    out = _run_lam_fixed({**point, "lam": 1.0 - float(point["lam_gap"])}, rngs)
    out["lam_gap"] = 1.0 - out["lam"]
    return out


#: kan.lam.fixed_kappa's instance, seeds and metric, swept in 1 − λ towards λ → 1.
LAM_FIXED_FLOOR = register(dataclasses.replace(
    LAM_FIXED,
    id="kan.lam.fixed_kappa.floor",
    title="Alg. 1 full batch, λ → 1 at a fixed noise multiplier: the floor of E(λ)/E(0) "
          "(A_corr's ηλ² term) against the floorless (1−λ)",
    variable="lam_gap",
    quick_grid=(0.05, 0.02, 0.01),
    full_grid=(0.1, 0.05, 0.02, 0.01, 0.005),
    run=_run_lam_floor,
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.0099, m/m_hi = 28–33 (rows "
                "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    problem="NTK teacher with margin γ₀ (G1), full batch B = n (kan.lam.fixed_kappa's instance)",
    algorithm="dp_sgd_correlated (Algorithm 1), κ fixed, unprojected, λ = 1 − lam_gap",
    checks=(
        Check("kan:lam_fixed_kappa_ratio_gap", "one-sided", 0.3,
              "slope in 1 − λ: the full factor flattens to its floor Qη/(L+Q) (local slope ≈ −0.06 "
              "here), so the excess may not grow as 1 − λ shrinks faster than that; 0.3 allows 8 "
              "paired seeds over 0.7–1.3 decades of 1 − λ (CI half-width ≈ 0.15–0.25)",
              level=_RATIO_LEVEL, level_source="theorem", level_reason=_RATIO_LEVEL_REASON),
        Check("kan:lam_linear_gap", "reject", 0.3,
              "competitor: (1−λ) alone (slope +1 in 1 − λ, local and asymptotic), the reading of "
              "kan.lam.fixed_kappa's old level band; a floored excess must rule it out"),
    ),
))


# =============================================================================================
# λ under a privacy calibration: Theorem 5.1 (F.12) and the tight accountant, per sampler
# =============================================================================================
def _run_lam_calibrated(point: dict, rngs: list) -> dict:
    """Rows per seed: non-private, λ = 0 and λ, each private row with κ from ``calibration`` at
    the same (ε, δ); same batches and Z.  Metric: E_cal(λ)/E_cal(0).  The privacy columns are
    those of the λ row (the λ = 0 reference row is certified at the same ε by the same route)."""
    lam = float(point["lam"])
    n, B, T = int(point["n"]), int(point["B"]), int(point["T"])
    sampler = "cyclic" if point["sampler_cyclic"] else "fresh"
    cal = {0: "thm5.1", 1: "tight"}[int(point["calibration_tight"])]
    eps, delta = point["epsilon"], point["delta"]
    priv = calibrate(eps, delta, lam=lam, T=T, n=n, B=B, sampler=sampler, calibration=cal)
    # λ = 0 reference by the same accountant route as λ > 0 (for fresh batches: the truncation
    # route, i.e. no amplification by subsampling, which only exists for λ = 0); the amplified
    # λ = 0 noise multiplier is reported beside it
    priv0 = calibrate(eps, delta, lam=0.0, T=T, n=n, B=B, sampler=sampler, calibration=cal,
                      amplification=False)
    amp0 = (calibrate(eps, delta, lam=0.0, T=T, n=n, B=B, sampler=sampler, calibration=cal).noise_multiplier
            if cal == "tight" else priv0.noise_multiplier)
    R = len(rngs)
    meter = NoiseMeter(R)
    inst, run = _paired_lam_rows(point, rngs, [0.0, priv0.noise_multiplier, priv.noise_multiplier],
                                 [0.0, 0.0, lam], n, B, sampler, meter)
    # the fresh noise's std the accountant priced: C_clip·κ/B with κ from the calibration
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / B)
    L = run.avg_train_loss.reshape(R, 3)
    e0, el = L[:, 1] - L[:, 0], L[:, 2] - L[:, 0]
    cols = privacy_columns(priv, R)
    cols.update(calibration_routes(priv, cal, lam, T, n, B, sampler, eps, delta, R))
    cols.update(meter.columns())
    return {"noise_excess_ratio": el / e0, "excess_lam": el, "excess_lam0": e0,
            "width_hi_ratio": np.full(R, _width_hi(point, inst, priv.noise_multiplier, B, lam)),
            "loss_nonprivate": L[:, 0], "noise_multiplier_lam0": np.full(R, priv0.noise_multiplier),
            "noise_multiplier_lam0_amplified": np.full(R, amp0),
            "kappa_ratio": np.full(R, priv.noise_multiplier / priv0.noise_multiplier),
            "epsilon_lam0_guarantee": np.full(R, priv0.epsilon_guarantee),
            "noise_std": np.full(R, point["C_clip"] * priv.noise_multiplier / B),
            "lam": np.full(R, lam), "gamma0": np.full(R, inst.gamma0),
            "clip_fraction": run.clip_fraction.reshape(R, 3)[:, 2],
            **cols, **_common(point, run, R)}


def calibration_routes(priv, cal: str, lam: float, T: int, n: int, B: int, sampler: str,
                       eps: float, delta: float, R: int) -> dict:
    """Second routes of a calibration, as settings-verdict columns.  The paper's calibrations:
    κ against the theorem's formula written out in :mod:`algorithms.privacy_pairs`
    (``used_``/``theory_noise_multiplier``, relative 1e-9).  The tight one with cyclic batches:
    its certified ε against the exact Gaussian ε recomputed there (sensitivity by direct
    recursion, ε by the hockey-stick formula); with fresh batches: its certified ε against the
    truncation argument of Theorems F.8–F.12 recomputed there (exact binomial tail, sensitivity
    over every block start, exact Gaussian ε).  A relative gap above 1e-6 (the two root finders'
    rounding is ≤ 1e-9) fails (``max_``/``limit_epsilon_route_gap``)."""
    full = lambda v: np.full(R, float(v))  # noqa: E731
    if cal == "thm5.4":
        return {"used_noise_multiplier": full(priv.noise_multiplier),
                "theory_noise_multiplier": full(pairs.kappa_thm_d9(B, n, T, eps, delta))}
    if cal == "thm5.1":
        return {"used_noise_multiplier": full(priv.noise_multiplier),
                "theory_noise_multiplier": full(pairs.kappa_thm_f12(lam, T, B, n, eps, delta))}
    relation = "replace-one" if priv.relation == "replace-one" else "zero-out"
    if cal == "tight" and sampler == "cyclic":
        exact = pairs.cyclic_epsilon_exact(priv.noise_multiplier, lam, T - 1, n, B, delta,
                                           relation)
        return {"epsilon_route_exact": full(exact),
                "max_epsilon_route_gap": full(abs(priv.epsilon_guarantee - exact) / exact),
                "limit_epsilon_route_gap": full(1e-6)}
    if cal == "tight" and sampler == "fresh":
        # the truncation argument recomputed (exact binomial tail, sensitivity over every block
        # start, exact Gaussian ε).  It is the accountant's only route for λ > 0 or B = n, so
        # the two must agree; at λ = 0 with B < n the accountant may also use amplification by
        # subsampling, which can only lower its ε: there only an ε above the route's fails.
        route = pairs.fresh_truncation_epsilon(priv.noise_multiplier, lam, T - 1, n, B, delta,
                                               relation)
        gap = (priv.epsilon_guarantee - route) / route
        if not (lam == 0 and B < n):
            gap = abs(gap)
        return {"epsilon_route_exact": full(route),
                "max_epsilon_route_gap": full(max(gap, 0.0)),
                "limit_epsilon_route_gap": full(1e-6)}
    return {}


def _lam_cal_values(point: dict) -> dict:
    return {"lam": point["lam"], "eta": point["eta"], "T": point["T"]}


#: Level band of the calibrated λ sweeps (E(λ)/E(0) ÷ the calibrated quadratic factor).
_CAL_LEVEL = (1e-3, 1.2)
_CAL_LEVEL_REASON = ("E(λ)/E(0) ÷ ((1−λ)²+ηλ²)((1−λ^T)/(1−λ))²: the hidden constants cancel in "
                     "the paired ratio and the factor is 1 at λ = 0, so ≤ 1 is the bound itself "
                     "(1.2: 8-seed noise of the ratio, measured 0.87 at λ = 0.3).  The lower end "
                     "only excludes an excess that vanishes: the logistic loss saturates, so the "
                     "cost grows far more slowly than the factor (measured 0.016–0.02 at λ = 0.9, "
                     "factor ≈ 65; ≈ 360 at λ = 0.95 on the full grid)")

_CAL_BASE = {"m": 16, "d": 5, "p": 6, "margin_quantile": 0.5, "T": 200, "eta": 1.0,
             "C_clip": 0.5, "epsilon": 1.0, "delta": 1e-4, "eval_every": 20}

LAM_THM51 = register(Experiment(
    id="kan.lam.thm51",
    paper="kan",
    title="Alg. 1, λ under the Theorem 5.1 (F.12) calibration: E(λ)/E(0) at equal (ε, δ) — "
          "no gain, a cost growing like ηλ²/(1−λ)²",
    variable="lam",
    quick_grid=_LAM_QUICK,
    full_grid=(0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    fixed={**_CAL_BASE, "n": 1000, "B": 200, "sampler_cyclic": 0, "calibration_tight": 0},
    seeds=8,
    run=_run_lam_calibrated,
    metric="noise_excess_ratio",
    bound_values=_lam_cal_values,
    problem="NTK teacher with margin γ₀ (G1); fresh batches, B/n = 0.2",
    algorithm="dp_sgd_correlated (Algorithm 1), κ(λ) from Thm F.12 as stated",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.0037, m/m_hi = 39–1.3·10⁴ (rows "
                "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:lam_quadratic_calibrated", "one-sided", 0.35,
              "ratio test: the calibrated bound's λ-factor ((1−λ)²+ηλ²)((1−λ^T)/(1−λ))² is an upper "
              "bound on how fast the cost may grow; the loss saturates (ℓ ≤ log 2 + |f|), so "
              "slower growth is allowed; 0.35 covers 8 paired seeds (CI half-width ≈ 0.25, one "
              "seed in eight saturates at λ = 0.9)",
              level=_CAL_LEVEL, level_source="theorem", level_reason=_CAL_LEVEL_REASON),
        Check("kan:lam_linear", "reject", 0.3,
              "competitor: the fixed-κ gain (1−λ) of Remark 4.2; under the calibration κ grows "
              "like (1−λ^T)/(1−λ) and cancels it, so the data must rule out any decrease"),
    ),
))

_TIGHT_FIXED = {**_CAL_BASE, "n": 4000, "B": 200, "calibration_tight": 1, "epsilon": 0.1,
                "eval_every": 20, "eval_subsample": 1000}

LAM_TIGHT_FRESH = register(Experiment(
    id="kan.lam.tight.fresh",
    paper="kan",
    title="Alg. 1, λ under tight accounting, fresh batches (the paper's sampler): E(λ)/E(0) "
          "at equal (ε, δ) — the open question",
    variable="lam",
    quick_grid=_LAM_QUICK,
    full_grid=(0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    fixed={**_TIGHT_FIXED, "sampler_cyclic": 0},
    seeds=8,
    run=_run_lam_calibrated,
    metric="noise_excess_ratio",
    bound_values=_lam_cal_values,
    problem="NTK teacher with margin γ₀ (G1); fresh batches, B/n = 0.05",
    algorithm="dp_sgd_correlated (Algorithm 1), κ(λ) from dp-accounting with the exact "
              "matrix-mechanism sensitivity (adjacent participations possible)",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.0037, m/m_hi = 97–1.4·10⁴ (rows "
                "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:lam_quadratic_calibrated", "one-sided", 0.35,
              "with adjacent participations possible, the exact worst case is a contiguous block "
              "whose sensitivity grows like 1/(1−λ), as in F.11; the calibrated shape bounds the "
              "growth; 0.35 covers 8 paired seeds (CI half-width ≈ 0.2)",
              level=_CAL_LEVEL, level_source="theorem", level_reason=_CAL_LEVEL_REASON),
        Check("kan:lam_linear", "reject", 0.3,
              "competitor: a λ gain (1−λ); tight accounting of fresh batches must still rule it out"),
    ),
))

LAM_TIGHT_CYCLIC = register(Experiment(
    id="kan.lam.tight.cyclic",
    paper="kan",
    title="Alg. 1, λ under tight accounting, cyclic batches (separation ⌊n/B⌋ = 20): E(λ)/E(0) "
          "at equal (ε, δ) — the open question",
    variable="lam",
    quick_grid=_LAM_QUICK,
    full_grid=(0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    fixed={**_TIGHT_FIXED, "sampler_cyclic": 1},
    seeds=8,
    run=_run_lam_calibrated,
    metric="noise_excess_ratio",
    bound_values=_lam_cal_values,
    problem="NTK teacher with margin γ₀ (G1); cyclic fixed-order batches, B/n = 0.05",
    algorithm="dp_sgd_correlated (Algorithm 1), κ(λ) from dp-accounting with the exact "
              "matrix-mechanism sensitivity for participations 20 steps apart",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.0037, m/m_hi = 23–644 (rows "
                "width_m_gamma4, width_hi_ratio): outside Theorem 4.1's window at both ends.",
    checks=(
        Check("kan:lam_linear", "one-sided-lower", 0.35,
              "with participations ⌊n/B⌋ ≫ 1/(1−λ) apart the sensitivity grows only like "
              "1/√(1−λ²), so the fixed-κ gain survives in part: E(λ)/E(0) falls at most as fast "
              "as (1−λ) (a lower bound: κ(λ) ≥ κ(0)); 0.35 covers 8 paired seeds (CI half-width ≈ 0.3)",
              level=(0.7, 30.0),
              level_source="theorem", level_reason="E(λ)/E(0) ÷ (1−λ): the fixed-κ gain (1−λ) is the most a larger κ(λ) "
                           "can leave, so the ratio is ≥ 1 up to seed noise (measured 0.97 at "
                           "λ = 0.3; 0.7 allows 8-seed noise); above: κ(λ)²/κ(0)² ≤ 1/(1−λ²) "
                           "(separated participations) bounds the growth of the quadratic part "
                           "and (1−λ)⁻¹ ≤ 20 on the full grid, so 30 (measured up to 5.8 at "
                           "λ = 0.9) flags an excess growing faster than the noise variance allows"),
        Check("kan:lam_quadratic_calibrated", "reject", 0.3,
              "competitor: the paper's calibrated no-gain shape (increasing in λ); sharper "
              "accounting with a cyclic sampler must rule it out"),
    ),
))


# =============================================================================================
# Summary figure: E(λ)/E(0) under the four λ regimes on one plot
# =============================================================================================
from empirical.core.experiment import Summary, register_summary  # noqa: E402

_LAM_IDS = ("kan.lam.fixed_kappa", "kan.lam.thm51", "kan.lam.tight.fresh", "kan.lam.tight.cyclic")


def _plot_lambda_summary(analyses, root):
    """E(λ)/E(0) against λ for the fixed-κ, Theorem 5.1, tight-fresh and tight-cyclic sweeps,
    with the λ-factors of bounds/ ((1−λ), the calibrated quadratic factor) for reference."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import bounds
    from empirical.store.figures import save_figure

    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=110)
    labels = {"kan.lam.fixed_kappa": "fixed κ (full batch)",
              "kan.lam.thm51": "Thm 5.1 / F.12 calibration (fresh)",
              "kan.lam.tight.fresh": "tight accounting, fresh batches",
              "kan.lam.tight.cyclic": "tight accounting, cyclic batches"}
    for a in analyses:
        xs = np.array(sorted(a.per_point))
        ys = np.array([np.exp(np.mean(np.log(np.clip(a.per_point[v], 1e-6, None)))) for v in xs])
        lo = np.array([np.quantile(a.per_point[v], 0.25) for v in xs])
        hi = np.array([np.quantile(a.per_point[v], 0.75) for v in xs])
        line, = ax.plot(xs, ys, "o-", label=labels.get(a.experiment.id, a.experiment.id))
        ax.fill_between(xs, np.clip(lo, 1e-3, None), hi, color=line.get_color(), alpha=0.15)
    grid = np.linspace(0.3, 0.9, 50)
    lin = bounds.get("kan:lam_linear")
    ax.plot(grid, [float(lin(lam=v)) for v in grid], "k--", lw=1, label="1 − λ (fixed-κ linear factor)")
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("noise-induced excess E(λ)/E(0), paired")
    ax.set_title("kan.summary.lambda\nλ gains: fixed κ yes; Thm 5.1 and tight-fresh no; "
                 "tight-cyclic yes (KAN-E24)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.25)
    fig.tight_layout()
    return save_figure(fig, Path(root) / "kan" / "kan.summary.lambda.png")


LAMBDA_SUMMARY = register_summary(Summary("kan.summary.lambda", "kan", _LAM_IDS, _plot_lambda_summary))
