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

Profile points.  Near δ = 10⁻⁵ the most powerful threshold test sits in a tail of probability
≈ δ·e^ε, which N runs resolve only for N ≳ 10⁶.  An accountant's claim is a whole profile
δ ↦ ε(δ) (``AuditTarget.claimed_epsilon_at``), and a wrong noise, sensitivity, relation or
composition count moves all of it; so such a target is also judged at the δ_p of
:data:`PROFILE_DELTAS` where the reference power (:func:`reference_power`) is largest, chosen
before any run from the claim and the run count alone (:func:`profile_plan`).  The same scores are
judged at both δ (each selecting its threshold on the first half, evaluated on the second), each
at α/2, so both bounds hold together with probability ≥ 1 − α (Bonferroni); ε_lo above the claim
at either point disproves the claim.

Registry.  ``register_audit(AuditTarget(...))`` at import time of a paper's module (see
docs/privacy.md).  Core targets live in :mod:`empirical.privacy.core_targets`; each paper's in
its audit module (:mod:`empirical.papers.kl.audit`, ``audit_kan``, ``audit_linreg``, ``audit_userlevel``,
``sosp_audit``); docs/privacy.md lists which algorithm each target audits, and why the few
private functions without a target have none.
"""
from __future__ import annotations

import argparse
import functools
import math
import time
from typing import Sequence

import numpy as np

from algorithms.validation import check_int
# The statistics, the registry and the harness's own targets have modules of their own; their
# names stay importable here (paper audit modules import them from this module), and importing
# this module registers the core targets.
from empirical.privacy.core_targets import (CORE_DELTA, GAUSS_Z, POWER,  # noqa: F401
                                            exact_gaussian_epsilon)
from empirical.privacy.statistics import (EpsilonBound, clopper_pearson,  # noqa: F401
                                          epsilon_lower_bound, gaussian_mu_for_epsilon,
                                          laplace_shift_for_epsilon)
from empirical.privacy.targets import (POWER_FLAG, PROFILE_DELTAS, RELATIONS,  # noqa: F401
                                       SEARCHES, AuditResult, AuditTarget, ProfilePoint,
                                       ReleaseFn, _load, get_target,
                                       register_audit, select_registered, spawn_rows, targets)
from empirical.store.rows import ResultWriteError, check_writable, results_dir

__all__ = ["AuditTarget", "AuditResult", "RELATIONS", "register_audit", "targets", "get_target",
           "select_registered", "run_audit", "epsilon_lower_bound", "exact_gaussian_epsilon",
           "reference_power", "gaussian_mu_for_epsilon", "laplace_shift_for_epsilon", "POWER_FLAG",
           "SEARCHES", "PROFILE_DELTAS", "ProfilePoint", "profile_plan",
           "clopper_pearson", "spawn_rows",
           "add_arguments", "run_cli", "format_audit_table", "store_result", "load_audits"]


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
              block: int = 50_000, search: str = "quick",
              profile_deltas: Sequence[float] = PROFILE_DELTAS) -> AuditResult:
    """Audit ``target``: a search over its candidate pairs, query sequences or statistics on
    independent seeds (``search="full"`` adds ``full_candidates`` and runs ``full_trials``),
    then the main audit on fresh seeds, and its power (:func:`reference_power`).

    A target that claims a profile (``claimed_epsilon_at``) is audited at two points on the same
    scores: its δ and the profile point δ_p of ``profile_deltas`` (:func:`profile_plan`, chosen
    by reference power before any audit run), each bound at α/2 so that both hold together at
    1 − α (Bonferroni).  VIOLATION (CAUGHT for a broken control) when either point's ε_lo
    exceeds its claim; a ``min_fraction`` requirement is judged at the target's δ."""
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
    claimed = float(target.claimed_epsilon())
    plan = profile_plan(target, claimed, trials, alpha, profile_deltas)
    a = alpha / 2 if plan is not None else alpha
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
    bound = epsilon_lower_bound(s0, s1, target.delta, alpha=a)
    exact = float(target.exact_epsilon()) if target.exact_epsilon is not None else None
    power = reference_power(target, claimed, trials, a)
    profile = None
    if plan is not None:
        delta_p, claim_p, power_p, ladder = plan
        profile = ProfilePoint(delta_p, claim_p, epsilon_lower_bound(s0, s1, delta_p, alpha=a),
                               power_p, ladder)
    over = bound.epsilon > claimed or (profile is not None and profile.exceeded)
    if target.expect == "broken":
        verdict = "CAUGHT" if over else "MISSED"
    elif over:
        verdict = "VIOLATION"
    elif target.min_fraction is not None and bound.epsilon < target.min_fraction * exact:
        verdict = "WEAK"
    else:
        verdict = "POWER OK" if target.min_fraction is not None else "OK"
    return AuditResult(target, claimed, bound, alpha, trials, pair, exact, verdict,
                       time.perf_counter() - t0, found, block, power, search, profile)


