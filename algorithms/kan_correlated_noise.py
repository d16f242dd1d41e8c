"""Model and algorithm of Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft, "Population
Risk Bounds for Kolmogorov–Arnold Networks Trained by DP-SGD with Correlated Noise"
(``kan_correlated_noise.txt``, paper id ``kan``).

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
* Privacy: three calibrations of κ side by side (:func:`calibrate`):
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

import dp_accounting as dpa
import numpy as np
from dp_accounting import rdp as dpa_rdp
from dp_accounting.pld import privacy_loss_mechanism as dpa_plm
from scipy import optimize as _opt
from scipy import special as _special
from scipy import stats as _stats

from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE, NeighboringRelation
from algorithms.primitives import as_generators, correlated_sensitivity
from algorithms.validation import (check_delta, check_finite_array, check_int, check_interval,
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
def check_lam(lam) -> float:
    """λ ∈ [0, 1) (Algorithm 1's input range)."""
    return check_interval("lam", lam, 0.0, 1.0)


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
    The paper fixes no knot grid (notes §1.2); p ≥ 4.
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
    h, _ = _knots(p)
    x = (np.asarray(v, dtype=float) + 1.0) / h
    # x ≥ 0 on [−1, 1], so truncation is floor; the clip keeps v = 1 on the last interval
    j = np.clip(x.astype(np.intp), 0, p - 4)
    f = x - j
    idx = j + np.arange(coef.shape[0]) * (p - 3)
    tab = _contract_table(coef, p) if table is None else table
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
        u = self._pre(W, H)
        s = np.tanh(u)
        hc, dhc = spline_contract(s, self.c, self.p, (0, 1), self._c_table)
        f = hc.sum(axis=-1) / math.sqrt(self.m)
        a = (1.0 - s * s) * dhc
        return f, a / math.sqrt(self.m * self.d)

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
# Batch samplers and their participation patterns
# =============================================================================================
SAMPLERS = ("fresh", "cyclic")


def batch_schedule(sampler: str, n: int, B: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of the mini-batches B_1..B_steps, shape (steps, B), drawn from ``rng`` only.

    * ``fresh`` (Algorithm 1, line 4): each B_t uniform of size B without replacement,
      independently over t (a fixed example is in B_t with probability B/n, i.i.d. over t).
    * ``cyclic``: one uniformly random permutation π (data independent), batches
      π[(t mod ⌊n/B⌋)B : +B]; the n mod B examples at the end of π never take part.  Any example
      takes part at most ⌈steps/⌊n/B⌋⌉ times, exactly ⌊n/B⌋ steps apart.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    n, B, steps = check_int("n", n), check_int("B", B), check_int("steps", steps, minimum=0)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    if sampler == "fresh":
        if B == n:
            return np.broadcast_to(np.arange(n), (steps, n)).copy()
        # argpartition of uniforms: one vectorised draw per step block, uniform B-subsets
        keys = rng.random((steps, n))
        return np.argpartition(keys, B - 1, axis=1)[:, :B]
    nb = n // B
    perm = rng.permutation(n)[: nb * B].reshape(nb, B)
    return perm[np.arange(steps) % nb]


def participation_pattern(sampler: str, n: int, B: int, steps: int) -> dict:
    """What the sampler allows one example: for ``cyclic``, at most ``participations`` steps with
    ``min_separation`` ⌊n/B⌋ between them (deterministic); for ``fresh``, a Binomial(steps, B/n)
    number of participations at arbitrary (possibly adjacent) steps, ``min_separation`` 1."""
    n, B, steps = check_int("n", n), check_int("B", B), check_int("steps", steps)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    if sampler == "cyclic":
        nb = n // B
        return {"participations": math.ceil(steps / nb), "min_separation": nb,
                "sampling_rate": B / n}
    if sampler == "fresh":
        return {"participations": steps, "min_separation": 1, "sampling_rate": B / n}
    raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")


# =============================================================================================
# Algorithm 1
# =============================================================================================
#: ``observe(t, released, noise_std)``: called once per release t = 1..T−1 with the released
#: noisy update v_t + (C_clip/B)ξ_t of every row, shape (R, m, dp) (what the privacy proof
#: covers: W_t is W_{t−1} − η·released, then projected), and each row's noise std C_clip·κ/B,
#: shape (R,).  The same contract as the KL algorithms' observers, indexed by step.
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
    rows = np.arange(R)[:, None]
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
            idx = sched[:, t - 1, :]                               # (R, B)
            Hb, yb, hb_norm = H[rows, idx], y[rows, idx], Hnorm[rows, idx]   # (R, B, dp), …
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
                observe(t, v + noise / eta, noise_std_r)
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


# =============================================================================================
# Privacy: the paper's calibrations (F.12, D.9) and a tight one
# =============================================================================================
CALIBRATIONS = ("thm5.1", "thm5.4", "tight")


def _lam_factor(lam: float, T: int) -> float:
    """(1 − λ^T)/(1 − λ) (= 1 at λ = 0, the λ → 0⁺ limit)."""
    return 1.0 if lam == 0 else (1.0 - lam ** T) / (1.0 - lam)


def f12_conditions(T: int, B: int, n: int, epsilon: float, delta: float) -> str | None:
    """Why F.12 does not apply (None if it does): it needs ε, δ ∈ (0, 1] and rT ≥ 3 ln(2/δ)."""
    r = B / n
    if epsilon > 1:
        return f"F.12 needs epsilon <= 1, got {epsilon}"
    if r * T < 3 * math.log(2 / delta):
        return f"F.12 needs (B/n)T = {r * T:.3g} >= 3 ln(2/δ) = {3 * math.log(2 / delta):.3g}"
    return None


def noise_multiplier_thm_f12(lam: float, T: int, B: int, n: int, epsilon: float, delta: float,
                             constant: float = 8.0) -> float:
    """Theorem F.12 (explicit Theorem 5.1, zero-out neighbours, unit clipping):
    κ² = 8((1−λ^T)/(1−λ))² (rT + √(3rT ln(2/δ))) ln(2.5/δ)/ε²,  r = B/n.
    ``constant`` = 2 gives what the proof supports (errata KAN-E20).  At λ = 0 this is the
    λ → 0⁺ limit (Theorem 5.1 states λ > 0)."""
    lam = check_lam(lam)
    T, B, n = check_int("T", T), check_int("B", B), check_int("n", n)
    eps, delta = check_positive("epsilon", epsilon), check_delta(delta)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    why = f12_conditions(T, B, n, eps, delta)
    if why:
        raise ValueError(why)
    rT = B * T / n
    tau = rT + math.sqrt(3 * rT * math.log(2 / delta))
    return math.sqrt(constant * _lam_factor(lam, T) ** 2 * tau * math.log(2.5 / delta)) / eps


def epsilon_thm_f12(noise_multiplier: float, lam: float, T: int, B: int, n: int, delta: float,
                    constant: float = 8.0) -> float:
    """F.12's formula solved for ε at a given κ (ε enters only as ε²).  This is a certified ε only
    where :func:`f12_conditions` holds (ε ≤ 1, rT ≥ 3 ln(2/δ)); callers report that separately."""
    kappa = check_positive("noise_multiplier", noise_multiplier)
    rT = B * T / n
    tau = rT + math.sqrt(3 * rT * math.log(2 / delta))
    return math.sqrt(constant * _lam_factor(lam, T) ** 2 * tau * math.log(2.5 / delta)) / kappa


def noise_multiplier_thm_d9(B: int, n: int, T: int, epsilon: float, delta: float) -> float:
    """Theorem D.9 (explicit Theorem 5.4, λ = 0, replace-one):
    κ² = 16B²T/(n²ε) + 32B²T log(1/δ)/(n²ε²)."""
    B, n, T = check_int("B", B), check_int("n", n), check_int("T", T)
    eps, delta = check_positive("epsilon", epsilon), check_delta(delta)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    a = B * B * T / (n * n)
    return math.sqrt(16 * a / eps + 32 * a * math.log(1 / delta) / eps ** 2)


def epsilon_thm_d9(noise_multiplier: float, B: int, n: int, T: int, delta: float) -> float:
    """D.9 solved for ε: κ²ε² − 16aε − 32a log(1/δ) = 0, a = B²T/n² (the positive root)."""
    k2 = check_positive("noise_multiplier", noise_multiplier) ** 2
    a = B * B * T / (n * n)
    L = math.log(1 / delta)
    return (16 * a + math.sqrt(256 * a * a + 128 * a * L * k2)) / (2 * k2)


def contiguous_block_sensitivity(lam: float, steps: int, tau: int) -> float:
    """max over participation sets of size ≤ τ of ‖C 1_P‖ (per unit clip norm), λ ≥ 0.

    C is lower-triangular Toeplitz with non-negative, non-increasing entries λ^{t−s}; the
    maximiser is the block of the first τ steps (checked against brute force in the tests; the
    notes' E11a), so this is ``correlated_sensitivity`` with separation 1."""
    tau = min(check_int("tau", tau), steps)
    if tau == 1:
        return correlated_sensitivity(lam, steps, 1)
    return correlated_sensitivity(lam, steps, tau, min_separation=1)


def _gaussian_delta(epsilon: float, z: float) -> float:
    """δ(ε) of one Gaussian mechanism, sensitivity 1, std z, in closed form (Balle & Wang 2018):
    Φ(1/(2z) − εz) − e^ε Φ(−1/(2z) − εz) — the formula dp-accounting's GaussianPrivacyLoss
    evaluates, here without its per-call scipy.stats overhead (≈ 1 ms a call)."""
    a, b = 0.5 / z, epsilon * z
    return float(_special.ndtr(a - b) - math.exp(epsilon + _special.log_ndtr(-a - b)))


#: Relative width of the bracket in which dp-accounting must confirm the closed-form root.
_CONFIRM_RTOL = 1e-10


def gaussian_epsilon(noise_multiplier: float, delta: float, *, confirm: bool = True) -> float:
    """ε(δ) of one Gaussian mechanism with std = ``noise_multiplier`` × sensitivity.

    The root of the closed-form δ(ε) (:func:`_gaussian_delta`) is found first; with ``confirm``
    (the default, used for every reported ε) dp-accounting's exact Gaussian privacy loss
    (``GaussianPrivacyLoss.get_delta_for_epsilon``) must then bracket its own root within
    relative 1e-10 of it — δ_dpa(ε(1 − 1e-10)) ≥ δ ≥ δ_dpa(ε(1 + 1e-10)) — and the upper end
    ε(1 + 1e-10) is returned (dp-accounting certifies it); if the bracket fails, dp-accounting's
    root is computed by Brent as before.  ``confirm=False`` returns the closed-form root alone
    (inside calibration searches only; their result is confirmed at the end)."""
    z = check_positive("noise_multiplier", noise_multiplier)
    delta = check_delta(delta)
    if _gaussian_delta(0.0, z) <= delta:
        eps = 0.0
    else:
        hi = 1.0
        while _gaussian_delta(hi, z) > delta:
            hi *= 2.0
        eps = float(_opt.brentq(lambda e: _gaussian_delta(e, z) - delta, 0.0, hi,
                                xtol=1e-14, rtol=1e-14))
    if not confirm:
        return eps
    pl = dpa_plm.GaussianPrivacyLoss(z, sensitivity=1.0)
    if eps == 0.0:
        if pl.get_delta_for_epsilon(0.0) <= delta:
            return 0.0
    else:
        lo, up = eps * (1.0 - _CONFIRM_RTOL), eps * (1.0 + _CONFIRM_RTOL)
        if pl.get_delta_for_epsilon(up) <= delta <= pl.get_delta_for_epsilon(lo):
            return up
    return _dpa_gaussian_epsilon(pl, delta)


def _dpa_gaussian_epsilon(pl, delta: float) -> float:
    """dp-accounting's root of δ(ε) = δ by Brent (the fallback of :func:`gaussian_epsilon`)."""
    if pl.get_delta_for_epsilon(0.0) <= delta:
        return 0.0
    hi = 1.0
    while pl.get_delta_for_epsilon(hi) > delta:
        hi *= 2.0
    return float(_opt.brentq(lambda e: pl.get_delta_for_epsilon(e) - delta, 0.0, hi,
                             xtol=1e-12, rtol=1e-12))


def gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """The noise multiplier z with gaussian_epsilon(z, δ) = ε (monotone in z; Brent)."""
    eps, delta = check_positive("epsilon", epsilon), check_delta(delta)
    f = lambda lz: gaussian_epsilon(math.exp(lz), delta, confirm=False) - eps   # noqa: E731
    lo, hi = -3.0, 3.0
    while f(lo) < 0:
        lo -= 2.0
    while f(hi) > 0:
        hi += 2.0
    return math.exp(_opt.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13))


def _fresh_tau_candidates(steps: int, r: float, delta: float) -> list[int]:
    # τ with binomial tail P(‖y‖₀ > τ) ≤ f·δ for a few f: trade tail mass against sensitivity
    taus = {int(_stats.binom.isf(f * delta, steps, r)) for f in (0.02, 0.1, 0.3, 0.5, 0.8)}
    return sorted(t for t in taus if 1 <= t <= steps)


def _fresh_tau_route(lam: float, steps: int, r: float, delta: float):
    """(τ, sensitivity_τ, δ − tail_τ) triples of the truncation route for fresh batches."""
    out = []
    for tau in _fresh_tau_candidates(steps, r, delta):
        tail = float(_stats.binom.sf(tau, steps, r))
        if tail < delta:
            out.append((tau, contiguous_block_sensitivity(lam, steps, tau), delta - tail))
    if r >= 1.0:   # full batch: participation in every step, no tail
        out = [(steps, contiguous_block_sensitivity(lam, steps, steps), delta)]
    return out


def _poisson_event(kappa: float, r: float, steps: int) -> dpa.DpEvent:
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(r, dpa.GaussianDpEvent(kappa)), steps)


