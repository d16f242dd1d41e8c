"""Run functions of the linear-regression experiments on DP-SSGD inside its privacy theorem
(Theorem 3.1) and on sufficient statistics perturbation (Varshney, Thakurta, Jain; SSP is the
prior efficient method of §1 and Theorem 3.2 Remark ii).  Declarations live in
:mod:`empirical.papers.linreg.headline`.

DP-SSGD (Algorithm 1) inside Theorem 3.1: ε ≤ √(log(n/δ)/n) (``thm31_eps_ratio`` ≤ 1; a point's
``eps_scale`` s sets ε = s·√(log(n/δ)/n)), the per-step ε₀ in the range where amplification by
shuffling applies (``eps0_ratio`` = ε₀/log(n/(16 log(4/δ̂))) ≤ 1, so ``epsilon_amplified`` is
finite), Theorem 3.2's sample condition n ≥ κd log^{2a+1}(κd + 1) log(1/δ)/ε (``thm32_n_ratio``
≥ 1) and its step η = min{1/(2R_x²), c₁/(dR_x²α²)} (``eta_c`` = c₁); ``eta_n`` = ηn says how many
relaxation times the tail average spans.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.linreg.ssgd import dp_ssgd_privacy
from algorithms.linreg.ssp import ssp, ssp_multiplier, ssp_sensitivity
from algorithms.noise_meter import NoiseMeter, observer
from empirical.papers.linreg.problems import DELTA, design_for, run_ssgd, ssgd_values

__all__ = ["thm31_point", "run_ssgd_thm31", "ssgd_thm31_values", "ssp_bounds", "run_ssp", "run_ssp_vs_amb",
           "ssp_values", "theory_ssp_multiplier", "exact_gaussian_multiplier"]


def thm31_point(point: dict) -> dict:
    """The point with ε set from ``eps_scale`` (s·√(log(n/δ)/n)) when it has one."""
    if "eps_scale" not in point:
        return dict(point)
    n = int(round(point["n"]))
    eps = point["eps_scale"] * math.sqrt(math.log(n / DELTA) / n)
    return {k: v for k, v in point.items() if k != "eps_scale"} | {"epsilon": eps}


def _conditions(p: dict) -> dict:
    n, d, eps = int(round(p["n"])), int(round(p["d"])), p["epsilon"]
    v = ssgd_values(p)
    priv = dp_ssgd_privacy(v["alpha"], n, DELTA)
    cap0 = math.log(n / (16.0 * math.log(4.0 / (DELTA / 2.0))))
    return {"thm31_eps_ratio": eps / math.sqrt(math.log(n / DELTA) / n),
            "eps0_ratio": priv["epsilon0"] / cap0,
            "thm32_n_ratio": n * eps / (d * math.log(d + 1.0) ** 2 * math.log(1.0 / DELTA)),
            "eta_n": v["eta"] * n}


def run_ssgd_thm31(point: dict, rngs: list) -> dict:
    """DP-SSGD at Theorem 3.1's ε (``eps_scale``) and Theorem 3.2's η, with the conditions of
    both theorems as row fields (module docstring)."""
    p = thm31_point(point)
    out = run_ssgd(p, rngs)
    R = len(rngs)
    out.update({k: np.full(R, float(v)) for k, v in _conditions(p).items()})
    out["epsilon_nominal"] = np.full(R, float(p["epsilon"]))
    return out


def ssgd_thm31_values(point: dict) -> dict:
    return ssgd_values(thm31_point(point))


# ---------------------------------------------------------------------------------------------
# SSP
# ---------------------------------------------------------------------------------------------
def ssp_bounds(point: dict) -> tuple[float, float]:
    """The domain SSP projects onto, set so that a Gaussian sample is rarely touched:
    B_x = √(d + 2) + √(2 ln n) (‖x‖ concentrates at √d with sub-Gaussian tails) and
    B_y = √(‖w*‖² + σ²)·√(2 ln(2n)) (y ~ N(0, ‖w*‖² + σ²))."""
    n, d = int(round(point["n"])), int(round(point["d"]))
    B_x = math.sqrt(d + 2.0) + math.sqrt(2.0 * math.log(n))
    B_y = math.sqrt(point["w_norm"] ** 2 + point["sigma"] ** 2) * math.sqrt(2.0 * math.log(2 * n))
    return B_x, B_y


def theory_ssp_multiplier(epsilon: float) -> float:
    """α of one Gaussian release at (ε, DELTA) by dp-accounting, recomputed here by bisection on
    ε(α) (not through ``ssp_multiplier``'s solver): the settings verdict compares the two."""
    from scipy.optimize import brentq

    from algorithms import accounting

    return brentq(lambda a: accounting.epsilon(accounting.gaussian_event(a), DELTA) - epsilon,
                  1e-3, 1e4, xtol=1e-300, rtol=1e-15, maxiter=500)


def exact_gaussian_multiplier(epsilon: float) -> float:
    """The smallest α at which one Gaussian release is (ε, DELTA)-DP: the analytic Gaussian
    mechanism, δ(ε) = Φ(1/(2α) − εα) − e^ε Φ(−1/(2α) − εα) (Balle & Wang 2018).  The rows carry
    it as ``max_exact_alpha`` ≤ ``limit_exact_alpha`` = the α used: the RDP calibration may only
    be more conservative."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def gap(a: float) -> float:
        return (norm.cdf(0.5 / a - epsilon * a)
                - math.exp(epsilon) * norm.cdf(-0.5 / a - epsilon * a) - DELTA)

    return brentq(gap, 1e-3, 1e4, xtol=1e-14, rtol=1e-14)


def run_ssp(point: dict, rngs: list) -> dict:
    """SSP at one point: privacy term ½‖w − w_ref‖²_H (same projected data, no noise), the
    non-private term, the measured noise of each released statistic (XᵀX, Xᵀy) against α·Δ
    recomputed here, and the privacy columns from dp-accounting."""
    n = int(round(point["n"]))
    des = design_for(point)
    B_x, B_y = ssp_bounds(point)
    R = len(rngs)
    meter = NoiseMeter(R)
    # one channel per released statistic: noise dropped from Xᵀy alone (d of the d² + d
    # coordinates) would move a pooled statistic by less than its tolerance
    meter.channel("stats_xx")
    meter.channel("stats_xy")
    claim = ssp_multiplier(point["epsilon"], DELTA) * ssp_sensitivity(B_x, B_y)
    d = des.d

    def handle(kind, t, rows, released, sigma, *, clean):
        e = np.asarray(released) - np.asarray(clean)
        meter.add("stats_xx", rows, e[:, :d * d], claim)
        meter.add("stats_xy", rows, e[:, d * d:], claim)

    res = ssp(des, n, epsilon=point["epsilon"], delta=DELTA, B_x=B_x, B_y=B_y, rng=rngs,
              observe=observer(meter, handle))
    info = res.info
    full = lambda v: np.full(R, float(v))  # noqa: E731
    rho = res.privacy.rho
    return {**meter.columns(), "privacy": des.h_norm_sq(res.w - info["w_reference"]),
            "nonprivate": des.excess(info["w_reference"]), "excess": des.excess(res.w),
            "clip_fraction": info["clip_fraction"],
            "used_alpha": full(info["alpha"]),
            "theory_alpha": full(theory_ssp_multiplier(point["epsilon"])),
            "max_exact_alpha": full(exact_gaussian_multiplier(point["epsilon"])),
            "limit_exact_alpha": full(info["alpha"]),
            "used_sensitivity": full(info["sensitivity"]),
            "theory_sensitivity": full(math.sqrt(2 * B_x**4 + 4 * B_x**2 * B_y**2)),
            "rho_target": full(rho), "rho_guarantee": full(res.privacy.guarantee_rho),
            "rho_spent": full(rho), "epsilon_target": full(point["epsilon"]),
            "epsilon_guarantee": full(info["epsilon_guarantee"]),
            "epsilon_spent": full(info["epsilon_guarantee"]),
            "delta": full(DELTA)}


def ssp_values(point: dict) -> dict:
    """Bound symbols at an SSP point (the prior-work rate d²R_x²‖w*‖²/(ε²n²) and the paper's)."""
    from empirical.papers.linreg.problems import amb_values

    return amb_values(point)


def run_ssp_vs_amb(point: dict, rngs: list) -> dict:
    """DP-AMBSSGD and SSP at the same (n, d, ε, δ, σ, ‖w*‖), each seed's two runs on their own
    child streams: both privacy terms (common random numbers within each algorithm), both
    measured noises and both privacy columns (the same target ε)."""
    from empirical.papers.linreg.problems import run_ambssgd

    kids = [g.spawn(2) for g in rngs]
    amb = run_ambssgd({**point, "clip": 0, "stat_rule": 0}, [k[0] for k in kids])
    sp = run_ssp(point, [k[1] for k in kids])
    out = {k: v for k, v in amb.items()}
    out["privacy_amb"] = amb["privacy"]
    out["privacy_ssp"] = sp["privacy"]
    out.update({k: v for k, v in sp.items() if k.startswith("noise_")})
    out.update({"used_ssp_alpha": sp["used_alpha"], "theory_ssp_alpha": sp["theory_alpha"],
                "max_exact_alpha": sp["max_exact_alpha"], "limit_exact_alpha": sp["limit_exact_alpha"],
                "epsilon_spent_ssp": sp["epsilon_spent"]})
    out["epsilon_guarantee"] = np.maximum(amb["epsilon_guarantee"], sp["epsilon_guarantee"])
    out["epsilon_spent"] = np.maximum(amb["epsilon_spent"], sp["epsilon_spent"])
    return out
