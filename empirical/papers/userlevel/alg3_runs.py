"""Run code of Algorithm 3's experiments for the user-level SCO paper (Lowy, Liu, Asi, Theorems
3.2/C.3 and 4.1/D.3, Lemma C.2): the risk run (Algorithm 3 or
the item-level baseline of footnote 3, optionally coupled with a noise-free run), the
gradient-count run, and the phase-1 settings recomputed from the theorem's formulas.

Split from :mod:`empirical.papers.userlevel.alg3`, which declares the experiments (as
:mod:`empirical.papers.kl.problems` is from :mod:`empirical.papers.kl.experiments`): this module holds all that
computes a stored row, so the runner's code fingerprint covers it and nothing else of the paper's
declarations; checks, tolerances and level bands can then change without recomputing points.

The privacy part of the error is measured by coupled runs (``coupled`` in the point): the same
generator copy runs without Gaussian noise (separate noise stream), and on the quadratic
``privacy_excess`` = ½‖x_priv − x_np‖² has the mean of F(x_priv) − F(x_np) exactly.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from algorithms.userlevel.alg3 import accelerated_phased_erm, al24_phased_gd, item_level_baseline
from algorithms.noise_meter import NoiseMeter, user_level_hook
from empirical.papers.userlevel import sensitivity as uls
from empirical.papers.userlevel.common import (PRIVACY_RTOL, _USER_PROBLEMS, _alg3_kw, _int,
                                               _phase_epsilon, _privacy_cols,
                                               _sensitivity_limits)
from empirical.papers.userlevel.problems import QuadraticUsers

from empirical.papers.userlevel.routes import (above_threshold_columns, gaussian_route_columns,
                                               multiplier_route_columns, rdp_gaussian_epsilon)

__all__ = ["_run_alg3_quadratic", "_run_alg3_counts", "_alg3_settings", "_alg3_theory_phase1"]


def _run_alg3_quadratic(point: dict, rngs: list) -> dict:
    """Algorithm 3 (or the item-level baseline) on QuadraticUsers (or, with ``problem`` =
    "logistic", LogisticUsers; ``privacy_excess`` is then not the excess's mean difference,
    the loss not being quadratic, and only ``nonprivate_excess`` is used).

    With ``coupled`` in the point, the same generator copy also runs without Gaussian noise
    (same minibatches, Laplace draws and coins; separate noise stream), giving
    ``privacy_excess`` = ½‖x_priv − x_np‖², whose mean equals F(x_priv) − F(x_np) exactly on the
    quadratic (iterates are affine in the noise).  Tests use it to show the excess is all
    privacy at these sizes; sweeps skip it (it doubles the cost)."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    algo = {"alg3": accelerated_phased_erm, "al24": al24_phased_gd}.get(point["algorithm"],
                                                                      item_level_baseline)
    coupled = bool(point.get("coupled", 0))
    name = point.get("problem", "quadratic")
    if name not in _USER_PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(_USER_PROBLEMS)}, got {name!r}")
    problem = _USER_PROBLEMS[name]
    cols: dict[str, list] = {}
    meter = NoiseMeter(len(rngs))
    # Algorithm 2's AboveThreshold at budget ε/2 on the sensitivity-2 count: Lap(8/ε) once,
    # Lap(16/ε) per query (the paper's scales, recomputed here)
    removal = algo is not item_level_baseline
    at_scales = {"threshold": 8.0 / eps, "query": 16.0 / eps} if removal else {}
    for row_i, g in enumerate(rngs):
        data_rng, alg_rng, noise_rng = g.spawn(3)
        data = problem(n, m, d, data_rng)
        alg_copy = copy.deepcopy(alg_rng)
        res = algo(data, eps, delta, alg_rng, noise_rng=noise_rng, **_alg3_kw(point),
                   **({"observe": user_level_hook(meter, row_i, ("gradient",), at_scales)}
                      if removal else {}))
        row = {"excess": float(data.excess(res.x)[0]),
               "grad_evals": res.grad_evals, "halted": int(res.halted),
               "removed": res.info.get("removed", 0), "at_fired": res.info.get("at_fired", 0),
               "phases": len(res.phases), "tau": res.info["tau"],
               "T_1": res.phases[0]["T_i"], "K_1": res.phases[0]["K_i"],
               "n_1": res.phases[0]["n_i"], "sigma_1": res.phases[0]["sigma_i"],
               "lambda_1": res.phases[0]["lambda_i"],
               "sensitivity_1": res.phases[0]["sensitivity"],
               "schedule_grads": sum(p["T_i"] * p["K_i"] for p in res.phases) * m,
               **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()}}
        row.update(_alg3_settings(point, res, data.L, data.R, data.beta))
        if coupled:
            ref = algo(data, eps, delta, alg_copy, noise=False, **_alg3_kw(point))
            diff = res.x - ref.x
            row["privacy_excess"] = 0.5 * float(diff @ diff)
            row["nonprivate_excess"] = float(data.excess(ref.x)[0])
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {**{k: np.asarray(v) for k, v in cols.items()}, **meter.columns()}


