"""Privacy of Algorithm 1 of Wang et al. (paper id ``kan``): the
paper's calibrations of the noise multiplier κ, Theorem 5.1 in its explicit form F.12 (λ > 0,
zero-out neighbours; constant 8 as stated, errata KAN-E1/E20) and Theorem 5.4 in its explicit
form D.9 (λ = 0, replace-one neighbours), and a tight one: the exact sensitivity of the matrix
mechanism for the participation pattern the sampler really allows
(:func:`algorithms.kan.sampling.participation_pattern`) with ε from dp-accounting
(:func:`tight_epsilon`).  :func:`calibrate` returns the three side by side (:class:`KanPrivacy`);
:func:`algorithms.kan.correlated_noise.dp_sgd_correlated` runs with the κ it sets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import dp_accounting as dpa
import numpy as np
from dp_accounting import rdp as dpa_rdp
from dp_accounting.pld import privacy_loss_mechanism as dpa_plm
from scipy import optimize as _opt
from scipy import special as _special
from scipy import stats as _stats

from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE, NeighboringRelation, wor_search_rdp
from algorithms.kan.sampling import SAMPLERS, check_lam, participation_pattern
from algorithms.primitives import correlated_sensitivity
from algorithms.validation import check_delta, check_int, check_positive

__all__ = ["CALIBRATIONS", "KanPrivacy", "noise_multiplier_thm_f12", "noise_multiplier_thm_d9",
           "epsilon_thm_f12", "epsilon_thm_d9", "f12_conditions", "contiguous_block_sensitivity",
           "gaussian_epsilon", "gaussian_noise_multiplier", "tight_epsilon",
           "tight_noise_multiplier", "calibrate"]


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
    maximiser is the block of the first τ steps (checked against brute force in the
    tests), so this is ``correlated_sensitivity`` with separation 1."""
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


def _rdp_epsilon(event: dpa.DpEvent, delta: float, relation: NeighboringRelation, *,
                 search: bool = False) -> float:
    """ε(δ) of ``event`` from dp-accounting's RDP accountant at :data:`_RDP_ORDERS`.  With
    ``search`` (calibration searches only, never a reported ε) a WOR-sampled Gaussian composed
    ``steps`` times is evaluated by :func:`_wor_search_epsilon`, the accountant's floats faster;
    one function either way, so whatever wraps it (the mutation self-test) wraps both."""
    if search and relation == REPLACE_ONE and _is_composed_wor(event):
        return _wor_search_epsilon(event, delta)
    acc = dpa_rdp.RdpAccountant(orders=_RDP_ORDERS, neighboring_relation=relation)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


# ---------------------------------------------------------------------------------------------
# The sampled-without-replacement RDP inside calibration searches, with dp-accounting's floats
# ---------------------------------------------------------------------------------------------
def _is_composed_wor(event: dpa.DpEvent) -> bool:
    """``event`` is :func:`_wor_event`'s shape: k × WOR-sampled plain Gaussian."""
    return (isinstance(event, dpa.SelfComposedDpEvent)
            and isinstance(event.event, dpa.SampledWithoutReplacementDpEvent)
            and isinstance(event.event.event, dpa.GaussianDpEvent))


def _wor_search_epsilon(event: dpa.SelfComposedDpEvent, delta: float) -> float:
    """The accountant's ε for :func:`_wor_event`'s event, its own steps spelt out: rdp =
    0 + count·RDP(q = sample/population, σ), then its conversion; the RDP from
    :func:`wor_search_rdp` (dp-accounting's floats, ≈ 4× faster at these orders)."""
    wor = event.event
    orders = np.array(_RDP_ORDERS)
    rdp = np.zeros_like(orders) + event.count * wor_search_rdp(
        wor.sample_size / wor.source_dataset_size, wor.event.noise_multiplier, orders)
    return float(dpa_rdp.compute_epsilon(orders, rdp, delta)[0])


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
    (:func:`gaussian_epsilon`) and evaluates the WOR accountant's RDP by :func:`_wor_rdp` (the
    same floats, faster); only calibration searches use it.
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
        best = _rdp_epsilon(ev, delta, relation, search=not confirm)
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
