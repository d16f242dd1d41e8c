"""The returned point's gradient norm where the estimation noise, not the stop threshold, sets it
(Tao et al., Theorem 2 with Lemma 7).

Gauss-PSGD returns x̃ once ‖ĝ(x̃)‖ ≤ 3χ (and Q escape rounds fail), so ‖∇F(x̃)‖ ≤ 3χ + ‖ĝ − ∇F‖.
At the rate design's c_χ = 1.5 the threshold 3χ = 4.5ψ is far above the noise and sets the
returned gradient (errata SOSP-E14: a plan-frozen ε sweep is flat).  With c_χ = 0.05 the plan
asks for an accuracy below what the noise allows (3χ = 0.15ψ_design): between O₁ refreshes the
noise is frozen, the descent settles where ∇F = −(ĝ − ∇F), ĝ falls below 3χ there, and the
returned gradient is the estimation error itself (‖∇F(x_out)‖/ψ_emp ≈ 1, stored per row).
Lemma 5's premise χ ≥ cψ does not hold, so the output is no α_design-SOSP; Theorem 2's α is
still what ψ balances to (Remark 2: α = Θ̃(√(σ² + r²d))).

* ``sosp.out.floor.n`` / ``sosp.out.floor.eps`` — ‖∇F(x_out)‖ vs n (ε = 2) and ε (n = 1e6), the
  plan following the variable, one-sided against Theorem 2's α.
* ``sosp.out.floor.eps_frozen`` — control: the plan frozen at ε_plan = 2 (n = 1e6) and only the
  Gaussian noise following the ε swept (z(ε) from dp-accounting; ε < 1 is not run: with b2 = 1
  the O₂ noise z·2M_s‖Δx‖ then outgrows the step and no row certifies within n).  Against
  Lemma 7's ψ at the frozen b1, b2, κ; the threshold reading (flat) and the Gaussian noise alone
  (z(ε)) are rejected.  At c_χ = 1.5 the same control is flat (``sosp.out.grad.eps_frozen``).

Each row also records ψ_emp (the rms of ĝ − ∇F over the run), ‖∇F(x_out)‖/ψ_emp and 3χ/ψ_emp,
so that the regime of every point is visible.  Private: ``epsilon_*`` columns from dp-accounting
at the noise actually added.
"""
from __future__ import annotations

import functools

import numpy as np

from empirical.core.experiment import Check, Experiment
from empirical.papers.sosp.common import (RATE_BASE, geom_grid, problem, rate_values,
                                          rate_values_effective, register_experiment)
from empirical.papers.sosp.output import run_output_grad
from empirical.papers.sosp.rates import rate_design

__all__ = ["C_CHI_FLOOR", "run_output_floor", "lem7_values"]

#: χ/ψ of the floor design: 3χ = 0.15ψ_design, below the noise's norm at every grid point.
C_CHI_FLOOR = 0.05

_BASE = {**RATE_BASE, "c_chi": C_CHI_FLOOR, "d": 16, "m": 1}
_DESC = "CosineSaddle(k=1, γ=b=1, s1=0.15, s2=0.05), x0 = saddle, design c_χ = 0.05"


def run_output_floor(point: dict, rngs: list) -> dict:
    """:func:`empirical.papers.sosp.output.run_output_grad` at the point's c_χ, with the ratios
    that place the point: ‖∇F(x_out)‖/ψ_emp and 3χ/ψ_emp (the threshold against the noise)."""
    out = run_output_grad(point, rngs)
    psi = np.maximum(out["psi_emp"], 1e-300)
    return {**out, "grad_over_psi": out["grad_out"] / psi,
            "threshold_over_psi": 3.0 * out["chi"] / psi}


@functools.lru_cache(maxsize=64)
def _frozen_batches(n: int, eps_plan: float, d: int, c_chi: float, delta: float,
                    s1: float, s2: float, Q: int, k: int) -> tuple[float, float, float]:
    point = {"n": n, "epsilon": eps_plan, "d": d, "m": 1, "c_chi": c_chi, "delta": delta,
             "s1": s1, "s2": s2, "Q": Q, "k": k}
    _, plan = rate_design(point, problem(point), n)
    return float(plan.b1), float(plan.b2), float(plan.kappa)


def lem7_values(point: dict) -> dict:
    """Lemma 7's symbols at a plan-frozen point: the frozen plan's b1, b2, κ (recomputed from the
    design at ε_plan, data-free), G = G_s, M = M_s (the per-record spread and sensitivity
    constants of the data part, which is all that differs between records), the noise's ε as
    :func:`empirical.papers.sosp.common.effective_epsilon` (the classical calibration inside
    log_delta at the noise dp-accounting adds)."""
    vals = rate_values_effective(point)
    prob = problem(point)
    b1, b2, kappa = _frozen_batches(int(point["n"]), float(point["plan_epsilon"]),
                                    int(point["d"]), float(point["c_chi"]),
                                    float(point["delta"]), float(point["s1"]),
                                    float(point["s2"]), int(point["Q"]), int(point["k"]))
    return {"G": prob.G_sens, "M": prob.M_sens, "b1": b1, "b2": b2, "kappa_drift": kappa,
            "d": vals["d"], "epsilon": vals["epsilon"], "log_delta": vals["log_delta"]}


