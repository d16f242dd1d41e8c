"""The ``dprates`` command.

  dprates bounds list [PAPER]        registered bounds
  dprates bounds show ID             expression, LaTeX, exponents, assumptions, source
  dprates bounds compare ID ID       which dominates where, and the crossovers
  dprates bounds derive ID           how a corollary follows from its theorem, step by step
  dprates experiments [PAPER]        registered experiments
  dprates run EXPERIMENT... [opts]   run sweeps, print their checks, draw their figures
  dprates verify [--paper P] [opts]  run + fit + check every experiment, draw figures
  dprates figures [--paper P]        redraw figures from stored results
  dprates audit ...                  privacy audits (when empirical/privacy/audit.py is present)
  dprates report [--paper P]         report/index.html and docs/results.md from stored results

Options for run/verify: --full (full grids), --workers N (local processes), --scheduler ADDRESS
(Dask cluster), --results DIR (default ./results or $DPRATES_RESULTS), --figures DIR,
--no-figures.  ``--module MOD`` (any command, repeatable) imports a researcher's own module that
registers bounds and experiments (docs/extending.md).

Exit status: 0 all verified; 1 a failed check, privacy violation or error while running;
2 bad usage (every argument is validated before any work starts, with a one-line error naming
the argument, the allowed values and the closest match); 130 interrupted (Ctrl-C; every point
stored so far is kept and a rerun resumes).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from typing import Callable

import bounds
from bounds.core import (LOAD_ERRORS, OptionalExtraMissing, OutsideConditionsWarning,
                         PaperLoadWarning, check_paper)
from empirical.core import experiment as registry
from empirical.core.checks import NOT_REPRODUCED, Analysis
from empirical.run.runner import (SweepError, SweepStats, check_scheduler, check_writable,
                              load_rows, results_dir, stderr_progress)

__all__ = ["main", "format_table", "UsageError"]

_AUDIT = "empirical.privacy.audit"


class UsageError(Exception):
    """A bad argument: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line (no usage dump) and does not exit the interpreter."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def _workers(text: str) -> int:
    from empirical.run.runner import MAX_WORKERS

    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_WORKERS}], "
                                         f"got {text!r}")
    return n


def _scheduler(text: str) -> str:
    from empirical.run.runner import parse_scheduler

    try:
        return parse_scheduler(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_module_opt(p: argparse.ArgumentParser, top: bool = False) -> None:
    # On the subcommands too, so that `dprates verify --module x` works; SUPPRESS keeps a
    # subcommand from overwriting the top-level value with its default.
    p.add_argument("--module", action="append", dest="modules", metavar="MODULE",
                   default=None if top else argparse.SUPPRESS,
                   help="import this module first (your own bounds/experiments); repeatable")


def _add_run_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--full", action="store_true", help="use the full grids (slow)")
    p.add_argument("--workers", type=_workers, default=None,
                   help="local worker processes (default: this machine's cores)")
    p.add_argument("--scheduler", type=_scheduler, default=None,
                   help="Dask scheduler address, e.g. tcp://h:8786")
    p.add_argument("--results", default=None, help="results directory (default ./results)")
    p.add_argument("--figures", default="figures",
                   help="figures directory (default ./figures; full grids under <DIR>/full)")
    p.add_argument("--no-figures", action="store_true", help="do not draw figures")
    _add_module_opt(p)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dprates", description="Theory-to-experiment verification "
                "of convergence rates of private optimizers.")
    _add_module_opt(p, top=True)
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    b = sub.add_parser("bounds", help="inspect symbolic bounds")
    bsub = b.add_subparsers(dest="bcmd", required=True, parser_class=_Parser)
    bl = bsub.add_parser("list", help="list bound ids")
    bl.add_argument("paper", nargs="?")
    _add_module_opt(bl)
    bs = bsub.add_parser("show", help="show one bound")
    bs.add_argument("id")
    _add_module_opt(bs)
    _add_bounds_extras(bsub)
    pp = sub.add_parser("papers", help="list papers: key, title, citation, link, errata page")
    pp.add_argument("paper", nargs="?")
    _add_module_opt(pp)
    e = sub.add_parser("experiments", help="list experiments")
    e.add_argument("paper", nargs="?")
    _add_module_opt(e)
    c = sub.add_parser("coverage", help="each rate statement × each variable: swept by which "
                       "experiments, or why not")
    c.add_argument("paper", nargs="?")
    c.add_argument("--results", default=None,
                   help="stored results to take verdicts from (default: none; no sweep is run)")
    c.add_argument("--full", action="store_true", help="verdicts of the full grids")
    _add_module_opt(c)
    r = sub.add_parser("run", help="run experiments' sweeps, print checks, draw figures")
    r.add_argument("experiments", nargs="+")
    _add_run_opts(r)
    v = sub.add_parser("verify", help="run, fit and check all experiments, draw figures")
    v.add_argument("--paper")
    v.add_argument("--experiment", action="append", default=None, help="only this experiment")
    _add_run_opts(v)
    f = sub.add_parser("figures", help="redraw figures from stored results")
    f.add_argument("--paper")
    f.add_argument("--full", action="store_true")
    f.add_argument("--results", default=None)
    f.add_argument("--figures", default="figures")
    _add_module_opt(f)
    _add_audit(sub)
    rp = sub.add_parser("report", help="write report/index.html and docs/results.md from "
                        "stored results (computes nothing)")
    from empirical import report as report_cmd
    report_cmd.add_arguments(rp)
    _add_module_opt(rp)
    return p


