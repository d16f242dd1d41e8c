"""Privacy audits, measured noise, sensitivity brute force and mutants of the user-level SCO
paper's algorithms (see :mod:`empirical.privacy.audit`, :mod:`empirical.privacy.mutants`; imported by
:mod:`empirical.papers.userlevel.experiments` so that the lazy loader registers them with the paper).

What is claimed: user-level (ε, δ)-DP under replace-one of a whole user (Definition 1.3; the
harness's ``"user-replace"``), with ε the run's data-independent guarantee computed by
dp-accounting (``UserLevelPrivacy.guarantee_epsilon``: the phase's pure-DP test plus its
Gaussian releases at δ/2).

Neighbouring pairs.  Linear losses f(x, z) = ⟨x, z⟩ (gradient z at every x, L-Lipschitz for
‖z‖ ≤ L, β = 0), honest users whose items all have gradient 0, and one canary user (user 0, in
phase 1) whose m items are all equal: a whole user pushed as far as the relation lets it go.
Two canaries, searched for by the harness:

* ``kept``: all items at +0.999·r·e1 in D and −0.999·r·e1 in D′, r the concentration radius
  (2τ for Algorithm 2's gradients; for Algorithm 1 the canary group's SGD average sits at
  0.999·2τ_1): the canary is within the radius of every honest point, so outlier removal keeps
  it with probability 1 and the scores are identical on both sides; the released mean moves by
  ≈ 4τ/K, the largest move a *kept* user can make.  This is only 2/log(1/ζ) of the sensitivity
  2τ log(1/ζ)/K the noise is calibrated to, so a correct implementation audits far below its
  claim, and a bug that halves the noise is not visible to this audit (it is to the measured-
  noise tests below).
* ``extreme``: all items at ±L·e1 (the Lipschitz bound).  Outlier removal must drop this user;
  if it does not, the mean moves by 2L/K ≫ the calibrated sensitivity.

Statistic.  Algorithm 3 (stepwise): Σ_t ĝ_t[0]/σ², the Gaussian likelihood-ratio score of its
phase-1 noisy gradients (the canary is in every minibatch: K_1 = n_1; later phases only
post-process phase 1's output).  The item-level baseline (footnote 3; ``item_level_baseline``,
Algorithm 3 without outlier removal at Δ = 2L/K_i) is scored the same way with the extreme
canary, which moves each of its phase-1 releases by exactly that sensitivity.  Algorithm 1
(final = its one release): x[0] after one phase whose groups are single users.  AboveThreshold (mechanism): the halting index's
pilot log-likelihood ratio, on query sequences searched (:data:`AT_QUICK`, :data:`AT_FULL`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from functools import lru_cache

import dp_accounting as dpa
import numpy as np
from dp_accounting import rdp as dpa_rdp
from scipy.optimize import brentq

from algorithms.userlevel import sco as ul
from algorithms.accounting import REPLACE_ONE
from empirical.papers.userlevel import sensitivity as uls
from empirical.privacy.audit import AuditTarget, exact_gaussian_epsilon, register_audit
from empirical.privacy.mutants import Mutant, Patch, register_mutant, scaled_result, with_mutant

__all__ = ["CanaryUsers", "ALG3", "ALG1", "AT", "AT_QUICK", "AT_FULL", "at_queries",
           "at_halting_index", "independent_multiplier", "independent_epsilon",
           "measure_alg3_noise", "measure_alg1_noise",
           "three_group_tail", "corrected_bound_units", "coupled_moves", "random_search"]


class CanaryUsers(ul.UserData):
    """Linear losses f(x, z) = ⟨x, z⟩; user u's m items all have gradient ``G[u]`` (so its
    mean gradient is G[u] at every x).  β = 0."""

    def __init__(self, G: np.ndarray, m: int, L: float, R: float):
        G = np.asarray(G, dtype=float)
        if G.ndim != 2:
            raise ValueError(f"G must be an (n, d) array, got shape {G.shape}")
        if np.any(np.linalg.norm(G, axis=1) > L * (1 + 1e-12)):
            raise ValueError("every item gradient must have norm ≤ L")
        super().__init__(G.shape[0], m, G.shape[1], L, R, 0.0)
        self.G = G

    def _user_mean_gradients(self, x, users):
        return self.G[users]

    def _item_gradients(self, X, users, items):
        return self.G[users]


# =============================================================================================
# Algorithm 3 (Algorithm 2 inside): one phase, full-batch minibatches
# =============================================================================================
#: n = 2000, q = ½: n_1 = 414, n_2 = 292; at ε = 2, δ = 1e-3 phase 2 is too small for its
#: score test to certify a finite sensitivity (UL-E13/UL-E14), so phase 1 runs alone, and
#: c_K2 = 1 makes K_1 = n_1 (every step's minibatch holds the canary); β = 0 gives
#: T_1 = ⌈c_T⌉ = 3.  m = 2^30 makes τ = L√(log(ndm)/m) ≈ 1.6e-4, so the corrected sensitivity
#: Δ_1 ≈ 0.137/K_1 is far below the item-level 2L/K_1 (without that, dropping outlier removal
#: would be invisible: at m = 2^20 Δ_1 exceeds 2L/K_1).  ε = 2, δ = 1e-3 (not 1, 1e-5): smaller
#: ones need K_1 ≳ 600–2000 users, whose K² distances make each trial too slow for the default
#: run.
ALG3 = dict(n=2000, m=2 ** 30, d=2, epsilon=2.0, delta=1e-3, L=1.0, R=4.0, c_K1=40.0, c_T=3.0,
            c_K2=1.0)


def _alg3_kw() -> dict:
    return dict(c_K1=ALG3["c_K1"], c_T=ALG3["c_T"], c_K2=ALG3["c_K2"])


def _alg3_schedule():
    return ul.alg3_schedule(ALG3["n"], ALG3["m"], ALG3["d"], ALG3["epsilon"], ALG3["delta"],
                            ALG3["L"], ALG3["R"], 0.0, **_alg3_kw())


def _alg3_data(kind: str, side: int) -> CanaryUsers:
    tau = ALG3["L"] * math.sqrt(math.log(ALG3["n"] * ALG3["d"] * ALG3["m"]) / ALG3["m"])
    G = np.zeros((ALG3["n"], ALG3["d"]))
    mag = 0.999 * 2.0 * tau if kind == "kept" else ALG3["L"]
    G[0, 0] = mag if side else -mag
    return CanaryUsers(G, ALG3["m"], ALG3["L"], ALG3["R"])


class _LaterPhase(Exception):
    """Raised by the observer at phase 2's first release: phase i ≥ 2 draws other users and sees
    the canary only through phase 1's output (post-processing), so the rest of the run adds
    nothing to the likelihood ratio and is not run (phase 1's draws come first either way)."""


def _phase1_scores(algorithm, data: CanaryUsers, rng: np.random.Generator,
                   trials: int) -> np.ndarray:
    """Σ_t ĝ_t[0]/σ_1² over phase 1's noisy gradients (the likelihood-ratio score; the canary is
    in every phase-1 minibatch, K_1 = n_1) of ``trials`` runs of ``algorithm`` (Algorithm 3 or
    the item-level baseline) on ``data`` at :data:`ALG3`, run r from ``rng.spawn(trials)[r]``."""
    out = np.zeros(trials)
    for r, g in enumerate(rng.spawn(trials)):
        acc = [0.0]

        def obs(k, released, sigma, info, acc=acc):
            if info["phase"] != 1:
                raise _LaterPhase
            acc[0] += released[0] / sigma ** 2
        with contextlib.suppress(_LaterPhase):
            algorithm(data, ALG3["epsilon"], ALG3["delta"], g, observe=obs, **_alg3_kw())
        out[r] = acc[0]
    return out


def _alg3_release(kind: str):
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        return _phase1_scores(ul.accelerated_phased_erm, _alg3_data(kind, side), rng, trials)
    return release


def _reported_guarantee(algorithm, data: CanaryUsers, cfg: dict, kw: dict) -> float:
    """The ε a run of ``algorithm`` at ``cfg`` reports as its guarantee
    (``UserLevelPrivacy.guarantee_epsilon``: dp-accounting of its data-independent schedule),
    so that an accountant bug shows in the claim."""
    res = algorithm(data, cfg["epsilon"], cfg["delta"], np.random.default_rng(0), **kw)
    return float(res.privacy.guarantee_epsilon)


@lru_cache(maxsize=None)
def _alg3_claim() -> float:
    return _reported_guarantee(ul.accelerated_phased_erm, _alg3_data("kept", 0), ALG3, _alg3_kw())


# =============================================================================================
# The item-level baseline (footnote 3): Algorithm 3's schedule at m = 1, no outlier removal
# =============================================================================================
#: At ALG3's setting the baseline's schedule (computed for m = 1) has 10 phases; phase 1 has
#: n_1 = K_1 = 414 and T_1 = ⌈c_T⌉ = 3 (β = 0), σ_1 = z·2L/K_1 with z calibrated to the full
#: (ε, δ) over T_1 releases (no pure-DP test, so no ε/2 split).  The extreme canary (±L·e1, a
#: user whose mean gradient has the largest norm allowed) is in every phase-1 minibatch and,
#: with no removal, moves each release by exactly that sensitivity 2L/K_1: the audit can reach
#: the exact ε of 3 Gaussian releases (≈ 0.6 of it at 20 000 runs per side).
def _baseline_release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
    return _phase1_scores(ul.item_level_baseline, _alg3_data("extreme", side), rng, trials)


@lru_cache(maxsize=None)
def _baseline_claim() -> float:
    return _reported_guarantee(ul.item_level_baseline, _alg3_data("extreme", 0), ALG3, _alg3_kw())


def _baseline_exact() -> float:
    """PLD ε(δ) of T_1 = ⌈c_T⌉ Gaussian releases of multiplier z, z recomputed here
    (:func:`independent_multiplier`: dp-accounting's RDP ε of T_1 releases = ε at δ), not read
    from the algorithm."""
    T1 = math.ceil(ALG3["c_T"])
    z = independent_multiplier(ALG3["epsilon"], T1, ALG3["delta"])
    return exact_gaussian_epsilon(z, T1, ALG3["delta"])


# =============================================================================================
# Algorithm 1: one phase whose C groups are single users
# =============================================================================================
#: n = 4000, q = ¼: n_1 = 535; c_C = 40 at ε = 2, δ = 1e-3 gives C = 432, so N_1 = 1 (each
#: group is one user, T_1 = m = 4 SGD steps); fewer groups certify no finite sensitivity under
#: the corrected Lemma B.2 (UL-E13/UL-E14).  c_τ = 1e-5 puts 2τ_1 at ≈ 4e-4·η_1L while the
#: extreme canary's SGD average moves 2.5·η_1L: removed, or if kept (no removal), moved ≈ 9σ
#: (at c_τ = 1e-4 the corrected Δ_1 made that only ≈ 1σ: the control was missed).  The kept canary's items are scaled so that its average sits at 0.999·2τ_1.
ALG1 = dict(n=4000, m=4, d=2, epsilon=2.0, delta=1e-3, L=1.0, R=4.0, c_C=40.0, c_eta=1.0,
            c_tau=1e-5)


def _alg1_kw() -> dict:
    return dict(c_C=ALG1["c_C"], c_eta=ALG1["c_eta"], c_tau=ALG1["c_tau"], max_phases=1)


def _alg1_schedule():
    return ul.alg1_schedule(ALG1["n"], ALG1["m"], ALG1["d"], ALG1["epsilon"], ALG1["delta"],
                            ALG1["L"], ALG1["R"], **_alg1_kw())


def _alg1_data(kind: str, side: int) -> CanaryUsers:
    C, ph = ul.alg1_schedule(ALG1["n"], ALG1["m"], ALG1["d"], ALG1["epsilon"], ALG1["delta"],
                             ALG1["L"], ALG1["R"], calibrate=False, **_alg1_kw())
    p = ph[0]
    # SGD from 0 on m identical items of gradient g·e1: x_t = −tηg·e1, average −ηg(m+1)/2
    travel = p.eta_i * (ALG1["m"] + 1) / 2.0
    g = ALG1["L"] if kind == "extreme" else min(ALG1["L"], 0.999 * 2.0 * p.tau_i / travel)
    G = np.zeros((ALG1["n"], ALG1["d"]))
    G[0, 0] = -g if side else g          # side 1's average moves along +e1
    return CanaryUsers(G, ALG1["m"], ALG1["L"], ALG1["R"])


def _alg1_release(kind: str):
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        data = _alg1_data(kind, side)
        out = np.zeros(trials)
        for r, g in enumerate(rng.spawn(trials)):
            res = ul.phased_sgd_outlier_removal(data, ALG1["epsilon"], ALG1["delta"], g,
                                                **_alg1_kw())
            out[r] = res.x[0]
        return out
    return release


@lru_cache(maxsize=None)
def _alg1_claim() -> float:
    return _reported_guarantee(ul.phased_sgd_outlier_removal, _alg1_data("kept", 0), ALG1,
                               _alg1_kw())


# =============================================================================================
# AboveThreshold (Algorithm 4) as Algorithm 2 uses it: sensitivity 2, budget ε/2
# =============================================================================================
#: Algorithm 2's AboveThreshold: threshold 0 (its 4K/5, shifted), sensitivity 2, budget ε/2.
AT = dict(epsilon=2.0, threshold=0.0, sens=2.0)
#: Query sequences searched (Delta-Siege / DP-Auditorium style: the input, not only the noise,
#: is what an audit must vary).  A sequence (k, a, b): b queries at −a, then k − b at the
#: threshold; D′ moves the first b up and the rest down by the sensitivity (every query of a
#: neighbouring data set moves by at most that, each in the direction that hurts).  The
#: former fixed sequence is (20, 10, 19).  Exact ε of the halting index (simulated, 4·10⁵ runs):
#: honest (k, a, b) = (10, 2, 9) 0.88 of the claimed 1, (20, 10, 19) 0.83; with the query noise
#: at Lap(2Δ/ε) instead of Lap(4Δ/ε), 1.41 and 1.0.
AT_QUICK = ((10, 2.0, 9), (5, 0.0, 4), (20, 4.0, 19), (20, 10.0, 19))
AT_FULL = tuple((k, a, b) for k in (2, 3, 5, 10, 20) for a in (0.0, 2.0, 4.0, 8.0, 16.0)
                for b in sorted({1, min(2, k - 1), k - 1}) if (k, a, b) not in AT_QUICK)
#: Runs per side of the pilot that turns a halting index into its estimated log-likelihood
#: ratio (the score); fixed seed, the same on both sides, so the score is one fixed function.
_AT_PILOT = 50_000


class _Batch:
    """A stand-in generator whose ``laplace(loc, scale)`` returns ``n`` independent draws: the
    unmodified :class:`AboveThreshold` then runs ``n`` independent instances at once (it only
    compares and adds, elementwise).  Queries after an instance halts are ignored, which leaves
    the law of the halting index unchanged (their draws are independent of the earlier ones)."""

    def __init__(self, rng: np.random.Generator, n: int):
        self.rng, self.n = rng, n

    def laplace(self, loc: float = 0.0, scale: float = 1.0) -> np.ndarray:
        return self.rng.laplace(loc, scale, self.n)


def at_queries(k: int, a: float, b: int, side: int) -> np.ndarray:
    """The query answers of sequence (k, a, b) on D (side 0) or D′ (side 1)."""
    q = np.r_[np.full(b, -a), np.zeros(k - b)] + AT["threshold"]
    if side:
        q = q + np.r_[np.full(b, AT["sens"]), np.full(k - b, -AT["sens"])]
    return q


def at_halting_index(q: np.ndarray, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Halting index (k when it never fires) of ``trials`` runs of ``ul.AboveThreshold`` (looked
    up at call time, so a mutant reaches it) on the query answers ``q``."""
    at = ul.AboveThreshold(AT["threshold"], AT["epsilon"] / 2.0, AT["sens"], _Batch(rng, trials))
    idx = np.full(trials, q.size)
    halted = np.zeros(trials, dtype=bool)
    for t, qt in enumerate(q):
        fired = np.asarray(at.fires(qt), dtype=bool) & ~halted
        idx[fired] = t
        halted |= fired
    return idx


#: Pilot log-ratios by (AboveThreshold class, sequence): a mutant's class is a new object, so
#: it never reuses the honest class's pilot.
_AT_PILOTS: dict = {}


def _at_pilot(k: int, a: float, b: int) -> np.ndarray:
    key = (ul.AboveThreshold, k, a, b)
    if key not in _AT_PILOTS:
        pilot = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            [k, int(a * 8), b, 77])))
        c = [np.bincount(at_halting_index(at_queries(k, a, b, s), pilot, _AT_PILOT),
                         minlength=k + 1) + 0.5 for s in (0, 1)]
        _AT_PILOTS[key] = np.log(c[1] / c[0])
    return _AT_PILOTS[key]


def _at_release(k: int, a: float, b: int):
    def release(side: int, rng: np.random.Generator, trials: int) -> np.ndarray:
        # score = log-ratio of the halting index's frequencies in a fixed-seed pilot (add-½):
        # the likelihood-ratio order of the outcomes, so {score ≥ τ} are the best sets
        return _at_pilot(k, a, b)[at_halting_index(at_queries(k, a, b, side), rng, trials)]
    return release


def _at_label(k: int, a: float, b: int) -> str:
    return f"k={k} a={a:g} b={b}"


_RELATION = "user-replace"
_NOTE3 = ("linear losses; honest users' items have gradient 0; canary user 0 (all m items "
          "equal): kept = ±0.999·2τ·e1 (inside the radius, kept w.p. 1), extreme = ±L·e1 "
          "(must be removed); searched")

register_audit(AuditTarget(
    name="userlevel.alg3.stepwise", paper="userlevel",
    algorithm="algorithms.userlevel.sco.accelerated_phased_erm (Algorithms 2+3), phase-1 noisy "
              "gradients", relation=_RELATION, delta=ALG3["delta"], claimed_epsilon=_alg3_claim,
    candidates={"kept": _alg3_release("kept"), "extreme": _alg3_release("extreme")},
    view="stepwise", trials=2_000, search_trials=200, note=_NOTE3))
register_audit(AuditTarget(
    name="userlevel.alg1.final", paper="userlevel",
    algorithm="algorithms.userlevel.sco.phased_sgd_outlier_removal (Algorithm 1), output of "
              "one phase of single-user groups", relation=_RELATION, delta=ALG1["delta"],
    claimed_epsilon=_alg1_claim,
    candidates={"kept": _alg1_release("kept"), "extreme": _alg1_release("extreme")},
    view="final", trials=2_000, search_trials=200,
    note="as userlevel.alg3.stepwise, the canary's SGD average at ±0.999·2τ_1 or its items at "
         "±L·e1"))
register_audit(AuditTarget(
    name="userlevel.item_level_baseline.stepwise", paper="userlevel",
    algorithm="algorithms.userlevel.sco.item_level_baseline (footnote 3: Algorithm 3 without "
              "outlier removal, Δ = 2L/K_i), phase-1 noisy gradients", relation=_RELATION,
    delta=ALG3["delta"], claimed_epsilon=_baseline_claim, release=_baseline_release,
    view="stepwise", trials=20_000, exact_epsilon=_baseline_exact,
    note="linear losses; honest users' items have gradient 0; canary user 0 with all m items at "
         "±L·e1: it moves every phase-1 release by the calibrated sensitivity 2L/K_1"))
register_audit(AuditTarget(
    name="userlevel.above_threshold", paper="userlevel",
    algorithm="algorithms.userlevel.sco.AboveThreshold (Algorithm 4) at Algorithm 2's "
              "sensitivity 2 and budget ε/2", relation=_RELATION, delta=ALG3["delta"],
    claimed_epsilon=lambda: AT["epsilon"] / 2.0,
    candidates={_at_label(*c): _at_release(*c) for c in AT_QUICK},
    full_candidates={_at_label(*c): _at_release(*c) for c in AT_FULL},
    view="mechanism", trials=400_000, search_trials=100_000, reference="laplace",
    note="query sequences searched: b queries a below the threshold then k − b at it; D′ moves "
         "each by the sensitivity 2 (the first b up, the rest down); score = the halting "
         "index's pilot log-likelihood ratio"))
register_audit(AuditTarget(
    name="userlevel.above_threshold.query_noise_slip", paper="userlevel",
    algorithm="AboveThreshold drawing its query noise from Lap(2Δ/ε) instead of Lap(4Δ/ε)",
    relation=_RELATION, delta=ALG3["delta"], claimed_epsilon=lambda: AT["epsilon"] / 2.0,
    candidates={_at_label(*c): with_mutant("userlevel.above_threshold.query_noise_slip",
                                           _at_release(*c)) for c in AT_QUICK},
    view="mechanism", trials=400_000, search_trials=100_000, reference="laplace",
    expect="broken", note="as userlevel.above_threshold"))

# --- broken controls (the registered mutants, applied inside the release only) ----------------
for _name, _rel, _trials, _claim, _what in (
        ("userlevel.alg3.item_level_sensitivity", _alg3_release("kept"), 1_000, _alg3_claim,
         "Algorithm 3 calibrated to the item-level sensitivity 2L/(mK) for its user-level claim"),
        ("userlevel.alg3.no_outlier_removal", _alg3_release("extreme"), 1_000, _alg3_claim,
         "Algorithm 3 keeping every user, noise still calibrated to the Lemma C.2 bound"),
        ("userlevel.alg3.noise_removed", _alg3_release("kept"), 1_000, _alg3_claim,
         "Algorithm 3 adding no noise (accounting unchanged)"),
        ("userlevel.alg1.no_outlier_removal", _alg1_release("extreme"), 1_000, _alg1_claim,
         "Algorithm 1 keeping every group iterate, noise still calibrated to the Lemma B.2 bound"),
        # exact ε 4.12 against the claimed 2: 10 000 runs gave ε_lo 2.13 (thin), 20 000 runs
        # ≈ 2.7 on Gaussian scores with this shift; 4 000 do not catch it reliably
        ("userlevel.item_level_baseline.add_remove_sensitivity", _baseline_release, 20_000,
         _baseline_claim, "the item-level baseline calibrated to the add/remove sensitivity "
         "L/K_i (σ halved) for its replace-one claim")):
    register_audit(AuditTarget(
        name=_name, paper="userlevel", algorithm=_what, relation=_RELATION,
        delta=ALG3["delta"], claimed_epsilon=_claim, release=with_mutant(_name, _rel),
        view="final" if "alg1" in _name else "stepwise", trials=_trials, expect="broken",
        note="canary " + ("extreme ±L·e1" if "outlier" in _name or "baseline" in _name
                          else "kept ±0.999·2τ·e1")))


# =============================================================================================
# Independent accounting and measured noise (tests/test_userlevel_audit.py)
# =============================================================================================
def independent_epsilon(z: float, count: int, delta: float) -> float:
    """ε(δ) of ``count`` unsampled Gaussian releases of multiplier z under replace-one, by
    dp-accounting's RDP accountant directly (not through the algorithm's accounting code, so a
    bug there is not copied here), at the algorithm's Rényi orders (a data constant: with
    other orders the two would differ by ~0.3% for reasons that are not bugs)."""
    acc = dpa_rdp.RdpAccountant(orders=ul.RDP_ORDERS, neighboring_relation=REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(z), count))
    return float(acc.get_epsilon(delta))


def independent_multiplier(epsilon: float, count: int, delta: float) -> float:
    """z with :func:`independent_epsilon` = ε, by plain bisection."""
    return brentq(lambda z: independent_epsilon(z, count, delta) - epsilon, 1e-2, 1e4,
                  xtol=1e-10, rtol=1e-12)


def measure_alg3_noise(runs: int = 200, seed: int = 0) -> dict:
    """Algorithm 3 on the honest data of :data:`ALG3` (every gradient 0, so each release IS its
    noise).  Returns the measured per-coordinate std of phase 1's releases, the count, and the
    theorem's σ_1 = z·Δ_1 recomputed here: τ = L√(log(ndm)/m), Δ_1 the corrected Lemma C.2
    bound (empirical.papers.userlevel.sensitivity, UL-E13),
    T_1 = ⌈c_T⌉ (β = 0), n_1 = ⌊(1 − 2^{−½})n/2^{½}⌋, K_1 = n_1 (c_K2 n_1ε/√T_1 ≥ n_1),
    z with dp-accounting's ε(T_1 Gaussians, δ/2) = ε/2 (2K_1 > n_1: no amplification)."""
    n, m, d, eps, dl, L = (ALG3[k] for k in ("n", "m", "d", "epsilon", "delta", "L"))
    T = int(math.ceil(ALG3["c_T"]))
    n1 = int(math.floor((1 - 2 ** -0.5) * n / 2 ** 0.5))
    K = n1
    tau = L * math.sqrt(math.log(n * d * m) / m)
    sigma = independent_multiplier(eps / 2.0, T, dl / 2.0) * uls.alg3_phase_sensitivity(
        tau, K, T, eps, dl)
    data = CanaryUsers(np.zeros((n, d)), m, L, ALG3["R"])
    acc: list[np.ndarray] = []
    used = []

    def obs(kind, released, s, info):
        if info["phase"] == 1:
            acc.append(np.array(released))
            used.append(s)
    for g in np.random.SeedSequence([seed, 31]).spawn(runs):
        ul.accelerated_phased_erm(data, eps, dl, np.random.Generator(np.random.PCG64(g)),
                                  observe=obs, **_alg3_kw())
    z = np.concatenate(acc)
    return {"std": float(np.sqrt(np.mean(z * z))), "count": int(z.size), "sigma": sigma,
            "sigma_used": float(np.max(used)), "T": T, "K": K}


