"""Privacy audits and mutants of the linear-regression paper's algorithms (see
:mod:`empirical.privacy.audit`, :mod:`empirical.privacy.mutants`; loaded by :mod:`empirical.privacy.audit` when present).

Algorithms (``algorithms.linreg.adaptive_clipping``, called through the module so that the
mutants' patches reach them): Algorithm 2 (DP-AMBSSGD with DP-STAT), Algorithm 3 (DP-STAT
alone), the fixed-clip minibatch baseline (``dp_ambssgd(clip="fixed")``) and Algorithm 1
(DP-SSGD).  All claim privacy under **replace-one** neighbours (errata LR-E2: the proofs'
sensitivities 2ζ_t/b and 2ηζ are replace-one), so every pair below differs by replacing one
record.

Fixed data.  The algorithms draw their data from ``design.sample(gens, m)`` (an i.i.d. stream).
An audit needs a fixed D, so :class:`FixedStream` is a ``LinearRegressionDesign`` whose
``sample`` returns the next m records of a fixed list (the same for every run; it wraps around
if an algorithm reads more than n records, as a finite data set would be re-read).  For
Algorithm 2 the records are consumed in list order (no shuffle): its claim rests on parallel
composition (each record enters one mechanism), which holds for every fixed permutation, so a
fixed order is a stronger test than a shuffled one.  For Algorithm 1 the claimed ε comes from
amplification by shuffling, so :class:`FixedStream` draws each run's permutation of D from that
run's own data generator (the algorithm's random permutation).

Views.  Algorithms 2 and 3 are audited through the **final output** (``Result.w``) on a small
instance, or the released γ of DP-STAT (mechanism view).  For Algorithm 2 the instance has T = 1
phase, so w̄ = w_1 = −η·(the one noisy gradient release): the final view *is* the stepwise view
there and loses nothing.  For Algorithm 1 the tail average over n/2 iterates dilutes one step's
shift by ≈ √(n/2), so the final-output audit of DP-SSGD has essentially no power (reported, not
hidden); DP-SSGD is therefore also audited **per step** through the algorithms' ``observe``
hook (``observe(kind, t, rows, released, sigma)``, called with ``kind="grad"`` and the noisy
gradient (R, d) and its std (R,) at each step of ``dp_ambssgd``/``dp_ssgd``, and ``kind="stat"``
with DP-STAT's noisy count and std at each round): ``linreg.dp_ssgd.stepwise`` (honest) and
``linreg.dp_ssgd.unshuffled`` (broken control, caught only by this view).

Targets (claimed ε from dp-accounting, read off the module's own reported guarantee so that an
accountant bug shows up in the claim):

* ``linreg.dp_ambssgd`` — pair search over a gradient canary (x = e1, y = ∓Y with Y ≫ ζ, in the
  gradient batch: clipped gradient ±ζ·e1, the largest replace-one shift 2ζ/b, against noise
  α·2ζ/b: exactly a Gaussian mechanism with multiplier α) with DP-STAT's grid undithered or
  dithered, and a DP-STAT canary (a stat point with residual 0 vs 8B);
* ``linreg.dp_stat`` — DP-STAT's released γ; count shifted by 1 (residual 0 vs 8B) with the
  other counts placed near the break threshold so the stop time carries the shift;
* ``linreg.fixed_clip`` — the baseline's final output, gradient canary;
* ``linreg.dp_ssgd``, ``linreg.dp_ssgd.stepwise`` and their controls — DP-SSGD at Theorem 3.1's
  amplified ε: :mod:`empirical.papers.linreg.audit_ssgd`;
* controls (``expect="broken"``): DP-STAT replaced by the true max residual, noise halved, and
  the fixed-clip baseline's noise calibrated to the add/remove sensitivity ζ/b.
"""
from __future__ import annotations

import contextlib
import functools
import math
import sys
from typing import Callable, Iterator, Sequence

import numpy as np

from algorithms import accounting
from algorithms.linreg import adaptive_clipping as lr
from empirical.privacy.audit import AuditTarget, exact_gaussian_epsilon, register_audit, spawn_rows
from empirical.privacy.mutants import Mutant, Patch, register_mutant

