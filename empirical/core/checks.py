"""Judging fitted slopes against the bounds' predictions (PEPit style: measured beside theory).

For each check the prediction is computed from ``bounds/`` at the experiment's own parameter
values over the kept grid points:

* *local* slope: the OLS slope of log(bound) against log(variable) over the same points as the
  data fit (all log factors and lower-order terms included);
* *asymptotic* exponent: ``Bound.exponent(variable, **fixed)``, only for a variable whose domain
  is unbounded above (``bounds.core.domain``).  For a bounded variable (λ ∈ [0, 1), δ ∈ (0, 1))
  "variable → ∞" is meaningless: the band is the local slope alone and the result says so.

Verdicts are equivalence tests on the slope's 95% bootstrap interval (``fit_slope``).  A check's
*acceptance interval* A is [lo − tol, hi + tol] for a two-sided check, (−∞, hi + tol] for a
one-sided one (an upper bound) and [lo − tol, +∞) for a ``one-sided-lower`` one (a lower bound:
the quantity may not fall faster than it), [lo, hi] the band between the local slope and the
asymptotic exponent.

* the slope **passes** when the whole CI lies inside A, **deviates** when the whole CI lies
  outside A, and is **inconclusive** otherwise;
* ``expect="hold"``: PASS, FAIL (deviates, or a level outside its band) or INCONCLUSIVE;
* ``expect="finding"`` (a claim against a paper, docs/errata.md): FINDING only when every part
  declared by ``Check.finding_on`` deviates, NOT REPRODUCED when one of them passes (the record
  is stale), INCONCLUSIVE otherwise; the part not declared must still hold (else FAIL);
* ``reject`` (a competing rate c): REJECTED only when the whole CI lies outside [c − tol, c + tol]
  at the competitor's local slope and, where the variable can go to ∞, at its asymptotic
  exponent; NOT REJECTED when the whole CI lies inside one of them (the data agree with the
  competitor); INCONCLUSIVE otherwise.  A competitor whose ``values`` hold the swept symbol
  fixed is judged at those values: exponent 0 when its value does not move over the grid, else
  its local slope alone.  ``Check.reference``: the competitor's assumptions do
  not hold on the instance, so it is drawn and measured but shown as REFERENCE, never REJECTED;
* the expectation is per grid: ``Check.expect`` on the quick grid, ``Check.expect_full`` on
  the full grid, told apart by the rows' grid values (``Experiment.is_full``).

INCONCLUSIVE fails ``verify``; its message says what would resolve it: the CI half-width that
would decide, and the seeds (half-width ∝ 1/√seeds) or log-grid span (∝ 1/sd(log x)) that would
give it at the fit's own standard error.

Confidence policy.  A PASS is a 95% equivalence test (two one-sided tests at 2.5% each): for a
check whose true slope lies outside A, the chance of PASS is at most 2.5%.  A FINDING is a
claim against a published paper and is judged at the stricter level ``FINDING_LEVEL`` = 99%:
the whole 99% CI must lie outside A, so a check whose true slope lies inside A is reported
FINDING with probability at most 0.5%.  Over the suite (≈ 240 slope checks, ≈ 30 declared
findings) the expected number of false FINDINGs is below 0.15 and that of false PASSes below
0.025 times the number of checks whose true slope lies outside A; REJECTED uses the 95% CI
(a competitor is a claim of this suite, not against a paper).  Level bands are judged on the
aggregated points (no interval): a level outside its band is a deviation.

Power: :func:`detectable_exponent_error` gives the smallest exponent errors a check would
detect; one unable to detect ±0.25 is labelled UNDERPOWERED (``UNDERPOWERED_AT``).  The label
does not fail ``verify``: the verdict is still right at its stated level, only weak; the remedy
(more seeds, a wider grid) is one of budget.  A check resting on a band calibrated from data
(``Check.level_source`` or ``tolerance_source`` = ``"calibration"``) is labelled REGRESSION
GUARD: it pins the code's behaviour, not the theorem.

Only PASS, FINDING, REJECTED and REFERENCE let ``verify`` succeed (:attr:`CheckResult.ok`).

Beside the slopes, every analysis judges the stored rows' privacy columns (:func:`check_privacy`),
the noise measured in every release against the scale those columns were computed from
(:func:`check_noise`; a failure is a privacy failure) and the theorem's settings
(:func:`check_settings`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import sympy as sp
from scipy import stats

import bounds
from bounds.core import domain as bounds_domain
from empirical.core.contrasts import (ComparisonAnalysis, ComparisonExperiment, Contrast,
                                      ContrastEstimate, ContrastResult, analyse_contrasts)
from empirical.core.experiment import LOWER, PRIVACY_UNITS, Check, Experiment
from empirical.core.fitting import SlopeFit, fit_slope, ols_slope
from empirical.core.results import (_GRIDS, CONTRAST_KINDS, FINDING_LEVEL, INCONCLUSIVE, INFO,
                                    NOT_REPRODUCED, OK_VERDICTS, REFERENCE, REFUSED,
                                    UNDERPOWERED_AT, WIDE_ACCEPTANCE, Analysis, CheckResult,
                                    _fmt_interval, _resolve, _state)
from empirical.core.rowchecks import (FAMILIES, NOISE_ALPHA, _with_noise, check_noise,
                                      check_privacy, check_settings, noise_interval)

__all__ = ["CheckResult", "Analysis", "analyse", "check_privacy", "check_settings", "check_noise",
           "NOISE_ALPHA", "FAMILIES", "noise_interval",
           "detectable_exponent_error", "OK_VERDICTS", "NOT_REPRODUCED", "INCONCLUSIVE",
           "REFERENCE", "REFUSED", "WIDE_ACCEPTANCE", "FINDING_LEVEL", "UNDERPOWERED_AT",
           "acceptance_interval", "judged_sides", "labels", "band_exponent", "declared_too_wide",
           "CONTRAST_KINDS", "INFO", "Contrast", "ContrastEstimate", "ContrastResult",
           "ComparisonExperiment", "ComparisonAnalysis", "analyse_contrasts"]


def _band(local: float, asym: float) -> tuple[float, float]:
    """The band between the local slope and the asymptotic exponent (the local slope alone
    when there is no asymptotic exponent: a bounded variable, or one entering through values)."""
    if math.isnan(asym):
        return local, local
    return min(local, asym), max(local, asym)


def acceptance_interval(kind: str, local: float, asym: float, tol: float
                        ) -> tuple[float, float]:
    """A check's acceptance interval A: [lo − tol, hi + tol] (two-sided), (−∞, hi + tol]
    (one-sided: an upper bound's slope may be beaten) or [lo − tol, +∞) (one-sided-lower: a
    lower bound's slope may be exceeded), [lo, hi] the band of :func:`_band`."""
    lo, hi = _band(local, asym)
    return (-math.inf if kind == "one-sided" else lo - tol,
            math.inf if kind == LOWER else hi + tol)


def judged_sides(kind: str) -> tuple[bool, bool]:
    """Whether a check of this kind judges the (downward, upward) direction: a one-sided check
    only the upward one, a one-sided-lower check only the downward one, a two-sided both."""
    return kind != "one-sided", kind != LOWER


def detectable_exponent_error(result: CheckResult,
                              kept: tuple[float, ...] | None = None) -> tuple[float, float] | None:
    """The smallest exponent errors e < 0 and e > 0 this check would detect on these data.

    A bug that multiplies the metric by v^e (v the swept variable) moves the fitted slope and
    both ends of its CI by exactly e and every level ratio by v^e.  The check stops passing once
    the shifted CI leaves its acceptance interval (:func:`acceptance_interval`: both ends for a
    two-sided check, only the upper one for a one-sided one, only the lower one for a
    one-sided-lower one) or once some ratio·v^e leaves the
    level band.  Returns ``(down, up)``: the largest undetected negative and positive e bound
    (−inf/inf: never detected in that direction); None for ``reject`` checks and for contrasts
    (no slope).
    """
    if result.kind == "reject" or result.kind in CONTRAST_KINDS:
        return None
    a = acceptance_interval(result.kind, result.local, result.asymptotic, result.tolerance)
    up = a[1] - result.observed.ci_high
    down = a[0] - result.observed.ci_low
    if result.level_band is not None and result.ratios is not None:
        x = np.log(np.asarray(result.observed.x, dtype=float))
        lr = np.log(np.asarray(result.ratios, dtype=float))
        llo, lhi = math.log(result.level_band[0]), math.log(result.level_band[1])
        # need llo <= lr_i + e x_i <= lhi for all i: intersect the intervals over i
        e_hi, e_lo = math.inf, -math.inf
        for xi, li in zip(x, lr):
            if xi > 0:
                e_hi, e_lo = min(e_hi, (lhi - li) / xi), max(e_lo, (llo - li) / xi)
            elif xi < 0:
                e_hi, e_lo = min(e_hi, (llo - li) / xi), max(e_lo, (lhi - li) / xi)
        up, down = min(up, e_hi), max(down, e_lo)
    return float(down), float(up)


def underpowered(result: CheckResult) -> bool:
    """Whether a check expected to hold cannot detect an exponent error of ±UNDERPOWERED_AT in a
    direction it judges (:func:`judged_sides`)."""
    if result.kind == "reject" or result.kind in CONTRAST_KINDS or result.expect != "hold":
        return False
    det = detectable_exponent_error(result)
    if det is None:
        return False
    down, up = det
    judges_down, judges_up = judged_sides(result.kind)
    return (judges_up and up >= UNDERPOWERED_AT) or (judges_down and down <= -UNDERPOWERED_AT)


def labels(check: Check, result: CheckResult) -> tuple[str, ...]:
    """What a verdict rests on, shown beside it: UNDERPOWERED (:func:`underpowered`),
    REGRESSION GUARD (a band or tolerance calibrated from data), REDEFINED (``Check.history``),
    REFERENCE competitor."""
    out = []
    if underpowered(result):
        out.append("UNDERPOWERED")
    if check.kind != "reject" and "calibration" in (check.level_source, check.tolerance_source):
        out.append("REGRESSION GUARD")
    if check.history:
        out.append("REDEFINED")
    return tuple(out)


def _too_wide(check: Check, local: float, asym: float) -> str:
    """Why ``check``'s acceptance interval is too wide for any plausible bug to fail it (it lets
    the slope exceed the bound's local slope, or fall below it, in a direction the check judges,
    by more than WIDE_ACCEPTANCE), or "" when it is not, or when ``Check.wide_reason`` says
    why."""
    if check.kind == "reject" or check.wide_reason:
        return ""
    a = acceptance_interval(check.kind, local, asym, check.tolerance)
    judges_down, judges_up = judged_sides(check.kind)
    reach = max(a[1] - local if judges_up else 0.0, local - a[0] if judges_down else 0.0)
    if reach > WIDE_ACCEPTANCE:
        return (f"acceptance interval {_fmt_interval(a)} lets the slope differ from the bound's "
                f"local slope {local:+.3f} by up to {reach:.2f} > {WIDE_ACCEPTANCE} with no "
                "wide_reason: no plausible bug could fail it")
    return ""


def band_exponent(exp: Experiment, check: Check, xs, bvals) -> tuple[object, float]:
    """The band's other end (besides the local slope) for ``check`` over grid values ``xs``
    with the bound's values ``bvals`` there: (expression or what stands instead, value; NaN
    when there is none).  See the module docstring for the domain rules."""
    b = bounds.get(check.bound)
    first = _bound_values(exp, check, exp.point(xs[0]))
    fixed = {k: val for k, val in first.items() if k != exp.variable}
    dom = bounds_domain(exp.variable)
    if check.kind == "reject" and _held_by_values(exp, check, xs, first):
        # A competitor whose values hold the bound's own symbol fixed (e.g. "eq. 141 at m = 1"
        # on an m sweep) is judged at the experiment's values, like the primary bound: its
        # symbolic exponent in that symbol is not what the data are compared with.
        if np.ptp(np.log(bvals)) == 0.0:
            return sp.Integer(0), 0.0
        return (f"n/a: the check's values hold {exp.variable} fixed (local slope only)",
                math.nan)
    if (exp.variable in b.variables and not dom.unbounded_above and dom.lo == 0
            and max(xs) <= 0.1 * dom.hi):
        # A grid a decade or more below the upper edge heads for the lower edge 0: the
        # band reaches the exact limit there (e.g. lam_gap = 1 − λ → 0).
        edge = b.edge_exponent(exp.variable, **fixed)
        asym = float(sp.N(edge))
        asym_expr = f"{sp.sstr(edge)} (limit {exp.variable} → 0; {exp.variable} ∈ {dom})"
    elif exp.variable in b.variables and not dom.unbounded_above:
        # "variable → ∞" is outside the domain: the band is the local slope alone.
        asym_expr, asym = f"n/a: {exp.variable} ∈ {dom} is bounded (local slope only)", math.nan
    elif exp.variable in b.variables:
        asym_expr = b.exponent(exp.variable, **fixed)
        asym = float(sp.N(asym_expr))
    elif np.ptp(np.log(bvals)) == 0.0:   # the bound does not depend on the variable at all
        asym_expr, asym = sp.Integer(0), 0.0
    else:  # the variable enters only through check.values (e.g. ε as a function of ρ)
        asym_expr, asym = "n/a", math.nan
        if check.kind != "reject":
            raise ValueError(f"{exp.id}: bound {b.id} has no symbol {exp.variable!r}")
    if not check.use_asymptotic and check.kind != "reject" and not math.isnan(asym):
        asym_expr = f"{sp.sstr(asym_expr)} (not used: band on the local slope alone)"
        asym = math.nan
    return asym_expr, asym


def _held_by_values(exp: Experiment, check: Check, xs, first: dict) -> bool:
    """Whether the bound's symbol of the swept variable keeps one value over the grid values
    ``xs`` although they span more than one value (``first``: the values at ``xs[0]``)."""
    var = exp.variable
    if var not in bounds.get(check.bound).variables or var not in first or len(set(xs)) < 2:
        return False
    last = _bound_values(exp, check, exp.point(max(xs, key=lambda v: abs(v - xs[0]))))
    return float(last.get(var, math.nan)) == float(first[var])


def declared_too_wide(exp: Experiment, check: Check, xs, bvals) -> str:
    """:func:`_too_wide` at declaration: the local slope is the bound's log-log slope between
    the grid values ``xs`` (its end points, where ``validate_experiment`` evaluates it, so no
    run is needed), the band's other end from :func:`band_exponent`.  "" when not too wide."""
    if check.kind == "reject" or check.wide_reason:
        return ""
    local, _ = ols_slope(np.asarray(xs, dtype=float), np.asarray(bvals, dtype=float))
    return _too_wide(check, local, band_exponent(exp, check, xs, bvals)[1])


def _sources(check: Check) -> str:
    """Where the check's tolerance and level band come from, as shown beside the verdict."""
    out = f"tolerance: {check.tolerance_source}"
    if check.level is not None:
        out += f"; level band: {check.level_source}"
        if check.calibration is not None:
            out += (f" (held-out seeds: {check.calibration.seeds} per point, disjoint from the "
                    "judged ones)")
        elif check.level_source == "calibration":
            out += " (on the judged runs, not held out)"
    return out


def _group(exp: Experiment, rows: list[dict]) -> dict[float, np.ndarray]:
    by = {}
    for r in rows:
        by.setdefault(float(r[f"p_{exp.variable}"]), []).append(
            math.nan if r[exp.metric] is None else float(r[exp.metric]))
    return {k: np.asarray(v) for k, v in sorted(by.items())}


def _bound_values(exp: Experiment, check: Check, point: dict) -> dict:
    return (check.values or exp.bound_values)(point)


def _judge_level(check: Check, ratios: np.ndarray) -> tuple[bool, str]:
    lo, hi = check.level
    r_lo, r_hi = float(np.min(ratios)), float(np.max(ratios))
    ok = lo <= r_lo and r_hi <= hi
    return ok, (f"; level observed/bound in [{r_lo:.3g}, {r_hi:.3g}] "
                f"{'inside' if ok else 'OUTSIDE'} band [{lo:g}, {hi:g}] ({check.level_source})")


def _judge_reject(observed: SlopeFit, local: float, asym: float, tol: float,
                  reference: str = "", seeds: int | None = None) -> tuple[str, str]:
    """REJECTED when the whole CI lies outside the competitor's own [c − tol, c + tol] at its
    local slope and (where the variable can go to ∞) its asymptotic exponent: a competitor bent
    by log factors or lower-order terms must not escape on either.  NOT REJECTED when the whole
    CI lies inside one of them; INCONCLUSIVE otherwise."""
    ci = (observed.ci_low, observed.ci_high)
    cands = [("local slope", local)] + ([] if math.isnan(asym) else [("asymptotic", asym)])
    states = {name: _state(ci, (c - tol, c + tol)) for name, c in cands}
    words = {"deviates": "ruled out", "pass": "NOT ruled out (CI inside its ±tol)",
             "inconclusive": "not decided (CI straddles its ±tol)"}
    where = ", ".join(f"{name} {c:+.3f} {words[states[name]]}" for name, c in cands)
    if math.isnan(asym):
        where += "; no asymptotic exponent in this variable (local only)"
    if all(st == "deviates" for st in states.values()):
        verdict, extra = "REJECTED", ""
    elif any(st == "pass" for st in states.values()):
        verdict, extra = "NOT REJECTED", ""
    else:
        verdict = INCONCLUSIVE
        edges = tuple(e for _, c in cands for e in (c - tol, c + tol))
        extra = _resolve(observed, observed.half_width, edges, seeds)
    msg = f"competing rate: {where} (95% CI {observed}, tolerance {tol}){extra}"
    if reference:
        return REFERENCE, (f"reference only, its assumptions do not hold here ({reference}); "
                           f"the data alone would give {verdict}: {msg}")
    return verdict, msg


def _judge_slope(check: Check, observed: SlopeFit, local: float, asym: float,
                 strict: SlopeFit | None = None, seeds: int | None = None
                 ) -> tuple[str, str]:
    """The slope's state (``pass``, ``deviates``, ``inconclusive``) and its message.  With
    ``strict`` (the same fit at FINDING_LEVEL), a deviation must hold for the stricter
    interval too (a finding is a claim against a paper)."""
    a = acceptance_interval(check.kind, local, asym, check.tolerance)
    state = _state((observed.ci_low, observed.ci_high), a)
    side = {"two-sided": "two-sided", LOWER: "one-sided-lower, higher is allowed"}.get(
        check.kind, "one-sided, lower is allowed")
    where = {"pass": "inside", "deviates": "OUTSIDE", "inconclusive": "straddles an edge of"}
    msg = (f"95% CI {observed} {where[state]} A = {_fmt_interval(a)} ({side}; tol "
           f"{check.tolerance})")
    # A finding must deviate at the stricter level: what would decide it is that interval.
    half_width = observed.half_width if strict is None else strict.half_width
    if strict is not None and state == "deviates":
        s_state = _state((strict.ci_low, strict.ci_high), a)
        if s_state != "deviates":
            state = "inconclusive"
            msg += (f"; the {strict.level:.0%} CI {strict} a finding needs is not wholly "
                    "outside A")
        else:
            msg += f"; {strict.level:.0%} CI {strict} also outside"
    if state == "inconclusive":
        msg += _resolve(observed, half_width, a, seeds)
    return state, msg


def _judge_finding(finding_on: str | None, slope_state: str, level_ok: bool | None
                   ) -> tuple[str, str]:
    """The verdict of a check expected to be a finding, from its two parts.  A part the finding
    is declared on that passes makes the record stale (NOT REPRODUCED); a part it is not
    declared on that deviates is a FAIL (something else broke); FINDING needs every declared
    part to deviate and every other part to pass; anything else is INCONCLUSIVE."""
    # (finding_on is None only without a level band: Check refuses it otherwise)
    on = (finding_on or "slope").split("+")
    what = " and ".join(on)
    parts = {"slope": slope_state,
             "level": None if level_ok is None else ("pass" if level_ok else "deviates")}
    stale = [k for k in on if parts[k] == "pass"]
    broken = [k for k, st in parts.items() if k not in on and st == "deviates"]
    open_ = [k for k, st in parts.items() if st == "inconclusive"]
    if stale:
        return NOT_REPRODUCED, (f"; the recorded finding (of the {what}) is NOT reproduced: the "
                                f"{' and '.join(stale)} now passes")
    if broken:
        return "FAIL", (f"; finding of the {what} reproduced, but the {' and '.join(broken)}, "
                        "which must hold for this finding, does not")
    if open_:
        return INCONCLUSIVE, (f"; finding of the {what} neither reproduced nor refuted: the "
                              f"{' and '.join(open_)} is inconclusive")
    return "FINDING", f"; finding of the {what}"


def _judge(check: Check, observed: SlopeFit, local: float, asym: float,
           ratios: np.ndarray | None = None, full: bool = False,
           strict: SlopeFit | None = None, seeds: int | None = None) -> tuple[str, str]:
    if check.kind == "reject":
        return _judge_reject(observed, local, asym, check.tolerance, check.reference, seeds)
    finding = check.expectation(full) == "finding"
    declared = (check.finding_on or "slope").split("+") if finding else []
    # The strict level applies where a deviation is claimed against the paper.
    state, msg = _judge_slope(check, observed, local, asym,
                              strict if "slope" in declared else None, seeds)
    level_ok = None
    if check.level is not None and ratios is not None:
        level_ok, level_msg = _judge_level(check, ratios)
        msg += level_msg
    if finding:
        verdict, why = _judge_finding(check.finding_on, state, level_ok)
        return verdict, msg + why
    if state == "deviates" or level_ok is False:
        return "FAIL", msg
    return ("PASS" if state == "pass" else INCONCLUSIVE), msg


def analyse(exp: Experiment, rows: list[dict]) -> Analysis:
    """Fit the experiment's stored rows and evaluate every check (a
    :class:`ComparisonExperiment` is judged by its contrasts instead).  Whether the rows are
    the full grid's (which decides ``Check.expect_full``) is read from their grid values
    (:meth:`Experiment.is_full`) and recorded in ``Analysis.grid``."""
    if isinstance(exp, ComparisonExperiment):
        return analyse_contrasts(exp, rows)
    per_point = _group(exp, rows)
    full = exp.is_full(per_point)
    privacy, privacy_error = _with_noise(exp, rows, *check_privacy(exp, rows))
    _, settings_error = check_settings(exp, rows)
    primary = bounds.get(exp.bound)
    kept, dropped = [], []
    for v, metric in per_point.items():
        point = exp.point(v)
        vals = exp.bound_values(point)
        reason = None
        if np.any(~np.isfinite(metric)) or np.any(metric <= 0):
            reason = "metric not positive and finite for some seed"
        elif primary.conditions and not primary.applies(**vals):
            reason = f"conditions of {primary.id} fail"
        else:
            try:
                bval = primary(**vals)
            except ValueError as exc:
                bval, reason = None, f"bound undefined ({exc})"
            if reason is None and bval <= 0:
                reason = "bound non-positive (vacuous)"
            if reason is None and exp.vacuous is not None:
                reason = exp.vacuous(point, bval)
        if reason:
            dropped.append((v, reason))
        else:
            kept.append(v)
    if len(kept) < 3:
        return Analysis(exp, None, (), tuple(kept), tuple(dropped), per_point,
                        error="; ".join(x for x in (f"only {len(kept)} usable grid points (need 3)",
                                                    settings_error) if x),
                        privacy=privacy, privacy_error=privacy_error, grid=_GRIDS[full])
    fit = fit_slope(kept, [per_point[v] for v in kept], aggregate=exp.aggregate,
                    rng=np.random.default_rng(0))
    # A finding is judged at the stricter FINDING_LEVEL: the same bootstrap at that level.
    strict = (fit_slope(kept, [per_point[v] for v in kept], aggregate=exp.aggregate,
                        level=FINDING_LEVEL, rng=np.random.default_rng(0))
              if any(c.expectation(full) == "finding" for c in exp.checks) else None)
    seeds = min(int(per_point[v].size) for v in kept)
    results = []
    for check in exp.checks:
        b = bounds.get(check.bound)
        bvals = [b(**_bound_values(exp, check, exp.point(v))) for v in kept]
        local, _ = ols_slope(np.array(kept), np.array(bvals))
        asym_expr, asym = band_exponent(exp, check, kept, bvals)
        ratios = fit.y / np.asarray(bvals, dtype=float)
        verdict, msg = _judge(check, fit, local, asym, ratios, full, strict, seeds)
        wide = _too_wide(check, local, asym)
        if wide:
            verdict, msg = REFUSED, wide + "; " + msg
        expect = check.expectation(full)
        res = CheckResult(exp.id, b.id, exp.variable, check.kind, expect, local,
                          asym, str(sp.sstr(asym_expr)) if not isinstance(asym_expr, str)
                          else asym_expr, fit, check.tolerance, check.reason,
                          verdict, msg, check.level,
                          (float(ratios.min()), float(ratios.max())),
                          tuple(float(x) for x in ratios),
                          (check.finding_on or "slope") if expect == "finding" else "",
                          acceptance=(None if check.kind == "reject" else
                                      acceptance_interval(check.kind, local, asym,
                                                          check.tolerance)),
                          sources=_sources(check), history=check.history)
        res = dataclasses.replace(res, detectable=detectable_exponent_error(res))
        results.append(dataclasses.replace(res, labels=labels(check, res)))
    # A theorem setting not exercised as stated is an error of the run, whatever the slopes say.
    return Analysis(exp, fit, tuple(results), tuple(kept), tuple(dropped), per_point,
                    error=settings_error, privacy=privacy, privacy_error=privacy_error,
                    grid=_GRIDS[full])
