"""AboveThreshold (Algorithm 4 of the user-level SCO paper, Lowy, Liu, Asi; Lemma A.9) audited as
Algorithm 2 uses it: sensitivity 2, budget ε/2, user-replace.  Statistic: the halting index's
pilot log-likelihood ratio, on query sequences searched (:data:`AT_QUICK`, :data:`AT_FULL`);
registered through :mod:`empirical.papers.userlevel.audit`.
"""
from __future__ import annotations

import numpy as np

from algorithms.userlevel import sco as ul
from empirical.papers.userlevel.audit_canary import _RELATION, ALG3
from empirical.privacy.audit import AuditTarget, register_audit
from empirical.privacy.mutants import with_mutant

__all__ = ["AT", "AT_QUICK", "AT_FULL", "at_queries", "at_halting_index"]

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


#: Why AboveThreshold's targets carry no claimed profile (Lemma A.9's claim is pure ε).
_NO_PROFILE = ("; no claimed profile: Lemma A.9's claim is pure ε (ε/2 at every δ), while the "
               "halting index's exact ε(δ) falls as δ grows, so a larger δ can only lose power")

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
         "index's pilot log-likelihood ratio" + _NO_PROFILE))
register_audit(AuditTarget(
    name="userlevel.above_threshold.query_noise_slip", paper="userlevel",
    algorithm="AboveThreshold drawing its query noise from Lap(2Δ/ε) instead of Lap(4Δ/ε)",
    relation=_RELATION, delta=ALG3["delta"], claimed_epsilon=lambda: AT["epsilon"] / 2.0,
    candidates={_at_label(*c): with_mutant("userlevel.above_threshold.query_noise_slip",
                                           _at_release(*c)) for c in AT_QUICK},
    view="mechanism", trials=400_000, search_trials=100_000, reference="laplace",
    expect="broken", note="as userlevel.above_threshold" + _NO_PROFILE))

