"""The audit targets of the harness itself (paper ``core``): the Gaussian mechanism and
full-batch DP-GD with a gradient canary, whose exact ε the audit must approach (its power), and
deliberately broken controls it must catch.  Registered when :mod:`empirical.privacy.audit` is
imported."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from dp_accounting import pld as dpa_pld

from algorithms import accounting
from algorithms.primitives import clip_per_sample
from algorithms.validation import check_open_interval
from empirical.privacy.targets import AuditTarget, ReleaseFn, register_audit


# =============================================================================================
# core targets: power on the Gaussian mechanism and full-batch DP-GD, and broken controls
# =============================================================================================
#: Gaussian mechanism: noise multiplier z, so the shift/σ is μ = 1/z under the pair below.
GAUSS_Z = 1.0
CORE_DELTA = 1e-5
#: Power requirement (stated in docs/privacy.md): a 200k-run-per-side audit of the Gaussian mechanism and
#: of DP-GD with a gradient canary reaches at least this fraction of the exact ε(δ).
POWER = 0.6


def exact_gaussian_epsilon(z: float, count: int = 1, delta: float = CORE_DELTA) -> float:
    """ε(δ) of ``count`` Gaussian releases with noise std z × (the relation's sensitivity), by
    dp-accounting's PLD accountant (tight up to its discretisation).

    The multiplier is relative to the sensitivity of the relation claimed (this code base's
    convention); ``accounting.epsilon`` asks dp-accounting's PLD accountant under
    ADD_OR_REMOVE_ONE for unsampled Gaussian events, which reads it that way (under REPLACE_ONE
    dp-accounting's PLD would double the sensitivity).  The relation is passed explicitly here
    so the intent is visible."""
    return accounting.epsilon(accounting.gaussian_event(z, count), delta, accountant="pld",
                              relation=accounting.ADD_OR_REMOVE_ONE)


def gaussian_profile(z: float, count: int = 1) -> Callable[[float], float]:
    """The profile δ ↦ :func:`exact_gaussian_epsilon` (z, count, δ): the same PLD accountant and
    event, composed once on first use (a composition costs ~0.6 s; each δ is then a query)."""
    composed: list = []

    def at(delta: float) -> float:
        delta = check_open_interval("delta", delta, 0.0, 1.0)
        if not composed:
            acc = dpa_pld.PLDAccountant(neighboring_relation=accounting.ADD_OR_REMOVE_ONE)
            composed.append(acc.compose(accounting.gaussian_event(z, count)))
        return float(composed[0].get_epsilon(delta))

    return at


def _gaussian_release(z_used: float) -> ReleaseFn:
    # Mean of n scalars clipped to [−1, 1] under replace-one: D has the canary +1, D′ has −1,
    # the other records are 0, so the query is ±1/n and its sensitivity 2/n (the largest the
    # relation allows).  The release is the mechanism's own output; the score is the output.
    n = 100
    sens = 2.0 / n

    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        from algorithms.primitives import gaussian_mechanism

        value = np.full((trials, 1), (1.0 if side else -1.0) / n)
        return gaussian_mechanism(rng, value, sens, z_used)[:, 0]

    return release


def _dp_gd_release(z_used: float, clip: bool, T: int, d: int, view: str) -> ReleaseFn:
    """Full-batch DP-GD: w_{t+1} = w_t − η(clip_C(per-example gradients) averaged + N(0, σ²I)),
    σ = z·2C/n (replace-one), T steps, linear per-example losses f(w; x) = ⟨w, x⟩.

    Gradient canary: record 0 is −5C·e1 in D and +5C·e1 in D′ (norm above the clip bound, so
    clipping is what bounds its influence, and opposite signs give the largest replace-one shift
    2C/n); the other records are Ce2/2 (inside the clip).  The gradient is the same at every w,
    so the canary shifts each release by 2C·e1/n and the final iterate by −2ηTC·e1/n.  Score: ⟨Σ_t release_t, e1⟩ (stepwise; the sufficient
    statistic) or −⟨w_T, e1⟩ (final; equal here, since w_T = w_0 − ηΣ_t release_t)."""
    n, C, eta = 50, 1.0, 0.1
    sigma = z_used * 2.0 * C / n

    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        X = np.zeros((n, d))
        X[:, 1] = 0.5 * C
        X[0] = 0.0
        X[0, 0] = 5.0 * C if side else -5.0 * C
        G = clip_per_sample(X, C) if clip else X
        g = G.mean(axis=0)
        w = np.zeros((trials, d))
        stat = np.zeros(trials)
        for _ in range(T):
            r = g + sigma * rng.standard_normal((trials, d))   # the release at this step
            stat += r[:, 0]
            w -= eta * r
        return stat if view == "stepwise" else -w[:, 0]

    return release


_DPGD_T, _DPGD_D = 4, 2
# DP-GD's per-step multiplier for a total of ρ = 1/(2 GAUSS_Z²): z_step = GAUSS_Z·√T.
_DPGD_Z = GAUSS_Z * math.sqrt(_DPGD_T)


def _register_core() -> None:
    rho = 1.0 / (2.0 * GAUSS_Z ** 2)
    gauss_claim = lambda: exact_gaussian_epsilon(GAUSS_Z)  # noqa: E731
    # the claimed profile: the same PLD accountant, noise and count at every δ
    gauss_at = gaussian_profile(GAUSS_Z)
    register_audit(AuditTarget(
        name="core.gaussian", paper="core",
        algorithm="algorithms.primitives.gaussian_mechanism (z = 1)", relation="replace-one",
        delta=CORE_DELTA, claimed_epsilon=gauss_claim, claimed_epsilon_at=gauss_at,
        release=_gaussian_release(GAUSS_Z),
        view="mechanism", trials=1_000_000, exact_epsilon=gauss_claim, min_fraction=POWER,
        note="mean of [−1,1] scalars, canary +1 vs −1: the largest replace-one shift"))
    register_audit(AuditTarget(
        name="core.gaussian.noise_halved", paper="core",
        algorithm="Gaussian mechanism drawing half the noise it claims", relation="replace-one",
        delta=CORE_DELTA, claimed_epsilon=gauss_claim, claimed_epsilon_at=gauss_at,
        release=_gaussian_release(GAUSS_Z / 2),
        view="mechanism", trials=100_000, expect="broken",
        note="claims z = 1, draws z = 1/2"))
    dpgd_claim = lambda: exact_gaussian_epsilon(_DPGD_Z, _DPGD_T)  # noqa: E731
    dpgd_at = gaussian_profile(_DPGD_Z, _DPGD_T)
    for view in ("stepwise", "final"):
        register_audit(AuditTarget(
            name=f"core.dp_gd.{view}", paper="core",
            algorithm=f"full-batch DP-GD with per-example clipping, T = {_DPGD_T}, ρ = {rho:g}",
            relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
            claimed_epsilon_at=dpgd_at,
            release=_dp_gd_release(_DPGD_Z, True, _DPGD_T, _DPGD_D, view), view=view,
            trials=1_000_000, exact_epsilon=dpgd_claim, min_fraction=POWER,
            note="gradient canary 5C·e1 replacing a zero record; linear losses"))
    register_audit(AuditTarget(
        name="core.dp_gd.clipping_skipped", paper="core",
        algorithm="DP-GD that skips per-example clipping (noise still scaled to C)",
        relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
        claimed_epsilon_at=dpgd_at,
        release=_dp_gd_release(_DPGD_Z, False, _DPGD_T, _DPGD_D, "stepwise"), view="stepwise",
        trials=100_000, expect="broken", note="the canary's gradient 5C is not clipped"))
    register_audit(AuditTarget(
        name="core.dp_gd.add_remove_sensitivity", paper="core",
        algorithm="DP-GD claiming replace-one with the add/remove sensitivity C/n (σ halved)",
        relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
        claimed_epsilon_at=dpgd_at,
        release=_dp_gd_release(_DPGD_Z / 2, True, _DPGD_T, _DPGD_D, "stepwise"),
        view="stepwise", trials=100_000, expect="broken",
        note="σ = z·C/n instead of z·2C/n"))


_register_core()
