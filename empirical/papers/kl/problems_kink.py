"""A Theorem 9 instance where the step count T matters (every parameter exercised).

On :class:`empirical.papers.kl.problems.LinearLoss` noisy GD reaches the regularised optimum in two
steps, so T enters the excess only through the noise, whose averaged contribution does not
depend on T: running 20 steps instead of Theorem 9's T leaves every rate check passing.  Here
the data term has a kink at its minimiser,

    f(w; x_i) = L0·h_δ(‖w − x*‖) for every i,   h_δ(r) = r²/(2δ) (r ≤ δ),  r − δ/2 (r > δ),

(L0-Lipschitz, convex, so L̃1-weakly convex for any L̃1; δ = 1e-9, numerically a kink), and
‖x* − w0‖ = 1/4 < L0/(2L̃1), so F̃ = F + L̃1‖w − w0‖² is minimised on the segment [w0, x*] inside
the δ-ball: w* = x* + a(w0 − x*) with a = 2L̃1δ/(L0 + 2L̃1δ).  The subgradient's constant
magnitude L0 makes the deterministic part oscillate around x* with amplitude ∝ L0/(L̃1 t), so
the t-weighted average has an optimisation error ∝ L0²/(L̃1 T) beside the noise term
∝ dL0²/(L̃1 n²ρ) of Theorem 9 (at the theorem's T the first is ≈ 1/log²(2/β) of the second).
Measured (8 seeds, d = 100, ρ = 0.01): at n = 3162 the theorem's T = 8973 gives excess 7.0e-4,
T/10 gives 9.5e-4 and T = 20 gives 1.7e-2; with T = 20 the n-slope flattens to ≈ 0.
F̃(w) − F̃(w*) is computed as the difference of two values of size ≈ L0/4; the excess stays
above 1e-5 on the grid, so the rounding (≈ 1e-16) is negligible.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.base import Problem
from algorithms.kl.noisy_gd import noisy_gd
from algorithms.validation import check_finite_array, check_positive
from algorithms.noise_meter import NoiseMeter, release_hook

__all__ = ["KinkLoss", "run_thm9_kink"]


class KinkLoss(Problem):
    """f(w; x_i) = L0·h_δ(‖w − x*‖) for all i (see the module docstring)."""

    def __init__(self, n: int, d: int, L0: float, x_star: np.ndarray, delta: float = 1e-9):
        super().__init__(n, d)
        self.L0 = check_positive("L0", L0)
        self.x_star = check_finite_array("x_star", x_star, ndim=1)
        if self.x_star.shape != (d,):
            raise ValueError(f"x_star must have shape ({d},), got {self.x_star.shape}")
        self.delta = check_positive("delta", delta)

    def _value(self, W: np.ndarray) -> np.ndarray:
        r = np.linalg.norm(W - self.x_star, axis=1)
        return self.L0 * np.where(r <= self.delta, r * r / (2 * self.delta), r - self.delta / 2)

    def _loss(self, W):
        return self._value(W)

    def _gradient(self, W):
        # once per noisy-GD step (9·10⁴ per sweep point): np.linalg.norm's own formula,
        # sqrt(add.reduce(D·D)), without its Python-level dispatch (the same numbers)
        D = W - self.x_star
        r = np.sqrt(np.add.reduce(D * D, axis=1, keepdims=True))
        return self.L0 * D / np.maximum(r, self.delta)

    def _per_sample_gradients(self, W, idx):
        return np.broadcast_to(self._gradient(W)[:, None, :], (W.shape[0], idx.size, self.d))

    def regularized_excess(self, W: np.ndarray, w0: np.ndarray, L1t: float) -> np.ndarray:
        """F̃(w) − F̃(w*), F̃ = F + L̃1‖· − w0‖², w* = x* + a(w0 − x*), a = 2L̃1δ/(L0 + 2L̃1δ)
        (valid when 2L̃1‖x* − w0‖ ≤ L0, checked)."""
        if 2 * L1t * np.linalg.norm(self.x_star - w0) > self.L0:
            raise ValueError("x_star must lie within L0/(2 L1t) of w0 for the closed-form optimum")
        a = 2 * L1t * self.delta / (self.L0 + 2 * L1t * self.delta)
        w_star = self.x_star + a * (w0 - self.x_star)
        W = np.atleast_2d(W)
        Ft = lambda V: self._value(V) + L1t * np.sum((V - w0) ** 2, axis=1)   # noqa: E731
        return Ft(W) - Ft(w_star[None, :])


def run_thm9_kink(point: dict, rngs: list) -> dict:
    """Algorithm 4 at Theorem 9's T on :class:`KinkLoss`; rows as in ``_run_thm9``."""
    n, d = int(round(point["n"])), int(round(point["d"]))
    x_star = np.zeros(d)
    x_star[0] = point["x_dist"]
    prob = KinkLoss(n, d, point["L0"], x_star)
    w0 = np.zeros(d)
    R = len(rngs)
    T = max(1, math.ceil(n * n * point["rho"] * math.log(2.0 / point["beta"]) ** 2 / d))
    sigma = (2.0 * point["L0"] / n) * math.sqrt((T - 1) / (2.0 * point["rho"]))
    meter = NoiseMeter(R)
    res = noisy_gd(prob, rho=point["rho"], w0=w0, L0=point["L0"], L1t=point["L1t"],
                   beta=point["beta"], rng=rngs, track_distance=True,
                   observe=release_hook(meter, ("gradient",), scale=lambda kind, s: sigma))
    return {"excess": prob.regularized_excess(res.w, w0, point["L1t"]), **meter.columns(),
            "rho_spent": np.full(R, res.privacy.rho),
            "rho_guarantee": np.full(R, res.privacy.guarantee_rho),
            "rho_target": np.full(R, point["rho"]),
            "steps": np.full(R, res.info["T"]),
            "used_T": np.full(R, float(res.info["T"])), "theory_T": np.full(R, float(T)),
            "used_sigma": np.full(R, res.info["sigma"]), "theory_sigma": np.full(R, sigma),
            "max_dist": res.info["max_dist"],
            "limit_dist": np.full(R, point["L0"] / (2.0 * point["L1t"]))}
