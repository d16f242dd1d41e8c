"""Problems and run functions of the KL paper's experiments.

Split from :mod:`empirical.papers.kl.experiments`, which declares the experiments: this module holds
everything that computes a stored row (problem instances with exact F* and excess, the run
functions), so the runner's code fingerprint covers it, while check declarations (tolerances,
level bands) can change without invalidating stored results.

with known optimum and sweeps checked against ``bounds.rates.kl``.

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

from algorithms.base import Problem
from algorithms.kl.condition import noisy_gd
from algorithms.noise_meter import NoiseMeter, release_hook

__all__ = ["LinearLoss"]



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
# Problems with a known, tunable KL exponent (Sections 3-4 of the paper)
# =============================================================================================
# Every problem below exposes the constants the theorems take as inputs — ``kappa``, ``gamma``
# (F − F* ≤ γ^κ‖∇F‖^κ on ``in_kl_region``), ``L0`` (per-example Lipschitz constant, global, so
# that the privacy analysis holds wherever the iterates go), ``L1`` (per-example smoothness, when
# it exists), ``F_star`` — and ``excess(W)``, the exact excess F(w) − F* computed without
# subtracting two nearly equal numbers (for κ ≥ 2 the excess reaches 1e−12 and below).
# Gradients cost O(d) per row whatever n is, except for the data-driven regression (O(nd)).

import hashlib
import inspect
from functools import lru_cache

from scipy import optimize as _opt

from empirical.papers.kl import moments as kl_moments
from algorithms.validation import (check_finite_array, check_int, check_interval,
                                   check_open_interval, check_positive)

__all__ += ["RadialPowerLoss", "NonconvexKL", "PowerRegression", "MomentPowerRegression",
            "SpreadQuarticLoss", "regression_design"]


def _huber_power(r: np.ndarray, p: float, B: float) -> np.ndarray:
    """h(r) = r^p for r ≤ B and B^p + pB^{p−1}(r − B) beyond (C¹, slope pB^{p−1})."""
    return np.where(r <= B, np.power(np.minimum(r, B), p), B**p + p * B ** (p - 1) * (r - B))


def _huber_power_slope(r: np.ndarray, p: float, B: float) -> np.ndarray:
    """h'(r)."""
    return p * np.power(np.minimum(r, B), p - 1)


