"""Algorithms of Tao et al., "Second-Order Convergence in Private Stochastic Non-Convex
Optimization" (``sosp_private_nonconvex.txt``).  In this paper ρ is the Hessian-Lipschitz
constant (``hessian_lipschitz`` here) and m the number of clients.

* :func:`gauss_psgd` — Algorithm 1 (Gauss-PSGD) over any gradient oracle, with the model-drift
  escape certificate ‖x_t − x̃‖ ≥ R.
* :class:`GaussianOracle` — the oracle of §5.1 (eq. 1–4): ∇F(x) + ζ + ξ, ζ sampling noise
  (isotropic or with no component along chosen directions), ξ ~ N(0, r²I).
* :class:`AdaDPSpider` — Algorithm 2 (Ada-DP-SPIDER) as a stateful oracle, and with ``m > 1``
  clients Algorithm 3 (distributed Ada-DP-SPIDER: each client privatizes its own batch, the
  server averages, the drift switch is shared).
* :func:`private_model_selection` — Algorithm 4 (noisy gradients and Hessians from held-out
  client data, first candidate passing both thresholds).
* :func:`spider_plan` — Theorem 2/3's parameters (b1, b2, κ, η, χ, R, Γ, Q) from a target α,
  the *practical parametrization* (below).

Practical parametrization.  The paper's constants (s ≥ (80c)², unknown C, c, c1, c2, the log
factor μ) make every run vacuous at feasible sizes.  We set ι = s = μ = 1 and keep every
functional form of parameters (5) and of Theorem 2: χ = α/4, η = √(ρα)/M², R = √(α/ρ),
b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉}, κ of eq. 104 (with the Gaussian mechanism's
8 log(1.25/δ) kept where the theorem has log(1/δ)), and
Γ = ⌈(log(R√(2η√(ρα))/(η r_c)) + 2)/(η√(ρα))⌉ (the time growth at rate η√(ρα) needs to carry
noise of per-coordinate size r_c out to R: Lemma 1's 𝔟(Γ)ηr ≥ R; it carries the log d and
log(1/(ηr)) of the paper's μ), Q = ⌈ln(1/ω₀)/ln(8/7)⌉ (Lemma 2 with log₂, errata SOSP-E3) or a
given Q.  The accuracy α is the caller's: the experiments use α = c_α × Theorem 2's (3's) rate
with ONE constant c_α held fixed across a sweep.

Privacy (errata SOSP-E2).  Replace-one neighbours.  Each query of Ada-DP-SPIDER uses a fresh,
disjoint batch (each record at most once), so the run is (ε, δ)-DP if each query is (parallel
composition, the paper's argument).  A query is a Gaussian mechanism with a fixed noise
multiplier z, calibrated with dp-accounting so that ε(GaussianDpEvent(z), δ) = ε; its std is z
times the query's sensitivity: 2G_s/b1 for O₁ (G_s bounds ‖∇f(x;z) − ∇f(x;z')‖/2, the spread of
per-record gradients), 2M_s‖x_{t−1} − x_{t−2}‖/b2 for O₂ (M_s bounds the per-record smoothness
of the data-dependent part).  The step ‖x_{t−1} − x_{t−2}‖ is a function of earlier released
outputs, so the sensitivity of O₂ is fixed before the batch is touched and z does not depend on
data.  This is the paper's calibration with c1 = c2 = z²ε²/log(1/δ) (≈ 8 log(1.25/δ)/log(1/δ)
for the classical Gaussian mechanism; we use the accountant's z).
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence as _SequenceABC
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from algorithms import accounting
from algorithms.primitives import as_generators
from algorithms.validation import (check_delta, check_finite_array, check_int, check_nonnegative,
                                   check_open_interval, check_positive)

__all__ = ["gaussian_multiplier", "SpiderPlan", "spider_plan", "Design", "spider_design",
           "design_noise", "practical_gamma", "escape_rounds",
           "Oracle", "GaussianOracle", "ClientData", "AdaDPSpider", "PSGDResult", "gauss_psgd",
           "SelectionResult", "private_model_selection", "selection_multiplier",
           "o1_sensitivity", "o2_sensitivity", "selection_sensitivities", "client_noise_std"]


# =============================================================================================
# Noise calibration (dp-accounting)
# =============================================================================================
def _calibrate(make_event: Callable[[float], object], epsilon: float, delta: float) -> float:
    """The noise multiplier z with RDP-accountant ε(make_event(z), δ) = ε (Brent, rtol 1e-13).

    ε is continuous and strictly decreasing in z, so the root is unique; the bracket is widened
    until it holds the root."""
    f = lambda z: accounting.epsilon(make_event(z), delta) - epsilon  # noqa: E731
    lo, hi = 1e-2, 1.0
    while f(lo) < 0:
        lo /= 10.0
    while f(hi) > 0:
        hi *= 4.0
    z = brentq(f, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    # ε(z) ≤ target: step z up by ulps until the accountant agrees (never over-spend).
    for _ in range(64):
        if f(z) <= 0:
            break
        z = np.nextafter(z, np.inf)
    return float(z)


@lru_cache(maxsize=256)
def gaussian_multiplier(epsilon: float, delta: float) -> float:
    """z such that one Gaussian mechanism with std z·Δ₂ is (ε, δ)-DP by dp-accounting (RDP)."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    return _calibrate(lambda z: accounting.gaussian_event(z), epsilon, delta)


