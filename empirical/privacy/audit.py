"""Privacy audits: an empirical lower bound on ε beside the ε an algorithm claims.

What an audit proves.  A mechanism M is (ε, δ)-DP under a neighbouring relation only if, for
every neighbouring pair (D, D′) and every event S, P[M(D′) ∈ S] ≤ e^ε P[M(D) ∈ S] + δ (and with
D, D′ swapped).  Run M many times on one neighbouring pair, take S = {score ≥ τ} for a test
statistic ``score``, and write a = P[M(D) ∈ S] (false-positive rate), b = P[M(D′) ∈ S]
(true-positive rate).  Then every (ε, δ) the mechanism satisfies obeys

    ε ≥ max{ log((b − δ)/a), log((1 − a − δ)/(1 − b)), log((a − δ)/b), log((1 − b − δ)/(1 − a)) }

(Kairouz, Oh, Viswanath 2015; the auditing method of Jagielski, Ullman, Oprea 2020 and Nasr et
al. 2021).  a and b are estimated from N independent runs per side; replacing each numerator by
its one-sided Clopper–Pearson lower bound and each denominator by its upper bound, each at
confidence 1 − α/2, gives ε_lo with P[ε_true(δ) ≥ ε_lo] ≥ 1 − α.  The threshold τ and which of
the four forms is used are chosen on the first half of each side's runs and evaluated on the
second half, so the choice does not bias the bound.

What it does not prove.  ε_lo ≤ claimed ε is evidence, not a proof, of privacy: only this pair,
this statistic and these N runs were tried.  ε_lo > claimed ε (beyond the 1 − α confidence) *is*
a proof that the implementation violates its claim.  How close ε_lo gets to the claim measures
the audit's power; :data:`POWER` targets (the Gaussian mechanism, full-batch DP-GD with a
gradient canary) state the fraction reached.

Registry.  ``register_audit(AuditTarget(...))`` at import time of a paper's module (see
docs/privacy.md).  Core targets live here; each paper's in its audit module
(:mod:`empirical.papers.kl.audit`, ``audit_kan``, ``audit_linreg``, ``audit_userlevel``,
``sosp_audit``); docs/privacy.md lists which algorithm each target audits, and why the few
private functions without a target have none.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from algorithms import accounting
from algorithms.primitives import clip_per_sample
from algorithms.validation import check_int, check_open_interval
from bounds.core import papers
from empirical.store.rows import ResultWriteError, check_writable, results_dir

__all__ = ["AuditTarget", "AuditResult", "RELATIONS", "register_audit", "targets", "get_target",
           "select_registered", "run_audit", "epsilon_lower_bound", "exact_gaussian_epsilon",
           "reference_power", "gaussian_mu_for_epsilon", "laplace_shift_for_epsilon", "POWER_FLAG",
           "SEARCHES",
           "clopper_pearson", "spawn_rows",
           "add_arguments", "run_cli", "format_audit_table", "store_result", "load_audits"]

#: Neighbouring relations an algorithm may claim.
RELATIONS = ("replace-one", "add-remove", "zero-out", "user-replace", "user-add-remove")
_VIEWS = ("final", "stepwise", "mechanism")
_EXPECT = ("private", "broken")
_REFERENCES = ("gaussian", "laplace")
#: Search settings: ``quick`` (tests, default) tries a target's ``candidates``; ``full`` adds its
#: ``full_candidates`` and runs ``full_trials`` per side.
SEARCHES = ("quick", "full")
#: An audit whose power (:func:`reference_power`) is below this is flagged LOW POWER.
POWER_FLAG = 0.7

ReleaseFn = Callable[[int, np.random.Generator, int], np.ndarray]


# =============================================================================================
# statistics
# =============================================================================================
def clopper_pearson(k: np.ndarray | int, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds for a binomial proportion k/n, each at confidence 1 − α:
    lower = Beta⁻¹(α; k, n − k + 1) (0 when k = 0), upper = Beta⁻¹(1 − α; k + 1, n − k) (1 when
    k = n)."""
    n = check_int("n", n)
    alpha = check_open_interval("alpha", alpha, 0.0, 1.0)
    k = np.asarray(k, dtype=float)
    if np.any((k < 0) | (k > n)):
        raise ValueError(f"k must be in [0, n={n}]")
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return lo, hi


