"""The ``dprates`` command.

  dprates bounds list [PAPER]        registered bounds
  dprates bounds show ID             expression, LaTeX, exponents, assumptions, source
  dprates experiments [PAPER]        registered experiments
  dprates run EXPERIMENT... [opts]   run sweeps (results/ only)
  dprates verify [--paper P] [opts]  run + fit + check every experiment; exit 1 on a failed check
  dprates figures [--paper P]        redraw figures from stored results

Options for run/verify: --full (full grids), --workers N (local processes), --scheduler ADDRESS
(Dask cluster), --results DIR (default ./results or $DPRATES_RESULTS), --figures DIR.
"""
from __future__ import annotations

import argparse
import sys

import bounds
from empirical import experiment as registry
from empirical.checks import Analysis, analyse
from empirical.runner import load_rows, stderr_progress, sweep

__all__ = ["main", "format_table"]


def _add_run_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--full", action="store_true", help="use the full grids (slow)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://h:8786")
    p.add_argument("--results", default=None, help="results directory (default ./results)")
    p.add_argument("--figures", default="figures", help="figures directory (default ./figures)")
    p.add_argument("--no-figures", action="store_true", help="do not draw figures")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dprates", description="Theory-to-experiment verification "
                                "of convergence rates of private optimizers.")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bounds", help="inspect symbolic bounds")
    bsub = b.add_subparsers(dest="bcmd", required=True)
    bl = bsub.add_parser("list", help="list bound ids")
    bl.add_argument("paper", nargs="?", choices=bounds.PAPERS)
    bs = bsub.add_parser("show", help="show one bound")
    bs.add_argument("id")
    e = sub.add_parser("experiments", help="list experiments")
    e.add_argument("paper", nargs="?", choices=bounds.PAPERS)
    r = sub.add_parser("run", help="run experiments' sweeps")
    r.add_argument("experiments", nargs="+")
    _add_run_opts(r)
    v = sub.add_parser("verify", help="run, fit and check all experiments")
    v.add_argument("--paper", choices=bounds.PAPERS)
    v.add_argument("--experiment", action="append", default=None, help="only this experiment")
    _add_run_opts(v)
    f = sub.add_parser("figures", help="redraw figures from stored results")
    f.add_argument("--paper", choices=bounds.PAPERS)
    f.add_argument("--full", action="store_true")
    f.add_argument("--results", default=None)
    f.add_argument("--figures", default="figures")
    return p


def format_table(analyses: list[Analysis]) -> str:
    head = ("experiment", "bound", "var", "kind", "local", "asymptotic", "observed [95% CI]",
            "tol", "verdict")
    lines = []
    for a in analyses:
        if a.error:
            lines.append((a.experiment.id, a.experiment.bound, a.experiment.variable, "-", "-",
                          "-", "-", "-", f"ERROR: {a.error}"))
        if a.privacy_error:
            lines.append((a.experiment.id, "privacy", "-", "-", "-", "-", "-", "-",
                          "PRIVACY FAIL"))
        for r in a.results:
            lines.append((r.experiment, r.bound, r.variable, r.kind + ("*" if r.expect == "finding" else ""),
                          f"{r.local:+.3f}", "n/a" if r.asymptotic != r.asymptotic else f"{r.asymptotic:+.3f}",
                          str(r.observed),
                          f"{r.tolerance:g}", r.verdict))
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
        if a.privacy_error:
            notes.append(f"  {a.experiment.id}: PRIVACY FAIL: {a.privacy_error}")
    if notes:
        out += ["", "Notes:", *notes]
    out += ["", "kind: two-sided = tight on this instance; one-sided = upper bound only; "
            "reject = competing rate that the data must rule out; * = recorded finding "
            "(docs/errata.md)"]
    return "\n".join(out)


def _selected(args) -> list:
    if getattr(args, "experiment", None):
        return [registry.get(i) for i in args.experiment]
    return registry.experiments(getattr(args, "paper", None))


def _draw(analyses: list[Analysis], root: str, paper: str | None) -> None:
    from empirical.figures import plot_analysis

    for a in analyses:
        if a.fit is not None:
            plot_analysis(a, root)
    by_id = {a.experiment.id: a for a in analyses}
    for s in registry.summaries(paper):
        if all(e in by_id for e in s.experiments):
            s.plot([by_id[e] for e in s.experiments], root)


def _run_and_analyse(exps, args) -> list[Analysis]:
    out = []
    for exp in exps:
        rows = sweep(exp, full=args.full, workers=args.workers, scheduler=args.scheduler,
                     results=args.results, progress=stderr_progress)
        out.append(analyse(exp, rows))
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd == "bounds":
        if args.bcmd == "list":
            for i in bounds.ids(args.paper):
                b = bounds.get(i)
                print(f"{i:<24} {b.kind:<10} {b.source}")
            return 0
        try:
            print(bounds.get(args.id).describe())
        except KeyError as exc:
            print(exc.args[0], file=sys.stderr)
            return 2
        return 0
    if args.cmd == "experiments":
        for exp in registry.experiments(args.paper):
            print(f"{exp.id:<32} {exp.bound:<14} {exp.variable:<6} {exp.title}")
        return 0
    if args.cmd == "run":
        try:
            exps = [registry.get(i) for i in args.experiments]
        except KeyError as exc:
            print(exc.args[0], file=sys.stderr)
            return 2
        analyses = _run_and_analyse(exps, args)
        if not args.no_figures:
            _draw(analyses, args.figures, None)
        print(format_table(analyses))
        return 0 if all(a.ok for a in analyses) else 1
    if args.cmd == "verify":
        analyses = _run_and_analyse(_selected(args), args)
        if not args.no_figures:
            _draw(analyses, args.figures, args.paper)
        print(format_table(analyses))
        failed = [a.experiment.id for a in analyses if not a.ok]
        print(f"\n{len(analyses) - len(failed)}/{len(analyses)} experiments verified"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
        return 1 if failed else 0
    if args.cmd == "figures":
        analyses = []
        for exp in registry.experiments(args.paper):
            rows, missing = load_rows(exp, full=args.full, results=args.results)
            if missing:
                print(f"{exp.id}: {len(missing)} grid points not run yet; skipped", file=sys.stderr)
                continue
            analyses.append(analyse(exp, rows))
        _draw(analyses, args.figures, args.paper)
        print(f"drew figures for {len(analyses)} experiments under {args.figures}/")
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