__all__ = ["FixedStream", "EPSILON", "DELTA", "noise_scaled", "dp_stat_bypassed",
           "ambssgd_claim", "fixed_claim", "dp_stat_claim", "ambssgd_claim_at", "fixed_claim_at",
           "dp_stat_claim_at"]

EPSILON = 2.0        # α ≈ 2.149, μ = 1/α ≈ 0.47: exact ε(1e-5) ≈ 1.84; halved noise ≈ 4.03
DELTA = 1e-5


def _home(attr: str) -> str:
    """The module that defines ``lr.<attr>``: a mutant patches it there and, with
    ``everywhere``, in every module that imported it (``algorithms.linreg.adaptive_clipping``
    re-exports the pieces)."""
    return getattr(lr, attr).__module__


# =============================================================================================
# fixed data behind the design interface
# =============================================================================================
class FixedStream(lr.LinearRegressionDesign):
    """A design (H = I_d, w* = 0, σ = 1, Gaussian tail a = ½: only R_x² = d + 2, ‖w*‖_H = 0,
    σ and log^a n enter the algorithms' parameters) whose ``sample(gens, m)`` streams the fixed
    records (X[i], y[i]), i = 0, 1, ..., n − 1, 0, 1, ... — the same list for every run.

    ``shuffle=True``: run r reads D in the order π_r, π_r drawn uniformly at random from run r's
    data generator at the first read (Algorithm 1's random permutation)."""

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray, *, shuffle: bool = False) -> "FixedStream":
        X = np.asarray(X, dtype=float)
        d = X.shape[1]
        obj = cls(np.ones(d), np.zeros(d), 1.0)
        # frozen dataclass: the stream's state is set around the generated __setattr__
        for k, v in (("_X", X), ("_y", np.asarray(y, dtype=float)), ("_pos", [0]),
                     ("_shuffle", shuffle), ("_perm", [None])):
            object.__setattr__(obj, k, v)
        return obj

    def sample(self, gens: Sequence[np.random.Generator], m: int) -> tuple[np.ndarray, np.ndarray]:
        n = self._X.shape[0]
        idx = (self._pos[0] + np.arange(m)) % n
        self._pos[0] += m
        R = len(gens)
        if not self._shuffle:
            return (np.broadcast_to(self._X[idx], (R, m, self._X.shape[1])),
                    np.broadcast_to(self._y[idx], (R, m)))
        if self._perm[0] is None:
            self._perm[0] = np.stack([g.permutation(n) for g in gens])
        take = self._perm[0][:, idx]
        return self._X[take], self._y[take]


# =============================================================================================
# injected bugs (used by the broken controls inside their release, and by the mutants)
# =============================================================================================
class _ScaledNormals(np.random.Generator):
    """A generator whose standard normals are multiplied by ``_f`` (the privacy-noise stream)."""

    _f = 1.0

    def standard_normal(self, *a, **k):
        z = super().standard_normal(*a, **k)
        if k.get("out") is not None:
            k["out"] *= self._f
            return k["out"]
        return z * self._f


def noise_scaled(factor: float) -> Callable:
    """``make(orig)`` for ``_streams`` in the linreg module: each run's (data, noise) children
    as usual, but the noise child's normals are scaled by ``factor``.  Both algorithms take
    every stream from ``_streams``, so this scales the Gaussian gradient noise and DP-STAT's
    count noise (what is drawn), not α (what the accountant sees).  The data stream is
    untouched."""
    scaled = type("_Scaled", (_ScaledNormals,), {"_f": float(factor)})

    def make(orig):
        def _streams(gens):
            data, noise = orig(gens)
            return data, [scaled(g.bit_generator) for g in noise]
        return _streams
    return make


def dp_stat_bypassed(orig):
    """``make(orig)`` for ``dp_stat``: the true max residual replaces the private γ (noise is
    still drawn and the accounting reported unchanged): the adaptive clip level is released
    without being privatised."""
    def dp_stat(abs_residuals, **kw):
        res = orig(abs_residuals, **kw)
        r = np.atleast_2d(np.asarray(abs_residuals, dtype=float))
        return lr.DpStatResult(r.max(axis=1), res.rounds, res.levels, res.noise_std,
                               res.threshold, res.rho_spent, res.rho_guarantee)
    return dp_stat


