"""Data-driven problems of the KL paper's experiments (Menart et al., Theorem 4 on data):
realizable p-th-power regression F(v) = mean |⟨a_i, v − v*⟩|^p with its KL constants from the
design's moments, sampled (:class:`PowerRegression`) or by one streamed pass over the data
(:class:`MomentPowerRegression`, n up to 1e8).
"""
from __future__ import annotations

import hashlib
import inspect
import math

import numpy as np

from algorithms.base import Problem
from algorithms.validation import check_finite_array, check_int, check_interval, check_positive
from empirical.papers.kl import moments as kl_moments
from empirical.papers.kl.problems_shapes import _huber_power, _huber_power_slope

__all__ = ["PowerRegression", "MomentPowerRegression", "regression_design"]


#: The declared data domain of the regression problems: ‖a_i‖ ≤ A_DOMAIN.  The constants the
#: algorithms are given (L0, L1: the sensitivity) come from it, never from the private data
#: (errata KL-E26: max‖a_i‖ made the guarantee data-dependent, 1.0000464ρ at n = 1e4).
A_DOMAIN = 1.0


def _set_regression_constants(prob, second_moment: np.ndarray, m_d1: float | None,
                              amax: float) -> None:
    """κ, γ, L0, L1, KL radius of p-th-power regression (see :class:`PowerRegression`), given
    mean a_i a_iᵀ, m = mean|a_i|^p when d = 1 (exact) and max‖a_i‖ (only checked against the
    domain).  L0, L1 and the KL radius use the domain bound ‖a‖ ≤ A_DOMAIN: per-example
    Lipschitz and smoothness constants must hold for every possible record, or the sensitivity
    2L0/n depends on the data.  For d > 1, m is replaced by Jensen's lower bound λ_min^{p/2}
    (a data statistic, but it enters only γ, the KL constant used by the analysis and the bound,
    not the privacy calibration)."""
    if amax > A_DOMAIN * (1 + 1e-12):
        raise ValueError(f"rows of A must have norm in [0, {A_DOMAIN}], got max {amax:.6g}")
    amax = A_DOMAIN
    p, B = prob.p, prob.B
    if m_d1 is not None:
        m = m_d1
    else:
        m = max(float(np.linalg.eigvalsh(second_moment)[0]), 0.0) ** (p / 2.0)
    if not m > 0:
        raise ValueError("the design must have full column rank (the KL constant is infinite)")
    prob.m = m
    prob.kappa = p / (p - 1.0)
    prob.gamma = 1.0 / (p * m ** (1.0 / p))
    prob.L0 = p * B ** (p - 1.0) * amax
    prob.L1 = p * (p - 1.0) * B ** (p - 2.0) * amax**2
    prob.kl_radius = B / max(amax, 1e-300)
    prob.F_star = 0.0
    prob.smooth = True


