"""The work behind ``dprates run``, ``verify`` and ``figures``: the experiments' points through
one queue, analysed as each completes, and their figures drawn as their analyses arrive."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from empirical.core import experiment as registry
from empirical.core.checks import Analysis
from empirical.run.runner import SweepStats, stderr_progress


def _analyse(exp, rows, full: bool = False, results=None) -> tuple[Analysis, bool]:
    """(analysis, read from the cache?); see empirical/store/analysis_cache.py."""
    from empirical.store.analysis_cache import cached_analyse

    return cached_analyse(exp, rows, full=full, results=results)


def _error(exp, msg: str) -> Analysis:
    return Analysis(exp, None, (), (), (), {}, error=msg)


def _progress_bar(total: int, cost: float, cached: int):
    from empirical.run.progress import Progress

    return Progress(total, total_cost=cost, cached=cached, stream=sys.stderr)


def _run_and_analyse(exps, args, stats: SweepStats, figures: Path | None = None,
                     paper: str | None = None) -> tuple[list[Analysis], int, int]:
    """Every valid experiment's points through one queue (empirical/run/scheduling.py), analysed
    on the workers as each completes; returns the analyses, how many were fitted now and how
    many were read from the cache.  Each experiment's figure, and each summary figure whose
    experiments are all analysed, is drawn (under ``figures``) as soon as its analyses arrive,
    while the workers go on, and handed to the report's figure cache."""
    from empirical.run.scheduling import keep_freed_pages, limit_threads, sweep_all

    # Every row is computed with one BLAS thread, whatever the executor: multi-threaded
    # OpenBLAS sums dot products in another order, which would change a row's last bits.
    limit_threads(1)
    keep_freed_pages()      # in-process points (--workers 1) reuse freed heap as workers do
    drawer = None if figures is None else _Drawer(figures, exps, paper, args.full, args.results)
    args.figure_failures = [] if drawer is None else drawer.failed
    outcomes = sweep_all(exps, full=args.full,
                         workers=args.workers, scheduler=args.scheduler, results=args.results,
                         say=stderr_progress, progress=_progress_bar, analyse=True,
                         on_analysis=None if drawer is None else drawer.outcome,
                         figures=drawer is not None)
    out, fitted, cached = [], 0, 0
    for exp in exps:
        o = outcomes[exp.id]
        if o.invalid:
            out.append(_error(exp, f"not run: {o.invalid}"))
            continue
        if o.error is not None:     # this experiment's code failed; the others still ran
            out.append(_error(exp, str(o.error)))
            continue
        stats += o.stats
        cached += o.analysis_cached
        fitted += not o.analysis_cached
        out.append(o.analysis)
    if drawer is not None:
        drawer.finish(out)
    return out, fitted, cached


class _Drawer:
    """Figures of a run, written as analyses arrive (the workers go on meanwhile): each
    experiment's, then each summary's once all its experiments are in, so that nothing but the
    last analyses' figures is left for after the last point.  An experiment's figure is drawn by
    the worker that analysed it (``Outcome.figure``); one whose analysis came from the cache is
    read from the report's figure cache when its analysis and the drawing code are unchanged,
    else drawn here.  Each PNG goes into that cache (``report_data.cached_figure``,
    ``remember_summary``): a report built afterwards redraws none."""

    def __init__(self, root: Path, exps, paper: str | None, full: bool, results) -> None:
        self.root, self.full, self.results = root, full, results
        #: figures that could not be written, one line each (already printed on stderr)
        self.failed: list[str] = []
        self.analyses: dict[str, Analysis] = {}
        self.rows: dict[str, list] = {}
        selected = {e.id for e in exps}
        # The summaries `_draw` would draw at the end: every experiment of it selected.
        self.waiting = [s for s in registry.summaries(paper)
                        if all(e in selected for e in s.experiments)]

    def outcome(self, o) -> None:
        a = o.analysis
        self.analyses[a.experiment.id] = a
        if o.rows is not None:
            self.rows[a.experiment.id] = list(o.rows)
        if a.fit is not None:
            self._guard(a.experiment.id, lambda: self.write_figure(a, o.figure))
        self._summaries()

    def _guard(self, what: str, draw: Callable[[], object]) -> None:
        """Run ``draw``; a figure that cannot be drawn or written is one line naming it (and
        its path), the verdicts are still printed and the exit status says so."""
        try:
            draw()
        except OSError as exc:
            where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
            line = f"could not write the figure of {what}{where}: {exc.strerror or exc}"
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            line = f"could not draw the figure of {what}: {type(exc).__name__}: {first}"
        else:
            return
        self.failed.append(line)
        print(f"dprates: {line}", file=sys.stderr)

    def write_figure(self, a: Analysis, png: bytes | None) -> None:
        from empirical.store.figures import figure_path, render_analysis, write_png
        from empirical.report.data import cached_figure

        def draw() -> bytes:
            return png if png is not None else render_analysis(a)
        rows = self.rows.get(a.experiment.id)
        data = draw() if rows is None else cached_figure(a.experiment, rows, draw,
                                                         full=self.full, results=self.results)
        write_png(data, figure_path(a, self.root))

    def _summaries(self) -> None:
        ready = [s for s in self.waiting if all(e in self.analyses for e in s.experiments)]
        for s in ready:
            self.waiting.remove(s)
            self._guard(s.id, lambda s=s: _draw_summary(
                s, [self.analyses[e] for e in s.experiments], self.root, self._remember_summary))

    def finish(self, analyses: list[Analysis]) -> None:
        """The summaries still waiting, drawn with the error analyses of failed experiments."""
        for a in analyses:
            self.analyses.setdefault(a.experiment.id, a)
        self._summaries()

    def _remember_summary(self, s, path: Path) -> None:
        if not all(e in self.rows for e in s.experiments):
            return
        from empirical.report.data import remember_summary

        remember_summary(s, [(registry.get(e), self.rows[e]) for e in s.experiments],
                         Path(path).read_bytes(), full=self.full, results=self.results)


def _draw_summary(s, analyses: list[Analysis], root: Path, done=None) -> None:
    from empirical.store.figures import figure_style

    with figure_style():
        path = s.plot(analyses, root)
    if done is not None and path is not None:
        done(s, path)
