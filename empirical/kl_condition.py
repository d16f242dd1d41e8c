"""Experiments for the KL paper (Menart et al., ``kl_condition_zcdp.txt``): synthetic problems
with known optimum and sweeps checked against ``bounds.kl_condition``.

Theorem 9 (Algorithm 4, noisy projected GD on F̃ = F + L̃1‖w − w0‖²)
----------------------------------------------------------------------
Problem: linear losses f(w; x) = ⟨w, x⟩ with ‖x_i‖ ≤ L0 (convex, so L̃1-weakly convex for every
L̃1 > 0), the data term of the paper's own lower-bound construction (Theorem 7).  Then
F̃(w) − F̃(w*) = L̃1‖w − w*‖² with w* = w0 − x̄/(2L̃1), computed without cancellation, and each
full gradient costs O(d) whatever n is.

Why the check is two-sided: on this quadratic, noisy GD with η_t = 1/(L̃1 t) and the t-weighted
average has E‖w̄ − w*‖² ∝ σ²d/(L̃1²T) exactly, and σ²/T ∝ 1/(n²ρ), so the excess scales as
d/(n²ρ) — the strongly convex DP-ERM lower bound (Bassily, Smith, Thakurta 2014) — with no log
factor.  Theorem 9's log(n² log²(2/β)/(dβ)) is proof slack from a union bound; the band between
the bound's local slope (log kept) and its asymptotic exponent is therefore the honest target.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.accounting import zcdp_to_epsilon_closed_form
from algorithms.base import Problem
from algorithms.kl_condition import noisy_gd
from empirical.experiment import Check, Experiment, register

__all__ = ["LinearLoss", "THM9_N", "THM9_D", "THM9_RHO"]


class LinearLoss(Problem):
    """F(w) = (1/n) Σ_i ⟨w, x_i⟩ with ‖x_i‖ ≤ L0: x_i = (L0/2)(e_1 + u_i), u_i uniform on the
    unit sphere, so ‖x̄‖ ≈ L0/2 and the regularised minimiser sits inside Algorithm 4's ball."""

    def __init__(self, X: np.ndarray):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise ValueError("X must be a finite (n, d) array")
        super().__init__(*X.shape)
        self.X = X
        self.mean = X.mean(axis=0)

    @classmethod
    def sample(cls, n: int, d: int, L0: float, data_seed: int = 0) -> "LinearLoss":
        rng = np.random.default_rng([data_seed, n, d])
        U = rng.standard_normal((n, d))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        U[:, 0] += 1.0
        return cls(0.5 * L0 * U)

    def _loss(self, W):
        return W @ self.mean

    def _gradient(self, W):
        return np.broadcast_to(self.mean, W.shape)

    def _per_sample_gradients(self, W, idx):
        return np.broadcast_to(self.X[idx], (W.shape[0], idx.size, self.d))

    def regularized_excess(self, W: np.ndarray, w0: np.ndarray, L1t: float) -> np.ndarray:
        """F̃(w) − min F̃ = L̃1‖w − w*‖², F̃ = F + L̃1‖· − w0‖²."""
        w_star = w0 - self.mean / (2.0 * L1t)
        diff = np.atleast_2d(W) - w_star
        return L1t * np.einsum("ij,ij->i", diff, diff)


def _run_thm9(point: dict, rngs: list) -> dict:
    n, d = int(round(point["n"])), int(round(point["d"]))
    prob = LinearLoss.sample(n, d, point["L0"], int(point["data_seed"]))
    w0 = np.zeros(d)
    res = noisy_gd(prob, rho=point["rho"], w0=w0, L0=point["L0"], L1t=point["L1t"],
                   beta=point["beta"], rng=rngs)
    R = len(rngs)
    return {"excess": prob.regularized_excess(res.w, w0, point["L1t"]),
            "rho_spent": np.full(R, res.privacy.rho), "rho_target": np.full(R, point["rho"]),
            "steps": np.full(R, res.info["T"]), "grad_evals": np.full(R, res.grad_evals)}


