"""Coverage: how the registered experiments exercise each variable of each rate statement.

A rate is a claim about every variable it depends on.  For each registered bound of kind
``upper`` or ``lower`` (conversions and identities state no rate) and each free symbol of its
expression, this module reports one of:

``swept``
    some experiment sweeps that variable and judges this bound (as its primary bound, a second
    check, or a competitor it must reject); the experiments and, where stored results are
    given, their verdicts are listed;
``held``
    no experiment sweeps it, but experiments judge this bound with the variable held fixed (at
    the values listed where the experiment fixes it, else at its instance's value): evidence
    about the other variables, not a slope in this one;
``log``
    the variable enters the expression only through logarithms, so its log-log slope is at most
    of order 1/log and no affordable grid separates it from 0: its effect is checked through the
    level only (not swept by construction);
``declared``
    not swept, for the reason a paper's unit declared with :func:`declare_unswept`
    (e.g. a constant of the instance that only scales the level), or, for a statement no
    experiment judges, with :func:`declare_unjudged` (e.g. an explicit-constant form whose
    rate another registered statement carries);
``none``
    no experiment judges this bound at all and no reason is declared: a gap, shown as such.

A ``log`` or ``declared`` variable of a bound that experiments judge is reported as such only
when no experiment sweeps it; the order of the tests is swept, log, declared, held, none.

Nothing here names a paper: the bounds come from ``bounds`` and the experiments from the
registry.  The table is computed from the registry alone, so it cannot go stale; verdicts come
from analyses the caller passes (``dprates coverage --results DIR`` loads the stored ones).
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable, Mapping

import sympy as sp

import bounds
from empirical.core import experiment as registry

__all__ = ["STATUSES", "Cell", "declare_unswept", "declare_unjudged", "declared_reasons",
           "unjudged_reasons", "cells", "summary", "markdown"]

#: Coverage statuses, from best covered to not covered.
STATUSES = ("swept", "log", "declared", "held", "none")
_RATE_KINDS = ("upper", "lower")
_DECLARED: dict[tuple[str, str], str] = {}
_UNJUDGED: dict[str, str] = {}


@dataclass(frozen=True)
class Cell:
    """One (bound, variable) pair and how the experiments exercise it."""

    bound: str
    source: str
    variable: str
    status: str
    experiments: tuple[str, ...] = ()
    verdicts: tuple[str, ...] = ()      # one per experiment, "" where no analysis was given
    reason: str = ""

    @property
    def swept(self) -> bool:
        return self.status == "swept"


def declare_unswept(bound: str, variable: str, reason: str) -> None:
    """Record why ``variable`` of ``bound`` is not swept by any experiment (shown in the table).

    A declaration for a variable that some experiment does sweep is ignored by :func:`cells`
    (the sweep is the better evidence).  ValueError for an empty reason or an unknown variable.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("reason must be a non-empty string saying why the variable is not swept")
    b = bounds.get(bound)
    if variable not in b.variables:
        raise ValueError(f"variable must be one of {list(b.variables)} of {bound}, "
                         f"got {variable!r}")
    _DECLARED[(bound, variable)] = reason.strip()