def _exp(eid: str, title: str, var: str, quick: tuple, full: tuple, fixed: dict,
         checks: tuple, seeds: int, values, why_full: str) -> Experiment:
    exp = register_experiment(Experiment(
        id=eid, paper="sosp", title=title, variable=var, quick_grid=quick, full_grid=full, fixed={k: v for k, v in {**_BASE, **fixed}.items() if k != var},
        seeds=seeds, run=run_output_floor, metric="grad_out", bound_values=values, checks=checks,
        problem=_DESC,
        algorithm="gauss_psgd + AdaDPSpider (Algorithms 1, 2), sosp_rates.rate_design at c_χ = 0.05",
        private=True, privacy_rtol=1e-9))
    return exp.declare_full_only(why_full)


_ONE_SIDED = ("one-sided: Theorem 2's α is an upper bound and, with 3χ below the noise, x_out's "
              "gradient is the estimation error, whose rms ψ α balances (Remark 2); the design "
              "at c_χ = 0.05 holds b2 at its floor of 1, off Theorem 2's balance, so the slope "
              "may be steeper, not flatter; 0.1 because 12 seeds of a χ_16-like norm give a CI "
              "half-width ≈ 0.05 over the grid's span")

FLOOR_N = _exp(
    "sosp.out.floor.n", "‖∇F‖ of the returned point vs n where the noise sets it (c_χ = 0.05, ε = 2)",
    "n", (100000, 300000, 1000000), geom_grid(1e5, 3e6, 5), {"epsilon": 2.0},
    (Check("sosp:thm2", "one-sided", 0.1, _ONE_SIDED),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output follows one Gaussian release's scale at a batch ∝ n "
           "(n^{−1}), as it would if the O₁ noise alone, without the plan's batch balance, set "
           "it; 0.1 as for the main check")),
    12, rate_values,
    "a point costs 3–5 CPU-s (12 seeds; 2700–9500 oracle calls per row at c_χ = 0.05), the "
    "quick-grid allowance is 3 CPU-s for the paper")
FLOOR_EPS = _exp(
    "sosp.out.floor.eps", "‖∇F‖ of the returned point vs ε where the noise sets it (c_χ = 0.05, n = 1e6)",
    "epsilon", (0.5, 1.0, 2.0), geom_grid(0.5, 4.0, 7, integer=False), {"n": 1000000},
    (Check("sosp:thm2", "one-sided", 0.1, _ONE_SIDED + "; the bound at the noise added "
           "(errata SOSP-E12), its local slope alone (the ε-exponent is 0 at ε → ∞, where the "
           "sampling term takes over; this grid is far from there)",
           values=rate_values_effective, use_asymptotic=False),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output follows the Gaussian noise of one release at a fixed "
           "batch (∝ z(ε), slope −0.91 at the noise added); 0.1 as for the main check",
           values=rate_values_effective)),
    12, rate_values,
    "a point costs 1.5–6 CPU-s (12 seeds, n = 1e6), the quick-grid allowance is 3 CPU-s for "
    "the paper")
FLOOR_EPS_FROZEN = _exp(
    "sosp.out.floor.eps_frozen",
    "Control: ‖∇F(x_out)‖ vs the noise's ε, plan frozen at ε = 2 (c_χ = 0.05, n = 1e6)",
    "epsilon", (1.0, 2.0, 4.0), geom_grid(1.0, 8.0, 7, integer=False),
    {"n": 1000000, "plan_epsilon": 2.0},
    (Check("sosp:lem7_noise", "one-sided", 0.1,
           "one-sided: Lemma 7's σ² bounds the sampling variance by G_s²/b1 (the instance's is "
           "s1² + s2²E cos² ≤ G_s², ≈ 0.6 G_s²) while its Gaussian part is the noise added, so "
           "the noise's share, and the slope's steepness, may exceed the bound's; at the frozen "
           "b1, b2, κ and the noise added (errata SOSP-E12); local slope alone (the asymptotic "
           "exponent 0 is the sampling floor's, the regime this control is built to leave); 0.1 "
           "as for sosp.out.floor.n", use_asymptotic=False,
           history="declared at 12 seeds: −0.457 [−0.531, −0.378], INCONCLUSIVE (half-width "
                   "0.076 against 0.048 to the edge); at 32: −0.444 [−0.479, −0.408], "
                   "INCONCLUSIVE by 0.001 (≈ 34 seeds asked); 48 seeds, the tolerance as "
                   "declared"),
     Check("sosp:thm2_sampling", "reject", 0.1,
           "competing reading: the frozen plan's threshold 3χ sets the output's gradient (ε-free, "
           "slope 0, as at c_χ = 1.5: sosp.out.grad.eps_frozen); it must be ruled out if the noise "
           "sets it; 0.1 as for the main check",
           values=rate_values),
     Check("sosp:noise_scale", "reject", 0.1,
           "competing reading: the output follows the Gaussian noise alone (∝ z(ε), −0.91 at the "
           "noise added), with no sampling part; 0.1 as for the main check",
           values=rate_values_effective)),
    48, lem7_values,
    "a point costs 10–15 CPU-s (48 seeds, n = 1e6), the quick-grid allowance is 3 CPU-s for "
    "the paper")
