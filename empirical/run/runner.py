"""Running sweeps: seeding, executors, verified storage and resumption.

Seeds: repetition r of point p of experiment e uses
``Generator(PCG64(SeedSequence([h(e), h(p), r])))`` with h a SHA-256 digest of the experiment id
and of the point's parameter values.  A row's numbers therefore depend only on (e, p, r): not on
the grid it sits in, on how many seeds share the batch, or on the executor (in-process, a local
process pool, or a Dask cluster).

Storage: one verified, fingerprinted JSON file per completed point, written atomically
(:mod:`empirical.store.rows`, whose names this module re-exports).

:func:`sweep` returns the rows with ``.stats`` saying how many points were fresh (computed for
the first time), cached (read back), and recomputed (stale or corrupt before).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import importlib.util
import importlib.metadata
import json
import math
import os
import re
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np

from empirical.core.experiment import Experiment, get, validate_experiment
# The row store, re-exported: runner.X keeps naming what it named before the store had a module.
from empirical.store.rows import (_FILE_MODE, _PROJECT, RESULT_FORMAT,  # noqa: F401
                                  TIMING_COLUMNS, ResultWriteError, SweepError, _atomic_write_json,
                                  _canonical, _digest, _fingerprint_change, _module_file,
                                  _move_aside, _package_versions, _point_path, _read_point,
                                  _record, _scan, _scan_file, _umask, check_writable,
                                  code_fingerprint, forget_fingerprints, installed_versions,
                                  load_rows, point_key, results_dir, stderr_progress)

__all__ = ["seed_generators", "point_key", "run_point", "sweep", "load_rows", "results_dir",
           "code_fingerprint", "forget_fingerprints", "check_writable", "check_scheduler", "connect",
           "parse_scheduler", "SweepStats",
           "SweepRows", "SweepError", "ResultWriteError", "SchedulerError", "PointError",
           "RESULT_FORMAT", "stderr_progress", "TIMING_COLUMNS"]

#: Seconds a Dask scheduler gets to answer, and then to show at least one worker.
DASK_TIMEOUT = 5.0


class SchedulerError(SweepError):
    """The Dask scheduler is unreachable, has no workers, or lost all of them."""


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
    return run_point(exp_id, point, module), code_fingerprint(module or get(exp_id).run.__module__)


# --------------------------------------------------------------------------------------------
# Sweeps
# --------------------------------------------------------------------------------------------

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
    from empirical.run.scheduling import sweep_all

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


def _point_error(exp: Experiment, v: float, exc: BaseException) -> PointError:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    kind = exc.kind if isinstance(exc, ExperimentRaised) else type(exc).__name__
    return PointError(f"{exp.id} at {exp.variable}={v:g}: {kind}: {msg}")


# -- local process pool -------------------------------------------------------------------------

def _pool_init(parent: int) -> None:
    """Make a pool worker die with its parent and leave Ctrl-C to the parent."""
    # Ctrl-C reaches the whole process group; the parent handles it and ends the workers, so
    # the workers must not print their own KeyboardInterrupt tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG: killed when the parent dies
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watchdog suffices
            pass

    def watchdog() -> None:                     # portable fallback (and forkserver children)
        while True:
            time.sleep(1.0)
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # pragma: no cover - pid reused by another user's process
                os._exit(1)

    threading.Thread(target=watchdog, daemon=True, name="dprates-parent-watchdog").start()
    # One BLAS thread per worker: no oversubscription, and the same sums as every other
    # executor (empirical.run.scheduling.limit_threads).
    from empirical.run.scheduling import keep_freed_pages, limit_threads

    limit_threads(1)
    keep_freed_pages()


#: How often a sweep starts a new pool after a worker process died (killed, out of memory).
POOL_RESTARTS = 2


def _terminate_pool(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public kill; its worker table is the only handle on them (and
    # shutdown() drops it, so take it first).
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


# -- Dask ---------------------------------------------------------------------------------------

_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+)"
                      r":(?P<port>[0-9]{1,5})")


def parse_scheduler(address: str) -> str:
    """``address`` as ``scheme://host:port`` (tcp by default), or ValueError in one line: a
    known scheme, a host name or IP address, a port in 1..65535, nothing else (an in-process
    cluster's ``inproc://`` address is passed through for library callers)."""
    if isinstance(address, str) and re.fullmatch(r"inproc://[\w.:/\-]+", address):
        return address
    m = _ADDRESS.fullmatch(address.strip()) if isinstance(address, str) else None
    scheme = (m.group("scheme") or "tcp") if m else ""
    if m is None or scheme not in _SCHEMES or not 1 <= int(m.group("port")) <= 65535:
        raise ValueError(f"scheduler address must be [{'|'.join(_SCHEMES)}://]HOST:PORT with a "
                         f"port in 1..65535 (e.g. tcp://127.0.0.1:8786), got {address!r}")
    return f"{scheme}://{m.group('host')}:{int(m.group('port'))}"


def connect(address: str, timeout: float | None = None):
    """A Dask client for ``address`` whose scheduler answered and has at least one worker,
    within ``timeout`` seconds each; else :class:`SchedulerError` with one line.

    ``timeout`` bounds the whole connection, handshake included: ``Client(timeout=)`` bounds
    only the TCP connect, so a service that accepts and never speaks Dask would hang it.  The
    client is built in a thread the caller stops waiting for at the deadline (a client that
    arrives later is closed by that thread)."""
    try:
        address = parse_scheduler(address)
    except ValueError as exc:
        raise SchedulerError(str(exc)) from None
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError("--scheduler needs dask.distributed: pip install -e '.[distributed]'"
                             ) from None
    import logging

    timeout = DASK_TIMEOUT if timeout is None else timeout
    # distributed logs every failed connection attempt as a traceback; the one-line error says it.
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    box: dict = {}
    gave_up = threading.Event()

    def build() -> None:
        try:
            client = Client(address, timeout=timeout, set_as_default=False)
        except BaseException as exc:       # handed to the caller, which re-raises in one line
            box["error"] = exc
            return
        box["client"] = client
        if gave_up.is_set():
            client.close()

    worker = threading.Thread(target=build, daemon=True, name="dprates-dask-connect")
    try:
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            gave_up.set()
            raise SchedulerError(f"cannot reach Dask scheduler {address} within {timeout:g}s "
                                 "(no Dask handshake: not running, or not a Dask scheduler)")
    finally:
        log.setLevel(level)
    if "error" in box:
        exc = box["error"]
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchedulerError(f"cannot reach Dask scheduler {address} within {timeout:g}s "
                             f"({why[:160]})") from None
    client = box["client"]
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        client.close()
        raise SchedulerError(f"Dask scheduler {address} has no workers (waited {timeout:g}s); "
                             f"start some with `dask worker {address}`") from None
    return client


def check_scheduler(address: str, timeout: float | None = None) -> int:
    """Number of workers at ``address`` (at least 1), or :class:`SchedulerError`."""
    client = connect(address, timeout)
    try:
        return len(client.scheduler_info()["workers"])
    finally:
        client.close()


class WorkerWatch:
    """Notices a Dask cluster that has had no worker for ``grace`` seconds (looked at most once
    a second): :meth:`check` then raises :class:`SchedulerError` with ``what()`` as its text."""

    def __init__(self, client, grace: float):
        self.client, self.grace = client, grace
        self.lonely_since, self.last_look = None, time.monotonic()

    def check(self, what: Callable[[], str]) -> None:
        now = time.monotonic()
        if now - self.last_look < 1.0:
            return
        self.last_look = now
        if self.client.scheduler_info().get("workers"):
            self.lonely_since = None
        elif self.lonely_since is None:
            self.lonely_since = now
        elif now - self.lonely_since > self.grace:
            raise SchedulerError(what())