def _wor_event(kappa: float, n: int, B: int, steps: int) -> dpa.DpEvent:
    # replace-one: the summed clipped gradient has sensitivity 2·C_clip, noise std C_clip·κ
    return dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(n, B, dpa.GaussianDpEvent(kappa / 2.0)), steps)


#: Rényi orders for the subsampled-Gaussian accountant.  Any set of orders gives a valid ε (the
#: conversion minimises over them); this grid is 6× shorter than dp-accounting's default, which
#: makes calibration affordable inside sweeps, and loses < 1% in ε on the suite's settings.
_RDP_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 14.0,
               16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 64.0)


def _rdp_epsilon(event: dpa.DpEvent, delta: float, relation: NeighboringRelation) -> float:
    acc = dpa_rdp.RdpAccountant(orders=_RDP_ORDERS, neighboring_relation=relation)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def tight_epsilon(noise_multiplier: float, *, lam: float, steps: int, n: int, B: int,
                  sampler: str, delta: float, relation: NeighboringRelation = ADD_OR_REMOVE_ONE,
                  amplification: bool = True, confirm: bool = True) -> float:
    """ε(δ) of Algorithm 1's ``steps`` releases with noise multiplier κ (noise std C_clip·κ on the
    summed clipped gradient), from dp-accounting, with the sensitivity the sampler really allows.

    The releases are the matrix mechanism C·X + C_clip κ Z (C[t,s] = λ^{t−s}); one example's
    clipped gradients enter X at its participation steps P, so the sensitivity is
    C_clip·max_P ‖C 1_P‖ (zero-out / add-remove; ×2 for replace-one).

    * ``cyclic``: P is deterministic, ⌈steps/⌊n/B⌋⌉ steps spaced ⌊n/B⌋ apart: one Gaussian
      mechanism with sensitivity ``correlated_sensitivity(λ, steps, k, ⌊n/B⌋)``, ε exact
      (dp-accounting's Gaussian privacy loss).  No amplification is used.
    * ``fresh``, λ = 0: each step is a subsampled Gaussian (participation Bernoulli(B/n), i.i.d.
      over steps; under zero-out this is exactly the Poisson pair); dp-accounting RDP, composed
      over the steps.  Replace-one: dp-accounting's sampling-without-replacement event (the D.9
      setting, Wang–Balle–Kasiviswanathan).
    * ``fresh``, λ > 0 (no amplification theorem for this mechanism in dp-accounting): the
      paper's own route (Thm F.8–F.12) made exact: with probability 1 − P(Bin(steps, r) > τ)
      the example takes part at most τ times, whose worst case is a contiguous block
      (:func:`contiguous_block_sensitivity`); by joint convexity of the hockey-stick divergence
      ε ≤ min_τ ε_Gauss(κ/sens_τ, δ − tail_τ).  This is the F.12 argument without its slack
      (exact binomial tail, exact sensitivity, exact Gaussian ε).  ``amplification=False`` uses
      this route at λ = 0 too (the λ → 0⁺ limit of the λ > 0 accountant).

    ``confirm=False`` skips dp-accounting's confirmation of each Gaussian ε
    (:func:`gaussian_epsilon`); only calibration searches use it.
    """
    kappa = check_positive("noise_multiplier", noise_multiplier)
    lam = check_lam(lam)
    steps, n, B = check_int("steps", steps), check_int("n", n), check_int("B", B)
    delta = check_delta(delta)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    mult = 2.0 if relation == REPLACE_ONE else 1.0
    r = B / n
    if sampler == "cyclic":
        pat = participation_pattern("cyclic", n, B, steps)
        k = pat["participations"]
        sens = (correlated_sensitivity(lam, steps, 1) if k == 1 else
                correlated_sensitivity(lam, steps, k, pat["min_separation"]))
        return gaussian_epsilon(kappa / (mult * sens), delta, confirm=confirm)
    if sampler != "fresh":
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    best = math.inf
    if lam == 0 and r < 1 and amplification:
        ev = _wor_event(kappa, n, B, steps) if relation == REPLACE_ONE else _poisson_event(kappa, r, steps)
        best = _rdp_epsilon(ev, delta, relation)
    for tau, sens, dprime in _fresh_tau_route(lam, steps, r, delta):
        best = min(best, gaussian_epsilon(kappa / (mult * sens), dprime, confirm=confirm))
    return best