class RadialPowerLoss(Problem):
    """f(w; x_i) = c·h(‖w − w*‖) for every i, h the power r^p Huberized at radius B.

    Exact constants (verified in tests/test_kl_problems.py):

    * KL: on ‖w − w*‖ ≤ B, F = c r^p and ‖∇F‖ = cp r^{p−1}, so F − F* = γ^κ‖∇F‖^κ holds with
      **equality** for κ = p/(p−1), γ = 1/(p c^{1/p}).  Beyond B the gradient norm is constant
      and KL fails, so ``in_kl_region`` is the ball of radius B.
    * Lipschitz: L0 = c p B^{p−1} globally (per example).
    * Smoothness (p ≥ 2): the Hessian's radial eigenvalue is cp(p−1)r^{p−2}, the tangential
      ones cp r^{p−2} (inside) and cpB^{p−1}/r (outside), so L1 = cp(p−1)B^{p−2}.  For p < 2
      (κ > 2) the loss is not smooth at w*, but it is convex, hence L̃1-weakly convex for every
      L̃1 > 0 (the setting of Theorem 2).

    p ≥ 2 gives κ ∈ (1, 2] (p = 2, 3, 4, 6 ↦ κ = 2, 3/2, 4/3, 6/5); 1 < p < 2 gives κ > 2
    (p = 3/2 ↦ 3, 4/3 ↦ 4).  All examples share the minimiser, so n enters only through the
    privacy sensitivity and a gradient costs O(d): n can be 10⁹.
    """

    def __init__(self, n: int, d: int, p: float, *, c: float = 1.0, B: float = 1.0,
                 w_star: np.ndarray | None = None):
        super().__init__(n, d)
        self.p = check_open_interval("p", p, 1.0, math.inf)
        self.c = check_positive("c", c)
        self.B = check_positive("B", B)
        self.w_star = (np.zeros(self.d) if w_star is None
                       else check_finite_array("w_star", w_star, ndim=1))
        if self.w_star.shape != (self.d,):
            raise ValueError(f"w_star must have shape ({self.d},), got {self.w_star.shape}")
        self.kappa = self.p / (self.p - 1.0)
        self.gamma = 1.0 / (self.p * self.c ** (1.0 / self.p))
        self.L0 = self.c * self.p * self.B ** (self.p - 1.0)
        self.F_star = 0.0
        self._cp, self._p1 = self.c * self.p, self.p - 1.0     # the gradient's constants
        # w* = +0 in every coordinate (the default): w − w* is w itself, bit for bit (x − (+0) = x
        # for every x, −0 included), so the gradient skips that subtraction
        self._origin = not (np.any(self.w_star) or np.any(np.signbit(self.w_star)))

    @property
    def smooth(self) -> bool:
        return self.p >= 2.0

    @property
    def L1(self) -> float:
        if not self.smooth:
            raise ValueError(f"the radial loss with p = {self.p} < 2 is not smooth at w* "
                             "(use it with weak convexity, Theorem 2)")
        return self.c * self.p * (self.p - 1.0) * self.B ** (self.p - 2.0)

    def radius(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W) - self.w_star, axis=1)

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − F* = c·h(‖w − w*‖), from the distance itself (no cancellation)."""
        return self.c * _huber_power(self.radius(W), self.p, self.B)

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return self.radius(W) <= self.B

    def start(self, r0: float | None = None) -> np.ndarray:
        """w0 = w* + r0·(1, …, 1)/√d (default r0 = B/2); F0 = c r0^p (see :meth:`excess`)."""
        r0 = 0.5 * self.B if r0 is None else check_positive("r0", r0)
        return self.w_star + r0 * np.full(self.d, 1.0 / math.sqrt(self.d))

    def _loss(self, W):
        return self.excess(W)

    def _gradient(self, W):
        # c·p·min(r, B)^{p−1}/r · (w − w*), called once per step of every inner loop (10⁶ steps
        # per sweep point at d = 1), so kept to a few ufuncs with no error-state switch
        diff = W if self._origin else W - self.w_star
        if self.d == 1:
            r = np.sqrt(diff * diff)            # what the einsum below sums: its only term
        else:
            r = np.sqrt(np.einsum("ij,ij->i", diff, diff))[:, None]
        scale = self._cp * np.power(np.minimum(r, self.B), self._p1)
        if np.minimum.reduce(r, axis=None) > 0:  # r.all() without its wrapper (NaN: below)
            scale /= r
        else:                                   # at w*: 0/0, the gradient is 0
            with np.errstate(divide="ignore", invalid="ignore"):
                scale /= r
            scale[r == 0] = 0.0
        return diff * scale

    def _per_sample_gradients(self, W, idx):
        return np.broadcast_to(self._gradient(W)[:, None, :], (W.shape[0], idx.size, self.d))


# --- the nonconvex PL function of Karimi et al. and its powers --------------------------------
def _g(x):
    return x * x + 3.0 * np.sin(x) ** 2


def _g1(x):
    return 2.0 * x + 3.0 * np.sin(2.0 * x)


def _g2(x):
    return 2.0 + 6.0 * np.cos(2.0 * x)


def _sup_1d(fun, a: float, b: float) -> float:
    """sup of a smooth function on [a, b]: dense grid, then a bounded local refinement."""
    x = np.linspace(a, b, 200_001)
    y = fun(x)
    i = int(np.argmax(y))
    lo, hi = x[max(i - 1, 0)], x[min(i + 1, x.size - 1)]
    best = float(y[i])
    if hi > lo:
        res = _opt.minimize_scalar(lambda t: -float(fun(np.array([t]))[0]), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-12})
        best = max(best, -float(res.fun))
    return best


@lru_cache(maxsize=None)
def _ncpl_constants(b: float) -> dict:
    """1-D constants of g(x) = x² + 3 sin²x on [0, b] (g is even and increasing in |x|)."""
    # g/g'² → 1/16 and g'²/g → 16 as x → 0 (g ≈ 4x², g' ≈ 8x); the grid starts just above 0.
    gamma_G2 = max(1.0 / 16.0, _sup_1d(lambda x: _g(x) / _g1(x) ** 2, 1e-6, b))
    M = max(16.0, _sup_1d(lambda x: _g1(x) ** 2 / _g(x), 1e-6, b))
    ell = _sup_1d(lambda x: np.abs(_g1(x)), 0.0, b)
    return {"gamma_G": math.sqrt(gamma_G2), "M": M, "ell": ell}


class NonconvexKL(Problem):
    """F(w) = c·φ_q(G̃(w)), q = p/2, with G(w) = Σ_j (w_j² + 3 sin² w_j) (Karimi, Nutini,
    Schmidt 2016): nonconvex (g'' = 2 + 6 cos 2x ≥ −4), unique stationary point w* = 0, F* = 0.

    p = 2 is the nonconvex PL function itself (κ = 2); p > 2 gives a nonconvex KL function with
    κ = p/(p−1) ∈ (1, 2).  With γ_G² = sup_x g(x)/g'(x)² (= 2.8485 at x ≈ 2.20),
    ‖∇G‖² = Σ g'(w_j)² ≥ G/γ_G², hence ‖∇F‖ = cqG^{q−1}‖∇G‖ ≥ c^{1−1/κ}(q/γ_G)F^{1/κ}:
    (γ, κ)-KL with γ = γ_G/(q c^{1/p}) = 2γ_G/(p c^{1/p}) (tight: equality at the extremal x).

    Lipschitz everywhere: each coordinate's g is Huberized beyond |x| = b (g̃ = g(b) +
    g'(b)(|x| − b)), and the outer power beyond U = g(b) (φ_q(u) = u^q for u ≤ U, U^q +
    qU^{q−1}(u − U) beyond).  Because g is increasing in |x|, {G ≤ U} forces every |w_j| ≤ b,
    so on ``in_kl_region`` = {G ≤ U} (which contains the ball of radius √U/2, as G ≤ 4‖w‖²)
    F = cG^q exactly and KL holds.

    Constants (M = sup g'²/g = 16, ℓ = sup_{|x|≤b}|g'|, |g''| ≤ 8):

    * d = 1: L0 = c·sup_{|x|≤b}|φ'(g)g'|, L1 = c·sup_{|x|≤b}|φ''(g)g'² + φ'(g)g''| (exact
      1-D suprema; F is affine in |x| beyond b);
    * d > 1: ‖∇F‖ ≤ c qU^{q−1}·√d ℓ and ‖∇²F‖ ≤ c qU^{q−1}((q−1)M + 8) (φ' ≤ qU^{q−1},
      φ''(u)‖∇G̃‖² ≤ q(q−1)u^{q−2}·Mu).  L0 grows like √d, so sweep d on the radial loss.
    """

    def __init__(self, n: int, d: int, p: float = 2.0, *, c: float = 1.0, b: float = 2.5):
        super().__init__(n, d)
        self.p = check_interval("p", p, 2.0, math.inf)
        self.c = check_positive("c", c)
        self.b = check_positive("b", b)
        self.q = self.p / 2.0
        self.U = float(_g(self.b))
        self._g1b = _g1(self.b)          # g'(b), the slope of each Huberized coordinate beyond b
        self._b = np.array(self.b)       # for np.minimum: a 0-d array is not re-converted per call
        self._cq = self.c * self.q
        k = _ncpl_constants(self.b)
        self.kappa = self.p / (self.p - 1.0)
        self.gamma = k["gamma_G"] / (self.q * self.c ** (1.0 / self.p))
        q, U = self.q, self.U
        if self.d == 1:
            self.L0 = self.c * _sup_1d(lambda x: q * _g(x) ** (q - 1) * np.abs(_g1(x)), 0.0, self.b)
            # φ''(g)g'² = q(q−1)g^{q−1}·(g'²/g); as x → 0 the whole expression tends to 8 for
            # q = 1 (g'' → 8) and to 0 for q > 1, so the grid may start just above 0.
            limit0 = 8.0 if q == 1.0 else 0.0
            self.L1 = self.c * max(limit0, _sup_1d(
                lambda x: np.abs(q * (q - 1) * _g(x) ** (q - 1) * (_g1(x) ** 2 / _g(x))
                                 + q * _g(x) ** (q - 1) * _g2(x)), 1e-6, self.b))
        else:
            self.L0 = self.c * q * U ** (q - 1) * math.sqrt(self.d) * k["ell"]
            self.L1 = self.c * q * U ** (q - 1) * ((q - 1) * k["M"] + 8.0)
        self.F_star = 0.0
        self.smooth = True

    def _G(self, W: np.ndarray) -> np.ndarray:
        a = np.abs(W)
        return self._G_parts(a, np.minimum(a, self.b), False)

    def _G_parts(self, a: np.ndarray, inner: np.ndarray, inside: bool) -> np.ndarray:
        """G̃ from |w| and min(|w|, b), which the gradient shares.  ``inside``: every |w_j| ≤ b,
        where the linear extension adds g'(b)·0 = +0 to g ≥ +0, which changes no bit."""
        gt = _g(inner) if inside else _g(inner) + self._g1b * (a - inner)
        return gt.sum(axis=1)

    def _phi(self, u):
        U, q = self.U, self.q
        return np.where(u <= U, np.power(np.minimum(u, U), q), U**q + q * U ** (q - 1) * (u - U))

    def _phi1(self, u):
        if self.q == 1.0:          # q·min(u, U)⁰ = q exactly (x⁰ = 1 for every x, NaN included)
            return np.full(u.shape, self.q)
        return self.q * np.power(np.minimum(u, self.U), self.q - 1)

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − 0 = cφ_q(G̃(w)), a sum of nonnegative terms: no cancellation."""
        return self.c * self._phi(self._G(np.atleast_2d(W)))

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return self._G(np.atleast_2d(W)) <= self.U

    def start(self, r0: float | None = None) -> np.ndarray:
        """w0 = r0·(1, …, 1)/√d.  Default r0: 2.2 for d = 1 (next to the KL-extremal point
        x ≈ 2.20, so the descent crosses the nonconvex band |x| ∈ (0.955, 2.186)), and
        0.9·√U/2 for d > 1 (inside the ball that {G ≤ U} contains).  w0 must lie in the KL region."""
        if r0 is None:
            r0 = 2.2 if self.d == 1 else 0.45 * math.sqrt(self.U)
        w0 = np.full(self.d, check_positive("r0", r0) / math.sqrt(self.d))
        if not self.in_kl_region(w0)[0]:
            raise ValueError(f"r0 = {r0} puts w0 outside the KL region G <= g(b) = {self.U:.4g}")
        return w0

    def _loss(self, W):
        return self.excess(W)

    def _gradient(self, W):
        # c·φ'(G̃(w))·sign(w)·|g̃'(|w|)|, once per Spider step (10⁵ rounds per sweep point, on
        # (R, 1) arrays: numpy's per-call cost is all), so |w| and min(|w|, b) are computed
        # once and the branches for |w_j| > b run only when some coordinate is there (NaN too)
        a = np.abs(W)
        inner = np.minimum(a, self._b)
        inside = bool(np.maximum.reduce(a, axis=None) <= self.b)
        g1 = np.abs(_g1(inner))
        gt1 = np.sign(W) * (g1 if inside else np.where(a <= self.b, g1, self._g1b))
        if self.q == 1.0:          # φ'(u) = q·min(u, U)⁰ = q exactly, whatever G̃ is
            return self._cq * gt1
        return (self.c * self._phi1(self._G_parts(a, inner, inside)))[:, None] * gt1

    def _per_sample_gradients(self, W, idx):
        return np.broadcast_to(self._gradient(W)[:, None, :], (W.shape[0], idx.size, self.d))


#: The declared data domain of the regression problems: ‖a_i‖ ≤ A_DOMAIN.  The constants the
#: algorithms are given (L0, L1: the sensitivity) come from it, never from the private data
#: (errata KL-E26: max‖a_i‖ made the guarantee data-dependent, 1.0000464ρ at n = 1e4).
A_DOMAIN = 1.0


def _set_regression_constants(prob, second_moment: np.ndarray, m_d1: float | None,
                              amax: float) -> None:
    """κ, γ, L0, L1, KL radius of p-th-power regression (see :class:`PowerRegression`), given
    mean a_i a_iᵀ, m = mean|a_i|^p when d = 1 (exact) and max‖a_i‖ (only checked against the
    domain).  L0, L1 and the KL radius use the domain bound ‖a‖ ≤ A_DOMAIN: per-example
    Lipschitz and smoothness constants must hold for every possible record, or the sensitivity
    2L0/n depends on the data.  For d > 1, m is replaced by Jensen's lower bound λ_min^{p/2}
    (a data statistic, but it enters only γ, the KL constant used by the analysis and the bound,
    not the privacy calibration)."""
    if amax > A_DOMAIN * (1 + 1e-12):
        raise ValueError(f"rows of A must have norm in [0, {A_DOMAIN}], got max {amax:.6g}")
    amax = A_DOMAIN
    p, B = prob.p, prob.B
    if m_d1 is not None:
        m = m_d1
    else:
        m = max(float(np.linalg.eigvalsh(second_moment)[0]), 0.0) ** (p / 2.0)
    if not m > 0:
        raise ValueError("the design must have full column rank (the KL constant is infinite)")
    prob.m = m
    prob.kappa = p / (p - 1.0)
    prob.gamma = 1.0 / (p * m ** (1.0 / p))
    prob.L0 = p * B ** (p - 1.0) * amax
    prob.L1 = p * (p - 1.0) * B ** (p - 2.0) * amax**2
    prob.kl_radius = B / max(amax, 1e-300)
    prob.F_star = 0.0
    prob.smooth = True


class PowerRegression(Problem):
    """Realizable p-th-power regression, f(w; a_i) = h(|⟨a_i, w − w*⟩|) = h(|⟨a_i, w⟩ − y_i|),
    y_i = ⟨a_i, w*⟩, with h the power r^p Huberized at B, ‖a_i‖ ≤ 1, p ≥ 2: the data-driven case.

    Inside {‖w − w*‖ ≤ B} every residual is ≤ B, F(w) = mean|⟨a_i, v⟩|^p with v = w − w* is
    p-homogeneous, so ⟨∇F, v⟩ = pF and ‖∇F‖ ≥ pF/‖v‖; with m = min_{‖u‖=1} mean|⟨a_i,u⟩|^p,
    ‖v‖ ≤ (F/m)^{1/p}, hence (γ, κ)-KL with κ = p/(p−1), γ = 1/(p m^{1/p}).  m is exact for
    d = 1 (mean|a_i|^p) and for d > 1 replaced by the lower bound λ_min(Σ̂)^{p/2} (Jensen, p ≥ 2),
    which keeps γ a valid KL constant.  L0 = pB^{p−1}max‖a_i‖, L1 = p(p−1)B^{p−2}max‖a_i‖².
    Residuals are computed as ⟨a_i, w − w*⟩, never as ⟨a_i, w⟩ − y_i, so the excess has no
    cancellation.  A gradient costs O(nd): use moderate n.
    """

    def __init__(self, A: np.ndarray, w_star: np.ndarray, p: float, *, B: float = 1.0):
        A = check_finite_array("A", A, ndim=2)
        super().__init__(*A.shape)
        self.A = A
        self.w_star = check_finite_array("w_star", w_star, ndim=1)
        if self.w_star.shape != (self.d,):
            raise ValueError(f"w_star must have shape ({self.d},), got {self.w_star.shape}")
        self.p = check_interval("p", p, 2.0, math.inf)
        self.B = check_positive("B", B)
        amax = float(np.max(np.linalg.norm(A, axis=1)))
        if amax > 1.0 + 1e-12:
            raise ValueError(f"rows of A must have norm <= 1, got max {amax:.6g}")
        m_d1 = float(np.mean(np.abs(A[:, 0]) ** self.p)) if self.d == 1 else None
        _set_regression_constants(self, A.T @ A / self.n, m_d1, amax)

    @classmethod
    def sample(cls, n: int, d: int, p: float, *, B: float = 1.0, data_seed: int = 0) -> "PowerRegression":
        """a_i uniform in the unit ball (:func:`regression_design`); w* = 0.3·(1, …, 1)/√d."""
        n, d = check_int("n", n), check_int("d", d)
        A = np.concatenate(list(regression_design(n, d, data_seed)))
        return cls(A, np.full(d, 0.3 / math.sqrt(d)), p, B=B)

    def _residuals(self, W):
        return (W - self.w_star) @ self.A.T                       # (R, n)

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − 0 = mean_i h(|⟨a_i, w − w*⟩|) (F* = 0: the data are realizable)."""
        return _huber_power(np.abs(self._residuals(np.atleast_2d(W))), self.p, self.B).mean(axis=1)

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W) - self.w_star, axis=1) <= self.kl_radius

    def start(self, r0: float | None = None) -> np.ndarray:
        r0 = 0.5 * self.kl_radius if r0 is None else check_positive("r0", r0)
        return self.w_star + r0 * np.full(self.d, 1.0 / math.sqrt(self.d))

    def _loss(self, W):
        return self.excess(W)

    def _gradient(self, W):
        r = self._residuals(W)
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s @ self.A / self.n

    def _per_sample_gradients(self, W, idx):
        r = self._residuals(W)[:, idx]
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s[:, :, None] * self.A[idx][None, :, :]