@contextlib.contextmanager
def _patched(attr: str, make: Callable) -> Iterator[None]:
    """Replace ``lr.<attr>`` by ``make(lr.<attr>)`` for the duration (one release call), in every
    ``algorithms.linreg`` module bound to it (each algorithm imports the shared pieces)."""
    orig = getattr(lr, attr)
    new = make(orig)
    mods = [m for k, m in list(sys.modules.items())
            if k.startswith("algorithms.linreg") and getattr(m, attr, None) is orig]
    for m in mods:
        setattr(m, attr, new)
    try:
        yield
    finally:
        for m in mods:
            setattr(m, attr, orig)


# =============================================================================================
# DP-AMBSSGD (Algorithm 2) and the fixed-clip baseline: T = 1 phase, d = 1
# =============================================================================================
#: n = 110 with T = 1: s = ⌊n/11⌋ = 10 stat points, then b = ⌊10n/11⌋ = 100 gradient points.
_N, _T = 110, 1
_S, _B = _N // (11 * _T), 10 * _N // (11 * _T)
_Y = 1e12            # |y| of the gradient canary: far above any ζ, so its gradient is clipped
_FIXED_ZETA = 1.0


def _amb_data(side: int, canary: str, n: int = _N, s: int = _S) -> tuple[np.ndarray, np.ndarray]:
    """D (side 0) / D′ (side 1) in the order Algorithm 2 reads them (s stat points, b gradient
    points).  Every other record is (x = 0, y = 0): gradient 0 at every w, residual 0.

    ``canary="grad"``: the last gradient record is (e1, −Y) in D and (e1, +Y) in D′; at w_0 = 0
    its gradient x(⟨x, w⟩ − y) = ±Y·e1 is clipped to ±ζ·e1 (Y ≫ ζ), the largest replace-one
    shift of the clipped mean, 2ζ/b.  ``canary="stat"``: the first stat point has residual 0 in D
    and 8B (above every γ DP-STAT can reach) in D′, so one count moves by 1 at every level."""
    X, y = np.zeros((n, 1)), np.zeros(n)
    if canary == "grad":
        X[n - 1, 0] = 1.0
        y[n - 1] = _Y if side else -_Y
    elif canary == "grad-zero":      # (e1, −Y) against the zero record: half the shift, ζ/b
        X[n - 1, 0] = 0.0 if side else 1.0
        y[n - 1] = 0.0 if side else -_Y
    elif canary == "stat":
        y[0] = 8.0 * _amb_B(n) if side else 0.0
    else:
        raise ValueError(canary)
    return X, y


def _amb_B(n: int) -> float:
    """DP-STAT's upper bound B = R_x(‖w*‖_H + σ)log^{2a} n on the FixedStream design (d = 1)."""
    return math.sqrt(3.0) * 1.0 * math.log(n)


def _run_amb(stream: FixedStream, rows: list, *, clip: str = "adaptive", dither: bool = True):
    return lr.dp_ambssgd(stream, _N, epsilon=EPSILON, delta=DELTA, rng=rows, clip=clip,
                         zeta=_FIXED_ZETA if clip == "fixed" else None, T=_T, dither=dither)


def _amb_release(canary: str, dither: bool, clip: str = "adaptive") -> Callable:
    """Score of the final output w̄ = w_1 = −η(clipped mean gradient + noise).

    Gradient canary: −w̄₁ (the shift's direction; ζ is fixed by DP-STAT's noise alone, which
    the canary does not touch).  Stat canary: log|w̄₁|, which moves with the released ζ
    (everything else in w̄ is the noise g ~ N(0, 1) scaled by α·2ζ/b)."""
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        X, y = _amb_data(side, canary)
        res = _run_amb(FixedStream.of(X, y), spawn_rows(rng, trials), clip=clip, dither=dither)
        w = res.w[:, 0]
        return -w if canary.startswith("grad") else np.log(np.abs(w) + 1e-300)
    return release


def _with(attr: str, make: Callable, fn: Callable) -> Callable:
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        with _patched(attr, make):
            return fn(side, rng, trials)
    return release


@functools.lru_cache(maxsize=None)
def _alpha() -> float:
    return lr.alpha_for_epsilon(EPSILON, DELTA)