def _log_kappa_bracket(f: Callable[[float], float], eps: float) -> tuple[float, float]:
    """[lo, hi] in log κ with f(lo) ≥ 0 ≥ f(hi) for f(log κ) = ε(κ) − target, decreasing.

    ε(κ) is close to ∝ 1/κ, so one probe at κ = 1 predicts log κ* ≈ log(ε(1)/target); the bracket
    is ±0.05 around that guess, widened geometrically until it brackets.  A narrow bracket halves
    the evaluations Brent needs (each is a dp-accounting RDP composition on the amplified route)."""
    e1 = f(0.0) + eps
    guess = math.log(e1 / eps) if e1 > 0 else -4.0
    lo, hi, w = guess - 0.05, guess + 0.05, 0.05
    while f(lo) < 0:
        w *= 4.0
        lo -= w
    w = 0.05
    while f(hi) > 0:
        w *= 4.0
        hi += w
    return lo, hi


def tight_noise_multiplier(epsilon: float, *, lam: float, steps: int, n: int, B: int, sampler: str,
                           delta: float, relation: NeighboringRelation = ADD_OR_REMOVE_ONE,
                           amplification: bool = True) -> float:
    """Smallest κ with :func:`tight_epsilon` ≤ ε (Brent on log κ; ε is decreasing in κ).

    The search uses the closed-form Gaussian ε (``confirm=False``, no dp-accounting call per
    step); the root is then stepped up until the dp-accounting-confirmed ε is ≤ the target."""
    eps = check_positive("epsilon", epsilon)
    kw = dict(lam=lam, steps=steps, n=n, B=B, sampler=sampler, delta=delta, relation=relation,
              amplification=amplification)
    f = lambda lk, confirm=False: tight_epsilon(math.exp(lk), **kw, confirm=confirm) - eps  # noqa: E731
    lo, hi = _log_kappa_bracket(f, eps)
    k = math.exp(_opt.brentq(f, lo, hi, xtol=1e-10, rtol=1e-10))
    # Brent's root may sit a hair below the target's κ, and the confirmed ε is the closed-form
    # one × (1 + 1e-10): step up until the confirmed ε(κ) ≤ target exactly
    while f(math.log(k), True) > 0:
        k *= 1.0 + 1e-10
    return k


