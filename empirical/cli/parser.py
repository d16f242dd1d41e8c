"""The ``dprates`` command line: its parser (every subcommand and option) and the one-line
usage error (:class:`UsageError`, exit status 2)."""
from __future__ import annotations

import argparse
import importlib
import importlib.util


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
    p.add_argument("--full", action="store_true",
                   help="use the full grids (slow); without it, full-grid-only experiments are "
                        "skipped and named")
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
    e.add_argument("--validate", action="store_true",
                   help="also check each declaration against its bounds on both grids, as "
                        "verify does before any point (builds the problems: about a minute)")
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
