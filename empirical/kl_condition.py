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
            "rho_spent": np.full(R, res.privacy.rho),
            "rho_guarantee": np.full(R, res.privacy.guarantee_rho),
            "rho_target": np.full(R, point["rho"]),
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


# =============================================================================================
# Problems with a known, tunable KL exponent (Sections 3-4 of the paper)
# =============================================================================================
# Every problem below exposes the constants the theorems take as inputs — ``kappa``, ``gamma``
# (F − F* ≤ γ^κ‖∇F‖^κ on ``in_kl_region``), ``L0`` (per-example Lipschitz constant, global, so
# that the privacy analysis holds wherever the iterates go), ``L1`` (per-example smoothness, when
# it exists), ``F_star`` — and ``excess(W)``, the exact excess F(w) − F* computed without
# subtracting two nearly equal numbers (for κ ≥ 2 the excess reaches 1e−12 and below).
# Gradients cost O(d) per row whatever n is, except for the data-driven regression (O(nd)).

from functools import lru_cache

from scipy import optimize as _opt

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

    Exact constants (notes §5.1, verified in tests/test_kl_problems.py):

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
        # called once per step of every inner loop, so kept to a few ufuncs
        diff = W - self.w_star
        r = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = self.c * self.p * np.power(np.minimum(r, self.B), self.p - 1.0) / r
        scale[r == 0] = 0.0
        return diff * scale[:, None]

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
        inner = np.minimum(a, self.b)
        gt = _g(inner) + _g1(self.b) * (a - inner)
        return gt.sum(axis=1)

    def _phi(self, u):
        U, q = self.U, self.q
        return np.where(u <= U, np.power(np.minimum(u, U), q), U**q + q * U ** (q - 1) * (u - U))

    def _phi1(self, u):
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
        a = np.abs(W)
        gt1 = np.sign(W) * np.where(a <= self.b, np.abs(_g1(np.minimum(a, self.b))), _g1(self.b))
        return (self.c * self._phi1(self._G(W)))[:, None] * gt1

    def _per_sample_gradients(self, W, idx):
        return np.broadcast_to(self._gradient(W)[:, None, :], (W.shape[0], idx.size, self.d))


def _set_regression_constants(prob, second_moment: np.ndarray, m_d1: float | None,
                              amax: float) -> None:
    """κ, γ, L0, L1, KL radius of p-th-power regression (see :class:`PowerRegression`), given
    mean a_i a_iᵀ, m = mean|a_i|^p when d = 1 (exact) and max‖a_i‖.  For d > 1, m is replaced by
    Jensen's lower bound λ_min^{p/2}, which keeps γ a valid KL constant."""
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
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        Z *= rng.random((m, 1)) ** (1.0 / d)
        yield Z


class MomentPowerRegression(Problem):
    """:class:`PowerRegression` for p ∈ {2, 4} with per-step cost independent of n.

    Same loss, data and constants, f(w; a_i) = h(|⟨a_i, w − w*⟩|).  While every residual is
    ≤ B, i.e. on {‖w − w*‖ ≤ B/max‖a_i‖} (the KL region), F is the polynomial
    F(v) = mean_i ⟨a_i, v⟩^p = ⟨M_p, v^{⊗p}⟩ with M_p = mean_i a_i^{⊗p}, v = w − w*, which one
    pass over the data computes (as the Gram matrix of vec(a_i a_iᵀ) for p = 4).  Then
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
        d2 = self.d * self.d
        S = np.zeros((self.d, self.d))
        G = np.zeros((d2, d2)) if self.p == 4.0 else None
        amax = 0.0
        for Z in regression_design(self.n, self.d, self.data_seed):
            amax = max(amax, float(np.max(np.einsum("ij,ij->i", Z, Z))))
            S += Z.T @ Z
            if G is not None:
                Q = (Z[:, :, None] * Z[:, None, :]).reshape(-1, d2)
                G += Q.T @ Q
        self.M2, self.G = S / self.n, (None if G is None else G / self.n)
        m_d1 = float(self.M2[0, 0] if self.p == 2.0 else self.G[0, 0]) if self.d == 1 else None
        _set_regression_constants(self, self.M2, m_d1, math.sqrt(amax))
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
# Experiments for Theorems 1, 2, 4 and 5
# =============================================================================================
# A point names its problem with the string ``problem`` ("radial", "ncvx", "regr", "spread") and
# the problem's parameters; the algorithms (algorithms.kl_condition) are imported inside the run
# functions, so importing this module never depends on them.  Every run records the metric, the
# privacy it spent (dp-accounting, per seed) against its target, the steps taken, and whether
# the output lies in the region where the problem's KL constant is valid.

from empirical.experiment import Summary, register_summary  # noqa: E402

import bounds  # noqa: E402  (bound exponents for the κ-overlay figure)

__all__ += ["make_problem", "kl_values", "KAPPA_OVERLAY"]

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


_INTRO_DELTA = 1e-5


def _intro_values(point: dict) -> dict:
    """Values for ``kl:thm4_intro``, stated in (ε, δ): ε from ρ by [BS16, Prop. 1.3] at δ = 1e-5."""
    vals = kl_values(point)
    vals["epsilon"] = bounds.get("kl:zcdp_to_dp")(rho=vals["rho"], delta=_INTRO_DELTA)
    return vals


def _with(**override):
    """A ``Check.values`` map: the instance's values with some symbols replaced (a competitor)."""
    return lambda point: kl_values(point, **override)