def _eps_forms(a_lo, a_hi, b_lo, b_hi, delta: float) -> np.ndarray:
    """The four DP inequalities on S and its complement, both directions, conservatively
    (numerators at their lower, denominators at their upper confidence bound); shape (4, ...)."""
    def lg(num, den):
        # num ≤ 0: the inequality says nothing (−inf); den = 0 < num: no finite ε satisfies it
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.log(np.maximum(num, 0.0) / den)
        return np.where(num > 0, np.where(den > 0, v, np.inf), -np.inf)

    return np.stack([lg(b_lo - delta, a_hi), lg(1 - a_hi - delta, 1 - b_lo),
                     lg(a_lo - delta, b_hi), lg(1 - b_hi - delta, 1 - a_lo)])


def _counts_at(scores_sorted: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """#{score ≥ τ} for each τ (scores sorted ascending)."""
    return scores_sorted.size - np.searchsorted(scores_sorted, thresholds, side="left")


@dataclass(frozen=True)
class EpsilonBound:
    epsilon: float        # ε_lo, the (1 − α)-confidence lower bound (≥ 0)
    point: float          # the same form evaluated at the raw rates (no confidence correction)
    threshold: float
    form: int             # which of the four inequalities
    fpr: float            # a on the evaluation half
    tpr: float            # b on the evaluation half
    n_eval: int


def epsilon_lower_bound(scores0: np.ndarray, scores1: np.ndarray, delta: float, *,
                        alpha: float = 0.05, n_thresholds: int = 512,
                        select_alpha: float | None = None) -> EpsilonBound:
    """ε lower bound at δ from scores of runs on D (``scores0``) and D′ (``scores1``).

    The first half of each array selects τ and the form (maximising the Clopper–Pearson bound on
    that half at ``select_alpha``, default α/100), the second half evaluates them with
    Clopper–Pearson at 1 − α/2 per rate (Bonferroni over the two rates).  The stricter selection
    level only steers the choice away from far-tail thresholds whose handful of counts won by
    chance (winner's curse); it does not enter the confidence statement, which rests on the
    independent second half alone.  (On N(0,1) vs N(1/2,1) with 20000 runs per side it raises
    the worst of 15 bounds from 0 to 0.64, the mean from 0.67 to 0.85.)  Candidate thresholds are ``n_thresholds`` quantiles of the
    pooled selection scores, plus their extreme order statistics (where the best tail tests live).
    """
    s0, s1 = np.asarray(scores0, float).ravel(), np.asarray(scores1, float).ravel()
    if s0.size < 4 or s1.size < 4:
        raise ValueError("scores0 and scores1 must hold at least 4 runs each")
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError("scores must be finite")
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    h0, h1 = s0.size // 2, s1.size // 2
    sel0, ev0 = np.sort(s0[:h0]), np.sort(s0[h0:])
    sel1, ev1 = np.sort(s1[:h1]), np.sort(s1[h1:])
    pooled = np.concatenate([sel0, sel1])
    qs = np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds))
    tails = np.concatenate([sel0[-64:], sel1[-64:], sel0[:64], sel1[:64]])
    taus = np.unique(np.concatenate([qs, tails, np.nextafter(tails, np.inf)]))
    k0, k1 = _counts_at(sel0, taus), _counts_at(sel1, taus)
    sa = alpha / 100 if select_alpha is None else check_open_interval("select_alpha",
                                                                       select_alpha, 0.0, 1.0)
    a_lo, a_hi = clopper_pearson(k0, sel0.size, sa / 2)
    b_lo, b_hi = clopper_pearson(k1, sel1.size, sa / 2)
    forms = _eps_forms(a_lo, a_hi, b_lo, b_hi, delta)
    f, i = np.unravel_index(int(np.argmax(forms)), forms.shape)
    tau = float(taus[i])
    e0, e1 = int(_counts_at(ev0, np.array([tau]))[0]), int(_counts_at(ev1, np.array([tau]))[0])
    a_lo, a_hi = clopper_pearson(e0, ev0.size, alpha / 2)
    b_lo, b_hi = clopper_pearson(e1, ev1.size, alpha / 2)
    eps = float(_eps_forms(a_lo, a_hi, b_lo, b_hi, delta)[f])
    a, b = e0 / ev0.size, e1 / ev1.size
    point = float(_eps_forms(np.float64(a), np.float64(a), np.float64(b), np.float64(b), delta)[f])
    return EpsilonBound(max(eps, 0.0), point, tau, int(f), a, b, int(min(ev0.size, ev1.size)))


