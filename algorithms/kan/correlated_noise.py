"""Model and algorithm of Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft, "Population
Risk Bounds for Kolmogorov–Arnold Networks Trained by DP-SGD with Correlated Noise"
(paper id ``kan``).

* :class:`KAN` — the two-layer B-spline KAN of Section 3.1 (first-layer spline coefficients W
  trained, second-layer coefficients c fixed at initialisation), forward pass and per-example
  gradients in closed form (Lemma B.6: each per-example gradient is the rank-one matrix
  a(x) h(x)ᵀ, so clipping needs ‖a(x)‖·‖h(x)‖, never a materialised per-example tensor).
* :func:`dp_sgd_correlated` — Algorithm 1: mini-batch DP-SGD with λ-correlated Gaussian noise
  ξ_t = κ(Z_t − λZ_{t−1}), per-example clipping, projection onto B(W₀, R_*).  λ = 0 is
  independent-noise DP-SGD and κ = 0 non-private clipped projected SGD (the paper's special
  cases).  Two batch samplers: ``"fresh"`` (the paper's: a new uniform batch without replacement
  at every step, so an example can take part in adjacent steps) and ``"cyclic"`` (one fixed
  data-independent permutation, batches taken in order, so participations are ⌊n/B⌋ steps apart).
* Batch samplers: :mod:`algorithms.kan.sampling`; privacy: :mod:`algorithms.kan.privacy`
  (re-exported here).  Three calibrations of κ side by side (:func:`calibrate`):
  - ``"thm5.1"``: Theorem 5.1 in its explicit form F.12 (zero-out neighbours), as stated
    (constant 8; errata KAN-E20);
  - ``"thm5.4"``: Theorem 5.4 in its explicit form D.9 (λ = 0, replace-one neighbours);
  - ``"tight"``: the exact sensitivity of the matrix mechanism for the participation pattern the
    sampler really allows, and ε from dp-accounting (see :func:`tight_epsilon`).
  Whatever calibration sets κ, every run also reports the ε the *other* routes certify for the
  same κ, and ``epsilon_spent`` is always the tight dp-accounting ε of the noise and sensitivity
  actually used (under the calibration's neighbouring relation), so a calibration that
  under-noises shows up as spent > guarantee.

Notation: σ is the activation (tanh), never a noise level; the noise multiplier κ is
``noise_multiplier``; the per-coordinate noise std on the averaged gradient is C_clip·κ/B.
Arrays carry a leading seed-row axis R: row r draws its batches and noise from ``rng[r]`` only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable, Sequence

import numpy as np

from algorithms.kan.privacy import (CALIBRATIONS, KanPrivacy, calibrate,
                                    contiguous_block_sensitivity, epsilon_thm_d9, epsilon_thm_f12,
                                    f12_conditions, gaussian_epsilon, gaussian_noise_multiplier,
                                    noise_multiplier_thm_d9, noise_multiplier_thm_f12,
                                    tight_epsilon, tight_noise_multiplier)
from algorithms.kan.sampling import SAMPLERS, batch_schedule, check_lam, participation_pattern
from algorithms.primitives import as_generators
from algorithms.validation import (check_delta, check_finite_array, check_int,
                                   check_nonnegative, check_positive)

__all__ = ["bspline_basis", "spline_contract", "KAN", "logistic_loss", "logistic_derivative", "check_lam",
           "check_unit_ball", "SAMPLERS", "batch_schedule", "participation_pattern",
           "Observer", "KanRun", "dp_sgd_correlated", "CALIBRATIONS", "KanPrivacy",
           "noise_multiplier_thm_f12", "noise_multiplier_thm_d9", "epsilon_thm_f12",
           "epsilon_thm_d9", "f12_conditions", "contiguous_block_sensitivity",
           "gaussian_epsilon", "gaussian_noise_multiplier", "tight_epsilon",
           "tight_noise_multiplier", "calibrate", "G_delta"]


# =============================================================================================
# Validation
# =============================================================================================
def check_unit_ball(X) -> np.ndarray:
    """Inputs x_i with ‖x_i‖₂ ≤ 1 (the paper's 𝒳 ⊆ unit ball), shape (n, d)."""
    X = check_finite_array("X", X, ndim=2)
    norms = np.linalg.norm(X, axis=1)
    if X.size and norms.max() > 1.0 + 1e-12:
        raise ValueError(f"X must lie in the unit ball (‖x_i‖₂ in [0, 1]); "
                         f"max norm is {norms.max():.6g}")
    return X


# =============================================================================================
# Cubic B-spline basis (uniform knots on [−1, 1]; the paper fixes no knot grid)
# =============================================================================================
def _n3(u: np.ndarray, deriv: int) -> np.ndarray:
    """Cardinal cubic B-spline N₃ on [0, 4] (or its derivative), by symmetry N₃(u) = N₃(4 − u)."""
    right = u > 2.0
    w = np.where(right, 4.0 - u, u)                  # w ∈ (−∞, 2]
    inside = (w > 0.0)
    w1 = w < 1.0
    if deriv == 0:
        val = np.where(w1, w ** 3 / 6.0, (-3.0 * w ** 3 + 12.0 * w ** 2 - 12.0 * w + 4.0) / 6.0)
    elif deriv == 1:
        val = np.where(w1, 0.5 * w ** 2, -1.5 * w ** 2 + 4.0 * w - 2.0)
        val = np.where(right, -val, val)             # d/du N₃(4 − u) = −N₃'(4 − u)
    elif deriv == 2:
        val = np.where(w1, w, -3.0 * w + 4.0)
    else:
        raise ValueError(f"deriv must be in {{0, 1, 2}}, got {deriv}")
    return np.where(inside, val, 0.0)


@lru_cache(maxsize=None)
def _knots(p: int) -> tuple[float, np.ndarray]:
    h = 2.0 / (p - 3)
    t = -1.0 + (np.arange(p) - 3.0) * h              # t_1 = −1 − 3h, …, t_p = 1 − h
    return h, t


def bspline_basis(v: np.ndarray, p: int, deriv: int = 0) -> np.ndarray:
    """h(v) = [b_1(v), …, b_p(v)] (or its ``deriv``-th derivative), shape ``(*v.shape, p)``.

    Uniform cubic B-splines with spacing h = 2/(p − 3) and b_k(v) = N₃((v − t_k)/h),
    t_k = −1 + (k − 4)h: a partition of unity on [−1, 1] ⊇ range(tanh), so the interval
    I_b = [−1, 1] of Assumption 3.2 holds (B_b ≤ 2/3, B'_b = 1/(2h), B''_b = 1/h²).
    The paper fixes no knot grid (Section 3 leaves the basis open); p ≥ 4.
    """
    p = check_int("p", p, minimum=4)
    v = np.asarray(v, dtype=float)
    if v.size and np.all(np.abs(v) <= 1.0):
        # fast path on [−1, 1]: the four non-zero splines of each point, scattered
        return _local_basis(v, p, deriv)
    return _bspline_basis_reference(v, p, deriv)


def _bspline_basis_reference(v: np.ndarray, p: int, deriv: int = 0) -> np.ndarray:
    """h(v) from the cardinal spline N₃ at every knot (any v; the tests' reference)."""
    h, t = _knots(p)
    u = (np.asarray(v, dtype=float)[..., None] - t) / h
    return _n3(u, deriv) / h ** deriv


def _local_weights(f: np.ndarray, h: float, deriv: int) -> tuple[np.ndarray, ...]:
    g = 1.0 - f
    if deriv == 0:
        return (g ** 3 / 6, (3 * f ** 3 - 6 * f ** 2 + 4) / 6, (-3 * f ** 3 + 3 * f ** 2 + 3 * f + 1) / 6,
                f ** 3 / 6)
    if deriv == 1:
        return tuple(w / (6.0 * h) for w in (-3 * g * g, 9 * f * f - 12 * f, -9 * f * f + 6 * f + 3,
                                             3 * f * f))
    if deriv == 2:
        return tuple(w / (h * h) for w in (g, 3 * f - 2, 1 - 3 * f, f))
    raise ValueError(f"deriv must be in {{0, 1, 2}}, got {deriv}")


def _local_basis(v: np.ndarray, p: int, deriv: int) -> np.ndarray:
    h, _ = _knots(p)
    x = (v + 1.0) / h
    j = np.clip(np.floor(x), 0, p - 4).astype(np.intp)
    w = np.stack(_local_weights(x - j, h, deriv), axis=-1)
    out = np.zeros(v.shape + (p,))
    np.put_along_axis(out, j[..., None] + np.arange(4), w, axis=-1)
    return out


def _contract_table(coef: np.ndarray, p: int) -> np.ndarray:
    """Power-basis coefficients of Σ_q coef[j, i+q]·w_q(f) on each knot interval i of each row j:
    shape (4, m·(p−3)), entry [e, j·(p−3) + i] the coefficient of f^e (value, before ÷ h^deriv).
    From w_0..w_3 = (1−f)³/6, (3f³−6f²+4)/6, (−3f³+3f²+3f+1)/6, f³/6."""
    c = np.ascontiguousarray(coef, dtype=float)
    c0, c1, c2, c3 = (c[:, q:q + p - 3] for q in range(4))
    table = np.stack([(c0 + 4.0 * c1 + c2) / 6.0, (c2 - c0) / 2.0, (c0 - 2.0 * c1 + c2) / 2.0,
                      (3.0 * (c1 - c2) + c3 - c0) / 6.0])
    return table.reshape(4, -1)


def spline_contract(v: np.ndarray, coef: np.ndarray, p: int, derivs: tuple[int, ...] = (0,),
                    table: np.ndarray | None = None) -> list[np.ndarray]:
    """⟨coef_j, h^{(k)}(v_j)⟩ for v of shape (..., m) in [−1, 1] and coef of shape (m, p), for each
    k in ``derivs`` — the same numbers as ``einsum('...mk,mk->...m', bspline_basis(v, p, k), coef)``
    (to rounding) but from the four non-zero splines only.  On the knot interval
    [−1 + ih, −1 + (i+1)h] with local coordinate f ∈ [0, 1] the non-zero uniform cubic B-splines
    are b_i, …, b_{i+3}, so ⟨coef_j, h(v)⟩ is a cubic in f whose power-basis coefficients are
    tabulated once per call (:func:`_contract_table`, O(m·p)); each value is then one gather and
    Horner's rule (derivatives: the differentiated cubic ÷ h, ÷ h²).  This replaced the gather of
    four coefficients and the four B-spline weights with generic powers, 4–6× slower per call.
    ``table`` = ``_contract_table(coef, p)`` when the caller has it already (the model caches its
    own: c is fixed)."""
    v = np.asarray(v, dtype=float)
    tab = _contract_table(coef, p) if table is None else table
    if not (v.flags.c_contiguous and v.ndim and v.shape[-1] == coef.shape[0]):
        return _contract_textbook(v, tab, p, derivs)      # (also any broadcasting in v)
    # C-ordered input (Algorithm 1's steps): every array below is C-ordered too, so the in-place
    # form has the textbook form's floats *and* memory layout (callers' reductions sum in memory
    # order); it spares the temporaries, whose cache misses cost as much as the arithmetic
    h, _ = _knots(p)
    x = v + 1.0
    x /= h
    # x ≥ 0 on [−1, 1], so truncation is floor; the clip keeps v = 1 on the last interval
    idx = x.astype(np.intp)
    np.clip(idx, 0, p - 4, out=idx)
    x -= idx                                   # x is now f, the local coordinate
    idx += np.arange(coef.shape[0]) * (p - 3)
    t = [row.take(idx) for row in tab]
    # the last derivative asked for may overwrite the gathered coefficients
    return [_horner(k, t, x, h, in_place=i == len(derivs) - 1) for i, k in enumerate(derivs)]


def _contract_textbook(v: np.ndarray, tab: np.ndarray, p: int, derivs: tuple[int, ...]
                       ) -> list[np.ndarray]:
    """:func:`spline_contract` for inputs in any memory layout (e.g. einsum's transposed
    results): numpy picks each temporary's layout from its operands, so only these expressions
    reproduce the stored rows' layouts there."""
    h, _ = _knots(p)
    x = (v + 1.0) / h
    j = np.clip(x.astype(np.intp), 0, p - 4)
    f = x - j
    idx = j + np.arange(tab.shape[1] // (p - 3)) * (p - 3)
    t0, t1, t2, t3 = (row.take(idx) for row in tab)
    out = []
    for k in derivs:
        if k == 0:
            out.append(((t3 * f + t2) * f + t1) * f + t0)
        elif k == 1:
            out.append(((3.0 * t3) * f + 2.0 * t2) * f / h + t1 / h)
        elif k == 2:
            out.append(((6.0 * t3) * f + 2.0 * t2) / (h * h))
        else:
            raise ValueError(f"deriv must be in {{0, 1, 2}}, got {k}")
    return out


def _horner(k: int, t: list[np.ndarray], f: np.ndarray, h: float, in_place: bool) -> np.ndarray:
    """In place, the floats of :func:`_contract_textbook`'s k-th expression (C-ordered inputs)."""
    t0, t1, t2, t3 = t
    if k == 0:
        r = t3 * f
        r += t2
        r *= f
        r += t1
        r *= f
        r += t0
    elif k == 1:
        r = np.multiply(t3, 3.0, out=t3 if in_place else None)
        r *= f
        r += np.multiply(t2, 2.0, out=t2 if in_place else None)
        r *= f
        r /= h
        r += np.divide(t1, h, out=t1 if in_place else None)
    elif k == 2:
        r = np.multiply(t3, 6.0, out=t3 if in_place else None)
        r *= f
        r += np.multiply(t2, 2.0, out=t2 if in_place else None)
        r /= h * h
    else:
        raise ValueError(f"deriv must be in {{0, 1, 2}}, got {k}")
    return r


def logistic_loss(z: np.ndarray) -> np.ndarray:
    """ℓ(z) = log(1 + e^{−z}), computed without overflow."""
    return np.logaddexp(0.0, -np.asarray(z, dtype=float))


def logistic_derivative(z: np.ndarray) -> np.ndarray:
    """ℓ'(z) = −1/(1 + e^{z}) ∈ (−1, 0)."""
    z = np.asarray(z, dtype=float)
    return -0.5 * (1.0 - np.tanh(0.5 * z))


def G_delta(p: int, m: int, delta: float) -> float:
    """Uniform per-example gradient bound of eq. (5): G_δ = B'_σ B_b B'_b p (4√p + 2√(log(2/δ)/m)),
    with tanh (B'_σ = 1) and the uniform cubic basis above (B_b = 2/3, B'_b = 1/(2h))."""
    p = check_int("p", p, minimum=4)
    m = check_int("m", m)
    delta = check_delta(delta)
    h, _ = _knots(p)
    return 1.0 * (2.0 / 3.0) * (1.0 / (2.0 * h)) * p * (4 * math.sqrt(p) + 2 * math.sqrt(math.log(2 / delta) / m))


# =============================================================================================
# The two-layer KAN (Section 3.1, App. B)
# =============================================================================================
@dataclass(frozen=True)
class KAN:
    """f_W(x) = (1/√m) Σ_j Σ_k c_{j,k} b_k(σ(u_j)),  u_j = (1/√d) Σ_i Σ_k w_{i,j,k} b_k(x_i).

    Matrix form (App. B): h(x) = [h(x_1); …; h(x_d)] ∈ R^{dp}, W ∈ R^{m×dp} with rows w_jᵀ,
    u = W h(x)/√d, f_W(x) = (1/√m) Σ_j ⟨c_j, h(σ(u_j))⟩.  σ = tanh.  W₀ ~ N(0, I_{mdp}) and
    c ~ N(0, I_{mp}) (c fixed).  Lemma B.6:
        ∂f/∂w_j = (1/√(md)) σ'(u_j) ⟨c_j, h'(σ(u_j))⟩ h(x) =: a_j(x) h(x),
    so ∇_W f(x) = a(x) h(x)ᵀ (rank one) and ‖∇_W f(x)‖ = ‖a(x)‖·‖h(x)‖.
    """

    W0: np.ndarray      # (m, d·p)
    c: np.ndarray       # (m, p)
    d: int
    p: int

    @property
    def m(self) -> int:
        return self.W0.shape[0]

    @property
    def dim(self) -> int:
        """Number of trainable parameters m·d·p."""
        return self.W0.size

    @classmethod
    def init(cls, m: int, d: int, p: int, rng: np.random.Generator) -> "KAN":
        """Algorithm 1, line 2: W₀ ~ N(0, I_{mdp}), c ~ N(0, I_{mp})."""
        m, d, p = check_int("m", m), check_int("d", d), check_int("p", p, minimum=4)
        W0 = rng.standard_normal((m, d * p))
        c = rng.standard_normal((m, p))
        return cls(W0, c, d, p)

    @cached_property
    def _c_table(self) -> np.ndarray:
        # c is fixed at initialisation, so its power-basis table is built once per model
        return _contract_table(self.c, self.p)

    def features(self, X: np.ndarray) -> np.ndarray:
        """h(x) ∈ R^{dp} for each row of X (shape (n, d), inside the unit ball): (n, d·p)."""
        X = check_unit_ball(X)
        if X.shape[1] != self.d:
            raise ValueError(f"X must have d = {self.d} columns, got {X.shape[1]}")
        return bspline_basis(X, self.p).reshape(X.shape[0], self.d * self.p)

    def _pre(self, W: np.ndarray, H: np.ndarray) -> np.ndarray:
        # u = W h(x)/√d for every row r and example i: (R, N, m)
        if H.ndim == 2:
            return np.einsum("nq,rmq->rnm", H, W, optimize=True) / math.sqrt(self.d)
        return np.matmul(H, np.swapaxes(W, 1, 2)) / math.sqrt(self.d)

    def forward(self, W: np.ndarray, H: np.ndarray) -> np.ndarray:
        """f_W(x_i) for W of shape (R, m, dp) and features H of shape (N, dp) or (R, N, dp): (R, N)."""
        s = np.tanh(self._pre(W, H))
        (hc,) = spline_contract(s, self.c, self.p, (0,), self._c_table)
        return hc.sum(axis=-1) / math.sqrt(self.m)

    def forward_and_factors(self, W: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(f, a): f_W(x_i) of shape (R, N) and the left factors a(x_i) of shape (R, N, m), so that
        ∇_W f_W(x_i) = a(x_i) h(x_i)ᵀ (Lemma B.6)."""
        s = np.tanh(self._pre(W, H))
        hc, dhc = spline_contract(s, self.c, self.p, (0, 1), self._c_table)
        f = hc.sum(axis=-1) / math.sqrt(self.m)
        return f, self._left_factors(s, dhc)

    def factors(self, W: np.ndarray, H: np.ndarray) -> np.ndarray:
        """The left factors a(x_i) of :meth:`forward_and_factors` alone (the same floats), shape
        (R, N, m): the tangent features need no forward value."""
        s = np.tanh(self._pre(W, H))
        (dhc,) = spline_contract(s, self.c, self.p, (1,), self._c_table)
        return self._left_factors(s, dhc)

    def _left_factors(self, s: np.ndarray, dhc: np.ndarray) -> np.ndarray:
        # a = (1 − s²)·⟨c_j, h'(s_j)⟩/√(md).  In place only for C-ordered s (then every operand
        # is C-ordered): otherwise numpy lays the product out from both operands, and callers'
        # reductions over m sum in memory order, so only the expression keeps their last bits
        if not (s.flags.c_contiguous and dhc.flags.c_contiguous):
            return (1.0 - s * s) * dhc / math.sqrt(self.m * self.d)
        a = s * s
        np.subtract(1.0, a, out=a)
        a *= dhc
        a /= math.sqrt(self.m * self.d)
        return a

    def smoothness(self, W: np.ndarray, H: np.ndarray) -> np.ndarray:
        """¼‖∇_W f_W(x_i)‖² + ‖∇²_W f_W(x_i)‖₂ per row and example, shape (R, N): the quantity
        whose supremum over x (and W) the paper's β = C_{σ,b}p³ bounds (Lemma B.7 and the note
        after it), so the maximum over a sample is a lower estimate of β.  With
        g_j(u) = ⟨c_j, h(tanh u)⟩ the Hessian is block diagonal, block j = g_j''(u_j) h hᵀ/(d√m),
        so its norm is max_j |g_j''(u_j)|·‖h‖²/(d√m) (no matrix is formed)."""
        u = self._pre(W, H)
        s = np.tanh(u)
        _, d1, d2 = spline_contract(s, self.c, self.p, (0, 1, 2), self._c_table)
        ds = 1.0 - s * s
        g1 = ds * d1
        g2 = ds * ds * d2 - 2.0 * s * ds * d1
        hn2 = np.einsum("...i,...i->...", H, H)
        grad_sq = np.einsum("...m,...m->...", g1, g1) * hn2 / (self.m * self.d)
        hess = np.abs(g2).max(axis=-1) * hn2 / (self.d * math.sqrt(self.m))
        return 0.25 * grad_sq + hess

    def per_example_gradients(self, W: np.ndarray, H: np.ndarray) -> np.ndarray:
        """∇_W f_W(x_i) materialised, shape (R, N, m, dp).  For tests only (the algorithm never
        forms it)."""
        _, a = self.forward_and_factors(W, H)
        Hb = np.broadcast_to(H, (W.shape[0],) + H.shape[-2:])
        return a[..., :, None] * Hb[:, :, None, :]

    def loss(self, W: np.ndarray, H: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Empirical risk L_S(W) = (1/N) Σ_i ℓ(y_i f_W(x_i)) per row: (R,)."""
        return logistic_loss(y * self.forward(W, H)).mean(axis=-1)

    def loss_gradient(self, W: np.ndarray, H: np.ndarray, y: np.ndarray) -> np.ndarray:
        """∇L_S(W) (no clipping) per row, shape (R, m, dp)."""
        f, a = self.forward_and_factors(W, H)
        coef = logistic_derivative(y * f) * y / f.shape[-1]
        Hb = np.broadcast_to(H, (W.shape[0],) + H.shape[-2:])
        return np.matmul(np.swapaxes(a * coef[..., None], 1, 2), Hb)


# =============================================================================================
# Algorithm 1
# =============================================================================================
#: ``observe(t, released, noise_std)``: called once per release t = 1..T−1 with the released
#: noisy update v_t + (C_clip/B)ξ_t of every row, shape (R, m, dp) (what the privacy proof
#: covers: W_t is W_{t−1} − η·released, then projected), and each row's noise std C_clip·κ/B,
#: shape (R,).  The same contract as the KL algorithms' observers, indexed by step.  An observer
#: with a true attribute ``measures_noise`` is also passed ``clean=`` v_t (the update without its
#: noise), so that it can measure the noise (C_clip/B)ξ_t (:mod:`algorithms.noise_meter`).
Observer = Callable[[int, np.ndarray, np.ndarray], None]

@dataclass
class KanRun:
    """What one call of :func:`dp_sgd_correlated` measured, one entry per row.

    ``avg_train_loss`` is the optimisation risk (1/T)Σ_{t<T} L_S(W_t) and ``avg_test_loss`` the
    held-out estimate of the population risk (1/T)Σ_{t<T} L(W_t), both averaged over the
    evaluated iterates t ∈ ``eval_steps`` (every iterate when ``eval_every`` = 1).
    """

    W: np.ndarray                   # (R, m, dp) last iterate W_{T−1}
    eval_steps: np.ndarray          # iterates at which losses were evaluated
    train_curve: np.ndarray         # (R, len(eval_steps))
    test_curve: np.ndarray | None   # (R, len(eval_steps)) or None
    avg_train_loss: np.ndarray      # (R,)
    avg_test_loss: np.ndarray | None
    test_loss_se: np.ndarray | None  # standard error of the test estimate at the last iterate
    max_drift: np.ndarray           # max_t ‖W_t − W₀‖
    final_drift_sq: np.ndarray      # ‖W_{T−1} − W₀‖²
    projection_active: np.ndarray   # fraction of steps where Π_K moved the iterate
    clip_fraction: np.ndarray       # fraction of per-example gradients that were clipped
    params: dict = field(default_factory=dict)


def _row_gather(a: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """(idx, flat_idx) ↦ a[rows, idx] for a of shape (R, n, …) and batches idx of shape (R, B),
    flat_idx = idx + r·n: one ``take`` on a flattened view, the same elements as the fancy
    index (which costs ≈ 4× as much); an ``a`` broadcast over rows is read from its one copy."""
    if a.strides[0] == 0:
        base = a[0]
        return lambda idx, fidx: base.take(idx, axis=0)
    flat = a.reshape((-1,) + a.shape[2:])
    return lambda idx, fidx: flat.take(fidx, axis=0)


def dp_sgd_correlated(model: KAN, H: np.ndarray, y: np.ndarray, *, T: int, eta: float, B: int,
                      C_clip: float, lam: float, noise_multiplier: float, R_star: float,
                      rng: np.random.Generator | Sequence[np.random.Generator],
                      sampler: str = "fresh", rows_per_seed: int = 1,
                      H_test: np.ndarray | None = None, y_test: np.ndarray | None = None,
                      eval_every: int = 1, eval_subsample: int | None = None,
                      observe: Observer | None = None) -> KanRun:
    """Algorithm 1 (mini-batch DP-SGD with correlated Gaussian noise, DP-λCGD).

    W₀ and c are the model's.  Z₀ = 0; for t = 1..T−1:
        B_t ~ sampler;  g̃_{t,i} = g_{t,i} min{1, C_clip/‖g_{t,i}‖},  g_{t,i} = ∇ℓ(y_i f_{W_{t−1}}(x_i));
        v_t = (1/B) Σ_{i∈B_t} g̃_{t,i};  ξ_t = κ(Z_t − λZ_{t−1}),  Z_t ~ N(0, I_{mdp});
        W_t = Π_{B(W₀, R_*)}(W_{t−1} − η(v_t + (C_clip/B) ξ_t)).
    Returns the losses of W_0..W_{T−1} (the iterates the theorems average).

    ``H`` holds the training features h(x_i): (n, dp) shared by all rows, or (R·k, n, dp) with
    k = ``rows_per_seed`` data sets per generator.  Rows r·k..r·k+k−1 share generator r's batches
    and noise (the coupled runs of Theorem C.22 on S and its neighbours S^{(i)}); ``y`` likewise.
    ``lam`` and ``noise_multiplier`` may be arrays of length k: row r·k + j then uses λ_j, κ_j
    with generator r's batches and Z (paired comparisons at common random numbers).
    ``eval_subsample`` = N evaluates L_S on the first N examples of each S only (S is i.i.d., so
    this is an unbiased estimate of L_S; paired rows share it), to keep large-n sweeps cheap.
    ``R_star = inf`` disables the projection (the unprojected auxiliary trajectory W̃ of the
    proof).  Per-example gradient norms come from the rank-one structure
    ‖∇ℓ‖ = |ℓ'|·‖a(x)‖·‖h(x)‖, so no per-example tensor is formed: the cost per step is
    O(R·B·m·(d + p)·p).
    ``observe`` (optional :data:`Observer`) sees each step's released noisy update, so audits
    read exactly what the algorithm releases instead of reconstructing it from the iterates.
    """
    gens = as_generators(rng)
    T = check_int("T", T, minimum=1)
    eta = check_positive("eta", eta)
    C_clip = check_positive("C_clip", C_clip)
    k = check_int("rows_per_seed", rows_per_seed)
    # λ and κ may differ between the k rows of one generator (paired runs: same batches, same Z)
    lam_rows = np.broadcast_to(np.asarray(lam, dtype=float), (k,))
    kap_rows = np.broadcast_to(np.asarray(noise_multiplier, dtype=float), (k,))
    for v in lam_rows:
        check_lam(float(v))
    for v in kap_rows:
        check_nonnegative("noise_multiplier", float(v))
    if not (isinstance(R_star, (int, float)) and R_star > 0):
        raise ValueError(f"R_star must be in (0, inf], got {R_star!r}")
    eval_every = check_int("eval_every", eval_every)
    H = np.asarray(H, dtype=float)
    y = np.asarray(y, dtype=float)
    R = len(gens) * k
    if H.ndim == 2:
        H = np.broadcast_to(H, (R,) + H.shape)
        y = np.broadcast_to(y, (R,) + y.shape)
    if H.ndim != 3 or H.shape[0] != R or H.shape[2] != model.d * model.p:
        raise ValueError(f"H must have shape (n, {model.d * model.p}) or ({R}, n, {model.d * model.p}), "
                         f"got {H.shape}")
    if y.shape != H.shape[:2] or not np.all(np.abs(y) == 1):
        raise ValueError("y must hold labels in {-1, +1}, one per row of H")
    n = H.shape[1]
    B = check_int("B", B)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    steps = T - 1
    m, dp = model.m, model.dim // model.m
    W0 = model.W0
    W = np.broadcast_to(W0, (R, m, dp)).copy()
    # per-row data-independent randomness: batches (all at once) then the noise stream
    sched = np.stack([batch_schedule(sampler, n, B, steps, g) for g in gens])   # (S, steps, B)
    sched = np.repeat(sched, k, axis=0)
    full_batch = sampler == "fresh" and B == n
    Hnorm = np.linalg.norm(H, axis=2)                                           # ‖h(x_i)‖
    take_H, take_y, take_norm = (_row_gather(a) for a in (H, y, Hnorm))
    flat_sched = sched + (np.arange(R) * n)[:, None, None]      # row r's examples at r·n + i
    z_prev = np.zeros((R, m, dp))
    noisy = bool(np.any(kap_rows > 0))
    lam_r = np.tile(lam_rows, len(gens))[:, None, None]           # per row (seed-major)
    scale_r = np.tile(eta * C_clip * kap_rows / B, len(gens))[:, None, None]
    noise_std_r = np.tile(C_clip * kap_rows / B, len(gens))
    eval_steps = sorted(set(range(0, T, eval_every)) | {T - 1})
    train_curve, test_curve = [], []
    max_drift = np.zeros(R)
    proj_active = 0.0 * np.zeros(R)
    clipped = np.zeros(R)

    ne = n if eval_subsample is None else min(n, check_int("eval_subsample", eval_subsample))
    H_eval, y_eval = H[:, :ne], y[:, :ne]

    # full batch: step t's forward pass over all of S at W_{t−1} already gives L_S(W_{t−1}), so an
    # evaluated iterate's training loss is read there (pending) instead of a second forward pass
    reuse_forward = full_batch

    def evaluate(Wc: np.ndarray, t: int) -> bool:
        if H_test is not None:
            test_curve.append(model.loss(Wc, H_test, y_test))
        if reuse_forward and t < T - 1:
            return True
        train_curve.append(model.loss(Wc, H_eval, y_eval))
        return False

    pending = evaluate(W, 0)
    for t in range(1, T):
        if full_batch:
            # the batch is every example in order: read H in place instead of copying it
            Hb, yb, hb_norm = H, y, Hnorm
        else:
            idx, fidx = sched[:, t - 1, :], flat_sched[:, t - 1, :]     # (R, B)
            Hb, yb, hb_norm = take_H(idx, fidx), take_y(idx, fidx), take_norm(idx, fidx)
        f, a = model.forward_and_factors(W, Hb)
        if pending:
            train_curve.append(logistic_loss(y_eval * f[:, :ne]).mean(axis=-1))
            pending = False
        lp = logistic_derivative(yb * f) * yb                      # ∇ℓ = ℓ'(yf)·y·a hᵀ
        gnorm = np.abs(lp) * np.linalg.norm(a, axis=2) * hb_norm
        scale = np.minimum(1.0, C_clip / np.maximum(gnorm, 1e-300))
        clipped += (gnorm > C_clip).mean(axis=1)
        v = np.matmul(np.swapaxes(a * (lp * scale / B)[..., None], 1, 2), Hb)   # (R, m, dp)
        step = eta * v
        if noisy:
            z = np.repeat(np.stack([g.standard_normal((m, dp)) for g in gens]), k, axis=0)
            noise = scale_r * (z - lam_r * z_prev)
            step = step + noise
            if observe is not None:
                observe(t, v + noise / eta, noise_std_r,
                        **({"clean": v} if getattr(observe, "measures_noise", False) else {}))
            z_prev = z
        elif observe is not None:
            observe(t, v.copy(), noise_std_r)
        W = W - step
        diff = W - W0
        dn = np.sqrt(np.einsum("rij,rij->r", diff, diff))
        if math.isfinite(R_star):
            out = dn > R_star
            if out.any():
                W[out] = W0 + diff[out] * (R_star / dn[out])[:, None, None]
                proj_active += out
                dn = np.minimum(dn, R_star)
        max_drift = np.maximum(max_drift, dn)
        if t in eval_steps:
            pending = evaluate(W, t)
    train = np.stack(train_curve, axis=1)
    test = np.stack(test_curve, axis=1) if test_curve else None
    se = None
    if H_test is not None:
        per = logistic_loss(y_test * model.forward(W, H_test))
        se = per.std(axis=-1, ddof=1) / math.sqrt(per.shape[-1])
    diff = W - W0
    return KanRun(W=W, eval_steps=np.asarray(eval_steps), train_curve=train, test_curve=test,
                  avg_train_loss=train.mean(axis=1),
                  avg_test_loss=None if test is None else test.mean(axis=1), test_loss_se=se,
                  max_drift=max_drift, final_drift_sq=np.einsum("rij,rij->r", diff, diff),
                  projection_active=proj_active / max(steps, 1),
                  clip_fraction=clipped / max(steps, 1),
                  params={"T": T, "eta": eta, "B": B, "C_clip": C_clip, "lam": np.tile(lam_rows, len(gens)),
                          "noise_multiplier": np.tile(kap_rows, len(gens)), "R_star": R_star,
                          "sampler": sampler, "noise_std": np.tile(C_clip * kap_rows / B, len(gens)),
                          "releases": steps, "eval_subsample": ne})
