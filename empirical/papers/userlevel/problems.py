"""Synthetic user-level problems with exact population risk (no Monte Carlo of F).

Each problem draws n users × m i.i.d. items from its P with the run's generator and exposes the
``algorithms.userlevel.sco.UserData`` interface plus ``excess(x) = F(x) − F*`` in closed form
(or exact quadrature).  𝒳 is the ball B(0, R/2) (R is the paper's diameter).

* ``QuadraticUsers``: f(x, z) = ½‖x − z‖², z = μ0 + ξ with ξ a Rademacher vector / √d
  (E‖ξ‖² = 1).  F(x) − F* = ½‖x − μ0‖².  A user's mean gradient x − z̄_u needs only z̄_u, and
  the sum of m Rademacher signs is 2·Binomial(m, ½) − m, so drawing a user costs O(d) whatever
  m is (gradients are still counted per item).  β = 1, μ = 1, L = R/2 + ‖μ0‖ + 1.
* ``LeastSquaresUsers``: f(x, (a, b)) = ½(⟨a, x⟩ − b)², a ~ Unif(S^{d−1}), b = ⟨a, w*⟩ + ξ,
  ξ ~ Unif[−½, ½], ‖w*‖ = 1.  F(x) − F* = ‖x − w*‖²/(2d) exactly (E aaᵀ = I/d).  Users are
  stored by their sufficient statistics A_u = (1/m)Σ aaᵀ, c_u = (1/m)Σ ab (drawn in chunks), and
  items too when ``keep_items`` (Algorithm 1 needs single items).  β = 1, L = R/2 + 1.5.
* ``LadUsers``: f(x, (a, b)) = |⟨a, x⟩ − b| (non-smooth), a ~ Unif(S^{d−1}), b = ⟨a, w*⟩ + ξ,
  ξ ~ Laplace(0, s).  With v = ‖x − w*‖ and t = ⟨a, e⟩ (density ∝ (1 − t²)^{(d−3)/2}),
  F(x) = E_t[g(vt)], g(u) = |u| + s e^{−|u|/s}; F* = s at x = w*.  Evaluated by Gauss–Jacobi
  quadrature.  L = 1 on all of R^d (so smoothing needs no domain enlargement).
* ``LogisticUsers``: f(x, (a, y)) = log(1 + e^{−y⟨a, x⟩}), a ~ Unif(S^{d−1}), y = ±1 with
  P(y = 1 | a) = σ(⟨a, w*⟩) (well specified, so F* = F(w*)).  F(x) depends on a only through
  its two coordinates (t1, t2) in the plane of w* and x, whose density is ∝ (1 − t1² − t2²)^{(d−4)/2}
  on the unit disk; with u = t1² + t2² and an angle, F is a Gauss–Jacobi rule in u times the
  trapezoid rule in the angle (spectrally accurate: the angle-average is analytic in u), to
  ~1e-13.  β = 1/4, L = 1 on all of R^d.  Items are stored (no sufficient statistics).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import roots_jacobi

from algorithms.userlevel.data import UserData
from algorithms.validation import check_positive

__all__ = ["QuadraticUsers", "LeastSquaresUsers", "LadUsers", "LogisticUsers",
           "StreamingLeastSquares", "LinearStream", "StreamingQuadratic"]


#: Vectors per block of :func:`_sphere`: a block's normals, squares and norms stay in L2 cache.
_SPHERE_BLOCK = 1 << 14


def _sphere(rng: np.random.Generator, shape: tuple, d: int) -> np.ndarray:
    """Uniform draws on S^{d−1}, shape (*shape, d): Gaussians divided by their norms.

    Filled block by block with the same numbers as ``g / ‖g‖`` on one
    ``rng.standard_normal((*shape, d))`` (Generator draws normals one after another in C order,
    so consecutive blocks continue the same stream; tests pin this bit for bit); blocks spare the
    three full-size temporaries, whose page faults and cache misses cost a third of the draw."""
    out = np.empty((*shape, d))
    flat = out.reshape(-1, d)
    for s in range(0, flat.shape[0], _SPHERE_BLOCK):
        blk = flat[s:s + _SPHERE_BLOCK]
        rng.standard_normal(out=blk)
        _normalise_rows(blk)
    return out


def _normalise_rows(g: np.ndarray) -> None:
    """g /= ‖g‖ row by row, in place, with the floats of ``g / np.linalg.norm(g, axis=-1)``."""
    d = g.shape[1]
    if d >= 8:
        g /= np.linalg.norm(g, axis=-1, keepdims=True)
        return
    # numpy sums fewer than 8 terms left to right (its pairwise sum starts at 8), so the
    # column-by-column sum of squares is its norm bit for bit; column-wise division avoids
    # broadcasting over an inner axis of length d < 8, numpy's slowest loop shape
    sq = g * g
    nrm = sq[:, 0].copy()
    for i in range(1, d):
        nrm += sq[:, i]
    np.sqrt(nrm, out=nrm)
    for i in range(d):
        g[:, i] /= nrm


class QuadraticUsers(UserData):
    """f(x, z) = ½‖x − z‖² with z = μ0 + Rademacher/√d; per-user means drawn exactly in O(d)."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, R: float = 4.0,
                 mu_norm: float = 1.0, adversarial: int = 0, adv_direction: np.ndarray | None = None):
        L = R / 2 + mu_norm + 1.0
        super().__init__(n, m, d, L, R, beta=1.0)
        e = np.ones(d) / math.sqrt(d)
        self.mu0 = mu_norm * e
        signs = 2.0 * rng.binomial(self.m, 0.5, size=(self.n, self.d)) - self.m
        self.zbar = self.mu0 + signs / (self.m * math.sqrt(self.d))
        self.var_item = 1.0            # E‖ξ‖² (trace of the item-gradient covariance)
        if adversarial:
            u = np.zeros(d) if adv_direction is None else np.asarray(adv_direction, float)
            if adv_direction is None:
                u[0] = 1.0
            # adversarial users' items all sit at −(R/2)u: mean gradient ≈ L away from honest ones
            self.zbar[:adversarial] = -0.5 * R * u

    def excess(self, x: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(x)
        return 0.5 * np.einsum("ij,ij->i", X - self.mu0, X - self.mu0)

    def _user_mean_gradients(self, x, users):
        return x[None, :] - self.zbar[users]

    def _item_gradients(self, X, users, items):  # pragma: no cover - Algorithm 1 uses LeastSquares
        raise NotImplementedError("QuadraticUsers stores per-user means only")


class LeastSquaresUsers(UserData):
    """Least squares with features on the sphere; exact excess ‖x − w*‖²/(2d)."""

    CHUNK = 1 << 20   # items per generation chunk

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, R: float = 4.0,
                 keep_items: bool = False, adversarial: int = 0):
        super().__init__(n, m, d, R / 2 + 1.5, R, beta=1.0)
        self.w_star = np.ones(d) / math.sqrt(d)
        self.A = np.empty((n, d, d))
        self.c = np.empty((n, d))
        self.items_a = np.empty((n, m, d)) if keep_items else None
        self.items_b = np.empty((n, m)) if keep_items else None
        per = max(1, self.CHUNK // m)
        for s in range(0, n, per):
            k = min(per, n - s)
            a = _sphere(rng, (k, m), d)
            b = a @ self.w_star + rng.uniform(-0.5, 0.5, size=(k, m))
            self.A[s:s + k] = np.einsum("kmi,kmj->kij", a, a) / m
            self.c[s:s + k] = np.einsum("kmi,km->ki", a, b) / m
            if keep_items:
                self.items_a[s:s + k], self.items_b[s:s + k] = a, b
        if adversarial:
            # flipped labels along one direction: items (e1, −2·sign⟨e1, w*⟩·(R/2)) for every item
            u = np.zeros(d)
            u[0] = 1.0
            y = -(R / 2 + 1.0) * np.sign(self.w_star[0])
            self.A[:adversarial] = np.outer(u, u)
            self.c[:adversarial] = y * u
            if keep_items:
                self.items_a[:adversarial] = u
                self.items_b[:adversarial] = y

    def excess(self, x: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(x)
        return np.einsum("ij,ij->i", X - self.w_star, X - self.w_star) / (2 * self.d)

    def _user_mean_gradients(self, x, users):
        return self.A[users] @ x - self.c[users]

    def _item_gradients(self, X, users, items):
        if self.items_a is None:
            raise ValueError("LeastSquaresUsers(keep_items=False) cannot give single items")
        a = self.items_a[users, items]
        r = np.einsum("ij,ij->i", a, X) - self.items_b[users, items]
        return r[:, None] * a


class LadUsers(UserData):
    """Least absolute deviation (non-smooth, L = 1), exact F by Gauss–Jacobi quadrature."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, s: float = 0.1,
                 R: float = 4.0, nodes: int = 64):
        super().__init__(n, m, d, 1.0, R, beta=0.0)
        if d < 2:
            raise ValueError(f"d must be an integer >= 2 for LadUsers, got {d}")
        self.s = check_positive("s", s)
        self.w_star = np.ones(d) / math.sqrt(d)
        self.a = _sphere(rng, (n, m), d)
        self.b = self.a @ self.w_star + rng.laplace(0.0, s, size=(n, m))
        al = (d - 3) / 2.0
        t, w = roots_jacobi(nodes, al, al)
        self._t, self._w = t, w / w.sum()
        self.F_star = self.s

    def excess(self, x: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(x)
        v = np.linalg.norm(X - self.w_star, axis=1)
        u = np.abs(v[:, None] * self._t[None, :])
        # g(u) − s = |u| + s(e^{−|u|/s} − 1), computed without cancellation via expm1
        g = u + self.s * np.expm1(-u / self.s)
        return g @ self._w

    def _user_mean_gradients(self, x, users):
        r = self.a[users] @ x - self.b[users]
        return np.einsum("km,kmd->kd", np.sign(r), self.a[users]) / self.m

    def _item_gradients(self, X, users, items):
        a = self.a[users, items]
        r = np.einsum("ij,ij->i", a, X) - self.b[users, items]
        return np.sign(r)[:, None] * a


class LogisticUsers(UserData):
    """Well-specified logistic regression, features on the sphere; F by disk quadrature."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, R: float = 4.0,
                 w_norm: float = 1.0, nodes: int = 40, angles: int = 64):
        super().__init__(n, m, d, 1.0, R, beta=0.25)
        if d < 3:
            raise ValueError(f"d must be an integer >= 3 for LogisticUsers, got {d}")
        check_positive("w_norm", w_norm)
        if w_norm > R / 2:
            raise ValueError(f"w_norm must be in (0, {R / 2}] (inside 𝒳), got {w_norm}")
        self.w_star = np.full(d, w_norm / math.sqrt(d))
        self.a = _sphere(rng, (n, m), d)
        p = 1.0 / (1.0 + np.exp(-(self.a @ self.w_star)))
        self.y = np.where(rng.random((n, m)) < p, 1.0, -1.0)
        self._t1, self._t2, self._w = _disk_rule(d, nodes, angles)
        self.F_star = float(self._risk(np.atleast_2d(self.w_star))[0])

    def _risk(self, X: np.ndarray) -> np.ndarray:
        wn = float(np.linalg.norm(self.w_star))
        e1 = self.w_star / wn
        par = X @ e1
        perp = np.linalg.norm(X - par[:, None] * e1[None, :], axis=1)
        u = par[:, None] * self._t1[None, :] + perp[:, None] * self._t2[None, :]
        p = 1.0 / (1.0 + np.exp(-wn * self._t1))
        # E_y log(1 + e^{−yu}) = p·log(1 + e^{−u}) + (1 − p)·log(1 + e^{u}), overflow-safe
        loss = p * np.logaddexp(0.0, -u) + (1.0 - p) * np.logaddexp(0.0, u)
        return loss @ self._w

    def excess(self, x: np.ndarray) -> np.ndarray:
        return self._risk(np.atleast_2d(np.asarray(x, float))) - self.F_star

    def _user_mean_gradients(self, x, users):
        A = self.a[users]
        yy = self.y[users]
        c = -yy / (1.0 + np.exp(yy * (A @ x)))          # −y σ(−y⟨a, x⟩)
        return np.einsum("km,kmd->kd", c, A) / self.m

    def _item_gradients(self, X, users, items):
        a = self.a[users, items]
        yy = self.y[users, items]
        c = -yy / (1.0 + np.exp(yy * np.einsum("ij,ij->i", a, X)))
        return c[:, None] * a


def _disk_rule(d: int, nodes: int, angles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes (t1, t2) and weights of E g(t1, t2) for two coordinates of a ~ Unif(S^{d−1}):
    density ∝ (1 − u)^{(d−4)/2} in u = t1² + t2² (uniform angle), Gauss–Jacobi in u."""
    v, wv = roots_jacobi(nodes, (d - 4) / 2.0, 0.0)
    u = 0.5 * (1.0 + v)
    th = 2.0 * np.pi * np.arange(angles) / angles
    r = np.sqrt(u)[:, None]
    t1, t2 = (r * np.cos(th)[None, :]).ravel(), (r * np.sin(th)[None, :]).ravel()
    w = np.repeat(wv / wv.sum(), angles) / angles
    return t1, t2, w


class StreamingLeastSquares(UserData):
    """``LeastSquaresUsers`` for one-pass SGD (Algorithm 1) at large n·m: each item is drawn when
    it is first (and only) used.  One pass over a uniformly permuted i.i.d. sample is an i.i.d.
    stream, so utility is distributed exactly as with stored data; nothing is stored (privacy
    coupling tests use the stored ``LeastSquaresUsers``)."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, R: float = 4.0):
        super().__init__(n, m, d, R / 2 + 1.5, R, beta=1.0)
        self.w_star = np.ones(d) / math.sqrt(d)
        self.rng = rng

    excess = LeastSquaresUsers.excess

    def _user_mean_gradients(self, x, users):  # pragma: no cover - Algorithm 1 only
        raise NotImplementedError("StreamingLeastSquares streams single items only")

    def _item_gradients(self, X, users, items):
        a = _sphere(self.rng, (users.size,), self.d)
        b = a @ self.w_star + self.rng.uniform(-0.5, 0.5, size=users.size)
        r = np.einsum("ij,ij->i", a, X) - b
        return r[:, None] * a


class LinearStream(UserData):
    """f(x, z) = ⟨z, x⟩, z = μ0 + ξ, ξ a Rademacher vector / √d (E‖ξ‖² = 1), streamed; for
    Lemma 2.3.  On a ball large enough that projection never acts, two SGD runs from the same x0
    differ by x_t − y_t = −ηΣ_{s<t}(ξ_s − ξ'_s) exactly, so the averages differ with
    E‖x̃ − ỹ‖² = 2η²Σ_{t=1}^{T}(t−1)²/T² → (2/3)η²T: the lemma's η√T is tight up to its log."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, mu_norm: float = 1.0,
                 R: float = 1e6):
        super().__init__(n, m, d, mu_norm + 1.0, R, beta=0.0)
        self.mu0 = np.full(d, mu_norm / math.sqrt(d))
        self.rng = rng

    def _user_mean_gradients(self, x, users):  # pragma: no cover
        raise NotImplementedError("LinearStream streams single items only")

    def _item_gradients(self, X, users, items):
        xi = (2.0 * self.rng.integers(0, 2, size=(users.size, self.d)) - 1.0) / math.sqrt(self.d)
        return self.mu0 + xi


class StreamingQuadratic(UserData):
    """``QuadraticUsers``' loss ½‖x − z‖², z = μ0 + Rademacher/√d, for one-pass SGD (Algorithm 1):
    items are drawn when first used (an i.i.d. stream, as in ``StreamingLeastSquares``).
    1-strongly convex and 1-smooth, so SGD with η_iT_i ≫ 1 actually localises at laptop scale
    (least squares on the sphere has curvature 1/d and does not).  F(x) − F* = ½‖x − μ0‖²."""

    def __init__(self, n: int, m: int, d: int, rng: np.random.Generator, *, R: float = 4.0,
                 mu_norm: float = 1.0):
        super().__init__(n, m, d, R / 2 + mu_norm + 1.0, R, beta=1.0)
        self.mu0 = np.full(d, mu_norm / math.sqrt(d))
        self.rng = rng

    def excess(self, x: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(x)
        return 0.5 * np.einsum("ij,ij->i", X - self.mu0, X - self.mu0)

    def _user_mean_gradients(self, x, users):  # pragma: no cover - Algorithm 1 only
        raise NotImplementedError("StreamingQuadratic streams single items only")

    def _item_gradients(self, X, users, items):
        xi = (2.0 * self.rng.integers(0, 2, size=(users.size, self.d)) - 1.0) / math.sqrt(self.d)
        return X - (self.mu0 + xi)
