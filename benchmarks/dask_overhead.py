"""Where a 1-worker Dask cluster loses time against in-process (docs/performance.md, Dask).

    python benchmarks/dask_overhead.py [EXPERIMENT] [REPS]      # idle machine if you can

Runs every quick-grid point of one experiment (default kl.adaptive.n.k2) one task at a time,
REPS times (default 3), in each *arm*, the arms interleaved within each repetition so that they
see the same machine load:

* ``local``: in this process, prepared as ``dprates`` prepares itself (one BLAS thread, glibc
  keeping freed pages);
* ``dask default``: a 1-worker process LocalCluster, one thread, Dask's default configuration
  (statistical profiler on);
* ``dask no profiler``: the same with only the statistical profiler off;
* ``dask dprates``: :func:`empirical.run.scheduling.local_cluster` (what dprates starts: one thread,
  :data:`~empirical.run.scheduling.DASK_WORKER_CONFIG`: profiler off, and the event loop's periodic
  work slowed down: tick, memory and system monitors every 1-5 s).

Every task runs the same prelude as a dprates task (``scheduling._remote_point``'s one-time
thread cap and ``keep_freed_pages``).  Printed per arm: the wall inside ``run_point``, the task
thread's CPU, the client's round trip, the worker process's whole CPU while the tasks ran, and
the ratios to ``local``.  Round trip minus task wall is scheduling / serialization; worker CPU
minus task-thread CPU is what the worker's other threads (event loop, profiler, monitors) burn.
On a loaded machine compare the CPU columns and the ratios, not absolute walls.
Not a test (not collected): a measurement tool.
"""
from __future__ import annotations

import os
import sys
import time

import dask
import distributed

from empirical.core import experiment as reg
from empirical.run import runner
from empirical.run.scheduling import THREAD_VARS, keep_freed_pages, limit_threads, local_cluster

EXP = sys.argv[1] if len(sys.argv) > 1 else "kl.adaptive.n.k2"
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def task(exp_id: str, point: dict, module: str) -> tuple[float, float, float]:
    """(run_point's own seconds, this thread's CPU, the task's wall)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    limit_threads(1)
    keep_freed_pages()
    rows = runner.run_point(exp_id, point, module)
    return rows[0]["seconds_per_point"], time.thread_time() - c0, time.perf_counter() - t0


def _process_cpu() -> float:
    import psutil

    return sum(tuple(psutil.Process().cpu_times())[:2])


def local(exp) -> list[tuple]:
    out = []
    for v in exp.quick_grid:
        t0 = time.perf_counter()
        out.append(task(exp.id, exp.point(v), exp.run.__module__) + (time.perf_counter() - t0,))
    return out


def _default_cluster():
    return distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                    dashboard_address=None, silence_logs=50,
                                    env={v: "1" for v in THREAD_VARS})


def _no_profiler_cluster():
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return _default_cluster()


ARMS = {"dask default": _default_cluster, "dask no profiler": _no_profiler_cluster,
        "dask dprates": lambda: local_cluster(1)}


def cluster(exp, make) -> tuple[list[tuple], float]:
    with make() as c, distributed.Client(c) as cl:
        # warm: the worker imports the project and builds what the first point caches
        cl.submit(task, exp.id, exp.point(exp.quick_grid[0]), exp.run.__module__,
                  pure=False).result()
        (cpu0,) = cl.run(_process_cpu).values()
        out = []
        for v in exp.quick_grid:
            t0 = time.perf_counter()
            r = cl.submit(task, exp.id, exp.point(v), exp.run.__module__, pure=False).result()
            out.append(r + (time.perf_counter() - t0,))
        (cpu1,) = cl.run(_process_cpu).values()
        return out, cpu1 - cpu0


def main() -> None:
    exp = reg.get(EXP)
    limit_threads(1)
    keep_freed_pages()
    local(exp)  # warm: imports, caches
    res = {"local": [], **{k: [] for k in ARMS}}
    proc = {k: 0.0 for k in ARMS}
    for _ in range(REPS):
        res["local"] += local(exp)
        for name, make in ARMS.items():
            rows, cpu = cluster(exp, make)
            res[name] += rows
            proc[name] += cpu
    base = {i: sum(r[i] for r in res["local"]) for i in range(4)}
    print(f"{EXP}: {len(exp.quick_grid)} points x {REPS} repetitions; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'arm':16s} {'run_point wall':>15s} {'task thread CPU':>16s} {'round trip':>11s} "
          f"{'worker CPU':>11s}   wall/local  CPU/local")
    for k, rows in res.items():
        tot = {i: sum(r[i] for r in rows) for i in range(4)}
        wcpu = f"{proc[k]:10.2f}s" if k in proc else f"{'-':>11s}"
        print(f"{k:16s} {tot[0]:14.2f}s {tot[1]:15.2f}s {tot[3]:10.2f}s {wcpu}   "
              f"{tot[0] / base[0]:10.2f} {tot[1] / base[1]:10.2f}")


if __name__ == "__main__":
    main()
