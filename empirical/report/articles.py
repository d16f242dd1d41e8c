"""The report's articles: one per bound (its mathematics and the checks of it) and one per
experiment (its setting, checks, figure), and the check rows both share (empirical/report/__init__.py).

``analysis_repr_html`` is the notebook (``_repr_html_``) table of an ``Analysis``.
"""
from __future__ import annotations

import base64
import contextlib
from pathlib import Path
from typing import Callable, Iterable, Iterator

import sympy as sp

import bounds
from empirical.core.checks import Analysis, CheckResult
from empirical.core.experiment import Experiment
from empirical.core.results import format_detectable
from empirical.report.cache import ExponentCache
from empirical.report.data import ExperimentState
from empirical.report.mathml import exponents_html
from empirical.report.contrasts import contrast_table_html, is_comparison
from empirical.report.format import (_CSS_CLASS, _anchor_bound, _anchor_check, _anchor_exp,
                                     _badge, _band, _e, _facts, _num, _relation, _var_order,
                                     mathml)

__all__ = ["analysis_repr_html"]



# ---------------------------------------------------------------------------------------------
# Check rows, and the notebook representation of an analysis
# ---------------------------------------------------------------------------------------------

_CHECK_HEAD = ("bound", "var", "kind", "local slope", "asymptotic", "observed [95% CI]",
               "tolerance (why)", "level band", "observed level", "verdict")
_INLINE_COLOURS = {"ok": "#d7f0d8", "finding": "#ffe3b3", "bad": "#f8c9c4", "none": "#e4e4e4"}


def _asymptotic_html(r: CheckResult) -> str:
    if r.asymptotic_expr in ("", "n/a"):
        return "n/a"
    try:
        expr = sp.sympify(r.asymptotic_expr)
    except (sp.SympifyError, TypeError, SyntaxError):
        return _e(r.asymptotic_expr)
    shown = mathml(expr)
    if expr.is_Integer:
        return shown
    return f"{shown} <small>({_num(r.asymptotic, signed=True)})</small>"


def _level_reason(exp: Experiment, bound_id: str) -> str:
    return next((c.level_reason for c in exp.checks if c.bound == bound_id and c.level), "")