# =============================================================================================
# registry
# =============================================================================================
@dataclass(frozen=True)
class AuditTarget:
    """One private mechanism and one (or several candidate) neighbouring pairs to audit it on.

    ``release(side, rng, trials)`` returns the scores of ``trials`` independent runs on D
    (side 0) or D′ (side 1), drawing only from ``rng``.  ``claimed_epsilon()`` is the ε(δ) the
    algorithm claims, from dp-accounting.  ``candidates`` replaces ``release`` when the pair (or
    the statistic) is searched for.  ``expect="broken"`` marks a deliberately broken control
    that the audit must catch.  ``exact_epsilon``/``min_fraction`` state a power requirement.
    """

    name: str
    paper: str
    algorithm: str
    relation: str
    delta: float
    claimed_epsilon: Callable[[], float]
    release: ReleaseFn | None = None
    candidates: Mapping[str, ReleaseFn] | None = None
    view: str = "final"
    trials: int = 100_000
    search_trials: int = 4_000
    expect: str = "private"
    exact_epsilon: Callable[[], float] | None = None
    min_fraction: float | None = None
    note: str = ""
    #: extra candidates tried only under ``search="full"`` (``dprates audit --search full``)
    full_candidates: Mapping[str, ReleaseFn] | None = None
    #: runs per side under ``search="full"`` (default: ``trials``)
    full_trials: int | None = None
    #: shape of the power reference (:func:`reference_power`): "gaussian" or "laplace"
    reference: str = "gaussian"

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        if self.view not in _VIEWS:
            raise ValueError(f"view must be one of {_VIEWS}, got {self.view!r}")
        if self.expect not in _EXPECT:
            raise ValueError(f"expect must be one of {_EXPECT}, got {self.expect!r}")
        if (self.release is None) == (self.candidates is None):
            raise ValueError("give exactly one of release and candidates")
        if self.candidates is not None and not self.candidates:
            raise ValueError("candidates must be non-empty")
        check_open_interval("delta", self.delta, 0.0, 1.0)
        check_int("trials", self.trials, minimum=8)
        if self.reference not in _REFERENCES:
            raise ValueError(f"reference must be one of {_REFERENCES}, got {self.reference!r}")
        if self.full_candidates is not None and self.candidates is None:
            raise ValueError("full_candidates needs candidates")
        if self.full_trials is not None:
            check_int("full_trials", self.full_trials, minimum=8)
        if self.min_fraction is not None:
            check_open_interval("min_fraction", self.min_fraction, 0.0, 1.0)
            if self.exact_epsilon is None:
                raise ValueError("min_fraction needs exact_epsilon")


@dataclass(frozen=True)
class AuditResult:
    target: AuditTarget
    claimed: float
    bound: EpsilonBound
    alpha: float
    trials: int
    pair: str
    exact: float | None
    verdict: str
    seconds: float
    search: dict = field(default_factory=dict)
    block: int = 50_000          # runs per seeded block (part of how the runs were seeded)
    power: float | None = None   # fraction of the exact ε certified on the reference mechanism
    setting: str = "quick"       # the search setting (SEARCHES)

    @property
    def low_power(self) -> bool:
        """Power below :data:`POWER_FLAG`: an ε_lo far below the claim is weak evidence."""
        return self.power is not None and self.power < POWER_FLAG

    @property
    def audited(self) -> float:
        return self.bound.epsilon

    @property
    def ok(self) -> bool:
        return self.verdict in ("OK", "CAUGHT", "POWER OK")


_AUDITS: dict[str, AuditTarget] = {}
#: Modules registering audit targets beyond the paper modules (core targets are in this one).
_EXTRA_MODULES: list[str] = []


def register_audit(target: AuditTarget) -> AuditTarget:
    from empirical.core.experiment import check_id

    check_id(target.name, "audit target name")     # its stored file is audits/<name>.json
    if target.name in _AUDITS and _AUDITS[target.name] is not target:
        old = _AUDITS[target.name]
        if (old.paper, old.algorithm) != (target.paper, target.algorithm):
            raise ValueError(f"audit target {target.name!r} registered twice")
    _AUDITS[target.name] = target
    return target


def _load(paper: str | None = None) -> None:
    from empirical.core import experiment as registry

    registry._load_all(paper if paper in papers() else None)
    for m in _EXTRA_MODULES:
        importlib.import_module(m)


