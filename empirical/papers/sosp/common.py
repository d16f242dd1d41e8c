"""What the SOSP experiments share (Tao et al.; experiments in
:mod:`empirical.papers.sosp.rates`, :mod:`empirical.papers.sosp.escape`, :mod:`empirical.papers.sosp.selection`):
the calibrated constants, the registry of the paper's experiments, the cosine-saddle problem of a
grid point, Theorem 2/3's symbol values at a point, and Theorem 2/3's settings recomputed
independently of :mod:`algorithms.sosp.plan` (the settings verdict compares the two).  In this
paper ρ is the Hessian-Lipschitz constant (``hessian_lipschitz``) and m the number of clients.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from bounds.rates.sosp import log_delta_value
from empirical.core.experiment import Experiment, register
from algorithms.noise_meter import NoiseMeter, observer
from empirical.papers.sosp.problems import CosineSaddle

__all__ = ["C_CHI", "C_ALPHA_ESCAPE", "C_T", "DELTA", "Q_RATE", "RATE_BASE", "EXPERIMENTS",
           "register_experiment", "geom_grid", "problem", "rate_values", "accountant_multiplier",
           "effective_epsilon", "rate_values_effective", "theory_gamma", "theory_batches",
           "theory_settings", "privacy_columns", "spider_meter"]

#: The one calibrated constant of the rate experiments: χ = c_χ·ψ_design (Remark 2's α = 4c_χψ).
C_CHI = 1.5
#: The one calibrated constant of the escape experiments: α = c_α ψ (Theorem 1's 16√C s μ²).
C_ALPHA_ESCAPE = 10.0
#: Candidates of the tied model-selection sweep: T = ⌈c_T U M²/(√ρ α^{5/2})⌉ (Lemma 6's count).
C_T = 10.0
#: δ of every private run.
DELTA = 1e-5
#: Escape rounds per procedure in the rate runs (Lemma 2 with ω₀ = (7/8)^10 ≈ 0.26 in the worst
#: case of Corollary 1's 1/8 per round; the per-round escape probability here is ≈ 1).
Q_RATE = 10

#: Fixed values of every rate point (and of the DP-oracle escape sweep, which uses the rate
#: design): the records' sampling scales s1, s2, δ, c_χ, Q and a saddle of index k = 1.
RATE_BASE = {"s1": 0.15, "s2": 0.05, "delta": DELTA, "c_chi": C_CHI, "Q": Q_RATE, "k": 1}

EXPERIMENTS: dict[str, Experiment] = {}


def register_experiment(exp: Experiment) -> Experiment:
    """Register ``exp`` with the experiment registry and list it in :data:`EXPERIMENTS`."""
    EXPERIMENTS[exp.id] = register(exp)
    return exp


def geom_grid(lo: float, hi: float, k: int, integer: bool = True) -> tuple:
    """k geometrically spaced grid values from lo to hi (rounded to integers if ``integer``)."""
    v = np.geomspace(lo, hi, k)
    return tuple(int(round(x)) for x in v) if integer else tuple(float(x) for x in v)


def problem(point: dict) -> CosineSaddle:
    """The cosine-saddle instance of a grid point (d, k, m clients, heterogeneity h, s1, s2)."""
    return CosineSaddle(int(point["d"]), k=int(point.get("k", 1)), m=int(point.get("m", 1)),
                        h=float(point.get("h", 0.0)), s1=point["s1"], s2=point["s2"])


def with_G(point: dict) -> dict:
    """The point with its record scale s1 = G − s2, for sweeps of G: on the cosine-saddle family
    G_s = s1 + s2 is the exact supremum of the per-record gradient spread, and s1 moves it alone
    (M_s = s2, M, ρ, U do not involve s1).  ValueError if G ≤ s2."""
    G, s2 = float(point["G"]), float(point["s2"])
    if not G > s2:
        raise ValueError(f"G must be in (s2, inf) = ({s2}, inf), got {G}")
    return {**point, "s1": G - s2}


def rate_values(point: dict) -> dict:
    """Symbol values of Theorems 2/3 at a point: G = G_s (per-record gradient spread, what both
    the sampling variance and the sensitivity of O₁ see: the landscape part of f is common to all
    records), M the landscape's smoothness (η = √(ρα)/M²; it bounds M_s), U = 2kγ, ρ = the
    Hessian-Lipschitz bound, log_delta = 8 log(1.25/δ) (errata SOSP-E2)."""
    prob = problem(point)
    return {"n": float(point["n"]), "d": float(point["d"]), "epsilon": float(point["epsilon"]),
            "m": float(point.get("m", 1)), "log_delta": log_delta_value(point["delta"]),
            "G": prob.G_sens, "U": prob.U, "M": prob.M,
            "hessian_lipschitz": prob.hessian_lipschitz}


def accountant_multiplier(eps: float, delta: float, count: int = 1, hi: float = 1e4) -> float:
    """z with dp-accounting's ε(Gaussian(z)^{⊗count}, δ) = ε, by bisection on [1e-6, hi] here
    (independent of the algorithm's calibration code, :mod:`algorithms.sosp.privacy`)."""
    return brentq(lambda v: accounting.epsilon(accounting.gaussian_event(v, count), delta) - eps,
                  1e-6, hi, xtol=1e-15, rtol=1e-14)


def effective_epsilon(eps: float, delta: float) -> float:
    """The ε at which the classical Gaussian mechanism, z_cl = √(2 ln(1.25/δ))/ε (the
    calibration inside Theorem 2's log_delta = 8 ln(1.25/δ)), adds the noise the accountant's z
    adds: ε_eff = √(2 ln(1.25/δ))/z(ε).  z·ε is not constant (3.24 → 3.97 over ε = 0.05…0.8 at
    δ = 1e-5: the RDP → (ε, δ) conversion), so z ∝ ε^{−0.93} there and a rate ∝ ε^{−2/5} in the
    classical calibration is ∝ ε^{−0.37} in the noise actually added (errata SOSP-E12)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / accountant_multiplier(eps, delta)


def rate_values_effective(point: dict) -> dict:
    """:func:`rate_values` with ε replaced by :func:`effective_epsilon`: the bound evaluated at
    the noise the algorithm adds.  Used only where ε is swept (elsewhere ε is fixed and the
    substitution is a constant factor, which no slope sees)."""
    vals = rate_values(point)
    vals["epsilon"] = effective_epsilon(float(point["epsilon"]), float(point["delta"]))
    return vals


def theory_gamma(alpha: float, rho_h: float, M: float, r_c: float) -> int:
    """Lemma 1's round length, recomputed here (not through ``practical_gamma``):
    Γ = ⌈(log(R√(2η√(ρα))/(η r_c))₊ + 2)/(η√(ρα))⌉, η = √(ρα)/M², R = √(α/ρ)."""
    curv = math.sqrt(rho_h * alpha)
    eta, radius = curv / M**2, math.sqrt(alpha / rho_h)
    growth = max(math.log(radius * math.sqrt(2.0 * eta * curv) / (eta * r_c)), 0.0) + 2.0
    return max(1, math.ceil(growth / (eta * curv)))


def theory_batches(n: int, kappa: float, alpha: float, rho_h: float, M: float,
                   U: float) -> tuple[int, int]:
    """Parameters (5)'s batch sizes, recomputed here: b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉},
    each ≤ n, with η = √(ρα)/M², χ = α/4."""
    eta, chi = math.sqrt(rho_h * alpha) / M**2, alpha / 4.0
    b1 = min(n, max(1, math.ceil(n * kappa / (2.0 * U * eta))))
    b2 = min(n, max(1, math.ceil(n * eta * chi**2 / (2.0 * U))))
    return b1, b2


def theory_settings(n: int, d: int, m: int, eps: float, delta: float, alpha: float,
                    kappa: float, prob: CosineSaddle) -> dict:
    """Theorem 2/3's settings at (α, κ), recomputed here from parameters (5) and Lemma 1 — not
    through ``spider_plan``/``practical_gamma`` — so that the settings verdict compares two
    computations (a wrong step count, batch or noise in the algorithm's plan shows):
    η = √(ρα)/M², χ = α/4, R = √(α/ρ), b1, b2 from :func:`theory_batches`,
    z with dp-accounting ε(Gaussian(z), δ) = ε (bisection here), σ₁ = z·2G_s/b1,
    Γ = ⌈(log(R√(2η√(ρα))/(η r_c))₊ + 2)/(η√(ρα))⌉ at r_c = σ₁/√m, step cap 20U/(ηχ²)."""
    rho_h, M, U = prob.hessian_lipschitz, prob.M, prob.U
    curv = math.sqrt(rho_h * alpha)
    eta, chi, radius = curv / M**2, alpha / 4.0, math.sqrt(alpha / rho_h)
    b1, b2 = theory_batches(n, kappa, alpha, rho_h, M, U)
    z = accountant_multiplier(eps, delta)
    sigma1 = z * 2.0 * prob.G_sens / b1
    return {"b1": b1, "b2": b2, "z": z, "sigma1": sigma1, "eta": eta, "radius": radius,
            "Gamma": theory_gamma(alpha, rho_h, M, sigma1 / math.sqrt(m)),
            "max_steps": max(1, math.ceil(20.0 * U / (eta * chi**2)))}


def privacy_columns(report: dict, rows: int) -> dict:
    """The ``epsilon_target``, ``epsilon_guarantee`` and ``epsilon_spent`` columns of ``rows``
    seed rows from the algorithm's own privacy report (dp-accounting, at the noise it added;
    each entry a scalar or one value per row)."""
    return {k: np.broadcast_to(np.asarray(report[k], dtype=float), (rows,)).copy()
            for k in ("epsilon_target", "epsilon_guarantee", "epsilon_spent")}


def spider_meter(meter: NoiseMeter, th: dict, prob: CosineSaddle):
    """Observe hook of Ada-DP-SPIDER measuring each client's O₁ and O₂ noise (release − its
    noise-free value) against the σ's of the theorem recomputed here (:func:`theory_settings`'s
    ``th``): σ₁ = z·2G_s/b1, and σ₂ = z·2M_s‖x_{t−1} − x_{t−2}‖/b2 at the step actually taken
    (public), per client (errata SOSP-E1: no 1/√m).  ``hook.o2_sigma_max`` collects the
    theorem's σ₂ at the largest step per row: the theory counterpart of the oracle's
    ``o2_sigma_max`` (a σ₂ calibrated with b1 is b2/b1 times too small and fails both)."""
    meter.channel("o1")
    meter.channel("o2")

    def handle(kind, rows, answer, sigma, X, X_prev, *, clean):
        e = np.asarray(answer) - np.asarray(clean)
        if kind == "o1":
            meter.add("o1", rows, e, th["sigma1"])
            return
        diff = np.asarray(X) - np.asarray(X_prev)
        step = np.array([math.sqrt(v.dot(v)) for v in diff])
        s2 = th["z"] * 2.0 * prob.M_sens * step / th["b2"]
        meter.add("o2", rows, e, s2)
        np.maximum.at(hook.o2_sigma_max, np.asarray(rows), s2)

    hook = observer(meter, handle)
    hook.o2_sigma_max = np.zeros(meter.rows)
    return hook