def _check_cells(r: CheckResult, lead: str, inline_style: bool = False,
                 refs: Callable[[str], str] = lambda s: s, level_reason: str = "") -> str:
    """One table row for a check; ``lead`` is the first cell (the bound, or the experiment);
    ``refs`` links erratum labels in the reason and message."""
    kind = r.kind + (" (recorded finding)" if r.expect == "finding" else "")
    cls = _CSS_CLASS.get(r.verdict, "none")
    shown = getattr(r, "shown_verdict", r.verdict)
    verdict = (f'<span style="background:{_INLINE_COLOURS[cls]};padding:0 4px">{_e(shown)}</span>'
               if inline_style else _badge(r.verdict) + _e(shown[len(r.verdict):]))
    det = getattr(r, "detectable", None)
    extra = "".join(f"<br><small>{x}</small>" for x in (
        _e(getattr(r, "sources", "")),
        "" if det is None else _e(f"detects exponent errors beyond {format_detectable(det)}"),
        _e("history: " + r.history) if getattr(r, "history", "") else "") if x)
    cells = [lead, _e(r.variable), _e(kind), _num(r.local, signed=True),
              _asymptotic_html(r), _e(str(r.observed)),
              f"{r.tolerance:g}<br><small>{refs(_e(r.reason))}</small>",
              _band(r.level_band) + (f"<br><small>{refs(_e(level_reason))}</small>"
                                     if level_reason else ""),
              _band(r.level_range),
              f"{verdict}<br><small>{refs(_e(r.message))}</small>{extra}"]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def analysis_repr_html(analysis: Analysis) -> str:
    """An ``Analysis`` as an HTML table (``_repr_html_`` in notebooks): one row per check."""
    exp = analysis.experiment
    head = "".join(f"<th>{h}</th>" for h in _CHECK_HEAD)
    rows = "".join(_check_cells(r, _e(r.bound), inline_style=True) for r in analysis.results)
    notes = []
    if analysis.fit is not None:
        notes.append(f"fitted slope {analysis.fit} over {len(analysis.kept)} points "
                     f"({exp.aggregate} of {exp.seeds} seeds)")
    if analysis.error:
        notes.append(f"ERROR: {analysis.error}")
    for v, why in analysis.dropped:
        notes.append(f"dropped {exp.variable}={v:g}: {why}")
    if analysis.privacy_error:
        notes.append(f"PRIVACY FAIL: {analysis.privacy_error}")
    elif analysis.privacy:
        notes.append(f"privacy: {analysis.privacy}")
    foot = "".join(f"<li>{_e(n)}</li>" for n in notes)
    return (f"<div><b>{_e(exp.id)}</b>: {_e(exp.title)}"
            f'<table border="1" style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table><ul>{foot}</ul></div>")


# ---------------------------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------------------------

def _exponents_html(b: bounds.Bound) -> str:
    # Exact exponents cost sympy time (half of a full report's build): each is computed once per
    # process, and across processes read from the store (empirical/report/cache.py) when its
    # key (expression, exponent and MathML code, sympy version) matches.
    key = (b.id, sp.srepr(b.expr))
    if key not in _EXPONENT_CACHE:
        global _STORE
        if _STORE is None:
            _STORE = ExponentCache(None)
        _EXPONENT_CACHE[key] = _STORE.get(b, lambda: exponents_html(b))
    return _EXPONENT_CACHE[key]


_EXPONENT_CACHE: dict[tuple[str, str], str] = {}
_STORE: ExponentCache | None = None


@contextlib.contextmanager
def exponent_store(path: Path | None) -> Iterator[ExponentCache]:
    """Read and write exponents through the cache file ``path`` (None: the shipped file only)
    while the block runs; what was computed is saved at its end."""
    global _STORE
    old, _STORE = _STORE, ExponentCache(path)
    try:
        yield _STORE
    finally:
        _STORE.save()
        _STORE = old


def _bound_article(b: bounds.Bound, checks_by_var: dict[str, list], refs) -> str:
    statement = (f'<p class="stmt">{_e(b.quantity)} <b>{_relation(b)}</b></p>'
                 f'<div class="formula">{mathml(b.expr, display=True)}</div>')
    facts = [("source", _e(b.source)), ("kind", _e(b.kind)), ("privacy", _e(b.privacy)),
             ("assumptions", "<ul>" + "".join(f"<li>{_e(a)}</li>" for a in b.assumptions)
              + "</ul>" if b.assumptions else ""),
             ("conditions", ";&ensp;".join(mathml(c) for c in b.conditions)),
             ("asymptotic exponents", _exponents_html(b)),
             ("shape parameters", _e(", ".join(b.shape_parameters))),
             ("notes", refs(_e(b.notes)) if b.notes else "")]
    checks = []
    for var in _var_order(checks_by_var):
        head = "<tr>" + "".join(f"<th>{h}</th>" for h in ("experiment",) + _CHECK_HEAD[1:]) + "</tr>"
        rows = []
        for st, r in checks_by_var[var]:
            exp_link = f'<a href="#{_anchor_exp(st.experiment.id)}">{_e(st.experiment.id)}</a>'
            if r is None:
                status = (st.unrun_label if not st.rows
                          else ("PARTIAL" if st.missing else "ERROR"))
                why = st.error or (st.analysis.error if st.analysis else "no stored rows")
                rows.append(f"<tr><td>{exp_link}</td><td>{_e(var)}</td>"
                            f'<td colspan="7">{_e(why)}</td><td>{_badge(status)}</td></tr>')
            else:
                rows.append(_check_cells(r, exp_link, refs=refs,
                                         level_reason=_level_reason(st.experiment, r.bound)))
        checks.append(f'<div id="{_anchor_check(b.id, var)}"><h5>checked in {_e(var)}</h5>'
                      f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>")
    return (f'<article id="{_anchor_bound(b.id)}"><h4>{_e(b.id)}</h4>{statement}'
            f"{_facts(facts)}{''.join(checks)}</article>")


# ---------------------------------------------------------------------------------------------
# Experiments
# ---------------------------------------------------------------------------------------------

def _experiment_article(st: ExperimentState, refs: Callable[[str], str]) -> str:
    exp, a = st.experiment, st.analysis
    fixed = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                      for k, v in exp.fixed.items())
    status = {"not run": _badge(st.unrun_label), "partial": _badge("PARTIAL"),
              "complete": ""}[st.status]
    if st.missing:
        status += f" not run: {exp.variable} = " + ", ".join(f"{v:g}" for v in st.missing)
    facts = [("title", _e(exp.title)), ("problem", _e(exp.problem)),
             ("algorithm", _e(exp.algorithm)), ("description", refs(_e(exp.description))),
             ("swept", f"{_e(exp.variable)} over " + ", ".join(f"{v:g}" for v in _grid_of(st))),
             ("fixed", _e(fixed)), ("seeds", f"{exp.seeds} per point ({_e(exp.aggregate)})"),
             ("metric", _e(exp.metric)), ("status", status or "complete")]
    if a is not None and a.fit is not None:
        facts.append(("fitted slope", f"{_e(a.fit)} over {len(a.kept)} points"))
    if a is not None and a.dropped:
        facts.append(("dropped", "<ul>" + "".join(f"<li>{_e(exp.variable)}={v:g}: {_e(why)}</li>"
                                                  for v, why in a.dropped) + "</ul>"))
    if st.error or (a is not None and a.error):
        facts.append(("error", _badge("ERROR") + " " + _e(st.error or a.error)))
    if st.notes:
        facts.append(("storage", "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in st.notes)
                      + "</ul>"))
    if a is not None:
        priv = (_badge("PRIVACY FAIL") + " " + _e(a.privacy_error)) if a.privacy_error \
            else _e(a.privacy)
        facts.append(("privacy", priv))
    table = ""
    if is_comparison(st):       # judged by contrasts: no bound, no slope columns
        table = contrast_table_html([st], link=False) if a is not None and a.results else ""
    elif a is not None and a.results:
        head = "<tr>" + "".join(f"<th>{h}</th>" for h in _CHECK_HEAD) + "</tr>"
        rows = "".join(_check_cells(r, f'<a href="#{_anchor_bound(r.bound)}">{_e(r.bound)}</a>',
                                    refs=refs, level_reason=_level_reason(exp, r.bound))
                       for r in a.results)
        table = f"<table><thead>{head}</thead><tbody>{rows}</tbody></table>"
    fig = ""
    if st.figure:
        b64 = base64.b64encode(st.figure).decode("ascii")
        fig = (f'<figure><img alt="log-log figure of {_e(exp.id)}" '
               f'src="data:image/png;base64,{b64}"><figcaption>{_e(exp.id)}: per-seed points, '
               f"{_e(exp.aggregate)} per point, fitted line, predicted slopes.</figcaption></figure>")
    elif st.figure_error:
        fig = f"<p>figure could not be drawn: {_e(st.figure_error)}</p>"
    return (f'<article id="{_anchor_exp(exp.id)}"><h4>{_e(exp.id)}</h4>'
            f"{_facts(facts)}{table}{fig}</article>")


def _grid_of(st: ExperimentState) -> list[float]:
    # The grid the rows came from: stored values plus those not run.
    stored = {float(r[f"p_{st.experiment.variable}"]) for r in st.rows}
    return sorted(stored | set(st.missing))


# ---------------------------------------------------------------------------------------------
# Which bound goes where
# ---------------------------------------------------------------------------------------------

def _shown_bounds(states: list[ExperimentState], papers: Iterable[str]) -> set[str]:
    """Every bound that gets an article (and so an anchor) on the page."""
    return set(_bound_owners(states, list(papers)))


def _checks_by_bound(states: list[ExperimentState]) -> dict[str, dict[str, list]]:
    """bound id -> swept variable -> [(experiment state, CheckResult or None if not analysed)]."""
    checks: dict[str, dict[str, list]] = {}
    for st in states:
        results = {r.bound: r for r in st.analysis.results} if st.analysis else {}
        for c in st.experiment.checks:
            checks.setdefault(c.bound, {}).setdefault(st.experiment.variable, []).append(
                (st, results.get(c.bound)))
    return checks


def _bound_owners(states: list[ExperimentState], papers: list[str]) -> dict[str, str]:
    """The one section each bound's article goes in: its own paper's when that paper is on the
    page, else the first paper whose experiments check it (so every anchor is unique)."""
    owner = {i: p for p in papers for i in bounds.ids(p)}
    for st in states:
        for c in st.experiment.checks:
            owner.setdefault(c.bound, st.experiment.paper)
    return owner
