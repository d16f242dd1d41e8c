"""Privacy audits of DP-SSGD (Algorithm 1 of Varshney, Thakurta, Jain) inside the amplification
range of Theorem 3.1, split from :mod:`empirical.papers.linreg.audit` (which holds the fixed-data
stream, the injected bugs, the DP-AMBSSGD/DP-STAT/fixed-clip targets and the paper's mutants).

The claimed ε is Theorem 3.1's amplified ε (``dp_ssgd_privacy``: Feldman–McMillan–Talwar's closed
form on ε₀ from dp-accounting at δ₀ = δ/(2n)), at the δ it holds at (LR-E7).  The canary is one
record (e1, ∓Y), Y ≫ ζ, among zero records, read in each run's own random order (the algorithm's
permutation).  Two views:

* ``linreg.dp_ssgd``: the final output w̄; the tail average over n/2 iterates dilutes one step's
  shift by ≈ √(n/2), so this view has essentially no power (reported, not hidden); its control
  ``linreg.dp_ssgd.noise_removed`` shows it can fail;
* ``linreg.dp_ssgd.stepwise``: the per-step releases through the algorithm's ``observe`` hook
  (statistic searched: the likelihood ratio with the canary's position uniform, or the largest
  minus the smallest release); its control ``linreg.dp_ssgd.unshuffled`` (no permutation, held to
  the amplified ε) is caught only by this view.
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from algorithms.linreg import adaptive_clipping as lr
from empirical.papers.linreg.audit import DELTA, FixedStream, _Y, _with, noise_scaled
from empirical.privacy.audit import AuditTarget, exact_gaussian_epsilon, register_audit, spawn_rows

__all__ = ["ssgd_claim", "ssgd_step_claim", "SSGD_DELTA", "SSGD_STEP_DELTA",
           "amplified_epsilon_at", "ssgd_claim_at", "ssgd_step_claim_at"]


#: n = 1000, α = 4: ε₀ ≈ 1.40 at δ₀ = δ/(2n) ≤ log(n/(16 log(8/δ))) ≈ 1.53 (in range); amplified
#: ε ≈ 0.84 at δ ≈ 2.4·10⁻⁵ (LR-E7) against 0.87 for one unshuffled step at that δ.
_SSGD_N, _SSGD_ALPHA, _SSGD_ZETA, _SSGD_ETA = 1000, 4.0, 1.0, 0.5
_SSGD_GROUP = 2000   # rows per dp_ssgd call: its data and noise arrays are rows × n × d


def _ssgd_privacy() -> dict:
    return lr.dp_ssgd_privacy(_SSGD_ALPHA, _SSGD_N, DELTA)


def ssgd_claim() -> float:
    """Theorem 3.1's amplified ε (``dp_ssgd_privacy``: Feldman–McMillan–Talwar closed form on ε₀
    from dp-accounting at δ₀ = δ/(2n)); NaN outside the theorem's range."""
    return float(_ssgd_privacy()["epsilon_amplified"])


def _ssgd_delta() -> float:
    """The δ at which the amplified ε holds, as the module reports it (``delta_amplified``:
    δ/2 + (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ₀, not δ itself: LR-E7; tests/test_linreg_algorithms.py
    recomputes it)."""
    return float(_ssgd_privacy()["delta_amplified"])


SSGD_DELTA = _ssgd_delta()


def amplified_epsilon_at(alpha: float, n: int, delta: float) -> float:
    """Theorem 3.1's amplified ε of DP-SSGD (multiplier α, n records) *at the final δ*
    ``delta``: ``dp_ssgd_privacy`` reports ε at δ_amplified(δ_in) = δ_in/2 + (e^ε + 1)(1 +
    e^{−ε₀}/2)·n·δ_in/(2n) for an input δ_in (LR-E7), increasing in δ_in and above it, so
    δ_in ∈ (0, ``delta``) solves δ_amplified(δ_in) = ``delta`` (Brent on log δ).  The theorem's
    range ε₀ ≤ log(n/(16 log(4/δ̂))) holds for δ_in above an edge (ε₀ falls as δ_in grows); NaN
    where the root lies below that edge (the theorem claims nothing at ``delta`` there)."""
    def f(log_d: float) -> float:
        amp = lr.dp_ssgd_privacy(alpha, n, math.exp(log_d))["delta_amplified"]
        return math.log(amp) - math.log(delta)     # NaN outside the theorem's range

    hi = math.log(delta)
    if not f(hi) > 0:
        return math.nan
    lo = hi
    for _ in range(12):                  # δ_amplified/δ_in < 2¹²: a bracket within 12 halvings
        lo, prev = lo - math.log(2.0), lo
        v = f(lo)
        if math.isnan(v):
            # the range's edge lies in (lo, prev): bisect on validity, then the edge decides
            good, bad = prev, lo
            for _ in range(60):
                mid = 0.5 * (good + bad)
                good, bad = (mid, bad) if not math.isnan(f(mid)) else (good, mid)
            if f(good) > 0:
                return math.nan
            lo = good
            break
        if v <= 0:
            break
        hi = lo
    else:
        return math.nan
    d_in = math.exp(brentq(f, lo, hi, xtol=1e-14, rtol=1e-14))
    return float(lr.dp_ssgd_privacy(alpha, n, d_in)["epsilon_amplified"])