def targets(selection: Sequence[str] | None = None) -> list[AuditTarget]:
    """Targets by name or paper key (``"core"``, ``"kl"``, ...); all when empty."""
    from empirical.core import experiment as registry

    sel = list(selection or [])
    keys = [s for s in sel if s in papers()]
    _load(keys[0] if len(keys) == 1 and len(sel) == 1 else None)
    return select_registered(_AUDITS, sel, "audit target or paper")


def select_registered(registry: Mapping[str, Any], selection: Sequence[str] | None,
                      what: str) -> list:
    """The entries of ``registry`` (name → entry with a ``paper``) that ``selection`` names, in
    order, each once: a name, a name prefix ending before a ``.``, or a paper key; all entries
    (sorted by name) when ``selection`` is empty.  KeyError naming ``what`` for a selector that
    matches nothing (audit targets here, mutants in :mod:`empirical.privacy.mutants`)."""
    if not selection:
        return [e for _, e in sorted(registry.items())]
    out: list = []
    for s in selection:
        hits = [e for n, e in sorted(registry.items())
                if e.paper == s or n == s or n.startswith(s + ".")]
        if not hits:
            raise KeyError(f"no {what} {s!r}; known: {sorted(registry)}")
        out += [e for e in hits if e not in out]
    return out


def get_target(name: str) -> AuditTarget:
    _load(name.split(".", 1)[0])
    if name not in _AUDITS:
        _load()
    try:
        return _AUDITS[name]
    except KeyError:
        raise KeyError(f"no audit target {name!r}; known: {sorted(_AUDITS)}") from None


# =============================================================================================
# running
# =============================================================================================
from empirical.store.audit_store import _h  # noqa: E402  (the seeding hash, stored with rows)


def _scores(target: AuditTarget, fn: ReleaseFn, label: str, side: int, trials: int, tag: str,
            block: int) -> np.ndarray:
    """``trials`` scores in blocks; block j draws from SeedSequence([h(name), h(label), h(tag),
    side, j]) only, so results do not depend on the block size's effect on other blocks."""
    out = []
    for j, start in enumerate(range(0, trials, block)):
        m = min(block, trials - start)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            [_h(target.name), _h(label), _h(tag), side, j])))
        s = np.asarray(fn(side, rng, m), dtype=float).ravel()
        if s.size != m:
            raise ValueError(f"{target.name}: release returned {s.size} scores for {m} trials")
        out.append(s)
    return np.concatenate(out)


