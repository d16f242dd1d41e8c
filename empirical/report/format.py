"""Formatting shared by the report's HTML page and its Markdown summary (empirical/report/__init__.py).

Verdict severities and colours, anchors, numbers, small tables, the verdict summary of a matrix
cell, paper titles; the MathML is :mod:`empirical.report.mathml`'s.  No stored result is read
here.
"""
from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Iterable, Sequence

import bounds
from empirical.core.checks import ComparisonExperiment
from empirical.report.data import ExperimentState
from empirical.report.markdown import _e
from empirical.report.mathml import _relation, bound_repr_latex, mathml  # noqa: F401

__all__ = ["mathml", "bound_repr_latex"]

_REPO = Path(__file__).resolve().parents[2]
_ERRATA = _REPO / "docs" / "errata.md"
_NA = "—"

# Verdicts by how much they need a reader's attention.  REJECTED is good news: a competing rate
# the data rule out.  NOT RUN / PARTIAL mean the stored results do not (yet) decide.
_SEVERITY = {"PASS": 0, "REJECTED": 0, "NOT RUN": 1, "STALE": 1, "PARTIAL": 1, "FINDING": 2,
             "FAIL": 3, "NOT REJECTED": 3, "ERROR": 3, "PRIVACY FAIL": 3,
             # contrasts (empirical/core/checks.py): INFO states a comparison nobody claims; NOT
             # REPRODUCED is a recorded finding whose claim now holds (the record is stale)
             "INFO": 0, "NOT REPRODUCED": 3,
             # three-way verdicts: INCONCLUSIVE decides nothing (fails verify); REFERENCE is a
             # competitor whose assumptions do not hold here; REFUSED an interval too wide to fail
             "INCONCLUSIVE": 3, "REFERENCE": 0, "REFUSED": 3}
_CSS_CLASS = {"PASS": "ok", "REJECTED": "ok", "NOT RUN": "none", "STALE": "none", "PARTIAL": "none",
              "FINDING": "finding", "FAIL": "bad", "NOT REJECTED": "bad", "ERROR": "bad",
              "PRIVACY FAIL": "bad", "INFO": "none", "NOT REPRODUCED": "bad",
              "INCONCLUSIVE": "bad", "REFERENCE": "none", "REFUSED": "bad",
              # audit verdicts (empirical/privacy/audit.py): a private claim upheld, a broken control
              # caught, or the audit's power reached are good; the others need attention
              "OK": "ok", "POWER OK": "ok", "CAUGHT": "ok", "VIOLATION": "bad",
              "MISSED": "bad", "WEAK": "finding"}
_PREFERRED_VARS = ("n", "d", "rho", "epsilon", "delta", "m", "T")


# ---------------------------------------------------------------------------------------------
# Small formatting functions
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


#: Papers that are not papers: the real-data experiments, judged against the other five.


def _paper_title(paper: str) -> str:
    # The title the paper registered (bounds.register_paper); else the first paragraph of its
    # declared module; a paper without bounds is named by the first heading of its
    # docs/papers page.
    info = bounds.core.paper_info(paper)
    if info.title:
        return info.title
    try:
        first = next(m for m in bounds.core.paper_modules(paper)
                     if m.partition(".")[0] != "empirical")
        mod = importlib.import_module(first)
    except (ImportError, StopIteration, ValueError):
        doc = paper_doc(paper)
        head = re.match(r"#\s+(.*)", doc.read_text(encoding="utf-8")) if doc else None
        return head.group(1).strip() if head else paper
    doc = (mod.__doc__ or "").strip().split("\n\n")[0]
    doc = re.sub(r"\s+", " ", doc).removeprefix("Bounds of ").strip()
    doc = re.sub(r",?\s*``[^`]*``", "", doc)           # the path to the paper's text file
    doc = re.sub(r"\s*\(\s*\)", "", doc).rstrip(" .")
    return doc or paper


def paper_errata(paper: str) -> Path | None:
    """The paper's own errata page (``bounds.register_paper(errata=...)``) when it exists."""
    page = bounds.core.paper_info(paper).errata
    return Path(page) if page and Path(page).is_file() else None


def _paper_meta_html(paper: str) -> str:
    """The paper's citation and link as registered; "" when it registered neither."""
    info = bounds.core.paper_info(paper)
    parts = [_e(info.citation)] if info.citation else []
    if info.url:
        parts.append(f'<a href="{_e(info.url)}">{_e(info.url)}</a>')
    return f'<p class="meta">{" · ".join(parts)}</p>' if parts else ""


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
