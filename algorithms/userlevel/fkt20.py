"""Footnote 3's user-level baseline of the user-level SCO paper (Lowy, Liu, Asi,
footnote 3): an optimal item-level algorithm, [FKT20]'s Phased ERM
(Feldman, Koren, Talwar 2020, §4, localisation with output perturbation), run on all nm items at
item-level (ε/m, δ') and made user-level (ε, δ) by group privacy over a user's m items.

Phase i (i = 1, …, k) takes the next n_i = ⌊n/2^i⌋ users (N_i = n_im items, disjoint phases),
η_i = η·4^{−i} with η = (R/L)·min(4/√(nm), ε'/√(d log(1/δ'))), solves
x̂_i = argmin_{x∈𝒳} (1/N_i)Σ f(x, z) + ‖x − x_{i−1}‖²/(η_iN_i), and releases
x_i = x̂_i + N(0, σ_i²I).  Replacing one item moves x̂_i by at most Δ_i = Lη_i (the regulariser is
2/(η_iN_i)-strongly convex, the empirical gradient moves by ≤ 2L/N_i); σ_i = zΔ_i with z calibrated
by dp-accounting (PLD) to (ε', δ') per release; disjoint phases compose in parallel.  Group privacy
(m items per user): (ε', δ') item-level gives (mε', m e^{(m−1)ε'}δ') user-level, so
ε' = ε/m and δ' = δ/(m e^{(m−1)ε/m}).

The ERM is solved by ``erm_steps`` projected gradient steps of size 1/(β + a_i), a_i = 2/(η_iN_i),
on the phase's user-mean gradients; on an isotropic quadratic (∇²f = I, β = 1) one step from any
point is the exact constrained minimiser (the projection of the unconstrained one), which is
what the experiments run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from functools import lru_cache

from dp_accounting.pld import privacy_loss_distribution as pld

from algorithms.accounting import ADD_OR_REMOVE_ONE
from algorithms.userlevel.accounting import RunResult, gaussian_noise
from algorithms.userlevel.data import UserData
from algorithms.validation import check_delta, check_int, check_interval

__all__ = ["GroupPrivacy", "fkt20_group_privacy_erm", "group_item_budget", "item_epsilon",
           "calibrate_item_gaussian", "exact_item_multiplier", "phase_sensitivity"]


@lru_cache(maxsize=1024)
def item_epsilon(z: float, delta: float) -> float:
    """ε at δ of one Gaussian release with noise multiplier z, replace-one, from dp-accounting's
    privacy-loss distribution (pessimistic estimate: an upper bound; tails truncated at
    e^{−60} ≪ δ).  A PLD rather than RDP: group privacy needs item-level ε' = ε/m down to ~10⁻³
    and δ' ~ 10⁻¹⁷, below the RDP conversion's floor log(1/δ)/(α_max − 1) and the PLD
    accountant's default truncation (10⁻¹⁵).

    z is relative to the replace-one sensitivity Δ_i (the largest move of x̂_i when one item is
    replaced), so the two output laws are N(0, z²) and N(1, z²): dp-accounting's Gaussian PLD
    under ADD_OR_REMOVE_ONE is exactly that pair, whereas under REPLACE_ONE it shifts by 2 × the
    sensitivity given and would price twice the noise needed (errata UL-E28)."""
    d = pld.from_gaussian_mechanism(z, sensitivity=1.0, pessimistic_estimate=True,
                                    value_discretization_interval=1e-5,
                                    log_mass_truncation_bound=-60.0,
                                    neighboring_relation=ADD_OR_REMOVE_ONE)
    return float(d.get_epsilon_for_delta(delta))


@lru_cache(maxsize=256)
def exact_item_multiplier(target_epsilon: float, delta: float) -> float:
    """The z at which one Gaussian release N(0, z²) vs N(1, z²) has exactly ε(δ) = target
    (Balle and Wang 2018, Theorem 8: δ = Φ(1/(2z) − εz) − e^ε Φ(−1/(2z) − εz)), solved in log z
    with the normal CDF in logs, so that δ down to 10⁻³⁰⁰ is resolved."""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr

    def log_delta_gap(log_z: float) -> float:
        z = math.exp(log_z)
        a, b = 0.5 / z - target_epsilon * z, -0.5 / z - target_epsilon * z
        la, lb = log_ndtr(a), log_ndtr(b)
        ratio = target_epsilon + lb - la
        if ratio >= 0.0:        # e^ε Φ(b) ≥ Φ(a): the pair is (ε, 0)-indistinguishable
            return -1e3
        return la + math.log(-math.expm1(ratio)) - math.log(delta)

    return math.exp(brentq(log_delta_gap, math.log(1e-2), math.log(1e6), xtol=1e-12))


def calibrate_item_gaussian(target_epsilon: float, delta: float, rtol: float = 1e-4) -> float:
    """Smallest z (to relative ``rtol``, on the private side) with item_epsilon(z, δ) ≤ target:
    bisection in log z (ε is decreasing in z).  The PLD's pessimistic ε is above the exact one,
    so its threshold lies above the exact multiplier z* (:func:`exact_item_multiplier`): the
    bisection starts on [z*, z*(1 + 2·10⁻³)] and widens the upper end until it is private,
    which needs a few PLDs where [10⁻², 10⁶] needs twenty."""
    try:
        z_star = exact_item_multiplier(target_epsilon, delta)
        lo, hi = math.log(z_star), math.log(z_star) + 2e-3
    except (ValueError, OverflowError):
        lo, hi = math.log(1e-2), math.log(1e6)
    while item_epsilon(math.exp(hi), delta) > target_epsilon:
        if hi >= math.log(1e6):
            raise ValueError(f"target_epsilon {target_epsilon!r} needs a noise multiplier above 1e6")
        lo, hi = hi, min(hi + 2.0 * (hi - lo), math.log(1e6))
    while hi - lo > rtol:
        mid = 0.5 * (lo + hi)
        if item_epsilon(math.exp(mid), delta) > target_epsilon:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def phase_sensitivity(L: float, eta_i: float) -> float:
    """Δ_i = Lη_i: replacing one of the N_i items moves the empirical gradient by ≤ 2L/N_i, and
    the phase objective is a_i = 2/(η_iN_i)-strongly convex, so x̂_i moves by ≤ (2L/N_i)/a_i."""
    return L * eta_i


def group_item_budget(epsilon: float, delta: float, m: int) -> tuple[float, float]:
    """Item-level (ε', δ') whose group privacy over m items is user-level (ε, δ):
    ε' = ε/m, δ' = δ/(m e^{(m−1)ε'})."""
    m = check_int("m", m)
    eps_i = epsilon / m
    return eps_i, delta / (m * math.exp((m - 1) * eps_i))


@dataclass(frozen=True)
class GroupPrivacy:
    """User-level (ε, δ) of an item-level Gaussian release (noise multiplier z, one release per
    disjoint phase) through group privacy over m items: ε_user = m·ε_item(z, δ_item) with
    ε_item from dp-accounting, δ_user = m e^{(m−1)ε/m}δ_item (≥ the group-privacy δ at ε_item).  ``released``: whether any
    phase released (spent = 0 otherwise)."""

    target_epsilon: float
    z: float
    m: int
    delta_item: float
    released: bool = True

    @property
    def item_epsilon(self) -> float:
        return item_epsilon(self.z, self.delta_item)

    @property
    def guarantee_epsilon(self) -> float:
        return self.m * self.item_epsilon

    @property
    def spent_epsilon(self) -> float:
        return self.guarantee_epsilon if self.released else 0.0

    @property
    def guarantee_delta(self) -> float:
        # group privacy at the budgeted ε' = ε/m ≥ item_epsilon (calibration stays on the
        # private side), so m e^{(m−1)ε'}δ' = δ bounds m e^{(m−1)ε_item}δ' as well
        return self.m * math.exp((self.m - 1) * self.target_epsilon / self.m) * self.delta_item


def fkt20_group_privacy_erm(data: UserData, epsilon: float, delta: float,
                            rng: np.random.Generator, *, erm_steps: int = 1,
                            noise: bool = True) -> RunResult:
    """[FKT20] Phased ERM on all n·m items, user-level (ε, δ)-DP by group privacy (module
    docstring).  ``noise=False`` drops the output noise (non-private reference)."""
    eps = check_interval("epsilon", epsilon, 0.0, 10.0, closed_hi=True)
    if eps <= 0:
        raise ValueError(f"epsilon must be in (0, 10], got {epsilon!r}")
    dl = check_delta(delta)
    erm_steps = check_int("erm_steps", erm_steps)
    n, m, d, L, R = data.n, data.m, data.d, data.L, data.R
    eps_i, dl_i = group_item_budget(eps, dl, m)
    N = n * m
    eta = (R / L) * min(4.0 / math.sqrt(N), eps_i / math.sqrt(d * math.log(1.0 / dl_i)))
    z = calibrate_item_gaussian(eps_i, dl_i)
    g0 = data.grad_evals
    x = data.center.copy()
    start, phases = 0, []
    for i in range(1, int(math.floor(math.log2(n))) + 1):
        n_i = n // 2 ** i
        if n_i < 1:
            break
        users = np.arange(start, start + n_i)
        start += n_i
        N_i = n_i * m
        eta_i = eta / 4.0 ** i
        a_i = 2.0 / (eta_i * N_i)
        step = 1.0 / (data.beta + a_i)
        anchor, y = x, x.copy()
        for _ in range(erm_steps):
            grad = data.user_mean_gradients(y, users).mean(axis=0) + a_i * (y - anchor)
            y = data.project(y - step * grad)
        sens = phase_sensitivity(L, eta_i)
        sigma = z * sens
        x = y + (gaussian_noise(rng, sigma, d) if noise else 0.0)
        phases.append({"i": i, "n_i": n_i, "N_i": N_i, "eta_i": eta_i, "a_i": a_i,
                       "sensitivity": sens, "sigma_i": sigma, "z": z})
    if not phases:
        raise ValueError(f"n must be an integer >= 2 for a phase, got {n}")
    priv = GroupPrivacy(eps, z, m, dl_i, released=noise)
    return RunResult(x=x, grad_evals=data.grad_evals - g0, privacy=priv, phases=phases,
                     info={"eta": eta, "item_epsilon": eps_i, "item_delta": dl_i,
                           "phases": len(phases)})