@lru_cache(maxsize=256)
def selection_multiplier(epsilon: float, delta: float, releases: int) -> float:
    """z such that ``releases`` adaptively composed Gaussian mechanisms (each std z·Δ₂) are
    (ε, δ)-DP by dp-accounting (RDP) — Algorithm 4's 2T releases per client."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    releases = check_int("releases", releases)
    return _calibrate(lambda z: accounting.gaussian_event(z, releases), epsilon, delta)


# =============================================================================================
# Sensitivities and noise draws (module-level, so that the mutation self-test can inject a bug
# into exactly one of them: empirical/sosp_audit.py)
# =============================================================================================
def o1_sensitivity(G_sens: float, b1: int) -> float:
    """Replace-one ℓ₂ sensitivity of O₁'s batch mean over b1 records: 2G_s/b1 (G_s bounds half
    the spread ‖∇f(x;z) − ∇f(x;z')‖ of two records' gradients at any x)."""
    return 2.0 * G_sens / b1


def o2_sensitivity(M_sens: float, step: float, b2: int) -> float:
    """Replace-one ℓ₂ sensitivity of O₂'s gradient-difference mean over b2 records between x_{t−1}
    and x_{t−2} with ‖x_{t−1} − x_{t−2}‖ = step: 2M_s·step/b2 (M_s bounds half the spread of two
    records' gradient differences per unit step).  The step is a function of earlier releases,
    so the sensitivity is fixed before the batch is read (SOSP-E2)."""
    return 2.0 * M_sens * step / b2


def selection_sensitivities(G_sens: float, M_sens: float, d: int, n: int) -> tuple[float, float]:
    """Algorithm 4's replace-one sensitivities over n held-out records: gradient 2G_s/n, Hessian
    (upper triangle incl. diagonal, ℓ₂) ≤ Frobenius ≤ √d × operator, i.e. 2M_s√d/n (attained by
    records with Hessians ±M_s·I)."""
    return 2.0 * G_sens / n, 2.0 * M_sens * math.sqrt(d) / n


def client_noise_std(sigma: float, m: int) -> float:
    """Each client's own noise std in Algorithm 3: the single-client σ whatever m is.  ICRL-DP
    protects a client's transcript against the server, which sees each client's release before
    averaging, so the average's 1/√m cannot be spent on privacy (errata SOSP-E1)."""
    return sigma


def _spider_noise(gen: np.random.Generator, shape: tuple) -> np.ndarray:
    """Standard normals for one Ada-DP-SPIDER query (scaled by the query's σ by the caller)."""
    return gen.standard_normal(shape)


def _selection_noise(gen: np.random.Generator, shape: tuple) -> np.ndarray:
    """Standard normals for Algorithm 4's releases (scaled by σ_g or σ_H by the caller)."""
    return gen.standard_normal(shape)


def _o2_estimate(data: "ClientData", gens: Sequence[np.random.Generator], X: np.ndarray,
                 X_prev: np.ndarray, G_prev: np.ndarray, b2: int, rows: np.ndarray
                 ) -> np.ndarray:
    """O₂'s noiseless estimates per row and client, (k, m, d) for k rows: the SPIDER recursion
    ĝ_{j,t−1} + ∇f̂_{B_j}(x_{t−1}) − ∇f̂_{B_j}(x_{t−2}) (the correction whose sensitivity scales
    with the step)."""
    return G_prev + data.batch_differences(gens, X, X_prev, b2, rows)


# =============================================================================================
# Parameters (practical parametrization of (5) and Theorem 2/3)
# =============================================================================================
def practical_gamma(alpha: float, hessian_lipschitz: float, M: float, r_c: float) -> int:
    """Γ = ⌈(log(R√(2η√(ρα))/(η r_c)) + 2)/(η√(ρα))⌉ with η = √(ρα)/M², R = √(α/ρ) (≥ 1)."""
    alpha = check_positive("alpha", alpha)
    rho_h = check_positive("hessian_lipschitz", hessian_lipschitz)
    M = check_positive("M", M)
    r_c = check_positive("r_c", r_c)
    curv = math.sqrt(rho_h * alpha)
    eta = curv / M**2
    radius = math.sqrt(alpha / rho_h)
    growth = max(math.log(radius * math.sqrt(2.0 * eta * curv) / (eta * r_c)), 0.0) + 2.0
    return max(1, math.ceil(growth / (eta * curv)))


def escape_rounds(omega0: float) -> int:
    """Lemma 2's Q: each round escapes w.p. ≥ 1/8 (Corollary 1), so Q = ⌈ln(1/ω₀)/ln(8/7)⌉
    rounds fail together w.p. ≤ ω₀.  The paper's Q = (26/5)log(1/ω₀) needs log₂ (SOSP-E3)."""
    omega0 = check_open_interval("omega0", omega0, 0.0, 1.0)
    return max(1, math.ceil(math.log(1.0 / omega0) / math.log(8.0 / 7.0)))


@dataclass(frozen=True)
class SpiderPlan:
    """Every parameter a run of Gauss-PSGD + (distributed) Ada-DP-SPIDER uses."""

    n: int
    d: int
    m: int
    epsilon: float
    delta: float
    alpha: float
    chi: float
    eta: float
    radius: float
    kappa: float
    kappa_1: float
    kappa_2: float
    b1: int
    b2: int
    b1_real: float
    b2_real: float
    z: float                 # noise multiplier of every query (dp-accounting, (ε, δ) per query)
    sigma1: float            # per-client O₁ noise std per coordinate, z·2G_s/b1
    r_c: float               # per-coordinate std of the averaged O₁ noise, sigma1/√m
    Gamma: int
    Q: int
    G: float
    M: float
    U: float
    hessian_lipschitz: float
    G_sens: float
    M_sens: float
    max_steps: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def design_noise(alpha: float, kappa: float, *, n: int, d: int, m: int, z: float, G_sens: float,
                 M_sens: float, M: float, U: float, hessian_lipschitz: float) -> float:
    """Lemma 7 / Lemma 9 with explicit constants: the rms estimation noise ψ of (distributed)
    Ada-DP-SPIDER at accuracy α and drift threshold κ,

        ψ² = (G_s²/b1 + M_s²κ/b2)/m + d·z²(4G_s²/b1² + 4M_s²κ/b2²)/m,

    b1 = min{n, nκ/(2Uη)}, b2 = max{1, nηχ²/(2U)}, η = √(ρα)/M², χ = α/4: sampling noise of the
    last O₁ (variance ≤ G_s²/b1) and of the O₂ steps since (≤ M_s²Σ‖Δx‖²/b2, Σ‖Δx‖² ≤ κ), DP
    noise of the last O₁ (σ₁² = z²(2G_s/b1)² per coordinate) and of the O₂ steps
    (Σσ₂² ≤ z²(2M_s)²κ/b2²); averaging m clients divides every variance by m (eq. 108, 112)."""
    eta = math.sqrt(hessian_lipschitz * alpha) / M**2
    chi = alpha / 4.0
    b1 = min(float(n), n * kappa / (2.0 * U * eta))
    b2 = max(1.0, n * eta * chi**2 / (2.0 * U))
    var = (G_sens**2 / b1 + M_sens**2 * kappa / b2
           + d * z**2 * (4.0 * G_sens**2 / b1**2 + 4.0 * M_sens**2 * kappa / b2**2))
    return math.sqrt(var / m)


def _design_gap(alphas: np.ndarray, kappa: float, c_chi: float, kw: dict) -> np.ndarray:
    """α − 4c_χψ(α; κ) on a grid of α: :func:`design_noise`'s formula on arrays (the scan that
    brackets the fixed point; the root itself is solved with the scalar function).  Where the
    gap is within rounding of 0 the scalar value is used, so the signs, hence the bracket, are
    exactly those a scalar scan finds."""
    n, d, m, z = kw["n"], kw["d"], kw["m"], kw["z"]
    G_s, M_s, M, U = kw["G_sens"], kw["M_sens"], kw["M"], kw["U"]
    eta = np.sqrt(kw["hessian_lipschitz"] * alphas) / M**2
    chi = alphas / 4.0
    b1 = np.minimum(float(n), n * kappa / (2.0 * U * eta))
    b2 = np.maximum(1.0, n * eta * chi**2 / (2.0 * U))
    var = (G_s**2 / b1 + M_s**2 * kappa / b2
           + d * z**2 * (4.0 * G_s**2 / b1**2 + 4.0 * M_s**2 * kappa / b2**2))
    term = 4.0 * c_chi * np.sqrt(var / m)
    gap = alphas - term
    for i in np.flatnonzero(np.abs(gap) <= 1e-9 * (alphas + term)):
        gap[i] = alphas[i] - 4.0 * c_chi * design_noise(float(alphas[i]), kappa, **kw)
    return gap


@dataclass(frozen=True)
class Design:
    """Remark 2's practical design: the smallest α with α = 4c_χ·ψ(α; κ) over κ."""

    alpha: float
    kappa: float
    c_chi: float
    psi: float


def spider_design(n: int, d: int, *, epsilon: float, delta: float, G_sens: float, M_sens: float,
                  M: float, U: float, hessian_lipschitz: float, m: int = 1, c_chi: float = 1.5,
                  kappa_grid: Sequence[float] | None = None) -> Design:
    """Solve Remark 2's fixed point α = 4c_χ·ψ(α; κ) (:func:`design_noise`; χ = α/4, so the
    estimation noise is χ/c_χ) for every κ on a log grid and keep the κ with the smallest α.

    ONE constant, c_χ (the ratio χ/ψ that Lemma 5 needs ≥ the sub-Gaussian tail factor), is
    held fixed across a sweep; no exponent is supplied: the n, d, ε, m dependence of α is what
    the balance of Lemma 7's terms produces (the paper's eq. 102–104 do the same balance in
    closed form, up to constants).  For each κ the smallest root of α − 4c_χψ(α; κ) on
    [1e−8, 1e3] is taken (ψ(α) → const > 0 as α → 0 and grows like α^{1/4} at large α); the
    best grid κ is refined by a bounded scalar minimisation between its grid neighbours."""
    n, d, m = check_int("n", n), check_int("d", d), check_int("m", m)
    epsilon, delta = check_positive("epsilon", epsilon), check_delta(delta)
    c_chi = check_positive("c_chi", c_chi)
    z = gaussian_multiplier(epsilon, delta)
    kw = dict(n=n, d=d, m=m, z=z, G_sens=check_positive("G_sens", G_sens),
              M_sens=check_nonnegative("M_sens", M_sens), M=check_positive("M", M),
              U=check_positive("U", U), hessian_lipschitz=check_positive("hessian_lipschitz",
                                                                         hessian_lipschitz))
    grid = np.geomspace(1e-7, 1.0, 141) if kappa_grid is None else np.asarray(kappa_grid, float)
    alphas = np.geomspace(1e-8, 1e3, 221)

    def smallest_root(kappa: float) -> float:
        f = _design_gap(alphas, kappa, c_chi, kw)
        sign = np.flatnonzero((f[:-1] < 0) & (f[1:] >= 0))
        if sign.size == 0:
            return math.inf
        i = sign[0]
        return brentq(lambda a: a - 4.0 * c_chi * design_noise(a, kappa, **kw), alphas[i],
                      alphas[i + 1], xtol=1e-15, rtol=1e-12)

    vals = np.array([smallest_root(k) for k in grid])
    if not np.isfinite(vals).any():
        raise ValueError("no accuracy α in [1e-8, 1e3] satisfies α = 4c_χψ(α; κ) on the κ grid")
    j = int(np.argmin(vals))
    # refine between the grid neighbours (α(κ) is smooth there), so that the design, and hence
    # every parameter of the run, varies smoothly along a sweep instead of in κ-grid steps
    lo, hi = math.log(grid[max(j - 1, 0)]), math.log(grid[min(j + 1, grid.size - 1)])
    best = (float(vals[j]), float(grid[j]))
    if hi > lo:
        opt = minimize_scalar(lambda lk: smallest_root(math.exp(lk)), bounds=(lo, hi),
                              method="bounded", options={"xatol": 1e-6})
        if opt.success and opt.fun < best[0]:
            best = (float(opt.fun), float(math.exp(opt.x)))
    a, kappa = best
    return Design(alpha=float(a), kappa=kappa, c_chi=c_chi,
                  psi=design_noise(a, kappa, **kw))


def spider_plan(n: int, d: int, *, epsilon: float, delta: float, alpha: float, G: float, M: float,
                U: float, hessian_lipschitz: float, G_sens: float, M_sens: float, m: int = 1,
                Q: int | None = None, omega0: float = 0.05, max_steps_factor: float = 20.0,
                kappa: float | None = None) -> SpiderPlan:
    """Theorem 2 (m = 1) / Theorem 3 (m > 1) parameters for a target accuracy α.

    χ = α/4, η = √(ρα)/M², R = √(α/ρ) (parameters (5), ι = 1);
    κ = max{κ₁, κ₂}, κ₁ = G^{3/2}√(Uρ)/(M^{5/2}√(mn)),
    κ₂ = G^{14/15} d^{2/5} U^{4/5} ρ^{8/15} L^{2/5}/(M^{34/15}(√m nε)^{4/5}), L = 8 log(1.25/δ)
    (eq. 104/120 with the mechanism's log factor kept, as in ``sosp:thm2_kappa``);
    b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉} per client (each ≤ n);
    Γ = :func:`practical_gamma` at r_c = z·2G_s/(b1√m), the averaged O₁ noise per coordinate;
    Q given, else :func:`escape_rounds` (ω₀); the step cap is max_steps_factor·U/(ηχ²)
    (Lemma 6's count at ι = 1; hitting it counts as failure).  ``kappa`` overrides eq. 104's κ
    (e.g. with :func:`spider_design`'s); κ₁, κ₂ are reported either way.
    G, M, U, ρ are the constants of the rates; G_s, M_s the per-record sensitivity constants
    (≤ G, M: only the data-dependent part of f varies between neighbours).
    """
    n, d, m = check_int("n", n), check_int("d", d), check_int("m", m)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    alpha = check_positive("alpha", alpha)
    G, M, U = check_positive("G", G), check_positive("M", M), check_positive("U", U)
    rho_h = check_positive("hessian_lipschitz", hessian_lipschitz)
    G_sens, M_sens = check_positive("G_sens", G_sens), check_nonnegative("M_sens", M_sens)
    max_steps_factor = check_positive("max_steps_factor", max_steps_factor)
    L = 8.0 * math.log(1.25 / delta)
    chi = alpha / 4.0
    eta = math.sqrt(rho_h * alpha) / M**2
    radius = math.sqrt(alpha / rho_h)
    kappa_1 = G**1.5 * math.sqrt(U * rho_h) / (M**2.5 * math.sqrt(m * n))
    kappa_2 = (G**(14 / 15) * d**0.4 * U**0.8 * rho_h**(8 / 15) * L**0.4
               / (M**(34 / 15) * (math.sqrt(m) * n * epsilon)**0.8))
    kappa = max(kappa_1, kappa_2) if kappa is None else check_positive("kappa", kappa)
    b1_real = n * kappa / (2.0 * U * eta)
    b2_real = n * eta * chi**2 / (2.0 * U)
    b1 = min(n, max(1, math.ceil(b1_real)))
    b2 = min(n, max(1, math.ceil(b2_real)))
    z = gaussian_multiplier(epsilon, delta)
    sigma1 = z * o1_sensitivity(G_sens, b1)
    r_c = sigma1 / math.sqrt(m)
    Gamma = practical_gamma(alpha, rho_h, M, r_c)
    Q = escape_rounds(omega0) if Q is None else check_int("Q", Q)
    max_steps = max(1, math.ceil(max_steps_factor * U / (eta * chi**2)))
    return SpiderPlan(n=n, d=d, m=m, epsilon=epsilon, delta=delta, alpha=alpha, chi=chi, eta=eta,
                      radius=radius, kappa=kappa, kappa_1=kappa_1, kappa_2=kappa_2, b1=b1, b2=b2,
                      b1_real=b1_real, b2_real=b2_real, z=z, sigma1=sigma1, r_c=r_c, Gamma=Gamma,
                      Q=Q, G=G, M=M, U=U, hessian_lipschitz=rho_h, G_sens=G_sens, M_sens=M_sens,
                      max_steps=max_steps)


# =============================================================================================
# Oracles
# =============================================================================================
class Oracle(ABC):
    """A gradient oracle for :func:`gauss_psgd`, vectorized over R seed rows.

    ``query(rows, X, restart)`` returns (ĝ, ok): estimates at X (shape (len(rows), d)) for the
    given rows, and a mask of rows that could be served (False: out of data — the row stops).
    ``restart`` marks rows whose position was just reset to x̃ (stateful oracles refresh).
    """

    @abstractmethod
    def query(self, rows: np.ndarray, X: np.ndarray, restart: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]: ...


class _BlockNormals:
    """Per-row standard normals in blocks: row r's stream depends only on its generator, not on
    how many rows share the batch (a block of k draws = k single draws in order)."""

    def __init__(self, gens: Sequence[np.random.Generator], d: int, block: int = 256):
        self.gens, self.d, self.block = list(gens), d, block
        self.buf = np.empty((len(self.gens), 0, d))
        self.pos = np.zeros(len(self.gens), dtype=np.int64)

    def take(self, rows: np.ndarray) -> np.ndarray:
        need = rows[self.pos[rows] >= self.buf.shape[1]]
        if need.size:
            if self.buf.shape[1] == 0:
                self.buf = np.empty((len(self.gens), self.block, self.d))
            for i in need:
                self.buf[i] = self.gens[i].standard_normal((self.block, self.d))
                self.pos[i] = 0
        out = self.buf[rows, self.pos[rows]]
        self.pos[rows] += 1
        return out


class GaussianOracle(Oracle):
    """§5.1's oracle: ĝ = ∇F(x) + ζ + ξ with ξ ~ N(0, r²I_d) and sampling noise ζ ~ N(0, σ²/d·P)
    where P projects out the columns of ``blind`` (an orthonormal (d, k) basis; None: P = I).

    With ``blind`` = v_min the sampling noise has no component along the escape direction (the
    false-certificate construction of the escape experiments).  ``gradient(X)`` returns ∇F at the
    rows of X; with ``rowwise=True`` it is called as ``gradient(X, rows)`` (rows: the seed-row
    indices of X), for batches whose rows have different landscapes.  ζ and ξ come from separate
    per-row streams (spawned from the row's generator), so switching r on or off leaves ζ
    unchanged.
    """

    def __init__(self, gradient: Callable[..., np.ndarray], d: int, *, sigma: float,
                 r: float, rng: np.random.Generator | Sequence[np.random.Generator],
                 blind: np.ndarray | None = None, rowwise: bool = False):
        self.gradient = gradient
        self.rowwise = bool(rowwise)
        self.d = check_int("d", d)
        self.sigma = check_nonnegative("sigma", sigma)
        self.r = check_nonnegative("r", r)
        gens = as_generators(rng)
        kids = [g.spawn(2) for g in gens]
        self._zeta = _BlockNormals([k[0] for k in kids], self.d)
        self._xi = _BlockNormals([k[1] for k in kids], self.d)
        if blind is not None:
            B = check_finite_array("blind", blind, ndim=2)
            if B.shape[0] != self.d:
                raise ValueError(f"blind must have shape ({self.d}, k), got {B.shape}")
            self.blind = B
        else:
            self.blind = None

    def query(self, rows, X, restart):
        g = np.array(self.gradient(X, rows) if self.rowwise else self.gradient(X), dtype=float)
        if self.sigma > 0:
            zeta = self._zeta.take(rows) * (self.sigma / math.sqrt(self.d))
            if self.blind is not None:
                zeta -= (zeta @ self.blind) @ self.blind.T
            g += zeta
        if self.r > 0:
            g += self.r * self._xi.take(rows)
        return g, np.ones(rows.size, dtype=bool)


class ClientData(ABC):
    """Fresh records of m clients, vectorized over seed rows (the sampling model of §4: client j's
    records are i.i.d. from its own 𝒟_j; each is used at most once).

    ``batch_gradient(gen, x, b)`` — for one row: client-wise mean gradients ∇f̂_{B_j}(x) over b
    fresh records per client, shape (m, d).
    ``batch_difference(gen, x, x_prev, b)`` — client-wise ∇f̂_{B_j}(x) − ∇f̂_{B_j}(x_prev), (m, d).
    ``G_sens``/``M_sens``: ‖∇f(x;z) − ∇f(x;z')‖ ≤ 2G_s and
    ‖(∇f(x;z) − ∇f(y;z)) − (∇f(x;z') − ∇f(y;z'))‖ ≤ 2M_s‖x − y‖ for records of one client.
    """

    d: int
    m: int
    G_sens: float
    M_sens: float

    @abstractmethod
    def batch_gradient(self, gen: np.random.Generator, x: np.ndarray, b: int) -> np.ndarray: ...

    @abstractmethod
    def batch_difference(self, gen: np.random.Generator, x: np.ndarray, x_prev: np.ndarray,
                         b: int) -> np.ndarray: ...

    # Several rows at once, (k, m, d), row i from gens[i] only; ``rows`` are the oracle's seed
    # rows (for data whose landscape differs by row; the defaults ignore them).  The defaults
    # call the one-row methods in turn; a subclass may override them with a kernel that draws
    # the same numbers and computes them together (CosineSaddle does: the per-row numpy calls
    # dominated the run).
    def batch_gradients(self, gens: Sequence[np.random.Generator], X: np.ndarray, b: int,
                        rows: np.ndarray | None = None) -> np.ndarray:
        """Rows' ``batch_gradient`` stacked: (len(gens), m, d)."""
        if not len(gens):
            return np.zeros((0, self.m, self.d))
        return np.stack([self.batch_gradient(g, x, b) for g, x in zip(gens, X)])

    def batch_differences(self, gens: Sequence[np.random.Generator], X: np.ndarray,
                          X_prev: np.ndarray, b: int, rows: np.ndarray | None = None
                          ) -> np.ndarray:
        """Rows' ``batch_difference`` stacked: (len(gens), m, d)."""
        if not len(gens):
            return np.zeros((0, self.m, self.d))
        return np.stack([self.batch_difference(g, x, y, b) for g, x, y in zip(gens, X, X_prev)])


class _SpawnedStreams:
    """Row r's child generator ``gen_r.spawn(2)[which]`` (records: 0, noise: 1), built on first
    use: the children's seeds are spawned up front (so each row's numbers are those of
    ``spawn(2)``), a Generator is made only for rows that draw — data that draws nothing (the
    audits' fixed records) costs no generator (making one is most of a 10⁴-row audit's time)."""

    def __init__(self, gens: Sequence[np.random.Generator],
                 sibling: "_SpawnedStreams | None" = None):
        if sibling is None:
            self._seeds = [g.bit_generator.seed_seq.spawn(2) for g in gens]
            self._kinds = [type(g.bit_generator) for g in gens]
            which = 0
        else:
            self._seeds, self._kinds, which = sibling._seeds, sibling._kinds, 1
        self._which = which
        self._gens: list[np.random.Generator | None] = [None] * len(gens)

    def __getitem__(self, r: int) -> np.random.Generator:
        g = self._gens[r]
        if g is None:
            g = self._gens[r] = np.random.Generator(self._kinds[r](self._seeds[r][self._which]))
        return g

    def view(self, rows: np.ndarray) -> "_StreamView":
        return _StreamView(self, rows)


class _StreamView(_SequenceABC):
    """The generators of some rows, made when read (see :class:`_SpawnedStreams`)."""

    def __init__(self, streams: _SpawnedStreams, rows: np.ndarray):
        self._streams, self._rows = streams, rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._streams[int(r)] for r in self._rows[i]]
        return self._streams[int(self._rows[i])]


