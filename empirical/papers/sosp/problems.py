"""Test problems for the SOSP paper (Tao et al.): non-convex
losses with strict saddles whose gradient, Hessian and minimum eigenvalue are known in closed
form, globally Lipschitz (so the privacy calibration through G is valid everywhere the iterates
go), with per-record noise that gives real sampling variance, and heterogeneous clients whose
shifts cancel exactly.

Cosine-saddle family (P-cos and P-multi), x = (y, v), y ∈ R^k, v ∈ R^{d−k}:

    F(x) = γ Σ_{i≤k} cos(y_i) + b(√(1 + ‖v‖²) − 1).

* ∇F = (−γ sin y_i;  b v/√(1+‖v‖²)).
* ∇²F = diag(−γ cos y_i) ⊕ b[(1+‖v‖²)I − vvᵀ]/(1+‖v‖²)^{3/2}; the second block has eigenvalues
  b/√(1+‖v‖²) (⊥ v) and b/(1+‖v‖²)^{3/2} (along v), so
  λ_min = min{min_i −γ cos y_i, b/(1+‖v‖²)^{3/2}} exactly.
* x = 0 is a strict saddle of index k with λ_min = −γ; minima at y_i = ±π, v = 0, F* = −kγ.
* Constants: ‖∇F‖ ≤ √(kγ² + b²); M = max(γ, b); Hessian-Lipschitz: block diagonal, the cosine
  block has third derivative γ, the pseudo-Huber block ≤ 3b, so ρ_F ≤ max(γ, 3b);
  U = F(0) − F* = 2kγ (the proofs' U := F(x₀) − F*, x₀ = 0).

Records z = (a, u, w), a, u uniform on S^{d−1}, w = ±1, and client shift μ_j:

    f_j(x; z) = F(x) + ⟨μ_j, x⟩ + s₁⟨a, x⟩ + s₂ w sin(⟨u, x⟩).

E[a] = 0 and E[w] = 0 with w independent of u, so E f_j = F + ⟨μ_j, x⟩ and, since Σ_j μ_j = 0
exactly (centred, then scaled by one common factor — rescaling rows separately would leave a
bias of order h/√m), the global risk (1/m)Σ_j F_j is F.  The data-dependent part has
gradient s₁a + s₂w cos(⟨u,x⟩)u (norm ≤ s₁ + s₂ =: G_s) and Hessian −s₂w sin(⟨u,x⟩)uuᵀ
(operator norm ≤ s₂ =: M_s, third derivative ≤ s₂), and the shift is common to a client's
records, so replace-one sensitivities are 2G_s/b (gradient) and 2M_s‖Δx‖/b (difference).
Per-record constants of Assumption 1: G = √(kγ²+b²) + ‖μ_j‖ + G_s, M = max(γ,b) + s₂,
ρ = max(γ, 3b) + s₂.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.sosp.spider import ClientData
from algorithms.validation import check_int, check_nonnegative, check_positive

__all__ = ["CosineSaddle", "client_shifts"]


def client_shifts(m: int, d: int, h: float, seed: int = 0) -> np.ndarray:
    """m shifts μ_j ∈ R^d with Σ_j μ_j = 0 exactly and root-mean-square norm h.

    Gaussian draws are centred (so the sum is 0 up to rounding), then ONE common factor is
    applied (which keeps the sum 0); the last row is set to −Σ of the others so the sum is 0 in
    floating point as well."""
    m, d = check_int("m", m), check_int("d", d)
    h = check_nonnegative("h", h)
    if m == 1 or h == 0.0:
        return np.zeros((m, d))
    mu = np.random.default_rng([seed, m, d]).standard_normal((m, d))
    mu -= mu.mean(axis=0)
    mu *= h / math.sqrt(np.mean(np.sum(mu * mu, axis=1)))
    mu[-1] = -mu[:-1].sum(axis=0)
    return mu


def _sphere(gen: np.random.Generator, shape: tuple) -> np.ndarray:
    v = gen.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


#: Rows per block of :func:`_normalise_last_axis`: a block and its norms stay in L2 cache.
_NORM_BLOCK = 1 << 12


def _normalise_last_axis(v: np.ndarray) -> None:
    """v /= ‖v‖ over the last axis, in place, block by block (v C-ordered): each row's norm and
    quotient are the same operations as on the whole array (numpy reduces each row on its own),
    without the full-size temporaries (the largest record arrays are ≈ 100 MB)."""
    if not v.flags.c_contiguous:
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
        return
    flat = v.reshape(-1, v.shape[-1])
    for s in range(0, flat.shape[0], _NORM_BLOCK):
        blk = flat[s:s + _NORM_BLOCK]
        blk /= np.linalg.norm(blk, axis=-1, keepdims=True)


class CosineSaddle(ClientData):
    """The cosine-saddle family (module docstring), vectorized over points: every method takes
    X of shape (..., d)."""

    def __init__(self, d: int, *, k: int = 1, gamma: float = 1.0, b: float = 1.0,
                 s1: float = 0.15, s2: float = 0.05, m: int = 1, h: float = 0.0,
                 shift_seed: int = 0):
        self.d = check_int("d", d, minimum=2)
        self.k = check_int("k", k)
        if self.k >= self.d:
            raise ValueError(f"k must be in [1, d−1] = [1, {self.d - 1}], got {k}")
        self.gamma = check_positive("gamma", gamma)
        self.b = check_positive("b", b)
        self.s1 = check_nonnegative("s1", s1)
        self.s2 = check_nonnegative("s2", s2)
        if self.s1 + self.s2 <= 0:
            raise ValueError("s1 + s2 must be in (0, inf): records must differ for DP to matter")
        self.m = check_int("m", m)
        self.h = check_nonnegative("h", h)
        self.mu = client_shifts(self.m, self.d, self.h, shift_seed)
        self.G_sens = self.s1 + self.s2
        self.M_sens = self.s2
        mu_max = float(np.max(np.linalg.norm(self.mu, axis=1))) if self.m > 1 else 0.0
        self.G = math.sqrt(self.k * self.gamma**2 + self.b**2) + mu_max + self.G_sens
        self.M = max(self.gamma, self.b) + self.s2
        self.hessian_lipschitz = max(self.gamma, 3.0 * self.b) + self.s2
        self.U = 2.0 * self.k * self.gamma
        self.F_star = -self.k * self.gamma

    # -- population ------------------------------------------------------------------------------
    def loss(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, float)
        v = X[..., self.k:]
        return (self.gamma * np.cos(X[..., :self.k]).sum(-1)
                + self.b * (np.sqrt(1.0 + np.sum(v * v, -1)) - 1.0))

    def gradient(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, float)
        g = np.empty_like(X)
        g[..., :self.k] = -self.gamma * np.sin(X[..., :self.k])
        v = X[..., self.k:]
        g[..., self.k:] = self.b * v / np.sqrt(1.0 + np.sum(v * v, -1, keepdims=True))
        return g

    def hessian(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, float)
        H = np.zeros(X.shape + (self.d,))
        idx = np.arange(self.k)
        H[..., idx, idx] = -self.gamma * np.cos(X[..., :self.k])
        v = X[..., self.k:]
        s = 1.0 + np.sum(v * v, -1)[..., None, None]
        blk = self.b * (s * np.eye(self.d - self.k) - v[..., :, None] * v[..., None, :]) / s**1.5
        H[..., self.k:, self.k:] = blk
        return H

    def lambda_min(self, X: np.ndarray) -> np.ndarray:
        """Closed form: min{min_i −γ cos y_i, b/(1+‖v‖²)^{3/2}}."""
        X = np.asarray(X, float)
        v = X[..., self.k:]
        radial = self.b / (1.0 + np.sum(v * v, -1)) ** 1.5
        return np.minimum((-self.gamma * np.cos(X[..., :self.k])).min(-1), radial)

    def alpha_emp(self, X: np.ndarray) -> np.ndarray:
        """The smallest α for which x is an α-SOSP: max{‖∇F‖, max(0, −λ_min)²/ρ} (Definition 2)."""
        g = np.linalg.norm(self.gradient(X), axis=-1)
        neg = np.maximum(0.0, -self.lambda_min(X))
        return np.maximum(g, neg**2 / self.hessian_lipschitz)

    def escaped(self, X: np.ndarray) -> np.ndarray:
        """Every cosine coordinate left the saddle's basin: |y_i| > π/2."""
        return np.all(np.abs(np.asarray(X, float)[..., :self.k]) > math.pi / 2, axis=-1)

    # -- records (ClientData) --------------------------------------------------------------------
    def batch_gradient(self, gen: np.random.Generator, x: np.ndarray, b: int) -> np.ndarray:
        """(m, d): client-wise mean of ∇f_j(x; z) over b fresh records."""
        a = _sphere(gen, (self.m, b, self.d))
        u = _sphere(gen, (self.m, b, self.d))
        w = gen.choice(np.array([-1.0, 1.0]), size=(self.m, b))
        c = w * np.cos(u @ x)                                         # (m, b)
        data = self.s1 * a.mean(axis=1) + self.s2 * np.einsum("mb,mbd->md", c, u) / b
        return self.gradient(x)[None, :] + self.mu + data

    def batch_difference(self, gen: np.random.Generator, x: np.ndarray, x_prev: np.ndarray,
                         b: int) -> np.ndarray:
        """(m, d): client-wise mean of ∇f_j(x; z) − ∇f_j(x_prev; z) over b fresh records (the
        s₁⟨a,x⟩ and ⟨μ_j,x⟩ parts cancel exactly; a is still a part of each record used)."""
        _ = _sphere(gen, (self.m, b, self.d))                         # a: drawn, cancels
        u = _sphere(gen, (self.m, b, self.d))
        w = gen.choice(np.array([-1.0, 1.0]), size=(self.m, b))
        c = w * (np.cos(u @ x) - np.cos(u @ x_prev))
        data = self.s2 * np.einsum("mb,mbd->md", c, u) / b
        return (self.gradient(x) - self.gradient(x_prev))[None, :] + data

    # -- several rows at once: the same records as the one-row methods, drawn from each row's
    #    generator in the same order (a, then u, then w), the arithmetic on the stacked rows
    def _draw_records(self, gens, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(k, 2, m, b, d) raw normals (a, u) and (k, m, b) signs w, row i from gens[i]: one
        standard_normal call fills a then u in order, and choice(±1) is integers(0, 2)."""
        k = len(gens)
        AU = np.empty((k, 2, self.m, b, self.d))
        W = np.empty((k, self.m, b))
        signs = np.array([-1.0, 1.0])
        for i, g in enumerate(gens):
            g.standard_normal(out=AU[i])
            W[i] = signs[g.integers(0, 2, size=(self.m, b))]
        return AU, W

    def row_gradient(self, X: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """∇F at X[i] for oracle row rows[i]: the one landscape here (a subclass may give each
        row its own)."""
        return self.gradient(X)

    def batch_gradients(self, gens, X: np.ndarray, b: int,
                        rows: np.ndarray | None = None) -> np.ndarray:
        """(k, m, d): :meth:`batch_gradient` of row i at X[i] with gens[i], for every row."""
        AU, W = self._draw_records(gens, b)
        _normalise_last_axis(AU)
        a, u = AU[:, 0], AU[:, 1]
        c = W * np.cos(u @ X[:, None, :, None])[..., 0]                 # (k, m, b)
        data = self.s1 * a.mean(axis=2) + self.s2 * np.einsum("kmb,kmbd->kmd", c, u) / b
        return self.row_gradient(X, rows)[:, None, :] + self.mu + data

    def batch_differences(self, gens, X: np.ndarray, X_prev: np.ndarray, b: int,
                          rows: np.ndarray | None = None) -> np.ndarray:
        """(k, m, d): :meth:`batch_difference` of row i at (X[i], X_prev[i]) with gens[i]."""
        AU, W = self._draw_records(gens, b)                           # a: drawn, cancels
        u = AU[:, 1]
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
        c = W * (np.cos(u @ X[:, None, :, None]) - np.cos(u @ X_prev[:, None, :, None]))[..., 0]
        data = self.s2 * np.einsum("kmb,kmbd->kmd", c, u) / b
        return (self.row_gradient(X, rows) - self.row_gradient(X_prev, rows))[:, None, :] + data

    def held_out_grad_hess(self, gen: np.random.Generator, X: np.ndarray, n: int
                           ) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 4's client statistics on n fresh held-out records per client at T points X:
        gradients (m, T, d) and Hessians (m, T, d, d)."""
        X = np.asarray(X, float)
        a = _sphere(gen, (self.m, n, self.d))
        u = _sphere(gen, (self.m, n, self.d))
        w = gen.choice(np.array([-1.0, 1.0]), size=(self.m, n))
        ux = np.einsum("mnd,td->mnt", u, X)                           # (m, n, T)
        cg = w[..., None] * np.cos(ux)
        ch = w[..., None] * np.sin(ux)
        g = (self.gradient(X)[None] + self.mu[:, None, :] + self.s1 * a.mean(axis=1)[:, None, :]
             + self.s2 * np.einsum("mnt,mnd->mtd", cg, u) / n)
        # Σ_i c_it u_i u_iᵀ as one batched matrix product per client (BLAS), not an einsum
        weighted = np.swapaxes(ch, 1, 2)[..., None] * u[:, None, :, :]          # (m, T, n, d)
        H = self.hessian(X)[None] - self.s2 * np.matmul(np.swapaxes(weighted, -1, -2),
                                                        u[:, None, :, :]) / n
        return g, H