def profile_plan(target: AuditTarget, claimed: float, trials: int, alpha: float = 0.05,
                 deltas: Sequence[float] = PROFILE_DELTAS
                 ) -> tuple[float, float, float, dict] | None:
    """The profile point of ``target``'s audit: (δ_p, ε(δ_p), power at δ_p, {δ: power}) over
    the points of ``deltas`` above the target's δ where the claimed profile is finite, δ_p the
    one with the largest reference power (:func:`reference_power` at α/2, ``trials`` runs per
    side; ties to the smaller δ).  A property of the claim and the run count only: it is fixed
    before any audit run, so the choice does not depend on the audit's data.  None when the
    target claims no profile or no ladder point is eligible.

    ValueError (naming ``claimed_epsilon_at`` or ``profile_deltas``) when the profile disagrees
    with ``claimed_epsilon()`` at the target's δ, is negative, or the ladder is malformed."""
    if target.claimed_epsilon_at is None:
        return None
    deltas = _check_deltas(deltas)
    at = float(target.claimed_epsilon_at(target.delta))
    if not (math.isclose(at, claimed, rel_tol=1e-6, abs_tol=1e-9)
            or (math.isnan(at) and math.isnan(claimed))):
        raise ValueError(f"{target.name}: claimed_epsilon_at(delta) = {at!r} must equal "
                         f"claimed_epsilon() = {claimed!r} at delta = {target.delta:g}")
    ladder: dict[float, tuple[float, float]] = {}
    for d in deltas:
        if d <= target.delta:
            continue
        e = float(target.claimed_epsilon_at(d))
        if not math.isnan(e) and e < 0:
            raise ValueError(f"{target.name}: claimed_epsilon_at({d:g}) must be >= 0 "
                             f"(NaN or inf: no claim at that δ), got {e!r}")
        p = reference_power(target, e, trials, alpha / 2, delta=d)
        if p is not None:            # NaN/inf/0: no claim at d that a test could contradict
            ladder[d] = (e, p)
    if not ladder:
        return None
    best = max(ladder, key=lambda d: (ladder[d][1], -d))
    return best, ladder[best][0], ladder[best][1], {d: p for d, (_, p) in ladder.items()}


def _check_deltas(deltas: Sequence[float]) -> tuple[float, ...]:
    try:
        out = tuple(float(d) for d in deltas)
    except (TypeError, ValueError):
        raise ValueError(f"profile_deltas must be a sequence of numbers in (0, 1), "
                         f"got {deltas!r}") from None
    if not out or not all(0.0 < d < 1.0 for d in out):
        raise ValueError(f"profile_deltas must be a non-empty sequence of numbers in (0, 1), "
                         f"got {deltas!r}")
    return out


# =============================================================================================
# power: the same audit on a reference mechanism whose exact ε is the claim
# =============================================================================================



