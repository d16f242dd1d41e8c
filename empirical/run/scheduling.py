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

The parts live apart: the expected costs in :mod:`empirical.run.costs`, the tasks a worker
runs in :mod:`empirical.run.tasks`, one point's computation in :mod:`empirical.run.points`, the
executors in :mod:`empirical.run.pool` (in-process, local pool) and :mod:`empirical.run.cluster`
(Dask), BLAS threads in :mod:`empirical.run.threads`; this module holds the queue and its entry
point (and re-exports the names it had before).

Rows do not depend on the executor or the order (seeds come from (experiment, point,
repetition) only; tests compare them bit for bit with the per-experiment path).
"""
from __future__ import annotations

import heapq
import math
import os
from concurrent.futures import BrokenExecutor, CancelledError
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from empirical.core import experiment as registry
from empirical.core.experiment import Experiment
from empirical.run.cluster import DASK_WORKER_CONFIG, _dask, local_cluster
from empirical.run.costs import COSTS_FILE, _DEFAULT_COST, estimate_costs, write_costs
from empirical.run.points import (PointError, SweepRows, SweepStats, _check_workers,
                                  _point_error)
from empirical.run.pool import _in_process, _pool
from empirical.run.progress import Progress
from empirical.run.tasks import _call, _remote_analysis, _remote_point, _remote_validate  # noqa: F401
from empirical.run.threads import THREAD_VARS, default_workers, keep_freed_pages, limit_threads
from empirical.store.rows import (ResultWriteError, SweepError, _atomic_write_json,
                                  _fingerprint_change, _point_path, _record, _scan,
                                  check_writable, experiment_fingerprint, results_dir)

__all__ = ["default_workers", "limit_threads", "keep_freed_pages", "estimate_costs", "sweep_all", "Outcome",
           "COSTS_FILE", "THREAD_VARS", "DASK_WORKER_CONFIG", "local_cluster", "write_costs"]

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
        self.full, self.root, self.say = full, results_dir(results), say
        self.validate, self.on_analysis, self.on_point = validate, on_analysis, on_point
        self.figures = figures
        # Without a progress bar, ``say`` gets a line per stored point (sweep's log).
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
        check_writable(self.root / exp.paper / exp.id)
        module = exp.run.__module__
        fp = experiment_fingerprint(exp)
        grid = exp.grid(self.full)
        scan = _scan(exp, grid, self.root, fp, self.message, recompute_hint="recomputing")
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
                             f"({_fingerprint_change(fp, worker_fp)}); install the same "
                             "project and package versions on every worker")
        point = exp.point(task.value)
        path = _point_path(self.root, exp, point)
        try:
            _atomic_write_json(path, _record(exp, point, rows, fp))
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
            st.outcome.error = _point_error(st.exp, task.value, exc)
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
    workers = default_workers() if workers is None else _check_workers(workers)
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


if __name__ == "__main__":  # pragma: no cover
    import sys

    data = write_costs(sys.argv[1])
    print(f"{COSTS_FILE}: timings of {sum(len(g) for e in data.values() for g in e.values())} "
          f"points of {len(data)} experiments")
