"""The data model of the user-level SCO paper (Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO"):
``UserData`` (n users with m items each; every per-item gradient is counted, so gradient
complexities are measured) and Appendix D's randomized smoothing (``SmoothedUserData``,
Lemma D.1) for non-smooth losses.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from algorithms.primitives import project_ball
from algorithms.validation import check_int, check_nonnegative, check_positive

__all__ = ["SmoothedUserData", "UserData", "uniform_ball"]


# ================================================================================================
# Data interface
# ================================================================================================
class UserData(ABC):
    """n users × m items of a convex L-Lipschitz loss on the ball 𝒳 = B(center, R/2).

    ``R`` is the paper's DIAMETER (Assumption 1.1).  ``grad_evals`` counts per-item gradients.
    Subclasses implement ``_user_mean_gradients(x, users)`` (shape (K, d): ∇F̂(x, Z_u) =
    (1/m)Σ_j ∇f(x, z_{u,j})) and ``_item_gradients(X, users, items)`` (row k: ∇f(X_k, z_{u_k, j_k})).
    """

    def __init__(self, n: int, m: int, d: int, L: float, R: float, beta: float):
        self.n = check_int("n", n)
        self.m = check_int("m", m)
        self.d = check_int("d", d)
        self.L = check_positive("L", L)
        self.R = check_positive("R", R)
        self.beta = check_nonnegative("beta", beta)
        self.center = np.zeros(self.d)
        self.grad_evals = 0

    @property
    def radius(self) -> float:
        return 0.5 * self.R

    def user_mean_gradients(self, x: np.ndarray, users: np.ndarray) -> np.ndarray:
        users = np.asarray(users, dtype=np.intp)
        if users.ndim != 1 or (users.size and (users.min() < 0 or users.max() >= self.n)):
            raise ValueError(f"users must be a 1-D array of user indices in [0, {self.n})")
        self.grad_evals += users.size * self.m
        return self._user_mean_gradients(np.asarray(x, dtype=float), users)

    def item_gradients(self, X: np.ndarray, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        users = np.asarray(users, dtype=np.intp)
        items = np.asarray(items, dtype=np.intp)
        if users.shape != items.shape or users.ndim != 1:
            raise ValueError("users and items must be 1-D arrays of equal length")
        if users.size and (users.min() < 0 or users.max() >= self.n or items.min() < 0
                           or items.max() >= self.m):
            raise ValueError(f"users must lie in [0, {self.n}) and items in [0, {self.m})")
        self.grad_evals += users.size
        return self._item_gradients(np.asarray(X, dtype=float), users, items)

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_ball(x, self.center, self.radius)

    @abstractmethod
    def _user_mean_gradients(self, x: np.ndarray, users: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _item_gradients(self, X: np.ndarray, users: np.ndarray, items: np.ndarray) -> np.ndarray: ...


def uniform_ball(rng: np.random.Generator, size: int, d: int, r: float) -> np.ndarray:
    """``size`` points uniform on the ℓ2 ball B(0, r) in R^d: r·U^{1/d}·g/‖g‖, g ~ N(0, I)."""
    g = rng.standard_normal((size, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g * (r * rng.random(size) ** (1.0 / d))[:, None]


class SmoothedUserData(UserData):
    """Randomized smoothing (Appendix D): f_r(x, z) = E_{y ~ Unif B(0, r)} f(x + y, z).

    Each per-item gradient is ∇f(x + y, z) with a FRESH y (one base gradient per evaluation, so
    the count is unchanged), an unbiased estimate of ∇f_r(x, z) (Lemma D.1).  f_r is convex,
    L-Lipschitz and (L√d/r)-smooth; |f_r − f| ≤ Lr.  The base problem must be convex and
    L-Lipschitz on 𝒳 + B(0, r), which holds for losses Lipschitz on all of R^d.
    """

    def __init__(self, base: UserData, r: float, rng: np.random.Generator):
        self.base = base
        self.r = check_positive("r", r)
        self.rng = rng
        super().__init__(base.n, base.m, base.d, base.L, base.R, base.L * math.sqrt(base.d) / self.r)
        self.center = base.center

    def _user_mean_gradients(self, x, users):
        K, m, d = users.size, self.m, self.d
        Y = uniform_ball(self.rng, K * m, d, self.r)
        uu = np.repeat(users, m)
        jj = np.tile(np.arange(m), K)
        g = self.base._item_gradients(x[None, :] + Y, uu, jj)
        return g.reshape(K, m, d).mean(axis=1)

    def _item_gradients(self, X, users, items):
        Y = uniform_ball(self.rng, users.size, self.d, self.r)
        return self.base._item_gradients(X + Y, users, items)
