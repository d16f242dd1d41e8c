"""Dask executors: the scheduler address, the connection (bounded in time), a watch on a
cluster that lost its workers, and :func:`local_cluster` for a cluster dprates starts itself."""
from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Callable

from empirical.run.tasks import _feed
from empirical.run.threads import THREAD_VARS
from empirical.store.rows import SweepError

if TYPE_CHECKING:
    from empirical.run.scheduling import _Run


#: Seconds a Dask scheduler gets to answer, and then to show at least one worker.
DASK_TIMEOUT = 5.0


class SchedulerError(SweepError):
    """The Dask scheduler is unreachable, has no workers, or lost all of them."""


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
    client = connect(address)
    grace = 3 * DASK_TIMEOUT if grace is None else grace
    run.same_code_validates = False
    try:
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())

        def submit(fn, *args):
            # pure=False: every submission runs; a worker that dies takes only its running
            # tasks with it and the scheduler reschedules them.
            return client.submit(fn, *args, pure=False)

        _drain_dask(run, submit, WorkerWatch(client, grace), max(2, 2 * threads))
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
