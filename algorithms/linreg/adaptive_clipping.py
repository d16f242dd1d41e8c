"""Algorithms of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression via Adaptive
Clipping", on streamed Gaussian-type designs.

* :class:`LinearRegressionDesign` — the data distribution: x = H^{1/2}u with H = diag(λ), ‖H‖ = 1,
  u with i.i.d. unit-variance coordinates (Gaussian, a = ½ in the Tail condition; or Laplace,
  sub-exponential, a = 1), y = ⟨x, w*⟩ + z, z ~ N(0, σ²) independent of x.  Samples are drawn in
  batches from a generator, never stored: a one-pass algorithm on i.i.d. data sees a fresh batch
  each step, so the random permutation of Algorithms 1–2 is a no-op for the output's law and memory
  is O(batch × d) whatever n.
* :func:`dp_stat` — Algorithm 3 (DP-STAT): private approximate maximum of |residuals| by doubling.
* :func:`dp_ambssgd` — Algorithm 2 (DP-AMBSSGD), adaptive clip ζ_t = R_x γ_t log^a n; with
  ``clip="fixed"`` the fixed-clipping minibatch baseline (ζ_t ≡ ζ, no DP-STAT points) under the
  same accounting.
* :func:`dp_ssgd` — Algorithm 1 (DP-SSGD): shuffled one-pass SGD, batch 1, tail average.

Common random numbers.  Both SGD routines run, beside the private iterate, a *reference* iterate on
the same data with the same clip levels but without the Gaussian gradient noise.  When nothing is
clipped the update is affine in w, so w(α) − w_ref is exactly the response to the privacy noise
and ½‖w̄(α) − w̄_ref‖²_H is the privacy term of the excess risk, ½‖w̄_ref − w*‖²_H its non-private
term (the clip fraction is reported so this premise is checked, not assumed).  Data and privacy
noise come from two child generators of each seed's generator, so the data stream of a seed does
not depend on α.

Privacy (replace-one neighbours; errata LR-E2).  The per-example gradient x(⟨x, w⟩ − y) is clipped
to ζ, so replacing one example changes a batch mean by at most 2ζ/b, and a DP-STAT count by at
most 1.  Each record enters exactly one mechanism (one DP-STAT call, or one gradient step), so by
parallel composition (a record's influence on later steps passes only through released outputs)
the run is max_mechanism ρ-zCDP:

* gradient step: Gaussian with multiplier α (std α·2ζ_t/b) → ½α⁻²;
* DP-STAT: at most L + 1 noisy counts (the loop runs i = 0..L; the paper calibrates for L: LR-E12),
  each with std α√(L + 1) → (L + 1)/(2(L + 1)α²) = ½α⁻² on the longest path.

The paper charges both to one record (1/α², Theorem 3.6): valid but 2× conservative once the
stat and gradient points are disjoint (LR-E11).  α is calibrated so that dp-accounting's (ε, δ)
of ½α⁻²-zCDP equals the target ε (:func:`alpha_for_epsilon`); every run reports the guarantee and
the spend from dp-accounting's RDP accountant.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.base import Result
from algorithms.primitives import as_generators
from algorithms.validation import (check_delta, check_finite_array, check_int, check_interval,
                                   check_nonnegative, check_positive)

__all__ = ["LinearRegressionDesign", "alpha_for_epsilon", "dp_stat", "DpStatResult", "dp_ambssgd",
           "ambssgd_schedule", "AmbssgdSchedule", "dp_ssgd", "dp_ssgd_privacy", "count_sensitivity",
           "residual_count", "DESIGNS", "GAMMA_SLACK", "Observer", "gaussian_noise", "clip_limits"]

#: Unit-variance coordinate laws of u (x = H^{1/2}u): name -> (Tail exponent a, E u⁴).
DESIGNS = {"gaussian": (0.5, 3.0), "laplace": (1.0, 6.0)}
#: Γ_p = GAMMA_SLACK · α√(L+1): DP-STAT's break threshold is s − Γ_p (LR-E13).
GAMMA_SLACK = 3.0
#: rule="quantile": DP-STAT breaks at count ≥ (1 − QUANTILE_SLACK)·s (an ablation, LR-E15).
QUANTILE_SLACK = 0.1
#: Rows per generated chunk when streaming a batch (memory R × CHUNK × d floats).
CHUNK = 8192

#: ``observe(kind, t, rows, released, sigma)``: called at every release with its kind
#: (``"grad"``: a noisy gradient, ``released`` of shape (len(rows), d); ``"stat"``: DP-STAT's noisy
#: count, shape (len(rows),)), its index t (the step of DP-SSGD, the phase of DP-AMBSSGD, the round
#: of a stand-alone DP-STAT call), the seed rows it belongs to, and the std of the Gaussian noise
#: in it (shape (len(rows),)).  Audits read the per-step releases through it: the privacy proofs
#: cover them, and the tail average hides them (docs/privacy.md).  An observer with a true
#: attribute ``measures_noise`` is also passed ``clean=``, each release's noise-free value on
#: the same draws (:mod:`algorithms.noise_meter`); DP-SSGD calls it once per block of steps
#: (t the block's first step, released and clean of shape (len(rows), steps, d)).
Observer = Callable[[str, int, np.ndarray, np.ndarray, np.ndarray], None]


def _measures(observe: Observer | None) -> bool:
    return getattr(observe, "measures_noise", False)


def _streams(gens: Sequence[np.random.Generator]) -> tuple[list, list]:
    """(data, noise): the two children ``g.spawn(2)`` would give each seed's generator, so the
    data stream of a seed does not depend on α or on how much noise was drawn.  The noise child
    is exactly ``g.spawn(2)[1]``; the data child runs on SFC64 from its SeedSequence: the data
    are nearly all of a run's random numbers and SFC64 draws normals ≈ 25% faster than PCG64.
    Every stream of both algorithms comes from here, so an audit or a mutant can patch one
    function."""
    data, noise = [], []
    for g in gens:
        kids = g.bit_generator.seed_seq.spawn(2)
        data.append(np.random.Generator(np.random.SFC64(kids[0])))
        noise.append(np.random.Generator(type(g.bit_generator)(kids[1])))
    return data, noise


def _check_observer(observe: Observer | None) -> Observer | None:
    if observe is not None and not callable(observe):
        raise ValueError("observe must be None or a callable (kind, t, rows, released, sigma), "
                         f"got {type(observe).__name__}")
    return observe


def gaussian_noise(gens: Sequence[np.random.Generator], shape: int | tuple[int, ...]) -> np.ndarray:
    """Standard normals of ``shape`` for every seed row, each from its own generator (one block
    per row and call, so a row's noise does not depend on the other rows).  Every privacy noise
    of this module is drawn here, so an audit or a mutant can patch one function."""
    return np.stack([g.standard_normal(shape) for g in gens])


def clip_limits(xnorm: np.ndarray, zeta: np.ndarray | float) -> np.ndarray:
    """ζ/‖x‖ per example (inf where x = 0): the gradient x(⟨x, w⟩ − y) has norm |r|·‖x‖, so
    clipping it to ζ is clipping its residual r to ±ζ/‖x‖ (``algorithms.primitives``' clipped
    least-squares sum).  Shared by DP-AMBSSGD and DP-SSGD, so a mutant can patch the clipping of
    both."""
    z = np.asarray(zeta, dtype=float)
    out = np.full(np.broadcast_shapes(z.shape, np.shape(xnorm)), np.inf)
    with np.errstate(over="ignore"):   # ζ/(subnormal norm) = inf: nothing is clipped, as for 0
        return np.divide(z, xnorm, out=out, where=xnorm > 0)


@dataclass(frozen=True)
class LinearRegressionDesign:
    """x = diag(√λ) u, u_j i.i.d. unit variance (``design``), y = ⟨x, w*⟩ + σ·N(0, 1).

    ``eigenvalues`` are those of H = E[xxᵀ] (normalised so that max = 1); ``w_star`` the optimum.
    Exact excess risk: L(w) − L(w*) = ½ (w − w*)ᵀ H (w − w*).
    """

    eigenvalues: np.ndarray
    w_star: np.ndarray
    sigma: float
    design: str = "gaussian"

    def __post_init__(self) -> None:
        lam = check_finite_array("eigenvalues", self.eigenvalues, ndim=1)
        if lam.size == 0 or np.any(lam <= 0) or not math.isclose(lam.max(), 1.0, rel_tol=1e-12):
            raise ValueError("eigenvalues must be positive with maximum 1 (‖H‖ = 1)")
        w = check_finite_array("w_star", self.w_star, ndim=1)
        if w.shape != lam.shape:
            raise ValueError(f"w_star must have shape {lam.shape}, got {w.shape}")
        check_nonnegative("sigma", self.sigma)
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {tuple(DESIGNS)}, got {self.design!r}")
        object.__setattr__(self, "eigenvalues", lam)
        object.__setattr__(self, "w_star", w)
        object.__setattr__(self, "sigma", float(self.sigma))

    @classmethod
    def make(cls, d: int, *, condition_number: float = 1.0, w_norm: float = 1.0,
             sigma: float = 1.0, design: str = "gaussian", seed: int = 0) -> "LinearRegressionDesign":
        """H = diag(geomspace(1, 1/κ, d)); w* uniform on the sphere with ‖w*‖_H = ``w_norm``
        (drawn from ``seed``, the same for every run of an experiment point)."""
        d = check_int("d", d)
        kappa = check_interval("condition_number", condition_number, 1.0, math.inf)
        w_norm = check_nonnegative("w_norm", w_norm)
        lam = np.geomspace(1.0, 1.0 / kappa, d) if d > 1 else np.ones(1)
        u = np.random.default_rng([check_int("seed", seed, minimum=0), d]).standard_normal(d)
        w = u / np.sqrt(np.sum(lam * u * u)) * w_norm
        return cls(lam, w, sigma, design)

    @property
    def d(self) -> int:
        return self.eigenvalues.size

    @property
    def tail_a(self) -> float:
        """The a of the (H, K₂, a, β)-Tail condition (½ Gaussian, 1 Laplace)."""
        return DESIGNS[self.design][0]

    @property
    def condition_number(self) -> float:
        return float(1.0 / self.eigenvalues.min())

    @property
    def w_norm(self) -> float:
        """‖w*‖_H."""
        return float(np.sqrt(np.sum(self.eigenvalues * self.w_star**2)))

    @property
    def rx2(self) -> float:
        """R_x² of §2: the smallest R² with E[‖x‖²xxᵀ] ⪯ R²H.  For independent coordinates,
        E[‖x‖²x_j²] = λ_j(Tr H − λ_j) + m₄λ_j², so R² = max_j (Tr H + (m₄ − 1)λ_j)
        (= d + 2 for H = I Gaussian)."""
        m4 = DESIGNS[self.design][1]
        return float(np.max(self.eigenvalues.sum() + (m4 - 1.0) * self.eigenvalues))

    def sample(self, gens: Sequence[np.random.Generator], m: int) -> tuple[np.ndarray, np.ndarray]:
        """m fresh samples per generator: X of shape (R, m, d), y of shape (R, m)."""
        X, z = self.sample_noise(gens, m)
        return X, X @ self.w_star + self.sigma * z

    def sample_noise(self, gens: Sequence[np.random.Generator],
                     m: int) -> tuple[np.ndarray, np.ndarray]:
        """The same draws as :meth:`sample`, with the label noise z ~ N(0, 1) in place of
        y = ⟨x, w*⟩ + σz: a caller that needs only residuals ⟨x, w⟩ − y = ⟨x, w − w*⟩ − σz saves
        a pass over X."""
        R = len(gens)
        X = np.empty((R, m, self.d))
        z = np.empty((R, m))
        for r, g in enumerate(gens):        # row r from generator r only, written in place
            self._coords(g, X[r])
            g.standard_normal(out=z[r])
        if not np.all(self.eigenvalues == 1.0):
            X *= np.sqrt(self.eigenvalues)
        return X, z

    def _coords(self, g: np.random.Generator, out: np.ndarray) -> None:
        if self.design == "gaussian":
            g.standard_normal(out=out)
        else:
            # Laplace(0, b) = b·E·S with E ~ Exp(1) and S = ±1 independent: the same law as
            # ``g.laplace`` (inverse CDF, one log per draw) at about half its cost (E by ziggurat,
            # the signs one bit each); b = 1/√2 for unit variance.
            g.standard_exponential(out=out)
            bits = np.frombuffer(g.bytes((out.size + 7) // 8), dtype=np.uint8)
            negative = np.unpackbits(bits, count=out.size).view(bool).reshape(out.shape)
            np.negative(out, out=out, where=negative)
            out *= 1.0 / math.sqrt(2.0)

    def excess(self, W: np.ndarray) -> np.ndarray:
        """½ (w − w*)ᵀ H (w − w*) per row."""
        D = np.atleast_2d(W) - self.w_star
        return 0.5 * np.einsum("ij,j,ij->i", D, self.eigenvalues, D)

    def h_norm_sq(self, D: np.ndarray) -> np.ndarray:
        """½ ‖D‖²_H per row (for differences of iterates)."""
        D = np.atleast_2d(D)
        return 0.5 * np.einsum("ij,j,ij->i", D, self.eigenvalues, D)


# ---------------------------------------------------------------------------------------------
# Privacy calibration
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def alpha_for_epsilon(epsilon: float, delta: float) -> float:
    """The noise multiplier α whose ½α⁻²-zCDP run is exactly (ε, δ)-DP by dp-accounting.

    Solves ``zcdp_to_epsilon(1/(2α²), δ) = ε`` (dp-accounting's RDP→DP conversion, tighter than
    Bun–Steinke's ρ + 2√(ρ log 1/δ)) by Brent's method in log α.
    """
    eps = check_positive("epsilon", epsilon)
    delta = check_delta(delta)

    def f(log_a: float) -> float:
        return math.log(accounting.zcdp_to_epsilon(0.5 * math.exp(-2 * log_a), delta) / eps)

    lo, hi = math.log(1e-4), math.log(1e4)
    if f(lo) < 0 or f(hi) > 0:
        raise ValueError(f"epsilon must be in a range reachable with α in [1e-4, 1e4], got {eps}")
    return math.exp(brentq(f, lo, hi, xtol=1e-14, rtol=1e-14))


# ---------------------------------------------------------------------------------------------
# Algorithm 3: DP-STAT
# ---------------------------------------------------------------------------------------------
def residual_count(abs_residuals: np.ndarray, gamma: float | np.ndarray) -> np.ndarray:
    """c = |{j : |⟨x_j, w⟩ − y_j| ≤ γ}| per row (the query DP-STAT noises)."""
    r = np.asarray(abs_residuals, dtype=float)
    g = np.asarray(gamma, dtype=float)
    return np.count_nonzero(r <= (g[..., None] if g.ndim else g), axis=-1)


def count_sensitivity(abs_residuals: np.ndarray, gamma: float, replacements: np.ndarray) -> int:
    """Brute-force replace-one sensitivity of the count at γ: max over positions j and
    replacement values v of |c(r) − c(r with r_j := v)| (tests check it is 1)."""
    r = np.asarray(abs_residuals, dtype=float)
    base = int(residual_count(r, gamma))
    worst = 0
    for j in range(r.size):
        for v in np.asarray(replacements, dtype=float):
            r2 = r.copy()
            r2[j] = v
            worst = max(worst, abs(int(residual_count(r2, gamma)) - base))
    return worst


@functools.lru_cache(maxsize=4096)
def _gaussian_rho(noise_multiplier: float, count: int) -> float:
    """dp-accounting's zCDP of ``count`` Gaussian releases (cached: DP-STAT asks the same few)."""
    if count == 0:
        return 0.0
    return accounting.zcdp_rho(accounting.gaussian_event(noise_multiplier, count))


@functools.lru_cache(maxsize=4096)
def _zcdp_to_epsilon(rho: float, delta: float) -> float:
    return accounting.zcdp_to_epsilon(rho, delta)


@dataclass(frozen=True)
class DpStatResult:
    """γ_priv per row, the number of noisy counts released, and the run's zCDP cost."""

    gamma: np.ndarray
    rounds: np.ndarray
    levels: int                     # L = ⌈log2(B/Δ)⌉
    noise_std: float                # α√(L+1)
    threshold: float                # break iff c_priv ≥ threshold
    rho_spent: np.ndarray           # per row, dp-accounting of the releases made
    rho_guarantee: float            # longest path (L + 1 releases)


def dp_stat(abs_residuals: np.ndarray, *, B: float, alpha: float,
            rng: np.random.Generator | Sequence[np.random.Generator], levels: int = 40,
            rule: str = "slack", dither: bool = True, observe: Observer | None = None,
            t: int | None = None) -> DpStatResult:
    """Algorithm 3 (DP-STAT), vectorised over seed rows.

    γ_0 = Δ = B·2^{−L} (``levels`` = L = ⌈log2(B/Δ)⌉; the paper's Δ = B/n²⁰⁰ makes L ≈ 200 log2 n
    and the count noise ≈ 59α: infeasible, LR-E14), times 2^U with U ~ Unif[0, 1) when ``dither``
    (a data-independent random offset of the doubling grid, so that γ² does not jump by 4× with
    B: LR-E14).  For i = 0..L: c = |{j : |r_j| ≤ γ_i}|, c_priv = c + N(0, (L + 1)α²);
    continue (γ_{i+1} = 2γ_i) while c_priv < threshold, else stop; return γ_i.

    ``rule="slack"`` (default) uses threshold s − Γ_p, Γ_p = 3α√(L+1), the "s − Γ" of Lemma 3.10;
    ``rule="literal"`` the printed c_priv ≥ s, under which γ overshoots by 2^k with probability
    ≈ 2^{−k} once every residual is below γ (LR-E13); ``rule="quantile"`` the threshold
    (1 − 0.1)s, a fixed quantile level independent of α and s (§1.1's "99th percentile"; an
    ablation isolating the Γ ∝ α effect of LR-E15).  The threshold is data independent in every
    rule, so privacy is the same.  ``abs_residuals`` has shape (R, s).
    """
    r = check_finite_array("abs_residuals", abs_residuals, ndim=(1, 2))
    r = r[None, :] if r.ndim == 1 else r
    if np.any(r < 0):
        raise ValueError("abs_residuals must be in [0, inf)")
    B = check_positive("B", B)
    alpha = check_positive("alpha", alpha)
    L = check_int("levels", levels)
    if rule not in ("slack", "literal", "quantile"):
        raise ValueError(f"rule must be 'slack', 'literal' or 'quantile', got {rule!r}")
    if t is not None:
        t = check_int("t", t, minimum=0)
    observe = _check_observer(observe)
    gens = as_generators(rng)
    R, s = r.shape
    if len(gens) != R:
        raise ValueError(f"abs_residuals has {R} rows but {len(gens)} generators were given")
    std = alpha * math.sqrt(L + 1)
    thr = {"slack": s - GAMMA_SLACK * std, "literal": float(s),
           "quantile": (1.0 - QUANTILE_SLACK) * s}[rule]
    offset = np.array([g.random() for g in gens]) if dither else np.zeros(R)
    gamma = B * 2.0 ** (offset - L)
    rounds = np.zeros(R, dtype=int)
    active = np.ones(R, dtype=bool)
    # Each row's L + 1 count noises drawn at once from its own generator (round i uses column i;
    # unused ones are never released), so a row's output does not depend on the other rows.
    noises = gaussian_noise(gens, L + 1) * std
    for i in range(L + 1):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        noise = noises[idx, i]
        c = np.count_nonzero(r[idx] <= gamma[idx, None], axis=1)
        rounds[idx] += 1
        if observe is not None:
            observe("stat", i if t is None else t, idx, c + noise, np.full(idx.size, std),
                    **({"clean": c} if _measures(observe) else {}))
        go_on = c + noise < thr
        stop = idx[~go_on]
        active[stop] = False
        gamma[idx[go_on]] *= 2.0
    # A row still active after L + 1 rounds returns its last γ (the loop's exhausted value).
    gamma[active] /= 2.0
    spent = np.array([_gaussian_rho(std, int(k)) for k in rounds])
    guarantee = _gaussian_rho(std, L + 1)
    return DpStatResult(gamma, rounds, L, std, thr, spent, guarantee)


# ---------------------------------------------------------------------------------------------
# Algorithm 2: DP-AMBSSGD (and the fixed-clip baseline)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AmbssgdSchedule:
    """Theorem 3.7's parameters as used: phases T, batch b, stat size s, step η, log^a n."""

    T: int
    b: int
    s: int
    eta: float
    log_a_n: float


def ambssgd_schedule(n: int, design: LinearRegressionDesign, *, c1: float = 1.0,
                     T: int | None = None, stat_points: bool = True) -> AmbssgdSchedule:
    """T = ⌈c₁κ ln n⌉ (or ``T``), b = ⌊10n/(11T)⌋ and s = ⌊n/(11T)⌋ (s = b/10, T(b + s) ≤ n),
    η = b/(R_x² + (b − 1)‖H‖).  Without stat points (fixed clip): b = ⌊n/T⌋, s = 0."""
    n = check_int("n", n, minimum=2)
    c1 = check_positive("c1", c1)
    T = math.ceil(c1 * design.condition_number * math.log(n)) if T is None else check_int("T", T)
    b, s = (10 * n // (11 * T), n // (11 * T)) if stat_points else (n // T, 0)
    if b < 1 or (stat_points and s < 1):
        raise ValueError(f"n must be at least {11 * T} for T = {T} phases, got {n}")
    eta = b / (design.rx2 + (b - 1) * 1.0)
    return AmbssgdSchedule(T, b, s, eta, math.log(n) ** design.tail_a)


def _clipped_sums(X: np.ndarray, res: np.ndarray, zeta: np.ndarray):
    """Σ_i clip_ζ(x_i r_i) for each column of the residuals ``res`` (…, k, 2), and how many
    examples the first column clips; X (…, k, d), ζ (…): sums (…, 2, d), counts (…).  The
    clipped residual is sign(r)·min(|r|, ζ/‖x‖) (as ``algorithms.primitives``' clipped
    least-squares sum), so no (k, d) per-example gradient is formed."""
    lim = clip_limits(np.sqrt(np.einsum("...kd,...kd->...k", X, X)), zeta[..., None])
    c = np.abs(res)
    count = np.count_nonzero(c[..., 0] > lim, axis=-1)
    np.minimum(c, lim[..., None], out=c)
    np.copysign(c, res, out=c)
    return np.matmul(np.swapaxes(c, -1, -2), X), count


def _residuals(design, gens, V, k):
    """k fresh samples per row and their residuals ⟨x, v⟩ − y for each column v of V (R, d, 2):
    X (R, k, d), res (R, k, 2).  A ``LinearRegressionDesign`` computes them as ⟨x, v − w*⟩ − σz
    (one product, no separate pass for y); a design that overrides ``sample`` (fixed or real
    data) is read through it."""
    if type(design).sample is LinearRegressionDesign.sample:
        X, z = design.sample_noise(gens, k)
        res = np.matmul(X, V - design.w_star[:, None])
        res -= design.sigma * z[..., None]
    else:
        X, y = design.sample(gens, k)
        res = np.matmul(X, V)
        res -= y[..., None]
    return X, res


def _clipped_mean_gradient(design, gens, W, Wref, m, zeta):
    """Mean over m fresh samples per row of clip_ζ(x(⟨x, w⟩ − y)) at the private iterate W and
    at the reference Wref (same samples, same ζ); streamed in chunks.  Also counts clipped
    examples.  Returns (G, Gref, clipped) with G, Gref of shape (R, d)."""
    R, dim = W.shape
    G = np.zeros((R, 2, dim))
    clipped = np.zeros(R)
    V = np.stack([W, Wref], axis=2)        # (R, d, 2): one product gives both residuals
    for start in range(0, m, CHUNK):
        X, res = _residuals(design, gens, V, min(CHUNK, m - start))
        sums, count = _clipped_sums(X, res, zeta)
        G += sums
        clipped += count
    return G[:, 0] / m, G[:, 1] / m, clipped


def dp_ambssgd(design: LinearRegressionDesign, n: int, *, epsilon: float, delta: float,
               rng: np.random.Generator | Sequence[np.random.Generator], clip: str = "adaptive",
               zeta: float | None = None, c1: float = 1.0, T: int | None = None,
               levels: int = 40, rule: str = "slack", dither: bool = True,
               private: bool = True, observe: Observer | None = None) -> Result:
    """Algorithm 2 (DP-AMBSSGD) on n streamed samples per row, with a noise-free reference.

    For t = 0..T−1 (schedule :func:`ambssgd_schedule`): γ_t = DP-STAT(s fresh points, w_t, B, α)
    with B = R_x(‖w*‖_H + σ)log^{2a} n (K₂ = 1), ζ_t = R_x γ_t log^a n; then on b fresh points
    w_{t+1} = w_t − η((1/b)Σ clip_ζt(x(⟨x, w_t⟩ − y)) + α(2ζ_t/b)g_t), g_t ~ N(0, I); output
    w̄ = (2/T) Σ_{t=T/2+1}^{T} w_t (for odd T, the last ⌈T/2⌉ iterates).  The stat points are
    disjoint from the gradient points (the printed indices overlap by one: LR-E12).

    ``clip="fixed"`` runs the fixed-clipping baseline: ζ_t ≡ ``zeta``, no DP-STAT, b = ⌊n/T⌋.
    ``private=False`` sets α = 0 (no noise anywhere, DP-STAT exact: a non-private control).
    ``observe`` (:data:`Observer`) sees each release: DP-STAT's noisy counts (kind ``"stat"``)
    and the noisy mean gradient of each phase (kind ``"grad"``, std α·2ζ_t/b), index t = phase.

    Returns ``Result`` with ``w`` the private output (R, d), ``info``: ``w_reference`` (same data,
    same ζ_t, no gradient noise), ``zeta`` (R, T), ``clip_fraction`` (R,), the schedule, α, B,
    and the privacy columns.
    """
    n = check_int("n", n, minimum=2)
    gens = as_generators(rng)
    observe = _check_observer(observe)
    if clip not in ("adaptive", "fixed"):
        raise ValueError(f"clip must be 'adaptive' or 'fixed', got {clip!r}")
    if clip == "fixed":
        if zeta is None:
            raise ValueError("zeta must be given (in (0, inf)) for clip='fixed'")
        zeta = check_positive("zeta", zeta)
    alpha = alpha_for_epsilon(epsilon, delta) if private else 0.0
    sched = ambssgd_schedule(n, design, c1=c1, T=T, stat_points=clip == "adaptive")
    R, dim = len(gens), design.d
    data, noise = _streams(gens)      # data: shared by the private and the reference iterate
    rx = math.sqrt(design.rx2)
    B = rx * (design.w_norm + design.sigma) * math.log(n) ** (2 * design.tail_a)
    W, Wref = np.zeros((R, dim)), np.zeros((R, dim))
    acc, acc_ref = np.zeros((R, dim)), np.zeros((R, dim))
    tail_start = sched.T // 2                    # average w_{t+1} for t + 1 ≥ ⌊T/2⌋ + 1
    zetas = np.zeros((R, sched.T))
    clipped = np.zeros(R)
    stat_rounds = np.zeros((R, sched.T), dtype=int)
    stat_spent = np.zeros(R)
    stat_guarantee = 0.0
    for t in range(sched.T):
        if clip == "adaptive":
            Xs, ys = design.sample(data, sched.s)
            r = np.abs(np.einsum("rkd,rd->rk", Xs, W) - ys)
            if private:
                st = dp_stat(r, B=B, alpha=alpha, rng=noise, levels=levels, rule=rule,
                             dither=dither, observe=observe, t=t)
                gamma = st.gamma
                stat_rounds[:, t] = st.rounds
                stat_spent = np.maximum(stat_spent, st.rho_spent)
                stat_guarantee = st.rho_guarantee
            else:
                gamma = r.max(axis=1)
            z_t = rx * np.maximum(gamma, np.finfo(float).tiny) * sched.log_a_n
        else:
            z_t = np.full(R, zeta)
        zetas[:, t] = z_t
        G, Gref, c = _clipped_mean_gradient(design, data, W, Wref, sched.b, z_t)
        clipped += c
        if private:
            std = alpha * 2.0 * z_t / sched.b
            G_clean = G
            G = G + std[:, None] * gaussian_noise(noise, dim)
            if observe is not None:
                observe("grad", t, np.arange(R), G, std,
                        **({"clean": G_clean} if _measures(observe) else {}))
        W = W - sched.eta * G
        Wref = Wref - sched.eta * Gref
        if t >= tail_start:
            acc += W
            acc_ref += Wref
    k = sched.T - tail_start
    w_bar, w_ref = acc / k, acc_ref / k
    info = dict(w_reference=w_ref, zeta=zetas, clip_fraction=clipped / (sched.T * sched.b),
                T=sched.T, b=sched.b, s=sched.s, eta=sched.eta, alpha=alpha, B=B,
                log_a_n=sched.log_a_n, rx2=design.rx2, stat_rounds=stat_rounds,
                tail_iterates=k)
    if private:
        grad_rho = _gaussian_rho(alpha, 1)
        # Parallel composition: each record is in one mechanism; the run's cost is the max.
        rho_spent = np.maximum(grad_rho, stat_spent)
        rho_guarantee = max(grad_rho, stat_guarantee)
        eps_g = _zcdp_to_epsilon(rho_guarantee, delta)
        eps_s = np.array([_zcdp_to_epsilon(float(v), delta) for v in rho_spent])
        privacy = accounting.PrivacySpent.from_event(
            accounting.gaussian_event(alpha), target_rho=rho_guarantee, guarantee_rho=rho_guarantee,
            stat_rho_guarantee=stat_guarantee)
        info.update(rho_spent=rho_spent, rho_guarantee=rho_guarantee, epsilon_guarantee=eps_g,
                    epsilon_spent=eps_s, epsilon_target=float(epsilon), delta=delta)
    else:
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
    return Result(w=w_bar, privacy=privacy, grad_evals=sched.T * (sched.b + sched.s), info=info)


# ---------------------------------------------------------------------------------------------
# Algorithm 1: DP-SSGD
# ---------------------------------------------------------------------------------------------
def dp_ssgd_privacy(alpha: float, n: int, delta: float) -> dict:
    """What DP-SSGD with multiplier α on n records is certified at.

    * ``rho``: parallel composition only (each record is in one step, Gaussian with multiplier α
      on its replace-one sensitivity 2ζ): ½α⁻²-zCDP by dp-accounting — always valid.
    * ``epsilon_amplified`` at ``delta_amplified``: Theorem 3.1's route, the paper's Theorem A.3
      (Feldman, McMillan, Talwar 2021, Thm 3.8: (ε₀, δ₀)-DP adaptive local randomizers on a
      random permutation).  We split δ̂ = δ/2, δ₀ = δ/(2n) (ε₀ from dp-accounting at δ₀) and take,
      where the two readings we could not settle differ (errata LR-E7), the weaker guarantee:
      ε from the FMT authors' closed-form code (``closedformanalysis``: factor
      (1 − e^{−ε₀})/(1 + e^{−ε₀−ε̃}), ε̃ = log(1 + bracket), bracket = 8√(e^ε₀ log(4/δ̂))/√n +
      8e^ε₀/n; ≥ their Thm 3.1's (e^ε₀ − 1)/(e^ε₀ + 1) form), valid for ε₀ ≤ log(n/(16 log(4/δ̂)))
      (the code's range; the paper prints log(2/δ̂), a typo by an open report on the authors'
      repository), and δ = δ̂ + (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ₀, which is ≥ the e^ε·n·δ₀ of
      Theorem A.3's O(·) read with constant 1.  So the amplified ε holds at ``delta_amplified``
      (≈ δ(1 + e^ε), not δ).  NaN where ε₀ is out of range — which is the case at Corollary
      3.3's α unless ε ≲ √(log(n/δ)/n) (LR-E7).
    """
    alpha = check_positive("alpha", alpha)
    n = check_int("n", n)
    delta = check_delta(delta)
    ev = accounting.gaussian_event(alpha)
    rho = accounting.zcdp_rho(ev)
    delta0 = delta / (2.0 * n)
    delta_hat = delta / 2.0
    eps0 = accounting.epsilon(ev, delta0)
    eps_amp = delta_amp = math.nan
    if 0 < eps0 <= math.log(n / (16.0 * math.log(4.0 / delta_hat))):
        e0 = math.exp(eps0)
        bracket = 8.0 * math.sqrt(e0 * math.log(4.0 / delta_hat)) / math.sqrt(n) + 8.0 * e0 / n
        factor = -math.expm1(-eps0) / (1.0 + math.exp(-eps0) / (1.0 + bracket))
        eps_amp = math.log1p(factor * bracket)
        delta_amp = delta_hat + (math.exp(eps_amp) + 1.0) * (1.0 + 0.5 / e0) * n * delta0
    return {"rho": rho, "epsilon0": eps0, "epsilon_amplified": eps_amp,
            "delta_amplified": delta_amp}


def dp_ssgd(design: LinearRegressionDesign, n: int, *, zeta: float, alpha: float, eta: float,
            rng: np.random.Generator | Sequence[np.random.Generator],
            delta: float = 1e-6, observe: Observer | None = None) -> Result:
    """Algorithm 1 (DP-SSGD) on n streamed samples per row, with a noise-free reference.

    w_0 = 0; for t = 0..n−1: w_{t+1} = w_t − η(clip_ζ(x_t(⟨x_t, w_t⟩ − y_t)) + 2ζα g_t);
    output w̄ = (2/n) Σ_{t=n/2+1}^{n} w_t.  Vectorised over seed rows (the loop over t is in
    Python, each step O(R·d)); data and noise are generated CHUNK steps at a time.
    ``alpha = 0`` is allowed (the non-private control).  ``delta`` is the δ at which the
    amplified ε of :func:`dp_ssgd_privacy` is reported.  ``observe`` (:data:`Observer`) sees
    every step's release, the noisy clipped gradient (kind ``"grad"``, index t, std 2ζα): the
    local randomizer's output in Theorem 3.1's proof.
    """
    n = check_int("n", n, minimum=2)
    zeta = check_positive("zeta", zeta)
    alpha = check_nonnegative("alpha", alpha)
    eta = check_positive("eta", eta)
    delta = check_delta(delta)
    gens = as_generators(rng)
    observe = _check_observer(observe)
    R, dim = len(gens), design.d
    data, noise = _streams(gens)
    V = np.zeros((R, 2, dim))               # the private and the reference iterate
    acc = np.zeros((R, 2, dim))
    clipped = np.zeros(R)
    half = n // 2
    rows = np.arange(R)
    step_std = np.full(R, 2.0 * zeta * alpha)
    for start in range(0, n, CHUNK):
        k = min(CHUNK, n - start)
        X, y = design.sample(data, k)
        # Everything that does not depend on the iterate is computed per chunk, vectorised: the
        # clip limits ζ/‖x‖ and one block of noise per row (the same numbers as one draw per
        # step), so a step is a handful of small array operations.
        lim = clip_limits(np.sqrt(np.einsum("rkd,rkd->rk", X, X)), zeta)[:, :, None]
        nlim = -lim
        G = gaussian_noise(noise, (k, dim)) * (2.0 * zeta * alpha)
        res = np.empty((R, k, 2))
        measure = _measures(observe)
        if measure:
            blk_clean, blk_rel = np.empty((R, k, dim)), np.empty((R, k, dim))
        for j in range(k):
            x = X[:, j]
            r = res[:, j]
            np.einsum("rvd,rd->rv", V, x, out=r)
            r -= y[:, j, None]
            step = np.minimum(np.maximum(r, nlim[:, j]), lim[:, j])[:, :, None] * x[:, None]
            if measure:
                blk_clean[:, j] = step[:, 0]
            step[:, 0] += G[:, j]
            if measure:
                blk_rel[:, j] = step[:, 0]
            elif observe is not None:
                observe("grad", start + j, rows, step[:, 0], step_std)
            V -= eta * step
            if start + j >= half:
                acc += V
        if measure:
            observe("grad", start, rows, blk_rel, step_std, clean=blk_clean)
        clipped += np.count_nonzero(np.abs(res[:, :, 0]) > lim[:, :, 0], axis=1)
    m = n - half
    info = dict(w_reference=acc[:, 1] / m, clip_fraction=clipped / n, zeta=zeta, alpha=alpha,
                eta=eta, tail_iterates=m, steps=n)
    if alpha > 0:
        priv = dp_ssgd_privacy(alpha, n, delta)
        privacy = accounting.PrivacySpent.from_event(accounting.gaussian_event(alpha),
                                                     target_rho=priv["rho"])
        info.update(priv)
    else:
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
    return Result(w=acc[:, 0] / m, privacy=privacy, grad_evals=n, info=info)