def ssgd_claim_at(delta: float) -> float:
    """The claimed profile of ``linreg.dp_ssgd``: :func:`amplified_epsilon_at` (its value at
    ``SSGD_DELTA`` is :func:`ssgd_claim`, up to the root's tolerance)."""
    return amplified_epsilon_at(_SSGD_ALPHA, _SSGD_N, delta)


def _ssgd_canary_runs(side: int, rng: np.random.Generator, trials: int, *, n: int, alpha: float,
                      shuffle: bool, score: Callable, pair: str = "flip") -> np.ndarray:
    """DP-SSGD on the canary data set, ``trials`` runs in groups of ``_SSGD_GROUP`` rows:
    record 0 is (e1, ∓Y) (clipped gradient ±ζ·e1; ``pair="zero"``: (e1, −Y) against (0, 0)),
    the n − 1 others (0, 0) (gradient 0), read in each run's own random order when
    ``shuffle``.  ``score(rows, run)`` turns one group into its scores, ``run(**kw)`` being
    ``dp_ssgd`` on that group (kw: its ``observe``)."""
    X, y = np.zeros((n, 1)), np.zeros(n)
    X[0, 0], y[0] = 1.0, (_Y if side else -_Y)
    if pair == "zero" and side:
        X[0, 0], y[0] = 0.0, 0.0
    rows = spawn_rows(rng, trials)
    out = []
    for i in range(0, trials, _SSGD_GROUP):
        group = rows[i:i + _SSGD_GROUP]
        run = functools.partial(lr.dp_ssgd, FixedStream.of(X, y, shuffle=shuffle), n,
                                zeta=_SSGD_ZETA, alpha=alpha, eta=_SSGD_ETA, rng=group,
                                delta=DELTA)
        out.append(score(len(group), run))
    return np.concatenate(out)


def _ssgd_release(side: int, rng: np.random.Generator, trials: int,
                  pair: str = "flip") -> np.ndarray:
    """Canary (e1, ∓1e12) among n − 1 zero records, shuffled per run; score −w̄₁."""
    return _ssgd_canary_runs(side, rng, trials, n=_SSGD_N, alpha=_SSGD_ALPHA, shuffle=True,
                             score=lambda rows, run: -run().w[:, 0], pair=pair)


