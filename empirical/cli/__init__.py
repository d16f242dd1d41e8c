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

Options for run/verify: --full (full grids; without it a full-grid-only experiment,
``Experiment.full_only``, is skipped and named on a ``full grid only:`` line), --workers N
(local processes), --scheduler ADDRESS (Dask cluster), --results DIR (default ./results or
$DPRATES_RESULTS), --figures DIR, --no-figures. ``--module MOD`` (any command, repeatable)
imports a researcher's own module that registers bounds and experiments (docs/extending.md).

Exit status: 0 all verified; 1 a failed check, privacy violation or error while running;
2 bad usage (every argument is validated before any work starts, with a one-line error naming
the argument, the allowed values and the closest match); 130 interrupted (Ctrl-C; every point
stored so far is kept and a rerun resumes).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings
from pathlib import Path

import bounds
from bounds.core import (LOAD_ERRORS, OptionalExtraMissing, OutsideConditionsWarning,
                         PaperLoadWarning, check_paper)
from empirical.core import experiment as registry
# The parser, the table and the work have modules of their own; their names stay importable here.
from empirical.cli.parser import UsageError, _parser  # noqa: F401
from empirical.cli.tables import format_table, summary_counts  # noqa: F401
from empirical.cli.work import _analyse, _Drawer, _run_and_analyse
from empirical.run.runner import (SweepError, SweepStats, check_scheduler, check_writable,
                                  load_rows, results_dir)

__all__ = ["main", "format_table", "UsageError", "FULL_ONLY_MARK"]

#: Marks a full-grid-only experiment (``Experiment.full_only``) in listings.
FULL_ONLY_MARK = "[full grid only]"


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
        print(f"{exp.id:<32} {exp.bound:<14} {exp.variable:<6} {exp.title}"
              + (f"  {FULL_ONLY_MARK}" if exp.full_only else ""))
    marked = registry.full_only_ids(exps)
    if marked:
        print(f"{FULL_ONLY_MARK}: judged on the full grid only, {len(marked)} (dprates "
              "verify --full --experiment ID)")
    return _validate_all(exps) if getattr(args, "validate", False) else 0


def _validate_all(exps) -> int:
    """Each declaration against its bounds on the quick and the full grid (what ``verify`` and
    ``run`` refuse before any point: a missing symbol, an acceptance interval too wide to
    fail); one line per refusal, exit 1 if any."""
    import warnings

    from empirical.core.validation import validate_experiment

    bad = 0
    for exp in exps:
        for full in (False, True):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    validate_experiment(exp, full=full)
            except ValueError as exc:
                bad += 1
                grid = "full" if full else "quick"
                print(f"dprates: {exp.id} ({grid} grid): {str(exc).splitlines()[0]}",
                      file=sys.stderr)
    marked = registry.full_only_ids(exps)
    print(f"validated {len(exps)} experiments on both grids: "
          + (f"{bad} refused" if bad else "every declaration matches its bounds")
          + (f" ({len(marked)} judged on the full grid only, their quick grids validated too)"
             if marked else ""))
    return 1 if bad else 0


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
    # A full-grid-only experiment's quick grid cannot decide: skipped, neither verified nor
    # failed, and named below.
    skipped = [] if args.full else registry.full_only_ids(exps)
    exps = [e for e in exps if e.runs_on(args.full)]
    # Declarations are validated against their bounds by the scheduler, on the workers, each
    # before its own experiment's points (a mis-declared one is an ERROR row, the rest run).
    stats = SweepStats()
    analyses, fitted, cached = ((), 0, 0) if not exps else _run_and_analyse(
        exps, args, stats, _figure_root(args) if drawing else None, paper)
    if analyses:
        print(format_table(analyses))
    failed = [a.experiment.id for a in analyses if not a.ok]
    print(f"\npoints: {stats}")
    print(f"analyses: {fitted} fitted, {cached} read from the cache")
    if args.cmd == "verify":
        print(f"{len(analyses) - len(failed)}/{len(analyses)} experiments verified"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
    if skipped:
        print(full_only_line(skipped))
    bad_figures = getattr(args, "figure_failures", [])
    if bad_figures:
        print(f"figures: {len(bad_figures)} could not be written (named above)")
    return 1 if failed or bad_figures else 0


def full_only_line(ids: list[str]) -> str:
    """The summary line naming the experiments a quick-grid run skipped (Experiment.full_only)."""
    return (f"full grid only: {len(ids)} not run ({', '.join(ids)}) "
            "(dprates verify --full --experiment ID)")


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
    skipped = [] if args.full else registry.full_only_ids(exps)
    for exp in exps:
        if exp.id in skipped:
            continue
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
    if skipped:
        print(full_only_line(skipped).replace("verify --full", "figures --full"))
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
        if getattr(args, "list", False):        # list the mutants, run none
            from empirical.privacy.mutants import mutants
            try:
                sel = mutants(getattr(args, "mutant", None) or None)
            except KeyError as exc:
                print(f"dprates: error: --mutant: {exc.args[0]}", file=sys.stderr)
                return 2
            for m in sel:
                print(f"{m.name:<44} {m.paper:<10} {m.bug_class or '-':<26} {m.description}")
            return 0
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
