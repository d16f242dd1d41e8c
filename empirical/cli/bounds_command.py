"""``dprates bounds compare ID ID`` and ``dprates bounds derive ID``: the symbolic
side inspected from the command line.  The logic is in :mod:`bounds.explain`; this module parses
arguments, chooses parameter values and prints.

Wiring (for empirical/cli/__init__.py; function names are stable)::

    from empirical import cli_bounds
    cli_bounds.add_subcommands(bsub)        # bsub: the subparsers of `dprates bounds`
    ...
    # in the `bounds` handler, before `list`/`show`:
    if getattr(args, "bounds_run", None) is not None:
        return args.bounds_run(args)       # 0 done, 2 bad argument (one line on stderr)

* ``add_subcommands(bounds_subparsers) -> None``: adds ``compare`` and ``derive``; each sets
  ``bounds_run`` (``run_compare`` / ``run_derive``) as a default on its namespace.
* ``run_compare(args) -> int`` and ``run_derive(args) -> int``: the handlers.
* ``main(argv) -> int``: stand-alone, ``python -m empirical.cli.bounds_command compare kl:thm5_best
  kl:thm5_worst``.

Parameter values for ``compare`` (printed with where each came from): ``--at k=v`` first; then
the values of an experiment that checks one of the two bounds (its fixed values and the
geometric middle of its quick grid, through the experiment's own ``bound_values``), so the
comparison is made where the suite measures; then :data:`DEFAULTS`.  A symbol still without a
value is a one-line error naming it.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Mapping, Sequence

import bounds
from bounds import explain

__all__ = ["DEFAULTS", "add_subcommands", "run_compare", "run_derive", "values_for", "main"]

#: Last-resort values of common symbols (stated in the output whenever used).
DEFAULTS: dict[str, float] = {"n": 1e4, "d": 10.0, "rho": 1.0, "epsilon": 1.0, "delta": 1e-6,
                              "beta": 0.1}


def add_subcommands(bounds_subparsers) -> None:
    """Add ``compare`` and ``derive`` to the subparsers of ``dprates bounds``."""
    c = bounds_subparsers.add_parser(
        "compare", help="which of two bounds is larger where, and their crossovers")
    c.add_argument("first", metavar="ID")
    c.add_argument("second", metavar="ID")
    c.add_argument("--at", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter value (repeatable, or comma-separated)")
    c.add_argument("--var", action="append", default=None, metavar="NAME",
                   help="compare along this variable (repeatable; default: the shared scale "
                        "variables)")
    c.add_argument("--range", action="append", default=[], dest="ranges", metavar="NAME=LO:HI",
                   help="where to look for crossovers along NAME (default: value/1e6 to ×1e6)")
    c.add_argument("--allow-mixed-privacy", action="store_true",
                   help="compare bounds under different privacy notions anyway")
    c.set_defaults(bounds_run=run_compare)
    d = bounds_subparsers.add_parser(
        "derive", help="how a corollary follows from its theorem, step by step")
    d.add_argument("id", nargs="?", help="the corollary's id (omit with --list)")
    d.add_argument("--from", dest="theorem", default=None, metavar="ID",
                   help="only the derivation from this theorem")
    d.add_argument("--label", default=None, help="only the derivation with this label")
    d.add_argument("--list", action="store_true", help="list derivable ids and exit")
    d.set_defaults(bounds_run=run_derive)


def _err(msg: str) -> int:
    print(f"dprates: error: {msg}", file=sys.stderr)
    return 2


def _parse_values(items: Sequence[str], what: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in (p for chunk in items for p in chunk.split(",") if p.strip()):
        name, sep, value = item.partition("=")
        try:
            v = float(value)
        except ValueError:
            v = float("nan")
        if not sep or not name.strip() or not math.isfinite(v):
            raise ValueError(f"argument {what}: expected NAME=VALUE with a finite number, "
                             f"got {item!r}")
        out[name.strip()] = v
    return out


def _parse_ranges(items: Sequence[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for item in items:
        name, _, rng = item.partition("=")
        lo, _, hi = rng.partition(":")
        try:
            pair = (float(lo), float(hi))
        except ValueError:
            pair = (0.0, 0.0)
        if not name or not 0 < pair[0] < pair[1] or not math.isfinite(pair[1]):
            raise ValueError(f"argument --range: expected NAME=LO:HI with 0 < LO < HI, got {item!r}")
        out[name] = pair
    return out


def _experiment_values(ids: Sequence[str]) -> list[tuple[str, dict[str, float]]]:
    """(experiment id, bound values at the geometric middle of its quick grid) for every
    experiment that checks one of ``ids``, in registry order."""
    from empirical.core import experiment as registry

    out = []
    for paper in sorted({i.partition(":")[0] for i in ids} & set(bounds.papers())):
        try:
            exps = registry.experiments(paper)
        except Exception:  # one paper's broken module must not stop a comparison
            continue
        for exp in exps:
            for chk in (c for c in exp.checks if c.bound in ids):
                grid = exp.grid(False)
                mid = math.exp(sum(math.log(v) for v in grid) / len(grid))
                try:
                    vals = dict((chk.values or exp.bound_values)(exp.point(mid)))
                except Exception:  # a values map that needs more than the point: skip it
                    continue
                vals.setdefault(exp.variable, mid)
                out.append((exp.id, {k: float(v) for k, v in vals.items()
                                     if isinstance(v, (int, float))}))
    return out


def values_for(first: bounds.Bound, second: bounds.Bound, given: Mapping[str, float]
               ) -> tuple[dict[str, float], list[str]]:
    """Every symbol of both bounds a value, and where each came from (see the module doc):
    experiments are taken greedily, the one supplying most missing symbols first.
    Raises ValueError naming the symbols left without one."""
    need = sorted(set(first.variables) | set(second.variables))
    unknown = sorted(set(given) - set(need))
    if unknown:
        raise ValueError(f"argument --at: {unknown} are symbols of neither {first.id} nor "
                         f"{second.id} (their symbols: {need})")
    at = {k: given[k] for k in need if k in given}
    sources = [f"--at: {', '.join(sorted(at))}"] if at else []
    # experiments are only imported when a value is missing (importing them takes seconds)
    candidates = _experiment_values([first.id, second.id]) if set(need) - set(at) else []
    while True:
        gain = [(sum(k not in at for k in need if k in vals), -i, eid, vals)
                for i, (eid, vals) in enumerate(candidates)]
        best = max(gain, default=None)
        if best is None or best[0] == 0:
            break
        _, _, eid, vals = best
        taken = [k for k in need if k not in at and k in vals]
        at.update({k: vals[k] for k in taken})
        sources.append(f"experiment {eid} (middle of its quick grid): {', '.join(taken)}")
    dflt = [k for k in need if k not in at and k in DEFAULTS]
    at.update({k: DEFAULTS[k] for k in dflt})
    if dflt:
        sources.append(f"defaults: {', '.join(dflt)}")
    missing = [k for k in need if k not in at]
    if missing:
        raise ValueError(f"argument --at: no value for {missing}; give them as --at NAME=VALUE")
    return at, sources


def run_compare(args: argparse.Namespace) -> int:
    """``dprates bounds compare ID ID``: 0 done, 2 on a bad argument."""
    try:
        first, second = bounds.get(args.first), bounds.get(args.second)
    except KeyError as exc:
        return _err(f"argument ID: {exc.args[0]}")
    try:
        given = _parse_values(args.at, "--at")
        ranges = _parse_ranges(args.ranges)
        at, sources = values_for(first, second, given)
        variables = args.var
        if variables:
            bad = [v for v in variables if v not in first.variables or v not in second.variables]
            if bad:
                raise ValueError(f"argument --var: {bad} not a symbol of both bounds (shared: "
                                 f"{[v for v in first.variables if v in second.variables]})")
        result = explain.compare_bounds(first, second, at, variables, ranges=ranges,
                                        allow_mixed_privacy=args.allow_mixed_privacy)
    except ValueError as exc:
        return _err(str(exc.args[0] if exc.args else exc))
    print(result.format())
    print("\nvalues from " + "; ".join(sources))
    print("(for upper bounds the smaller is the better guarantee; exponents are asymptotic, "
          "crossovers and ratios keep every log factor and constant of the bounds)")
    return 0


def run_derive(args: argparse.Namespace) -> int:
    """``dprates bounds derive ID``: 0 done (whatever the verdict, which is printed), 2 on a
    bad argument."""
    if args.list:
        for spec in explain.derivations():
            label = f" [{spec.label}]" if spec.label else ""
            print(f"{spec.corollary:<24} from {spec.theorem}{label}")
        return 0
    if not args.id:
        return _err("argument ID: give a corollary id (dprates bounds derive --list shows them)")
    try:
        reports = explain.derive(args.id, args.theorem, args.label)
    except KeyError as exc:
        return _err(f"argument ID: {exc.args[0]}")
    print("\n\n".join(r.format() for r in reports))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m empirical.cli.bounds_command",
                                     description="dprates bounds compare / derive")
    add_subcommands(parser.add_subparsers(dest="bcmd", required=True))
    args = parser.parse_args(argv)
    return int(args.bounds_run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