@dataclass(frozen=True)
class KanPrivacy:
    """One run's privacy, three routes side by side for the κ actually used.

    ``epsilon_guarantee``: what the calibration that set κ certifies (F.12 solved for ε, D.9
    solved for ε, or the tight dp-accounting ε) — equal to ``epsilon_target`` by construction.
    ``epsilon_spent``: the tight dp-accounting ε of the noise and sensitivity actually used,
    under the calibration's neighbouring relation (zero-out for Thm 5.1 and tight, replace-one
    for Thm 5.4).  spent ≤ guarantee is the statement that the calibration is valid.
    """

    calibration: str
    sampler: str
    relation: str
    delta: float
    epsilon_target: float
    noise_multiplier: float
    epsilon_guarantee: float
    epsilon_spent: float
    epsilon_thm51: float           # F.12 as stated (zero-out), inf where its conditions fail
    epsilon_thm51_proof: float     # F.12 with the constant its proof supports (2)
    epsilon_thm54: float           # D.9 (replace-one)
    epsilon_tight: float           # dp-accounting, zero-out, this sampler
    epsilon_tight_replace: float   # dp-accounting, replace-one, this sampler
    steps: int

    def columns(self) -> dict:
        return {"epsilon_target": self.epsilon_target, "epsilon_guarantee": self.epsilon_guarantee,
                "epsilon_spent": self.epsilon_spent, "epsilon_paper_thm51": self.epsilon_thm51,
                "epsilon_paper_thm51_proof": self.epsilon_thm51_proof,
                "epsilon_paper_thm54": self.epsilon_thm54,
                "epsilon_tight_accounting": self.epsilon_tight,
                "epsilon_tight_replace_one": self.epsilon_tight_replace,
                "delta": self.delta, "noise_multiplier": self.noise_multiplier}