def _privacy_columns(res, rho: float, R: int) -> dict:
    priv = res.privacy if isinstance(res.privacy, list) else [res.privacy] * R
    return {"rho_spent": np.array([p.rho for p in priv], dtype=float),
            "rho_guarantee": np.array([p.guarantee_rho for p in priv], dtype=float),
            "rho_target": np.full(R, float(rho))}


# --- run functions -----------------------------------------------------------------------------
def _run_spider(point: dict, rngs: list) -> dict:
    from algorithms.kl_condition import kl_spider

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    kappa = point.get("kappa_declared", prob.kappa)          # misspecification experiments
    gamma = prob.gamma * point.get("gamma_factor", 1.0)
    res = kl_spider(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                    L1=prob.L1 * point.get("L1_factor", 1.0), gamma=gamma,
                    kappa=kappa, F0=F0, beta=point["beta"], rng=rngs)
    R = len(rngs)
    return {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
            "steps": np.asarray(res.info["steps"], dtype=float).reshape(-1) * np.ones(R),
            "rounds": np.full(R, float(res.info["K"])),
            "floor": np.full(R, float(res.info["floor"])),
            "F0": np.full(R, F0),
            "in_kl_region": prob.in_kl_region(res.w).astype(float)}


def _run_adaptive(point: dict, rngs: list) -> dict:
    from algorithms.kl_condition import adaptive_noisy_gd

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    select = "exponential" if point.get("select_exponential", 0) else "last"
    res = adaptive_noisy_gd(prob, rho=point["rho"], w0=w0, L0=prob.L0,
                            L1=prob.L1 * point.get("L1_factor", 1.0), beta=point["beta"],
                            rng=rngs, select=select)
    R = len(rngs)
    out = {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
           "steps": np.asarray(res.info["T"], dtype=float).reshape(-1) * np.ones(R),
           "F0": np.full(R, F0), "in_kl_region": prob.in_kl_region(res.w).astype(float),
           "stopped_by": np.asarray(res.info["stopped_by"], dtype=str).reshape(-1)}
    if select == "exponential":
        out["grad_norm"] = np.linalg.norm(prob.gradient(res.w), axis=-1).reshape(-1)
    return out


def _run_ppm(point: dict, rngs: list) -> dict:
    from algorithms.kl_condition import proximal_point

    prob = make_problem(point)
    w0, F0 = _w0_F0(prob)
    res = proximal_point(prob, rho=point["rho"], w0=w0, L0=prob.L0, L1t=point["L1t"],
                         gamma=prob.gamma, kappa=prob.kappa, F0=F0, beta=point["beta"], rng=rngs,
                         inner_max_steps=int(point["inner_max_steps"]))
    R = len(rngs)
    return {"excess": prob.excess(res.w), **_privacy_columns(res, point["rho"], R),
            "outer_T": np.full(R, float(res.info["T"])),
            "inner_T": np.full(R, float(res.info["inner_T"])),
            "inner_T_theory": np.full(R, float(res.info["inner_T_theory"])),
            "F0": np.full(R, F0), "in_kl_region": prob.in_kl_region(res.w).astype(float)}


# --- vacuous-point rules -------------------------------------------------------------------------
def _spider_vacuous(point: dict, bound_value: float) -> str | None:
    # kl:thm1 is (γL0√(dK log(1/β'))/(n√ρ))^κ with constant 1; Algorithm 1's Φ̂ floor is 32^κ
    # times it.  When the floor reaches F0 every round targets F0: the algorithm is trivial.
    vals = kl_values(point)
    floor = 32.0 ** vals["kappa"] * bound_value
    if floor >= vals["F0"]:
        return f"Φ̂ floor 32^κ·bound = {floor:.3g} ≥ F0 = {vals['F0']:.3g} (Spider trivial)"
    return None


def _excess_vacuous(point: dict, bound_value: float) -> str | None:
    F0 = kl_values(point)["F0"]
    if bound_value >= F0:
        return f"bound {bound_value:.3g} ≥ F0 = {F0:.3g}, the start point's excess (vacuous)"
    return None


def _grad_vacuous(point: dict, bound_value: float) -> str | None:
    L0 = make_problem(point).L0
    if bound_value >= L0:
        return f"bound {bound_value:.3g} ≥ L0 = {L0:.3g}, which any point satisfies (vacuous)"
    return None


def _geom(lo: float, hi: float, k: int, integer: bool = True) -> tuple:
    v = np.geomspace(lo, hi, k)
    return tuple(int(round(x)) for x in v) if integer else tuple(float(x) for x in v)


