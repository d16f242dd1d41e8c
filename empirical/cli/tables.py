"""The verdict table ``dprates run`` and ``verify`` print, and its summary line."""
from __future__ import annotations

from empirical.core.checks import NOT_REPRODUCED, Analysis


def format_table(analyses: list[Analysis]) -> str:
    head = ("experiment", "bound", "var", "kind", "local", "asymptotic", "observed [95% CI]",
            "tol", "A", "detects", "verdict")
    lines = []
    for a in analyses:
        if a.error:
            lines.append((a.experiment.id, a.experiment.bound, a.experiment.variable, "-", "-",
                          "-", "-", "-", "-", "-", f"ERROR: {a.error}"))
        if a.privacy_error:
            lines.append((a.experiment.id, "privacy", "-", "-", "-", "-", "-", "-", "-", "-",
                          "PRIVACY FAIL"))
        for r in a.results:
            lines.append((r.experiment, r.bound, r.variable, r.kind + ("*" if r.expect == "finding" else ""),
                          f"{r.local:+.3f}", "n/a" if r.asymptotic != r.asymptotic else f"{r.asymptotic:+.3f}",
                          str(r.observed),
                          f"{r.tolerance:g}", _interval(getattr(r, "acceptance", None)),
                          _detects(getattr(r, "detectable", None)), _verdict(r)))
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*map(str, x)) for x in lines]
    notes = []
    for a in analyses:
        for v, why in a.dropped:
            notes.append(f"  {a.experiment.id}: dropped {a.experiment.variable}={v:g}: {why}")
        for r in a.results:
            if r.verdict not in ("PASS", "REJECTED"):
                notes.append(f"  {r.experiment} vs {r.bound}: {r.verdict}: {r.message}")
            if getattr(r, "history", ""):
                notes.append(f"  {r.experiment} vs {r.bound}: REDEFINED: {r.history}")
        if a.privacy_error:
            notes.append(f"  {a.experiment.id}: PRIVACY FAIL: {a.privacy_error}")
    if notes:
        out += ["", "Notes:", *notes]
    out += ["", "kind: two-sided = tight on this instance; one-sided = upper bound only; "
            "one-sided-lower = lower bound only (the slope may not fall below it); "
            "reject = competing rate that the data must rule out; * = recorded finding "
            "(docs/errata/<paper>.md), FINDING (slope | level | slope+level) = what it is a finding of, "
            "the other part still enforced.  A = acceptance interval; PASS needs the whole 95% CI "
            "inside A, FAIL the whole CI outside, else INCONCLUSIVE; a FINDING needs the whole "
            "99% CI outside A.  detects = the smallest exponent errors (down / up) that would "
            "stop a PASS; [UNDERPOWERED] cannot detect ±0.25; [REGRESSION GUARD] rests on a band "
            "or tolerance calibrated from runs; [REDEFINED] see its history beside the verdict.",
            "", summary_counts(analyses)]
    return "\n".join(out)


def summary_counts(analyses: list[Analysis]) -> str:
    """What the checks establish, counted apart: "verified" means every check came out as
    declared (PASS, FINDING, REJECTED, REFERENCE); these say what kind of evidence each is."""
    from empirical.core.checks import CONTRAST_KINDS

    res = [r for a in analyses for r in a.results]
    labels = lambda r: getattr(r, "labels", ())   # noqa: E731
    guard = [r for r in res if "REGRESSION GUARD" in labels(r)]
    guarded = {id(r) for r in guard}
    theorem = [r for r in res if r.verdict == "PASS" and r.kind == "two-sided"
               and id(r) not in guarded]
    upper = [r for r in res if r.verdict == "PASS" and r.kind == "one-sided"
             and id(r) not in guarded]
    lower = [r for r in res if r.verdict == "PASS" and r.kind == "one-sided-lower"
             and id(r) not in guarded]
    contrasts = [r for r in res if r.kind in CONTRAST_KINDS and r.verdict == "PASS"]
    count = lambda v: sum(r.verdict == v for r in res)   # noqa: E731
    under = [r for r in res if "UNDERPOWERED" in labels(r)]
    redefined = [r for r in res if "REDEFINED" in labels(r)]
    return (f"checks: {len(theorem)} theorem checks (two-sided PASS), {len(upper)} upper-bound-"
            f"consistent (one-sided PASS), {len(lower)} lower-bound-consistent "
            f"(one-sided-lower PASS), {len(guard)} regression guards (on calibrated bands; "
            f"{sum(r.verdict == 'PASS' for r in guard)} PASS), {len(contrasts)} contrasts PASS, "
            f"{count('FINDING')} findings (99% level), {count('REJECTED')} competitors rejected, "
            f"{count('REFERENCE')} references, {count('INCONCLUSIVE')} inconclusive, "
            f"{count('FAIL') + count('NOT REJECTED') + count('NOT REPRODUCED') + count('REFUSED')}"
            f" failed; {len(under)} underpowered, {len(redefined)} redefined after a failure.  "
            "'verified' = every check came out as declared; a regression guard pins the code's "
            "behaviour, not the theorem, and an underpowered PASS is weak evidence.")


def _interval(a) -> str:
    if a is None:
        return "-"
    left = "(-inf" if a[0] == float("-inf") else f"[{a[0]:+.2f}"
    right = "+inf)" if a[1] == float("inf") else f"{a[1]:+.2f}]"
    return f"{left}, {right}"


def _detects(d) -> str:
    from empirical.core.results import format_detectable

    return "-" if d is None else format_detectable(d)


def _verdict(r) -> str:
    shown = getattr(r, "shown_verdict", None)
    if shown is not None:
        return shown
    on = getattr(r, "finding_on", "")
    return f"{r.verdict} ({on})" if on and r.verdict in ("FINDING", NOT_REPRODUCED) else r.verdict
