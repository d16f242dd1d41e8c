"""Shared numpy primitives: clipping, projection, the Gaussian mechanism, sensitivities, the
clipped least-squares DP-SGD step, blocked noise draws and the correlated-noise (matrix-mechanism)
generator.

Paper-independent; the papers that need them are named where they do: the clipped least-squares
sum is the per-example-clipped gradient of DP-SSGD / DP-AMBSSGD (Varshney, Thakurta, Jain,
"(Nearly) Optimal Private Linear Regression via Adaptive Clipping", Algorithms 1–2) and of any
DP-SGD on a linear model; the correlated noise is Algorithm 1 of the KAN paper (Wang et al.).

Sensitivities are ours to prove (the accountant only sees noise multipliers), so each function
states the neighbouring relation it assumes.  Arrays carry optional leading "seed" axes: a
``(R, d)`` array is R independent runs, each row drawn from its own generator.
"""
from __future__ import annotations

import importlib.util
import itertools
import math
from typing import Sequence

import numpy as np

from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE, NeighboringRelation
from algorithms.validation import (check_finite_array, check_int, check_nonnegative,
                                   check_open_interval, check_positive)

__all__ = ["as_generators", "normal_rows", "NormalBlocks", "clip_per_sample", "project_ball", "row_norms",
           "least_squares_clip_limits", "clipped_least_squares_sum", "linear_dpsgd_step",
           "fused_kernel_available",
           "gaussian_mechanism", "mean_gradient_sensitivity", "correlated_noise",
           "CorrelatedNoiseStream", "correlated_noise_matrix", "correlated_sensitivity",
           "correlated_sensitivity_brute_force", "exponential_mechanism_probabilities",
           "exponential_mechanism", "exponential_mechanism_gumbel"]


def as_generators(rng: np.random.Generator | Sequence[np.random.Generator]) -> list[np.random.Generator]:
    """One generator or a sequence of them (one per seed row) as a list."""
    if isinstance(rng, np.random.Generator):
        return [rng]
    gens = list(rng)
    if not gens or not all(isinstance(g, np.random.Generator) for g in gens):
        raise ValueError("rng must be a numpy.random.Generator or a non-empty sequence of them")
    return gens