_DESIGN_CHUNK = 1 << 18


def regression_design(n: int, d: int, data_seed: int = 0, chunk: int = _DESIGN_CHUNK):
    """The design a_1..a_n (uniform in the unit ball of R^d) as a stream of row blocks.

    Block c holds rows c·chunk … and comes from its own generator
    ``default_rng([data_seed, n, d, 7, c])``, so one block can be regenerated alone and the
    stored (:class:`PowerRegression`) and streamed (:class:`MomentPowerRegression`) instances
    see the same rows.
    """
    n, d = check_int("n", n), check_int("d", d)
    for c, start in enumerate(range(0, n, chunk)):
        m = min(chunk, n - start)
        rng = np.random.default_rng([data_seed, n, d, 7, c])
        Z = rng.standard_normal((m, d))
        # ‖z‖ as np.linalg.norm computes it for a real array, sqrt(add.reduce(z·z)), without its
        # conj() copy: the same reduction on the same products
        Z /= np.sqrt(np.add.reduce(Z * Z, axis=1, keepdims=True))
        Z *= rng.random((m, 1)) ** (1.0 / d)
        yield Z


#: Designs with fewer rows are built in place (< 0.2 s), leaving no cache file behind tests.
MOMENT_CACHE_MIN_ROWS = 1 << 20