def declare_unjudged(bound: str, reason: str) -> None:
    """Record why no experiment judges ``bound`` at all (every variable of it shows the reason).

    For a statement that some experiment does judge the declaration is ignored, and a
    per-variable :func:`declare_unswept` reason takes precedence over it.  ValueError for an
    empty reason; KeyError for an unknown bound.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("reason must be a non-empty string saying why no experiment judges "
                         "the statement")
    bounds.get(bound)       # KeyError naming the closest ids for an unknown bound
    _UNJUDGED[bound] = reason.strip()


def unjudged_reasons() -> dict[str, str]:
    """The declared reasons for statements no experiment judges, ``bound -> reason``."""
    return dict(_UNJUDGED)


def declared_reasons() -> dict[tuple[str, str], str]:
    """The declared reasons, ``(bound, variable) -> reason``."""
    return dict(_DECLARED)


def _log_only(b: bounds.Bound, variable: str) -> bool:
    x = b.symbol(variable)
    stripped = b.expr.replace(lambda e: isinstance(e, sp.log) and x in e.free_symbols,
                              lambda e: sp.Dummy())
    return x not in stripped.free_symbols


def _verdict(analyses: Mapping[str, object] | None, exp: registry.Experiment, bound: str) -> str:
    a = (analyses or {}).get(exp.id)
    if a is None:
        # verdicts were asked for, but a full-grid-only experiment has none on the quick grid
        return "full grid only" if analyses is not None and exp.full_only else ""
    if getattr(a, "error", ""):
        return "ERROR"
    if getattr(a, "privacy_error", ""):
        return "PRIVACY FAIL"
    for r in getattr(a, "results", ()):
        if r.bound == bound:
            return r.verdict
    return ""


def _judged_by(exps: Iterable[registry.Experiment]) -> dict[str, list[registry.Experiment]]:
    by: dict[str, list[registry.Experiment]] = {}
    for exp in exps:
        for c in exp.checks:
            if exp not in by.setdefault(c.bound, []):
                by[c.bound].append(exp)
    return by


def cells(paper: str | None = None, analyses: Mapping[str, object] | None = None
          ) -> list[Cell]:
    """Every (rate statement, variable) pair of ``paper`` (all papers: None), in bound order.

    ``analyses`` maps experiment ids to their :class:`empirical.core.checks.Analysis`, for verdicts.
    """
    judged = _judged_by(registry.experiments())
    out = []
    for bid in bounds.ids(paper):
        b = bounds.get(bid)
        if b.kind not in _RATE_KINDS:
            continue
        exps = judged.get(bid, [])
        for var in b.variables:
            sweeping = [e for e in exps if e.variable == var]
            if sweeping:
                ids = tuple(e.id for e in sweeping)
                out.append(Cell(bid, b.source, var, "swept", ids,
                                tuple(_verdict(analyses, e, bid) for e in sweeping)))
                continue
            if _log_only(b, var):
                out.append(Cell(bid, b.source, var, "log",
                                reason="enters only through a log factor (level only)"))
            elif (bid, var) in _DECLARED:
                out.append(Cell(bid, b.source, var, "declared", reason=_DECLARED[(bid, var)]))
            elif not exps and bid in _UNJUDGED:
                out.append(Cell(bid, b.source, var, "declared",
                                reason="statement not judged: " + _UNJUDGED[bid]))
            elif exps:
                # Within each experiment a variable it does not sweep is constant (in ``fixed``
                # or set by the instance through bound_values, which may build the problem: not
                # evaluated here).
                held = sorted({float(e.fixed[var]) for e in exps if var in e.fixed})
                shown = ("at " + ", ".join(f"{v:g}" for v in held[:6])
                         + (" …" if len(held) > 6 else "") if held else "by the instance")
                out.append(Cell(bid, b.source, var, "held", tuple(e.id for e in exps),
                                reason=f"held {shown} in {len(exps)} experiment"
                                       f"{'s' if len(exps) > 1 else ''}"))
            else:
                out.append(Cell(bid, b.source, var, "none",
                                reason="no experiment judges this bound"))
    return out


def summary(cs: Iterable[Cell]) -> dict[str, int]:
    """Count of cells per status (every status present, zero included)."""
    counts = dict.fromkeys(STATUSES, 0)
    for c in cs:
        counts[c.status] += 1
    return counts


def _md(s: str) -> str:
    # Bound sources and reasons are code strings, but a plugin's are not ours: escape what
    # Markdown or HTML would interpret, so a table cell stays one cell of plain text.
    return html.escape(s, quote=False).replace("|", "\\|").replace("\n", " ")


def markdown(cs: list[Cell]) -> str:
    """One Markdown table: a row per rate statement, its swept variables (with experiments and
    verdicts) beside the variables that are not swept (with the reason)."""
    lines = ["| bound | statement | swept | not swept |", "|---|---|---|---|"]
    by: dict[str, list[Cell]] = {}
    for c in cs:
        by.setdefault(c.bound, []).append(c)
    for bid, group in by.items():
        swept = "; ".join(
            f"{c.variable}: " + ", ".join(f"{e}" + (f" ({v})" if v else "")
                                          for e, v in zip(c.experiments, c.verdicts
                                                          or ("",) * len(c.experiments)))
            for c in group if c.swept)
        rest = "; ".join(f"{c.variable} ({c.reason})" for c in group if not c.swept)
        source = group[0].source
        lines.append(f"| `{bid}` | {_md(source[:90] + ('…' if len(source) > 90 else ''))} | "
                     f"{_md(swept) or '—'} | {_md(rest) or '—'} |")
    counts = summary(cs)
    lines += ["", f"{len(cs)} (statement, variable) pairs: {counts['swept']} swept; not swept: "
                  f"{counts['log']} only in a log factor, {counts['declared']} with a stated "
                  f"reason, {counts['held']} held fixed by the experiments that judge the "
                  f"statement, {counts['none']} in statements no experiment judges."]
    return "\n".join(lines) + "\n"