_RAD = {"problem": "radial", "c": 1.0, "B": 1.0, "beta": 0.1}
_KAPPA_TAG = {4.0: "k4_3", 3.0: "k3_2", 6.0: "k6_5", 2.0: "k2", 1.5: "k3", 4.0 / 3.0: "k4"}
_KAPPA_TEX = {4.0: "4/3", 3.0: "3/2", 6.0: "6/5", 2.0: "2", 1.5: "3", 4.0 / 3.0: "4"}


# --- KL Spider (Algorithm 1, Theorem 1) --------------------------------------------------------------
_SPIDER_TOL = ("two-sided: on the radial/nonconvex instances Spider's output tracks the Φ̂ floor "
               "(its stopping rule fires at ‖∇‖ ∝ Φ̂^{1/κ} and KL is tight), so Theorem 1 is tight "
               "here; the band [local, asymptotic] spans the log factors of K and log(1/β'); "
               "0.1 covers the per-round rounding of T_k; 3 seeds suffice because the stopping rule makes runs nearly deterministic (CI half-width ≤ 0.02)")
_SPIDER_REJECT = ("competing rate: Theorem 4's first term (what Algorithm 3 gets without knowing κ), "
                  "exponent 2κ/(4−κ) < κ; tolerance 0.1 as for the main check")


def _spider_exp(var: str, tag: str, fixed: dict, quick: tuple, full: tuple, *, seeds: int = 3,
                title: str, problem: str, reject_bound: str = "kl:thm4_main",
                reject_reason: str = _SPIDER_REJECT) -> Experiment:
    return register(Experiment(
        id=f"kl.spider.{var}.{tag}", paper="kl", title=title, variable=var,
        quick_grid=quick, full_grid=full, fixed=fixed, seeds=seeds, run=_run_spider,
        metric="excess", bound_values=kl_values, vacuous=_spider_vacuous, problem=problem,
        algorithm="algorithms.kl_condition.kl_spider (Algorithm 1)",
        checks=(Check("kl:thm1", "two-sided", 0.1, _SPIDER_TOL),
                Check(reject_bound, "reject", 0.1, reject_reason))))


SPIDER = {}
for _p, _lo, _hi, _k in ((4.0, 10**5.5, 10**8.5, 5), (3.0, 10**5.5, 10**8.5, 5), (6.0, 10**6, 10**8, 3)):
    _t = _KAPPA_TAG[_p]
    SPIDER[("n", _t)] = _spider_exp(
        "n", _t, {**_RAD, "p": _p, "d": 1, "rho": 1.0}, _geom(_lo, _hi, _k),
        _geom(_lo / 10**0.5, _hi * 10**0.5, 9),
        title=f"KL Spider, radial loss p={_p:g} (κ={_KAPPA_TEX[_p]}): excess vs n (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), d=1")
# κ = 2 on the nonconvex PL function (the radial p = 2 loss is a staircase: see notes §5.3 E1).
SPIDER[("n", "k2")] = _spider_exp(
    "n", "k2", {"problem": "ncvx", "p": 2.0, "b": 2.5, "c": 1.0, "beta": 0.1, "d": 1, "rho": 1.0},
    _geom(10**5.5, 10**8.5, 3), _geom(10**5, 10**9, 9), seeds=2,
    title="KL Spider, nonconvex PL Σ(w²+3sin²w) (κ=2): excess vs n (Theorem 1)",
    problem="NonconvexKL(p=2), d=1",
    reject_bound="kl:thm4_floor",
    reject_reason=("competing rate: Theorem 4's d-free term (1/(n√ρ))^{κ/2}, the floor of "
                   "Algorithm 3, slope −1 at κ = 2 (the first term coincides with −κ here)"))
SPIDER[("n", "nc_k4_3")] = _spider_exp(
    "n", "nc_k4_3", {"problem": "ncvx", "p": 4.0, "b": 2.5, "c": 1.0, "beta": 0.1, "d": 1, "rho": 1.0},
    _geom(10**6, 10**8.5, 3), _geom(10**6, 10**10, 9),
    title="KL Spider, nonconvex KL (Σ(w²+3sin²w))² (κ=4/3): excess vs n (Theorem 1)",
    problem="NonconvexKL(p=4), d=1")
