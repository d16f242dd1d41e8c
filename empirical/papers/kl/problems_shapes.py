"""Problems of the KL paper's experiments with a known, tunable KL exponent (Sections 3–4 of
Menart et al.): the radial p-th power (Theorems 1, 2, 4), the nonconvex PL function of Karimi et
al. and its powers, and the spread quartic negative control (Theorem 4's per-example minimisers
differ).  Each exposes κ, γ, L0, L1, F* and an exact, cancellation-free excess.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize as _opt

from algorithms.base import Problem
from algorithms.validation import (check_finite_array, check_interval, check_open_interval,
                                   check_positive)

# Every problem below exposes the constants the theorems take as inputs — ``kappa``, ``gamma``
# (F − F* ≤ γ^κ‖∇F‖^κ on ``in_kl_region``), ``L0`` (per-example Lipschitz constant, global, so
# that the privacy analysis holds wherever the iterates go), ``L1`` (per-example smoothness, when
# it exists), ``F_star`` — and ``excess(W)``, the exact excess F(w) − F* computed without
# subtracting two nearly equal numbers (for κ ≥ 2 the excess reaches 1e−12 and below).
# Gradients cost O(d) per row whatever n is, except for the data-driven regression (O(nd)).

__all__ = ["RadialPowerLoss", "NonconvexKL", "SpreadQuarticLoss"]


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
