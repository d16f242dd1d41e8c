"""Running sweeps: seeding, executors, verified storage and resumption.

Seeds: repetition r of point p of experiment e uses
``Generator(PCG64(SeedSequence([h(e), h(p), r])))`` with h a SHA-256 digest of the experiment id
and of the point's parameter values.  A row's numbers therefore depend only on (e, p, r): not on
the grid it sits in, on how many seeds share the batch, or on the executor (in-process, a local
process pool, or a Dask cluster).

Storage: one verified, fingerprinted JSON file per completed point, written atomically
(:mod:`empirical.store.rows`, whose names this module re-exports, as it re-exports those of
:mod:`empirical.run.points`, :mod:`empirical.run.pool` and :mod:`empirical.run.cluster`).

:func:`sweep` returns the rows with ``.stats`` saying how many points were fresh (computed for
the first time), cached (read back), and recomputed (stale or corrupt before).
"""
from __future__ import annotations

import os
from typing import Callable

from empirical.core.experiment import Experiment
from empirical.core.validation import validate_experiment
# What runner.X named before these had modules of their own, re-exported.
from empirical.run.cluster import (DASK_TIMEOUT, SchedulerError, WorkerWatch,  # noqa: F401
                                   check_scheduler, connect, parse_scheduler)
from empirical.run.points import (MAX_WORKERS, ExperimentRaised, PointError,  # noqa: F401
                                  SweepRows, SweepStats, _check_workers, _jsonable,
                                  _point_error, _remote_point, run_experiment_code, run_point,
                                  seed_generators)
from empirical.run.pool import POOL_RESTARTS, _pool_init, _terminate_pool  # noqa: F401
from empirical.run.scheduling import sweep_all
from empirical.store.rows import (_FILE_MODE, _PROJECT, RESULT_FORMAT,  # noqa: F401
                                  TIMING_COLUMNS, ResultWriteError, SweepError, _atomic_write_json,
                                  _canonical, _digest, _fingerprint_change, _module_file,
                                  _move_aside, _package_versions, _point_path, _read_point,
                                  _record, _scan, _scan_file, _umask, check_writable,
                                  code_fingerprint, experiment_fingerprint, forget_fingerprints,
                                  installed_versions, load_rows, point_key, results_dir,
                                  stderr_progress)

__all__ = ["seed_generators", "point_key", "run_point", "sweep", "load_rows", "results_dir",
           "code_fingerprint", "forget_fingerprints", "check_writable", "check_scheduler", "connect",
           "parse_scheduler", "SweepStats",
           "SweepRows", "SweepError", "ResultWriteError", "SchedulerError", "PointError",
           "RESULT_FORMAT", "stderr_progress", "TIMING_COLUMNS"]


def sweep(exp: Experiment, *, full: bool = False, workers: int = 1, scheduler: str | None = None,
          results: str | os.PathLike | None = None, progress: Callable[[str], None] | None = None,
          on_point_done: Callable[[float], None] | None = None) -> SweepRows:
    """Run the missing (or stale, or corrupt) points of ``exp``'s grid and return all its rows.

    ``workers`` > 1 uses a local process pool; ``scheduler`` (a Dask scheduler address, e.g.
    ``tcp://host:8786``) runs the points on that cluster instead.  Each point is stored as soon
    as it completes.  ``on_point_done`` is called after each store (tests use it to interrupt).
    Before any point runs, the experiment is validated against its bounds (in this process,
    once per process) and the results directory is proved writable.  Raises
    :class:`SweepError` subclasses with one-line messages.

    The queue of :func:`empirical.run.scheduling.sweep_all` for one experiment: same executors,
    storage and failure handling, rows bit for bit.
    """
    workers = _check_workers(workers)
    validate_experiment(exp, full=full)
    done = (lambda e, v: on_point_done(v)) if on_point_done is not None else None
    out = sweep_all([exp], full=full, workers=workers, scheduler=scheduler, results=results,
                    say=progress, validate=False, on_point=done)[exp.id]
    if out.error is not None:
        raise out.error
    if out.rows is None:    # cancelled underneath us (a Dask scheduler that went away)
        _, lost = load_rows(exp, full=full, results=results, progress=progress)
        raise SweepError(f"{exp.id}: {len(lost)} point(s) were not computed (first "
                         f"{exp.variable}={lost[0]:g}; the executor cancelled them); stored "
                         "points kept, rerun to resume")
    return out.rows
