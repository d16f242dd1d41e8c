"""The data design, streams, noise and privacy calibration shared by the algorithms of Varshney,
Thakurta, Jain, "(Nearly) Optimal Private Linear Regression via Adaptive Clipping", on streamed
Gaussian-type designs.

* :class:`LinearRegressionDesign` — the data distribution: x = H^{1/2}u with H = diag(λ), ‖H‖ = 1,
  u with i.i.d. unit-variance coordinates (Gaussian, a = ½ in the Tail condition; or Laplace,
  sub-exponential, a = 1), y = ⟨x, w*⟩ + z, z ~ N(0, σ²) independent of x.  Samples are drawn in
  batches from a generator, never stored: a one-pass algorithm on i.i.d. data sees a fresh batch
  each step, so the random permutation of Algorithms 1–2 is a no-op for the output's law and memory
  is O(batch × d) whatever n.
* :func:`algorithms.linreg.dp_stat.dp_stat` — Algorithm 3 (DP-STAT): private approximate maximum of |residuals| by doubling.
* :func:`algorithms.linreg.ambssgd.dp_ambssgd` — Algorithm 2 (DP-AMBSSGD), adaptive clip ζ_t = R_x γ_t log^a n; with
  ``clip="fixed"`` the fixed-clipping minibatch baseline (ζ_t ≡ ζ, no DP-STAT points) under the
  same accounting.
* :func:`algorithms.linreg.ssgd.dp_ssgd` — Algorithm 1 (DP-SSGD): shuffled one-pass SGD, batch 1, tail average.

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
from algorithms.validation import (check_delta, check_finite_array, check_int, check_interval,
                                   check_nonnegative, check_positive)

__all__ = ["LinearRegressionDesign", "alpha_for_epsilon", "DESIGNS", "GAMMA_SLACK", "Observer",
           "gaussian_noise", "clip_limits"]


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


@functools.lru_cache(maxsize=4096)
def _gaussian_rho(noise_multiplier: float, count: int) -> float:
    """dp-accounting's zCDP of ``count`` Gaussian releases (cached: DP-STAT asks the same few)."""
    if count == 0:
        return 0.0
    return accounting.zcdp_rho(accounting.gaussian_event(noise_multiplier, count))


@functools.lru_cache(maxsize=4096)
def _zcdp_to_epsilon(rho: float, delta: float) -> float:
    return accounting.zcdp_to_epsilon(rho, delta)