def ambssgd_claim(clip: str = "adaptive") -> float:
    """ε(δ) the module reports for this instance (``info["epsilon_guarantee"]``: dp-accounting
    of max(ρ_grad, ρ_DP-STAT) with ρ = ½α⁻² each, converted by dp-accounting's RDP
    conversion).  Computed from a 1-run call so an accountant bug shows in the claim."""
    X, y = _amb_data(0, "grad")
    res = _run_amb(FixedStream.of(X, y), [np.random.default_rng(0)], clip=clip)
    return float(res.info["epsilon_guarantee"])


def ambssgd_claim_at(delta: float, clip: str = "adaptive") -> float:
    """The claimed profile δ ↦ ε(δ) of this instance: the guarantee ρ the module reports
    (``info["rho_guarantee"]``, from a 1-run call at α(ε = 2, δ = 10⁻⁵)) through the ρ → ε
    conversion the module itself calls (so an accountant bug shows here too), at ``delta``."""
    X, y = _amb_data(0, "grad")
    res = _run_amb(FixedStream.of(X, y), [np.random.default_rng(0)], clip=clip)
    to_epsilon = sys.modules[lr.dp_ambssgd.__module__]._zcdp_to_epsilon
    return float(to_epsilon(float(res.info["rho_guarantee"]), delta))


def fixed_claim() -> float:
    return ambssgd_claim("fixed")


def fixed_claim_at(delta: float) -> float:
    return ambssgd_claim_at(delta, "fixed")


def _gauss_exact() -> float:
    """PLD ε(δ) of one Gaussian release with multiplier α: what the gradient step leaks."""
    return exact_gaussian_epsilon(_alpha(), 1, DELTA)


# =============================================================================================
# DP-STAT (Algorithm 3), mechanism view
# =============================================================================================
_STAT_L = 7          # L + 1 = 8 noisy counts, std α√8 ≈ 6.1
_STAT_S = 100


def _stat_residuals(side: int, k: int) -> np.ndarray:
    """s residuals: k at 0 (counted at every level), the rest at 4B (never counted: DP-STAT's
    largest γ is B·2^U < 2B), and the canary at 0 (D) or 8B (D′).  The counts are k + 1 vs k
    at every level; k is chosen near the break threshold s − 3α√(L + 1) so that each round
    stops with probability ≈ ½ and the stop time (which the released γ reveals exactly:
    ⌊log2(γ·2^L/B)⌋ is the stop round, whatever the dither U ∈ [0, 1)) carries the shift."""
    r = np.full(_STAT_S, 4.0)
    r[:k] = 0.0
    r[_STAT_S - 1] = 8.0 if side else 0.0
    return r            # in units of B


def _stat_k(offset: int) -> int:
    thr = _STAT_S - lr.GAMMA_SLACK * _alpha() * math.sqrt(_STAT_L + 1)
    return int(round(thr)) - 1 + offset


def _stat_release(offset: int) -> Callable:
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        B = 1.0
        r = np.broadcast_to(_stat_residuals(side, _stat_k(offset)) * B, (trials, _STAT_S))
        st = lr.dp_stat(r, B=B, alpha=_alpha(), rng=spawn_rows(rng, trials), levels=_STAT_L)
        return np.floor(np.log2(st.gamma * 2.0 ** _STAT_L / B))
    return release


def dp_stat_claim_at(delta: float) -> float:
    """The claimed profile: ε(δ) by dp-accounting (RDP conversion) of DP-STAT's reported
    guarantee ρ (L + 1 counts of std α√(L + 1): ½α⁻²), at ``delta``."""
    st = lr.dp_stat(np.zeros((1, _STAT_S)), B=1.0, alpha=_alpha(), rng=[np.random.default_rng(0)],
                    levels=_STAT_L)
    return accounting.zcdp_to_epsilon(float(st.rho_guarantee), delta)


def dp_stat_claim() -> float:
    """ε(δ) at the audit's δ = 10⁻⁵ (:func:`dp_stat_claim_at`)."""
    return dp_stat_claim_at(DELTA)


