"""The verification report: one self-contained HTML page and its Markdown summary.

``build_report`` reads *stored* results only (``runner.load_rows`` + ``checks.analyse``; nothing
is re-run: grid points not stored are listed as not run) and writes

* ``report/index.html``: a summary matrix (paper × bound × swept variable, coloured by verdict,
  each cell linking to its section); per paper every bound as mathematics (sympy's presentation
  MathML, which browsers render natively, so no CDN), its assumptions, source and asymptotic
  exponents; the experiments that check it (local and asymptotic predicted slopes, observed slope
  and CI, tolerance and its reason, level band and observed level range, verdict); the figures
  (drawn from the same analyses, embedded as base64 PNG); the privacy table; the errata
  (``docs/errata.md``, rendered by :mod:`empirical.report_markdown`, experiment ids linked to
  their verdicts); the environment (versions, git commit, grid, seeds, storage).  No network access is
  needed to view it.
* ``docs/results.md``: the same summary in Markdown for a code host, figures linked from the
  committed ``figures/<paper>/<experiment>.png``.

What was stored is collected by :mod:`empirical.report_data`; this module renders it.
``bound_repr_latex`` and ``analysis_repr_html`` are the notebook representations of a ``Bound``
and an ``Analysis``.  ``add_arguments`` / ``run_cli`` are the ``dprates report`` command.
"""
from __future__ import annotations

import argparse
import base64
import datetime as _dt
import fnmatch
import importlib
import importlib.metadata
import math
import os
import re
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

import bounds
from empirical import experiment as registry
from empirical.checks import Analysis, CheckResult
from empirical.experiment import PRIVACY_UNITS, Experiment
from empirical.report_data import (AuditView, ExperimentState, _audits,  # noqa: F401
                                   _draw_figures, _fresh_cached, collect, environment)
from empirical.report_markdown import _e, markdown_to_html  # noqa: F401

__all__ = ["ExperimentState", "collect", "environment", "build_report", "render_html", "render_markdown",
           "markdown_to_html", "mathml", "bound_repr_latex", "analysis_repr_html",
           "add_arguments", "run_cli", "main"]

_REPO = Path(__file__).resolve().parents[1]
_ERRATA = _REPO / "docs" / "errata.md"
_NA = "—"

# Verdicts by how much they need a reader's attention.  REJECTED is good news: a competing rate
# the data rule out.  NOT RUN / PARTIAL mean the stored results do not (yet) decide.
_SEVERITY = {"PASS": 0, "REJECTED": 0, "NOT RUN": 1, "STALE": 1, "PARTIAL": 1, "FINDING": 2,
             "FAIL": 3, "NOT REJECTED": 3, "ERROR": 3, "PRIVACY FAIL": 3}
_CSS_CLASS = {"PASS": "ok", "REJECTED": "ok", "NOT RUN": "none", "STALE": "none", "PARTIAL": "none",
              "FINDING": "finding", "FAIL": "bad", "NOT REJECTED": "bad", "ERROR": "bad",
              "PRIVACY FAIL": "bad",
              # audit verdicts (empirical/audit.py): a private claim upheld, a broken control
              # caught, or the audit's power reached are good; the others need attention
              "OK": "ok", "POWER OK": "ok", "CAUGHT": "ok", "VIOLATION": "bad",
              "MISSED": "bad", "WEAK": "finding"}
_PREFERRED_VARS = ("n", "d", "rho", "epsilon", "delta", "m", "T")


# ---------------------------------------------------------------------------------------------
# Mathematics: sympy's presentation MathML, with two local fixes
# ---------------------------------------------------------------------------------------------

class _Printer(MathMLPresentationPrinter):
    """Presentation MathML with Piecewise as a brace (sympy prints ``piecewise((…))``) and the
    weak-convexity constant ``L1t`` as L̃₁ (sympy would split it into ``L1t``)."""

    def _node(self, tag: str, text: str | None = None, *children):
        el = self.dom.createElement(tag)
        if text is not None:
            el.appendChild(self.dom.createTextNode(text))
        for c in children:
            el.appendChild(c)
        return el

    def _print_Piecewise(self, e):
        table = self._node("mtable")
        for expr, cond in e.args:
            if cond == sp.true:
                where = self._node("mtd", None, self._node("mtext", "\u2003otherwise"))
            else:
                # no-break spaces: MathML trims ordinary ones at the ends of <mtext>
                where = self._node("mtd", None, self._node("mtext", "\u2003if\u00a0"),
                                   self._print(cond))
            table.appendChild(self._node("mtr", None, self._node("mtd", None, self._print(expr)),
                                         where))
        brace = self._node("mo", "{")
        for k, v in (("fence", "true"), ("stretchy", "true"), ("symmetric", "true")):
            brace.setAttribute(k, v)
        return self._node("mrow", None, brace, table)

    def _print_Symbol(self, s, style="plain"):
        if s.name == "L1t":
            tilde = self._node("mover", None, self._node("mi", "L"), self._node("mo", "~"))
            return self._node("msub", None, tilde, self._node("mn", "1"))
        return super()._print_Symbol(s, style)


