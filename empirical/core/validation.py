"""Validation of an experiment's declaration against its bounds before any point is computed
(:func:`validate_experiment`): every bound exists and gets its symbols at the grid's ends, a
slope check's bound depends on the swept variable, and no check's acceptance interval is too
wide for a plausible bug to fail it.  Apart from :mod:`empirical.core.experiment` because the
width test needs the slope machinery of :mod:`empirical.core.checks`, which imports the
declarations."""
from __future__ import annotations

from typing import Mapping

from empirical.core.experiment import _VALIDATED, Check, Experiment, is_validated

__all__ = ["validate_experiment"]


def _refuse_wide(exp: Experiment, check: Check, grid: tuple, values: list, where: str) -> None:
    """ValueError when ``check``'s acceptance interval is too wide for any plausible bug to fail
    it, judged from the bound at the grid's end points (empirical.core.checks.declared_too_wide;
    the analysis judges it again on the kept points)."""
    import math
    import warnings

    import bounds
    from bounds.core import OutsideConditionsWarning
    from empirical.core.checks import declared_too_wide

    b = bounds.get(check.bound)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideConditionsWarning)
            bvals = [float(b(check_conditions=False, **vals)) for vals in values]
    except (ValueError, TypeError):
        return                  # undefined at an end: the analysis drops it and judges there
    if not all(math.isfinite(v) and v > 0 for v in bvals) or grid[0] == grid[-1]:
        return
    why = declared_too_wide(exp, check, grid, bvals)
    if why:
        raise ValueError(f"{where}: {why}")


def validate_experiment(exp: Experiment, *, full: bool = False) -> None:
    """Check ``exp`` against its bounds before any point is computed; ValueError naming the
    experiment, the check and what is wrong.

    Every check's bound must exist; at the grid's two end points ``bound_values`` (or the
    check's ``values``) must return a mapping giving each of the bound's symbols a value; a
    check that is not ``reject`` must be on a bound that depends on the swept variable (else its
    slope is undefined).  Only the end points, because some ``bound_values`` build the problem
    to read its constants (seconds at large n), and a symbol left out is left out everywhere.
    Points where a bound is undefined or outside its conditions are not errors: the analysis
    drops them and says so.
    """
    import math
    import warnings

    import bounds
    from bounds.core import OutsideConditionsWarning

    if is_validated(exp, full=full):
        return
    grid = exp.grid(full)
    grid = (grid[0], grid[-1])
    for i, check in enumerate(exp.checks):
        where = f"{exp.id}: check {i} ({check.kind} on {check.bound!r})"
        try:
            b = bounds.get(check.bound)
        except KeyError as exc:
            raise ValueError(f"{where}: {exc.args[0]}") from None
        fn = check.values or exp.bound_values
        values = []
        for v in grid:
            try:
                vals = fn(exp.point(v))
            except Exception as exc:
                raise ValueError(f"{where}: {'values' if check.values else 'bound_values'} "
                                 f"raised at {exp.variable}={v:g}: {type(exc).__name__}: {exc}"
                                 ) from None
            if not isinstance(vals, Mapping):
                raise ValueError(f"{where}: bound_values must return a mapping of symbol -> "
                                 f"value, got {type(vals).__name__}")
            missing = sorted(set(b.variables) - set(vals))
            if missing:
                raise ValueError(f"{where}: bound_values leaves out {missing} at "
                                 f"{exp.variable}={v:g} ({b.id} needs {list(b.variables)}; "
                                 f"given {sorted(vals)})")
            values.append(vals)
        if check.kind != "reject" and exp.variable in b.variables and not check.wide_reason:
            _refuse_wide(exp, check, grid, values, where)
        if check.kind == "reject" or exp.variable in b.variables:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideConditionsWarning)
            logs = set()
            for vals in values:
                try:
                    logs.add(round(math.log(b(check_conditions=False, **vals)), 12))
                except (ValueError, TypeError):
                    continue
        if len(logs) > 1:
            raise ValueError(f"{where}: {b.id} has no symbol {exp.variable!r} (its symbols: "
                             f"{list(b.variables)}), so its slope in {exp.variable} is undefined")
    _VALIDATED[(id(exp), full)] = exp
