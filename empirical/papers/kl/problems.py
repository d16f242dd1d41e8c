"""Problems and run functions of the KL paper's experiments.

Split from :mod:`empirical.papers.kl.experiments`, which declares the experiments: this module holds
everything that computes a stored row (problem instances with exact F* and excess, the run
functions), so the runner's code fingerprint covers it, while check declarations (tolerances,
level bands) can change without invalidating stored results.  The instances with a known,
tunable KL exponent live in :mod:`empirical.papers.kl.problems_shapes`, the data-driven
regression in :mod:`empirical.papers.kl.problems_regression` (both re-exported here); this
module holds Theorem 9's linear loss, the instance of each grid point and the run functions.

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
from functools import lru_cache

import numpy as np

from algorithms.base import Problem
from algorithms.kl.noisy_gd import noisy_gd
from algorithms.noise_meter import NoiseMeter, release_hook
from empirical.papers.kl.problems_regression import (MomentPowerRegression, PowerRegression,
                                                     regression_design)
from empirical.papers.kl.problems_shapes import NonconvexKL, RadialPowerLoss, SpreadQuarticLoss

__all__ = ["LinearLoss", "RadialPowerLoss", "NonconvexKL", "PowerRegression",
           "MomentPowerRegression", "SpreadQuarticLoss", "regression_design"]



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
        self.mean.flags.writeable = False     # shared by the cached gradient views below
        self._views: dict = {}

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
        # x̄ for every row: one read-only broadcast view per shape (noisy GD asks 10⁵ times)
        view = self._views.get(W.shape)
        if view is None:
            view = self._views[W.shape] = np.broadcast_to(self.mean, W.shape)
        return view

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
    R = len(rngs)
    # Theorem 9's settings, recomputed here from the theorem (not read from the algorithm), so
    # that the settings verdict (empirical.core.checks.check_settings) compares two computations:
    # T = ⌈n²ρ log²(2/β)/d⌉ and KL-E1's σ = (2L0/n)√((T−1)/(2ρ)); the ball radius L0/(2L̃1).
    # The measured noise of the gradient releases is judged against that σ.
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
            "steps": np.full(R, res.info["T"]), "grad_evals": np.full(R, res.grad_evals),
            "used_T": np.full(R, float(res.info["T"])), "theory_T": np.full(R, float(T)),
            "used_sigma": np.full(R, res.info["sigma"]), "theory_sigma": np.full(R, sigma),
            "max_dist": res.info["max_dist"],
            "limit_dist": np.full(R, point["L0"] / (2.0 * point["L1t"]))}


# =============================================================================================
# Problem instances by grid point, and the run functions
# =============================================================================================
__all__ += ["make_problem", "kl_values"]

_PROBLEM_KEYS = ("problem", "n", "d", "p", "c", "B", "b", "s", "data_seed")


@lru_cache(maxsize=256)
def _cached_problem(key: tuple) -> Problem:
    pt = dict(key)
    kind = pt["problem"]
    n, d = int(round(pt["n"])), int(round(pt["d"]))
    if kind == "radial":
        return RadialPowerLoss(n, d, pt["p"], c=pt.get("c", 1.0), B=pt.get("B", 1.0))
    if kind == "ncvx":
        return NonconvexKL(n, d, pt["p"], c=pt.get("c", 1.0), b=pt.get("b", 2.5))
    if kind == "regr":
        return PowerRegression.sample(n, d, pt["p"], B=pt.get("B", 1.0),
                                      data_seed=int(pt.get("data_seed", 0)))
    if kind == "regr_moment":
        return MomentPowerRegression(n, d, pt["p"], B=pt.get("B", 1.0),
                                     data_seed=int(pt.get("data_seed", 0)))
    if kind == "spread":
        return SpreadQuarticLoss(n, d, pt["s"], c=pt.get("c", 1.0), B=pt.get("B", 1.0))
    raise ValueError("problem must be one of 'radial', 'ncvx', 'regr', 'regr_moment', 'spread', "
                     f"got {kind!r}")


def make_problem(point: dict) -> Problem:
    """The problem instance a grid point describes (cached: bound evaluation and runs share it)."""
    return _cached_problem(tuple(sorted((k, point[k]) for k in _PROBLEM_KEYS if k in point)))


def _w0_F0(prob: Problem) -> tuple[np.ndarray, float]:
    w0 = prob.start()
    return w0, float(prob.excess(w0)[0])


def _kappa_gamma(prob: Problem, point: dict) -> tuple[float, float]:
    """The (κ, γ) the instance satisfies; for the spread quartic, the exponent ``kappa_eff``."""
    if isinstance(prob, SpreadQuarticLoss):
        k = point.get("kappa_eff", 2.0)
        return k, prob.kl_gamma(k)
    return prob.kappa, prob.gamma


def kl_values(point: dict, **override) -> dict:
    """Values of the KL bounds' symbols at the instance of ``point``: n, d, ρ, β, κ, γ, L0, L1
    (times ``L1_factor`` when an experiment declares a larger smoothness constant), L̃1 and F0
    (the exact excess of the start point, which is what the algorithms are given)."""
    prob = make_problem(point)
    kappa, gamma = _kappa_gamma(prob, point)
    _, F0 = _w0_F0(prob)
    vals = {"n": float(prob.n), "d": float(prob.d), "rho": point["rho"], "beta": point["beta"],
            "kappa": kappa, "gamma": gamma, "L0": prob.L0, "F0": F0}
    if getattr(prob, "smooth", False):
        vals["L1"] = prob.L1 * point.get("L1_factor", 1.0)
    if "L1t" in point:
        vals["L1t"] = point["L1t"]
    if "gamma" in point:
        # a declared KL constant (any γ at least the instance's is one): what Algorithm 1 is given
        vals["gamma"] = float(point["gamma"])
    vals.update(override)
    return vals


def _privacy_columns(res, rho: float, R: int) -> dict:
    priv = res.privacy if isinstance(res.privacy, list) else [res.privacy] * R
    return {"rho_spent": np.array([p.rho for p in priv], dtype=float),
            "rho_guarantee": np.array([p.guarantee_rho for p in priv], dtype=float),
            "rho_target": np.full(R, float(rho))}


# --- run functions -----------------------------------------------------------------------------
def _run_spider(point: dict, rngs: list) -> dict:
    from algorithms.kl.spider import kl_spider

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    kappa = point.get("kappa_declared", prob.kappa)          # misspecification experiments
    gamma = point.get("gamma", prob.gamma * point.get("gamma_factor", 1.0))
    if gamma < prob.gamma:
        # (γ, κ)-KL holds for every γ at least the instance's; a smaller one is not a KL constant
        raise ValueError(f"gamma must be in [{prob.gamma!r}, inf) for this instance, got {gamma!r}")
    R = len(rngs)
    # the noise-free control (noise_factor 0) is not private: nothing to measure
    noise_factor = point.get("noise_factor", 1.0)
    meter = NoiseMeter(R) if noise_factor == 1.0 else None
    res = kl_spider(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                    L1=prob.L1 * point.get("L1_factor", 1.0), gamma=gamma,
                    kappa=kappa, F0=F0, beta=point["beta"], rng=rngs,
                    observe=release_hook(meter, ("full", "difference")) if meter else None,
                    noise_factor=noise_factor)
    return {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
            **(meter.columns() if meter else {}),
            "steps": np.asarray(res.info["steps"], dtype=float).reshape(-1) * np.ones(R),
            "rounds": np.full(R, float(res.info["K"])),
            "floor": np.full(R, float(res.info["floor"])),
            "F0": np.full(R, F0),
            "in_kl_region": prob.in_kl_region(res.w).astype(float)}


# --- Theorem 1 across κ: the n-slope of Spider at one instance per κ ---------------------------------
__all__ += ["spider_kappa_point", "kappa_of_slope", "thm1_slope_at"]

#: The n-slope is the secant over [n/NSLOPE_RATIO, n·NSLOPE_RATIO] around the point's n.
NSLOPE_RATIO = 10.0


def spider_kappa_point(point: dict, kappa: float) -> dict:
    """The radial instance of ``point`` at KL exponent ``kappa`` ∈ (1, 2]: p = κ/(κ−1), and at
    p = 2 a declared L1 eight times the true one (GD with η = 1/(2L1) on c r² halves r exactly,
    a staircase in n; Theorem 1 holds for any upper bound on L1)."""
    if not 1.0 < kappa <= 2.0:
        raise ValueError(f"kappa must be in (1, 2], got {kappa!r}")
    p = kappa / (kappa - 1.0)
    out = {k: v for k, v in point.items() if k != "slope_thm1"}
    out["p"] = p
    if p == 2.0:
        out["L1_factor"] = 8.0
    return out


def thm1_slope_at(point: dict, kappa: float, bound: str = "kl:thm1") -> float:
    """|secant n-slope| of ``bound`` (Theorem 1 by default) over [n/10, 10n] at the instance of
    ``point`` with KL exponent ``kappa`` (its own γ, L0, L1, F0)."""
    from bounds.rates.kl import secant_nslope

    return secant_nslope(bound, kl_values(spider_kappa_point(point, kappa)), NSLOPE_RATIO)


def kappa_of_slope(point: dict, slope: float) -> float:
    """The κ ∈ (1, 2] whose Theorem 1 n-slope (:func:`thm1_slope_at`) is ``slope``: the grid of
    the κ-continuum experiment is the predicted slope; κ is rounded to 6 decimals (the grid's κ
    have at most 4), so κ = 2 gives p = 2 exactly."""
    from scipy.optimize import brentq

    lo, hi = 1.1, 2.0
    f = lambda k: thm1_slope_at(point, k) - slope  # noqa: E731
    if not f(lo) <= 0.0 <= f(hi):
        raise ValueError(f"slope_thm1 must be in [{f(lo) + slope:.4g}, {f(hi) + slope:.4g}] "
                         f"(κ ∈ [{lo}, {hi}]), got {slope!r}")
    return round(brentq(f, lo, hi, xtol=1e-12), 6)


def _run_spider_nslope(point: dict, rngs: list) -> dict:
    """Spider at n/10 and 10n on the instance of the point's κ, same seeds' streams: per seed the
    secant n-slope of the excess, with both runs' privacy and measured noise."""
    from algorithms.kl.spider import kl_spider

    kappa = kappa_of_slope(point, point["slope_thm1"])
    base = spider_kappa_point(point, kappa)
    R = len(rngs)
    meter = NoiseMeter(R)
    exc, priv, steps = [], [], []
    for n in (point["n"] / NSLOPE_RATIO, point["n"] * NSLOPE_RATIO):
        pt = {**base, "n": float(round(n))}
        prob = make_problem(pt)
        w0, F0 = _w0_F0(prob)
        res = kl_spider(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                        L1=prob.L1 * pt.get("L1_factor", 1.0), gamma=prob.gamma, kappa=prob.kappa,
                        F0=F0, beta=point["beta"], rng=rngs,
                        observe=release_hook(meter, ("full", "difference")))
        exc.append(prob.excess(res.w))
        priv.append(_privacy_columns(res, point["rho"], R))
        steps.append(np.asarray(res.info["steps"], dtype=float).reshape(-1) * np.ones(R))
    slope = -(np.log(exc[1]) - np.log(exc[0])) / (2.0 * math.log(NSLOPE_RATIO))
    return {"nslope": slope, "excess_lo": exc[0], "excess_hi": exc[1],
            "kappa": np.full(R, kappa), "p": np.full(R, base["p"]),
            "rho_spent": np.maximum(priv[0]["rho_spent"], priv[1]["rho_spent"]),
            "rho_guarantee": np.maximum(priv[0]["rho_guarantee"], priv[1]["rho_guarantee"]),
            "rho_target": priv[0]["rho_target"], **meter.columns(),
            "steps_lo": steps[0], "steps_hi": steps[1]}