def mathml(expr, display: bool = False) -> str:
    """``expr`` as a ``<math>`` element (presentation MathML, rendered natively by browsers)."""
    body = _Printer().doprint(sp.sympify(expr))
    # sympy's writer does not escape the text of <mo> for strict inequalities.
    body = body.replace("<mo><</mo>", "<mo>&lt;</mo>").replace("<mo>></mo>", "<mo>&gt;</mo>")
    body = body.replace("<mo>-</mo>", "<mo>&#x2212;</mo>")    # a minus sign, not a hyphen
    mode = ' display="block"' if display else ""
    return f"<math{mode}>{body}</math>"


def _relation(bound: bounds.Bound) -> str:
    return {"upper": "≤", "lower": "≥"}.get(bound.kind, "=")


def bound_repr_latex(bound: bounds.Bound) -> str:
    """A ``Bound`` as LaTeX for notebooks (``_repr_latex_``): ``id: quantity ≤ expr``."""
    rel = {"upper": r"\le", "lower": r"\ge"}.get(bound.kind, "=")
    return rf"$\displaystyle \texttt{{{bound.id}}}:\quad (\cdot) {rel} {bound.latex()}$"


# ---------------------------------------------------------------------------------------------
# Small formatting helpers
# ---------------------------------------------------------------------------------------------



def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", s).strip("-")


def _anchor_bound(bound_id: str) -> str:
    return "bound-" + _slug(bound_id)


def _anchor_exp(exp_id: str) -> str:
    return "exp-" + _slug(exp_id)


def _anchor_check(bound_id: str, var: str) -> str:
    return f"chk-{_slug(bound_id)}--{_slug(var)}"


def _num(x: float | None, signed: bool = False, digits: int = 3) -> str:
    if x is None or not isinstance(x, (int, float)) or math.isnan(x):
        return "n/a"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}g}"


def _range(values: Sequence[float]) -> str:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return _NA
    lo, hi = min(vals), max(vals)
    return f"{lo:.6g}" if math.isclose(lo, hi, rel_tol=1e-12) else f"{lo:.6g} – {hi:.6g}"


def _band(pair: tuple[float, float] | None) -> str:
    return _NA if pair is None else f"[{pair[0]:.3g}, {pair[1]:.3g}]"


def _badge(verdict: str, suffix: str = "") -> str:
    return f'<span class="v {_CSS_CLASS.get(verdict, "none")}">{_e(verdict)}{_e(suffix)}</span>'