def measure_alg1_noise(runs: int = 400, seed: int = 0) -> dict:
    """Algorithm 1 on honest data of :data:`ALG1` (all gradients 0): the released x_1 minus the
    outlier-removed mean is the noise; σ_1 = z·Δ_1 recomputed here with z from
    ε(Gaussian, δ/2) = 0.9ε (the Laplace score takes ε/10), Δ_1 the corrected Lemma B.2 bound,
    τ_1 = c_τη_1L√T_1 log(ndm), η_1 = c_ηR/(L√(dmnε))/2^{p}, p = J + 3/2, J = max(1, log m/log n),
    C = ⌈c_C log(20nme^ε/δ)/ε⌉, T_1 = ⌊n_1/C⌋m."""
    n, m, d, eps, dl, L, R = (ALG1[k] for k in ("n", "m", "d", "epsilon", "delta", "L", "R"))
    C = int(math.ceil(ALG1["c_C"] * math.log(20 * n * m * math.exp(eps) / dl) / eps))
    n1 = int(math.floor((1 - 2 ** -0.25) * n / 2 ** 0.25))
    T1 = (n1 // C) * m
    p = max(1.0, math.log(m) / math.log(n)) + 1.5
    eta1 = ALG1["c_eta"] * R / (L * math.sqrt(d * m * n * eps)) / 2 ** p
    tau1 = ALG1["c_tau"] * eta1 * L * math.sqrt(T1) * math.log(n * d * m)
    sigma = independent_multiplier(0.9 * eps, 1, dl / 2.0) * uls.alg1_phase_sensitivity(
        tau1, C, eps, dl)
    data = CanaryUsers(np.zeros((n, d)), m, L, R)
    acc = []

    def obs(kind, released, s, info):
        acc.append(np.asarray(released) - info["mean"])
    for g in np.random.SeedSequence([seed, 32]).spawn(runs):
        ul.phased_sgd_outlier_removal(data, eps, dl, np.random.Generator(np.random.PCG64(g)),
                                      observe=obs, **_alg1_kw())
    z = np.concatenate(acc)
    return {"std": float(np.sqrt(np.mean(z * z))), "count": int(z.size), "sigma": sigma, "C": C}


# =============================================================================================
# Mutants (DPRATES_MUTATION=1 pytest tests/test_userlevel_mutants.py; dprates audit --mutants
# userlevel).  Each names the checks, audits and tests that must catch it.
# =============================================================================================
# The modules where each patched function is DEFINED (the algorithms import them by name;
# Patch.everywhere also replaces those copies and the re-exports of algorithms.userlevel.sco).
_OUT, _ACC = "algorithms.userlevel.outliers", "algorithms.userlevel.accounting"
_A1, _A3 = "algorithms.userlevel.alg1", "algorithms.userlevel.alg3"
_NOISE_TESTS = ("tests/test_userlevel_audit.py::test_alg3_injected_noise_matches_the_theorem",
                "tests/test_userlevel_audit.py::test_alg1_injected_noise_matches_the_theorem")
_ALG3_RISK = ("userlevel.alg3.m",)


def _alg3_item_level(orig):
    """alg3_schedule with the gradient sensitivity of the ITEM-level relation: one item moves a
    user's mean gradient by 2L/m, so the minibatch mean by 2L/(mK) (σ scaled accordingly)."""
    def schedule(n, m, d, epsilon, delta, L, R, beta, **kw):
        tau, phases = orig(n, m, d, epsilon, delta, L, R, beta, **kw)
        out = []
        for p in phases:
            sens = 2.0 * L / (m * p.K_i)
            out.append(dataclasses.replace(p, sensitivity=sens, sigma_i=p.z * sens))
        return tau, out
    return schedule


def _alg1_item_level(orig):
    """alg1_schedule with the item-level sensitivity of the outlier-removed mean: one item
    moves one group's SGD average by ≤ 2η_iL, so the mean of C by 2η_iL/C."""
    def schedule(n, m, d, epsilon, delta, L, R, **kw):
        C, phases = orig(n, m, d, epsilon, delta, L, R, **kw)
        out = []
        for p in phases:
            sens = 2.0 * p.eta_i * L / C
            out.append(dataclasses.replace(p, sensitivity=sens, sigma_i=p.z * sens))
        return C, out
    return schedule


def _baseline_add_remove(orig):
    """alg3_schedule whose no-removal phases (the item-level baseline) use the add/remove
    sensitivity L/K_i of a mean of K_i user gradients (σ halved) for the replace-one claim."""
    def schedule(n, m, d, epsilon, delta, L, R, beta, **kw):
        tau, phases = orig(n, m, d, epsilon, delta, L, R, beta, **kw)
        if kw.get("removal", True):
            return tau, phases
        return tau, [dataclasses.replace(p, sensitivity=p.sensitivity / 2.0,
                                         sigma_i=p.sigma_i / 2.0) for p in phases]
    return schedule


def _at_query_noise(factor: float):
    """make(orig) for the AboveThreshold class: a subclass whose query noise scale is
    ``factor``·sens/ε (the algorithm's is 4·sens/ε), all else unchanged."""
    def make(orig):
        class Slipped(orig):
            def fires(self, query: float) -> bool:
                self.queries += 1
                noisy = float(query) + self.rng.laplace(0.0, factor * self.sensitivity
                                                        / self.epsilon)
                return noisy < self.noisy_threshold if self.below else \
                    noisy >= self.noisy_threshold
        return Slipped
    return make


def _at_threshold_noise(factor: float):
    """make(orig) for the AboveThreshold class: threshold noise Lap(factor·sens/ε) (the
    algorithm's is 2·sens/ε): drawn again from the same generator, replacing the first."""
    def make(orig):
        class Slipped(orig):
            def __init__(self, threshold, epsilon, sensitivity, rng, **kw):
                super().__init__(threshold, epsilon, sensitivity, rng, **kw)
                self.noisy_threshold = float(threshold) + rng.laplace(
                    0.0, factor * self.sensitivity / self.epsilon)
        return Slipped
    return make


_KEEP_ALL = Patch(_OUT, "keep_probabilities", lambda orig: (lambda h, K: np.ones(np.shape(h))))

register_mutant(Mutant(
    "userlevel.alg3.item_level_sensitivity", "userlevel",
    "Algorithm 3 calibrates its noise to the item-level sensitivity 2L/(mK)",
    (Patch(_A3, "alg3_schedule", _alg3_item_level),),
    experiments=_ALG3_RISK, audits=("userlevel.alg3.stepwise",), tests=_NOISE_TESTS[:1]))
register_mutant(Mutant(
    "userlevel.alg1.item_level_sensitivity", "userlevel",
    "Algorithm 1 calibrates its output noise to the item-level sensitivity 2η_iL/C",
    (Patch(_A1, "alg1_schedule", _alg1_item_level),),
    experiments=("userlevel.alg1.grads.n",), tests=_NOISE_TESTS[1:]))
register_mutant(Mutant(
    "userlevel.item_level_baseline.add_remove_sensitivity", "userlevel",
    "the item-level baseline calibrates its noise to the add/remove sensitivity L/K_i",
    (Patch(_A3, "alg3_schedule", _baseline_add_remove),),
    audits=("userlevel.item_level_baseline.stepwise",),
    bug_class="relation factor slipped"))
register_mutant(Mutant(
    "userlevel.alg3.no_outlier_removal", "userlevel",
    "outlier removal keeps every user (noise still calibrated to the concentrated sensitivity)",
    (_KEEP_ALL,), audits=("userlevel.alg3.stepwise",)))
register_mutant(Mutant(
    "userlevel.alg1.no_outlier_removal", "userlevel",
    "Algorithm 1 keeps every group iterate (noise still calibrated to 2τ_1 log(1/ζ)/C)",
    (_KEEP_ALL,), audits=("userlevel.alg1.final",)))
register_mutant(Mutant(
    "userlevel.noise_halved", "userlevel",
    "Algorithms 1 and 2 draw half the Gaussian noise they report",
    (Patch(_ACC, "gaussian_noise", scaled_result(0.5)),),
    experiments=_ALG3_RISK, tests=_NOISE_TESTS))
register_mutant(Mutant(
    "userlevel.alg3.noise_removed", "userlevel",
    "Algorithms 1 and 2 add no Gaussian noise (accounting unchanged)",
    (Patch(_ACC, "gaussian_noise", scaled_result(0.0)),),
    experiments=_ALG3_RISK, audits=("userlevel.alg3.stepwise",), tests=_NOISE_TESTS,
    bug_class="noise omitted"))
register_mutant(Mutant(
    "userlevel.alg3.wrong_step_count", "userlevel",
    "Algorithm 3's phases run a third of their T_i steps",
    (Patch(_A3, "phase_steps",
           lambda orig: (lambda T_f: max(1, int(math.ceil(T_f / 3.0))))),),
    experiments=_ALG3_RISK, tests=_NOISE_TESTS[:1]))
register_mutant(Mutant(
    "userlevel.accountant_off_by_2", "userlevel",
    "the user-level RDP accountant under-reports ε by a factor 2 (noise calibrated to it)",
    (Patch(_ACC, "gaussian_epsilon", scaled_result(0.5)),),
    experiments=_ALG3_RISK + ("userlevel.alg1.grads.n",), tests=_NOISE_TESTS))


# =============================================================================================
# Brute force: the sensitivity of Algorithm 2's outlier-removed mean (UL-E13)
# =============================================================================================
def three_group_points(K: int, frac: float = 0.387, d: int = 2, radius: float = 1.0
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(P, P′): K points in three groups at −r·e1, 0, +r·e1 (sizes a, K − 2a, a with
    a = ⌊frac·K⌋, r the concentration radius 2τ); P′ moves one point of the +r group to
    −1.5r·e1 (within r of the −r group only).  The outer groups' scores h = K − a sit on the
    ramp (K/2, 2K/3) of the keep probabilities, and the move shifts every one of them by one
    step, in the direction that pulls the kept mean towards −e1 on both sides."""
    a = int(math.floor(frac * K))
    pos = np.r_[np.full(a, -1.0), np.zeros(K - 2 * a), np.full(a, 1.0)] * radius
    P = np.zeros((K, d))
    P[:, 0] = pos
    P2 = P.copy()
    P2[-1, 0] = -1.5 * radius
    return P, P2


def three_group_tail(K: int, thresholds: np.ndarray, frac: float = 0.387) -> dict:
    """Exact tail P(‖g − g′‖·K/r > t) of the coupled move of the outlier-removed mean on
    :func:`three_group_points` (r = 2τ; coins shared, i.e. the maximal coupling per point), by
    enumeration over the binomial counts of kept points.  The scores and keep probabilities
    come from the algorithm's own ``concentration_scores``/``keep_probabilities`` on the actual
    points (so the configuration is the one the algorithm sees); the test statistic's condition
    s ≥ 0.7K (event E_i of Lemma C.2, what ŝ ≥ 4K/5 with |noise| ≤ K/20 implies) is returned.
    Empty kept sets (probability < 1e-40 here) are ignored."""
    from scipy.stats import binom

    P, P2 = three_group_points(K, frac)
    r = 1.0
    h, h2 = ul.concentration_scores(P, r), ul.concentration_scores(P2, r)
    p, p2 = ul.keep_probabilities(h, K), ul.keep_probabilities(h2, K)
    a = int(np.sum(P[:, 0] < 0))
    b = K - 2 * a
    L_idx, R_idx = np.arange(a), np.arange(K - a, K - 1)          # R without the moved point
    pL, pL2 = float(p[L_idx[0]]), float(p2[L_idx[0]])
    pR, pR2 = float(p[R_idx[0]]), float(p2[R_idx[0]])
    pc, pc2 = float(p[-1]), float(p2[-1])
    assert np.all(p[a:K - a] == 1) and np.all(p2[a:K - a] == 1)   # the middle group is kept
    assert pL2 >= pL and pR >= pR2
    c = a - 1
    qL = (pL2 - pL) / (1 - pL) if pL < 1 else 0.0
    qR = (pR - pR2) / (1 - pR2) if pR2 < 1 else 0.0
    t = np.asarray(thresholds, float)
    tail = np.zeros(t.size)
    LD = np.arange(a + 1)
    wLD = binom.pmf(LD, a, pL)
    R2 = np.arange(c + 1)
    wR2 = binom.pmf(R2, c, pR2)
    for c0, w0 in ((0, 1 - pc), (1, pc)):
        for c1, w1 in ((0, 1 - pc2), (1, pc2)):
            if w0 * w1 == 0:
                continue
            for i in np.nonzero(wLD > 1e-40)[0]:
                le = np.arange(a - i + 1)[:, None]
                wle = binom.pmf(le, a - i, qL)
                for j in np.nonzero(wR2 > 1e-40)[0]:
                    re = np.arange(c - j + 1)[None, :]
                    wre = binom.pmf(re, c - j, qR)
                    nD, nD2 = b + i + j + re + c0, b + i + le + j + c1
                    if np.any(nD == 0) or np.any(nD2 == 0):
                        continue
                    gD = r * ((j + re + c0) - i) / nD
                    gD2 = r * (j - (i + le) - 1.5 * c1) / nD2
                    move = np.abs(gD - gD2) * K / r
                    W = w0 * w1 * wLD[i] * wR2[j] * wle * wre
                    tail += np.array([W[move > x].sum() for x in t])
    s, s2 = h.sum() / K, h2.sum() / K
    return {"tail": tail, "s": s / K, "s_prime": s2 / K, "a": a, "p_outer": pL}


def needed_constant(K: int, zetas, frac: float = 0.387) -> dict:
    """The smallest c with P(‖g − g′‖ > c·τ log(1/ζ)/K) ≤ ζ on the three-group configuration,
    for each ζ (c·τ log(1/ζ)/K = (c/2)·log(1/ζ)·r/K with r = 2τ), and the probability that the
    former accounting's constant 2 (:data:`OLD_CONSTANT`, the broken control) is exceeded."""
    zetas = np.asarray(zetas, float)
    grid = np.linspace(0.0, 80.0, 1601)
    out = three_group_tail(K, np.r_[grid, 0.5 * OLD_CONSTANT * np.log(1 / zetas)], frac)
    tail, at_c = out["tail"][:grid.size], out["tail"][grid.size:]
    need = [2.0 * grid[int(np.argmax(tail <= z))] / math.log(1 / z) for z in zetas]
    return {"needed": np.array(need), "exceed_at_constant": at_c, "s": out["s"],
            "s_prime": out["s_prime"]}


#: The accounting's former hidden constant (UL-E7): Δ = 2τ log(1/ζ)/K.  Broken (UL-E13); kept
#: only as the control that the brute force must catch.
OLD_CONSTANT = 2.0


def corrected_bound_units(K: int, s_min: float, zeta: float) -> float:
    """The corrected bound (:func:`algorithms.userlevel.sco.outlier_mean_sensitivity`) in units
    of r/K (r = the keep-score radius 2τ), at score floor ``s_min`` (in units of K points)."""
    return ul.outlier_mean_sensitivity(1.0, K, s_min, zeta) * K


def coupled_moves(P: np.ndarray, P2: np.ndarray, radius: float, draws: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``draws`` coupled moves ‖g − g′‖ of the outlier-removed mean (shared coins, the maximal
    coupling per point), scores and keep probabilities from the algorithm's own primitives;
    vectorized over draws.  Draws where either side keeps nobody are returned as 0 (the
    algorithm releases nothing then)."""
    K = P.shape[0]
    p = ul.keep_probabilities(ul.concentration_scores(P, radius), K)
    p2 = ul.keep_probabilities(ul.concentration_scores(P2, radius), K)
    U = rng.random((draws, K))
    k1, k2 = U < p, U < p2
    n1, n2 = k1.sum(axis=1), k2.sum(axis=1)
    ok = (n1 > 0) & (n2 > 0)
    g1 = (k1 @ P) / np.maximum(n1, 1)[:, None]
    g2 = (k2 @ P2) / np.maximum(n2, 1)[:, None]
    return np.where(ok, np.linalg.norm(g1 - g2, axis=1), 0.0)


def random_configuration(K: int, rng: np.random.Generator, d: int = 2, radius: float = 1.0
                         ) -> tuple[np.ndarray, np.ndarray]:
    """An adversarial-looking pair: 2–4 clusters on a line at random spacings in [0.5r, 2r]
    with random sizes (point clouds of width ≤ 0.2r), one random point moved to a random place
    within 3r of the centre.  Spacings near r, 2r put scores on the keep ramp, where the
    replacement flips decisions."""
    k = int(rng.integers(2, 5))
    w = rng.dirichlet(np.ones(k))
    sizes = np.maximum(1, np.round(w * K).astype(int))
    sizes[-1] = K - sizes[:-1].sum()
    if sizes[-1] < 1:
        sizes = np.r_[K - k + 1, np.ones(k - 1, int)]
    centres = np.r_[0.0, np.cumsum(rng.uniform(0.5, 2.0, k - 1))] * radius
    pos = np.repeat(centres - centres.mean(), sizes)
    P = np.zeros((K, d))
    P[:, 0] = pos
    P[:, 1:] = rng.uniform(-0.1, 0.1, (K, d - 1)) * radius
    P2 = P.copy()
    P2[int(rng.integers(K))] = rng.uniform(-3.0, 3.0, d) * radius
    return P, P2


def random_search(K: int, configs: int, draws: int, zeta: float, seed: int = 0) -> dict:
    """Brute force over :func:`random_configuration` pairs (and the three-group pair) with both
    scores ≥ ``s_floor`` = the lower of the two actual scores: for each pair, the frequency with
    which the coupled move exceeds the corrected bound (at s_min = that floor) and the former
    constant-2 bound.  Returns the worst frequencies and the largest move/bound ratio seen."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, K, 4242])))
    worst_new, worst_old, ratio, used = 0.0, 0.0, 0.0, 0
    pairs = [three_group_points(K, 0.38)] + [random_configuration(K, rng) for _ in range(configs)]
    for P, P2 in pairs:
        s = min(ul.concentration_scores(P, 1.0).sum(), ul.concentration_scores(P2, 1.0).sum()) / K
        bound = ul.outlier_mean_sensitivity(1.0, K, s, zeta)
        if not np.isfinite(bound):
            continue
        used += 1
        mv = coupled_moves(P, P2, 1.0, draws, rng)
        old = OLD_CONSTANT * 0.5 * math.log(1 / zeta) / K          # τ = r/2
        worst_new = max(worst_new, float(np.mean(mv > bound)))
        worst_old = max(worst_old, float(np.mean(mv > old)))
        ratio = max(ratio, float(mv.max() / bound))
    return {"pairs": used, "worst_new": worst_new, "worst_old": worst_old, "max_ratio": ratio}
register_mutant(Mutant(
    "userlevel.above_threshold.query_noise_slip", "userlevel",
    "AboveThreshold's query noise Lap(2Δ/ε) instead of Lap(4Δ/ε)",
    (Patch(_A3, "AboveThreshold", _at_query_noise(2.0)),),
    audits=("userlevel.above_threshold",), bug_class="AboveThreshold noise slip"))
register_mutant(Mutant(
    "userlevel.above_threshold.threshold_noise_slip", "userlevel",
    "AboveThreshold's threshold noise Lap(Δ/ε) instead of Lap(2Δ/ε)",
    (Patch(_A3, "AboveThreshold", _at_threshold_noise(1.0)),),
    audits=("userlevel.above_threshold",), bug_class="AboveThreshold noise slip"))
register_mutant(Mutant(
    "userlevel.above_threshold.query_noise_removed", "userlevel",
    "AboveThreshold's queries carry no noise",
    (Patch(_A3, "AboveThreshold", _at_query_noise(0.0)),),
    audits=("userlevel.above_threshold",), bug_class="noise omitted"))
register_mutant(Mutant(
    "userlevel.above_threshold.threshold_noise_removed", "userlevel",
    "AboveThreshold's threshold carries no noise",
    (Patch(_A3, "AboveThreshold", _at_threshold_noise(0.0)),),
    audits=("userlevel.above_threshold",), bug_class="noise omitted"))
register_mutant(Mutant(
    "userlevel.accountant_count_halved", "userlevel",
    "the user-level Gaussian accountant composes half the releases (noise calibrated to it)",
    (Patch(_ACC, "gaussian_epsilon",
           lambda orig: (lambda z, count, *a, **k: orig(z, max(1, count // 2), *a, **k))),),
    audits=("userlevel.item_level_baseline.stepwise",), bug_class="composition count halved"))


def _last_iterate(orig):
    """make(orig) for sgd_average_iterates: the last iterate x_T instead of the average (the
    same pass: one permutation per chain, projected steps)."""
    def last(data, groups, eta, x0, rng):
        groups = np.asarray(groups, dtype=np.intp)
        Cg, N = groups.shape
        T = N * data.m
        order = np.argsort(rng.random((Cg, T)), axis=1)
        users = np.take_along_axis(np.repeat(groups, data.m, axis=1), order, axis=1)
        items = np.take_along_axis(np.tile(np.arange(data.m), (Cg, N)), order, axis=1)
        X = np.broadcast_to(np.asarray(x0, dtype=float), (Cg, data.d)).copy()
        for t in range(T):
            X = data.project(X - eta * data.item_gradients(X, users[:, t], items[:, t]))
        return X
    return last


register_mutant(Mutant(
    "userlevel.alg1.averaging_skipped", "userlevel",
    "Algorithm 1's SGD returns its last iterate instead of the average",
    (Patch(_A1, "sgd_average_iterates", _last_iterate),),
    experiments=("userlevel.lem23.T",), bug_class="averaging skipped",
    verify_note="verify, not an audit (privacy unchanged: the average is post-processing of the "
                "group's SGD, and outlier removal bounds either): the last iterate's distance is "
                "√3 × η√(2T/3); caught by a level band at that exact constant, missed by the "
                "present [0.07, 0.3] band"))
