"""One task queue for every point of every selected experiment.

:func:`sweep_all` replaces a loop of per-experiment :func:`empirical.run.runner.sweep` calls (each
with its own pool, so one slow point idled the other workers) by a single queue:

* every missing, stale or corrupt point of every experiment becomes a task, with an *expected
  cost* (:func:`estimate_costs`: stored timings of an earlier run in the results directory, else
  the timings shipped in ``empirical/run/point_costs.json``, else a size heuristic);
* tasks go to the executor longest first (the parent keeps the queue and feeds the executor
  as slots free up, so later work — an experiment's analysis, when ``analyse=True`` — can go
  ahead of the remaining points);
* executors: in-process (``workers=1``), a local process pool (``workers>1``; workers limit
  BLAS/OpenMP to one thread each so that numpy does not oversubscribe the cores), or a Dask
  cluster (``scheduler=``);
* storage is :mod:`empirical.run.runner`'s: each point written atomically as it completes,
  checksummed and code-fingerprinted (a worker running other code is refused), resumable; a
  point that raises fails its own experiment (its other queued points are dropped, the other
  experiments go on); a dead pool worker costs only its running points, re-run in a new pool
  (:data:`empirical.run.runner.POOL_RESTARTS` times); a failed write stops everything.

Rows do not depend on the executor or the order (seeds come from (experiment, point,
repetition) only; tests compare them bit for bit with the per-experiment path).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import heapq
import importlib
import json
import math
import os
import sys
import time
from concurrent.futures import BrokenExecutor, CancelledError, Future, ProcessPoolExecutor, wait, \
    FIRST_COMPLETED
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from empirical.core import experiment as registry
from empirical.core.experiment import Experiment, get, validate_experiment
from empirical.run import runner
from empirical.run.progress import Progress
from empirical.run.runner import (PointError, ResultWriteError, SweepError, SweepRows,
                                  SweepStats)
from empirical.store import integrity

__all__ = ["default_workers", "limit_threads", "keep_freed_pages", "estimate_costs", "sweep_all", "Outcome",
           "COSTS_FILE", "THREAD_VARS", "DASK_WORKER_CONFIG", "local_cluster"]

#: Timings shipped with the package (seconds per point on a 2-core machine), used when the
#: results directory has none: {experiment id: {"quick"|"full": {repr(grid value): seconds}}}.
COSTS_FILE = Path(__file__).with_name("point_costs.json")
#: Environment variables that cap the threads of BLAS / OpenMP libraries in pool workers.
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: Swept variables whose size drives a point's cost (heuristic for points never timed).
_SIZE_VARS = ("n", "d", "T", "m", "steps", "width", "batch", "k", "p")
#: Cost of a point nothing is known about (seconds): the median of the shipped timings.
_DEFAULT_COST = 1.0


def default_workers() -> int:
    """The cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------------------------
# Threads of numerical libraries in workers
# --------------------------------------------------------------------------------------------

def limit_threads(n: int = 1) -> int | None:
    """Cap BLAS / OpenMP threads of this process at ``n``; returns OpenBLAS's previous count
    (None if unknown), so that a caller can restore it.

    Why every executor uses one thread: besides oversubscription (two pool workers of two BLAS
    threads each on two cores), OpenBLAS's multi-threaded dot product sums in another order, so
    a row's last bits would depend on the thread count (seen: ``x @ x`` for 2e6 entries differs
    between 1 and 2 threads).  The environment variables reach libraries loaded later (and child
    processes); numpy's OpenBLAS is already loaded in a forked worker, so it is also told
    directly (OpenBLAS's own ``set_num_threads``, found among the loaded libraries).
    """
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    return _openblas_threads(n)


