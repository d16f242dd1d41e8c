"""Recomputing calibrated level bands on held-out seeds (empirical/core/calibration.py).

:func:`calibrate` runs an experiment's grid with generators from the held-out stream
``SeedSequence([h(e), h(p), r], spawn_key=HELD_OUT_KEY)`` (never the judged seeds), divides the
metric by each check's bound and returns one :class:`Calibration` per check asked for;
``python -m empirical.run.calibration --experiment ID ...`` writes them to the paper's data file
(``calibration.json`` beside its declaring module), which the declarations read.  The same
seeds give the same records.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Sequence

import numpy as np

import bounds
from empirical.core import experiment as registry
from empirical.core.calibration import HELD_OUT_KEY, Calibration, band_from_ratios
from empirical.core.experiment import Experiment
from empirical.run.runner import run_experiment_code
from empirical.store.calibration import data_file, write_calibrations
from empirical.store.rows import _digest

__all__ = ["held_out_generators", "calibrate", "main"]


def held_out_generators(exp_id: str, point: dict, seeds: int) -> list[np.random.Generator]:
    """One generator per calibration repetition: the judged seeds' entropy under the held-out
    spawn key, so the streams never coincide with the judged ones or their spawned children."""
    e, p = _digest(exp_id), _digest(point)
    return [np.random.Generator(np.random.PCG64(
        np.random.SeedSequence([e, p, r], spawn_key=HELD_OUT_KEY))) for r in range(seeds)]


def _usable(exp: Experiment, point: dict, metric: np.ndarray) -> bool:
    """Whether analysis would keep this point (as empirical.core.checks.analyse decides)."""
    if not np.all(np.isfinite(metric)) or np.any(metric <= 0):
        return False
    primary = bounds.get(exp.bound)
    vals = exp.bound_values(point)
    if primary.conditions and not primary.applies(**vals):
        return False
    try:
        bval = primary(**vals)
    except ValueError:
        return False
    return bval > 0 and (exp.vacuous is None or not exp.vacuous(point, bval))


def calibrate(exp: Experiment, keys: Sequence[tuple[str, str]] | None = None, *,
              seeds: int | None = None, extend: bool = True) -> list[Calibration]:
    """Held-out calibrations of ``exp``'s checks (``keys``: (bound, kind) pairs; default every
    check that is not a competitor) on its quick grid, ``seeds`` repetitions per point (default
    the experiment's), each band's trend extended to the full grid's ends when ``extend``.

    A full-grid-only experiment (``Experiment.full_only``) is calibrated on its quick grid too
    (held-out seeds, cheap) but judged on the full grid, so its band must be extended there:
    ``extend=False`` is refused."""
    seeds = exp.seeds if seeds is None else seeds
    if exp.full_only and not extend:
        raise ValueError(f"{exp.id} is judged on its full grid only: its calibrated band must "
                         "be extended to the full grid's ends (extend=True)")
    if seeds < 2:
        raise ValueError(f"seeds must be >= 2 for a calibration, got {seeds}")
    checks = [c for c in exp.checks if c.kind != "reject"
              and (keys is None or (c.bound, c.kind) in set(keys))]
    if not checks:
        raise ValueError(f"{exp.id}: no check matches {keys!r}")
    grid, metrics = [], []
    for v in exp.quick_grid:
        point = exp.point(v)
        out = run_experiment_code(exp.run, point, held_out_generators(exp.id, point, seeds))
        m = np.array([math.nan if x is None else float(x) for x in np.ravel(out[exp.metric])])
        if _usable(exp, point, m):
            grid.append(float(v))
            metrics.append(m)
    ends = (min(exp.full_grid), max(exp.full_grid)) if extend else ()
    ends = tuple(float(v) for v in ends if v < min(grid) or v > max(grid)) if grid else ()
    records = []
    for c in checks:
        b = bounds.get(c.bound)
        bvals = [b(**(c.values or exp.bound_values)(exp.point(v))) for v in grid]
        band, observed, m = band_from_ratios(grid, metrics, bvals, aggregate=exp.aggregate,
                                             extend_to=ends)
        records.append(Calibration(exp.id, c.bound, c.kind, band, observed, m, seeds,
                                   HELD_OUT_KEY, tuple(grid), ends))
    return records


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m empirical.run.calibration",
        description="Recompute level bands on held-out seeds and write them to each paper's "
                    "calibration.json (read by its declarations).")
    ap.add_argument("--experiment", action="append", required=True, metavar="ID",
                    help="experiment id (repeatable)")
    ap.add_argument("--check", action="append", default=None, metavar="BOUND:KIND",
                    help="only these checks (bound id and kind, e.g. 'p:thm1:two-sided')")
    ap.add_argument("--seeds", type=int, default=None, help="repetitions per point "
                    "(default: the experiment's)")
    args = ap.parse_args(argv)
    keys = None
    if args.check:
        keys = [tuple(k.rsplit(":", 1)) for k in args.check]
    for eid in args.experiment:
        exp = registry.get(eid)
        recs = calibrate(exp, keys, seeds=args.seeds)
        mod = sys.modules[exp.bound_values.__module__]
        path = write_calibrations(data_file(mod.__file__), recs)
        for r in recs:
            print(f"{eid} {r.bound} {r.kind}: band [{r.band[0]:.3g}, {r.band[1]:.3g}] "
                  f"(observed {r.observed[0]:.3g}–{r.observed[1]:.3g}, m {r.widen:.2f}) -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