def _design_moments(n: int, d: int, p: float, data_seed: int) -> dict[str, np.ndarray]:
    """One pass over :func:`regression_design`: mean a_i a_iᵀ, max‖a_i‖² and, for p = 4, the
    fourth moments mean a_j a_k a_l a_m as the d² × d² matrix G[(j,k),(l,m)].

    G comes from the Gram matrix of the d(d+1)/2 distinct products a_j a_k (j ≤ k), expanded by
    index: 10 columns instead of 16 at d = 4, ≈ 2.5× fewer flops.  Each entry is the same sum
    of the same products as in the 16-column Gram (a_j a_k = a_k a_j exactly), so G is
    unchanged (bit-identical on the quick grid's n = 10⁷ design)."""
    ju, ku = np.triu_indices(d)
    S = np.zeros((d, d))
    Gu = np.zeros((ju.size, ju.size)) if p == 4.0 else None
    amax2 = 0.0
    pairs = list(zip(ju.tolist(), ku.tolist()))
    Q = np.empty((0, 0))
    for Z in regression_design(n, d, data_seed):
        amax2 = max(amax2, float(np.max(np.einsum("ij,ij->i", Z, Z))))
        S += Z.T @ Z
        if Gu is not None:
            # Q[i] = a_j a_k for the i-th pair: one multiply per pair straight into a reused
            # C-contiguous (pairs, rows) buffer, the array Q @ Q.T had before (no gathered copies)
            if Q.shape[1] != Z.shape[0]:
                Q = np.empty((len(pairs), Z.shape[0]))
            for i, (j, k) in enumerate(pairs):
                np.multiply(Z[:, j], Z[:, k], out=Q[i])
            Gu += Q @ Q.T
    out = {"M2": S / n, "amax2": np.array(amax2)}
    if Gu is not None:
        pos = np.empty((d, d), dtype=np.intp)
        pos[ju, ku] = pos[ku, ju] = np.arange(ju.size)
        flat = pos.reshape(-1)                             # (j, k) -> its distinct product
        out["G"] = (Gu / n)[np.ix_(flat, flat)]
    return out