# =============================================================================================
# registration
# =============================================================================================
_GRAD_NOTE = ("T = 1, d = 1, n = 110 (s = 10, b = 100); canary (e1, ∓Y), Y = 1e12, the last "
              "gradient record (clipped ±ζ·e1: shift 2ζ/b), other records (0, 0)")

register_audit(AuditTarget(
    name="linreg.dp_ambssgd", paper="linreg",
    algorithm="algorithms.linreg.adaptive_clipping.dp_ambssgd (Algorithm 2 with DP-STAT), ε = 2",
    relation="replace-one", delta=DELTA, claimed_epsilon=ambssgd_claim,
    claimed_epsilon_at=ambssgd_claim_at,
    candidates={"grad": _amb_release("grad", False), "grad-dither": _amb_release("grad", True),
                "stat": _amb_release("stat", False)},
    view="final", trials=40_000, search_trials=4_000, exact_epsilon=_gauss_exact,
    note=_GRAD_NOTE + "; or a stat point with residual 0 vs 8B (score log|w̄|)"))
register_audit(AuditTarget(
    name="linreg.dp_stat", paper="linreg",
    algorithm=f"algorithms.linreg.adaptive_clipping.dp_stat (Algorithm 3), L = {_STAT_L}, α(ε = 2)",
    relation="replace-one", delta=DELTA, claimed_epsilon=dp_stat_claim,
    claimed_epsilon_at=dp_stat_claim_at,
    candidates={f"k{o:+d}": _stat_release(o) for o in (-3, -1, 1)},
    view="mechanism", trials=40_000, search_trials=4_000,
    exact_epsilon=lambda: exact_gaussian_epsilon(_alpha() * math.sqrt(_STAT_L + 1), _STAT_L + 1,
                                                 DELTA),
    note=f"s = {_STAT_S} residuals, one 0 vs 8B, k near the break threshold at 0, the rest 4B; "
         "score: the stop round read off the released γ"))
register_audit(AuditTarget(
    name="linreg.fixed_clip", paper="linreg",
    algorithm="dp_ambssgd(clip='fixed', ζ = 1) (fixed-clip minibatch baseline), ε = 2",
    relation="replace-one", delta=DELTA, claimed_epsilon=fixed_claim,
    claimed_epsilon_at=fixed_claim_at,
    candidates={"grad": _amb_release("grad", False, "fixed"),
                "grad vs zero record": _amb_release("grad-zero", False, "fixed")},
    view="final", trials=40_000, full_trials=200_000, search_trials=2_000,
    exact_epsilon=_gauss_exact,
    note="T = 1, d = 1, n = 110 (b = 110); canary (e1, ∓Y) clipped to ±ζ·e1, or (e1, −Y) "
         "against (0, 0) (half the shift; the search must prefer the flip)"))

# --- broken controls -----------------------------------------------------------------------
register_audit(AuditTarget(
    name="linreg.dp_ambssgd.dpstat_bypassed", paper="linreg",
    algorithm="DP-AMBSSGD with DP-STAT's γ replaced by the true max residual",
    relation="replace-one", delta=DELTA, claimed_epsilon=ambssgd_claim,
    claimed_epsilon_at=ambssgd_claim_at,
    release=_with("dp_stat", dp_stat_bypassed, _amb_release("stat", False)), view="final",
    trials=4_000, expect="broken", note="stat canary: residual 0 vs 8B sets ζ"))
register_audit(AuditTarget(
    name="linreg.dp_ambssgd.noise_halved", paper="linreg",
    algorithm="DP-AMBSSGD drawing half the noise its accountant sees",
    relation="replace-one", delta=DELTA, claimed_epsilon=ambssgd_claim,
    claimed_epsilon_at=ambssgd_claim_at,
    release=_with("_streams", noise_scaled(0.5), _amb_release("grad", False)),
    view="final", trials=70_000, expect="broken", note=_GRAD_NOTE))
register_audit(AuditTarget(
    name="linreg.fixed_clip.add_remove_sensitivity", paper="linreg",
    algorithm="fixed-clip baseline with noise α·ζ/b (add/remove sensitivity) for its replace-one "
              "claim",
    relation="replace-one", delta=DELTA, claimed_epsilon=fixed_claim,
    claimed_epsilon_at=fixed_claim_at,
    release=_with("_streams", noise_scaled(0.5), _amb_release("grad", False, "fixed")),
    view="final", trials=70_000, expect="broken",
    note="std α·ζ/b = half of α·2ζ/b; canary (e1, ∓Y) shifts the mean by 2ζ/b"))