# d and ρ sweeps on the radial loss, whose L0 does not grow with d (the nonconvex function's
# does, ∝ √d, which would mix the two).  κ = 6/5 needs n = 1e8 for Spider to leave its
# trivial regime (Φ̂ floor ≥ F0) over the whole ρ grid.  κ = 2 uses p = 2 with a declared
# L1 eight times the true one: with η = 1/(2L1) GD on c r² halves r exactly each step, which
# quantises the excess in powers of 4 (notes §5.3 E1/E4); at 8L1 the quanta are (7/8)².
# Theorem 1 holds for any upper bound on L1 and is evaluated at the declared value.
_SPIDER_DR = {4.0: (10**7, {}), 3.0: (10**7, {}), 6.0: (10**8, {}), 2.0: (10**7, {"L1_factor": 8.0})}
for _p, (_n, _extra) in _SPIDER_DR.items():
    _t = _KAPPA_TAG[_p]
    # at κ = 2 Theorem 4's first term has Theorem 1's d- and ρ-exponents (κ/(4−κ) = κ/2 = 1),
    # so the competitor the data must rule out is its d-free term (exponents 0 and −κ/4).
    _rej = ({"reject_bound": "kl:thm4_floor",
             "reject_reason": "competing rate: Theorem 4's d-free term (1/(n√ρ))^{κ/2}, the floor "
                              "of Algorithm 3 (d-exponent 0, ρ-exponent −1/2 at κ = 2; its first "
                              "term has Theorem 1's exponents here); 0.1 as for the main check, "
                              "well above the CI half-width (≤ 0.02) of these near-deterministic "
                              "runs"}
            if _p == 2.0 else {})
    _lbl = f"radial loss p={_p:g}" + (", L1 declared ×8" if _extra else "")
    SPIDER[("d", _t)] = _spider_exp(
        "d", _t, {**_RAD, "p": _p, "n": _n, "rho": 1.0, **_extra}, (1, 4, 16, 64, 256),
        (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
        title=f"KL Spider, {_lbl} (κ={_KAPPA_TEX[_p]}): excess vs d (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), n={_n:.0e}", **_rej)
    SPIDER[("rho", _t)] = _spider_exp(
        "rho", _t, {**_RAD, "p": _p, "n": _n, "d": 1, **_extra}, (0.01, 0.04, 0.16, 0.64, 2.56),
        _geom(0.0025, 10.24, 13, integer=False),
        title=f"KL Spider, {_lbl} (κ={_KAPPA_TEX[_p]}): excess vs ρ (Theorem 1)",
        problem=f"RadialPowerLoss(p={_p:g}), n={_n:.0e}, d=1", **_rej)


# --- Adaptive noisy GD (Algorithm 3, Theorem 4) ------------------------------------------------------
def _adaptive_vacuous(point: dict, bound_value: float) -> str | None:
    vals = kl_values(point)
    thm4 = bounds.get("kl:thm4")
    if thm4.conditions and not thm4.applies(**vals):
        return "Theorem 4's condition L0²log(n√ρ/β)/(L1 n) ≤ √ρ fails"
    return _excess_vacuous(point, bound_value)


_MAIN_TOL = ("two-sided: Algorithm 3's noise is a fixed fraction (1/√A) of the gradient norm, so "
             "its privacy cost per step ∝ 1/‖∇F‖² is exactly what Theorem 4's first term balances; "
             "on the radial loss (KL with equality) that balance is attained, so the term is tight; "
             "the band spans its log factors (A, p_max); 0.1 covers seed noise of the last iterate "
             "(4-6 seeds, CI half-width ≤ 0.06)")
_FLOOR_TOL = ("two-sided: at small d the run stops when ‖∇F‖ reaches the noise σ̂ = L0/(√n ρ^{1/4}) of "
              "the norm estimate N_t, and KL (tight here) turns that into excess ∝ (1/(n√ρ))^{κ/2}: "
              "Theorem 4's second term is attained; the band spans log A; 0.1 covers seed noise "
              "(the stopping time is random: CI half-width ≈ 0.05)")
_FULL_TOL = ("one-sided: the full three-term bound is only claimed as an upper bound; 0.1 as for "
             "the per-term checks")


def _adaptive_checks(regime: str) -> tuple:
    if regime == "main":
        return (Check("kl:thm4_main", "two-sided", 0.1, _MAIN_TOL),
                Check("kl:thm4_floor", "reject", 0.1,
                      "the other term of Theorem 4 (d-free, exponent κ/2): the large-d data must "
                      "rule it out; 0.1 as for the main check"),
                Check("kl:thm4", "one-sided", 0.1, _FULL_TOL))
    return (Check("kl:thm4_floor", "two-sided", 0.1, _FLOOR_TOL),
            Check("kl:thm4_main", "reject", 0.1,
                  "the other term of Theorem 4 (exponent 2κ/(4−κ)): at d = 1 the data must rule it "
                  "out; 0.1 as for the main check"),
            Check("kl:thm4", "one-sided", 0.1, _FULL_TOL))


def _adaptive_exp(var: str, tag: str, fixed: dict, quick: tuple, full: tuple, *, regime: str,
                  title: str, problem: str, seeds: int = 6, checks: tuple | None = None,
                  run=_run_adaptive, metric: str = "excess", vacuous=_adaptive_vacuous,
                  exp_id: str | None = None, description: str = "") -> Experiment:
    return register(Experiment(
        id=exp_id or f"kl.adaptive.{var}.{tag}", paper="kl", title=title, variable=var,
        quick_grid=quick, full_grid=full, fixed=fixed, seeds=seeds, run=run, metric=metric,
        bound_values=kl_values, vacuous=vacuous, problem=problem,
        algorithm="algorithms.kl_condition.adaptive_noisy_gd (Algorithm 3)",
        checks=checks or _adaptive_checks(regime), description=description))


ADAPTIVE = {}
_D_LARGE = 10**5
# κ = 2 uses the radial p = 2 loss with a declared L1 eight times the true one: with η = 1/(2L1)
# GD on c r² halves r exactly at every step, a staircase in n (notes §5.3 E4); Theorem 4 holds
# for any upper bound on L1 and the bound is evaluated at the declared value.
_ADAPT_N = {4.0: (10**5, 10**7), 3.0: (10**5, 10**7), 6.0: (10**6, 10**7), 2.0: (10**4.5, 10**6)}
for _p, (_lo, _hi) in _ADAPT_N.items():
    _t = _KAPPA_TAG[_p]
    _fx = {**_RAD, "p": _p, "d": _D_LARGE, "rho": 1.0}
    if _p == 2.0:
        _fx["L1_factor"] = 8.0
    ADAPTIVE[("n", _t)] = _adaptive_exp(
        "n", _t, _fx, _geom(_lo, _hi, 4 if _p == 6.0 else 5), _geom(_lo / 10**0.5, _hi * 10**0.5, 9),
        regime="main", seeds=6 if _p in (3.0, 2.0) else 4,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d={_D_LARGE:g}: excess vs n "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), d={_D_LARGE}")
for _p in (4.0, 3.0, 2.0):
    _t = _KAPPA_TAG[_p]
    _fx = {**_RAD, "p": _p, "d": 1, "rho": 1.0}
    if _p == 2.0:
        _fx["L1_factor"] = 8.0
    ADAPTIVE[("n", _t + "_d1")] = _adaptive_exp(
        "n", _t + "_d1", _fx, _geom(10**6, 10**8, 5) if _p == 4.0 else _geom(10**5.5, 10**8.5, 5),
        _geom(10**5, 10**9, 9), regime="floor", seeds=16 if _p == 2.0 else 6,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d=1: excess vs n "
              "(Theorem 4, d-free term)",
        problem=f"RadialPowerLoss(p={_p:g}), d=1")
# The first term rules for d ≳ (n√ρ)^{κ/2}: 1e4 at κ = 4/3, 3e4 at κ = 3/2 (n = 1e6), so the
# κ = 3/2 grid starts higher (at d = 3e3 the d-free term still bends the curve: slope 0.41).
for _p, _dlo, _dhi, _k in ((4.0, 3 * 10**3, 3 * 10**5, 5), (3.0, 10**4, 10**6, 4)):
    _t = _KAPPA_TAG[_p]
    ADAPTIVE[("d", _t)] = _adaptive_exp(
        "d", _t, {**_RAD, "p": _p, "n": 10**6, "rho": 1.0}, _geom(_dlo, _dhi, _k),
        _geom(_dlo / 3, _dhi * 3, 7), regime="main", seeds=6 if _p == 4.0 else 4,
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), n=1e6: excess vs d "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), n=1e6")
    ADAPTIVE[("rho", _t)] = _adaptive_exp(
        "rho", _t, {**_RAD, "p": _p, "n": 10**6, "d": _D_LARGE}, (0.01, 0.04, 0.16, 0.64, 2.56),
        _geom(0.0025, 10.24, 9, integer=False), regime="main",
        title=f"Adaptive noisy GD, radial p={_p:g} (κ={_KAPPA_TEX[_p]}), d={_D_LARGE:g}: excess vs ρ "
              "(Theorem 4, first term)",
        problem=f"RadialPowerLoss(p={_p:g}), n=1e6, d={_D_LARGE}")