#: What the cached moments depend on besides their inputs: the code that computes them.
_MOMENT_CODE = hashlib.sha256("".join(inspect.getsource(f) for f in (regression_design, _design_moments))
                              .encode()).hexdigest()

def design_moments(n: int, d: int, p: float, data_seed: int = 0
                   ) -> tuple[np.ndarray, np.ndarray | None, float]:
    """(mean a_i a_iᵀ, fourth-moment matrix or None for p = 2, max‖a_i‖) of the design of
    :func:`regression_design`, shared across processes through :mod:`empirical.papers.kl.moments`
    (the key holds every input and the source of the code that computes them)."""
    n, d = check_int("n", n), check_int("d", d)
    if p not in (2.0, 4.0):
        raise ValueError(f"p must be 2 or 4 for the moment form, got {p!r}")

    def build():
        return _design_moments(n, d, float(p), int(data_seed))

    if n < MOMENT_CACHE_MIN_ROWS:
        arrays = build()
    else:
        key = {"n": n, "d": d, "p": float(p), "data_seed": int(data_seed), "chunk": _DESIGN_CHUNK,
               "code": _MOMENT_CODE}
        arrays = kl_moments.cached_arrays("kl-design-moments", key, build)
    return arrays["M2"], arrays.get("G"), math.sqrt(float(arrays["amax2"]))