def _add_bounds_extras(bsub) -> None:
    """``dprates bounds compare ID ID`` and ``bounds derive ID`` (empirical/cli/bounds_command.py)."""
    try:
        from empirical.cli import bounds_command as cli_bounds
    except ImportError:          # a checkout without it keeps `bounds list` and `bounds show`
        return
    before = set(bsub.choices)
    cli_bounds.add_subcommands(bsub)
    for name in set(bsub.choices) - before:
        _add_module_opt(bsub.choices[name])


def _add_audit(sub) -> None:
    """``dprates audit``: forwarded to empirical/privacy/audit.py when that module exists."""
    a = sub.add_parser("audit", help="privacy audits (empirical/privacy/audit.py)", add_help=True)
    try:
        present = importlib.util.find_spec(_AUDIT) is not None
    except (ImportError, ValueError):
        present = False
    if not present:
        a.set_defaults(audit_unavailable="empirical/privacy/audit.py is not installed in this checkout")
        return
    try:
        mod = importlib.import_module(_AUDIT)
        mod.add_arguments(a)
    except Exception as exc:  # a module under development must not break the other commands
        a.set_defaults(audit_unavailable=f"empirical/privacy/audit.py failed to load: "
                                         f"{type(exc).__name__}: {exc}")
        return
    a.set_defaults(audit_run=mod.run_cli, mutants_run=_mutants_run)


def _mutants_run(args) -> int:
    """``dprates audit --mutants``: the mutation self-test (empirical/privacy/mutants.py)."""
    from empirical.privacy import mutants

    return mutants.run_cli(args)


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
            "(docs/errata/<paper>.md), FINDING (slope | level | slope+level) = what it is a "
            "finding of, the other part still enforced.  A = acceptance interval; PASS needs the whole 95% CI "
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


# --------------------------------------------------------------------------------------------
# Validation: every argument, before any work
# --------------------------------------------------------------------------------------------

def _import_modules(args) -> None:
    """Import every ``--module``; ``args.module_papers`` is then the papers they declare (new
    keys, and keys whose declared modules lie in one of them), which a command given no
    ``--paper`` acts on alone."""
    names = getattr(args, "modules", None) or ()
    before = set(bounds.papers()) if names else set()
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise UsageError(f"argument --module: cannot import {name!r}: "
                             f"{type(exc).__name__}: {exc}") from None
    args.module_papers = [k for k in bounds.papers() if names and (k not in before or any(
        m == n or m.startswith(n + ".") or n.startswith(m + ".")
        for m in bounds.core.paper_modules(k) for n in names))]


def _paper(args, attr: str = "paper", flag: str = "--paper") -> str | None:
    key = getattr(args, attr, None)
    if key is None:
        return None
    try:
        return check_paper(key, what=f"argument {flag}: paper")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _lookup(kind: str, get, ident: str):
    try:
        return get(ident)
    except KeyError as exc:
        raise UsageError(f"argument {kind}: {exc.args[0]}") from None


def _selected(args) -> list:
    if getattr(args, "experiment", None):
        return [_lookup("--experiment", registry.get, i) for i in args.experiment]
    if getattr(args, "paper", None) is None and getattr(args, "module_papers", None):
        return [e for key in args.module_papers for e in registry.experiments(key)]
    exps = registry.experiments(getattr(args, "paper", None))
    if not exps:
        raise UsageError(f"argument --paper: paper {args.paper!r} has no experiments registered "
                         "yet" if args.paper else "no experiments are registered")
    return exps