def _natural_key(s: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _var_order(names: Iterable[str]) -> list[str]:
    names = set(names)
    first = [v for v in _PREFERRED_VARS if v in names]
    return first + sorted(names - set(first))


# ---------------------------------------------------------------------------------------------
# Notebook representation of an analysis
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
    verdict = (f'<span style="background:{_INLINE_COLOURS[cls]};padding:0 4px">{_e(r.verdict)}</span>'
               if inline_style else _badge(r.verdict))
    cells = [lead, _e(r.variable), _e(kind), _num(r.local, signed=True),
              _asymptotic_html(r), _e(str(r.observed)),
              f"{r.tolerance:g}<br><small>{refs(_e(r.reason))}</small>",
              _band(r.level_band) + (f"<br><small>{refs(_e(level_reason))}</small>"
                                     if level_reason else ""),
              _band(r.level_range),
              f"{verdict}<br><small>{refs(_e(r.message))}</small>"]
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
# HTML page
# ---------------------------------------------------------------------------------------------

_STYLE = """
:root { --ok:#d7f0d8; --finding:#ffe3b3; --bad:#f8c9c4; --none:#e4e4e4; --fg:#1d2329; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       max-width: 1320px; margin: 0 auto; padding: 0 24px 80px; }
header { border-bottom: 2px solid #333; margin-bottom: 12px; }
h1 { margin: 18px 0 4px; font-size: 26px; }
h2 { margin-top: 42px; border-bottom: 1px solid #999; }
h3 { margin-top: 28px; }
.meta { color: #555; font-size: 13px; margin: 0 0 10px; }
nav.toc { font-size: 14px; margin: 8px 0 16px; }
nav.toc a { margin-right: 14px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid #c8c8c8; padding: 3px 7px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td small { color: #555; }
table.matrix td.cell { text-align: center; min-width: 92px; padding: 0; }
table.matrix td.cell a { display: block; padding: 4px 6px; color: inherit; text-decoration: none; }
table.matrix td.cell a:hover { outline: 2px solid #333; }
table.matrix th.paper { background: #e6ebf2; text-align: left; font-size: 14px; }
table.matrix small.kind { color: #777; font-weight: normal; }
td.ok, .v.ok { background: var(--ok); } td.finding, .v.finding { background: var(--finding); }
td.bad, .v.bad { background: var(--bad); } td.none, .v.none { background: var(--none); }
td.empty { background: #fff; color: #bbb; text-align: center; }
td.partial { background-image: repeating-linear-gradient(45deg, transparent 0 6px,
             rgba(0,0,0,.06) 6px 12px); }
.v { padding: 0 5px; border-radius: 3px; font-weight: 600; font-size: 12px; white-space: nowrap; }
.legend span.v { margin-right: 8px; }
article { border-left: 3px solid #cfd8e3; padding: 2px 0 4px 14px; margin: 18px 0; }
article h4 { margin: 4px 0 6px; font-size: 16px; }
dl.facts { display: grid; grid-template-columns: 150px 1fr; gap: 2px 12px; margin: 6px 0;
           font-size: 14px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; }
/* An OpenType MATH font makes brackets and braces stretch; use whichever the reader has. */
math { font-size: 1.12em; font-family: "STIX Two Math", "Latin Modern Math", "Cambria Math",
       "DejaVu Math TeX Gyre", math; }
.formula { overflow-x: auto; overflow-y: hidden; padding: 6px 0; margin: 0 0 6px 24px; }
.formula math[display="block"] { display: inline-block; font-size: 19px; }
p.stmt { margin: 4px 0 2px; }
figure { margin: 8px 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 12px; color: #555; }
details > summary { cursor: pointer; font-weight: 600; margin: 10px 0; }
.errata h4 { margin-top: 22px; }
.errata table.md td, .errata table.md th { font-size: 12.5px; }
code { background: #f4f4f4; padding: 0 3px; border-radius: 3px; font-size: 12.5px; }
"""

# Checks, in the browser, that every image decoded, every #link has a target and every formula
# has a box; the result is written to <html data-selfcheck=...> for the headless-browser test.
_SELFCHECK = """
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  var links = Array.from(document.querySelectorAll('a[href^="#"]'));
  var broken = links.filter(function (a) {
    return !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));
  });
  var maths = Array.from(document.getElementsByTagName('math'));
  // formulas inside a closed <details> have no box until opened; count only the visible ones
  var flat = maths.filter(function (m) {
    return !m.closest('details:not([open])') && m.getBoundingClientRect().width <= 0; });
  document.documentElement.setAttribute('data-selfcheck', JSON.stringify({
    images: imgs.length, images_failed: bad.length, links: links.length,
    links_broken: broken.map(function (a) { return a.getAttribute('href'); }),
    math: maths.length, math_unrendered: flat.length}));
});
"""


def _paper_title(paper: str) -> str:
    # The first paragraph of the paper's bounds module names the paper.
    try:
        mod = importlib.import_module(f"bounds.{bounds.core.PAPER_MODULES[paper]}")
    except (ImportError, KeyError):
        return paper
    doc = (mod.__doc__ or "").strip().split("\n\n")[0]
    doc = re.sub(r"\s+", " ", doc).removeprefix("Bounds of ").strip()
    doc = re.sub(r",?\s*``[^`]*``", "", doc)           # the path to the paper's text file
    doc = re.sub(r"\s*\(\s*\)", "", doc).rstrip(" .")
    return doc or paper


def _cell_summary(verdicts: list[tuple[str, str]]) -> tuple[str, str]:
    """Worst verdict (for the colour) and a short text for a matrix cell."""
    worst = max((v for _, v in verdicts), key=lambda v: _SEVERITY.get(v, 3))
    counts: dict[str, int] = {}
    for _, v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    text = " · ".join(f"{v}" + (f" ×{k}" if k > 1 else "")
                      for v, k in sorted(counts.items(), key=lambda kv: -_SEVERITY.get(kv[0], 3)))
    return worst, text


def _matrix_entries(states: list[ExperimentState]) -> dict[tuple[str, str, str], list]:
    """(paper, bound, variable) -> [(experiment id, verdict, partial)]."""
    cells: dict[tuple[str, str, str], list] = {}
    for st in states:
        exp = st.experiment
        for b, v in st.verdicts():
            cells.setdefault((exp.paper, b, exp.variable), []).append(
                (exp.id, v, st.status == "partial"))
    return cells


def _matrix_html(states: list[ExperimentState]) -> str:
    cells = _matrix_entries(states)
    papers = sorted({p for p, _, _ in cells})
    variables = _var_order({v for _, _, v in cells})
    head = "<tr><th>bound</th>" + "".join(f"<th>{_e(v)}</th>" for v in variables) + "</tr>"
    body = []
    for paper in papers:
        body.append(f'<tr><th class="paper" colspan="{len(variables) + 1}">'
                    f'<a href="#paper-{_slug(paper)}">{_e(paper)}</a>: {_e(_paper_title(paper))}</th></tr>')
        for b in sorted({b for p, b, _ in cells if p == paper}, key=_natural_key):
            kind = bounds.get(b).kind
            tds = [f'<th><a href="#{_anchor_bound(b)}">{_e(b)}</a> '
                   f'<small class="kind">{_e(kind)}</small></th>']
            for v in variables:
                entries = cells.get((paper, b, v))
                if not entries:
                    tds.append('<td class="empty">·</td>')
                    continue
                worst, text = _cell_summary([(e, verdict) for e, verdict, _ in entries])
                partial = " partial" if any(p for _, _, p in entries) else ""
                tip = "; ".join(f"{e}: {verdict}" for e, verdict, _ in entries)
                tds.append(f'<td class="cell {_CSS_CLASS.get(worst, "none")}{partial}" '
                           f'title="{_e(tip)}"><a href="#{_anchor_check(b, v)}">{_e(text)}</a></td>')
            body.append("<tr>" + "".join(tds) + "</tr>")
    legend = ('<p class="legend">' + "".join(_badge(v) for v in
              ("PASS", "REJECTED", "FINDING", "FAIL", "NOT REJECTED", "NOT RUN", "STALE")) +
              "<small>REJECTED: a competing rate the data rule out (good). FINDING: a claim the "
              "experiments contradict, documented in the errata. STALE: stored by other code "
              "(rerun to analyse). Hatched: some grid points not run. Each cell links to its "
              "checks.</small></p>")
    return (f'<table class="matrix"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
            + legend)


def _facts(items: list[tuple[str, str]]) -> str:
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items if v) + "</dl>"