# =============================================================================================
# mutants (DPRATES_MUTATION=1 pytest tests/test_linreg_mutants.py)
# =============================================================================================
_TESTS = "tests/test_audit_linreg.py"

register_mutant(Mutant(
    "linreg.noise_halved", "linreg",
    "DP-AMBSSGD/DP-STAT/DP-SSGD draw half the noise the accountant sees",
    (Patch(_home("_streams"), "_streams", noise_scaled(0.5)),),
    experiments=("linreg.sigma0.fixed",), audits=("linreg.dp_ambssgd", "linreg.fixed_clip"),
    tests=(f"{_TESTS}::test_injected_noise_matches_alpha",),
    audit_trials=70_000))   # exact ε 4.0 vs claimed 2: as many runs as the noise_halved control
register_mutant(Mutant(
    "linreg.dpstat_skipped", "linreg", "DP-STAT returns the true max residual (not private)",
    (Patch(_home("dp_stat"), "dp_stat", dp_stat_bypassed),),
    audits=("linreg.dp_ambssgd", "linreg.dp_stat")))
register_mutant(Mutant(
    "linreg.clip_not_applied", "linreg", "per-example gradients are not clipped (ζ = ∞)",
    (Patch(_home("_clipped_mean_gradient"), "_clipped_mean_gradient",
           lambda orig: (lambda design, gens, W, Wref, m, zeta:
                         orig(design, gens, W, Wref, m, np.full_like(zeta, np.inf)))),),
    experiments=("linreg.sigma0.fixed",), audits=("linreg.dp_ambssgd", "linreg.fixed_clip")))
register_mutant(Mutant(
    "linreg.accountant_off_by_4", "linreg",
    "the module's ρ → ε conversion under-reports ε by 4× (α unchanged)",
    # (Scaling the module's _gaussian_rho instead is stopped at run time: PrivacySpent recomputes
    # ρ of the Gaussian event with dp-accounting and refuses a guarantee below it.)
    (Patch(_home("_zcdp_to_epsilon"), "_zcdp_to_epsilon",
           lambda orig: (lambda rho, delta: 0.25 * orig(rho, delta))),),
    experiments=("linreg.sigma0.fixed",), audits=("linreg.dp_ambssgd", "linreg.fixed_clip"),
    tests=(f"{_TESTS}::test_claims_match_independent_accounting",)))
register_mutant(Mutant(
    "linreg.phase_count_doubled", "linreg",
    "Algorithm 2 runs 2T phases with T's batch sizes (reads 2n records)",
    (Patch(_home("ambssgd_schedule"), "ambssgd_schedule",
           lambda orig: (lambda *a, **k: (lambda s: lr.AmbssgdSchedule(2 * s.T, s.b, s.s, s.eta,
                                                                        s.log_a_n))(orig(*a, **k)))),),
    experiments=("linreg.sigma0.fixed", "linreg.sigma0.adaptive"), audits=("linreg.dp_ambssgd",),
    tests=(f"{_TESTS}::test_schedule_reads_at_most_n_records",)))
register_mutant(Mutant(
    "linreg.clip_scale_skipped", "linreg",
    "clip_limits returns inf: neither DP-SSGD nor DP-AMBSSGD clips (the module-level clip limit "
    "ζ/‖x‖ of the residual)",
    (Patch(_home("clip_limits"), "clip_limits",
           lambda orig: (lambda xnorm, zeta: np.full(np.broadcast_shapes(
               np.shape(xnorm), np.shape(zeta)), np.inf))),),
    audits=("linreg.dp_ssgd", "linreg.fixed_clip")))
register_mutant(Mutant(
    "linreg.noise_removed", "linreg",
    "DP-AMBSSGD/DP-STAT/DP-SSGD draw 10⁻⁶ of the noise the accountant sees",
    (Patch(_home("_streams"), "_streams", noise_scaled(1e-6)),),
    audits=("linreg.dp_ambssgd", "linreg.fixed_clip"), bug_class="noise omitted"))
