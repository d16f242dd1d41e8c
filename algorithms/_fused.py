"""One-pass (fused) clipped least-squares DP-SGD step, compiled with numba (optional extra
``fast``: ``pip install -e ".[fast]"``).

The step is the per-example-clipped gradient of DP-SSGD / DP-AMBSSGD (Varshney, Thakurta, Jain,
"(Nearly) Optimal Private Linear Regression via Adaptive Clipping", Algorithms 1–2) and of any
DP-SGD on a linear model; :func:`algorithms.primitives.linear_dpsgd_step` is its public entry
and its numpy path the reference.  Imported only when that function is asked for the fused kernel
(numba's import and compilation cost ≈ 1 s; compiled code is cached on disk).

Why a kernel: the numpy path is two BLAS matrix-vector products, r = Xw − y and Xᵀc, each a pass
over X.  At B = 256, d = 1000 X is 2 MB, out of L2, and each pass costs ≈ 33 µs: the rate at
which this kind of CPU fills L1 (≈ 60 GB/s, measured from L2 and from L3 alike).  Here every
group of four rows is read from memory once for its residuals and, after the clip, added into the
gradient while still in L1/L2 (the add runs backwards over the rows so that the most recently
loaded part, still in L1, comes first): ≈ 56 µs for the sums against ≈ 66 µs for the two gemv
(docs/performance.md).  Sums are reassociated (SIMD partial sums), so results agree with the
numpy path to rounding (≈ 1e-15 relative, tested to 1e-12), not bitwise.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

# Reassociation lets LLVM vectorise the dot products with several partial sums; contraction
# allows FMA.  No nnan/ninf: a NaN or inf residual propagates or clips as in the numpy path.
_FM = {"reassoc", "contract"}
_GROUP = 4       # rows per pass: four 8 kB rows at d = 1000 stay in L1/L2 until their add


@nb.njit(fastmath=_FM, cache=True)
def _clip(r: float, limit: float) -> float:
    # sign(r)·min(|r|, limit); a comparison (not min) so that a NaN residual stays NaN, as
    # np.minimum leaves it in the numpy path.
    a = abs(r)
    if a > limit:
        a = limit
    return a if r >= 0.0 else -a


@nb.njit(fastmath=_FM, cache=True)
def _steps(w, X, y, limits, noise, scale, out):
    """out[r] = w[r] + scale·(Σ_i clip(x_ri r_ri) + noise[r]) for each seed row r of X (R, B, d).

    One compiled function for one run and for seed rows (a single run is R = 1): each signature
    costs ≈ 1–2 s of compilation the first time, cached on disk after."""
    R, B, d = X.shape
    g = np.empty(d)
    for q in range(R):
        g[:] = 0.0
        Xq, yq, lq, wq = X[q], y[q], limits[q], w[q]
        i = 0
        while i + _GROUP <= B:
            s0 = s1 = s2 = s3 = 0.0
            for j in range(d):
                wj = wq[j]
                s0 += Xq[i, j] * wj
                s1 += Xq[i + 1, j] * wj
                s2 += Xq[i + 2, j] * wj
                s3 += Xq[i + 3, j] * wj
            c0 = _clip(s0 - yq[i], lq[i])
            c1 = _clip(s1 - yq[i + 1], lq[i + 1])
            c2 = _clip(s2 - yq[i + 2], lq[i + 2])
            c3 = _clip(s3 - yq[i + 3], lq[i + 3])
            for j in range(d - 1, -1, -1):
                g[j] += c0 * Xq[i, j] + c1 * Xq[i + 1, j] + c2 * Xq[i + 2, j] + c3 * Xq[i + 3, j]
            i += _GROUP
        while i < B:                   # the last B mod 4 rows, one at a time
            s = 0.0
            for j in range(d):
                s += Xq[i, j] * wq[j]
            c = _clip(s - yq[i], lq[i])
            for j in range(d):
                g[j] += c * Xq[i, j]
            i += 1
        zq, oq = noise[q], out[q]
        for j in range(d):
            oq[j] = wq[j] + scale * (g[j] + zq[j])
    return out


_F64 = np.dtype(np.float64)


def _f64(a) -> np.ndarray:
    # float64 and C-contiguous, without a copy when the input already is (the common case, tested
    # by attribute reads: the generic conversion costs ≈ 0.5 µs per array and step, a few % of
    # the whole step at d = 100)
    if type(a) is np.ndarray and a.dtype is _F64 and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=np.float64)


def fused_linear_dpsgd_step(w, X: np.ndarray, y, limits, noise, lr: float) -> np.ndarray:
    """w − lr·(Σ_i clip_C(x_i(⟨x_i, w⟩ − y_i)) + noise)/B, reading each group of four rows of X
    once from memory.

    Inputs already validated by :func:`algorithms.primitives.linear_dpsgd_step` (shapes
    ``(…, B, d)`` etc.); computed in float64 on C-contiguous arrays (copies only where the input
    is not one).  Leading axes are flattened into seed rows and restored."""
    shape = X.shape
    B, d = shape[-2], shape[-1]
    if len(shape) == 2:            # one run: a seed axis of 1, by views
        out = np.empty((1, d))
        _steps(_f64(w)[None], _f64(X)[None], _f64(y)[None], _f64(limits)[None],
               _f64(noise)[None], -lr / B, out)
        return out[0]
    lead = shape[:-2]
    R = math.prod(lead)
    out = np.empty((R, d))
    _steps(_f64(w).reshape(R, d), _f64(X).reshape(R, B, d), _f64(y).reshape(R, B),
           _f64(limits).reshape(R, B), _f64(noise).reshape(R, d), -lr / B, out)
    return out.reshape(*lead, d)
