"""Parameters of Gauss-PSGD + Ada-DP-SPIDER (Tao et al., "Second-Order Convergence in Private
Stochastic Non-Convex Optimization"): Theorem 2 (m = 1) and
Theorem 3 (m > 1) with parameters (5), Lemma 1's round length Γ, Lemma 2's round count Q, and
Remark 2's fixed-point design of α from Lemma 7's (Lemma 9's) noise.  In this paper ρ is the
Hessian-Lipschitz constant (``hessian_lipschitz`` here) and m the number of clients.

* :func:`spider_plan` — every parameter (b1, b2, κ, η, χ, R, Γ, Q, σ₁, step cap) of a run at a
  target accuracy α, as a :class:`SpiderPlan`.
* :func:`spider_design` — the smallest α with α = 4c_χψ(α; κ) over κ (:class:`Design`), ψ from
  :func:`design_noise`.
* :func:`practical_gamma`, :func:`escape_rounds` — Lemma 1's Γ and Lemma 2's Q.

Practical parametrization.  The paper's constants (s ≥ (80c)², unknown C, c, c1, c2, the log
factor μ) make every run vacuous at feasible sizes.  We set ι = s = μ = 1 and keep every
functional form of parameters (5) and of Theorem 2: χ = α/4, η = √(ρα)/M², R = √(α/ρ),
b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉}, κ of eq. 104 (with the Gaussian mechanism's
8 log(1.25/δ) kept where the theorem has log(1/δ)), and
Γ = ⌈(log(R√(2η√(ρα))/(η r_c)) + 2)/(η√(ρα))⌉ (the time growth at rate η√(ρα) needs to carry
noise of per-coordinate size r_c out to R: Lemma 1's 𝔟(Γ)ηr ≥ R; it carries the log d and
log(1/(ηr)) of the paper's μ), Q = ⌈ln(1/ω₀)/ln(8/7)⌉ (Lemma 2 with log₂, errata SOSP-E3) or a
given Q.  The accuracy α is the caller's: the experiments use Remark 2's fixed point
(:func:`spider_design`) with ONE constant c_χ held fixed across a sweep.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from algorithms.sosp.privacy import gaussian_multiplier, o1_sensitivity
from algorithms.validation import (check_delta, check_int, check_nonnegative, check_open_interval,
                                   check_positive)

__all__ = ["SpiderPlan", "spider_plan", "Design", "spider_design", "design_noise",
           "practical_gamma", "escape_rounds"]


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
