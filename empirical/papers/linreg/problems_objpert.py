"""Run function of the objective-perturbation experiments (Kifer, Smith, Thakurta 2012, the DP-ERM
method Varshney, Thakurta, Jain cite in §1; its class's privacy term is quoted in Theorem 3.2
Remark ii).  Declarations live in :mod:`empirical.papers.linreg.headline`.

Rows carry the privacy term ½‖w − w_ref‖²_H (w_ref the OLS solve on the same projected data), the
measured noise of the perturbed linear term against 2ζz recomputed here, KST12's constants as
used beside their values recomputed from the point (settings verdict), the fraction of runs whose
ball constraint was active, and ε = ε_J + ε_G with ε_G from dp-accounting.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import accounting
from algorithms.linreg.objpert import objective_perturbation
from algorithms.noise_meter import NoiseMeter, observer
from empirical.papers.linreg.problems import DELTA, design_for
from empirical.papers.linreg.problems_thm31 import ssp_bounds, ssp_values, theory_ssp_multiplier

__all__ = ["objpert_radius", "run_objpert", "objpert_values"]


def objpert_radius(point: dict) -> float:
    """B_w: 2‖w*‖ (hyperparameters known a priori, as the paper assumes for its own methods,
    §3.1 Remarks), or ``bw_scale``·‖w*‖ where the point sets it (the negative control), or
    ``bw_abs`` where the point sets it (the control whose ball does not follow ‖w*‖)."""
    if "bw_abs" in point:
        return float(point["bw_abs"])
    return float(point.get("bw_scale", 2.0)) * point["w_norm"]


def _theory(point: dict) -> dict:
    """KST12's constants recomputed from the point, independently of the algorithm's code path:
    ζ, Λ, ε_J and the noise std 2ζz with z solved here by bisection on dp-accounting's ε (the
    algorithm solves the same equation with its own solver)."""
    eps = point["epsilon"]
    B_x, B_y = ssp_bounds(point)
    B_w = objpert_radius(point)
    zeta = B_x * (B_x * B_w + B_y)
    eps_j = math.log(1.0 + eps / 2.0)
    z = theory_ssp_multiplier(eps - eps_j)
    return {"zeta": zeta, "Lambda": 2.0 * B_x**2 / eps, "epsilon_jacobian": eps_j,
            "noise_std": 2.0 * zeta * z}


def run_objpert(point: dict, rngs: list) -> dict:
    """Objective perturbation at one point: privacy term, non-private term, measured noise,
    settings and privacy columns."""
    n = int(round(point["n"]))
    des = design_for(point)
    B_x, B_y = ssp_bounds(point)
    B_w = objpert_radius(point)
    th = _theory(point)
    R = len(rngs)
    meter = NoiseMeter(R)
    meter.channel("linear")

    def handle(kind, t, rows, released, sigma, *, clean):
        meter.add("linear", rows, np.asarray(released) - np.asarray(clean), th["noise_std"])

    res = objective_perturbation(des, n, epsilon=point["epsilon"], delta=DELTA, B_x=B_x,
                                 B_y=B_y, B_w=B_w, rng=rngs, observe=observer(meter, handle))
    info = res.info
    full = lambda v: np.full(R, float(v))  # noqa: E731
    eps_g = accounting.epsilon(accounting.gaussian_event(info["noise_multiplier"]), DELTA)
    out = {**meter.columns(), "privacy": des.h_norm_sq(res.w - info["w_reference"]),
           "nonprivate": des.excess(info["w_reference"]), "excess": des.excess(res.w),
           "clip_fraction": info["clip_fraction"],
           "constraint_active": info["constraint_active"].astype(float),
           # the first-order bound's premise: the ball never binds (the control breaks it)
           "max_constraint_active": info["constraint_active"].astype(float),
           "limit_constraint_active": full(1.0 if "bw_scale" in point else 0.0),
           "epsilon_target": full(point["epsilon"]),
           "epsilon_guarantee": full(info["epsilon_guarantee"]),
           "epsilon_spent": full(info["epsilon_jacobian"] + eps_g),
           "epsilon_gaussian": full(eps_g), "delta": full(DELTA),
           "delta_target": full(DELTA), "delta_guarantee": full(DELTA)}
    out.update({f"used_{k}": full(info[k]) for k in th})
    out.update({f"theory_{k}": full(v) for k, v in th.items()})
    return out


def objpert_values(point: dict) -> dict:
    """Bound symbols at an objective-perturbation point (those of SSP's instance)."""
    return ssp_values(point)