class MomentPowerRegression(Problem):
    """:class:`PowerRegression` for p ∈ {2, 4} with per-step cost independent of n.

    Same loss, data and constants, f(w; a_i) = h(|⟨a_i, w − w*⟩|).  While every residual is
    ≤ B, i.e. on {‖w − w*‖ ≤ B/max‖a_i‖} (the KL region), F is the polynomial
    F(v) = mean_i ⟨a_i, v⟩^p = ⟨M_p, v^{⊗p}⟩ with M_p = mean_i a_i^{⊗p}, v = w − w*, which one
    pass over the data computes (:func:`design_moments`, shared across processes).  Then
    F(v) = vᵀM_2v, ∇F = 2M_2v (p = 2) and F(v) = qᵀG q, ∇F = 4M_4[v, v, v, ·] with q = vec(vvᵀ)
    (p = 4): O(d^p) per row, whatever n, and no cancellation (F* = 0; G is a Gram matrix).
    Rows outside the region (rare: only far from w*) are evaluated exactly by streaming the
    design again (:func:`regression_design`); ``streamed_evals`` counts them.
    """

    def __init__(self, n: int, d: int, p: float, *, B: float = 1.0, data_seed: int = 0):
        super().__init__(n, d)
        if p not in (2.0, 4.0):
            raise ValueError(f"p must be 2 or 4 for the moment form, got {p!r}")
        self.p, self.B, self.data_seed = float(p), check_positive("B", B), int(data_seed)
        self.w_star = np.full(self.d, 0.3 / math.sqrt(self.d))
        self.M2, self.G, amax = design_moments(self.n, self.d, self.p, self.data_seed)
        m_d1 = float(self.M2[0, 0] if self.p == 2.0 else self.G[0, 0]) if self.d == 1 else None
        _set_regression_constants(self, self.M2, m_d1, amax)
        self.streamed_evals = 0

    # -- exact polynomial form on the KL region, streaming outside it ---------------------------
    def _poly(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.p == 2.0:
            t = V @ self.M2
            return np.einsum("ri,ri->r", t, V), 2.0 * t
        d = self.d
        q = (V[:, :, None] * V[:, None, :]).reshape(-1, d * d)
        t = q @ self.G                                     # M4[v, v, ·, ·], flattened
        F = np.einsum("rk,rk->r", t, q)
        grad = 4.0 * np.einsum("rkl,rk->rl", t.reshape(-1, d, d), V)
        return F, grad

    def _stream(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.streamed_evals += V.shape[0]
        F, grad = np.zeros(V.shape[0]), np.zeros_like(V)
        for Z in regression_design(self.n, self.d, self.data_seed):
            r = V @ Z.T
            F += _huber_power(np.abs(r), self.p, self.B).sum(axis=1)
            grad += (np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)) @ Z
        return F / self.n, grad / self.n

    def _eval(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        V = np.atleast_2d(W) - self.w_star
        F, grad = self._poly(V)
        out = np.sqrt(np.einsum("ri,ri->r", V, V)) > self.kl_radius
        if np.any(out):
            F[out], grad[out] = self._stream(V[out])
        return F, grad

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − 0 (F* = 0: the data are realizable)."""
        return self._eval(W)[0]

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W) - self.w_star, axis=1) <= self.kl_radius

    def start(self, r0: float | None = None) -> np.ndarray:
        r0 = 0.5 * self.kl_radius if r0 is None else check_positive("r0", r0)
        return self.w_star + r0 * np.full(self.d, 1.0 / math.sqrt(self.d))

    def _loss(self, W):
        return self._eval(W)[0]

    def _gradient(self, W):
        return self._eval(W)[1]

    def _per_sample_gradients(self, W, idx):
        A = np.concatenate(list(regression_design(self.n, self.d, self.data_seed)))[idx]
        r = (W - self.w_star) @ A.T
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s[:, :, None] * A[None, :, :]


class SpreadQuarticLoss(Problem):
    """Negative control: f(w; x_i) = c·h(‖w − x_i‖) with h = r⁴ Huberized at B and the x_i
    spread over the 2d points ±s·e_j, n/(2d) copies each — per-example minimisers differ.

    By symmetry w* = 0 and, while ‖w‖ + s ≤ B (every distance ≤ B), expanding
    ‖w ∓ s e_j‖⁴ and averaging over the design (mean x = 0, mean xxᵀ = (s²/d)I,
    mean ‖x‖²x = 0) gives the exact, radial, cancellation-free excess

        F(w) − F* = c(‖w‖⁴ + a‖w‖²),   a = (2 + 4/d)s²,   F* = c s⁴.

    Globally (on the inner region) this is (γ, 4/3)-KL like the shared-minimiser quartic, but
    near w* it is **quadratic**: F − F* ≤ γ₂²‖∇F‖² with γ₂ = 1/(2√(ac)) (the ratio
    (r² + a)/(c(4r² + 2a)²) is decreasing in r).  The KL exponent that governs the rate at small
    excess is therefore 2, which is what the experiment shows.  Outside the inner region the
    loss is evaluated exactly from the 2d distances ‖w ∓ s e_j‖ (O(d) per row as well).
    L0 = 4cB³, L1 = 12cB² (per example).
    """

    def __init__(self, n: int, d: int, s: float, *, c: float = 1.0, B: float = 1.0):
        super().__init__(n, d)
        if self.n % (2 * self.d):
            raise ValueError(f"n must be a multiple of 2d = {2 * self.d} (balanced design), got {self.n}")
        self.c = check_positive("c", c)
        self.B = check_positive("B", B)
        self.s = check_open_interval("s", s, 0.0, self.B)
        self.p = 4.0
        self.a = (2.0 + 4.0 / self.d) * self.s**2
        self.F_star = self.c * self.s**4
        self.L0 = 4.0 * self.c * self.B**3
        self.L1 = 12.0 * self.c * self.B**2
        self.inner_radius = self.B - self.s
        self.smooth = True

    def kl_gamma(self, kappa: float) -> float:
        """γ such that F − F* ≤ γ^κ‖∇F‖^κ on the inner ball (κ = 2: closed form; κ = 4/3:
        numerical sup over the radius of (r⁴ + ar²)/(c^{1/3}(4r³ + 2ar)^{4/3}))."""
        if kappa == 2.0:
            return 1.0 / (2.0 * math.sqrt(self.a * self.c))
        if abs(kappa - 4.0 / 3.0) < 1e-12:
            a, c = self.a, self.c
            ratio = _sup_1d(lambda r: (r**4 + a * r**2) / (c ** (1 / 3) * (4 * r**3 + 2 * a * r) ** (4 / 3)),
                            1e-9, self.inner_radius)
            return ratio ** (3.0 / 4.0)
        raise ValueError(f"kappa must be 2 or 4/3 for the spread quartic, got {kappa!r}")

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W), axis=1) <= self.inner_radius

    def _distances2(self, W):
        """‖w ∓ s e_j‖², shape (R, d, 2)."""
        sq = np.einsum("ij,ij->i", W, W)[:, None, None]
        lin = 2.0 * self.s * W[:, :, None] * np.array([1.0, -1.0])
        return sq - lin + self.s**2

    def excess(self, W: np.ndarray) -> np.ndarray:
        W = np.atleast_2d(W)
        r2 = np.einsum("ij,ij->i", W, W)
        inner = self.c * (r2 * r2 + self.a * r2)
        out = inner.copy()
        far = np.sqrt(r2) > self.inner_radius
        if np.any(far):   # excess ≥ c((B−s)⁴ + a(B−s)²) there, so subtracting F* is harmless
            dist = np.sqrt(self._distances2(W[far]))
            out[far] = self.c * _huber_power(dist, 4.0, self.B).mean(axis=(1, 2)) - self.F_star
        return out

    def start(self, r0: float | None = None) -> np.ndarray:
        r0 = 0.5 * self.inner_radius if r0 is None else check_positive("r0", r0)
        return np.full(self.d, r0 / math.sqrt(self.d))

    def _loss(self, W):
        return self.F_star + self.excess(W)

    def _gradient(self, W):
        r2 = np.einsum("ij,ij->i", W, W)
        g = (self.c * (4.0 * r2 + 2.0 * self.a))[:, None] * W
        far = np.sqrt(r2) > self.inner_radius
        if np.any(far):
            Wf = W[far]
            dist = np.sqrt(self._distances2(Wf))                      # (R', d, 2)
            scale = self.c * _huber_power_slope(dist, 4.0, self.B) / dist
            # mean over the 2d points of scale·(w − x): w·mean(scale) − (s/2d)Σ_j(scale₊ − scale₋)e_j
            g[far] = (Wf * scale.mean(axis=(1, 2))[:, None]
                      - self.s * (scale[:, :, 0] - scale[:, :, 1]) / (2.0 * self.d))
        return g

    def _per_sample_gradients(self, W, idx):
        # example i is the point sign·s·e_j with j = (i // 2) % d, sign = + for even i
        j = (idx // 2) % self.d
        sign = np.where(idx % 2 == 0, 1.0, -1.0)
        X = np.zeros((idx.size, self.d))
        X[np.arange(idx.size), j] = sign * self.s
        diff = W[:, None, :] - X[None, :, :]
        r = np.linalg.norm(diff, axis=2)
        scale = np.where(r > 0, self.c * _huber_power_slope(r, 4.0, self.B) / np.maximum(r, 1e-300), 0.0)
        return diff * scale[:, :, None]


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
    vals.update(override)
    return vals


def _privacy_columns(res, rho: float, R: int) -> dict:
    priv = res.privacy if isinstance(res.privacy, list) else [res.privacy] * R
    return {"rho_spent": np.array([p.rho for p in priv], dtype=float),
            "rho_guarantee": np.array([p.guarantee_rho for p in priv], dtype=float),
            "rho_target": np.full(R, float(rho))}


# --- run functions -----------------------------------------------------------------------------
def _run_spider(point: dict, rngs: list) -> dict:
    from algorithms.kl.condition import kl_spider

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    kappa = point.get("kappa_declared", prob.kappa)          # misspecification experiments
    gamma = prob.gamma * point.get("gamma_factor", 1.0)
    R = len(rngs)
    meter = NoiseMeter(R)
    res = kl_spider(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                    L1=prob.L1 * point.get("L1_factor", 1.0), gamma=gamma,
                    kappa=kappa, F0=F0, beta=point["beta"], rng=rngs,
                    observe=release_hook(meter, ("full", "difference")))
    return {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
            **meter.columns(),
            "steps": np.asarray(res.info["steps"], dtype=float).reshape(-1) * np.ones(R),
            "rounds": np.full(R, float(res.info["K"])),
            "floor": np.full(R, float(res.info["floor"])),
            "F0": np.full(R, F0),
            "in_kl_region": prob.in_kl_region(res.w).astype(float)}


def _run_adaptive(point: dict, rngs: list) -> dict:
    from algorithms.kl.condition import adaptive_noisy_gd

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    select = "exponential" if point.get("select_exponential", 0) else "last"
    R = len(rngs)
    meter = NoiseMeter(R)
    res = adaptive_noisy_gd(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                            L1=prob.L1 * point.get("L1_factor", 1.0), beta=point["beta"],
                            rng=rngs, select=select, observe=release_hook(meter, ("gradient",)))
    out = {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
           **meter.columns(),
           "steps": np.asarray(res.info["T"], dtype=float).reshape(-1) * np.ones(R),
           "F0": np.full(R, F0), "in_kl_region": prob.in_kl_region(res.w).astype(float),
           "stopped_by": np.asarray(res.info["stopped_by"], dtype=str).reshape(-1)}
    if select == "exponential":
        out["grad_norm"] = np.linalg.norm(prob.gradient(res.w), axis=-1).reshape(-1)
    return out


def _run_ppm(point: dict, rngs: list) -> dict:
    from algorithms.kl.condition import proximal_point

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