ADAPTIVE[("d", "k4_3_small")] = _adaptive_exp(
    "d", "k4_3_small", {**_RAD, "p": 4.0, "n": 10**7, "rho": 1.0}, (1, 3, 10, 30, 100),
    (1, 2, 4, 8, 16, 32, 64, 128, 256), regime="floor",
    # the d-free term has no d, so the claim is one-sided on the full bound, and the first
    # term's d-dependence must be absent
    checks=(Check("kl:thm4", "one-sided", 0.1, _FULL_TOL),
            Check("kl:thm4_main", "reject", 0.1,
                  "Theorem 4's first term (d-slope κ/(4−κ)): at small d the d-free term rules and "
                  "the excess must not grow with d; 0.1 as for the other checks")),
    title="Adaptive noisy GD, radial p=4 (κ=4/3), n=1e7, small d: excess vs d (Theorem 4, d-free term)",
    problem="RadialPowerLoss(p=4), n=1e7")
ADAPTIVE[("rho", "k4_3_d1")] = _adaptive_exp(
    "rho", "k4_3_d1", {**_RAD, "p": 4.0, "n": 10**7, "d": 1}, (0.01, 0.04, 0.16, 0.64, 2.56),
    _geom(0.0025, 10.24, 9, integer=False), regime="floor",
    checks=_adaptive_checks("floor") + (
        Check("kl:thm4_intro", "reject", 0.1,
              "the introduction's reading of Theorem 4 (errata KL-E10): d-free term (1/n)^{κ/2} "
              "with no privacy parameter, ρ mapped to ε by the zCDP→DP conversion at δ = 1e-5; "
              "its ρ-slope (≈ 0 at d = 1) must be ruled out; 0.1 as for the other checks of this "
              "sweep: it exceeds the seed noise (CI half-width ≈ 0.06) and the local-vs-asymptotic "
              "gap of the log factors (≈ 0.02), so a rejection is not a noise artifact",
              values=_intro_values),),
    title="Adaptive noisy GD, radial p=4 (κ=4/3), d=1: excess vs ρ (Theorem 4, d-free term)",
    problem="RadialPowerLoss(p=4), n=1e7, d=1")


