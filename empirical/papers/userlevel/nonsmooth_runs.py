"""Run code of Theorem 4.1/D.3's risk experiments for the user-level SCO paper (Lowy, Liu, Asi):
Algorithm 3 on the randomized smoothing f_r of a non-smooth loss (Appendix D), with the radius
r = R√d/(εn√m) and the schedule T_i = 1 + c_T n_i^{3/4}m^{1/2}ε^{1/2}, K_i = ⌈n_iε/√T_i +
c_K1 log(1/δ)/ε⌉ of Theorem D.3's proof, coupled with a noise-free run on the same draws.

Kept apart from the declarations (:mod:`empirical.papers.userlevel.nonsmooth`) so that editing a
check does not change the rows' code fingerprint.

Each seed draws one LadUsers data set (f(x, (a, b)) = |⟨a, x⟩ − b|, L = 1, exact F by
quadrature) and runs smoothed Algorithm 3 on it; a deep copy of the algorithm's generator and of
the smoothing generator runs the same algorithm without Gaussian noise (same minibatches, Laplace
draws, removal coins and smoothing directions; the Gaussian noise has its own stream) over the
phases the private run could certify (a noise-free run computes no sensitivity, so it would
otherwise run the later phases too, and a halt there returns 0).  The rows
keep both excesses of the *unsmoothed* F (the quantity Theorem 4.1 bounds) and the privacy
share 1 − excess(noise-free)/excess(private): the control that shows which part of the bound
the measured slope comes from.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from algorithms.noise_meter import NoiseMeter, user_level_hook
from algorithms.userlevel.alg3 import accelerated_phased_erm
from algorithms.userlevel.data import SmoothedUserData
from empirical.papers.userlevel import sensitivity as uls
from empirical.papers.userlevel.alg3_runs import _alg3_routes
from empirical.papers.userlevel.common import (PRIVACY_RTOL, _alg3_kw, _int, _phase_epsilon,
                                               _privacy_cols, _sensitivity_limits)
from empirical.papers.userlevel.problems import LadUsers
from empirical.papers.userlevel.routes import multiplier_route_columns

__all__ = ["run_ns_risk", "ns_theory_phase1", "lad_values", "LAD_L", "LAD_R"]

#: LadUsers' Lipschitz constant (features on the unit sphere) and domain radius.
LAD_L, LAD_R = 1.0, 4.0


def lad_values(point: dict) -> dict:
    """Symbol values of LadUsers (L = 1, R = 4; β does not enter Theorem 4.1's rate)."""
    return {"n": point["n"], "m": point["m"], "d": point["d"], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": LAD_L, "R": LAD_R}


def smoothing_radius(n: int, m: int, d: int, epsilon: float, R: float = LAD_R) -> float:
    """Theorem D.3's r = R√d/(εn√m)."""
    return R * math.sqrt(d) / (epsilon * n * math.sqrt(m))


def ns_theory_phase1(point: dict) -> dict:
    """Phase 1 of smoothed Algorithm 3 (rates mode, q = ½, c_τ = 1) from Theorem D.3's
    formulas, recomputed here (not by calling the algorithm's schedule): n_1, T_1 = ⌈1 +
    c_T n_1^{3/4}√(mε)⌉, K_1 = min(n_1, ⌈c_K2 n_1ε/√T_1 + c_K1 log(1/δ)/ε⌉) and Lemma C.2's
    sensitivity as corrected in UL-E13 (an independent implementation)."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, dl = float(point["epsilon"]), float(point["delta"])
    kw = _alg3_kw(point)
    n1 = int(math.floor((1 - 2 ** -0.5) * n / 2 ** 0.5))
    T1 = max(1, int(math.ceil(1 + kw["c_T"] * n1 ** 0.75 * math.sqrt(m * eps))))
    K1 = int(min(n1, math.ceil(kw["c_K2"] * n1 * eps / math.sqrt(T1)
                               + kw["c_K1"] * math.log(1 / dl) / eps)))
    tau = LAD_L * math.sqrt(math.log(n * d * m) / m)
    return {"n_1": n1, "T_1": T1, "K_1": K1,
            "sensitivity_1": uls.alg3_phase_sensitivity(tau, K1, T1, eps, dl)}


def _ns_settings(point: dict, res) -> dict:
    """``used_<x>``/``theory_<x>`` of phase 1 (n, T, K, the sensitivity), phase 1's ε recomputed
    by dp-accounting from the σ used and the theorem's sensitivity, and the calibration's
    second routes (as :func:`empirical.papers.userlevel.alg3_runs._alg3_settings` for the
    smooth schedule)."""
    th = ns_theory_phase1(point)
    ph = res.phases[0]
    eps, dl = float(point["epsilon"]), float(point["delta"])
    z_eff = ph["sigma_i"] / th["sensitivity_1"]
    e1 = eps / 2.0 + _phase_epsilon(round(z_eff, 12), th["T_1"], dl / 2.0, th["n_1"], th["K_1"])
    out = {}
    for k in ("n_1", "T_1", "K_1"):
        out[f"used_{k}"], out[f"theory_{k}"] = float(ph[k[:-2] + "_i"]), float(th[k])
    out["used_sensitivity_1"] = float(ph["sensitivity"])
    out.update(_sensitivity_limits(float(ph["sensitivity"]), th["sensitivity_1"]))
    out["max_epsilon_1"], out["limit_epsilon_1"] = e1, eps * (1 + PRIVACY_RTOL)
    out.update(_alg3_routes(res, eps, False))
    out.update(multiplier_route_columns("gauss_1", res.privacy.phases[0].z, th["T_1"], dl / 2.0,
                                        eps / 2.0, 2 * th["K_1"] <= th["n_1"]))
    return out


def run_ns_risk(point: dict, rngs: list) -> dict:
    """Rows of smoothed Algorithm 3 on LadUsers, one per generator, each with its coupled
    noise-free run: ``excess`` (private), ``nonprivate_excess``, ``privacy_share``, the
    smoothing radius ``r`` and smoothness ``beta_r`` = L√d/r the schedule used, the schedule
    constants ``c_T``, ``c_K1``, ``c_K2``, phase 1's settings and the privacy spent."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    r = smoothing_radius(n, m, d, eps)
    kw = _alg3_kw(point)
    cols: dict[str, list] = {}
    meter = NoiseMeter(len(rngs))
    at_scales = {"threshold": 8.0 / eps, "query": 16.0 / eps}
    for row_i, g in enumerate(rngs):
        data_rng, alg_rng, noise_rng, smooth_rng = g.spawn(4)
        base = LadUsers(n, m, d, data_rng)
        alg_copy, smooth_copy = copy.deepcopy(alg_rng), copy.deepcopy(smooth_rng)
        res = accelerated_phased_erm(SmoothedUserData(base, r, smooth_rng), eps, delta, alg_rng,
                                     noise_rng=noise_rng, nonsmooth_T=True,
                                     observe=user_level_hook(meter, row_i, ("gradient",),
                                                             at_scales), **kw)
        ref = accelerated_phased_erm(SmoothedUserData(base, r, smooth_copy), eps, delta,
                                     alg_copy, noise=False, nonsmooth_T=True,
                                     max_phases=len(res.info["schedule"]),
                                     **kw)
        ex, ex_np = float(base.excess(res.x)[0]), float(base.excess(ref.x)[0])
        ph = res.phases[0]
        row = {"excess": ex, "nonprivate_excess": ex_np, "privacy_share": 1.0 - ex_np / ex,
               "initial_excess": float(base.excess(base.center)[0]),
               "r": r, "beta_r": LAD_L * math.sqrt(d) / r,
               "c_T": kw["c_T"], "c_K1": kw["c_K1"], "c_K2": kw["c_K2"],
               "grad_evals": res.grad_evals, "halted": int(res.halted),
               "nonprivate_halted": int(ref.halted),
               "removed": res.info.get("removed", 0), "at_fired": res.info.get("at_fired", 0),
               "phases": len(res.phases), "tau": res.info["tau"],
               "T_1": ph["T_i"], "K_1": ph["K_i"], "n_1": ph["n_i"], "sigma_1": ph["sigma_i"],
               "lambda_1": ph["lambda_i"], "sensitivity_1": ph["sensitivity"],
               **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()}}
        row.update(_ns_settings(point, res))
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {**{k: np.asarray(v) for k, v in cols.items()}, **meter.columns()}