class AdaDPSpider(Oracle):
    """Algorithm 2 (m = 1) / Algorithm 3 (m > 1): Ada-DP-SPIDER as a stateful oracle.

    Per seed row, with drift ← κ initially (forces O₁):
      if drift ≥ κ (or the row was restarted to x̃, errata SOSP-E4):
          every client j: ĝ_j = ∇f̂_{B_j}(x_{t−1}) + N(0, σ₁²I), |B_j| = b1, σ₁ = z·2G_s/b1;
          drift ← 0
      else:
          every client j: ĝ_j = ĝ_{j,t−1} + ∇f̂_{B_j}(x_{t−1}) − ∇f̂_{B_j}(x_{t−2}) + N(0, σ₂²I),
          |B_j| = b2, σ₂ = z·2M_s‖x_{t−1} − x_{t−2}‖/b2
      server: ĝ = (1/m)Σ_j ĝ_j;  drift ← drift + η²‖ĝ‖²  (shared by all clients).
    Each client's batch is fresh (its records are used once); a row stops (``ok`` False) when a
    client would need more than n records.  Diagnostics per row: samples used per client, O₁ and
    O₂ counts, the ‖ĝ_t − ∇F(x_{t−1})‖ of every query when ``true_gradient`` is given, and the
    injected noise (``noise_sq``: Σ‖noise‖², ``noise_var``: Σσ²·m·d, ``noise_var4``: Σσ⁴·m·d,
    per query type).
    ``observe(kind, row, answer, sigma, x, x_prev)``, if given, is called at every query with
    kind ``"o1"``/``"o2"``, the seed row, each client's release (m, d) (O₁: noisy batch gradient;
    O₂: noisy increment), the per-client noise std and the public points x_{t−1}, x_{t−2}
    (privacy audits, :mod:`empirical.sosp_audit`).
    """

    def __init__(self, data: ClientData, plan: SpiderPlan,
                 rng: np.random.Generator | Sequence[np.random.Generator],
                 true_gradient: Callable[[np.ndarray], np.ndarray] | None = None,
                 observe: Callable | None = None):
        if data.d != plan.d or data.m != plan.m:
            raise ValueError(f"data has (d, m) = ({data.d}, {data.m}) but the plan has "
                             f"({plan.d}, {plan.m})")
        if data.G_sens > plan.G_sens or data.M_sens > plan.M_sens:
            raise ValueError("the plan's sensitivities G_sens, M_sens must bound the data's")
        self.data, self.plan = data, plan
        gens = as_generators(rng)
        self._data_gens = _SpawnedStreams(gens)                  # records
        self._noise_gens = _SpawnedStreams(gens, self._data_gens)    # DP noise
        R, d, m = len(gens), plan.d, plan.m
        self.true_gradient = true_gradient
        self.g_clients = np.zeros((R, m, d))
        self.x_prev = np.zeros((R, d))
        self.drift = np.full(R, np.inf)
        self.samples = np.zeros(R, dtype=np.int64)        # per client
        self.n_o1 = np.zeros(R, dtype=np.int64)
        self.n_o2 = np.zeros(R, dtype=np.int64)
        self.err_sq_sum = np.zeros(R)
        self.err_max = np.zeros(R)
        self.n_queries = np.zeros(R, dtype=np.int64)
        self.o2_sigma_max = np.zeros(R)
        # injected noise, measured: Σ‖added noise‖² and Σ σ²·(m·d) of what the oracle meant to
        # add, per query type (the stored rows compare them: a draw scaled wrongly shows)
        self.noise_sq = {"o1": np.zeros(R), "o2": np.zeros(R)}
        self.noise_var = {"o1": np.zeros(R), "o2": np.zeros(R)}
        self.noise_var4 = {"o1": np.zeros(R), "o2": np.zeros(R)}   # Σσ⁴·m·d (standard errors)
        self.observe = observe

    def query(self, rows, X, restart):
        # All rows of one query type are served together: records and noise are still drawn
        # row by row from each row's own generators (in the order a one-row loop would draw
        # them), the arithmetic is done on the stacked rows.
        p = self.plan
        refresh = restart | (self.drift[rows] >= p.kappa)
        need = np.where(refresh, p.b1, p.b2)
        ok = self.samples[rows] + need <= p.n
        out = np.zeros((rows.size, p.d))
        for kind, sel in (("o1", np.flatnonzero(ok & refresh)),
                          ("o2", np.flatnonzero(ok & ~refresh))):
            if sel.size:
                out[sel] = self._serve(kind, rows[sel], X[sel])
        served = rows[ok]
        if served.size:
            self.drift[served] += p.eta**2 * np.einsum("ij,ij->i", out[ok], out[ok])
            self.n_queries[served] += 1
            if self.true_gradient is not None:
                err = np.linalg.norm(out[ok] - self.true_gradient(X[ok]), axis=1)
                self.err_sq_sum[served] += err**2
                self.err_max[served] = np.maximum(self.err_max[served], err)
        return out, ok

    def _serve(self, kind: str, rows: np.ndarray, X: np.ndarray) -> np.ndarray:
        """One O₁ or O₂ answer for each of ``rows`` (all of one kind) at X: records, noise and
        the bookkeeping; returns the server's averages (len(rows), d)."""
        p = self.plan
        k = rows.size
        gd = self._data_gens.view(rows)
        if kind == "o1":
            sigma = np.full(k, client_noise_std(p.sigma1, p.m))
            clean = self.data.batch_gradients(gd, X, p.b1, rows)
            batch = p.b1
        else:
            diff = X - self.x_prev[rows]
            # ‖x_{t−1} − x_{t−2}‖ as one-row code computes it (np.linalg.norm of a vector is
            # √(x·x) by BLAS dot; a row-wise reduction could differ in the last bit)
            step = np.array([math.sqrt(v.dot(v)) for v in diff])
            sigma = client_noise_std(p.z * o2_sensitivity(p.M_sens, step, p.b2), p.m)
            sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (k,))
            clean = _o2_estimate(self.data, gd, X, self.x_prev[rows], self.g_clients[rows], p.b2,
                                 rows)
            batch = p.b2
        noise = np.zeros((k, p.m, p.d))
        for i in np.flatnonzero(sigma > 0):     # σ₂ = 0 (no step) draws nothing
            noise[i] = sigma[i] * _spider_noise(self._noise_gens[rows[i]], (p.m, p.d))
        gj = clean + noise
        self._account(kind, rows, noise, sigma, batch)
        if self.observe is not None:
            # what each client releases for this query: O₁ its noisy batch gradient, O₂ its
            # noisy increment ĝ_{j,t} − ĝ_{j,t−1}; x = x_{t−1}, x_prev = x_{t−2} (public)
            answer = gj if kind == "o1" else gj - self.g_clients[rows]
            for i, r in enumerate(rows):
                self.observe(kind, int(r), answer[i], float(sigma[i]), X[i].copy(),
                             self.x_prev[r].copy())
        self.g_clients[rows] = gj
        self.x_prev[rows] = X
        return gj.mean(axis=1)

    def _account(self, kind: str, rows: np.ndarray, noise: np.ndarray, sigma: np.ndarray,
                 batch: int) -> None:
        """Counts, records used, the drift reset of O₁, σ₂'s maximum and the injected noise
        (Σ‖noise‖² against Σσ²·m·d) of one query of ``kind`` at ``rows``."""
        p = self.plan
        if kind == "o1":
            self.drift[rows] = 0.0
            self.n_o1[rows] += 1
        else:
            self.o2_sigma_max[rows] = np.maximum(self.o2_sigma_max[rows], sigma)
            self.n_o2[rows] += 1
        self.samples[rows] += batch
        self.noise_sq[kind][rows] += np.sum((noise * noise).reshape(rows.size, -1), axis=1)
        self.noise_var[kind][rows] += sigma * sigma * p.m * p.d
        self.noise_var4[kind][rows] += sigma**4 * p.m * p.d

    def privacy(self, row: int) -> dict:
        """ε guarantee and ε spent of row ``row`` (dp-accounting, RDP, at the plan's δ).

        Records are used at most once, so every record is in exactly one Gaussian release of
        multiplier z (or none): parallel composition makes both the guarantee and what was spent
        ε(GaussianDpEvent(z), δ) (0 spent if the row released nothing)."""
        eps_query = accounting.epsilon(accounting.gaussian_event(self.plan.z), self.plan.delta)
        spent = eps_query if self.n_queries[row] > 0 else 0.0
        return {"epsilon_guarantee": eps_query, "epsilon_spent": spent,
                "epsilon_target": self.plan.epsilon, "delta": self.plan.delta,
                "noise_multiplier": self.plan.z}


