"""Problems and run functions of the linear-regression experiments (Varshney, Thakurta, Jain):
what a stored row is computed from.  Declarations and checks
live in :mod:`empirical.papers.linreg.experiments`, so editing a check or a tolerance does not make
stored rows stale (the rows' code fingerprint covers this module and what it imports, not the
declarations).

Rows carry the measured terms (common random numbers: ``privacy`` = ½‖w̄ − w̄_ref‖²_H,
``nonprivate`` = ½‖w̄_ref − w*‖²_H, ``excess``), the parameters the algorithm used beside the
theorem's (``used_<x>``/``theory_<x>``: the settings verdict), and the privacy columns from
dp-accounting.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import accounting
from algorithms.linreg.adaptive_clipping import (LinearRegressionDesign, alpha_for_epsilon,
                                                 dp_ambssgd, dp_ssgd)
from algorithms.noise_meter import NoiseMeter, observer

__all__ = ["DELTA", "SIGMA_ZERO", "design_for", "epsilon_for_alpha", "theory_schedule",
           "run_ambssgd", "run_ambssgd_alpha", "run_ssgd", "amb_values", "amb_values_sigma0",
           "alpha_values", "ssgd_values", "theory_alpha", "STAT_LEVELS"]

DELTA = 1e-6
_TAIL_A = {"gaussian": 0.5, "laplace": 1.0}
_DESIGN_CODE = {0: "gaussian", 1: "laplace"}


def epsilon_for_alpha(alpha: float) -> float:
    """ε at δ = DELTA of ½α⁻²-zCDP by dp-accounting (the inverse of ``alpha_for_epsilon``)."""
    return accounting.zcdp_to_epsilon(0.5 / alpha**2, DELTA)


def design_for(point: dict) -> LinearRegressionDesign:
    return LinearRegressionDesign.make(
        int(round(point["d"])), condition_number=point.get("condition_number", 1.0),
        w_norm=point["w_norm"], sigma=point["sigma"],
        design=_DESIGN_CODE[int(point.get("design", 0))], seed=int(point.get("data_seed", 0)))


def _clip_level(point: dict, des: LinearRegressionDesign, n: int) -> float | None:
    """The fixed clip of the baselines: Theorem 3.2's ζ = 4R_x log^{2a} n (‖w*‖_H + √κσ)
    (``clip`` = 1), or the worst-case clip log^{2a} n (R_x²‖w*‖ + R_xσ) (``clip`` = 2)."""
    c = int(point.get("clip", 0))
    la = math.log(n) ** (2 * des.tail_a)
    rx = math.sqrt(des.rx2)
    if c == 1:
        return 4 * rx * la * (des.w_norm + math.sqrt(des.condition_number) * des.sigma)
    if c == 2:
        return la * (des.rx2 * des.w_norm + rx * des.sigma)
    return None


def run_ambssgd(point: dict, rngs: list) -> dict:
    """DP-AMBSSGD (``clip`` = 0) or the fixed-clip baseline (``clip`` = 1, 2) at one point."""
    n = int(round(point["n"]))
    des = design_for(point)
    zeta = _clip_level(point, des, n)
    T = int(point["T"]) if "T" in point else None
    R = len(rngs)
    meter = NoiseMeter(R)
    alpha_th = theory_alpha(point["epsilon"])
    res = dp_ambssgd(des, n, epsilon=point["epsilon"], delta=DELTA, rng=rngs,
                     clip="adaptive" if zeta is None else "fixed", zeta=zeta, T=T,
                     rule=("slack", "quantile")[int(point.get("stat_rule", 0))],
                     levels=STAT_LEVELS, observe=_amb_meter(meter, alpha_th, zeta is None))
    info = res.info
    tail = info["zeta"][:, info["T"] // 2:]
    priv = des.h_norm_sq(res.w - info["w_reference"])
    # Plug-in variance of the tail average given the logged clips: (1/T)·4α²η²Tr(H⁻¹)·mean ζ²/b²
    # (nearly independent tail iterates, η ≈ 1): used by the tests, not by any check.
    plugin = (4 * info["alpha"] ** 2 * info["eta"] ** 2 * float(np.sum(1 / des.eigenvalues))
              * np.mean(tail ** 2, axis=1) / (info["T"] * info["b"] ** 2))
    full = lambda v: np.full(R, float(v))  # noqa: E731
    settings = {f"used_{k}": full(info[k]) for k in ("T", "b", "s", "eta")}
    settings.update({f"theory_{k}": full(v) for k, v in theory_schedule(point).items()})
    settings.update({"used_alpha": full(info["alpha"]), "theory_alpha": full(alpha_th)})
    return {**settings, **meter.columns(), "excess": des.excess(res.w), "privacy": priv,
            "nonprivate": des.excess(info["w_reference"]), "privacy_plugin": plugin,
            "clip_fraction": info["clip_fraction"], "zeta_tail_rms": np.sqrt(np.mean(tail**2, axis=1)),
            "T_used": full(info["T"]), "b_used": full(info["b"]), "s_used": full(info["s"]),
            "eta_used": full(info["eta"]), "alpha_used": full(info["alpha"]),
            "B_used": full(info["B"]), "rx2_used": full(info["rx2"]),
            "stat_rounds_max": info["stat_rounds"].max(axis=1).astype(float),
            "epsilon_target": full(point["epsilon"]),
            "epsilon_guarantee": full(info["epsilon_guarantee"]),
            "epsilon_spent": info["epsilon_spent"], "rho_guarantee": full(info["rho_guarantee"]),
            "delta": full(DELTA)}


#: DP-STAT's doubling levels L in the experiments (the count noise is α√(L+1), Lemma 3.10).
STAT_LEVELS = 40


def theory_alpha(epsilon: float) -> float:
    """The noise multiplier α of a ½α⁻²-zCDP run that is (ε, DELTA)-DP, recomputed here by
    bisection on :func:`epsilon_for_alpha` (not through ``alpha_for_epsilon``): the settings
    verdict compares the two calibrations."""
    from scipy.optimize import brentq

    return brentq(lambda a: epsilon_for_alpha(a) - epsilon, 1e-4, 1e4, xtol=1e-300,
                  rtol=1e-15, maxiter=500)


def _amb_meter(meter: NoiseMeter, alpha: float, adaptive: bool):
    """Observe hook of DP-AMBSSGD measuring its noise (release − noise-free value): DP-STAT's
    counts against Lemma 3.10's std α√(L+1) with the α recomputed here (so a count noise
    drawn at α, or a wrong L, is caught whatever the algorithm reports), the phase gradients
    against the std α·2ζ_t/b the accountant priced (ζ_t is data dependent: the algorithm's)."""
    meter.channel("grad")
    if adaptive:
        meter.channel("stat")
    stat_std = alpha * math.sqrt(STAT_LEVELS + 1)

    def handle(kind, t, rows, released, sigma, *, clean):
        e = np.asarray(released, dtype=float) - np.asarray(clean, dtype=float)
        meter.add(kind, rows, e, stat_std if kind == "stat" else sigma)

    return observer(meter, handle)


def theory_schedule(point: dict) -> dict:
    """Theorem 3.7's T, b, s, η at a point, recomputed here from the theorem (not read from the
    algorithm): T = ⌈κ ln n⌉ (c₁ = 1) or the swept T, b = ⌊10n/(11T)⌋, s = ⌊n/(11T)⌋ (fixed
    clipping: b = ⌊n/T⌋, s = 0), η = b/(R_x² + b − 1) with R_x² = Tr H + (E u⁴ − 1)‖H‖ for
    independent coordinates (§2).  The rows carry them beside the values used, so the settings
    verdict fails a run whose phase count, batches or step differ from the theorem's."""
    n = int(round(point["n"]))
    kappa = point.get("condition_number", 1.0)
    d = int(round(point["d"]))
    T = int(point["T"]) if "T" in point else math.ceil(kappa * math.log(n))
    b, s = ((n // T, 0) if int(point.get("clip", 0)) > 0 else (10 * n // (11 * T), n // (11 * T)))
    lam = np.geomspace(1.0, 1.0 / kappa, d) if d > 1 else np.ones(1)
    m4 = {"gaussian": 3.0, "laplace": 6.0}[_DESIGN_CODE[int(point.get("design", 0))]]
    rx2 = float(lam.sum()) + (m4 - 1.0) * float(lam.max())
    return {"T": T, "b": b, "s": s, "eta": b / (rx2 + b - 1.0)}


def amb_values(point: dict) -> dict:
    """Bound symbols at an experiment point: the theorem's (n, d, ε, δ, σ, κ, ‖w*‖_H, K₂ = 1, a)
    and the parameters the algorithm used (T, α), recomputed exactly as the algorithm does."""
    n = int(round(point["n"]))
    kappa = point.get("condition_number", 1.0)
    T = int(point["T"]) if "T" in point else math.ceil(kappa * math.log(n))
    return {"n": n, "d": int(round(point["d"])), "epsilon": point["epsilon"], "delta": DELTA,
            "sigma": point["sigma"], "condition_number": kappa, "w_norm": point["w_norm"],
            "K2": 1.0, "a": _TAIL_A[_DESIGN_CODE[int(point.get("design", 0))]], "T": T,
            "alpha": alpha_for_epsilon(point["epsilon"], DELTA)}


#: σ = 0 enters the bounds as this value: sympy's symbols are positive, and σ² = 10⁻²⁴ is below
#: every other term (the experiments themselves run with σ = 0 exactly).
SIGMA_ZERO = 1e-12


def amb_values_sigma0(point: dict) -> dict:
    return dict(amb_values(point), sigma=max(point["sigma"], SIGMA_ZERO))


def alpha_values(point: dict) -> dict:
    """Bound symbols for an α sweep: α as used, and the ε that dp-accounting certifies for it."""
    eps = epsilon_for_alpha(point["alpha"])
    return amb_values(dict(point, epsilon=eps))


def run_ambssgd_alpha(point: dict, rngs: list) -> dict:
    """DP-AMBSSGD at a given noise multiplier: the target ε is what dp-accounting certifies for
    ½α⁻²-zCDP at δ, and the algorithm recalibrates α from it (to 1e-14)."""
    return run_ambssgd(dict(point, epsilon=epsilon_for_alpha(point["alpha"])), rngs)


def run_ssgd(point: dict, rngs: list) -> dict:
    """DP-SSGD with Corollary 3.3's α = log(n/δ)/(ε√n), ζ = √d·√(‖w*‖² + σ²)·log n, η = 1/(4d)
    (or Theorem 3.2's η = min{1/(2R_x²), c/(dα² log⁴n)} when ``eta_rule`` = 1)."""
    n = int(round(point["n"]))
    des = design_for(point)
    d = des.d
    alpha = math.log(n / DELTA) / (point["epsilon"] * math.sqrt(n))
    zeta = math.sqrt(d) * math.sqrt(des.w_norm**2 + des.sigma**2) * math.log(n)
    eta = 1.0 / (4 * d)
    eta = _ssgd_eta(point, n, d, des.rx2, alpha, eta)
    R = len(rngs)
    meter = NoiseMeter(R)
    theory = ssgd_values(point)
    res = dp_ssgd(des, n, zeta=zeta, alpha=alpha, eta=eta, rng=rngs, delta=DELTA,
                  observe=_ssgd_meter(meter, 2.0 * theory["zeta"] * theory["alpha"]))
    full = lambda v: np.full(R, float(v))  # noqa: E731
    info = res.info
    settings = {**meter.columns(), "used_steps": full(info["steps"]), "theory_steps": full(n)}
    for k in ("alpha", "zeta", "eta"):
        settings.update({f"used_{k}": full(info[k]), f"theory_{k}": full(theory[k])})
    return {**settings, "excess": des.excess(res.w),
            "privacy": des.h_norm_sq(res.w - info["w_reference"]),
            "nonprivate": des.excess(info["w_reference"]), "clip_fraction": info["clip_fraction"],
            "alpha_used": full(alpha), "zeta_used": full(zeta), "eta_used": full(eta),
            "rho_target": full(1.0 / (2 * alpha**2)), "rho_guarantee": full(res.privacy.guarantee_rho),
            "rho_spent": full(res.privacy.rho), "epsilon_paper": full(point["epsilon"]),
            "epsilon_amplified": full(info["epsilon_amplified"]), "epsilon0": full(info["epsilon0"])}


def _ssgd_eta(point: dict, n: int, d: int, rx2: float, alpha: float, eta: float) -> float:
    """DP-SSGD's step: Corollary 3.3's ``eta`` (rule 0), Theorem 3.2's min{1/(2R_x²),
    c₁/(dR_x²α²)} with c₁ = ``eta_c`` (rule 1, its log^{4a+2} n dropped), a fixed ``eta_fixed``
    (rule 2) or ``eta_K``/n, a fixed number of relaxation times over the run (rule 3).  Lemma 3.5
    holds for any η ≤ 1/(2R_x²) fixed in advance, so rules 2 and 3 stay inside it."""
    rule = int(point.get("eta_rule", 0))
    if rule == 1:
        return min(1 / (2 * rx2), point.get("eta_c", 0.5) / (d * rx2 * alpha**2))
    if rule == 2:
        return float(point["eta_fixed"])
    if rule == 3:
        return float(point["eta_K"]) / n
    return eta


def _ssgd_meter(meter: NoiseMeter, std: float):
    """Observe hook of DP-SSGD measuring each step's noise (release − clipped gradient) against
    Theorem 3.1's local-randomizer std 2ζα, ζ and α of Corollary 3.3 recomputed here."""
    meter.channel("grad")

    def handle(kind, t, rows, released, sigma, *, clean):
        meter.add("grad", rows, np.asarray(released) - np.asarray(clean), std)

    return observer(meter, handle)


def ssgd_values(point: dict) -> dict:
    n = int(round(point["n"]))
    d = int(round(point["d"]))
    alpha = math.log(n / DELTA) / (point["epsilon"] * math.sqrt(n))
    eta = 1.0 / (4 * d)
    eta = _ssgd_eta(point, n, d, d + 2.0, alpha, eta)
    return {"n": n, "d": d, "epsilon": point["epsilon"], "delta": DELTA, "sigma": point["sigma"],
            "condition_number": 1.0, "w_norm": point["w_norm"], "alpha": alpha, "eta": eta,
            "zeta": math.sqrt(d) * math.sqrt(point["w_norm"]**2 + point["sigma"]**2) * math.log(n),
            "K2": 1.0, "a": 0.5}