def reference_power(target: AuditTarget, claimed: float, trials: int,
                    alpha: float = 0.05, delta: float | None = None) -> float | None:
    """The audit's power: the fraction of the exact ε(δ) that :func:`epsilon_lower_bound`, with
    ``trials`` runs per side at ``alpha``, certifies on a reference mechanism whose exact ε(δ) is
    ``claimed`` — a correctly calibrated Gaussian (N(0,1) vs N(μ,1), the likelihood-ratio score
    of any Gaussian release sequence reduces to it) or Laplace (Lap(0,1) vs Lap(s,1), ε(δ) =
    claimed) as ``target.reference`` says.  It states what this many runs can show at this δ:
    an honest audit reaching ε_lo ≈ power × claimed is as strong as the harness allows, and a
    bug moving the exact ε to E is certain to be caught only if power × E > claimed.  Seeded
    from the target's name (SeedSequence), so it is reproducible; every δ uses the same draws
    (``delta``: a point of the claimed profile, default the target's δ).  None when the claim
    is not a positive finite number."""
    if not (math.isfinite(claimed) and claimed > 0):
        return None
    delta = target.delta if delta is None else delta
    z0, z1 = _reference_draws(target.name, trials, target.reference)
    if target.reference == "gaussian":
        shift = gaussian_mu_for_epsilon(claimed, delta)
    else:
        shift = laplace_shift_for_epsilon(claimed, delta)
    return float(epsilon_lower_bound(z0, shift + z1, delta, alpha=alpha).epsilon / claimed)


@functools.lru_cache(maxsize=2)
def _reference_draws(name: str, trials: int, reference: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference mechanism's unshifted noise on each side, seeded from the target's name
    and the run count; shared by every δ and claim of one target (read-only)."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [_h(name), _h("reference"), trials])))
    if reference == "gaussian":
        out = rng.standard_normal(trials), rng.standard_normal(trials)
    else:
        out = rng.laplace(0.0, 1.0, trials), rng.laplace(0.0, 1.0, trials)
    for a in out:
        a.setflags(write=False)
    return out


def _power_cell(p: float | None, low: bool) -> str:
    return "-" if p is None else f"{p:.2f}" + (" LOW" if low else "")


def format_audit_table(results: Sequence[AuditResult]) -> str:
    head = ("target", "relation", "view", "δ", "claimed ε", "audited ε_lo", "ε̂ (point)",
            "exact ε", "power", "δ_p", "ε(δ_p)", "ε_lo(δ_p)", "power(δ_p)", "trials/side", "pair",
            "verdict")
    rows = []
    for r in results:
        t, pp = r.target, r.profile
        # LOW is shown beside the better point's power: it flags that both points are weak
        low_here = r.low_power and (pp is None or pp.power is None or r.power == r.best_power)
        prof = (("-",) * 4 if pp is None else
                (f"{pp.delta:g}", f"{pp.claimed:.3f}", f"{pp.audited:.3f}",
                 _power_cell(pp.power, r.low_power and not low_here)))
        rows.append((t.name + (" [control]" if t.expect == "broken" else ""), t.relation, t.view,
                     f"{t.delta:g}", f"{r.claimed:.3f}", f"{r.audited:.3f}",
                     f"{r.bound.point:.3f}", "-" if r.exact is None else f"{r.exact:.3f}",
                     _power_cell(r.power, low_here), *prof,
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
            "of the exact ε (at the target's δ).",
            f"power: fraction of the exact ε the same audit (runs per side, α, δ) certifies on a "
            f"correctly calibrated reference mechanism (Gaussian or Laplace) whose exact ε is the "
            f"claim; LOW when the better point's is below {POWER_FLAG:g} (an OK verdict at low "
            f"power is weak evidence).",
            "δ_p: a target claiming a privacy profile δ ↦ ε(δ) is also audited at the point of "
            f"the ladder {', '.join(f'{d:g}' for d in PROFILE_DELTAS)} (above its δ) where the "
            "reference power is largest, chosen before any run; the same scores are judged at "
            "both δ, each at α/2 (Bonferroni: together at the stated confidence); either "
            "point's ε_lo above its claim is a VIOLATION (CAUGHT for a control)."]
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
        pw = "" if r.power is None else f", power {r.power:.2f}"
        pp = r.profile
        if pp is not None:
            pw += (f"; at δ_p = {pp.delta:g}: claimed {pp.claimed:.3f}, ε_lo {pp.audited:.3f}"
                   + ("" if pp.power is None else f", power {pp.power:.2f}"))
        pw += " LOW" if r.low_power else ""
        print(f"[audit] {t.name}: claimed {r.claimed:.3f}, ε_lo {r.audited:.3f} -> {r.verdict}"
              f"{pw} ({r.seconds:.1f}s{where})", file=sys.stderr)
        results.append(r)
    print(format_audit_table(results))
    bad = [r.target.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)}/{len(results)} audits as expected"
          + (f"; failed: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0
