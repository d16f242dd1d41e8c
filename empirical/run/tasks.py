"""The tasks a worker runs for the queue of :mod:`empirical.run.scheduling`: a point (BLAS capped
at one thread), an experiment's validation against its bounds, an analysis with its figure; and
how a task is handed to an executor."""
from __future__ import annotations

import heapq
import importlib
import os
from typing import TYPE_CHECKING, Callable

from empirical.core.experiment import get
from empirical.core.validation import validate_experiment
from empirical.run import points
from empirical.run.threads import _limit_once

if TYPE_CHECKING:
    from empirical.run.scheduling import _Exp, _Run, _Task


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
        points.run_experiment_code(lambda: validate_experiment(get(exp_id), full=full))
    except ValueError as exc:
        return str(exc)
    return ""


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
    return points._remote_point(exp_id, point, module)


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