def _figure_root(args) -> Path:
    # Quick and full figures never overwrite each other: full ones live under <figures>/full.
    root = Path(args.figures)
    return root / "full" if args.full else root


def _check_dirs(args, drawing: bool) -> None:
    try:
        check_writable(results_dir(args.results))
    except SweepError as exc:
        raise UsageError(f"argument --results: {exc}") from None
    if drawing:
        _check_figures_dir(args)


def _check_figures_dir(args) -> None:
    try:
        check_writable(_figure_root(args), what="figures directory")
    except SweepError as exc:
        raise UsageError(f"argument --figures: {exc}") from None


def _check_scheduler(args) -> None:
    if getattr(args, "scheduler", None):
        try:
            check_scheduler(args.scheduler)
        except SweepError as exc:
            raise UsageError(f"argument --scheduler: {exc}") from None


# --------------------------------------------------------------------------------------------
# Work
# --------------------------------------------------------------------------------------------

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


def _cmd_bounds(args) -> int:
    if getattr(args, "bounds_run", None) is not None:      # compare, derive
        return int(args.bounds_run(args) or 0)
    if args.bcmd == "show":
        print(_lookup("ID", bounds.get, args.id).describe())
        return 0
    paper = _paper(args, flag="PAPER")
    found = ([i for key in args.module_papers for i in bounds.ids(key)]
             if paper is None and getattr(args, "module_papers", None) else bounds.ids(paper))
    if not found:
        print(f"dprates: no bounds registered for paper {paper!r} yet", file=sys.stderr)
        return 1
    for i in found:
        b = bounds.get(i)
        print(f"{i:<24} {b.kind:<10} {b.source}")
    return 0


def _cmd_papers(args) -> int:
    paper = _paper(args, flag="PAPER")
    keys = [paper] if paper else (getattr(args, "module_papers", None) or list(bounds.papers()))
    for key in keys:
        info = bounds.paper_info(key)
        title = info.title or _paper_title(key)
        print(f"{key}: {title}")
        for label, text in (("citation", info.citation), ("url", info.url),
                            ("errata", _shown_path(info.errata))):
            if text:
                print(f"  {label}: {text}")
    return 0


def _shown_path(path: str) -> str:
    """``path`` relative to the working directory when it lies under it (a checkout's
    docs/errata/<paper>.md), else as given."""
    if not path:
        return path
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def _paper_title(key: str) -> str:
    from empirical.report.format import _paper_title as title

    return title(key)


def _cmd_experiments(args) -> int:
    paper = _paper(args, flag="PAPER")
    exps = (_selected(args) if paper is None and getattr(args, "module_papers", None)
            else registry.experiments(paper))
    if not exps:
        print(f"dprates: no experiments registered for paper {paper!r} yet", file=sys.stderr)
        return 1
    for exp in exps:
        print(f"{exp.id:<32} {exp.bound:<14} {exp.variable:<6} {exp.title}")
    return 0


def _cmd_coverage(args) -> int:
    from empirical.core import coverage

    paper = _paper(args, flag="PAPER")
    analyses = None
    if args.results is not None:
        from empirical.report.data import collect

        states = collect(paper, full=args.full, results=args.results)
        analyses = {st.experiment.id: st.analysis for st in states if st.analysis is not None}
    cs = coverage.cells(paper, analyses)
    if not cs:
        print(f"dprates: no rate statements registered for paper {paper!r}", file=sys.stderr)
        return 1
    print(coverage.markdown(cs), end="")
    return 0


