"""The problem interface that algorithms call, and the result they return.

Kept apart in the benchopt manner: a ``Problem`` knows the data and the loss, an algorithm knows
only this interface, and the empirical layer measures the result against the problem's optimum.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from algorithms.accounting import PrivacySpent
from algorithms.validation import check_finite_array, check_int

__all__ = ["Problem", "Result"]


class Problem(ABC):
    """Empirical risk F(w) = (1/n) Σ_i f(w; x_i) on R^d, vectorized over seed rows.

    Public methods accept ``w`` of shape ``(d,)`` or ``(R, d)`` (R independent runs) and count
    gradient evaluations the way oracle-complexity results do: one per example per row, so a
    full gradient costs n per row even when a subclass computes it in O(d) from cached
    statistics.  Subclasses implement ``_loss``, ``_gradient`` and ``_per_sample_gradients`` on
    ``(R, d)`` arrays.
    """

    def __init__(self, n: int, d: int):
        self.n = check_int("n", n)
        self.d = check_int("d", d)
        self.grad_evals = 0

    # -- public, counted --------------------------------------------------------------------------
    def loss(self, w: np.ndarray) -> np.ndarray | float:
        W, single = self._rows(w)
        out = self._loss(W)
        return float(out[0]) if single else out

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """Full-batch gradient ∇F(w)."""
        W, single = self._rows(w)
        self.grad_evals += self.n * W.shape[0]
        g = self._gradient(W)
        return g[0] if single else g

    def per_sample_gradients(self, w: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """∇f(w; x_i) for i in ``idx``: shape ``(len(idx), d)`` or ``(R, len(idx), d)``."""
        W, single = self._rows(w)
        idx = np.asarray(idx, dtype=np.intp)
        if idx.ndim != 1 or (idx.size and (idx.min() < 0 or idx.max() >= self.n)):
            raise ValueError(f"idx must be a 1-D array of indices in [0, {self.n})")
        self.grad_evals += idx.size * W.shape[0]
        g = self._per_sample_gradients(W, idx)
        return g[0] if single else g

    # -- to implement ---------------------------------------------------------------------------
    @abstractmethod
    def _loss(self, W: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _gradient(self, W: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _per_sample_gradients(self, W: np.ndarray, idx: np.ndarray) -> np.ndarray: ...

    # -- shared functions ----------------------------------------------------------------------------------
    def _rows(self, w: np.ndarray) -> tuple[np.ndarray, bool]:
        W = np.asarray(w, dtype=float)
        single = W.ndim == 1
        W = W[None, :] if single else W
        if W.ndim != 2 or W.shape[1] != self.d:
            raise ValueError(f"w must have shape ({self.d},) or (R, {self.d}), got {np.shape(w)}")
        return W, single


@dataclass(frozen=True)
class Result:
    """What a run of a private algorithm returns.

    ``w`` is the output (``(d,)``, or ``(R, d)`` for R seed rows); ``iterates`` whatever
    intermediate points the algorithm's theorem speaks about (may be None); ``grad_evals`` the
    number of per-example gradient evaluations per row; ``privacy`` the spend computed by
    dp-accounting from the noise actually added; ``info`` algorithm-specific diagnostics (step
    counts, noise levels, caps applied).
    """

    w: np.ndarray
    privacy: PrivacySpent | list[PrivacySpent]
    grad_evals: int | np.ndarray
    iterates: np.ndarray | None = None
    info: dict = field(default_factory=dict)
