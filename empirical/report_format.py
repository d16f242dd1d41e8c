"""Formatting shared by the report's HTML page and its Markdown summary (empirical/report.py).

Verdict severities and colours, presentation MathML of sympy expressions (browsers render it
natively: no CDN), anchors, numbers, small tables, and the verdict summary of a matrix cell.
No stored result is read here.
"""
from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Iterable, Sequence

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

import bounds
from empirical.checks import ComparisonExperiment
from empirical.report_data import ExperimentState
from empirical.report_markdown import _e

__all__ = ["mathml", "bound_repr_latex"]

_REPO = Path(__file__).resolve().parents[1]
_ERRATA = _REPO / "docs" / "errata.md"
_NA = "—"

# Verdicts by how much they need a reader's attention.  REJECTED is good news: a competing rate
# the data rule out.  NOT RUN / PARTIAL mean the stored results do not (yet) decide.
_SEVERITY = {"PASS": 0, "REJECTED": 0, "NOT RUN": 1, "STALE": 1, "PARTIAL": 1, "FINDING": 2,
             "FAIL": 3, "NOT REJECTED": 3, "ERROR": 3, "PRIVACY FAIL": 3,
             # contrasts (empirical/checks.py): INFO states a comparison nobody claims; NOT
             # REPRODUCED is a recorded finding whose claim now holds (the record is stale)
             "INFO": 0, "NOT REPRODUCED": 3}
_CSS_CLASS = {"PASS": "ok", "REJECTED": "ok", "NOT RUN": "none", "STALE": "none", "PARTIAL": "none",
              "FINDING": "finding", "FAIL": "bad", "NOT REJECTED": "bad", "ERROR": "bad",
              "PRIVACY FAIL": "bad", "INFO": "none", "NOT REPRODUCED": "bad",
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


def _facts(items: list[tuple[str, str]]) -> str:
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items if v) + "</dl>"


def _table(head: Sequence[str], rows: list[list[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return (f"<table><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _anchor_audit(name: str) -> str:
    return "audit-" + _slug(name)


# ---------------------------------------------------------------------------------------------
# Paper titles and verdict summaries
# ---------------------------------------------------------------------------------------------

def paper_doc(paper: str) -> Path | None:
    """``docs/papers/<paper>.md``, the page about a paper without bounds of its own (the
    real-data pseudo-paper), when it exists."""
    p = _REPO / "docs" / "papers" / f"{paper}.md"
    return p if re.fullmatch(r"[a-z][a-z0-9_]*", paper) and p.exists() else None


def _paper_title(paper: str) -> str:
    # The first paragraph of the paper's bounds module names the paper; a paper without bounds
    # is named by the first heading of its docs/papers page.
    try:
        mod = importlib.import_module(f"bounds.{bounds.core.PAPER_MODULES[paper]}")
    except (ImportError, KeyError):
        doc = paper_doc(paper)
        head = re.match(r"#\s+(.*)", doc.read_text(encoding="utf-8")) if doc else None
        return head.group(1).strip() if head else paper
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
        if isinstance(exp, ComparisonExperiment):   # no bound: its contrasts have their table
            continue
        for b, v in st.verdicts():
            cells.setdefault((exp.paper, b, exp.variable), []).append(
                (exp.id, v, st.status == "partial"))
    return cells