def _exponents_html(b: bounds.Bound) -> str:
    # Exact exponents cost sympy time; a bound does not change within a process, so each is
    # computed once (reports built twice in one session, as in the tests, reuse them).
    key = (b.id, sp.srepr(b.expr))
    if key not in _EXPONENT_CACHE:
        _EXPONENT_CACHE[key] = _compute_exponents_html(b)
    return _EXPONENT_CACHE[key]


_EXPONENT_CACHE: dict[tuple[str, str], str] = {}


def _compute_exponents_html(b: bounds.Bound) -> str:
    parts = []
    for v in b.scale_variables:
        try:
            parts.append(f"<li><b>{_e(v)}</b>: {mathml(b.exponent(v))}</li>")
        except Exception as exc:  # shown, not hidden
            parts.append(f"<li><b>{_e(v)}</b>: could not be computed ({_e(exc)})</li>")
    return "<ul>" + "".join(parts) + "</ul>" if parts else ""


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
    if a is not None and a.results:
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


def _anchor_audit(name: str) -> str:
    return "audit-" + _slug(name)


def _audit_cell(st: ExperimentState, audits: AuditView) -> str:
    """The audited lower bounds of the experiment's algorithm, each linked to its audit row
    (an audit runs at its own parameters, so its ε is not the experiment's ε)."""
    names = audits.by_experiment.get(st.experiment.id, [])
    if not names:
        reg = audits.registered_by_experiment.get(st.experiment.id, [])
        return ("not audited" if not reg else
                "not audited (registered, not stored: <code>dprates audit "
                + _e(" ".join(reg)) + "</code>)")
    parts = []
    for n in names:
        a = audits.stored[n]
        claimed = _NA if a.claimed is None else f"{a.claimed:.3g}"
        stale = ' <span class="v finding">stale</span>' if a.status == "stale" else ""
        parts.append(f'<a href="#{_anchor_audit(n)}">{_e(n)}</a>: ε<sub>lo</sub> '
                     f"{_e(a.audited)} (claimed {claimed}) {_badge(a.verdict)}{stale}")
    return "<br>".join(parts)


def _privacy_table(states: list[ExperimentState], audits: AuditView) -> str:
    head = ("experiment", "unit", "target", "guarantee", "spent", "max spent / guarantee",
            "audited lower bound (ε at the audit's δ and setting, vs its claim)", "verdict")
    rows = []
    for st in states:
        exp = st.experiment
        link = f'<a href="#{_anchor_exp(exp.id)}">{_e(exp.id)}</a>'
        if not exp.private:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, _NA, "not private (baseline/control)"])
            continue
        audited = _audit_cell(st, audits)
        if not st.rows:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, audited, _badge(st.unrun_label)])
            continue
        unit = next((u for u in PRIVACY_UNITS if all(f"{u}_{c}" in st.rows[0]
                                                     for c in ("target", "guarantee", "spent"))), None)
        a = st.analysis
        verdict = (_badge("PRIVACY FAIL") + f"<br><small>{_e(a.privacy_error)}</small>"
                   if a is not None and a.privacy_error else _badge("PASS"))
        if unit is None:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, audited, verdict])
            continue
        col = {c: [r.get(f"{unit}_{c}") for r in st.rows] for c in ("target", "guarantee", "spent")}
        ratios = [s / g for s, g in zip(col["spent"], col["guarantee"])
                  if s is not None and g not in (None, 0)]
        rows.append([link, {"rho": "ρ (zCDP)", "epsilon": "ε"}.get(unit, unit),
                     _range(col["target"]), _range(col["guarantee"]), _range(col["spent"]),
                     f"{max(ratios):.4g}" if ratios else _NA, audited, verdict])
    return _table(head, rows)