def normal_rows(gens: Sequence[np.random.Generator], shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals of shape ``(len(gens), *shape)``; row r comes from ``gens[r]`` only, so a
    run's numbers do not depend on how many other seeds share the batch."""
    return np.stack([g.standard_normal(shape) for g in gens])


class NormalBlocks:
    """Standard normals (times ``scale``) one step at a time, drawn ``block`` steps at once.

    A Generator fills an array in order, so ``next()`` returns exactly the numbers that one
    ``standard_normal(shape)`` call per step would (tested); drawing a block per call saves the
    per-call overhead that dominates for small ``shape``.  With several generators each step is
    ``(R, *shape)``, row r from ``gens[r]`` only.  Only for loops that draw nothing else from
    the same generators between steps (a block draws ahead).
    """

    def __init__(self, rng: np.random.Generator | Sequence[np.random.Generator],
                 shape: tuple[int, ...] | int, block: int | None = None, scale: float = 1.0):
        self._scale = check_nonnegative("scale", scale)
        self._single = isinstance(rng, np.random.Generator)
        self._gens = as_generators(rng)
        self._shape = (shape,) if isinstance(shape, int) else tuple(shape)
        size = max(1, math.prod(self._shape))
        # ~64k numbers (512 kB) per generator and block: large enough to amortise the call,
        # small enough to stay in cache.
        self._block = max(1, (1 << 16) // size) if block is None else check_int("block", block)
        self._buf = np.empty((0,))
        self._pos = 0

    def next(self) -> np.ndarray:
        """The next step's normals × scale, shape ``shape`` (one generator) or ``(R, *shape)``;
        a read-only use is expected (it is a view into the block)."""
        if self._pos == len(self._buf):
            shape = (self._block, *self._shape)
            self._buf = (self._gens[0].standard_normal(shape) if self._single
                         else np.stack([g.standard_normal(shape) for g in self._gens], axis=1))
            if self._scale != 1.0:
                self._buf *= self._scale
            self._pos = 0
        self._pos += 1
        return self._buf[self._pos - 1]


def clip_per_sample(grads: np.ndarray, clip_norm: float) -> np.ndarray:
    """Scale each per-sample gradient (last axis) to ℓ2 norm at most ``clip_norm``:
    g ↦ g · min(1, C/‖g‖)."""
    c = check_positive("clip_norm", clip_norm)
    g = np.asarray(grads, dtype=float)
    norms = np.linalg.norm(g, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):      # C/tiny = inf for a zero gradient: its factor is 1
        scale = np.minimum(1.0, c / np.maximum(norms, np.finfo(float).tiny))
    return g * scale


_TINY = np.finfo(float).tiny
_EPS = np.finfo(float).eps
# Squared row norms in one gufunc call (numpy ≥ 2); einsum on older numpy.
_sq_norms = getattr(np, "vecdot", None) or (lambda a, b: np.einsum("...i,...i->...", a, b))


def _radius(radius) -> float:
    # project_ball runs once per step of every inner loop: a plain finite float skips the
    # generic validator (same accepted values, same error otherwise).
    if type(radius) is float and 0.0 <= radius < math.inf:
        return radius
    return check_nonnegative("radius", radius)


def project_ball(w: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of each row of ``w`` onto the ball B(center, radius).

    Rows already inside are returned bit-for-bit (no rounding added); the returned array is
    ``w`` itself when every row is inside."""
    r = _radius(radius)
    if type(w) is not np.ndarray or w.dtype != np.float64:
        w = np.asarray(w, dtype=float)
    diff = w - center
    # Fast exit for the usual case (every row well inside): squared norms in any summation
    # order are within (d + 1)·u relative of the exact test's, so below r²(1 − 8d·u) the exact
    # test below cannot fail; near or beyond the boundary (or NaN) the exact test decides.
    # (A threshold that overflows to inf could pass rows whose squared norm also overflowed.)
    with np.errstate(over="ignore"):      # an overflow goes to the exact test, like the einsum
        sq = _sq_norms(diff, diff)
    threshold = r * r * (1.0 - 4.0 * diff.shape[-1] * _EPS)
    if sq.size and threshold < math.inf and sq.max() <= threshold:
        return w
    norms = np.sqrt(np.einsum("...i,...i->...", diff, diff))[..., None]
    inside = norms <= r
    if inside.all():
        return w
    return np.where(inside, w, center + diff * (r / np.maximum(norms, _TINY)))


def row_norms(x: np.ndarray) -> np.ndarray:
    """‖x‖ over the last axis; the same numbers as ``np.linalg.norm(x, axis=-1)`` (its own
    formula, sqrt(add.reduce(x·x))) without its Python-level dispatch, for per-step loops."""
    return np.sqrt(np.add.reduce(x * x, axis=-1))


# ---------------------------------------------------------------------------------------------
# Clipped least-squares DP-SGD step
# ---------------------------------------------------------------------------------------------
# The per-example gradient of ½(⟨x_i, w⟩ − y_i)² is r_i x_i with r_i = ⟨x_i, w⟩ − y_i: rank one,
# of norm |r_i|·‖x_i‖.  Clipping it to C multiplies r_i alone, by min(1, C/(|r_i|‖x_i‖)), so the
# clipped r is c_i = sign(r_i)·min(|r_i|, C/‖x_i‖) and the clipped sum is Xᵀc: two matrix-vector
# products per step and no (B, d) per-example tensor.  C/‖x_i‖ depends on the data only.


def least_squares_clip_limits(X: np.ndarray, clip_norm: float) -> np.ndarray:
    """C/‖x_i‖ per example (the largest |residual| its gradient keeps unclipped; inf where
    x_i = 0), over the last axis of ``X`` (…, B, d).  Data only: compute once per data set."""
    c = check_positive("clip_norm", clip_norm)
    X = np.asarray(X, dtype=float)
    norms = np.sqrt(np.einsum("...i,...i->...", X, X))
    return np.divide(c, norms, out=np.full(norms.shape, np.inf), where=norms > 0)


def clipped_least_squares_sum(X: np.ndarray, residuals: np.ndarray,
                              limits: np.ndarray) -> np.ndarray:
    """Σ_i clip_C(r_i x_i) over the example axis of ``X`` (…, B, d), with ``residuals`` r (…, B)
    and ``limits`` C/‖x_i‖ from :func:`least_squares_clip_limits`; shape (…, d).

    Equals summing the materialised per-example gradients after :func:`clip_per_sample` (tested
    to 1e-12); sensitivity of the sum: C (add/remove one example), 2C (replace one)."""
    c = np.minimum(np.abs(residuals), limits)
    np.copysign(c, residuals, out=c)
    if X.ndim == 2:
        return np.dot(c, X)
    return np.matmul(c[..., None, :], X)[..., 0, :]


def _shape(a) -> tuple:
    return a.shape if type(a) is np.ndarray else np.shape(a)


def _check_batch(w, X, y, limits, noise) -> None:
    # Runs once per step: plain attribute reads for arrays (the generic np.shape is what a list
    # or scalar gets); the same accepted inputs and messages either way.
    if not (isinstance(X, np.ndarray) and X.ndim >= 2):
        raise ValueError(f"X must be an array of shape (..., B, d), got {np.shape(X)}")
    lead, (B, d) = X.shape[:-2], X.shape[-2:]
    for name, arr, shape in (("w", w, (*lead, d)), ("y", y, (*lead, B)),
                             ("limits", limits, (*lead, B)), ("noise", noise, (*lead, d))):
        if _shape(arr) != shape:
            raise ValueError(f"{name} must have shape {shape} for X of shape {X.shape}, "
                             f"got {np.shape(arr)}")


_KERNELS = ("auto", "numpy", "fused")
_HAVE_NUMBA: bool | None = None       # found on first ask (find_spec, no import)


def fused_kernel_available() -> bool:
    """True when numba (the optional extra ``fast``) is importable, so ``kernel="fused"`` works
    and ``kernel="auto"`` uses it for float64 data.  Checked without importing numba."""
    global _HAVE_NUMBA
    if _HAVE_NUMBA is None:
        _HAVE_NUMBA = importlib.util.find_spec("numba") is not None
    return _HAVE_NUMBA


def _use_fused(kernel: str, X: np.ndarray) -> bool:
    if kernel == "numpy":
        return False
    if kernel == "fused":
        if not fused_kernel_available():
            raise ValueError("kernel='fused' needs numba (pip install 'dprates[fast]'); "
                             "allowed kernels without it: 'auto', 'numpy'")
        return True
    if kernel != "auto":
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}")
    # float64 only: on other dtypes the numpy path computes in that dtype and the kernel would not
    return X.dtype == np.float64 and fused_kernel_available()


def _fused_step():
    # numba's import and the kernel's compilation (or cache load) happen on first use only, so
    # importing this module stays cheap
    global _FUSED
    if _FUSED is None:
        from algorithms._fused import fused_linear_dpsgd_step
        _FUSED = fused_linear_dpsgd_step
    return _FUSED


_FUSED = None


def linear_dpsgd_step(w: np.ndarray, X: np.ndarray, y: np.ndarray, *, lr: float,
                      limits: np.ndarray, noise: np.ndarray, kernel: str = "auto") -> np.ndarray:
    """One clipped, noised DP-SGD step for least squares on the batch (X, y):
    w − lr·(Σ_i clip_C(x_i(⟨x_i, w⟩ − y_i)) + noise)/B.

    ``limits`` = :func:`least_squares_clip_limits` (X, C); ``noise`` is the already scaled
    Gaussian noise (std = noise multiplier × sensitivity of the sum), e.g. a
    :class:`NormalBlocks` step times the std.  Leading seed axes: ``w`` (R, d), ``X`` (R, B, d),
    ``y``, ``limits`` (R, B), ``noise`` (R, d).  The caller accounts for the privacy spent.

    ``kernel``: ``"numpy"`` — two float64 matrix-vector products over X (``np.dot``, BLAS gemv)
    and O(B + d) elementwise work; at B = 256, d = 1000 the products are ≈ 90% of the step.
    ``"fused"`` — one pass over X per group of rows, compiled with numba (extra ``fast``;
    :mod:`algorithms._fused`), ≈ 1.3× faster at B = 256, d = 100 and 1000, noise draw
    included (docs/performance.md).  ``"auto"`` (default) — fused for float64 X when numba is
    installed, else numpy.  The two agree to rounding (sums in a different order, ≈ 1e-15
    relative, tested to 1e-12), not bitwise: pass ``kernel="numpy"`` where results must not
    depend on whether numba is installed."""
    if not (type(lr) is float and 0.0 < lr < math.inf):    # the common case skips the validator
        lr = check_positive("lr", lr)
    _check_batch(w, X, y, limits, noise)
    if _use_fused(kernel, X):
        return _fused_step()(w, X, y, limits, noise, lr)
    if X.ndim == 2:
        r = np.dot(X, w)
    else:
        r = np.matmul(X, w[..., None])[..., 0]
    r -= y
    g = clipped_least_squares_sum(X, r, limits)
    g += noise
    g *= -lr / X.shape[-2]
    g += w
    return g


def gaussian_mechanism(rng: np.random.Generator | Sequence[np.random.Generator], value: np.ndarray,
                       sensitivity: float, noise_multiplier: float) -> np.ndarray:
    """``value + N(0, (noise_multiplier · sensitivity)² I)``; with several generators, ``value``
    has a leading seed axis and row r gets generator r's noise."""
    s = check_positive("sensitivity", sensitivity)
    z = check_positive("noise_multiplier", noise_multiplier)
    v = np.asarray(value, dtype=float)
    gens = as_generators(rng)
    if isinstance(rng, np.random.Generator):
        return v + z * s * rng.standard_normal(v.shape)
    if v.shape[0] != len(gens):
        raise ValueError(f"value has {v.shape[0]} rows but {len(gens)} generators were given")
    return v + z * s * normal_rows(gens, v.shape[1:])


def mean_gradient_sensitivity(lipschitz: float, n: int,
                              relation: NeighboringRelation = REPLACE_ONE) -> float:
    """ℓ2-sensitivity of the mean gradient (1/n) Σ_i ∇f(w; x_i) of L-Lipschitz losses.

    * replace-one (one x_i replaced by x_i'): ‖∇f(w;x_i) − ∇f(w;x_i')‖/n ≤ 2L/n;
    * add/remove-one with the normaliser n public (the sum changes by one term): L/n.
    """
    L = check_positive("lipschitz", lipschitz)
    n = check_int("n", n)
    if relation == REPLACE_ONE:
        return 2.0 * L / n
    if relation == ADD_OR_REMOVE_ONE:
        return L / n
    raise ValueError(f"relation must be REPLACE_ONE or ADD_OR_REMOVE_ONE, got {relation}")


# ---------------------------------------------------------------------------------------------
# Correlated noise ξ_t = std · (Z_t − λ Z_{t−1}),  Z_{−1} = 0
# ---------------------------------------------------------------------------------------------
# In matrix-mechanism form the noise vector is ξ = std · C⁻¹ Z with C⁻¹ lower bidiagonal
# (1 on the diagonal, −λ below), so C is lower-triangular Toeplitz with C[t, s] = λ^{t−s}.
# The mechanism releases C·G + std·Z, hence it is ONE Gaussian mechanism whose ℓ2-sensitivity is
# clip_norm × sens(C), where sens(C) is the largest ‖Σ_{t∈P} C[:, t]‖ over participation sets P.


def correlated_noise_matrix(lam: float, T: int) -> np.ndarray:
    """The strategy matrix C (T×T), C[t, s] = λ^{t−s} for t ≥ s, so that C⁻¹ has 1 and −λ."""
    lam = check_open_interval("lam", lam, -1.0, 1.0)
    T = check_int("T", T)
    idx = np.arange(T)
    e = idx[:, None] - idx[None, :]
    with np.errstate(invalid="ignore"):
        C = np.where(e >= 0, np.power(lam, np.maximum(e, 0), dtype=float), 0.0)
    return C


def correlated_noise(rng: np.random.Generator, T: int, shape: tuple[int, ...] | int, lam: float,
                     std: float) -> np.ndarray:
    """All T noise vectors ξ_t = std·(Z_t − λ Z_{t−1}) at once, shape ``(T, *shape)``."""
    T = check_int("T", T)
    lam = check_open_interval("lam", lam, -1.0, 1.0)
    std = check_nonnegative("std", std)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    Z = rng.standard_normal((T, *shape))
    xi = Z.copy()
    xi[1:] -= lam * Z[:-1]
    return std * xi


class CorrelatedNoiseStream:
    """Streaming form of :func:`correlated_noise`: ``next()`` returns ξ_t, storing only Z_{t−1}.

    Draws the same normals in the same order as :func:`correlated_noise`, so the two agree
    exactly for the same generator state.
    """

    def __init__(self, rng: np.random.Generator, shape: tuple[int, ...] | int, lam: float, std: float):
        self.rng = rng
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.lam = check_open_interval("lam", lam, -1.0, 1.0)
        self.std = check_nonnegative("std", std)
        self._prev = np.zeros(self.shape)

    def next(self) -> np.ndarray:
        z = self.rng.standard_normal(self.shape)
        out = self.std * (z - self.lam * self._prev)
        self._prev = z
        return out


def correlated_sensitivity(lam: float, T: int, participations: int = 1,
                           min_separation: int | None = None) -> float:
    """sens(C) of the λ-correlated-noise matrix mechanism, per unit of clip norm.

    Neighbouring relation: add/remove (or zero-out) of one example, which contributes a gradient
    of norm ≤ 1 (after clipping) at each of its ``participations`` steps, any two of them at least
    ``min_separation`` steps apart (default: ⌊T/participations⌋, i.e. one per epoch).

    * one participation, |λ| < 1: the longest column of C, sens² = (1 − λ^{2T})/(1 − λ²);
    * k participations, λ ∈ [0, 1): C is non-negative with non-increasing columns, so the worst
      case puts the example at steps 0, b, 2b, … and aligns its gradients:
      sens² = Σ_{t<T} (Σ_{j<k, jb≤t} λ^{t−jb})².
    * k > 1 with λ < 0 is refused: the closed form is not valid there (columns alternate in sign).
    """
    lam = check_open_interval("lam", lam, -1.0, 1.0)
    T = check_int("T", T)
    k = check_int("participations", participations)
    if k > T:
        raise ValueError(f"participations must be in [1, T={T}], got {k}")
    if k == 1:
        if lam == 0:
            return 1.0
        return math.sqrt((1.0 - lam ** (2 * T)) / (1.0 - lam ** 2))
    b = T // k if min_separation is None else check_int("min_separation", min_separation)
    if (k - 1) * b > T - 1:
        raise ValueError(f"min_separation must be in [1, {(T - 1) // (k - 1)}] for "
                         f"{k} participations in T={T} steps, got {b}")
    if lam < 0:
        raise ValueError("lam must be in [0, 1) for several participations: the closed form "
                         "needs non-negative, non-increasing Toeplitz coefficients")
    t = np.arange(T)
    col = np.zeros(T)
    for j in range(k):
        s = j * b
        col[s:] += lam ** (t[s:] - s) if lam > 0 else (t[s:] == s).astype(float)
    return float(np.linalg.norm(col))


def correlated_sensitivity_brute_force(lam: float, T: int, participations: int = 1,
                                       min_separation: int | None = None) -> float:
    """Brute-force sens(C) over every participation set (small T only), for tests.

    Enumerates all k-subsets of {0..T−1} with gaps ≥ b and all sign patterns of the (scalar,
    d = 1) gradient contributions, returning max ‖C u‖ with u supported on the set, |u_t| = 1.
    In d = 1 this is the exact sensitivity for any λ; for λ ≥ 0 it equals the d-dimensional one.
    """
    T = check_int("T", T)
    if T > 16:
        raise ValueError(f"T must be in [1, 16] for brute force, got {T}")
    k = check_int("participations", participations)
    b = (T // k if min_separation is None else min_separation) if k > 1 else 1
    C = correlated_noise_matrix(lam, T)
    best = 0.0
    for P in itertools.combinations(range(T), k):
        if any(P[i + 1] - P[i] < b for i in range(k - 1)):
            continue
        for signs in itertools.product((1.0, -1.0), repeat=k - 1):
            u = np.zeros(T)
            u[list(P)] = (1.0,) + signs
            best = max(best, float(np.linalg.norm(C @ u)))
    return best


# ---------------------------------------------------------------------------------------------
# Exponential mechanism
# ---------------------------------------------------------------------------------------------
# Selecting index i with probability ∝ exp(ε·u_i/(2Δ)), where Δ bounds |u_i(S) − u_i(S')| over
# neighbouring S, S' (same relation as Δ), is ε-DP (McSherry & Talwar 2007); by Bun & Steinke
# 2016, Prop. 1.4 it is then ε²/2-zCDP.


def exponential_mechanism_probabilities(utilities: np.ndarray, epsilon: float,
                                        sensitivity: float) -> np.ndarray:
    """p_i = exp(ε u_i/(2Δ)) / Σ_j exp(ε u_j/(2Δ)), computed by log-sum-exp (no overflow for
    huge ε, exact uniform for ε → 0)."""
    eps = check_positive("epsilon", epsilon)
    s = check_positive("sensitivity", sensitivity)
    u = check_finite_array("utilities", utilities, ndim=1)
    if u.size == 0:
        raise ValueError("utilities must be non-empty")
    logits = (eps / (2.0 * s)) * u
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()


def exponential_mechanism(rng: np.random.Generator, utilities: np.ndarray, epsilon: float,
                          sensitivity: float) -> int:
    """One draw of the exponential mechanism (inverse CDF of the log-sum-exp probabilities,
    one uniform from ``rng``)."""
    p = exponential_mechanism_probabilities(utilities, epsilon, sensitivity)
    i = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
    return min(i, p.size - 1)


def exponential_mechanism_gumbel(rng: np.random.Generator, utilities: np.ndarray, epsilon: float,
                                 sensitivity: float) -> int:
    """The same distribution by the Gumbel-max trick: argmax_i ε u_i/(2Δ) + G_i, G_i iid Gumbel
    drawn from ``rng`` in index order.  This form can be run online (one G_i per candidate, keep
    the running argmax), which is how Algorithm 3 selects among iterates without storing them."""
    eps = check_positive("epsilon", epsilon)
    s = check_positive("sensitivity", sensitivity)
    u = check_finite_array("utilities", utilities, ndim=1)
    if u.size == 0:
        raise ValueError("utilities must be non-empty")
    g = np.array([rng.gumbel() for _ in range(u.size)])
    return int(np.argmax((eps / (2.0 * s)) * u + g))
