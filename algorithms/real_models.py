"""One-hidden-layer MLP (ReLU, softmax cross-entropy) with per-example gradients and per-example
clipping, for the real-data miniature of the SOSP paper's Appendix E (Tao et al.: "a fully
connected neural network with one hidden layer ...
ReLU activation ... cross-entropy loss ... Kaiming initialization, biases zero").

Parameters are one flat vector θ = (W1 (D×H), b1 (H), W2 (H×C), b2 (C)) so that the paper's
optimizers (``algorithms.sosp.nonconvex``), which work on R^d, can run on it unchanged.  Every
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


def _backprop(shape: MLPShape, pre: np.ndarray, out: np.ndarray, W2: np.ndarray,
              y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each example's ∂ℓ/∂pre-activation (..., n, H) and ∂ℓ/∂logits (..., n, C)."""
    y = np.asarray(y, dtype=np.intp)
    d2 = _softmax(out)
    onehot = np.broadcast_to(np.arange(shape.C) == y[..., None], d2.shape)
    d2 = d2 - onehot
    d1 = np.einsum("...nc,...hc->...nh", d2, W2) * (pre > 0)
    return d1, d2


def _write_gradients(shape: MLPShape, X: np.ndarray, hid: np.ndarray, d1: np.ndarray,
                     d2: np.ndarray, G: np.ndarray, Xrep: np.ndarray | None = None
                     ) -> np.ndarray:
    """Fill G (..., n, P) with the per-example gradient blocks (W1, b1, W2, b2) in place (no
    concatenation of separately built blocks).

    W1's block holds X[d]·d1[h] at d·H + h.  Given ``Xrep`` (X with each feature repeated H
    times, :func:`_repeat_features`), d1 is tiled D times and the product runs over contiguous
    runs of D·H: the same products bit for bit as the broadcast outer product, which loops over
    H = 8 elements at a time and is ≈ 2.5× slower; worth it where one X serves many products."""
    D, H, C = shape.D, shape.H, shape.C
    lead = G.shape[:-1]
    i1, i2, i3 = D * H, D * H + H, D * H + H + H * C
    if Xrep is None:
        np.multiply(X[..., :, None], d1[..., None, :], out=G[..., :i1].reshape(*lead, D, H))
    else:
        np.multiply(Xrep, np.tile(d1, D), out=G[..., :i1])
    G[..., i1:i2] = d1
    np.multiply(hid[..., :, None], d2[..., None, :], out=G[..., i2:i3].reshape(*lead, H, C))
    G[..., i3:] = d2
    return G


def _repeat_features(shape: MLPShape, X: np.ndarray) -> np.ndarray:
    return np.repeat(X, shape.H, axis=-1)


def per_example_gradients(shape: MLPShape, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                          out: np.ndarray | None = None) -> np.ndarray:
    """∇_θ of each example's cross-entropy, shape (..., n, P) (backpropagation by hand).
    ``out``: a float array of that shape to write into (a caller reusing one buffer avoids a
    fresh multi-MB allocation per call, which glibc maps and the kernel zero-fills each time)."""
    pre, hid, logit, W2 = _forward(shape, theta, X)
    d1, d2 = _backprop(shape, pre, logit, W2, y)
    out = _check_out(out, (*d1.shape[:-1], shape.P))
    return _write_gradients(shape, np.asarray(X, dtype=float), hid, d1, d2, out)


