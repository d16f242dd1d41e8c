"""The KAN paper's problem and shared run machinery (Wang et al.): a data generator with a
guaranteed NTK margin (Assumption 3.3), its held-out risk, and the columns every run of
Algorithm 1 (``algorithms.kan.correlated_noise``) stores.

Problem ("NTK teacher with a hard margin", Assumption 3.3)
---------------------------------------------------------
Draw the KAN's initialisation (W₀, c) first.  Its tangent features at initialisation are
φ(x) = ∇_W f_{W₀}(x) = a₀(x) h(x)ᵀ (rank one).  The teacher is the unit vector
u = Σ_k α_k φ(z_k)/‖Σ_k α_k φ(z_k)‖ over K anchors z_k, and the score of x is s(x) = ⟨φ(x), u⟩
(computed from the rank-one factors: ⟨φ(x), φ(z)⟩ = ⟨a₀(x), a₀(z)⟩⟨h(x), h(z)⟩).  Inputs are
x ~ Unif([−1, 1]^d)/√d (so ‖x‖ ≤ 1), labels y = sign s(x), and candidates with |s(x)| < γ₀ are
rejected.  Then y_i⟨φ(x_i), u⟩ = |s(x_i)| ≥ γ₀ for every sample of every size: Assumption 3.3
holds with γ ≥ γ₀, so γ is a knob.  γ₀ is the ``margin_quantile`` quantile of |s| over a fixed
reference sample of the instance, and the acceptance rate is 1 − that quantile.  The distribution
depends on the initialisation, which is legitimate conditionally on it (the theorems hold
with probability over the init, for the init drawn).

:func:`estimate_margin` estimates γ for any data set (the hard-margin SVM in tangent features by
Frank–Wolfe on the dual: a certified lower bound from a feasible unit u and an upper bound from
the dual value).  Population risk is the logistic loss on a held-out sample from the same
distribution, with its standard error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from algorithms.kan.correlated_noise import KAN, check_unit_ball
from algorithms.validation import check_int, check_open_interval

__all__ = ["NTKTeacher", "make_instance", "estimate_margin", "tangent_factors"]


def tangent_factors(model: KAN, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a₀, h): the rank-one factors of the tangent features φ(x_i) = a₀(x_i) h(x_i)ᵀ at W₀,
    shapes (n, m) and (n, dp)."""
    H = model.features(X)
    return model.factors(model.W0[None], H)[0], H


