"""One-hidden-layer MLP (ReLU, softmax cross-entropy) with per-example gradients and per-example
clipping, for the real-data miniature of the SOSP paper's Appendix E (Tao et al.,
``sosp_private_nonconvex.txt``: "a fully connected neural network with one hidden layer ...
ReLU activation ... cross-entropy loss ... Kaiming initialization, biases zero").

Parameters are one flat vector θ = (W1 (D×H), b1 (H), W2 (H×C), b2 (C)) so that the paper's
optimizers (``algorithms.sosp_nonconvex``), which work on R^d, can run on it unchanged.  Every
function broadcasts over leading axes: θ of shape (..., P) against inputs of shape (..., n, D),
so one call serves m clients' batches (θ shared, X (m, b, D)) or many parameter vectors on one
batch (θ (K, P), X (n, D)), with no Python loop over examples.

Clipping is what makes the MLP usable by a DP optimizer whose sensitivities are stated as
constants: per-example gradients are clipped to norm G (so two records' gradients differ by at
most 2G: the G_s of ``AdaDPSpider``), and per-example gradient *differences* between two points
are clipped to M·‖x − x'‖ (the M_s of the SPIDER correction).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.validation import check_int, check_positive

__all__ = ["MLPShape", "kaiming_init", "logits", "loss", "accuracy", "per_example_gradients",
           "clip_rows", "clipped_mean_gradient", "clipped_mean_difference",
           "clipped_hessian_columns"]


@dataclass(frozen=True)
class MLPShape:
    """Input dimension D, hidden width H, number of classes C; P = DH + H + HC + C."""

    D: int
    H: int
    C: int

    def __post_init__(self) -> None:
        for name in ("D", "H", "C"):
            check_int(name, getattr(self, name))
        if self.C < 2:
            raise ValueError(f"C must be in [2, inf), got {self.C}")

    @property
    def P(self) -> int:
        return self.D * self.H + self.H + self.H * self.C + self.C

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        theta = np.asarray(theta, dtype=float)
        if theta.shape[-1] != self.P:
            raise ValueError(f"theta must have last axis {self.P} (D={self.D}, H={self.H}, "
                             f"C={self.C}), got shape {theta.shape}")
        D, H, C = self.D, self.H, self.C
        lead = theta.shape[:-1]
        i1, i2, i3 = D * H, D * H + H, D * H + H + H * C
        return (theta[..., :i1].reshape(*lead, D, H), theta[..., i1:i2],
                theta[..., i2:i3].reshape(*lead, H, C), theta[..., i3:])


def kaiming_init(shape: MLPShape, rng: np.random.Generator, rows: int | None = None
                 ) -> np.ndarray:
    """He/Kaiming-normal weights (std √(2/fan_in)), zero biases, as Appendix E states.
    ``rows``: that many independent draws, shape (rows, P); else (P,)."""
    lead = () if rows is None else (check_int("rows", rows),)
    W1 = rng.standard_normal((*lead, shape.D * shape.H)) * math.sqrt(2.0 / shape.D)
    W2 = rng.standard_normal((*lead, shape.H * shape.C)) * math.sqrt(2.0 / shape.H)
    return np.concatenate([W1, np.zeros((*lead, shape.H)), W2, np.zeros((*lead, shape.C))],
                          axis=-1)


def _forward(shape: MLPShape, theta: np.ndarray, X: np.ndarray):
    W1, b1, W2, b2 = shape.unpack(theta)
    pre = np.einsum("...nd,...dh->...nh", X, W1) + b1[..., None, :]
    hid = np.maximum(pre, 0.0)
    out = np.einsum("...nh,...hc->...nc", hid, W2) + b2[..., None, :]
    return pre, hid, out, W2


def logits(shape: MLPShape, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Class scores, shape (..., n, C)."""
    return _forward(shape, theta, X)[2]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def loss(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean cross-entropy over the n examples, shape (...)."""
    z = logits(shape, theta, X)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    y = np.asarray(y, dtype=np.intp)
    return -np.take_along_axis(logp, np.broadcast_to(y, logp.shape[:-1])[..., None],
                               axis=-1)[..., 0].mean(axis=-1)


def accuracy(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fraction of the n examples classified correctly, shape (...)."""
    return (logits(shape, theta, X).argmax(axis=-1) == np.asarray(y)).mean(axis=-1)


def per_example_gradients(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray
                          ) -> np.ndarray:
    """∇_θ of each example's cross-entropy, shape (..., n, P) (backpropagation by hand)."""
    pre, hid, out, W2 = _forward(shape, theta, X)
    y = np.asarray(y, dtype=np.intp)
    d2 = _softmax(out)
    onehot = np.broadcast_to(np.arange(shape.C) == y[..., None], d2.shape)
    d2 = d2 - onehot                                                # ∂ℓ/∂logits
    d1 = np.einsum("...nc,...hc->...nh", d2, W2) * (pre > 0)        # ∂ℓ/∂pre-activation
    Xb = np.broadcast_to(X, (*d1.shape[:-1], shape.D))
    gW1 = (Xb[..., :, None] * d1[..., None, :]).reshape(*d1.shape[:-1], shape.D * shape.H)
    gW2 = (hid[..., :, None] * d2[..., None, :]).reshape(*d2.shape[:-1], shape.H * shape.C)
    return np.concatenate([gW1, d1, gW2, d2], axis=-1)


def clip_rows(G: np.ndarray, limit: float | np.ndarray) -> np.ndarray:
    """Scale each row (last axis) to norm ≤ ``limit`` (broadcast over the leading axes)."""
    norms = np.linalg.norm(G, axis=-1, keepdims=True)
    lim = np.asarray(limit, dtype=float)[..., None] if np.ndim(limit) else float(limit)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > lim, lim / np.where(norms > 0, norms, 1.0), 1.0)
    return G * scale


