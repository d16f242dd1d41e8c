"""The report's contrast tables (empirical/report/__init__.py): experiments judged by
:class:`empirical.core.checks.Contrast` claims instead of slopes (:class:`ComparisonExperiment`, the
real-data pseudo-paper ``real``; see docs/papers/real.md).

Per contrast: what is compared, the grid values it is judged at, the paired gain with its 95%
interval (Student t over seeds; Welch for ``increasing``), the margin, the verdict, and at each
grid value the mean of every compared column beside the privacy the rows report spending for it
(no accuracy without its cost).  HTML for the page and Markdown for docs/results.md.
"""
from __future__ import annotations

import numpy as np

from empirical.core.checks import ComparisonExperiment
from empirical.report.data import ExperimentState
from empirical.report.format import _NA, _anchor_exp, _badge, _e, _table

__all__ = ["is_comparison", "contrast_table_html", "contrast_table_md", "spent_for"]

_UNITS = (("epsilon", "ε"), ("rho", "ρ"))


def is_comparison(st: ExperimentState) -> bool:
    """Whether the experiment is judged by contrasts (no bound, no slope)."""
    return isinstance(st.experiment, ComparisonExperiment)


def spent_for(cols: dict[str, np.ndarray], column: str | None = None) -> str:
    """The largest privacy spend the rows report at one grid value: with ``column``, only the
    column's own ``<unit>_spent_<suffix>`` (runs that release several methods record one per
    method: ``acc_lam0.5`` -> ``epsilon_spent_lam0.5``), so a non-private reference (majority
    rate, least squares) is never shown with a spend it did not make; without, the row's
    ``<unit>_spent``.  "" when there is none."""
    if column is None:
        names = lambda unit: [f"{unit}_spent"]  # noqa: E731
    else:
        parts = column.split("_")
        names = lambda unit: [f"{unit}_spent_{'_'.join(parts[k:])}"  # noqa: E731
                              for k in range(1, len(parts))]
    for unit, sym in _UNITS:
        for name in names(unit):
            v = cols.get(name)
            if v is not None and np.isfinite(v).any():
                return f"{sym} spent ≤ {np.nanmax(v):.4g}"
    return ""


def _mean(v: np.ndarray | None) -> str:
    if v is None or not np.isfinite(v).any():
        return _NA
    return f"{np.nanmean(v):.4g}"


def _compared(st: ExperimentState, r) -> list[tuple[float, str, list[tuple[str, str, str]]]]:
    """Per grid value of the contrast: the rows' privacy spend, and (column, mean over all
    seeds, the column's own spend if recorded) of the judged hi column and of lo."""
    cols_by_v = getattr(st.analysis, "columns", {}) or {}
    contrast = next(c for c in st.experiment.contrasts if c.name == r.bound)
    out = []
    for v, est in r.per_point:
        cols = cols_by_v.get(v, {})
        hi = est.chosen or contrast.candidates[0]
        out.append((v, spent_for(cols), [(c, _mean(cols.get(c)), spent_for(cols, c))
                                          for c in (hi, contrast.lo)]))
    return out


def _point_label(var: str, v: float, spent: str) -> str:
    return f"{var}={v:g}" + (f" [rows: {spent}]" if spent else "")


def _gains(st: ExperimentState, r) -> str:
    var = st.experiment.variable
    return "; ".join(f"{var}={v:g}: {est}" for v, est in r.per_point) or _NA


def _kind(r) -> str:
    return r.kind + (" (recorded finding)" if r.expect == "finding" else "")


_HEAD = ("experiment", "contrast", "kind", "judged at", "compared means (privacy spent)",
         "gain [95% CI] per point", "deciding estimate", "margin", "verdict")


def contrast_table_html(states: list[ExperimentState], link: bool = True) -> str:
    """Every contrast of the comparison experiments in ``states`` (one row each)."""
    rows = []
    for st in states:
        exp = st.experiment
        name = (f'<a href="#{_anchor_exp(exp.id)}">{_e(exp.id)}</a>' if link else _e(exp.id))
        if st.analysis is None or not st.analysis.results:
            status = st.unrun_label if not st.rows else ("PARTIAL" if st.missing else "ERROR")
            why = st.error or (st.analysis.error if st.analysis else "no stored rows")
            rows.append([name, ", ".join(_e(c.name) for c in exp.contrasts), _NA, _NA, _NA, _NA,
                         _NA, _NA, f"{_badge(status)}<br><small>{_e(why)}</small>"])
            continue
        for r in st.analysis.results:
            means = "<br>".join(
                _e(_point_label(exp.variable, v, spent)) + ": " + " vs ".join(
                    f"<code>{_e(c)}</code> {m}" + (f" <small>({_e(s)})</small>" if s else "")
                    for c, m, s in pair)
                for v, spent, pair in _compared(st, r))
            verdict = _badge(r.verdict) + (", " + _badge("PRIVACY FAIL")
                                           if st.analysis.privacy_error else "")
            rows.append([name, f"{_e(r.bound)}<br><small>{_e(r.reason)}</small>", _e(_kind(r)),
                         _e(", ".join(f"{v:g}" for v, _ in r.per_point)) or _NA, means or _NA,
                         _e(_gains(st, r)), _e(str(r.observed)), f"{r.tolerance:g}",
                         f"{verdict}<br><small>{_e(r.message)}</small>"])
    return _table(_HEAD, rows)


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def contrast_table_md(states: list[ExperimentState]) -> list[str]:
    """The contrasts of ``states`` as Markdown table lines (empty when there are none)."""
    lines = []
    for st in states:
        exp = st.experiment
        if st.analysis is None or not st.analysis.results:
            continue
        for r in st.analysis.results:
            means = "; ".join(
                _point_label(exp.variable, v, spent) + ": " + " vs ".join(
                    f"{c} {m}" + (f" ({s})" if s else "") for c, m, s in pair)
                for v, spent, pair in _compared(st, r))
            verdict = r.verdict + (", PRIVACY FAIL" if st.analysis.privacy_error else "")
            lines.append(f"| `{exp.id}` | {_md(r.bound)} | {_kind(r)} | {_md(_gains(st, r))} "
                         f"| {r.observed} | {r.tolerance:g} | **{verdict}** | {_md(means)} |")
    if not lines:
        return []
    return ["| experiment | contrast | kind | gain [95% CI] per point | deciding estimate "
            "| margin | verdict | compared means (privacy spent) |",
            "|---|---|---|---|---|---|---|---|", *lines]