def run_audit(target: AuditTarget, *, trials: int | None = None, alpha: float = 0.05,
              block: int = 50_000, search: str = "quick") -> AuditResult:
    """Audit ``target``: a search over its candidate pairs, query sequences or statistics on
    independent seeds (``search="full"`` adds ``full_candidates`` and runs ``full_trials``),
    then the main audit on fresh seeds, and its power (:func:`reference_power`)."""
    t0 = time.perf_counter()
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    default = target.full_trials if search == "full" and target.full_trials else target.trials
    trials = check_int("trials", trials if trials is not None else default, minimum=MIN_TRIALS)
    if trials > MAX_TRIALS:
        raise ValueError(f"trials must be an integer in [{MIN_TRIALS}, {MAX_TRIALS}], "
                         f"got {trials!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    found = {}
    if target.candidates is not None:
        cands = dict(target.candidates)
        if search == "full" and target.full_candidates:
            cands.update(target.full_candidates)
        for label, fn in cands.items():
            m = min(target.search_trials, trials)
            s0 = _scores(target, fn, label, 0, m, "search", block)
            s1 = _scores(target, fn, label, 1, m, "search", block)
            found[label] = epsilon_lower_bound(s0, s1, target.delta, alpha=alpha).point
        pair = max(found, key=lambda k: (found[k], k))
        fn = cands[pair]
    else:
        pair, fn = "given", target.release
    s0 = _scores(target, fn, pair, 0, trials, "audit", block)
    s1 = _scores(target, fn, pair, 1, trials, "audit", block)
    bound = epsilon_lower_bound(s0, s1, target.delta, alpha=alpha)
    claimed = float(target.claimed_epsilon())
    exact = float(target.exact_epsilon()) if target.exact_epsilon is not None else None
    power = reference_power(target, claimed, trials, alpha)
    if target.expect == "broken":
        verdict = "CAUGHT" if bound.epsilon > claimed else "MISSED"
    elif bound.epsilon > claimed:
        verdict = "VIOLATION"
    elif target.min_fraction is not None and bound.epsilon < target.min_fraction * exact:
        verdict = "WEAK"
    else:
        verdict = "POWER OK" if target.min_fraction is not None else "OK"
    return AuditResult(target, claimed, bound, alpha, trials, pair, exact, verdict,
                       time.perf_counter() - t0, found, block, power, search)


# =============================================================================================
# power: the same audit on a reference mechanism whose exact ε is the claim
# =============================================================================================
def _shift_for_epsilon(loss: Callable[[float], Any], epsilon: float, delta: float,
                       lo: float) -> float:
    """The shift s ≥ lo with δ(ε) of ``loss(s)`` (a dp-accounting privacy loss) equal to δ:
    δ(ε) grows with the shift, so Brent on [lo, hi]."""
    from scipy.optimize import brentq

    f = lambda s: loss(s).get_delta_for_epsilon(epsilon) - delta  # noqa: E731
    hi = max(2.0 * lo, 1.0)
    while f(hi) < 0:
        hi *= 2.0
    return float(brentq(f, lo, hi, xtol=1e-12))


def gaussian_mu_for_epsilon(epsilon: float, delta: float) -> float:
    """μ with ε(δ) of N(0, 1) vs N(μ, 1) equal to ``epsilon`` (dp-accounting's Gaussian privacy
    loss, inverted by Brent)."""
    from dp_accounting.pld import privacy_loss_mechanism as plm

    epsilon = check_open_interval("epsilon", epsilon, 0.0, math.inf)
    return _shift_for_epsilon(lambda m: plm.GaussianPrivacyLoss(1.0, sensitivity=m),
                              epsilon, delta, 1e-9)


def laplace_shift_for_epsilon(epsilon: float, delta: float) -> float:
    """s with ε(δ) of Lap(0, 1) vs Lap(s, 1) equal to ``epsilon`` (s ≥ ε: pure ε = s)."""
    from dp_accounting.pld import privacy_loss_mechanism as plm

    epsilon = check_open_interval("epsilon", epsilon, 0.0, math.inf)
    return _shift_for_epsilon(lambda m: plm.LaplacePrivacyLoss(1.0, sensitivity=m),
                              epsilon, delta, epsilon)


def reference_power(target: AuditTarget, claimed: float, trials: int,
                    alpha: float = 0.05) -> float | None:
    """The audit's power: the fraction of the exact ε(δ) that :func:`epsilon_lower_bound`, with
    ``trials`` runs per side at ``alpha``, certifies on a reference mechanism whose exact ε(δ) is
    ``claimed`` — a correctly calibrated Gaussian (N(0,1) vs N(μ,1), the likelihood-ratio score
    of any Gaussian release sequence reduces to it) or Laplace (Lap(0,1) vs Lap(s,1), ε(δ) =
    claimed) as ``target.reference`` says.  It states what this many runs can show at this δ:
    an honest audit reaching ε_lo ≈ power × claimed is as strong as the harness allows, and a
    bug moving the exact ε to E is certain to be caught only if power × E > claimed.  Seeded
    from the target's name (SeedSequence), so it is reproducible.  None when the claim is not a
    positive finite number."""
    if not (math.isfinite(claimed) and claimed > 0):
        return None
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [_h(target.name), _h("reference"), trials])))
    if target.reference == "gaussian":
        mu = gaussian_mu_for_epsilon(claimed, target.delta)
        s0, s1 = rng.standard_normal(trials), mu + rng.standard_normal(trials)
    else:
        shift = laplace_shift_for_epsilon(claimed, target.delta)
        s0, s1 = rng.laplace(0.0, 1.0, trials), shift + rng.laplace(0.0, 1.0, trials)
    return float(epsilon_lower_bound(s0, s1, target.delta, alpha=alpha).epsilon / claimed)