class PowerRegression(Problem):
    """Realizable p-th-power regression, f(w; a_i) = h(|⟨a_i, w − w*⟩|) = h(|⟨a_i, w⟩ − y_i|),
    y_i = ⟨a_i, w*⟩, with h the power r^p Huberized at B, ‖a_i‖ ≤ 1, p ≥ 2: the data-driven case.

    Inside {‖w − w*‖ ≤ B} every residual is ≤ B, F(w) = mean|⟨a_i, v⟩|^p with v = w − w* is
    p-homogeneous, so ⟨∇F, v⟩ = pF and ‖∇F‖ ≥ pF/‖v‖; with m = min_{‖u‖=1} mean|⟨a_i,u⟩|^p,
    ‖v‖ ≤ (F/m)^{1/p}, hence (γ, κ)-KL with κ = p/(p−1), γ = 1/(p m^{1/p}).  m is exact for
    d = 1 (mean|a_i|^p) and for d > 1 replaced by the lower bound λ_min(Σ̂)^{p/2} (Jensen, p ≥ 2),
    which keeps γ a valid KL constant.  L0 = pB^{p−1}max‖a_i‖, L1 = p(p−1)B^{p−2}max‖a_i‖².
    Residuals are computed as ⟨a_i, w − w*⟩, never as ⟨a_i, w⟩ − y_i, so the excess has no
    cancellation.  A gradient costs O(nd): use moderate n.
    """

    def __init__(self, A: np.ndarray, w_star: np.ndarray, p: float, *, B: float = 1.0):
        A = check_finite_array("A", A, ndim=2)
        super().__init__(*A.shape)
        self.A = A
        self.w_star = check_finite_array("w_star", w_star, ndim=1)
        if self.w_star.shape != (self.d,):
            raise ValueError(f"w_star must have shape ({self.d},), got {self.w_star.shape}")
        self.p = check_interval("p", p, 2.0, math.inf)
        self.B = check_positive("B", B)
        amax = float(np.max(np.linalg.norm(A, axis=1)))
        if amax > 1.0 + 1e-12:
            raise ValueError(f"rows of A must have norm <= 1, got max {amax:.6g}")
        m_d1 = float(np.mean(np.abs(A[:, 0]) ** self.p)) if self.d == 1 else None
        _set_regression_constants(self, A.T @ A / self.n, m_d1, amax)

    @classmethod
    def sample(cls, n: int, d: int, p: float, *, B: float = 1.0, data_seed: int = 0) -> "PowerRegression":
        """a_i uniform in the unit ball (:func:`regression_design`); w* = 0.3·(1, …, 1)/√d."""
        n, d = check_int("n", n), check_int("d", d)
        A = np.concatenate(list(regression_design(n, d, data_seed)))
        return cls(A, np.full(d, 0.3 / math.sqrt(d)), p, B=B)

    def _residuals(self, W):
        return (W - self.w_star) @ self.A.T                       # (R, n)

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − 0 = mean_i h(|⟨a_i, w − w*⟩|) (F* = 0: the data are realizable)."""
        return _huber_power(np.abs(self._residuals(np.atleast_2d(W))), self.p, self.B).mean(axis=1)

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W) - self.w_star, axis=1) <= self.kl_radius

    def start(self, r0: float | None = None) -> np.ndarray:
        r0 = 0.5 * self.kl_radius if r0 is None else check_positive("r0", r0)
        return self.w_star + r0 * np.full(self.d, 1.0 / math.sqrt(self.d))

    def _loss(self, W):
        return self.excess(W)

    def _gradient(self, W):
        r = self._residuals(W)
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s @ self.A / self.n

    def _per_sample_gradients(self, W, idx):
        r = self._residuals(W)[:, idx]
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s[:, :, None] * self.A[idx][None, :, :]


_DESIGN_CHUNK = 1 << 18


def regression_design(n: int, d: int, data_seed: int = 0, chunk: int = _DESIGN_CHUNK):
    """The design a_1..a_n (uniform in the unit ball of R^d) as a stream of row blocks.

    Block c holds rows c·chunk … and comes from its own generator
    ``default_rng([data_seed, n, d, 7, c])``, so one block can be regenerated alone and the
    stored (:class:`PowerRegression`) and streamed (:class:`MomentPowerRegression`) instances
    see the same rows.
    """
    n, d = check_int("n", n), check_int("d", d)
    for c, start in enumerate(range(0, n, chunk)):
        m = min(chunk, n - start)
        rng = np.random.default_rng([data_seed, n, d, 7, c])
        Z = rng.standard_normal((m, d))
        # ‖z‖ as np.linalg.norm computes it for a real array, sqrt(add.reduce(z·z)), without its
        # conj() copy: the same reduction on the same products
        Z /= np.sqrt(np.add.reduce(Z * Z, axis=1, keepdims=True))
        Z *= rng.random((m, 1)) ** (1.0 / d)
        yield Z


#: Designs with fewer rows are built in place (< 0.2 s), leaving no cache file behind tests.
MOMENT_CACHE_MIN_ROWS = 1 << 20


def _design_moments(n: int, d: int, p: float, data_seed: int) -> dict[str, np.ndarray]:
    """One pass over :func:`regression_design`: mean a_i a_iᵀ, max‖a_i‖² and, for p = 4, the
    fourth moments mean a_j a_k a_l a_m as the d² × d² matrix G[(j,k),(l,m)].

    G comes from the Gram matrix of the d(d+1)/2 distinct products a_j a_k (j ≤ k), expanded by
    index: 10 columns instead of 16 at d = 4, ≈ 2.5× fewer flops.  Each entry is the same sum
    of the same products as in the 16-column Gram (a_j a_k = a_k a_j exactly), so G is
    unchanged (bit-identical on the quick grid's n = 10⁷ design)."""
    ju, ku = np.triu_indices(d)
    S = np.zeros((d, d))
    Gu = np.zeros((ju.size, ju.size)) if p == 4.0 else None
    amax2 = 0.0
    pairs = list(zip(ju.tolist(), ku.tolist()))
    Q = np.empty((0, 0))
    for Z in regression_design(n, d, data_seed):
        amax2 = max(amax2, float(np.max(np.einsum("ij,ij->i", Z, Z))))
        S += Z.T @ Z
        if Gu is not None:
            # Q[i] = a_j a_k for the i-th pair: one multiply per pair straight into a reused
            # C-contiguous (pairs, rows) buffer, the array Q @ Q.T had before (no gathered copies)
            if Q.shape[1] != Z.shape[0]:
                Q = np.empty((len(pairs), Z.shape[0]))
            for i, (j, k) in enumerate(pairs):
                np.multiply(Z[:, j], Z[:, k], out=Q[i])
            Gu += Q @ Q.T
    out = {"M2": S / n, "amax2": np.array(amax2)}
    if Gu is not None:
        pos = np.empty((d, d), dtype=np.intp)
        pos[ju, ku] = pos[ku, ju] = np.arange(ju.size)
        flat = pos.reshape(-1)                             # (j, k) -> its distinct product
        out["G"] = (Gu / n)[np.ix_(flat, flat)]
    return out


#: What the cached moments depend on besides their inputs: the code that computes them.
_MOMENT_CODE = hashlib.sha256("".join(inspect.getsource(f) for f in (regression_design, _design_moments))
                              .encode()).hexdigest()

def design_moments(n: int, d: int, p: float, data_seed: int = 0
                   ) -> tuple[np.ndarray, np.ndarray | None, float]:
    """(mean a_i a_iᵀ, fourth-moment matrix or None for p = 2, max‖a_i‖) of the design of
    :func:`regression_design`, shared across processes through :mod:`empirical.papers.kl.moments`
    (the key holds every input and the source of the code that computes them)."""
    n, d = check_int("n", n), check_int("d", d)
    if p not in (2.0, 4.0):
        raise ValueError(f"p must be 2 or 4 for the moment form, got {p!r}")

    def build():
        return _design_moments(n, d, float(p), int(data_seed))

    if n < MOMENT_CACHE_MIN_ROWS:
        arrays = build()
    else:
        key = {"n": n, "d": d, "p": float(p), "data_seed": int(data_seed), "chunk": _DESIGN_CHUNK,
               "code": _MOMENT_CODE}
        arrays = kl_moments.cached_arrays("kl-design-moments", key, build)
    return arrays["M2"], arrays.get("G"), math.sqrt(float(arrays["amax2"]))


class MomentPowerRegression(Problem):
    """:class:`PowerRegression` for p ∈ {2, 4} with per-step cost independent of n.

    Same loss, data and constants, f(w; a_i) = h(|⟨a_i, w − w*⟩|).  While every residual is
    ≤ B, i.e. on {‖w − w*‖ ≤ B/max‖a_i‖} (the KL region), F is the polynomial
    F(v) = mean_i ⟨a_i, v⟩^p = ⟨M_p, v^{⊗p}⟩ with M_p = mean_i a_i^{⊗p}, v = w − w*, which one
    pass over the data computes (:func:`design_moments`, shared across processes).  Then
    F(v) = vᵀM_2v, ∇F = 2M_2v (p = 2) and F(v) = qᵀG q, ∇F = 4M_4[v, v, v, ·] with q = vec(vvᵀ)
    (p = 4): O(d^p) per row, whatever n, and no cancellation (F* = 0; G is a Gram matrix).
    Rows outside the region (rare: only far from w*) are evaluated exactly by streaming the
    design again (:func:`regression_design`); ``streamed_evals`` counts them.
    """

    def __init__(self, n: int, d: int, p: float, *, B: float = 1.0, data_seed: int = 0):
        super().__init__(n, d)
        if p not in (2.0, 4.0):
            raise ValueError(f"p must be 2 or 4 for the moment form, got {p!r}")
        self.p, self.B, self.data_seed = float(p), check_positive("B", B), int(data_seed)
        self.w_star = np.full(self.d, 0.3 / math.sqrt(self.d))
        self.M2, self.G, amax = design_moments(self.n, self.d, self.p, self.data_seed)
        m_d1 = float(self.M2[0, 0] if self.p == 2.0 else self.G[0, 0]) if self.d == 1 else None
        _set_regression_constants(self, self.M2, m_d1, amax)
        self.streamed_evals = 0

    # -- exact polynomial form on the KL region, streaming outside it ---------------------------
    def _poly(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.p == 2.0:
            t = V @ self.M2
            return np.einsum("ri,ri->r", t, V), 2.0 * t
        d = self.d
        q = (V[:, :, None] * V[:, None, :]).reshape(-1, d * d)
        t = q @ self.G                                     # M4[v, v, ·, ·], flattened
        F = np.einsum("rk,rk->r", t, q)
        grad = 4.0 * np.einsum("rkl,rk->rl", t.reshape(-1, d, d), V)
        return F, grad

    def _stream(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.streamed_evals += V.shape[0]
        F, grad = np.zeros(V.shape[0]), np.zeros_like(V)
        for Z in regression_design(self.n, self.d, self.data_seed):
            r = V @ Z.T
            F += _huber_power(np.abs(r), self.p, self.B).sum(axis=1)
            grad += (np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)) @ Z
        return F / self.n, grad / self.n

    def _eval(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        V = np.atleast_2d(W) - self.w_star
        F, grad = self._poly(V)
        out = np.sqrt(np.einsum("ri,ri->r", V, V)) > self.kl_radius
        if np.any(out):
            F[out], grad[out] = self._stream(V[out])
        return F, grad

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − 0 (F* = 0: the data are realizable)."""
        return self._eval(W)[0]

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W) - self.w_star, axis=1) <= self.kl_radius

    def start(self, r0: float | None = None) -> np.ndarray:
        r0 = 0.5 * self.kl_radius if r0 is None else check_positive("r0", r0)
        return self.w_star + r0 * np.full(self.d, 1.0 / math.sqrt(self.d))

    def _loss(self, W):
        return self._eval(W)[0]

    def _gradient(self, W):
        return self._eval(W)[1]

    def _per_sample_gradients(self, W, idx):
        A = np.concatenate(list(regression_design(self.n, self.d, self.data_seed)))[idx]
        r = (W - self.w_star) @ A.T
        s = np.sign(r) * _huber_power_slope(np.abs(r), self.p, self.B)
        return s[:, :, None] * A[None, :, :]
