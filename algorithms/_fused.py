"""One-pass (fused) clipped least-squares DP-SGD step, compiled with numba (optional extra
``fast``: ``pip install -e ".[fast]"``).

The step is the per-example-clipped gradient of DP-SSGD / DP-AMBSSGD (Varshney, Thakurta, Jain,
"(Nearly) Optimal Private Linear Regression via Adaptive Clipping", Algorithms 1–2) and of any
DP-SGD on a linear model; :func:`algorithms.primitives.linear_dpsgd_step` is its public entry
and its numpy path the reference.  Imported only when that function is asked for the fused kernel
(numba's import and compilation cost ≈ 1 s; compiled code is cached on disk).

Why a kernel: the numpy path is two BLAS matrix-vector products, r = Xw − y and Xᵀc, each a pass
over X.  At B = 256, d = 1000 X is 2 MB, out of L2, and each pass costs ≈ 32 µs of memory traffic.
Here every group of four rows is read from L3 once for its residuals and, after the clip, added
into the gradient while it is still in L1/L2 (the add runs backwards over the row so that the most
recently loaded part, the part surely still in L1, comes first).  Sums are reassociated (SIMD
partial sums), so results agree with the numpy path to rounding (≈ 1e-15 relative), not bitwise.
"""
from __future__ import annotations

import numba as nb
import numpy as np

# Reassociation lets LLVM vectorise the dot products with several partial sums; contraction
# allows FMA.  No nnan/ninf: a NaN or inf residual propagates or clips as in the numpy path.
_FM = {"reassoc", "contract"}
_GROUP = 4       # rows per pass: four 8 kB rows at d = 1000 stay in L1/L2 until their add


@nb.njit(fastmath=_FM, boundscheck=False, cache=True, inline="always")
def _clip(r: float, limit: float) -> float:
    # sign(r)·min(|r|, limit); a comparison (not min) so that a NaN residual stays NaN, as
    # np.minimum leaves it in the numpy path.
    a = abs(r)
    if a > limit:
        a = limit
    return a if r >= 0.0 else -a


@nb.njit(fastmath=_FM, boundscheck=False, cache=True)
def _step_2d(w, X, y, limits, noise, scale, out):
    """out = w + scale·(Σ_i clip(x_i r_i) + noise); X (B, d), one run."""
    B, d = X.shape
    g = np.zeros(d)
    i = 0
    while i + _GROUP <= B:
        s0 = s1 = s2 = s3 = 0.0
        for j in range(d):
            wj = w[j]
            s0 += X[i, j] * wj
            s1 += X[i + 1, j] * wj
            s2 += X[i + 2, j] * wj
            s3 += X[i + 3, j] * wj
        c0 = _clip(s0 - y[i], limits[i])
        c1 = _clip(s1 - y[i + 1], limits[i + 1])
        c2 = _clip(s2 - y[i + 2], limits[i + 2])
        c3 = _clip(s3 - y[i + 3], limits[i + 3])
        for j in range(d - 1, -1, -1):
            g[j] += c0 * X[i, j] + c1 * X[i + 1, j] + c2 * X[i + 2, j] + c3 * X[i + 3, j]
        i += _GROUP
    while i < B:                       # the last B mod 4 rows, one at a time
        s = 0.0
        for j in range(d):
            s += X[i, j] * w[j]
        c = _clip(s - y[i], limits[i])
        for j in range(d):
            g[j] += c * X[i, j]
        i += 1
    for j in range(d):
        out[j] = w[j] + scale * (g[j] + noise[j])
    return out


@nb.njit(fastmath=_FM, boundscheck=False, cache=True)
def _step_3d(w, X, y, limits, noise, scale, out):
    """Seed rows: X (R, B, d), the others (R, ·); row r is the 2-d step on row r's arrays."""
    for r in range(X.shape[0]):
        _step_2d(w[r], X[r], y[r], limits[r], noise[r], scale, out[r])
    return out


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def fused_linear_dpsgd_step(w, X: np.ndarray, y, limits, noise, lr: float) -> np.ndarray:
    """w − lr·(Σ_i clip_C(x_i(⟨x_i, w⟩ − y_i)) + noise)/B in one pass over X per four rows.

    Inputs already validated by :func:`algorithms.primitives.linear_dpsgd_step` (shapes
    ``(…, B, d)`` etc.); computed in float64 on C-contiguous copies where needed.  Leading axes
    beyond one are flattened into seed rows."""
    X = _f64(X)
    lead, (B, d) = X.shape[:-2], X.shape[-2:]
    scale = -lr / B
    if not lead:
        return _step_2d(_f64(w), X, _f64(y), _f64(limits), _f64(noise), scale, np.empty(d))
    R = int(np.prod(lead))
    out = _step_3d(_f64(w).reshape(R, d), X.reshape(R, B, d), _f64(y).reshape(R, B),
                   _f64(limits).reshape(R, B), _f64(noise).reshape(R, d), scale, np.empty((R, d)))
    return out.reshape(*lead, d)
