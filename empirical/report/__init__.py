"""The verification report: one self-contained HTML page and its Markdown summary.

``build_report`` reads *stored* results only (``runner.load_rows`` + ``checks.analyse``; nothing
is re-run: grid points not stored are listed as not run) and writes

* ``report/index.html``: a summary matrix (paper × bound × swept variable, coloured by verdict,
  each cell linking to its section); per paper every bound as mathematics (sympy's presentation
  MathML, which browsers render natively, so no CDN), its assumptions, source and asymptotic
  exponents; the experiments that check it (local and asymptotic predicted slopes, observed slope
  and CI, tolerance and its reason, level band and observed level range, verdict); the figures
  (drawn from the same analyses, embedded as base64 PNG); the privacy table; the paper's errata
  page (``register_paper(errata=...)``, this project's ``docs/errata/<paper>.md``, rendered by
  :mod:`empirical.report.markdown`, experiment ids linked to their verdicts); then the errata
  conventions (``docs/errata.md``) and the environment (versions, git commit, grid, seeds,
  storage).  No network access is needed to view it.
* ``docs/results.md``: the same summary in Markdown for a code host, figures linked from the
  committed ``figures/<paper>/<experiment>.png``.

This module is the entry point (``build_report``, the ``dprates report`` command) and keeps the
public names importable from here.  The work is split by concern:

* :mod:`empirical.report.data`: what was stored (rows, analyses, figures, audits, environment);
* :mod:`empirical.report.format`: verdict colours, MathML, anchors, numbers;
* :mod:`empirical.report.articles`: the per-bound and per-experiment articles, the check rows
  and the notebook representations (``analysis_repr_html``);
* :mod:`empirical.report.privacy`: the privacy and audit tables;
* :mod:`empirical.report.page`: the HTML page (``render_html``);
* :mod:`empirical.report.summary`: the Markdown summary (``render_markdown``);
* :mod:`empirical.report.markdown`: the small Markdown-to-HTML converter for the errata;
* :mod:`empirical.report.errata`: the errata as data (ids, status, kind, experiments);
* :mod:`empirical.report.doc_tables`: the documentation's generated tables.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from bounds.core import papers
from empirical.report.articles import analysis_repr_html  # noqa: F401  (public API)
from empirical.store.integrity import atomic_write_text
from empirical.report.articles import exponent_store
from empirical.report.data import (AuditView, ExperimentState, _audits,  # noqa: F401
                                   _draw_figures, _fresh_cached, collect, environment)
from empirical.report.format import bound_repr_latex, mathml  # noqa: F401  (public API)
from empirical.report.markdown import _e, markdown_to_html  # noqa: F401
from empirical.report.page import render_html
from empirical.report.privacy import _audit_cell  # noqa: F401  (tests call it through here)
from empirical.report.summary import render_markdown
from empirical.run.runner import results_dir

__all__ = ["ExperimentState", "collect", "environment", "build_report", "render_html", "render_markdown",
           "markdown_to_html", "mathml", "bound_repr_latex", "analysis_repr_html",
           "add_arguments", "run_cli", "main"]

# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

class NoStoredResults(ValueError):
    """``report`` found nothing stored to report on; the message names the command to run."""


#: Where the Markdown summary goes unless asked: beside the page, in build output.  The
#: committed ``docs/results.md`` is regenerated only on request (``--markdown docs/results.md``).
MARKDOWN_NAME = "results.md"


def build_report(paper: str | None = None, *, full: bool = False,
                 results: str | os.PathLike | None = None, out: str | os.PathLike = "report",
                 markdown: str | os.PathLike | None = MARKDOWN_NAME,
                 figures: str | os.PathLike = "figures",
                 experiment_ids: Sequence[str] | None = None) -> tuple[Path, Path | None]:
    """Write ``<out>/index.html`` (and the Markdown summary unless ``markdown`` is None: a bare
    file name goes into ``out``, a path is used as given) from stored results.  Raises
    :class:`NoStoredResults` (and writes nothing) when no selected experiment has a stored
    row."""
    if paper is not None and paper not in papers():
        raise ValueError(f"paper must be one of {papers()}, got {paper!r}")
    errors: dict[str, str] = {}
    states = collect(paper, full=full, results=results, experiment_ids=experiment_ids,
                     errors=errors)
    if not states:
        raise ValueError(f"no experiments registered for paper={paper!r}")
    if not any(st.rows for st in states):
        # full-grid-only experiments have no quick grid to report: their full grid's command
        only = not full and all(st.full_only_skipped for st in states)
        what = (" --paper " + paper if paper else "") + (" --full" if full or only else "") + (
            "".join(f" --experiment {i}" for i in experiment_ids or ()))
        where = "" if results is None else f" --results {results}"
        raise NoStoredResults(f"no stored results in {results_dir(results)}/ for the "
                              f"selected experiments; run `dprates verify{what}{where}` first"
                              + (", then `dprates report --full` (full grid only)" if only
                                 else ""))
    # figures and exponents are cached beside the results (empirical/report/cache.py)
    summaries = _draw_figures(states, results=results_dir(results), full=full)
    env = environment(full, results)
    html_path = Path(out) / "index.html"
    html_path.parent.mkdir(parents=True, exist_ok=True)
    audits = _audits(states, results)
    with exponent_store(results_dir(results) / "report-exponents.cache"):
        page = render_html(states, env, audits, summaries, errors, html_dir=html_path.parent)
    _write(html_path, page)
    md_path = None
    if markdown:
        md_path = Path(markdown)
        if md_path.parent == Path("."):
            md_path = html_path.parent / md_path
        md_path.parent.mkdir(parents=True, exist_ok=True)
        _write(md_path, render_markdown(states, env, md_path=md_path, figures_root=Path(figures),
                                        html_path=html_path, audits=audits))
    return html_path, md_path


def _write(path: Path, text: str) -> None:
    # mkstemp in the target directory then rename: a reader never sees half a page, and a
    # symlink planted at a temporary or the final name is never written through.
    atomic_write_text(path, text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``dprates report``."""
    # any registered paper, a --module's included: checked when the report is built, after the
    # command's --module imports (build_report)
    parser.add_argument("--paper", default=None, help="only this paper (default: all)")
    parser.add_argument("--experiment", action="append", default=None,
                        help="only this experiment (repeatable)")
    parser.add_argument("--full", action="store_true", help="report the full grids' results")
    parser.add_argument("--results", default=None,
                        help="results directory (default ./results or $DPRATES_RESULTS)")
    parser.add_argument("--out", default="report", help="output directory (default report/)")
    parser.add_argument("--markdown", default=MARKDOWN_NAME,
                        help="Markdown summary path (default OUT/results.md; "
                             "docs/results.md regenerates the committed summary; '' to skip)")
    parser.add_argument("--figures", default="figures",
                        help="committed figures the Markdown links to (default figures/)")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``dprates report``; 0 on success, 2 on a bad argument.  Verdicts do not change the
    status (``dprates verify`` is the gate; the report only shows them)."""
    try:
        html_path, md_path = build_report(
            getattr(args, "paper", None), full=getattr(args, "full", False),
            results=getattr(args, "results", None), out=getattr(args, "out", "report"),
            markdown=getattr(args, "markdown", MARKDOWN_NAME) or None,
            figures=getattr(args, "figures", "figures"),
            experiment_ids=getattr(args, "experiment", None))
    except NoStoredResults as exc:
        print(f"dprates report: {exc}", file=sys.stderr)
        return 1
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