# =============================================================================================
# Algorithm 1: Gauss-PSGD
# =============================================================================================
@dataclass
class PSGDResult:
    """Per seed row: output x (R, d); ``certified`` (returned x̃ after Q failed rounds),
    ``capped`` (step cap hit), ``out_of_data`` (oracle could not serve), ``steps`` (oracle
    calls), ``escapes`` (successful escape rounds), ``procedures`` (escape procedures started),
    ``first_escape_step`` (step at which the first procedure's drift reached R, −1 if none),
    ``first_procedure_escaped``."""

    x: np.ndarray
    certified: np.ndarray
    capped: np.ndarray
    out_of_data: np.ndarray
    steps: np.ndarray
    escapes: np.ndarray
    procedures: np.ndarray
    first_escape_step: np.ndarray
    first_procedure_escaped: np.ndarray
    info: dict = field(default_factory=dict)


def gauss_psgd(oracle: Oracle, x0: np.ndarray, *, chi: float, eta: float, radius: float,
               Gamma: int, Q: int, max_steps: int, rows: int | None = None,
               stop_on_first_procedure: bool = False) -> PSGDResult:
    """Algorithm 1 (Gauss-PSGD), vectorized over seed rows with masks.

    Each step queries the oracle once at x_{t−1}:
      normal mode: if ‖ĝ‖ ≤ 3χ start the escape procedure at x̃ = x_{t−1} (ĝ is discarded),
                   else x_t = x_{t−1} − ηĝ;
      escape procedure: Q rounds; each restarts from x̃ (the oracle is told, so a stateful one
                   refreshes) and takes up to Γ steps x_t = x_{t−1} − ηĝ; as soon as
                   ‖x_t − x̃‖ ≥ R the procedure ends (escape) and normal descent continues
                   from x_t; if all Q rounds stay within R, return x̃ (the certificate).
    Line 27 prints ``return x_{t−1}``; the text's x̃ is returned (errata SOSP-E3).  Rows stop at
    ``max_steps`` oracle calls (``capped``, output x_{t−1}) or when the oracle is out of data.
    ``stop_on_first_procedure`` ends a row as soon as its first escape procedure ends (escape
    experiments).  ``x0``: (d,) or (R, d); ``rows`` the number R of rows if x0 is (d,).
    """
    chi, eta = check_positive("chi", chi), check_positive("eta", eta)
    radius = check_positive("radius", radius)
    Gamma, Q = check_int("Gamma", Gamma), check_int("Q", Q)
    max_steps = check_int("max_steps", max_steps)
    x0 = check_finite_array("x0", x0, ndim=(1, 2))
    if x0.ndim == 1:
        R = check_int("rows", rows if rows is not None else 1)
        X = np.tile(x0, (R, 1))
    else:
        X = x0.copy()
        R = X.shape[0]
    d = X.shape[1]
    out = X.copy()
    alive = np.ones(R, dtype=bool)
    certified = np.zeros(R, dtype=bool)
    capped = np.zeros(R, dtype=bool)
    no_data = np.zeros(R, dtype=bool)
    in_esc = np.zeros(R, dtype=bool)
    restart = np.zeros(R, dtype=bool)
    x_tilde = X.copy()
    q = np.zeros(R, dtype=np.int64)
    tau = np.zeros(R, dtype=np.int64)
    steps = np.zeros(R, dtype=np.int64)
    escapes = np.zeros(R, dtype=np.int64)
    procedures = np.zeros(R, dtype=np.int64)
    first_escape = np.full(R, -1, dtype=np.int64)
    first_done = np.zeros(R, dtype=bool)
    first_escaped = np.zeros(R, dtype=bool)
    thr = 3.0 * chi

    while alive.any():
        hit = alive & (steps >= max_steps)
        if hit.any():
            capped[hit] = True
            out[hit] = X[hit]
            alive &= ~hit
        rows_ = np.flatnonzero(alive)
        if rows_.size == 0:
            break
        g, ok = oracle.query(rows_, X[rows_], restart[rows_])
        restart[rows_] = False
        if not ok.all():
            bad = rows_[~ok]
            no_data[bad] = True
            out[bad] = X[bad]
            alive[bad] = False
            g, rows_ = g[ok], rows_[ok]
        steps[rows_] += 1
        esc = in_esc[rows_]
        # --- normal mode -----------------------------------------------------------------
        nm = ~esc
        if nm.any():
            rn, gn = rows_[nm], g[nm]
            small = np.einsum("ij,ij->i", gn, gn) <= thr * thr
            start = rn[small]
            if start.size:
                # escape procedure at x̃ = x_{t−1}; the estimate is discarded; round 1 starts
                in_esc[start] = True
                x_tilde[start] = X[start]
                q[start] = 1
                tau[start] = 0
                restart[start] = True
                procedures[start] += 1
            mv = rn[~small]
            X[mv] -= eta * gn[~small]
        # --- escape procedure ------------------------------------------------------------
        if esc.any():
            re, ge = rows_[esc], g[esc]
            X[re] -= eta * ge
            tau[re] += 1
            diff = X[re] - x_tilde[re]
            far = np.einsum("ij,ij->i", diff, diff) >= radius * radius
            gone = re[far]
            if gone.size:
                in_esc[gone] = False
                escapes[gone] += 1
                first = gone[~first_done[gone]]
                first_escape[first] = steps[first]
                first_escaped[first] = True
                first_done[first] = True
                if stop_on_first_procedure:
                    out[gone] = X[gone]
                    alive[gone] = False
            stay = re[~far]
            over = stay[tau[stay] >= Gamma]
            if over.size:
                q[over] += 1
                fail = over[q[over] > Q]
                if fail.size:
                    certified[fail] = True
                    out[fail] = x_tilde[fail]
                    alive[fail] = False
                    first_done[fail] = True
                again = over[q[over] <= Q]
                X[again] = x_tilde[again]
                tau[again] = 0
                restart[again] = True
    return PSGDResult(x=out, certified=certified, capped=capped, out_of_data=no_data, steps=steps,
                      escapes=escapes, procedures=procedures, first_escape_step=first_escape,
                      first_procedure_escaped=first_escaped,
                      info={"chi": chi, "eta": eta, "radius": radius, "Gamma": Gamma, "Q": Q,
                            "max_steps": max_steps, "d": d})