def _cmd_run_or_verify(args) -> int:
    if args.cmd == "run":
        exps = [_lookup("EXPERIMENT", registry.get, i) for i in args.experiments]
        paper = None
    else:
        paper = _paper(args)
        exps = _selected(args)
    drawing = not args.no_figures
    _check_dirs(args, drawing)
    _check_scheduler(args)
    # Declarations are validated against their bounds by the scheduler, on the workers, each
    # before its own experiment's points (a mis-declared one is an ERROR row, the rest run).
    stats = SweepStats()
    analyses, fitted, cached = _run_and_analyse(exps, args, stats,
                                                _figure_root(args) if drawing else None, paper)
    print(format_table(analyses))
    failed = [a.experiment.id for a in analyses if not a.ok]
    print(f"\npoints: {stats}")
    print(f"analyses: {fitted} fitted, {cached} read from the cache")
    if args.cmd == "verify":
        print(f"{len(analyses) - len(failed)}/{len(analyses)} experiments verified"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
    bad_figures = getattr(args, "figure_failures", [])
    if bad_figures:
        print(f"figures: {len(bad_figures)} could not be written (named above)")
    return 1 if failed or bad_figures else 0


def _cmd_figures(args) -> int:
    paper = _paper(args)
    exps = (_selected(args) if paper is None and getattr(args, "module_papers", None)
            else registry.experiments(paper))
    _check_figures_dir(args)
    root = _figure_root(args)
    # The same drawer as verify's: each experiment's figure through the report's figure cache
    # (unchanged analysis and drawing code: the stored PNG, not a redraw), summaries as their
    # experiments arrive.
    from empirical.run.scheduling import Outcome

    drawer = _Drawer(root, exps, paper, args.full, args.results)
    for exp in exps:
        rows, missing = load_rows(exp, full=args.full, results=args.results)
        if missing:
            print(f"{exp.id}: {len(missing)} grid points not stored (or stale); skipped",
                  file=sys.stderr)
            continue
        drawer.outcome(Outcome(exp, rows=rows, analysis=_analyse(exp, rows, args.full,
                                                                 args.results)[0]))
    drawer.finish([])
    analyses = drawer.analyses
    print(f"drew figures for {len(analyses)} experiments under {root}/"
          + (f"; {len(drawer.failed)} could not be written (named above)" if drawer.failed
             else ""))
    return 1 if drawer.failed else 0


def _load_failures() -> list[str]:
    """Papers skipped because their module failed to import, one line each (on stderr).  A
    missing optional extra (:class:`bounds.core.OptionalExtraMissing`) is printed as a note and
    not returned: it is not a failure of the papers that did load."""
    lines = []
    for (paper, package), why in sorted(LOAD_ERRORS.items()):
        if why.startswith(f"{OptionalExtraMissing.__name__}:"):
            print(f"dprates: note: paper {paper!r} skipped: {why.partition(': ')[2]}",
                  file=sys.stderr)
            continue
        lines.append(f"paper {paper!r}: {package}/ module failed to import ({why}); skipped")
    for line in lines:
        print(f"dprates: {line}", file=sys.stderr)
    return lines


def _cmd_report(args) -> int:
    from empirical import report as report_cmd

    return report_cmd.run_cli(args)


def _cmd_audit(args) -> int:
    if getattr(args, "audit_run", None) is None:
        print(f"dprates: error: audit: {getattr(args, 'audit_unavailable', 'unavailable')}",
              file=sys.stderr)
        return 2
    if getattr(args, "mutants", False):
        return int(args.mutants_run(args) or 0)
    return int(args.audit_run(args) or 0)


_COMMANDS = {"bounds": _cmd_bounds, "papers": _cmd_papers, "experiments": _cmd_experiments,
             "coverage": _cmd_coverage,
             "run": _cmd_run_or_verify, "verify": _cmd_run_or_verify, "figures": _cmd_figures,
             "audit": _cmd_audit, "report": _cmd_report}


def _dispatch(argv: list[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _import_modules(args)
    if len(args.module_papers) == 1 and getattr(args, "paper", "") is None:
        args.paper = args.module_papers[0]     # --module alone: that module's paper only
    elif (args.module_papers and args.cmd == "report" and args.paper is None
          and not args.experiment):
        args.experiment = [i for key in args.module_papers for i in registry.ids(key)]
    LOAD_ERRORS.clear()
    with warnings.catch_warnings():
        # A paper whose module is broken is reported once, below, not as a Python warning; and
        # the verdicts report points outside a theorem's conditions (dropped, with the reason).
        warnings.simplefilter("ignore", PaperLoadWarning)
        warnings.simplefilter("ignore", OutsideConditionsWarning)
        code = _COMMANDS[args.cmd](args)
    if _load_failures() and args.cmd in ("verify", "bounds", "experiments", "figures", "coverage"):
        return max(code, 1)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status (see the module docstring)."""
    try:
        return _dispatch(argv)
    except UsageError as exc:
        print(f"dprates: error: {exc}", file=sys.stderr)
        return 2
    except SweepError as exc:
        print(f"dprates: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dprates: interrupted; every point stored so far is kept, rerun to resume",
              file=sys.stderr)
        return 130
    except SystemExit as exc:       # --help
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:        # anything else: one line, the traceback on request
        if os.environ.get("DPRATES_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"dprates: error: {type(exc).__name__}: {first} (DPRATES_DEBUG=1 shows the "
              "traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