def _openblas_functions() -> list[tuple[object, object]]:
    """(get, set) of every OpenBLAS loaded in this process (numpy's and scipy's may differ)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "openblas" in line.lower()})
    except OSError:         # not Linux: the environment variables are what we can do
        return []
    out = []
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for prefix, suffix in (("", ""), ("", "64_"), ("scipy_", "64_"), ("scipy_", "")):
            setter = getattr(handle, f"{prefix}openblas_set_num_threads{suffix}", None)
            getter = getattr(handle, f"{prefix}openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                out.append((getter, setter))
                break
    return out


def _openblas_threads(n: int) -> int | None:
    import ctypes

    before = None
    for getter, setter in _openblas_functions():
        before = before or int(getter())
        setter(ctypes.c_int(n))
    return before


# --------------------------------------------------------------------------------------------
# Expected cost of each point
# --------------------------------------------------------------------------------------------

def _shipped_costs() -> dict:
    try:
        return json.loads(COSTS_FILE.read_text())
    except (OSError, ValueError):
        return {}


def _stored_seconds(exp: Experiment, root: Path, grid: Iterable[float]) -> dict[float, float]:
    """Timings in the point files already in ``root`` (valid, stale or of another version)."""
    out = {}
    for v in grid:
        path = runner._point_path(root, exp, exp.point(v))
        try:
            rows = integrity.parse_json(path.read_bytes())["rows"]
            s = float(rows[0]["seconds_per_point"])
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            continue
        if math.isfinite(s) and s > 0:
            out[v] = s
    return out


def _fill(grid: list[float], known: Mapping[float, float], variable: str,
          fallback: float) -> dict[float, float]:
    """Every grid value's cost: known ones as they are; the others from a log-log line through
    the known ones (two or more), else scaled from their mean (one), else the fallback with a
    linear size heuristic when the swept variable is a size."""
    if len(known) == len(grid):
        return dict(known)
    xs = sorted(known)
    out = dict(known)
    if len(xs) >= 2 and xs[0] > 0:
        lx = [math.log(x) for x in xs]
        ly = [math.log(known[x]) for x in xs]
        mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
        sxx = sum((a - mx) ** 2 for a in lx)
        slope = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx if sxx else 0.0
        for v in grid:
            if v not in out and v > 0:
                out[v] = math.exp(my + slope * (math.log(v) - mx))
    ref = math.exp(sum(math.log(g) for g in grid) / len(grid)) if all(g > 0 for g in grid) else 1
    base = (sum(known.values()) / len(known)) if known else fallback
    for v in grid:
        if v not in out:
            out[v] = base * (v / ref if variable in _SIZE_VARS and v > 0 else 1.0)
    return out


def estimate_costs(exps: Iterable[Experiment], full: bool = False,
                   results: str | os.PathLike | None = None) -> dict[tuple[str, float], float]:
    """Expected seconds of each (experiment id, grid value): stored timings in ``results``
    first, then the shipped ``point_costs.json``, then :func:`_fill`'s heuristics."""
    root = runner.results_dir(results)
    shipped = _shipped_costs()
    grid_name = "full" if full else "quick"
    known_all = [s for e in shipped.values() for s in e.get(grid_name, {}).values()]
    fallback = sorted(known_all)[len(known_all) // 2] if known_all else _DEFAULT_COST
    out = {}
    for exp in exps:
        grid = list(exp.grid(full))
        known = {float(k): float(s) for k, s in shipped.get(exp.id, {}).get(grid_name, {}).items()
                 if float(k) in grid}
        known.update(_stored_seconds(exp, root, grid))
        for v, s in _fill(grid, known, exp.variable, fallback).items():
            out[(exp.id, v)] = s
    return out


# --------------------------------------------------------------------------------------------
# Tasks run by workers
# --------------------------------------------------------------------------------------------

def _remote_analysis(exp_id: str, module: str, rows: list[dict],
                     figure: bool = False) -> tuple[dict | None, bytes | None, dict]:
    """An experiment's analysis, as the cache's typed JSON (Analysis holds functions and does
    not pickle), and with ``figure`` its figure's PNG bytes.

    The figure is drawn here rather than in the parent so that figures are drawn by all
    workers at once (at the end of a run most experiments complete together, and one process
    drawing ≈ 0.5 CPU-s per figure was the tail of ``verify``).  It is drawn from the decoded
    analysis, exactly what the parent, ``dprates figures`` or the report would draw it from.
    Returned with the fingerprint of the analysis and drawing code *this* worker ran, which the
    parent compares with its own before it accepts either."""
    from empirical.store import analysis_cache

    if module:
        importlib.import_module(module)
    exp = get(exp_id)
    fp = analysis_cache.worker_fingerprint(exp)
    analysis = analysis_cache.analyse_quietly(exp, rows)
    try:
        data = analysis_cache.encode(analysis)
    except TypeError:       # holds a type the cache cannot write: the parent analyses it
        return None, None, fp
    png = None
    if figure and analysis.fit is not None:
        from empirical.store.figures import render_analysis

        try:
            png = render_analysis(analysis_cache.decode(data))
        except Exception:   # the parent draws it again and reports what went wrong there
            png = None
    return data, png, fp


def _remote_validate(exp_id: str, module: str, full: bool) -> str:
    """"" if the experiment's declaration matches its bounds, else why not (one line)."""
    if module:
        importlib.import_module(module)
    try:
        runner.run_experiment_code(lambda: validate_experiment(get(exp_id), full=full))
    except ValueError as exc:
        return str(exc)
    return ""


# --------------------------------------------------------------------------------------------
# State of one experiment
# --------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """One experiment's result: its rows (``None`` if it failed), the error that stopped it or
    why it was not run (``invalid``: validation against its bounds failed), and, when asked,
    its analysis and whether that came from the cache."""

    experiment: Experiment
    rows: SweepRows | None = None
    error: PointError | None = None
    invalid: str = ""                          # the declaration does not match its bounds
    analysis: object | None = None
    analysis_cached: bool = False
    figure: bytes | None = None                # PNG of the analysis, drawn by a worker
    stats: SweepStats = field(default_factory=SweepStats)


@dataclass
class _Exp:
    exp: Experiment
    module: str
    fp: dict
    scan: object
    grid: tuple
    stats: SweepStats
    left: int                                  # points not yet stored
    outcome: Outcome
    analysis_key: str = ""
    validated: bool = False
    full: bool = False
    figure: bool = False                       # the analysis task also draws the figure
    points: list = field(default_factory=list)  # its point tasks, queued once validated


@dataclass(order=True)
class _Task:
    priority: tuple                            # sorts first = runs first
    kind: str = field(compare=False)           # "validate", "point" or "analysis"
    exp_id: str = field(compare=False)
    value: float = field(compare=False, default=math.nan)
    cost: float = field(compare=False, default=0.0)
    rows: list | None = field(compare=False, default=None)


class _Run:
    """The bookkeeping of one :func:`sweep_all` call, whatever the executor."""

    def __init__(self, exps, full, results, say, progress, analyse, costs, validate=True,
                 on_analysis=None, on_point=None, figures=False):
        self.full, self.root, self.say = full, runner.results_dir(results), say
        self.validate, self.on_analysis, self.on_point = validate, on_analysis, on_point
        self.figures = figures
        # Without a progress bar, ``say`` gets a line per stored point (runner.sweep's log).
        self.per_point = progress is None
        # A worker's validation stands for this process only if it ran this process's code
        # (a local pool, or in-process); a Dask worker's code is checked only with its points.
        self.same_code_validates = True
        self.results, self.analyse = results, analyse
        self.states: dict[str, _Exp] = {}
        self.queue: list[_Task] = []
        self.unsaved: dict[float, list] = {}      # rows computed but not written (disk full)
        for exp in exps:
            self._prepare(exp)
        costs = costs if costs is not None else estimate_costs(
            [s.exp for s in self.states.values() if s.left], full, results)
        for st in self.states.values():
            for v in st.scan.todo:
                c = costs.get((st.exp.id, v), _DEFAULT_COST)
                # Longest first; ties by experiment and grid order so that runs are repeatable.
                st.points.append(_Task((1, -c, st.exp.id, v), "point", st.exp.id, v, c))
            if self.validate and not registry.is_validated(st.exp, full=full):
                # Validation (bounds evaluated at the grid's ends; some build big problems) runs
                # on the workers too, before everything else, the costliest experiments first,
                # and gates only its own experiment's points.
                total = sum(t.cost for t in st.points)
                heapq.heappush(self.queue, _Task((0, -total, st.exp.id, 0.0), "validate",
                                                 st.exp.id))
            else:
                self._validated(st)
        todo = [t for st in self.states.values() for t in st.points]
        self.progress = progress(len(todo), sum(t.cost for t in todo),
                                 sum(len(s.scan.rows) for s in self.states.values())) \
            if progress else None

    def _prepare(self, exp: Experiment) -> None:
        runner.check_writable(self.root / exp.paper / exp.id)
        module = exp.run.__module__
        fp = runner.code_fingerprint(module)
        grid = exp.grid(self.full)
        scan = runner._scan(exp, grid, self.root, fp, self.message, recompute_hint="recomputing")
        st = _Exp(exp, module, fp, scan, grid, SweepStats(cached=len(scan.rows)),
                  len(scan.todo), Outcome(exp), full=self.full, figure=self.figures)
        self.states[exp.id] = st
        if self.per_point and scan.rows and scan.todo:
            self.say(f"[{exp.id}] {len(scan.rows)}/{len(grid)} points already stored, resuming")

    def message(self, msg: str) -> None:
        prog = getattr(self, "progress", None)
        (prog.say if prog is not None else self.say)(msg)

    # -- completions ---------------------------------------------------------------------------

    def store(self, task: _Task, rows: list[dict], worker_fp: dict | None) -> None:
        st = self.states[task.exp_id]
        exp, fp = st.exp, st.fp
        if worker_fp is not None and worker_fp["digest"] != fp["digest"]:
            raise SweepError(f"{exp.id}: a worker ran different code than this machine "
                             f"({runner._fingerprint_change(fp, worker_fp)}); install the same "
                             "project and package versions on every worker")
        point = exp.point(task.value)
        path = runner._point_path(self.root, exp, point)
        try:
            runner._atomic_write_json(path, runner._record(exp, point, rows, fp))
        except OSError as exc:
            raise ResultWriteError(f"cannot write {path}: {exc.strerror or exc}",
                                   {task.value: rows}) from None
        st.scan.rows[task.value] = rows
        if task.value in st.scan.redo:
            st.stats.recomputed += 1
        else:
            st.stats.fresh += 1
        st.left -= 1
        if self.progress is not None:
            self.progress.advance(1, task.cost)
        elif self.per_point and rows:
            self.say(f"[{exp.id}] {len(st.scan.rows)}/{len(st.grid)} {exp.variable}="
                     f"{task.value:g} ({rows[0]['seconds_per_point']:.1f}s)")
        if self.on_point is not None:
            self.on_point(exp, task.value)
        if st.left == 0:
            self._complete(st)

    def fail_point(self, task: _Task, exc: BaseException) -> None:
        """A point raised: its experiment fails; its other queued points are dropped."""
        st = self.states[task.exp_id]
        if st.outcome.error is None:
            st.outcome.error = runner._point_error(st.exp, task.value, exc)
        dropped = [t for t in self.queue if t.exp_id == task.exp_id and t.kind == "point"]
        self.queue = [t for t in self.queue if t not in dropped]
        heapq.heapify(self.queue)
        if self.progress is not None:
            self.progress.advance(1 + len(dropped), task.cost + sum(t.cost for t in dropped))

    def _complete(self, st: _Exp) -> None:
        if st.outcome.error is not None:
            return
        rows = SweepRows(r for v in st.grid for r in st.scan.rows[v])
        rows.stats = st.stats
        st.outcome.rows = rows
        if not self.analyse:
            return
        from empirical.store import analysis_cache

        st.analysis_key = analysis_cache.analysis_key(st.exp, rows, self.full)
        hit = analysis_cache.load(st.exp, st.analysis_key, self.full, self.results)
        if hit is not None:
            st.outcome.analysis, st.outcome.analysis_cached = hit, True
            self._analysis_ready(st)
        else:   # ahead of every point: the parent draws figures from it as soon as it returns
            heapq.heappush(self.queue, _Task((0, 0.0, st.exp.id, 0.0), "analysis", st.exp.id,
                                             rows=list(rows)))

    def analysed(self, task: _Task, out: tuple[dict | None, bytes | None, dict]) -> None:
        from empirical.store import analysis_cache

        st = self.states[task.exp_id]
        data, png, worker_fp = out
        mine = analysis_cache.worker_fingerprint(st.exp)
        if worker_fp != mine:
            changed = sorted(k for k in mine if (worker_fp or {}).get(k) != mine[k])
            raise SweepError(f"{st.exp.id}: a worker ran different analysis code than this "
                             f"machine ({', '.join(changed) or 'fingerprint'} differ); its "
                             "analysis is refused; install the same project and package "
                             "versions on every worker")
        st.outcome.figure = png
        if data is None:
            st.outcome.analysis = analysis_cache.analyse_quietly(st.exp, task.rows)
        else:
            analysis_cache.store(st.exp, st.analysis_key, self.full, data, self.results)
            st.outcome.analysis = analysis_cache.decode(data)
        self._analysis_ready(st)

    def _analysis_ready(self, st: _Exp) -> None:
        # In the parent, while the workers go on: e.g. the CLI draws the figure now rather than
        # after the last point.
        if self.on_analysis is not None:
            self.on_analysis(st.outcome)

    def analysis_failed(self, task: _Task, exc: BaseException) -> None:
        from empirical.core.checks import Analysis

        st = self.states[task.exp_id]
        first = str(exc).splitlines()[0] if str(exc) else ""
        st.outcome.analysis = Analysis(st.exp, None, (), (), (), {},
                                       error=f"analysis raised {type(exc).__name__}: {first}")
        self._analysis_ready(st)

    def start(self) -> None:
        """Validated experiments with nothing to compute are complete before any task runs."""
        for st in self.states.values():
            if st.validated and st.left == 0:
                self._complete(st)

    def pending(self) -> int:
        """Tasks queued or still to be queued (points waiting for their validation)."""
        return len(self.queue) + sum(len(s.points) for s in self.states.values()
                                     if not s.validated)

    def _validated(self, st: _Exp) -> None:
        st.validated = True
        for t in st.points:
            heapq.heappush(self.queue, t)

    def validation_done(self, task: _Task, why: str) -> None:
        st = self.states[task.exp_id]
        if why:
            st.outcome.invalid = why
            if self.progress is not None and st.points:
                self.progress.advance(len(st.points), sum(t.cost for t in st.points))
            return
        if self.same_code_validates:
            registry.mark_validated(st.exp, full=self.full)
        self._validated(st)
        if st.left == 0:
            self._complete(st)

    def handle(self, task: _Task, get_result: Callable[[], object]) -> None:
        """Record one finished task; raises what must stop the whole run."""
        try:
            out = get_result()
        except CancelledError:
            return
        except (SweepError, BrokenExecutor):
            raise
        except Exception as exc:
            if task.kind == "analysis":
                self.analysis_failed(task, exc)
            elif task.kind == "validate":
                self.validation_done(task, f"validation raised {type(exc).__name__}: {exc}")
            else:
                self.fail_point(task, exc)
            return
        if task.kind == "analysis":
            self.analysed(task, out)
            return
        if task.kind == "validate":
            self.validation_done(task, out)
            return
        rows, worker_fp = out
        try:
            self.store(task, rows, worker_fp)
        except ResultWriteError as exc:
            self.unsaved.update(exc.unsaved)
            raise

    def fatal(self, exc: BaseException) -> BaseException:
        """``exc``, carrying every row computed but not written when it is a write failure."""
        if isinstance(exc, ResultWriteError):
            exc.unsaved.update(self.unsaved)
        return exc

    def outcomes(self) -> dict[str, Outcome]:
        for st in self.states.values():
            st.outcome.stats = st.stats            # counts also for experiments that failed
        return {i: st.outcome for i, st in self.states.items()}

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()


def _call(task: _Task, st: _Exp):
    """(function, args) that compute ``task`` on a worker."""
    if task.kind == "analysis":
        return _remote_analysis, (task.exp_id, st.module, task.rows, st.figure)
    if task.kind == "validate":
        return _remote_validate, (task.exp_id, st.module, st.full)
    return _remote_point, (task.exp_id, st.exp.point(task.value), st.module, os.getpid())


def _remote_point(exp_id: str, point: dict, module: str, parent: int):
    """:func:`empirical.run.runner._remote_point` with BLAS capped at one thread in a worker
    process (a Dask worker, a pool worker); threads of the parent's own process are left alone."""
    if os.getpid() != parent:
        _limit_once()
    return runner._remote_point(exp_id, point, module)


_LIMITED = []


def _limit_once() -> None:
    if not _LIMITED:
        limit_threads(1)
        keep_freed_pages()
        _LIMITED.append(True)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3      # glibc <malloc.h>


def keep_freed_pages() -> bool:
    """Ask glibc to serve arrays up to 32 MB from the heap and keep up to 256 MB of freed heap.

    Why: a step of the KAN paper's Algorithm 1 makes a few dozen temporaries of (rows × batch × m)
    doubles (≈ 0.5 MB each); under glibc's default dynamic thresholds they are returned to the
    kernel when freed and faulted in afresh at the next step, which cost up to 45% of a sweep
    point's CPU (KAN stability, Cor 5.3 at n = 1200).  Numbers are unchanged (rows bit-identical);
    the process keeps its peak heap for reuse.  Process-wide, so it is applied where dprates
    owns the process (pool and Dask workers, the CLI), never on import of a library module.
    Idempotent; a no-op (False) off glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 256 << 20))


# --------------------------------------------------------------------------------------------
# Executors
# --------------------------------------------------------------------------------------------

def _in_process(run: _Run) -> None:
    while run.queue:
        task = heapq.heappop(run.queue)
        st = run.states[task.exp_id]
        if task.kind != "point":
            fn, args = _call(task, st)
            run.handle(task, lambda: fn(*args))
            continue

        def compute(task=task, st=st):
            return runner.run_point(task.exp_id, st.exp.point(task.value), st.module), None

        run.handle(task, compute)


def _feed(run: _Run, submit: Callable, in_flight: dict, slots: int) -> None:
    while run.queue and len(in_flight) < slots:
        task = heapq.heappop(run.queue)
        fn, args = _call(task, run.states[task.exp_id])
        try:
            fut = submit(fn, *args)
        except BaseException:
            heapq.heappush(run.queue, task)      # a broken pool refuses it: run it in the next
            raise
        in_flight[fut] = task


def _drain_pool(run: _Run, pool: ProcessPoolExecutor, in_flight: dict, slots: int) -> None:
    fatal: BaseException | None = None
    _feed(run, pool.submit, in_flight, slots)
    while in_flight:
        done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
        for fut in done:
            task = in_flight[fut]
            try:
                run.handle(task, fut.result)
            except BrokenExecutor:
                raise                           # the task stays in flight: _salvage requeues it
            except SweepError as exc:
                # Stop feeding, but store what still completes (nothing computed is lost).
                fatal = fatal or exc
                run.queue.clear()
            del in_flight[fut]
        if fatal is None:
            _feed(run, pool.submit, in_flight, slots)
    if fatal is not None:
        raise run.fatal(fatal)


def _salvage(run: _Run, in_flight: dict) -> None:
    """After a worker died: record what the broken pool did finish (a result, or a point's own
    error), requeue the rest (running, queued, or cancelled by the shutdown)."""
    for fut, task in list(in_flight.items()):
        finished = fut.done() and not fut.cancelled()
        if finished and not isinstance(fut.exception(), BrokenExecutor):
            run.handle(task, fut.result)
        else:
            heapq.heappush(run.queue, task)
    in_flight.clear()


def _pool(run: _Run, workers: int) -> None:
    for attempt in range(runner.POOL_RESTARTS + 1):
        pool = ProcessPoolExecutor(max_workers=workers, initializer=runner._pool_init,
                                   initargs=(os.getpid(),))
        in_flight: dict[Future, _Task] = {}
        try:
            # One extra task in flight so that a worker finds its next task waiting.
            _drain_pool(run, pool, in_flight, workers + 1)
        except BrokenExecutor as exc:
            runner._terminate_pool(pool)
            _salvage(run, in_flight)
            if attempt == runner.POOL_RESTARTS:
                first = min(run.queue) if run.queue else None
                raise PointError(f"a pool worker died {attempt + 1} times "
                                 f"({type(exc).__name__}); {len(run.queue)} task(s) not run"
                                 + (f" (first {first.exp_id} at {first.value:g})"
                                    if first else "") + "; stored points kept") from None
            run.message(f"a worker process died; retrying {len(run.queue)} task(s) in a new "
                        "pool")
            continue
        except BaseException:
            runner._terminate_pool(pool)
            raise
        pool.shutdown(wait=True)
        return


#: Dask settings for the workers of every cluster dprates starts (:func:`local_cluster`; for a
#: cluster of your own, the same as environment variables of ``dask worker``, docs/cli.md).  Why:
#: the worker's event loop wakes up for its statistical profiler every 10 ms (it samples the
#: task thread's stack), for its health tick every 20 ms and its memory / system monitors every
#: 0.1 / 0.5 s, and each wake-up takes the GIL from a task made of Python-level loops.  Measured
#: (benchmarks/dask_overhead.py, docs/performance.md; two runs at load 10-17): the worker's
#: other threads burned 20-24 % of the task's CPU with Dask's defaults, 9-18 % with the profiler
#: off, 2-4 % with all of these.
#: Slower monitors only delay the dashboard and memory-limit reactions, which dprates' short,
#: bounded-memory tasks do not need.
DASK_WORKER_CONFIG = {"distributed.worker.profile.enabled": False,
                      "distributed.admin.tick.interval": "1s",
                      "distributed.worker.memory.monitor-interval": "1s",
                      "distributed.admin.system-monitor.interval": "5s"}


def local_cluster(n_workers: int, **kwargs):
    """A ``distributed.LocalCluster`` of ``n_workers`` processes set up as dprates' executors
    want them: one thread each (numpy loops hold the GIL; more processes, not threads), BLAS
    capped at one thread (also for the bits of dot products: :func:`limit_threads`), the
    profiler off (:data:`DASK_WORKER_CONFIG`), no dashboard.  ``kwargs`` go to LocalCluster."""
    import logging

    import dask
    import distributed

    if not isinstance(n_workers, int) or isinstance(n_workers, bool) or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1, got {n_workers!r}")
    opts = dict(n_workers=n_workers, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.ERROR)
    opts.update(kwargs)
    if opts["processes"]:       # a worker process of its own (in-process workers take no env)
        opts.setdefault("env", {v: "1" for v in THREAD_VARS})
    # The workers are spawned inside the constructor and take the config active now with them.
    with dask.config.set(DASK_WORKER_CONFIG):
        return distributed.LocalCluster(**opts)


def _dask(run: _Run, address: str, grace: float | None = None) -> None:
    client = runner.connect(address)
    grace = 3 * runner.DASK_TIMEOUT if grace is None else grace
    run.same_code_validates = False
    try:
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())

        def submit(fn, *args):
            # pure=False: every submission runs; a worker that dies takes only its running
            # tasks with it and the scheduler reschedules them.
            return client.submit(fn, *args, pure=False)

        _drain_dask(run, submit, runner.WorkerWatch(client, grace), max(2, 2 * threads))
    finally:
        client.close()


def _drain_dask(run: _Run, submit: Callable, watch, slots: int) -> None:
    in_flight: dict = {}
    fatal: BaseException | None = None
    _feed(run, submit, in_flight, slots)
    while in_flight:
        done = [f for f in in_flight if f.done()]
        if not done:
            time.sleep(0.02)
            watch.check(lambda: f"every Dask worker left; {len(in_flight) + len(run.queue)} "
                        "task(s) not run (stored points kept; rerun to resume)")
            continue
        watch.lonely_since = None
        for fut in done:
            task = in_flight.pop(fut)
            try:
                run.handle(task, fut.result)
            except SweepError as exc:
                # Stop feeding, but store what still completes (nothing computed is lost).
                fatal = fatal or exc
                run.queue.clear()
        if fatal is None:
            _feed(run, submit, in_flight, slots)
    if fatal is not None:
        raise run.fatal(fatal)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

def sweep_all(exps: Iterable[Experiment], *, full: bool = False, workers: int | None = None,
              scheduler: str | None = None, results: str | os.PathLike | None = None,
              say: Callable[[str], None] | None = None,
              progress: Callable[[int, float, int], Progress] | None = None,
              analyse: bool = False,
              costs: Mapping[tuple[str, float], float] | None = None,
              order: list | None = None, validate: bool = True,
              on_analysis: Callable[[Outcome], None] | None = None,
              on_point: Callable[[Experiment, float], None] | None = None,
              figures: bool = False) -> dict[str, Outcome]:
    """Run the missing (stale, corrupt) points of all ``exps`` through one queue; see the
    module docstring.  Returns ``{experiment id: Outcome}`` in the order given.

    ``workers`` (default: :func:`default_workers`) > 1 uses a local process pool; ``scheduler``
    a Dask cluster.  ``analyse=True`` also analyses each experiment once its rows are complete
    (cached beside its results, :mod:`empirical.store.analysis_cache`), on the workers.  ``progress``
    makes a :class:`~empirical.run.progress.Progress` from (points to compute, their expected cost,
    cached points).  ``costs`` overrides :func:`estimate_costs`; ``order``, if a list, receives
    the tasks' (experiment id, value) in the order they are queued (tests); ``validate=False``
    skips validating the declarations against their bounds (the caller already did);
    ``on_analysis(outcome)`` is called in this process as each analysis becomes available
    (with ``figures=True`` a fresh analysis comes with its figure's PNG bytes, drawn on the
    worker that analysed it: ``outcome.figure``; a cached one without);
    ``on_point(experiment, value)`` after each point is stored (what it raises stops the run,
    stored points kept).  Without ``progress``, ``say`` also gets one line per stored point.
    Raises :class:`~empirical.run.runner.SweepError` subclasses (one line) for what stops the whole
    run (an unwritable file, a refused worker, an unreachable scheduler); a point that raises is
    its experiment's ``Outcome.error``.
    """
    workers = default_workers() if workers is None else runner._check_workers(workers)
    run = _Run(list(exps), full, results, say or (lambda m: None), progress, analyse, costs,
               validate, on_analysis, on_point, figures)
    if order is not None:
        order.extend((t.exp_id, t.value)
                     for t in sorted(t for st in run.states.values() for t in st.points))
    run.start()
    if run.progress is not None:
        n = len(run.states)
        run.message(f"{n} experiment{'s' * (n != 1)}: {run.progress.total} point(s) to compute, "
                    f"{run.progress.cached} stored" + (", validating declarations first"
                                                       if validate and run.progress.total else ""))
    try:
        if scheduler:
            _dask(run, scheduler)
        elif workers > 1 and run.pending() > 1:
            _pool(run, min(workers, run.pending()) if not analyse else workers)
        else:
            _in_process(run)
    finally:
        run.close()
    return run.outcomes()


def write_costs(results: str | os.PathLike, path: str | os.PathLike = COSTS_FILE) -> dict:
    """Collect the per-point timings stored under ``results`` into ``path`` (the shipped
    ``point_costs.json``), merged with what is there; returns the new content.  Regenerate
    after a full ``dprates verify`` on a 2-core machine:
    ``python -m empirical.run.scheduling RESULTS``."""
    root = Path(results)
    out = _shipped_costs() if Path(path) == COSTS_FILE else {}
    for f in sorted(root.glob("*/*/*.json")):
        try:
            rec = integrity.parse_json(f.read_bytes())
            exp = get(rec["experiment"])
            v = float(rec["point"][exp.variable])
            s = float(rec["rows"][0]["seconds_per_point"])
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            continue
        for grid in ("quick", "full"):
            if v in exp.grid(grid == "full"):
                out.setdefault(exp.id, {}).setdefault(grid, {})[repr(v)] = round(s, 3)
    integrity.atomic_write_text(path, json.dumps(out, indent=1, sort_keys=True) + "\n")
    return out


if __name__ == "__main__":  # pragma: no cover
    import sys

    data = write_costs(sys.argv[1])
    print(f"{COSTS_FILE}: timings of {sum(len(g) for e in data.values() for g in e.values())} "
          f"points of {len(data)} experiments")
