"""Algorithm 3 (DP-STAT) of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression
via Adaptive Clipping": a private approximate maximum of |residuals| by doubling (Lemma 3.10), the
count query it noises, and that query's replace-one sensitivity (1).  Design, streams and the zCDP
accounting it reports are :mod:`algorithms.linreg.design`'s."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from algorithms.linreg.design import (GAMMA_SLACK, QUANTILE_SLACK, Observer, _check_observer,
                                      _gaussian_rho, _measures, gaussian_noise)
from algorithms.primitives import as_generators
from algorithms.validation import check_finite_array, check_int, check_positive

__all__ = ["dp_stat", "DpStatResult", "count_sensitivity", "residual_count"]


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