def _thm9_values(point: dict) -> dict:
    return {k: point[k] for k in ("n", "d", "rho", "beta", "L0", "L1t")}


def _thm9_vacuous(point: dict, bound_value: float) -> str | None:
    # The excess of the start point w0 is ‖x̄‖²/(4L̃1) ≤ L0²/(4L̃1); a bound above it says nothing.
    trivial = point["L0"] ** 2 / (4.0 * point["L1t"])
    if bound_value >= trivial:
        return f"bound {bound_value:.3g} ≥ L0²/(4L̃1) = {trivial:.3g}, the excess of w0 (vacuous)"
    return None


# Competitor: Theorem 7's convex (not strongly convex) rate L0·D·√d/(nε), with D = L0/(2L̃1)
# the distance bound of Algorithm 4's ball and ε the (ε, δ = 1e-5) image of ρ.
_DELTA_FOR_EPS = 1e-5


def _thm7_values(point: dict) -> dict:
    return {"n": point["n"], "d": point["d"], "L0": point["L0"], "D": point["L0"] / (2 * point["L1t"]),
            "epsilon": zcdp_to_epsilon_closed_form(point["rho"], _DELTA_FOR_EPS)}


_TOL_REASON = ("band [local, asymptotic] already spans Theorem 9's log factor; 0.1 allows the "
               "finite-T transient (projection active in the first steps) and 16-seed noise "
               "(the excess is ≈ χ²_d-distributed; at d ≈ 100 the bootstrap CI half-width is ≈ 0.05)")
_BASE = {"beta": 0.1, "L0": 1.0, "L1t": 1.0, "data_seed": 0}

THM9_N = register(Experiment(
    id="kl.thm9.n",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs n (Theorem 9)",
    variable="n",
    quick_grid=(1000, 1778, 3162, 5623, 10000),
    full_grid=tuple(int(round(v)) for v in np.geomspace(1000, 31623, 11)),
    fixed={**_BASE, "d": 100, "rho": 0.01},
    seeds=16,
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl_condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1,
              "negative control: the convex (non-strongly-convex) rate of Theorem 7 has slope −1 "
              "in n; 0.1 is the same tolerance as the main check", values=_thm7_values),
    ),
))

THM9_D = register(Experiment(
    id="kl.thm9.d",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs d (Theorem 9)",
    variable="d",
    quick_grid=(16, 32, 64, 128, 256),
    full_grid=(4, 8, 16, 32, 64, 128, 256, 512, 1024),
    fixed={**_BASE, "n": 2000, "rho": 0.01},
    seeds=16,
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl_condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1, "competing convex rate √d: slope 1/2 in d",
              values=_thm7_values),
    ),
))

THM9_RHO = register(Experiment(
    id="kl.thm9.rho",
    paper="kl",
    title="Alg. 4 noisy GD, strongly convex: excess vs ρ (Theorem 9)",
    variable="rho",
    quick_grid=(0.005, 0.01, 0.02, 0.04, 0.08),
    full_grid=tuple(float(v) for v in np.geomspace(0.0025, 0.64, 9)),
    fixed={**_BASE, "n": 2000, "d": 100},
    seeds=16,
    run=_run_thm9,
    metric="excess",
    bound_values=_thm9_values,
    vacuous=_thm9_vacuous,
    problem="LinearLoss (linear losses, ‖x_i‖ ≤ L0) + L̃1‖w − w0‖²",
    algorithm="algorithms.kl_condition.noisy_gd (Algorithm 4)",
    checks=(
        Check("kl:thm9", "two-sided", 0.1, _TOL_REASON),
        Check("kl:thm7", "reject", 0.1,
              "competing convex rate 1/ε ≈ ρ^(-1/2) (ε = image of ρ at δ = 1e-5)",
              values=_thm7_values),
    ),
))
