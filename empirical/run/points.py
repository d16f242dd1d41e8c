"""Running one grid point: its seeds, the experiment code, its rows (what a worker computes).

Seeds: repetition r of point p of experiment e uses
``Generator(PCG64(SeedSequence([h(e), h(p), r])))`` with h a SHA-256 digest of the experiment id
and of the point's parameter values (:func:`seed_generators`), so a row's numbers depend only on
(e, p, r).  Re-exported by :mod:`empirical.run.runner`.
"""
from __future__ import annotations

import importlib
import math
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from empirical.core.experiment import Experiment, get
from empirical.store.rows import SweepError, _digest, code_fingerprint


class PointError(SweepError):
    """Running one grid point raised; the message names the experiment, the point and the error."""


def seed_generators(exp_id: str, point: dict, seeds: int) -> list[np.random.Generator]:
    """One generator per repetition, from ``SeedSequence([h(experiment), h(point), r])``."""
    e, p = _digest(exp_id), _digest(point)
    return [np.random.Generator(np.random.PCG64(np.random.SeedSequence([e, p, r])))
            for r in range(seeds)]


# --------------------------------------------------------------------------------------------
# Running one point
# --------------------------------------------------------------------------------------------

def _jsonable(v):
    a = np.asarray(v)
    if a.dtype.kind in "fc":
        return [None if not math.isfinite(x) else float(x) for x in a.astype(float).ravel()]
    if a.dtype.kind in "iub":
        return [int(x) for x in a.ravel()]
    return [str(x) for x in a.ravel()]


class ExperimentRaised(Exception):
    """Experiment code raised something that is not an ``Exception`` (``SystemExit``,
    ``KeyboardInterrupt`` raised by the code itself, ...): carried as an ordinary error of its
    point, so that the run goes on with the other experiments.  ``kind`` names the original."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind, message)
        self.kind, self.message = kind, message

    def __str__(self) -> str:
        return self.message


_SIGINTS = [0]      # real Ctrl-C signals seen while experiment code ran in this process


def _counting_sigint(previous):
    def handler(signum, frame):
        _SIGINTS[0] += 1
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt
    return handler


def run_experiment_code(fn: Callable, *args):
    """``fn(*args)``, where ``fn`` is experiment code: whatever it raises that is not an
    ``Exception`` becomes :class:`ExperimentRaised`.  A real Ctrl-C (SIGINT delivered to this
    process meanwhile) still propagates as ``KeyboardInterrupt`` and stops the run."""
    swap = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if swap else None
    if swap and callable(previous):
        signal.signal(signal.SIGINT, _counting_sigint(previous))
    else:
        swap = False
    seen = _SIGINTS[0]
    try:
        return fn(*args)
    except Exception:
        raise
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt) and _SIGINTS[0] != seen:
            raise
        if isinstance(exc, GeneratorExit):
            raise
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise ExperimentRaised(type(exc).__name__,
                               f"experiment code raised {type(exc).__name__}"
                               + (f" ({msg})" if msg else "")) from None
    finally:
        if swap:
            signal.signal(signal.SIGINT, previous)


def run_point(exp_id: str, point: dict, module: str | None = None) -> list[dict]:
    """Run every seed of one point; return long-format rows (one per seed).

    Module-level and keyed by ids so it pickles to process pools and Dask workers; ``module``
    (the module defining the experiment) is imported first so that a fresh worker registers it.
    """
    if module:
        importlib.import_module(module)
    exp = get(exp_id)
    gens = seed_generators(exp.id, point, exp.seeds)
    t0, c0 = time.perf_counter(), time.process_time()
    out = run_experiment_code(exp.run, dict(point), gens)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if exp.metric not in out:
        raise ValueError(f"{exp.id}: run() returned no {exp.metric!r} column")
    cols = {k: _jsonable(v) for k, v in out.items()}
    for k, v in cols.items():
        if len(v) != exp.seeds:
            raise ValueError(f"{exp.id}: column {k!r} has {len(v)} entries, expected {exp.seeds}")
    rows = []
    for r in range(exp.seeds):
        row = {"experiment": exp.id, "seed": r, **{f"p_{k}": v for k, v in point.items()}}
        row.update({k: v[r] for k, v in cols.items()})
        # wall time ranks points for the scheduler; CPU time (this process, one point at a time)
        # is the cost that a loaded machine does not inflate
        row["seconds_per_point"] = elapsed
        row["cpu_seconds_per_point"] = cpu
        rows.append(row)
    return rows


def _remote_point(exp_id: str, point: dict, module: str | None) -> tuple[list[dict], dict]:
    """A worker's rows and the fingerprint of the code *it* ran (compared with the parent's)."""
    try:
        if module:
            importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"worker cannot import {module!r} ({exc}); install the project (and "
                          "the module's package) on every worker: pip install -e .") from None
    exp = get(exp_id)
    return run_point(exp_id, point, module), code_fingerprint(module or exp.run.__module__,
                                                              exp.code)


@dataclass
class SweepStats:
    """Points of one sweep: computed for the first time, read back, or recomputed (a stale or
    corrupt file was there)."""

    fresh: int = 0
    cached: int = 0
    recomputed: int = 0

    def __iadd__(self, other: "SweepStats") -> "SweepStats":
        self.fresh += other.fresh
        self.cached += other.cached
        self.recomputed += other.recomputed
        return self

    def __str__(self) -> str:
        return f"{self.fresh} fresh, {self.cached} cached, {self.recomputed} recomputed"


class SweepRows(list):
    """The rows of a sweep (a plain list) with the sweep's :class:`SweepStats` as ``.stats``."""

    stats: SweepStats


#: Most local worker processes a sweep starts (each is a Python process with its own copy of
#: numpy; far beyond any machine's cores, and below the limits a pool can create).
MAX_WORKERS = 1024


def _check_workers(workers) -> int:
    if (isinstance(workers, bool) or not isinstance(workers, (int, np.integer))
            or not 1 <= workers <= MAX_WORKERS):
        raise ValueError(f"workers must be an integer in [1, {MAX_WORKERS}], got {workers!r}")
    return int(workers)


def _point_error(exp: Experiment, v: float, exc: BaseException) -> PointError:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    kind = exc.kind if isinstance(exc, ExperimentRaised) else type(exc).__name__
    return PointError(f"{exp.id} at {exp.variable}={v:g}: {kind}: {msg}")
