"""Audit of footnote 3's user-level baseline of the user-level SCO paper (Lowy, Liu, Asi):
[FKT20]'s Phased ERM on all nm items, user-level (ε, δ) by group privacy
(:mod:`algorithms.userlevel.fkt20`), with its broken control; registered through
:mod:`empirical.papers.userlevel.audit`.

Claim: user-level (ε, δ) under replace-one of a whole user, ε = m·ε'(z, δ') with ε' the
dp-accounting ε of one item-level Gaussian release (``GroupPrivacy.guarantee_epsilon``).

Neighbouring pairs, searched (:data:`FKT20_CANDIDATES`).  Linear losses f(x, z) = ⟨x, z⟩
(β = 0; one ERM step from x_{i−1} is the exact phase minimiser), honest users' items have gradient
0, and one canary user whose m items all have gradient +g·u in D and −g·u in D′:

* ``phase1.extreme``: user 0 (phase 1), g = L, u = e1 — the whole user moves the phase-1
  minimiser by m·Δ_1 = mLη_1, the group-privacy worst case;
* ``phase1.half``: the same at g = L/2;
* ``phase1.diagonal``: g = L along (e1 + e2)/√2 (the score reads e1 only);
* ``phase2.extreme``: user n/2 (the first of phase 2), g = L, u = e1: its shift mLη_2 is as many
  σ_2 as phase 1's, but phase 1's noise (σ_1 = 4σ_2) adds to the score.

Statistic: the final output's first coordinate (view ``final``).  Later phases see only honest
users, whose zero gradients leave the minimiser at the anchor, so x_k = x_1 + Σ_{i≥2} ξ_i and the
score is Gaussian: on ``phase1.extreme`` its exact ε(δ) is that of N(0, 1) vs N(μ, 1) with
μ = (m/z)/√(1 + Σ_{i=2}^{k} 16^{−(i−1)}) (σ_i/σ_1 = η_i/η_1 = 4^{−(i−1)}), z recomputed here by the
exact Gaussian route (:func:`exact_multiplier`), not read from the algorithm.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq

from algorithms.userlevel.fkt20 import fkt20_group_privacy_erm, group_item_budget, item_epsilon
from algorithms.validation import check_open_interval
from empirical.papers.userlevel.audit_canary import _RELATION, CanaryUsers
from empirical.papers.userlevel.routes import exact_gaussian_epsilon
from empirical.privacy.audit import AuditTarget, register_audit
from empirical.privacy.mutants import with_mutant

__all__ = ["FKT20", "FKT20_CANDIDATES", "fkt20_exact", "exact_multiplier"]

#: n = 64 users (6 phases; phase 1 holds users 0–31), m = 2 items each (group privacy over 2
#: items is nearly tight: the exact user-level ε of phase 1's release is 0.94 of the claim, so
#: the audit can approach it), d = 2, ε = 2, δ = 1e-3 (δ' = δ/(2e^{ε/2}) ≈ 1.8e-4).
FKT20 = dict(n=64, m=2, d=2, epsilon=2.0, delta=1e-3, L=1.0, R=4.0)


def _data(user: int, g: float, u: np.ndarray, side: int) -> CanaryUsers:
    G = np.zeros((FKT20["n"], FKT20["d"]))
    G[user] = (g if side == 0 else -g) * u
    return CanaryUsers(G, FKT20["m"], FKT20["L"], FKT20["R"])


class _GaussBatch:
    """A stand-in generator whose ``standard_normal(d)`` returns ``n`` independent rows: the
    unmodified algorithm then runs ``n`` independent instances at once (its iterate becomes an
    (n, d) array; the phase gradient, the projection and the noise act row by row, and the
    canary's data are the same in every row)."""

    def __init__(self, rng: np.random.Generator, n: int):
        self.rng, self.n = rng, n

    def standard_normal(self, size: int) -> np.ndarray:
        return self.rng.standard_normal((self.n, size))


def _release(user: int, g: float, u: tuple[float, ...]):
    uvec = np.asarray(u, dtype=float)

    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        data = _data(user, g, uvec, side)
        res = fkt20_group_privacy_erm(data, FKT20["epsilon"], FKT20["delta"],
                                      _GaussBatch(rng, trials))
        return np.asarray(res.x)[:, 0]
    return release


_DIAG = (1.0 / math.sqrt(2.0), 1.0 / math.sqrt(2.0))
#: Searched pairs (module docstring): label → (canary user, gradient norm, direction).
FKT20_CANDIDATES = {
    "phase1.extreme": (0, 1.0, (1.0, 0.0)),
    "phase1.half": (0, 0.5, (1.0, 0.0)),
    "phase1.diagonal": (0, 1.0, _DIAG),
    "phase2.extreme": (32, 1.0, (1.0, 0.0)),
}


@lru_cache(maxsize=None)
def _privacy():
    res = fkt20_group_privacy_erm(_data(0, 1.0, np.array([1.0, 0.0]), 0), FKT20["epsilon"],
                                  FKT20["delta"], np.random.default_rng(0))
    return res.privacy


@lru_cache(maxsize=None)
def _claim() -> float:
    return float(_privacy().guarantee_epsilon)


@lru_cache(maxsize=64)
def _claim_at(delta: float) -> float:
    """The claimed profile: user-level ε(δ) = m·ε_item(z, δ_item) through group privacy, the
    item ε from the same dp-accounting PLD as the claim (:func:`item_epsilon`).  The item δ is
    the algorithm's own budget split at δ (:func:`group_item_budget`: δ/(m e^{(m−1)ε/m}), which
    at the design δ is the run's); it is valid while ε_item ≤ ε/m, which holds for every δ ≥
    the design δ.  Below that, δ_item solves m e^{(m−1)ε_item(δ_item)}δ_item = δ (group privacy
    at ε_item itself), taken on the valid side of the root.  Memoised: each ε_item is a PLD."""
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    p = _privacy()
    eps_i, dl_i = group_item_budget(p.target_epsilon, delta, p.m)
    e = item_epsilon(p.z, dl_i)
    if e <= eps_i:
        return p.m * e

    def excess(log_dl: float) -> float:       # log of the group δ over δ: increasing
        x = math.exp(log_dl)
        return math.log(p.m) + (p.m - 1) * item_epsilon(p.z, x) + log_dl - math.log(delta)
    hi = math.log(dl_i)
    lo = hi - 1.0
    while excess(lo) > 0:
        lo -= 1.0
    root = brentq(excess, lo, hi, xtol=1e-6)
    log_dl = root - 1e-6
    while excess(log_dl) > 0:
        log_dl -= 1e-6
    return p.m * item_epsilon(p.z, math.exp(log_dl))


def exact_multiplier(epsilon: float, delta: float) -> float:
    """z with the exact ε(δ) of one Gaussian release (routes.exact_gaussian_epsilon) equal to
    ``epsilon``, by Brent in log z: the item-level multiplier the algorithm should find."""
    return math.exp(brentq(lambda lz: exact_gaussian_epsilon(math.exp(lz), 1, delta) - epsilon,
                           math.log(1e-2), math.log(1e6), xtol=1e-12))


def fkt20_exact() -> float:
    """Exact user-level ε(δ) of the score on ``phase1.extreme`` (module docstring), from the
    item budget (ε/m, δ/(m e^{(m−1)ε/m})) and the phase count ⌊log₂ n⌋ recomputed here."""
    n, m, eps, dl = FKT20["n"], FKT20["m"], FKT20["epsilon"], FKT20["delta"]
    z = exact_multiplier(eps / m, dl / (m * math.exp((m - 1) * eps / m)))
    k = int(math.floor(math.log2(n)))
    spread = math.sqrt(1.0 + sum(16.0 ** -(i - 1) for i in range(2, k + 1)))
    return exact_gaussian_epsilon(z * spread / m, 1, dl)


_NOTE = ("linear losses; honest users' items have gradient 0; one canary user with all m items "
         "at ±g·u: phase 1 (user 0) or 2 (user n/2), g ∈ {L, L/2}, u ∈ {e1, (e1+e2)/√2}; "
         "score x_final[0]")
_CANDS = {k: _release(*v) for k, v in FKT20_CANDIDATES.items()}

register_audit(AuditTarget(
    name="userlevel.fkt20.final", paper="userlevel",
    algorithm="algorithms.userlevel.fkt20.fkt20_group_privacy_erm ([FKT20] Phased ERM through "
              "group privacy, footnote 3), final output", relation=_RELATION,
    delta=FKT20["delta"], claimed_epsilon=_claim, claimed_epsilon_at=_claim_at,
    candidates=_CANDS, view="final",
    trials=100_000, search_trials=10_000, exact_epsilon=fkt20_exact, note=_NOTE))
register_audit(AuditTarget(
    name="userlevel.fkt20.add_remove_sensitivity", paper="userlevel",
    algorithm="[FKT20] Phased ERM calibrated to the add/remove sensitivity Lη_i/2 for its "
              "replace-one claim", relation=_RELATION, delta=FKT20["delta"],
    claimed_epsilon=_claim, claimed_epsilon_at=_claim_at,
    candidates={k: with_mutant("userlevel.fkt20.add_remove_sensitivity", f)
                for k, f in _CANDS.items()},
    view="final", trials=20_000, search_trials=2_000, expect="broken", note=_NOTE))