def calibrate(epsilon: float, delta: float, *, lam: float, T: int, n: int, B: int, sampler: str,
              calibration: str, amplification: bool = True, tight_relation: str = "zero-out"
              ) -> KanPrivacy:
    """κ for (ε, δ)-DP of Algorithm 1 with T iterates (T − 1 releases) under ``calibration``,
    and the ε every route certifies for that κ.

    ``thm5.1``: F.12 (λ ∈ [0, 1), λ = 0 as the λ → 0⁺ limit; needs ε ≤ 1, rT ≥ 3 ln(2/δ)).
    ``thm5.4``: D.9 (λ = 0 only).  ``tight``: :func:`tight_noise_multiplier` (zero-out).
    ``tight_relation`` ("zero-out" or "replace-one") is the neighbouring relation of the tight
    calibration (replace-one is the like-for-like comparison with Thm 5.4).
    The paper's formulas are evaluated with its T (conservative: the loop releases T − 1)."""
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    eps, delta, lam = check_positive("epsilon", epsilon), check_delta(delta), check_lam(lam)
    T, n, B = check_int("T", T, minimum=2), check_int("n", n), check_int("B", B)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    steps = T - 1
    kw = dict(lam=lam, steps=steps, n=n, B=B, sampler=sampler, delta=delta,
              amplification=amplification)
    if calibration == "thm5.1":
        kappa = noise_multiplier_thm_f12(lam, T, B, n, eps, delta)
        relation = ADD_OR_REMOVE_ONE
    elif calibration == "thm5.4":
        if lam != 0:
            raise ValueError(f"lam must be 0 for the Theorem 5.4 calibration, got {lam}")
        kappa = noise_multiplier_thm_d9(B, n, T, eps, delta)
        relation = REPLACE_ONE
    else:
        if tight_relation not in ("zero-out", "replace-one"):
            raise ValueError(f"tight_relation must be 'zero-out' or 'replace-one', got {tight_relation!r}")
        relation = REPLACE_ONE if tight_relation == "replace-one" else ADD_OR_REMOVE_ONE
        kappa = tight_noise_multiplier(eps, **kw, relation=relation)
    e51 = epsilon_thm_f12(kappa, lam, T, B, n, delta)
    e51p = epsilon_thm_f12(kappa, lam, T, B, n, delta, constant=2.0)
    e54 = epsilon_thm_d9(kappa, B, n, T, delta) if lam == 0 else math.inf
    et = tight_epsilon(kappa, **kw)
    etr = tight_epsilon(kappa, **kw, relation=REPLACE_ONE)
    guarantee = {"thm5.1": e51, "thm5.4": e54,
                 "tight": etr if relation == REPLACE_ONE else et}[calibration]
    spent = etr if relation == REPLACE_ONE else et
    return KanPrivacy(calibration, sampler, "replace-one" if relation == REPLACE_ONE else "zero-out",
                      delta, eps, kappa, guarantee, spent, e51, e51p, e54, et, etr, steps)