def adaptive_hook(meter: NoiseMeter, prob: Problem, rho: float, select: str = "last"):
    """The measured-noise hook of Algorithm 3: its gradient releases against the σ_t it states
    (data dependent: N_t/√(dA)), its norm releases N_t against σ̂ = L0/(√n ρ_run^{1/4})
    recomputed here from Algorithm 3's line, ρ_run = ρ less the selection's share (Theorem 5)."""
    from algorithms.kl.adaptive import SELECT_SHARE

    rho_run = rho * (1.0 - SELECT_SHARE) if select == "exponential" else rho
    sigma_hat = prob.L0 / (math.sqrt(prob.n) * rho_run ** 0.25)
    return release_hook(meter, ("gradient", "norm"),
                        scale=lambda kind, sigma: sigma_hat if kind == "norm" else sigma)


def _run_adaptive(point: dict, rngs: list) -> dict:
    from algorithms.kl.adaptive import adaptive_noisy_gd

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    select = "exponential" if point.get("select_exponential", 0) else "last"
    R = len(rngs)
    noise_factor = point.get("noise_factor", 1.0)
    meter = NoiseMeter(R) if noise_factor == 1.0 else None
    res = adaptive_noisy_gd(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                            L1=prob.L1 * point.get("L1_factor", 1.0), beta=point["beta"],
                            rng=rngs, select=select, noise_factor=noise_factor,
                            observe=adaptive_hook(meter, prob, point["rho"], select) if meter else None)
    out = {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
           **(meter.columns() if meter else {}),
           "steps": np.asarray(res.info["T"], dtype=float).reshape(-1) * np.ones(R),
           "F0": np.full(R, F0), "in_kl_region": prob.in_kl_region(res.w).astype(float),
           "stopped_by": np.asarray(res.info["stopped_by"], dtype=str).reshape(-1)}
    if select == "exponential":
        out["grad_norm"] = np.linalg.norm(prob.gradient(res.w), axis=-1).reshape(-1)
    return out


def _run_ppm(point: dict, rngs: list) -> dict:
    from algorithms.kl.proximal import proximal_point

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    R = len(rngs)
    meter = NoiseMeter(R)
    res = proximal_point(prob, rho=point["rho"], w0=w0, L0=prob.L0, L1t=point["L1t"],
                         gamma=prob.gamma, kappa=prob.kappa, F0=F0, beta=point["beta"], rng=rngs,
                         inner_max_steps=int(point["inner_max_steps"]),
                         observe=release_hook(meter, ("gradient",)))
    return {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
            **meter.columns(),
            "outer_T": np.full(R, float(res.info["T"])),
            "inner_T": np.full(R, float(res.info["inner_T"])),
            "inner_T_theory": np.full(R, float(res.info["inner_T_theory"])),
            "F0": np.full(R, F0), "in_kl_region": prob.in_kl_region(res.w).astype(float)}