def format_audit_table(results: Sequence[AuditResult]) -> str:
    head = ("target", "relation", "view", "δ", "claimed ε", "audited ε_lo", "ε̂ (point)",
            "exact ε", "power", "trials/side", "pair", "verdict")
    rows = []
    for r in results:
        t = r.target
        rows.append((t.name + (" [control]" if t.expect == "broken" else ""), t.relation, t.view,
                     f"{t.delta:g}", f"{r.claimed:.3f}", f"{r.audited:.3f}",
                     f"{r.bound.point:.3f}", "-" if r.exact is None else f"{r.exact:.3f}",
                     "-" if r.power is None else
                     f"{r.power:.2f}" + (" LOW" if r.low_power else ""),
                     str(r.trials), r.pair, r.verdict))
    widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*x) for x in rows]
    alpha = results[0].alpha if results else 0.05
    out += ["", f"audited ε_lo: lower bound on the true ε(δ) with confidence {1 - alpha:g} "
            "(Clopper–Pearson, threshold chosen on a held-out half). OK: ε_lo ≤ claimed; "
            "VIOLATION: the claim is false; [control] rows are deliberately broken and must be "
            "CAUGHT (ε_lo > claimed); POWER OK/WEAK: ε_lo reaches / misses the stated fraction "
            "of the exact ε.",
            f"power: fraction of the exact ε the same audit (runs per side, α, δ) certifies on a "
            f"correctly calibrated reference mechanism (Gaussian or Laplace) whose exact ε is the "
            f"claim; LOW below {POWER_FLAG:g} (an OK verdict at low power is weak evidence)."]
    for r in results:
        if r.target.min_fraction is not None:
            out.append(f"  {r.target.name}: ε_lo/exact = {r.audited / r.exact:.2f} "
                       f"(required ≥ {r.target.min_fraction:g})")
        if r.search:
            out.append(f"  {r.target.name}: {r.setting} search (point ε̂): "
                       + ", ".join(f"{k}={v:.2f}" for k, v in r.search.items()))
    return "\n".join(out)


def store_result(result: AuditResult, results: str | None = None) -> str:
    """Store ``result`` atomically under ``<results>/audits/`` (:mod:`empirical.store.audit_store`);
    returns the file's path."""
    from empirical.store import audit_store

    return str(audit_store.store(result, results))


def load_audits(results: str | None = None, problems: list[str] | None = None) -> dict:
    """Stored audit results by target name (:func:`empirical.store.audit_store.load`)."""
    from empirical.store import audit_store

    return audit_store.load(results, problems)


# =============================================================================================
# building blocks of release functions
# =============================================================================================
def spawn_rows(rng: np.random.Generator, trials: int) -> list[np.random.Generator]:
    """``trials`` independent Generators spawned from ``rng``'s SeedSequence (for algorithms
    that take one generator per row)."""
    return [np.random.Generator(np.random.PCG64(s))
            for s in rng.bit_generator.seed_seq.spawn(check_int("trials", trials))]


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
    register_audit(AuditTarget(
        name="core.gaussian", paper="core",
        algorithm="algorithms.primitives.gaussian_mechanism (z = 1)", relation="replace-one",
        delta=CORE_DELTA, claimed_epsilon=gauss_claim, release=_gaussian_release(GAUSS_Z),
        view="mechanism", trials=1_000_000, exact_epsilon=gauss_claim, min_fraction=POWER,
        note="mean of [−1,1] scalars, canary +1 vs −1: the largest replace-one shift"))
    register_audit(AuditTarget(
        name="core.gaussian.noise_halved", paper="core",
        algorithm="Gaussian mechanism drawing half the noise it claims", relation="replace-one",
        delta=CORE_DELTA, claimed_epsilon=gauss_claim, release=_gaussian_release(GAUSS_Z / 2),
        view="mechanism", trials=100_000, expect="broken",
        note="claims z = 1, draws z = 1/2"))
    dpgd_claim = lambda: exact_gaussian_epsilon(_DPGD_Z, _DPGD_T)  # noqa: E731
    for view in ("stepwise", "final"):
        register_audit(AuditTarget(
            name=f"core.dp_gd.{view}", paper="core",
            algorithm=f"full-batch DP-GD with per-example clipping, T = {_DPGD_T}, ρ = {rho:g}",
            relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
            release=_dp_gd_release(_DPGD_Z, True, _DPGD_T, _DPGD_D, view), view=view,
            trials=1_000_000, exact_epsilon=dpgd_claim, min_fraction=POWER,
            note="gradient canary 5C·e1 replacing a zero record; linear losses"))
    register_audit(AuditTarget(
        name="core.dp_gd.clipping_skipped", paper="core",
        algorithm="DP-GD that skips per-example clipping (noise still scaled to C)",
        relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
        release=_dp_gd_release(_DPGD_Z, False, _DPGD_T, _DPGD_D, "stepwise"), view="stepwise",
        trials=100_000, expect="broken", note="the canary's gradient 5C is not clipped"))
    register_audit(AuditTarget(
        name="core.dp_gd.add_remove_sensitivity", paper="core",
        algorithm="DP-GD claiming replace-one with the add/remove sensitivity C/n (σ halved)",
        relation="replace-one", delta=CORE_DELTA, claimed_epsilon=dpgd_claim,
        release=_dp_gd_release(_DPGD_Z / 2, True, _DPGD_T, _DPGD_D, "stepwise"),
        view="stepwise", trials=100_000, expect="broken",
        note="σ = z·C/n instead of z·2C/n"))