def _ssgd_release_zero(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
    return _ssgd_release(side, rng, trials, pair="zero")


# ---------------------------------------------------------------------------------------------
# DP-SSGD, stepwise view through the observe hook
# ---------------------------------------------------------------------------------------------
#: n = 4000, α = 2.25: ε₀ ≈ 2.68 (in range, ≤ 2.91); amplified ε ≈ 0.97 at δ ≈ 2.4·10⁻⁵ (LR-E7),
#: against 1.65 for one step seen on its own at that δ: an unshuffled DP-SSGD held to the amplified
#: ε breaks its claim by ≈ 1.7×, which a per-step audit can see and a final-output audit cannot.
_SSGD_STEP_N, _SSGD_STEP_ALPHA = 4000, 2.25


class _FirstReleaseRead(Exception):
    """Raised by the observer once step 0 is read: the score is a function of that release only
    (post-processing), so the remaining n − 1 steps need not be run."""


def _ssgd_step_privacy() -> dict:
    return lr.dp_ssgd_privacy(_SSGD_STEP_ALPHA, _SSGD_STEP_N, DELTA)


def ssgd_step_claim() -> float:
    """The amplified ε the module reports for the stepwise instance (n = 4000)."""
    return float(_ssgd_step_privacy()["epsilon_amplified"])


class _StepScores:
    """Observer of DP-SSGD's releases (coordinate 1, in units of the noise std).

    ``mode="mixture"``: the likelihood ratio of "the canary's step is +μ somewhere" against
    "−μ somewhere" with the position uniform (what shuffling makes it), μ = ζ/(2ζα) = 1/(2α):
    log Σ_t e^{μz_t} − log Σ_t e^{−μz_t}, accumulated online (O(rows) memory).  ``mode="first"``:
    z_0, the release of step 0, where an unshuffled run puts the canary (the run is stopped
    there).  ``mode="extremes"``: max_t z_t − max_t(−z_t), which needs no μ (a search
    candidate)."""

    def __init__(self, rows: int, mode: str, mu: float) -> None:
        self.mode, self.mu = mode, mu
        self.plus = np.full(rows, -np.inf)
        self.minus = np.full(rows, -np.inf)
        self.first = np.zeros(rows)

    def __call__(self, kind: str, t: int, rows: np.ndarray, released: np.ndarray,
                 sigma: np.ndarray) -> None:
        z = released[:, 0] / sigma
        if self.mode == "first":
            self.first[rows] = z
            raise _FirstReleaseRead
        if self.mode == "extremes":
            # the largest and the smallest release: where the canary's step sits, whatever σ
            np.maximum(self.plus, z, out=self.plus)
            np.maximum(self.minus, -z, out=self.minus)
            return
        np.logaddexp(self.plus, self.mu * z, out=self.plus)
        np.logaddexp(self.minus, -self.mu * z, out=self.minus)

    def score(self) -> np.ndarray:
        return self.first if self.mode == "first" else self.plus - self.minus


def _ssgd_step_release(shuffle: bool, mode: str) -> Callable:
    """Scores of the per-step releases of the canary data set (:func:`_ssgd_canary_runs`), read
    through ``observe``."""
    def score(rows: int, run: Callable) -> np.ndarray:
        obs = _StepScores(rows, mode, 1.0 / (2.0 * _SSGD_STEP_ALPHA))
        with contextlib.suppress(_FirstReleaseRead):
            run(observe=obs)
        return obs.score()

    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        return _ssgd_canary_runs(side, rng, trials, n=_SSGD_STEP_N, alpha=_SSGD_STEP_ALPHA,
                                 shuffle=shuffle, score=score)
    return release


SSGD_STEP_DELTA = float(_ssgd_step_privacy()["delta_amplified"])


def ssgd_step_claim_at(delta: float) -> float:
    """The claimed profile of ``linreg.dp_ssgd.stepwise``: :func:`amplified_epsilon_at`."""
    return amplified_epsilon_at(_SSGD_STEP_ALPHA, _SSGD_STEP_N, delta)


register_audit(AuditTarget(
    name="linreg.dp_ssgd", paper="linreg",
    algorithm=f"algorithms.linreg.adaptive_clipping.dp_ssgd (Algorithm 1), n = {_SSGD_N}, "
              f"α = {_SSGD_ALPHA:g}, amplified ε (Thm 3.1 via FMT21)",
    relation="replace-one", delta=SSGD_DELTA, claimed_epsilon=ssgd_claim,
    claimed_epsilon_at=ssgd_claim_at,
    candidates={"flip": _ssgd_release,
                "vs zero record": _ssgd_release_zero},
    view="final", trials=4_000, full_trials=20_000, search_trials=1_000,
    exact_epsilon=lambda: exact_gaussian_epsilon(_SSGD_ALPHA, 1, DELTA),
    note="canary (e1, ∓Y) among zero records, per-run shuffle; final output only (the "
         "per-step view is linreg.dp_ssgd.stepwise): one step's shift is diluted ≈ √(n/2) by "
         "the tail average, so no power"))

register_audit(AuditTarget(
    name="linreg.dp_ssgd.stepwise", paper="linreg",
    algorithm=f"algorithms.linreg.adaptive_clipping.dp_ssgd (Algorithm 1), n = {_SSGD_STEP_N}, "
              f"α = {_SSGD_STEP_ALPHA:g}, amplified ε (Thm 3.1 via FMT21), per-step releases",
    relation="replace-one", delta=SSGD_STEP_DELTA, claimed_epsilon=ssgd_step_claim,
    claimed_epsilon_at=ssgd_step_claim_at,
    candidates={"mixture": _ssgd_step_release(True, "mixture"),
                "extremes": _ssgd_step_release(True, "extremes")},
    view="stepwise", trials=4_000, full_trials=20_000, search_trials=1_000,
    exact_epsilon=lambda: exact_gaussian_epsilon(_SSGD_STEP_ALPHA, 1, SSGD_STEP_DELTA),
    note="canary (e1, ∓Y) among zero records, per-run shuffle; statistic searched: the "
         "likelihood ratio of the n releases with the canary's position uniform, or the largest "
         "minus the smallest release (exact ε: one step on its own, an upper bound on what the "
         "shuffled view can reach)"))

# --- broken controls -----------------------------------------------------------------------
register_audit(AuditTarget(
    name="linreg.dp_ssgd.noise_removed", paper="linreg",
    algorithm="DP-SSGD drawing 1e-6 of its noise (shows the final-view DP-SSGD audit can fail)",
    relation="replace-one", delta=SSGD_DELTA, claimed_epsilon=ssgd_claim,
    claimed_epsilon_at=ssgd_claim_at,
    release=_with("_streams", noise_scaled(1e-6), _ssgd_release), view="final",
    trials=2_000, expect="broken",
    note="the canary's clipped step moves w̄ by −ηζ·(its weight in the tail average) > 0 "
         "wherever the shuffle puts it, so the sign of w̄₁ separates D from D′"))
register_audit(AuditTarget(
    name="linreg.dp_ssgd.unshuffled", paper="linreg",
    algorithm="DP-SSGD without its random permutation, held to the amplified ε (per-step view; "
              "the final-output view cannot see this break)",
    relation="replace-one", delta=SSGD_STEP_DELTA, claimed_epsilon=ssgd_step_claim,
    claimed_epsilon_at=ssgd_step_claim_at,
    release=_ssgd_step_release(False, "first"), view="stepwise", trials=60_000,
    expect="broken",
    note="the canary is record 0 and, unshuffled, always step 0: its release is a Gaussian "
         "mechanism with multiplier α (ε 1.65 at this δ) against the amplified claim 0.97"))