def _row_norms(G: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """‖row‖ over the last axis, keepdims: the operations of ``np.linalg.norm(G, axis=-1)``
    (square, pairwise sum along the contiguous axis, sqrt) without its copy of G (``conj``);
    ``work``: scratch of G's shape for the squares."""
    sq = np.multiply(G, G, out=work)
    return np.sqrt(np.add.reduce(sq, axis=-1, keepdims=True))


def _clip_scale(norms: np.ndarray, lim: float | np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > lim, lim / np.where(norms > 0, norms, 1.0), 1.0)


def clip_rows(G: np.ndarray, limit: float | np.ndarray, out: np.ndarray | None = None,
              work: np.ndarray | None = None) -> np.ndarray:
    """Scale each row (last axis) to norm ≤ ``limit`` (broadcast over the leading axes);
    ``out=G`` clips in place; ``work``: float scratch of G's shape for the squared entries."""
    G = np.asarray(G)
    norms = _row_norms(G if np.issubdtype(G.dtype, np.inexact) else G.astype(float), work)
    lim = np.asarray(limit, dtype=float)[..., None] if np.ndim(limit) else float(limit)
    return np.multiply(G, _clip_scale(norms, lim), out=out)


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
                            clip_g: float, M: float, h: float = 1e-5, chunk: int = 8,
                            out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Clipped mean gradient (..., P) and a clipped mean Hessian (..., P, P) at one θ (P,) over
    the n examples of each data set X (..., n, D), y (..., n) (a leading axis: one per client).

    Column i of example k's Hessian is the forward difference (∇ℓ_k(θ + he_i) − ∇ℓ_k(θ))/h,
    clipped to norm M, so each example's Hessian has Frobenius norm ≤ √P·M and one replaced
    example moves the mean by ≤ 2M√P/n in Frobenius norm (Algorithm 4's Hessian sensitivity with
    M_s = M); the result is symmetrised ((A + Aᵀ)/2 does not increase the Frobenius norm).
    ReLU makes ℓ piecewise smooth, so the difference quotient is the one-sided derivative.
    Memory: 2·``chunk``·(…)·n·P floats, reused across chunks (8 columns at a time keep them in
    cache; the result does not depend on ``chunk``).  ``out``: a float64 (..., P, P) array (a
    view is fine) that receives the Hessian instead of a fresh one."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (shape.P,):
        raise ValueError(f"theta must have shape ({shape.P},), got {theta.shape}")
    h, M = check_positive("h", h), check_positive("M", M)
    chunk = check_int("chunk", chunk)
    X = np.asarray(X, dtype=float)
    base = per_example_gradients(shape, theta, X, y)                 # (..., n, P)
    grad = clip_rows(base, check_positive("clip_g", clip_g)).mean(axis=-2)
    raw = np.einsum("...nd,...dh->...nh", X, shape.unpack(theta)[0])   # X·W1 at θ
    Xrep = _repeat_features(shape, X)          # once per call, for every perturbed θ
    A = _check_out(out, (*base.shape[:-2], shape.P, shape.P))
    buf = np.empty((min(chunk, shape.P), *base.shape))
    work = np.empty_like(buf)
    for s in range(0, shape.P, chunk):
        idx = np.arange(s, min(s + chunk, shape.P))
        cols = _perturbed_gradients(shape, theta, idx, h, X, Xrep, y, raw, buf[:idx.size])
        np.subtract(cols, base, out=cols)
        np.divide(cols, h, out=cols)
        np.multiply(cols, _clip_scale(_row_norms(cols, work[:idx.size]), M), out=cols)
        A[..., idx, :] = np.moveaxis(cols.mean(axis=-2), 0, -2)
    return grad, _symmetrize(A)


def _check_out(out: np.ndarray | None, shape: tuple) -> np.ndarray:
    if out is None:
        return np.empty(shape)
    if out.shape != shape or out.dtype != np.float64:
        raise ValueError(f"out must be a float64 array of shape {shape}, got {out.dtype} "
                         f"{out.shape}")
    return out


def _symmetrize(A: np.ndarray, block: int = 64) -> np.ndarray:
    """A ← (A + Aᵀ)/2 over the last two axes, in place, by block rows (no second P×P array).
    Entry (i, j) and (j, i) both get 0.5·(A_ij + A_ji) from the original entries: the reads of
    block row s (rows s.., columns ≥ s and their mirror) precede any write to them, and
    a + b = b + a exactly, so every entry is the float ``0.5 * (A + A.T)`` gives."""
    P = A.shape[-1]
    for s in range(0, P, block):
        rows = slice(s, min(s + block, P))
        S = np.add(A[..., rows, s:], np.swapaxes(A[..., s:, rows], -1, -2))
        np.multiply(S, 0.5, out=S)
        A[..., rows, s:] = S
        A[..., s:, rows] = np.swapaxes(S, -1, -2)
    return A


def _perturbed_gradients(shape: MLPShape, theta: np.ndarray, idx: np.ndarray, h: float,
                         X: np.ndarray, Xrep: np.ndarray, y: np.ndarray, raw: np.ndarray,
                         out: np.ndarray) -> np.ndarray:
    """Per-example gradients at θ + h·e_i for each i in ``idx``, into out (k, ..., n, P).

    Exactly :func:`per_example_gradients` at the perturbed θ's, with one saving: X·W1 changes
    only in column h of a perturbed W1[d, h] (in no column for the other coordinates), so the
    other columns are copied from ``raw`` (X·W1 at θ) and the changed one is computed by the same
    einsum on that column alone (each entry is the same sum over d in the same order)."""
    D, H = shape.D, shape.H
    k, lead = idx.size, X.shape[:-2]
    thetas = np.repeat(theta[None], k, axis=0)
    thetas[np.arange(k), idx] += h
    W1, b1, W2, b2 = shape.unpack(thetas.reshape(k, *(1,) * len(lead), shape.P))
    rawk = np.repeat(raw[None], k, axis=0)                           # (k, ..., n, H)
    jw = np.flatnonzero(idx < D * H)
    if jw.size:
        hw = idx[jw] % H
        # each changed column sits in column 0 of a (D, H) block, so that the einsum sees the
        # strides it sees in X·W1 (a contiguous column would take einsum's SIMD dot product,
        # which sums in another order)
        Wc = np.empty((jw.size, *W1.shape[1:]))
        Wc[..., 0] = W1[jw, ..., hw]
        col = np.einsum("...nd,...dh->...nh", X, Wc[..., :1])
        rawk[jw, ..., hw] = col[..., 0]
    pre = rawk + b1[..., None, :]
    hid = np.maximum(pre, 0.0)
    logit = np.einsum("...nh,...hc->...nc", hid, W2) + b2[..., None, :]
    d1, d2 = _backprop(shape, pre, logit, W2, y)
    return _write_gradients(shape, X, hid, d1, d2, out, Xrep)