def _alg3_theory_phase1(point: dict, L: float, R: float, beta: float) -> dict:
    """Phase 1 of Algorithm 3 (rates mode, q = ½, c_τ = 1) as Theorem C.3 and Lemma C.2 set it,
    recomputed here from the formulas (not by calling the algorithm's schedule): n_1, λ_1, T_1,
    K_1 and the sensitivity Δ_1 of Lemma C.2 as corrected in UL-E13 (empirical.papers.userlevel.sensitivity,
    an independent implementation); the item-level baseline
    runs the m = 1 schedule with Δ_1 = 2L/K_1; the [AL24] reading (``algorithm`` = "al24")
    uses every phase-1 user in every step, K_1 = n_1, for T_1 = ⌈c_T(1 + β/λ_1)⌉ gradient-descent
    steps (the condition number, not its square root)."""
    n, d = _int(point, "n"), _int(point, "d")
    baseline = point["algorithm"] not in ("alg3", "al24")
    gd = point["algorithm"] == "al24"
    m = 1 if baseline else _int(point, "m")
    eps, dl = float(point["epsilon"]), float(point["delta"])
    kw = _alg3_kw(point)
    q = 0.5
    lam = (L / R) * (1 / math.sqrt(n * m) + math.sqrt(d) / (eps * n * math.sqrt(m)))
    p = 3 * q + 2.5 + math.log(math.sqrt(m)) / math.log(n)
    n1 = int(math.floor((1 - 2 ** -q) * n / 2 ** q))
    lam1 = lam * 2 ** p
    T1 = max(1, int(math.ceil(kw["c_T"] * (1 + (beta / lam1 if gd else math.sqrt(beta / lam1))))))
    K1 = n1 if gd else int(min(n1, math.ceil(kw["c_K1"] * math.log(1 / dl) / eps
                                             + kw["c_K2"] * n1 * eps / math.sqrt(T1))))
    if baseline:
        sens = 2.0 * L / K1
    else:
        tau = L * math.sqrt(math.log(n * d * m) / m)
        sens = uls.alg3_phase_sensitivity(tau, K1, T1, eps, dl)
    return {"n_1": n1, "T_1": T1, "K_1": K1, "sensitivity_1": sens, "baseline": baseline}