_register_core()


# =============================================================================================
# CLI (wired by empirical/cli/__init__.py as `dprates audit`)
# =============================================================================================
#: Runs per side an audit accepts: at least 8 (a rate needs a few runs), at most 10⁹ (a
#: thousand times the largest target's default; beyond it an audit would run for days).
MIN_TRIALS, MAX_TRIALS = 8, 10**9


def _trials_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or not MIN_TRIALS <= n <= MAX_TRIALS:
        raise argparse.ArgumentTypeError(f"must be an integer in [{MIN_TRIALS}, {MAX_TRIALS}], "
                                         f"got {text!r}")
    return n


def _alpha_arg(text: str) -> float:
    try:
        a = float(text)
    except ValueError:
        a = math.nan
    if not 0 < a < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return a


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``dprates audit [TARGET|PAPER ...]``."""
    parser.add_argument("targets", nargs="*", help="audit targets or paper keys (default: all)")
    parser.add_argument("--trials", type=_trials_arg, default=None,
                        help=f"runs per side, in [{MIN_TRIALS}, {MAX_TRIALS}] "
                             "(default: each target's own)")
    parser.add_argument("--alpha", type=_alpha_arg, default=0.05,
                        help="1 − confidence of the lower bounds, in (0, 1) (default 0.05)")
    parser.add_argument("--search", choices=SEARCHES, default="quick",
                        help="worst-case search: quick (default; each target's candidate pairs, "
                             "query sequences and statistics) or full (more candidates and "
                             "each target's full run count)")
    parser.add_argument("--list", action="store_true", help="list targets and exit")
    parser.add_argument("--mutants", action="store_true",
                        help="run the mutation self-test (slow) instead of the audits")
    parser.add_argument("--mutant", action="append", default=None,
                        help="with --mutants: only this mutant (repeatable)")
    parser.add_argument("--results", default=None,
                        help="results directory: each audit's result is stored under "
                             "RESULTS/audits/ (default: $DPRATES_RESULTS or ./results); with "
                             "--mutants: the mutants' results (default: a temporary one)")
    parser.add_argument("--no-store", action="store_true",
                        help="do not store the audits' results")


def run_cli(args: argparse.Namespace) -> int:
    """``dprates audit``: 0 if every audit came out as expected, 1 otherwise, 2 on bad names."""
    import sys

    try:
        sel = targets(args.targets)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    if args.list:
        for t in sel:
            print(f"{t.name:<40} {t.paper:<8} {t.relation:<12} {t.view:<10} {t.algorithm}")
        return 0
    store = not getattr(args, "no_store", False)
    if store:
        try:    # an unwritable --results is caught before the first audit, not after it
            check_writable(results_dir(getattr(args, "results", None)))
        except ResultWriteError as exc:
            print(f"dprates: error: --results: {exc}", file=sys.stderr)
            return 2
    results = []
    for t in sel:
        r = run_audit(t, trials=args.trials, alpha=args.alpha,
                      search=getattr(args, "search", "quick"))
        # stored as soon as computed: an interrupted `dprates audit` keeps the finished targets
        where = f", stored {store_result(r, getattr(args, 'results', None))}" if store else ""
        pw = "" if r.power is None else f", power {r.power:.2f}" + (" LOW" if r.low_power else "")
        print(f"[audit] {t.name}: claimed {r.claimed:.3f}, ε_lo {r.audited:.3f} -> {r.verdict}"
              f"{pw} ({r.seconds:.1f}s{where})", file=sys.stderr)
        results.append(r)
    print(format_audit_table(results))
    bad = [r.target.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)}/{len(results)} audits as expected"
          + (f"; failed: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0