# --- Data-driven case: realizable p-th-power regression --------------------------------------------
# MomentPowerRegression keeps a gradient O(d^p) by one pass over the data, so n reaches 1e8.  At
# d = 4 the d-free term of Theorem 4 rules (the first term needs d ≳ (n√ρ)^{κ/2}).
_REGR_TOL = ("two-sided: F(v) = mean⟨a_i, v⟩^p is p-homogeneous, so ‖∇F‖ ≍ ‖v‖^{p−1} and F ≍ "
             "‖∇F‖^κ: the KL exponent is attained (only γ, from Jensen's λ_min^{p/2}, is loose, "
             "which moves the level, not the slope); the run stops at the noise σ̂ of N_t as on "
             "the radial loss, so the d-free term is attained; the band spans log A; 0.1 covers "
             "seed noise of the random stopping time (12-24 seeds: CI half-width ≤ 0.08)")
REGRESSION = {}
for _p, _grid, _full, _seeds in ((4.0, _geom(10**6.5, 10**8, 4), _geom(10**6.5, 10**8.5, 5), 12),
                                 (2.0, _geom(10**4, 10**7, 4), _geom(10**4, 10**8, 9), 24)):
    _t = _KAPPA_TAG[_p]
    REGRESSION[_t] = _adaptive_exp(
        "n", _t, {"problem": "regr_moment", "p": _p, "B": 1.0, "beta": 0.1, "d": 4, "rho": 1.0,
                  "data_seed": 0},
        _grid, _full, regime="floor", exp_id=f"kl.regr.n.{_t}", seeds=_seeds,
        checks=(Check("kl:thm4_floor", "two-sided", 0.1, _REGR_TOL),) + _adaptive_checks("floor")[1:],
        title=f"Adaptive noisy GD, realizable |⟨a,w⟩−y|^{_p:g} regression (κ={_KAPPA_TEX[_p]}), d=4: "
              "excess vs n (Theorem 4, d-free term)",
        problem=f"MomentPowerRegression(p={_p:g}), a_i uniform in the unit ball of R^4")


# --- Misspecification: Spider told the wrong κ --------------------------------------------------------
def _misspec_values(point: dict) -> dict:
    return kl_values(point, kappa=point["kappa_declared"])


def _misspec_vacuous(point: dict, bound_value: float) -> str | None:
    vals = _misspec_values(point)
    floor = 32.0 ** vals["kappa"] * bound_value
    if floor >= vals["F0"]:
        return f"Φ̂ floor at the declared κ = {floor:.3g} ≥ F0 (Spider trivial)"
    return None


MISSPEC_SPIDER = register(Experiment(
    id="kl.misspec.n.spider_k2", paper="kl",
    title="KL Spider told κ=2 on the radial p=4 loss (true κ=4/3), d=1: excess vs n",
    variable="n", quick_grid=ADAPTIVE[("n", "k4_3_d1")].quick_grid,
    full_grid=ADAPTIVE[("n", "k4_3_d1")].full_grid,
    fixed={**_RAD, "p": 4.0, "d": 1, "rho": 1.0, "kappa_declared": 2.0}, seeds=5,
    run=_run_spider, metric="excess", bound_values=_misspec_values, vacuous=_misspec_vacuous,
    problem="RadialPowerLoss(p=4), d=1", algorithm="algorithms.kl_condition.kl_spider, κ=2 declared",
    description="Compare kl.adaptive.n.k4_3_d1: same instance and grid, Algorithm 3 keeps its rate.",
    checks=(
        Check("kl:thm1", "reject", 0.1,
              "the rate Theorem 1 promises at the declared κ = 2 (slope ≈ −2): the instance is not "
              "(γ, 2)-KL, so the guarantee does not apply and the data must show it is not attained"),
        Check("kl:thm1", "reject", 0.1,
              "the rate of correctly specified Spider (true κ = 4/3, slope ≈ −1.25): told κ = 2, "
              "Spider stalls and does not even attain that", values=_with()),
    )))


# --- Proximal point (Algorithm 2, Theorem 2, κ ≥ 2) -------------------------------------------------
# Theorem 9's inner count n²(ρ/T)log²(2/β')/d is 10⁴-10⁸ steps per call here, so the inner
# solver is capped at ``inner_max_steps``.  A cap is harmless only where the inner run has
# reached its noise floor: the capped optimisation error ∝ 1/C does not shrink with n while the
# noise floor ∝ 1/n² does, so every cap binds beyond some n (at κ = 3, C = 1000 … 16000 agree
# up to n = 1e4; at n = 3e4, C = 1000 gives 15× the excess of C = 4000).  Each grid below stops
# where C and 4C still agree within seed noise, which tests/test_kl_experiments.py pins
# (errata KL-E30 has the probe table).
PPM_CAP_FACTOR = 4          # the cap-insensitivity check compares inner_max_steps with 4× it
_PPM_TOL = ("one-sided: Theorem 2 only claims an upper bound (the notes suspect a gap in its proof "
            "for κ > 2, errata KL-E13), so only 'not flatter than the bound' is checked; 0.3 "
            "because the per-seed excess is heavy-tailed (10-90% quantiles 100× apart at one n): "
            "64 seeds give a CI half-width ≈ 0.15 over 2 decades, and 0.3 is twice that")