def _table(head: Sequence[str], rows: list[list[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return (f"<table><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _audit_table(stored: list) -> str:
    """Every stored audit of one paper: the claim, the audited lower bound with its confidence,
    the verdict, the runs and seeding, the code fingerprint (stale ones marked)."""
    head = ("audit target", "algorithm", "relation / view", "δ", "claimed ε",
            "audited ε<sub>lo</sub> (confidence)", "exact ε", "runs/side", "verdict",
            "code fingerprint")
    rows = []
    for a in stored:
        rec = a.record
        name = _e(a.target) + (" <small>(broken control)</small>" if a.expect == "broken" else "")
        fp = _e(a.fingerprint) + (f'<br><span class="v finding">stale</span> <small>{_e(a.reason)}'
                                  "</small>" if a.status == "stale" else "")
        rows.append([f'<span id="{_anchor_audit(a.target)}">{name}</span>', _e(a.algorithm),
                     f"{_e(a.relation)} / {_e(a.view)}", f"{a.delta:g}",
                     _NA if a.claimed is None else f"{a.claimed:.3f}",
                     f"{_e(a.audited)} ({100 * a.confidence:g}%)",
                     _NA if a.exact is None else f"{a.exact:.3f}",
                     f"{a.trials:,}" + (f" (pair: {_e(rec.get('pair', ''))})"
                                        if rec.get("pair") not in (None, "given") else ""),
                     _badge(a.verdict), fp])
    return _table(head, rows)


_AUDIT_NOTE = ("<p class=\"meta\">Stored by <code>dprates audit</code> (results/audits/). "
               "ε<sub>lo</sub> is a lower bound on the true ε(δ) at the stated confidence "
               "(Clopper–Pearson on held-out runs of one neighbouring pair); ε<sub>lo</sub> &gt; "
               "claimed proves a violation, ε<sub>lo</sub> ≤ claimed is evidence, not proof, of "
               "privacy. Broken controls must be CAUGHT. Each audit runs at its own parameters, "
               "so its claimed ε is not an experiment's; runs are seeded from "
               "SeedSequence([h(target), h(pair), h(tag), side, block]).</p>")


def _harness_audits_html(audits: AuditView, papers: Sequence[str]) -> str:
    """Stored audits of no paper on the page (the core harness's power targets and broken
    controls), and stored audit files that could not be read."""
    others = sorted({a.paper for a in audits.stored.values()} - set(papers))
    parts = [f'<h3 id="audits-{_slug(p)}">{_e(p)}</h3>{_audit_table(audits.for_paper(p))}'
             for p in others]
    if audits.problems:
        parts.append("<p>Skipped:</p><ul>" + "".join(f"<li>{_e(m)}</li>" for m in audits.problems)
                     + "</ul>")
    if not parts:
        return ""
    return ('<section id="audits-other"><h2>Privacy audits: harness and other papers</h2>'
            + _AUDIT_NOTE + "".join(parts) + "</section>")


def _audits_section(paper: str, audits: AuditView) -> str:
    stored = audits.for_paper(paper)
    slug = _slug(paper)
    if not stored:
        reg = sorted(k for k, p in audits.registered.items() if p == paper)
        what = (f"none stored; registered: <code>{_e(' '.join(reg))}</code> "
                f"(<code>dprates audit {_e(paper)}</code>)" if reg else "none registered")
        return f'<h3 id="audits-{slug}">Privacy audits</h3><p>{what}.</p>'
    return (f'<h3 id="audits-{slug}">Privacy audits</h3>{_AUDIT_NOTE}' + _audit_table(stored))


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


def _paper_section(paper: str, states: list[ExperimentState], audits: AuditView,
                   summaries: dict[str, bytes | str], refs, checks: dict[str, dict[str, list]],
                   owner: dict[str, str]) -> str:
    all_ids = {i for i, p in owner.items() if p == paper}
    checked = sorted((i for i in all_ids if i in checks), key=_natural_key)
    unchecked = sorted((i for i in all_ids if i not in checks), key=_natural_key)
    parts = [f'<section id="paper-{_slug(paper)}"><h2>{_e(paper)}: {_e(_paper_title(paper))}</h2>']
    n_done = sum(st.status == "complete" for st in states)
    parts.append(f'<p class="meta">{len(states)} experiments, {n_done} complete, '
                 f"{sum(st.status == 'partial' for st in states)} partial, "
                 f"{sum(st.status == 'not run' for st in states)} not run; "
                 f"{len(checked)} bounds checked, {len(unchecked)} not checked by an experiment.</p>")
    parts.append(f'<h3 id="bounds-{_slug(paper)}">Bounds and their checks</h3>')
    parts += [_bound_article(bounds.get(i), checks[i], refs) for i in checked]
    if unchecked:
        parts.append(f"<details><summary>{len(unchecked)} bounds not checked by an experiment "
                     "(lower bounds, conversions, prior work, simplified forms)</summary>")
        parts += [_bound_article(bounds.get(i), {}, refs) for i in unchecked]
        parts.append("</details>")
    parts.append(f'<h3 id="experiments-{_slug(paper)}">Experiments</h3>')
    parts += [_experiment_article(st, refs) for st in states]
    mine = {k: v for k, v in summaries.items()
            if any(s.id == k for s in registry.summaries(paper))}
    if mine:
        parts.append(f'<h3 id="summary-figures-{_slug(paper)}">Summary figures</h3>')
        for sid, png in sorted(mine.items()):
            if isinstance(png, bytes):
                b64 = base64.b64encode(png).decode("ascii")
                parts.append(f'<figure><img alt="{_e(sid)}" src="data:image/png;base64,{b64}">'
                             f"<figcaption>{_e(sid)}</figcaption></figure>")
            else:
                parts.append(f"<p>{_e(sid)} could not be drawn: {_e(png)}</p>")
    parts.append(f'<h3 id="privacy-{_slug(paper)}">Privacy</h3>'
                 "<p>From each stored row's <code>&lt;unit&gt;_target</code>, "
                 "<code>_guarantee</code> (data-independent, dp-accounting) and <code>_spent</code> "
                 "(what the releases compose to; ex post when stops depend on the data). "
                 "Audited lower bounds come from stored privacy audits "
                 f'(<a href="#audits-{_slug(paper)}">below</a>) of the same algorithm; '
                 "\"not audited\" where none is stored.</p>")
    parts.append(_privacy_table(states, audits))
    parts.append(_audits_section(paper, audits))
    parts.append("</section>")
    return "\n".join(parts)


def _errata_html(states: list[ExperimentState], shown_bounds: set[str]
                 ) -> tuple[str, Callable[[str], str]]:
    """The errata rendered, experiment ids linked with their verdicts; and a function linking
    erratum labels (KL-E10) in other text to their headings."""
    text = _ERRATA.read_text(encoding="utf-8") if _ERRATA.exists() else ""
    by_id = {st.experiment.id: st for st in states}
    labels = set(re.findall(r"^#{2,6}\s+([A-Z][A-Za-z]*-E\d+)\b", text, flags=re.M))

    def refs(s: str) -> str:
        return re.sub(r"\b([A-Z][A-Za-z]*-E\d+)\b",
                      lambda m: (f'<a href="#erratum-{m.group(1)}">{m.group(1)}</a>'
                                 if m.group(1) in labels else m.group(1)), s)

    def verdict_of(st: ExperimentState) -> str:
        worst, _ = _cell_summary([(b, v) for b, v in st.verdicts()])
        return worst

    def code(s: str) -> str:
        if s in by_id:
            st = by_id[s]
            return (f'<a href="#{_anchor_exp(s)}"><code>{_e(s)}</code></a> '
                    f"{_badge(verdict_of(st))}")
        if s in shown_bounds:
            return f'<a href="#{_anchor_bound(s)}"><code>{_e(s)}</code></a>'
        matches = [st for i, st in by_id.items() if "*" in s and fnmatch.fnmatchcase(i, s)]
        if matches:
            worst, summary = _cell_summary([(st.experiment.id, verdict_of(st)) for st in matches])
            return f'<code>{_e(s)}</code> <span class="v {_CSS_CLASS.get(worst, "none")}">{_e(summary)}</span>'
        return f"<code>{_e(s)}</code>"

    def heading_id(h: str) -> str:
        m = re.match(r"([A-Z][A-Za-z]*-E\d+)\b", h)
        return f"erratum-{m.group(1)}" if m else "errata-" + _slug(h)

    body = markdown_to_html(text, code=code, refs=refs, heading_id=heading_id, heading_offset=1)
    # The file's own title duplicates the section's.
    body = re.sub(r"^<h2[^>]*>Errata and readings</h2>\n?", "", body)
    return body, refs


def render_html(states: list[ExperimentState], env: dict[str, str], audits: AuditView | None,
                summaries: dict[str, bytes | str], errors: dict[str, str] | None = None) -> str:
    """The whole page as one string (styles, figures and formulas inline); ``errors`` are
    papers whose experiments could not be loaded; ``audits`` the stored privacy audits
    (:func:`empirical.report_data._audits`; None or empty: none)."""
    if not isinstance(audits, AuditView):
        audits = AuditView()
    broken = "".join(f"<li>{_badge('ERROR')} paper {_e(p)}: experiments could not be loaded: "
                     f"{_e(msg)}</li>" for p, msg in sorted((errors or {}).items()))
    broken = f'<ul class="errors">{broken}</ul>' if broken else ""
    papers = sorted({st.experiment.paper for st in states})
    errata, refs = _errata_html(states, _shown_bounds(states, papers))
    worst_counts: dict[str, int] = {}
    for st in states:
        for _, v in st.verdicts():
            worst_counts[v] = worst_counts.get(v, 0) + 1
    tally = " ".join(_badge(v, f" {k}") for v, k in
                     sorted(worst_counts.items(), key=lambda kv: -_SEVERITY.get(kv[0], 3)))
    toc = " ".join(f'<a href="#paper-{_slug(p)}">{_e(p)}</a>' for p in papers)
    if set(a.paper for a in audits.stored.values()) - set(papers) or audits.problems:
        toc += ' <a href="#audits-other">audits (harness)</a>'
    toc += ' <a href="#errata">errata</a> <a href="#environment">environment</a>'
    prov_head = ("experiment", "grid points stored", "rows", "seeds", "stored (UTC)",
                 "code fingerprint", "fresh / cached")
    prov = []
    for st in states:
        t = st.stored
        when = _NA if t is None else " – ".join(
            sorted({_dt.datetime.fromtimestamp(x, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
                    for x in t}))
        npts = len(_grid_of(st))
        prov.append([f'<a href="#{_anchor_exp(st.experiment.id)}">{_e(st.experiment.id)}</a>',
                     f"{npts - len(st.missing)}/{npts}", str(len(st.rows)),
                     str(st.experiment.seeds), when,
                     _e(", ".join(st.fingerprints) or _NA), _e(_fresh_cached(st.rows))])
    env_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in env.items())
    prov_rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in prov)
    checks, owner = _checks_by_bound(states), _bound_owners(states, papers)
    paper_sections = "\n".join(
        _paper_section(p, [st for st in states if st.experiment.paper == p], audits, summaries,
                       refs, checks, owner)
        for p in papers) + _harness_audits_html(audits, papers)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dprates verification report</title>
<style>{_STYLE}</style>
<script>{_SELFCHECK}</script>
</head><body>
<header id="top"><h1>dprates: verification report</h1>
<p class="meta">Convergence rates of differentially private optimizers, theory against experiment.
Generated {_e(env.get("generated (UTC)", ""))} UTC from stored results ({_e(env.get("grid", ""))} grid)
at commit <code>{_e(env.get("git commit", "unknown")[:12])}</code>. Nothing on this page was recomputed
except fits of stored rows.</p>
<nav class="toc">{toc}</nav></header>
<section id="summary"><h2 style="margin-top:8px">Summary: bound × swept variable</h2>
{broken}<p>Checks by verdict: {tally}</p>
{_matrix_html(states)}
<p class="meta">Checks: <b>two-sided</b>, the bound is tight on this instance (observed slope within
the tolerance of the band between the bound's local slope over the grid and its asymptotic
exponent); <b>one-sided</b>, only an upper bound is claimed (the observed slope may be steeper);
<b>reject</b>, a competing rate the same data must rule out.</p>
</section>
{paper_sections}
<section id="errata" class="errata"><h2>Errata and readings</h2>
<p class="meta">docs/errata.md, with the verdicts of the experiments each entry names.</p>
{errata}
</section>
<section id="environment"><h2>Environment</h2>
<table>{env_rows}</table>
<h3>Stored results</h3>
<table><thead><tr>{''.join(f'<th>{h}</th>' for h in prov_head)}</tr></thead><tbody>{prov_rows}</tbody></table>
</section>
</body></html>
"""


# ---------------------------------------------------------------------------------------------
# Markdown summary
# ---------------------------------------------------------------------------------------------

# Colour stand-ins on code hosts, which strip styles from Markdown tables.
_MD_MARK = {"ok": "✅", "finding": "🟧", "bad": "❌", "none": "⬜"}


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _md_audits(stored: list) -> list[str]:
    """Stored privacy audits of one paper as a Markdown table (empty when none)."""
    if not stored:
        return []
    out = ["", "### Privacy audits", "",
           "| audit target | δ | claimed ε | audited ε_lo (confidence) | runs/side | verdict |",
           "|---|---|---|---|---|---|"]
    for a in stored:
        name = f"`{a.target}`" + (" (broken control)" if a.expect == "broken" else "")
        claimed = "—" if a.claimed is None else f"{a.claimed:.3f}"
        stale = " (stale)" if a.status == "stale" else ""
        out.append(f"| {name} | {a.delta:g} | {claimed} | {a.audited} ({100 * a.confidence:g}%) "
                   f"| {a.trials:,} | **{a.verdict}**{stale} |")
    return out


def render_markdown(states: list[ExperimentState], env: dict[str, str], *,
                    md_path: Path, figures_root: Path, html_path: Path | None = None,
                    audits: AuditView | None = None) -> str:
    """The summary as Markdown: matrix, verdict table, links to the committed figure PNGs, and
    the stored privacy audits (``audits``) per paper."""
    audits = audits if isinstance(audits, AuditView) else AuditView()
    def rel(p: Path) -> str:
        return Path(os.path.relpath(p.resolve(), md_path.resolve().parent)).as_posix()

    cells = _matrix_entries(states)
    papers = sorted({st.experiment.paper for st in states})
    out = ["# Verification results", "",
           f"Generated by `dprates report` from stored results ({env.get('grid')} grid) at commit "
           f"`{env.get('git commit', 'unknown')[:12]}`, {env.get('generated (UTC)')} UTC. "
           "Regenerate with `dprates verify` then `dprates report`."
           + (f" The full report (mathematics, privacy, errata, environment) is "
              f"`{html_path.as_posix()}` (build output, not committed)." if html_path else ""),
           "",
           "Verdicts: PASS, a rate checks out; REJECTED, a competing rate the data rule out; "
           f"FINDING, a claim the experiments contradict (see [errata]({rel(_ERRATA)})); "
           "FAIL / NOT REJECTED, a check that did not hold; NOT RUN, no stored results.", ""]
    for paper in papers:
        pstates = [st for st in states if st.experiment.paper == paper]
        variables = _var_order({v for p, _, v in cells if p == paper})
        out += [f"## {paper}: {_md(_paper_title(paper))}", "", "### Bound × swept variable", "",
                "| bound | " + " | ".join(variables) + " |",
                "|---|" + "---|" * len(variables)]
        for b in sorted({b for p, b, _ in cells if p == paper}, key=_natural_key):
            row = []
            for v in variables:
                entries = cells.get((paper, b, v))
                if entries:
                    worst, text = _cell_summary([(e, x) for e, x, _ in entries])
                    row.append(f"{_MD_MARK[_CSS_CLASS.get(worst, 'none')]} {text}")
                else:
                    row.append("·")
            out.append(f"| `{b}` | " + " | ".join(row) + " |")
        table, not_run = [], []
        for st in pstates:
            exp = st.experiment
            png = figures_root / exp.paper / f"{exp.id}.png"
            fig = f"[png]({rel(png)})" if png.exists() else "—"
            if st.analysis is None or not st.analysis.results:
                why = (st.error or (st.analysis.error if st.analysis else "")
                       or "; ".join(st.notes) or "no stored rows")
                not_run.append(f"- `{exp.id}`: {st.status}; {_md(why)}")
                continue
            for r in st.analysis.results:
                kind = r.kind + ("*" if r.expect == "finding" else "")
                verdict = r.verdict + (" (partial grid)" if st.missing else "")
                if st.analysis.privacy_error:
                    verdict += ", PRIVACY FAIL"
                table.append(f"| `{exp.id}` | `{r.bound}` | {r.variable} | {kind} | {r.local:+.3f} "
                             f"| {_md(r.asymptotic_expr)} | {r.observed} | {r.tolerance:g} "
                             f"| **{verdict}** | {fig} |")
        out += ["", "### Checks", ""]
        if table:
            out += ["| experiment | bound | var | kind | local | asymptotic | observed [95% CI] "
                    "| tol | verdict | figure |", "|---|---|---|---|---|---|---|---|---|---|", *table]
        else:
            out.append("No stored results could be analysed for this paper.")
        out += ["", "`*` recorded finding (docs/errata.md). local: the bound's least-squares "
                "log-log slope over the same grid points (log factors included); asymptotic: its "
                "exponent as the variable → ∞."]
        if not_run:
            out += ["", "Not run or not analysable:", "", *not_run]
        out += _md_audits(audits.for_paper(paper))
        sums = [s for s in registry.summaries(paper)
                if (figures_root / paper / f"{s.id}.png").exists()]
        if sums:
            out += ["", "Summary figures: " + ", ".join(
                f"[{s.id}]({rel(figures_root / paper / f'{s.id}.png')})" for s in sums)]
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

def build_report(paper: str | None = None, *, full: bool = False,
                 results: str | os.PathLike | None = None, out: str | os.PathLike = "report",
                 markdown: str | os.PathLike | None = "docs/results.md",
                 figures: str | os.PathLike = "figures",
                 experiment_ids: Sequence[str] | None = None) -> tuple[Path, Path | None]:
    """Write ``<out>/index.html`` (and ``markdown`` unless None) from stored results."""
    if paper is not None and paper not in bounds.PAPERS:
        raise ValueError(f"paper must be one of {bounds.PAPERS}, got {paper!r}")
    errors: dict[str, str] = {}
    states = collect(paper, full=full, results=results, experiment_ids=experiment_ids,
                     errors=errors)
    if not states:
        raise ValueError(f"no experiments registered for paper={paper!r}")
    summaries = _draw_figures(states)
    env = environment(full, results)
    html_path = Path(out) / "index.html"
    html_path.parent.mkdir(parents=True, exist_ok=True)
    audits = _audits(states, results)
    _write(html_path, render_html(states, env, audits, summaries, errors))
    md_path = None
    if markdown:
        md_path = Path(markdown)
        md_path.parent.mkdir(parents=True, exist_ok=True)
        _write(md_path, render_markdown(states, env, md_path=md_path, figures_root=Path(figures),
                                        html_path=html_path, audits=audits))
    return html_path, md_path


def _write(path: Path, text: str) -> None:
    # Temporary file then rename: a reader never sees half a page.
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``dprates report``."""
    parser.add_argument("--paper", choices=bounds.PAPERS, default=None,
                        help="only this paper (default: all)")
    parser.add_argument("--experiment", action="append", default=None,
                        help="only this experiment (repeatable)")
    parser.add_argument("--full", action="store_true", help="report the full grids' results")
    parser.add_argument("--results", default=None,
                        help="results directory (default ./results or $DPRATES_RESULTS)")
    parser.add_argument("--out", default="report", help="output directory (default report/)")
    parser.add_argument("--markdown", default="docs/results.md",
                        help="Markdown summary path (default docs/results.md; '' to skip)")
    parser.add_argument("--figures", default="figures",
                        help="committed figures the Markdown links to (default figures/)")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``dprates report``; 0 on success, 2 on a bad argument.  Verdicts do not change the
    status (``dprates verify`` is the gate; the report only shows them)."""
    try:
        html_path, md_path = build_report(
            getattr(args, "paper", None), full=getattr(args, "full", False),
            results=getattr(args, "results", None), out=getattr(args, "out", "report"),
            markdown=getattr(args, "markdown", "docs/results.md") or None,
            figures=getattr(args, "figures", "figures"),
            experiment_ids=getattr(args, "experiment", None))
    except (ValueError, KeyError) as exc:
        print(f"dprates report: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    print(f"wrote {html_path}" + (f" and {md_path}" if md_path else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m empirical.report",
                                     description="Write the verification report from stored results.")
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
