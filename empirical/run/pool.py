"""Executors on this machine: in the calling process, or a local process pool whose workers die
with their parent and are replaced (:data:`POOL_RESTARTS` times) when one is killed.  The queue
they drain is :mod:`empirical.run.scheduling`'s."""
from __future__ import annotations

import heapq
import os
import signal
import sys
import threading
import time
from concurrent.futures import BrokenExecutor, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING

from empirical.run.points import PointError, run_point
from empirical.run.tasks import _call, _feed
from empirical.run.threads import keep_freed_pages, limit_threads
from empirical.store.rows import SweepError

if TYPE_CHECKING:
    from empirical.run.scheduling import _Run, _Task


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
    # executor (empirical.run.threads.limit_threads).
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


def _in_process(run: _Run) -> None:
    while run.queue:
        task = heapq.heappop(run.queue)
        st = run.states[task.exp_id]
        if task.kind != "point":
            fn, args = _call(task, st)
            run.handle(task, lambda: fn(*args))
            continue

        def compute(task=task, st=st):
            return run_point(task.exp_id, st.exp.point(task.value), st.module), None

        run.handle(task, compute)


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
    for attempt in range(POOL_RESTARTS + 1):
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_pool_init,
                                   initargs=(os.getpid(),))
        in_flight: dict[Future, _Task] = {}
        try:
            # One extra task in flight so that a worker finds its next task waiting.
            _drain_pool(run, pool, in_flight, workers + 1)
        except BrokenExecutor as exc:
            _terminate_pool(pool)
            _salvage(run, in_flight)
            if attempt == POOL_RESTARTS:
                first = min(run.queue) if run.queue else None
                raise PointError(f"a pool worker died {attempt + 1} times "
                                 f"({type(exc).__name__}); {len(run.queue)} task(s) not run"
                                 + (f" (first {first.exp_id} at {first.value:g})"
                                    if first else "") + "; stored points kept") from None
            run.message(f"a worker process died; retrying {len(run.queue)} task(s) in a new "
                        "pool")
            continue
        except BaseException:
            _terminate_pool(pool)
            raise
        pool.shutdown(wait=True)
        return