_PPM_LEM3 = ("evidence for the finding: the rate of the inner solver's noise floor (Lemma 3, "
             "L0²dT/(L̃1n²ρ), exponent −2 up to the logs of T and β'), which the proof must beat "
             "for κ > 2: the observed slope must not be flatter than it; one-sided and 0.3 as for "
             "the main check")
PPM = {}
for _p, _hi, _cap, _note in (
        (1.5, 10**4.0, 1000, "KL-E30: observed ≈ −2.1 at κ = 3 over n ∈ [1e2, 1e4], flatter than "
                             "Theorem 2's local −2.6 (asymptotic −3)"),
        (4.0 / 3.0, 10**3.5, 4000, "KL-E30: observed ≈ −2.3 at κ = 4 over n ∈ [1e2, 3e3], far "
                                   "flatter than Theorem 2's local −3.5 (asymptotic −4)")):
    _t = _KAPPA_TAG[_p]
    PPM[_t] = register(Experiment(
        id=f"kl.ppm.n.{_t}", paper="kl",
        title=f"Proximal point (inner noisy GD), radial p={_p:.3g} (κ={_KAPPA_TEX[_p]}), d=1: excess vs n "
              "(Theorem 2)",
        variable="n", quick_grid=_geom(10**2, _hi, 5), full_grid=_geom(10**2, _hi, 9),
        fixed={**_RAD, "p": _p, "d": 1, "rho": 1.0, "L1t": 0.1, "inner_max_steps": _cap},
        seeds=64, run=_run_ppm, metric="excess", bound_values=kl_values, vacuous=_excess_vacuous,
        problem=f"RadialPowerLoss(p={_p:.3g}) (convex, non-smooth at w*), d=1",
        algorithm=f"algorithms.kl_condition.proximal_point (Algorithm 2 + Algorithm 4), inner T ≤ {_cap}",
        description=f"Inner steps capped at {_cap}; on this grid the excess does not change when the "
                    f"cap is multiplied by {PPM_CAP_FACTOR} (tests, errata KL-E30).",
        checks=(Check("kl:thm2", "one-sided", 0.3, _PPM_TOL, expect="finding", note=_note),
                Check("kl:lem3", "one-sided", 0.3, _PPM_LEM3))))


# --- Theorem 5: gradient norm of Algorithm 3 + exponential-mechanism selection ---------------------
_THM5_TOL = ("one-sided: Theorem 5 only bounds ‖∇F(w_t*)‖ from above, and its worst case "
             "(d^{1/4}/(√n ρ^{1/4})) is the flat end of the band it allows; 0.1 for 6 seeds")
_THM5_LARGE_D = (
    Check("kl:thm5_worst", "one-sided", 0.1, _THM5_TOL),
    Check("kl:prior_stationary_noisy_gd", "reject", 0.1,
          "competitor: the (√d/(n√ρ))^{1/2} rate of plain noisy GD [48] (= Theorem 5's worst "
          "case): with large gradients along the path Algorithm 3 must beat it"))
_THM5_CHECKS = {
    "k4_3": _THM5_LARGE_D, "k2": _THM5_LARGE_D,
    "k4_3_d1": (
        Check("kl:thm5_best", "two-sided", 0.1,
              "two-sided: at d = 1 the best case's d-free term L0√A/(√n ρ^{1/4}) (the noise of "
              "N_t, at which the run stops) is attained; the band spans √A; 0.1 for 6 seeds"),
        Check("kl:prior_stationary", "reject", 0.1,
              "competitor: the best prior stationary rate (√d/(n√ρ))^{2/3} [ABG+23]: at d = 1 "
              "Algorithm 3's d-free floor keeps it slower; the data must rule that slope out"))}
THM5 = {}
for _tag, _fx, _grid in (
        ("k4_3", {**_RAD, "p": 4.0, "d": _D_LARGE, "rho": 1.0}, _geom(10**5, 10**6.5, 4)),
        ("k2", {**_RAD, "p": 2.0, "d": _D_LARGE, "rho": 1.0, "L1_factor": 8.0}, _geom(10**4.5, 10**6, 4)),
        ("k4_3_d1", {**_RAD, "p": 4.0, "d": 1, "rho": 1.0}, _geom(10**4, 10**7, 5))):
    THM5[_tag] = _adaptive_exp(
        "n", _tag, {**_fx, "select_exponential": 1}, _grid,
        _geom(_grid[0] / 10**0.5, _grid[-1] * 10**0.5, 9), regime="n/a", metric="grad_norm",
        exp_id=f"kl.thm5.n.{_tag}", vacuous=_grad_vacuous,
        title=f"Adaptive noisy GD + exponential mechanism, radial p={_fx['p']:g}, d={_fx['d']:g}: "
              "‖∇F(w_t*)‖ vs n (Theorem 5)",
        problem=f"RadialPowerLoss(p={_fx['p']:g}), d={_fx['d']}",
        checks=_THM5_CHECKS[_tag])