def clipped_mean_gradient(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                          clip: float) -> np.ndarray:
    """Mean over the n examples of per-example gradients clipped to norm ``clip``, (..., P).
    Replacing one of n examples moves it by at most 2·clip/n."""
    clip = check_positive("clip", clip)
    return clip_rows(per_example_gradients(shape, theta, X, y), clip).mean(axis=-2)


def clipped_mean_difference(shape: MLPShape, theta: np.ndarray, theta_prev: np.ndarray,
                            X: np.ndarray, y: np.ndarray, M: float) -> np.ndarray:
    """Mean of per-example ∇ℓ(θ) − ∇ℓ(θ_prev), each clipped to M·‖θ − θ_prev‖, (..., P): the
    SPIDER correction with replace-one sensitivity 2M‖θ − θ_prev‖/n by construction."""
    M = check_positive("M", M)
    step = np.linalg.norm(np.asarray(theta, float) - np.asarray(theta_prev, float), axis=-1)
    diff = (per_example_gradients(shape, theta, X, y)
            - per_example_gradients(shape, theta_prev, X, y))
    return clip_rows(diff, M * np.asarray(step)[..., None]).mean(axis=-2)


def clipped_hessian_columns(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                            clip_g: float, M: float, h: float = 1e-5, chunk: int = 64
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Clipped mean gradient (P,) and a clipped mean Hessian (P, P) at one θ (P,) over n examples.

    Column i of example k's Hessian is the forward difference (∇ℓ_k(θ + he_i) − ∇ℓ_k(θ))/h,
    clipped to norm M, so each example's Hessian has Frobenius norm ≤ √P·M and one replaced
    example moves the mean by ≤ 2M√P/n in Frobenius norm (Algorithm 4's Hessian sensitivity with
    M_s = M); the result is symmetrised ((A + Aᵀ)/2 does not increase the Frobenius norm).
    ReLU makes ℓ piecewise smooth, so the difference quotient is the one-sided derivative.
    Memory: ``chunk``·n·P floats at a time."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (shape.P,):
        raise ValueError(f"theta must have shape ({shape.P},), got {theta.shape}")
    h, M = check_positive("h", h), check_positive("M", M)
    base = per_example_gradients(shape, theta, X, y)                 # (n, P)
    grad = clip_rows(base, check_positive("clip_g", clip_g)).mean(axis=0)
    A = np.empty((shape.P, shape.P))
    for s in range(0, shape.P, chunk):
        idx = np.arange(s, min(s + chunk, shape.P))
        thetas = np.repeat(theta[None], idx.size, axis=0)
        thetas[np.arange(idx.size), idx] += h
        cols = (per_example_gradients(shape, thetas, X, y) - base) / h   # (k, n, P)
        A[idx] = clip_rows(cols, M).mean(axis=1)
    return grad, 0.5 * (A + A.T)