def _alg3_settings(point: dict, res, L: float, R: float, beta: float) -> dict:
    """``used_<x>``/``theory_<x>`` (phase 1's T, K, n and sensitivity) and
    ``max_epsilon_1``/``limit_epsilon_1``: phase 1's ε recomputed with dp-accounting from the σ
    the algorithm USED and the theorem's sensitivity, which must not exceed the target; and
    ``max_gauss_1_multiplier_route_gap``: the multiplier the search found against the theorem's
    T_1 releases composed exactly (:func:`empirical.papers.userlevel.routes.multiplier_route_columns`).  The
    settings verdict (empirical/core/checks.py) fails the experiment on any mismatch, so a wrong
    step count, a sensitivity of the wrong relation or an accountant that under-reports is
    caught even where the rate cannot see it."""
    th = _alg3_theory_phase1(point, L, R, beta)
    ph = res.phases[0]
    eps, dl = float(point["epsilon"]), float(point["delta"])
    z_eff = ph["sigma_i"] / th["sensitivity_1"]
    d_gauss = dl if th["baseline"] else dl / 2.0
    e1 = (0.0 if th["baseline"] else eps / 2.0) + _phase_epsilon(
        round(z_eff, 12), th["T_1"], d_gauss, th["n_1"], th["K_1"])
    out = {}
    for k in ("n_1", "T_1", "K_1"):
        out[f"used_{k}"], out[f"theory_{k}"] = float(ph[k[:-2] + "_i"]), float(th[k])
    out["used_sensitivity_1"] = float(ph["sensitivity"])
    out.update(_sensitivity_limits(float(ph["sensitivity"]), th["sensitivity_1"]))
    out["max_epsilon_1"], out["limit_epsilon_1"] = e1, eps * (1 + PRIVACY_RTOL)
    out.update(_alg3_routes(res, eps, th["baseline"]))
    # the multiplier against the theorem's count (T_1 releases at ε/2, δ/2; the baseline's at
    # ε, δ), composed exactly, so that an accountant composing the wrong count is caught
    out.update(multiplier_route_columns("gauss_1", res.privacy.phases[0].z, th["T_1"], d_gauss,
                                        eps if th["baseline"] else eps / 2.0,
                                        2 * th["K_1"] <= th["n_1"]))
    return out


def _alg3_routes(res, eps: float, baseline: bool) -> dict:
    """Second routes of phase 1's calibration (:mod:`empirical.papers.userlevel.routes`): the
    Gaussian part of the ε the accountant charged, at the multiplier it found, recomputed by the
    Gaussian's RDP written out and bounded by the exact ε; where the accountant used WOR
    amplification (2K_1 ≤ n_1) it may only be below the unamplified route, so the gap is
    one-sided there.  Algorithm 2's AboveThreshold: its pure ε from the scales 8/ε, 16/ε that
    the noise meter measures against equals the ε/2 charged."""
    p1 = res.privacy.phases[0]
    acc = p1.guarantee - p1.eps_pure
    cols = gaussian_route_columns("gauss_1", p1.z, p1.count, p1.delta_gauss, acc)
    if p1.population is not None and p1.sample is not None and 2 * p1.sample <= p1.population:
        rdp = rdp_gaussian_epsilon(p1.z, p1.count, p1.delta_gauss)
        cols["max_gauss_1_rdp_route_gap"] = (acc - rdp) / acc
        cols["max_gauss_1_exact_over_rdp"] = 0.0     # the exact ε of the unamplified pair
    if not baseline:
        cols.update(above_threshold_columns(2.0, 8.0 / eps, 16.0 / eps, p1.eps_pure))
    return cols


def _run_alg3_counts(point: dict, rngs: list) -> dict:
    """Gradient evaluations of Algorithm 3's schedule, counted by the oracle on a run.

    AboveThreshold is evaluated but cannot halt (``halt=False``) so that every run completes
    its schedule, and no Gaussian noise is drawn (``noise=False``; the noise never changes what
    is evaluated): a count is a property of the schedule, and with c_K1 = 1 (unsaturated
    minibatches, the regime of Theorem 3.2's count) the test's margin K/5 is below its Laplace
    noise.  Such runs certify no privacy; the experiment is declared non-private.
    """
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    nonsmooth = bool(point.get("nonsmooth", 0))
    cols: dict[str, list] = {}
    for g in rngs:
        data = QuadraticUsers(n, m, d, g)
        res = accelerated_phased_erm(data, eps, delta, g, halt=False, nonsmooth_T=nonsmooth,
                                     solver="gd" if point.get("algorithm") == "al24" else "acsa",
                                     noise=False, **_alg3_kw(point))
        row = {"grad_evals": res.grad_evals,
               "schedule_grads": sum(p["T_i"] * p["K_i"] for p in res.phases) * m,
               "phases": len(res.phases), "T_1": res.phases[0]["T_i"],
               "K_1": res.phases[0]["K_i"], "n_1": res.phases[0]["n_i"],
               "saturated_phases": sum(p["K_i"] == p["n_i"] for p in res.phases)}
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}