# --- Negative control: per-example minimisers differ -> effective κ = 2 ---------------------------
NEGCTL = _adaptive_exp(
    "n", "", {"problem": "spread", "s": 0.5, "c": 1.0, "B": 1.0, "beta": 0.1, "d": _D_LARGE,
              "rho": 1.0, "kappa_eff": 2.0},
    # n must be a multiple of 2d (balanced design): 2d·(4, 6, 10, 16, 25), ratios ≈ 1.6; below
    # n = 8e5 the bound exceeds F0 (vacuous).
    tuple(2 * _D_LARGE * k for k in (4, 6, 10, 16, 25)),
    tuple(2 * _D_LARGE * k for k in (1, 2, 4, 10, 20, 40, 100, 200, 400)), regime="main",
    exp_id="kl.negctl.n.spread",
    title=f"Negative control: adaptive NGD, spread quartic (x_i = ±0.5e_j), d={_D_LARGE:g} (κ_eff = 2)",
    problem="SpreadQuarticLoss(s=0.5): f_i = ‖w − x_i‖⁴ Huberized, x_i = ±s e_j",
    description="Same loss shape, algorithm, d and grid as kl.adaptive.n.k4_3; only the "
                "per-example minimisers differ.",
    checks=(Check("kl:thm4_main", "two-sided", 0.1,
                  "evaluated at κ = 2 with the instance's PL constant γ₂ = 1/(2√(ac)): near w* the "
                  "loss is quadratic, so Theorem 4's first term at κ = 2 is the tight one; 0.1 as "
                  "for the shared-minimiser sweeps"),
            Check("kl:thm4_main", "reject", 0.1,
                  "the κ = 4/3 rate the same quartic has when all examples share the minimiser "
                  "(kl.adaptive.n.k4_3); the spread data must rule it out",
                  values=lambda p: kl_values({**p, "kappa_eff": 4.0 / 3.0}))))


# --- κ-overlay figure ----------------------------------------------------------------------------------
def _plot_kappa_overlay(analyses: list, root) -> "Path":
    import sympy as sp
    from pathlib import Path

    from empirical.figures import save_figure      # imported first: it selects the Agg backend

    import matplotlib.pyplot as plt  # noqa: E402

    kap = bounds.sym("kappa")
    main = sp.lambdify(kap, bounds.get("kl:thm4_main").exponent("n"), "numpy")
    floor = sp.lambdify(kap, bounds.get("kl:thm4_floor").exponent("n"), "numpy")
    opt = sp.lambdify(kap, bounds.get("kl:thm1").exponent("n"), "numpy")
    ks = np.linspace(1.0, 2.0, 101)
    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=110)
    ax.plot(ks, np.broadcast_to(main(ks), ks.shape), color="tab:orange",
            label="Thm 4 first term: −2κ/(4−κ) (kl:thm4_main)")
    ax.plot(ks, np.broadcast_to(floor(ks), ks.shape), color="tab:purple", ls=":",
            label="Thm 4 d-free term: −κ/2 (kl:thm4_floor)")
    ax.plot(ks, np.broadcast_to(opt(ks), ks.shape), color="tab:green", ls="--",
            label="optimal, κ known (Thm 1): −κ (kl:thm1)")
    for a in analyses:
        if a.fit is None:
            continue
        k = kl_values(a.experiment.point(a.kept[0]))["kappa"]
        small_d = a.experiment.fixed.get("d", 0) == 1
        f = a.fit
        ax.errorbar([k], [f.slope], yerr=[[f.slope - f.ci_low], [f.ci_high - f.slope]],
                    fmt="s" if small_d else "o", color="tab:purple" if small_d else "tab:blue",
                    capsize=3, label=("observed, d = 1" if small_d else f"observed, d = {_D_LARGE:g}"))
        r = a.results[0]
        ax.plot([k], [r.local], marker="_", ms=14, color="tab:red")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    uniq["local slope of the checked term (red dash)"] = plt.Line2D([], [], marker="_", ms=14,
                                                                     color="tab:red", ls="")
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="lower left")
    ax.set_xlabel("KL exponent κ of the instance (radial loss, p = κ/(κ−1))")
    ax.set_ylabel("n-slope of the excess (log-log)")
    ax.set_title("Adaptive noisy GD, same code and inputs (no κ, no γ):\n"
                 "observed n-slopes (95% CI) against Theorem 4's exponents", fontsize=9)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, Path(root) / "kl" / "kl.summary.adaptive_kappa.png")


KAPPA_OVERLAY = register_summary(Summary(
    id="kl.summary.adaptive_kappa", paper="kl",
    experiments=tuple(ADAPTIVE[("n", _KAPPA_TAG[p])].id for p in (6.0, 4.0, 3.0, 2.0))
    + tuple(ADAPTIVE[("n", _KAPPA_TAG[p] + "_d1")].id for p in (4.0, 3.0, 2.0)),
    plot=_plot_kappa_overlay))