# =============================================================================================
# Algorithm 4: private model selection
# =============================================================================================
@dataclass
class SelectionResult:
    """Per seed row: index of the selected candidate (−1: none passed), the thresholds used, the
    operator norm of the aggregated Hessian noise and the norm of the aggregated gradient noise
    at every candidate, and the privacy columns."""

    selected: np.ndarray
    grad_threshold: float
    hess_threshold: float
    sigma_grad: float
    sigma_hess: float
    z: float
    hess_error: np.ndarray     # (R, T) ‖∇²F̄(x_t) − ∇²F(x_t)‖_op
    grad_error: np.ndarray     # (R, T) ‖∇F̄(x_t) − ∇F(x_t)‖
    privacy: dict


def _selection_releases(gens: Sequence[np.random.Generator], rows: np.ndarray, X: np.ndarray,
                        n: int, m: int, client_grad_hess: Callable, sigma_g: float,
                        sigma_h: float, observe: Callable | None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 4's noisy client releases for a chunk of rows, averaged over clients:
    (k, T, d) gradients and (k, T, d, d) Hessians.  Row i spawns (records, noise) generators from
    gens[i] and draws its records, then θ, then the Hessian noise's upper triangle."""
    T, d = X.shape
    k = len(gens)
    iu = np.triu_indices(d)
    gj = np.empty((k, m, T, d))
    hj = np.empty((k, m, T, d, d))
    theta = np.empty((k, m, T, d))
    upper = np.empty((k, m, T, iu[0].size))
    for i, gen in enumerate(gens):
        kd, kn = gen.spawn(2)
        gj[i], hj[i] = client_grad_hess(kd, X, n)                # (m, T, d), (m, T, d, d)
        theta[i] = sigma_g * _selection_noise(kn, (m, T, d))
        upper[i] = sigma_h * _selection_noise(kn, (m, T, iu[0].size))
    H = np.zeros((k, m, T, d, d))
    H[..., iu[0], iu[1]] = upper
    H = H + np.swapaxes(H, -1, -2) - H * np.eye(d)               # symmetric, diagonal once
    g_rel, h_rel = gj + theta, hj + H
    if observe is not None:
        for i, r in enumerate(rows):
            observe("gradient", int(r), g_rel[i], sigma_g, X, None)
            observe("hessian", int(r), h_rel[i], sigma_h, X, None)
    return g_rel.mean(axis=1), h_rel.mean(axis=1)


def private_model_selection(candidates: np.ndarray, *, client_grad_hess: Callable,
                            true_grad_hess: Callable, m: int, n: int, epsilon: float,
                            delta: float, alpha: float, G_sens: float, M_sens: float,
                            hessian_lipschitz: float, omega: float = 0.1,
                            rng: np.random.Generator | Sequence[np.random.Generator],
                            observe: Callable | None = None) -> SelectionResult:
    """Algorithm 4 on T candidates x_1..x_T (shape (T, d), the same list for every seed row).

    Every client j (held-out set S_j, |S_j| = n) releases, for each candidate,
      ∇F̄_j(x_t) = ∇f̂_{S_j}(x_t) + θ_{j,t},  θ ~ N(0, σ_g² I_d),  σ_g = z·2G_s/n;
      ∇²F̄_j(x_t) = ∇²f̂_{S_j}(x_t) + H_{j,t}, H symmetric with upper triangle (incl. diagonal)
                    i.i.d. N(0, σ_H²),  σ_H = z·2M_s√d/n  (Frobenius sensitivity ≤ √d × operator);
    2T Gaussian releases per client composed adaptively: z is calibrated by dp-accounting so that
    they are (ε, δ)-DP together (the paper's σ² ∝ T log(1/δ)/(n²ε²), with its d in σ_H²).
    The server averages and returns the first t with
      ‖∇F̄(x_t)‖ ≤ α + τ_g  and  λ_min(∇²F̄(x_t)) ≥ −(√(ρα) + τ_H),
    τ_g = 2G_s√(2 log(8d/ω)/(mn)) + (σ_g/√m)(√d + √(2 log(16/ω))),
    τ_H = 2M_s√(2 log(8d/ω)/(mn)) + (σ_H/√m)(2√d + √(2 log(32/ω)))
    (high-probability bounds on the sampling error and the noise: the paper's thresholds with the
    actual σ's; the Wigner matrix's ‖H‖_op ≈ 2σ√d).

    ``client_grad_hess(gen, X, n)`` → per-client (m, T, d) gradients and (m, T, d, d) Hessians of
    n fresh held-out records at the T candidates; ``true_grad_hess(X)`` → ((T, d), (T, d, d)).
    ``observe(kind, row, answer, sigma, X, None)``, if given, sees each row's per-client releases:
    kind ``"gradient"`` (m, T, d) and ``"hessian"`` (m, T, d, d) (privacy audits).
    """
    X = check_finite_array("candidates", candidates, ndim=2)
    T, d = X.shape
    m, n = check_int("m", m), check_int("n", n)
    epsilon, delta = check_positive("epsilon", epsilon), check_delta(delta)
    alpha = check_positive("alpha", alpha)
    G_sens, M_sens = check_positive("G_sens", G_sens), check_positive("M_sens", M_sens)
    rho_h = check_positive("hessian_lipschitz", hessian_lipschitz)
    omega = check_open_interval("omega", omega, 0.0, 1.0)
    gens = as_generators(rng)
    z = selection_multiplier(epsilon, delta, 2 * T)
    sens_g, sens_h = selection_sensitivities(G_sens, M_sens, d, n)
    sigma_g, sigma_h = z * sens_g, z * sens_h
    tau_g = (2 * G_sens * math.sqrt(2 * math.log(8 * d / omega) / (m * n))
             + sigma_g / math.sqrt(m) * (math.sqrt(d) + math.sqrt(2 * math.log(16 / omega))))
    tau_h = (2 * M_sens * math.sqrt(2 * math.log(8 * d / omega) / (m * n))
             + sigma_h / math.sqrt(m) * (2 * math.sqrt(d) + math.sqrt(2 * math.log(32 / omega))))
    thr_g = alpha + tau_g
    thr_h = math.sqrt(rho_h * alpha) + tau_h
    g_true, h_true = true_grad_hess(X)
    R = len(gens)
    selected = np.full(R, -1, dtype=np.int64)
    hess_err = np.zeros((R, T))
    grad_err = np.zeros((R, T))
    # rows in chunks of ≤ 2^21 Hessian entries (16 MB an array): every row still draws from
    # its own generators, the symmetrisation, averages and eigenvalues run on the chunk
    chunk = max(1, (1 << 21) // (m * T * d * d))
    for lo in range(0, R, chunk):
        rows = np.arange(lo, min(R, lo + chunk))
        g_bar, h_bar = _selection_releases([gens[i] for i in rows], rows, X, n, m,
                                           client_grad_hess, sigma_g, sigma_h, observe)
        grad_err[rows] = np.linalg.norm(g_bar - g_true, axis=-1)
        hess_err[rows] = np.abs(np.linalg.eigvalsh(h_bar - h_true)).max(axis=-1)
        lam = np.linalg.eigvalsh(h_bar)[..., 0]
        passed = (np.linalg.norm(g_bar, axis=-1) <= thr_g) & (lam >= -thr_h)   # (k, T)
        selected[rows] = np.where(passed.any(axis=1), passed.argmax(axis=1), -1)
    eps_g = accounting.epsilon(accounting.gaussian_event(z, 2 * T), delta)
    privacy = {"epsilon_guarantee": eps_g, "epsilon_spent": eps_g, "epsilon_target": epsilon,
               "releases_per_client": 2 * T}
    return SelectionResult(selected=selected, grad_threshold=thr_g, hess_threshold=thr_h,
                           sigma_grad=sigma_g, sigma_hess=sigma_h, z=z, hess_error=hess_err,
                           grad_error=grad_err, privacy=privacy)