@dataclass(frozen=True)
class NTKTeacher:
    """The distribution P of G1 for one KAN initialisation (see the module docstring)."""

    model: KAN
    anchor_a: np.ndarray     # (K', m) anchors and reference draws
    anchor_h: np.ndarray     # (K', dp)
    alpha: np.ndarray        # (K',) weights: u = Σ α_k φ(z_k)/‖·‖
    u_norm: float            # ‖Σ_k α_k φ(z_k)‖
    gamma0: float            # guaranteed margin
    acceptance: float        # fraction of candidates kept

    @property
    def d(self) -> int:
        return self.model.d

    def score(self, X: np.ndarray) -> np.ndarray:
        """s(x) = ⟨φ(x), u⟩ for each row of X."""
        a, H = tangent_factors(self.model, X)
        # Σ_k α_k⟨a(x), a_k⟩⟨h(x), h_k⟩ = a(x)ᵀ M h(x) with M = Σ_k α_k a_k h_kᵀ (m × dp)
        M = (self.anchor_a * self.alpha[:, None]).T @ self.anchor_h
        return np.einsum("nm,mq,nq->n", a, M, H, optimize=True) / self.u_norm

    def _candidates(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, (size, self.d)) / math.sqrt(self.d)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n i.i.d. draws (X, y) from P (rejection sampling, candidates from ``rng``)."""
        n = check_int("n", n)
        xs, ys, have = [], [], 0
        while have < n:
            want = int(1.2 * (n - have) / self.acceptance) + 16
            X = self._candidates(rng, want)
            s = self.score(X)
            keep = np.abs(s) >= self.gamma0
            xs.append(X[keep])
            ys.append(np.sign(s[keep]))
            have += int(keep.sum())
        return np.concatenate(xs)[:n], np.concatenate(ys)[:n]


@lru_cache(maxsize=16)
def make_instance(m: int, d: int, p: int, margin_quantile: float, seed: int = 0,
                  anchors: int = 20) -> NTKTeacher:
    """The KAN initialisation and teacher of one instance (cached per process).

    ``seed`` fixes W₀, c, the anchors and the reference sample that sets
    γ₀ = quantile_q |s(x)| over 20 000 candidates."""
    m, d, p = check_int("m", m), check_int("d", d), check_int("p", p, minimum=4)
    q = check_open_interval("margin_quantile", margin_quantile, 0.0, 1.0)
    rng = np.random.default_rng([int(seed), m, d, p, 7])
    model = KAN.init(m, d, p, rng)
    # Tangent kernels at init are mostly positive (h ≥ 0), so Σ α_k φ(z_k) alone labels almost
    # everything alike.  The teacher is therefore v − (⟨v, φ̄⟩/‖φ̄‖²) φ̄, v = Σ_k α_k φ(z_k), with
    # φ̄ the mean tangent feature of 256 reference draws: orthogonal to the mean, so the labels
    # are balanced, and still a combination of tangent features (no bias term, as Assumption 3.3
    # has none).
    Z = rng.uniform(-1.0, 1.0, (anchors, d)) / math.sqrt(d)
    Zr = rng.uniform(-1.0, 1.0, (256, d)) / math.sqrt(d)
    a, H = tangent_factors(model, np.vstack([Z, Zr]))
    G = (a @ a.T) * (H @ H.T)
    alpha = np.concatenate([rng.standard_normal(anchors), np.zeros(256)])
    mean_w = np.concatenate([np.zeros(anchors), np.full(256, 1.0 / 256)])
    c = float(alpha @ G @ mean_w) / float(mean_w @ G @ mean_w)
    alpha = alpha - c * mean_w
    u_norm = float(math.sqrt(alpha @ G @ alpha))
    proto = NTKTeacher(model, a, H, alpha, u_norm, 0.0, 1.0)
    ref = np.abs(proto.score(proto._candidates(rng, 20000)))
    gamma0 = float(np.quantile(ref, q))
    return NTKTeacher(model, a, H, alpha, u_norm, gamma0, float(np.mean(ref >= gamma0)))


def estimate_margin(model: KAN, X: np.ndarray, y: np.ndarray, iters: int = 2000,
                    tol: float = 1e-3) -> tuple[float, float]:
    """(lower, upper) bounds on the NTK margin γ of (X, y) at W₀ (Assumption 3.3):
    γ = max_{‖u‖=1} min_i y_i⟨φ(x_i), u⟩ = min_{α ∈ simplex} ‖Σ_i α_i y_i φ(x_i)‖ (hard-margin
    SVM duality, for separable data).  Frank–Wolfe on the dual over the n×n Gram matrix
    K_ij = y_i y_j⟨a_i, a_j⟩⟨h_i, h_j⟩: ‖Σα y φ‖ at any α is an upper bound, and the unit
    u = Σα y φ/‖·‖ certifies the lower bound min_i y_i⟨φ_i, u⟩.  Stops when they agree to ``tol``
    (relative)."""
    X = check_unit_ball(X)
    y = np.asarray(y, dtype=float)
    a, H = tangent_factors(model, X)
    K = (a @ a.T) * (H @ H.T) * np.outer(y, y)
    n = K.shape[0]
    alpha = np.full(n, 1.0 / n)
    Ka = K @ alpha
    lo, hi = -math.inf, math.inf
    for _ in range(iters):
        q = float(alpha @ Ka)
        hi = min(hi, math.sqrt(max(q, 0.0)))
        if q > 0:
            lo = max(lo, float(Ka.min()) / math.sqrt(q))      # margins of u ∝ Σ α y φ
        if hi - lo <= tol * hi:
            break
        i = int(np.argmin(Ka))                                 # FW vertex
        Ki = K[:, i]
        # exact line search for min ‖(1−s)v + s y_iφ_i‖² over s ∈ [0, 1]
        num = q - float(alpha @ Ki)
        den = q - 2.0 * float(alpha @ Ki) + K[i, i]
        s = 0.0 if den <= 0 else min(1.0, max(0.0, num / den))
        alpha *= 1.0 - s
        alpha[i] += s
        Ka = (1.0 - s) * Ka + s * Ki
    return lo, hi


# =============================================================================================
# Shared run machinery
# =============================================================================================

__all__ += ["sample_rows", "N_TEST"]

#: held-out sample size for population risk (standard error ≈ 0.3/√N_TEST ≈ 0.007 per iterate,
#: far below the seed-to-seed spread of the averaged risk)
N_TEST = 2000


def _instance(point: dict) -> NTKTeacher:
    return make_instance(int(point["m"]), int(point["d"]), int(point["p"]),
                         float(point["margin_quantile"]), int(point.get("instance_seed", 0)))


@lru_cache(maxsize=8)
def _test_set(m: int, d: int, p: int, q: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    inst = make_instance(m, d, p, q, seed)
    X, y = inst.sample(N_TEST, np.random.default_rng([seed, m, d, p, 99]))
    return inst.model.features(X), y


def sample_rows(inst: NTKTeacher, n: int, rngs: list, with_x: bool = False):
    """One training set S ~ Pⁿ per seed (from that seed's generator): features (R, n, dp),
    labels (R, n) and, with ``with_x``, the inputs (R, n, d)."""
    Xs, Hs, ys = [], [], []
    for g in rngs:
        X, y = inst.sample(n, g)
        Xs.append(X)
        Hs.append(inst.model.features(X))
        ys.append(y)
    out = (np.stack(Hs), np.stack(ys))
    return out + (np.stack(Xs),) if with_x else out


def _common(point: dict, run, R: int) -> dict:
    """Theorem parameters actually used, as row columns (one entry per seed)."""
    out = {k: np.full(R, float(np.ravel(v)[-1])) for k, v in run.params.items()
           if k in ("T", "eta", "B", "C_clip", "R_star", "releases")}
    out["sampler_cyclic"] = np.full(R, float(run.params["sampler"] == "cyclic"))
    if "margin_quantile" in point:
        out.update(width_columns(_instance(point), R))
    return out


def width_columns(inst: NTKTeacher, R: int) -> dict:
    """How far the run sits from the width conditions, read with constant 1 and the polylog
    dropped: ``width_m_gamma4`` = m·γ₀⁴ = m/m_lo (Theorems 4.1, E.1, Corollaries 5.5, 5.6:
    m ≳ γ⁻⁴; the upper end, where one applies, is :func:`width_hi_ratio`) and
    ``width_m_gamma6`` = m·γ₀⁶ (Corollary 5.3: m ≍ γ⁻⁶); ≥ 1 is inside."""
    m, g = inst.model.m, inst.gamma0
    return {"width_m_gamma4": np.full(R, m * g ** 4), "width_m_gamma6": np.full(R, m * g ** 6)}


@lru_cache(maxsize=1)
def _m_hi():
    """Theorem 4.1's upper width end (``bounds`` M_HI) compiled once: (function, its argument
    names)."""
    import sympy as sp

    from bounds.rates.kan.correlated_noise import M_HI

    names = sorted(s.name for s in M_HI.free_symbols)
    syms = sorted(M_HI.free_symbols, key=lambda s: s.name)
    return sp.lambdify(syms, M_HI, modules="math"), names


#: The level band of a KAN upper bound taken with constant 1 at a run's own parameters: the risk
#: may exceed it by at most the hidden constant (3); the lower end only flags a bound off by more
#: than 10³.
CONSTANT_ONE_LEVEL = dict(
    level=(1e-3, 3.0), level_source="theorem", use_asymptotic=False,
    level_reason="≲ with constant 1 at the run's own parameters: the risk may exceed the bound by "
                 "at most the hidden constant (3); the lower end flags a bound off by more than "
                 "10³")


def width_hi_ratio(vals: dict) -> float:
    """m/m_hi for Theorem 4.1's upper width end m_hi = B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)² + λ²η))}
    (``bounds`` M_HI, its Õ read with polylog and constant 1) at ``vals`` (symbol names of
    ``kan:thm4.1``); ≤ 1 is inside.  Only for λ ∈ (0, 1) and κ > 0: at λ = 0 (Theorems D.13,
    D.14) and κ = 0 (Theorem E.1) the width has no upper end."""
    if not (0 < vals["lam"] < 1 and vals["noise_multiplier"] > 0):
        raise ValueError(f"width_hi_ratio needs lam in (0, 1) and noise_multiplier > 0, got "
                         f"lam={vals['lam']}, noise_multiplier={vals['noise_multiplier']}")
    fn, names = _m_hi()
    return float(vals["m"]) / float(fn(*[float(vals[k]) for k in names]))


#: dp_sgd_correlated as plain GD/SGD: no noise, no correlation, clipping and projection inactive.
PLAIN_GD = dict(C_clip=1e6, lam=0.0, noise_multiplier=0.0, R_star=math.inf)


def held_out(inst: NTKTeacher, point: dict) -> tuple[np.ndarray, np.ndarray]:
    """The instance's held-out sample (features, labels) on which population risk is measured."""
    return _test_set(inst.model.m, inst.d, inst.model.p, float(point["margin_quantile"]),
                     int(point.get("instance_seed", 0)))


def nonprivate_columns(point: dict, run, inst: NTKTeacher, R: int) -> dict:
    """Columns of a non-private row: γ₀, κ = λ = 0 and the theorem parameters used."""
    return {"gamma0": np.full(R, inst.gamma0), "noise_multiplier": np.zeros(R),
            "lam": np.zeros(R), **_common(point, run, R)}


def privacy_columns(priv, R: int) -> dict:
    """The calibration's privacy columns (three routes' ε, κ, δ), one entry per seed."""
    return {k: np.full(R, v) for k, v in priv.columns().items()}
