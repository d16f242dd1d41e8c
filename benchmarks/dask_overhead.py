"""Where a 1-worker Dask cluster loses time against in-process (docs/performance.md, Dask).

    python benchmarks/dask_overhead.py [EXPERIMENT] [REPS]      # idle machine

Runs every quick-grid point of one experiment (default kl.adaptive.n.k2_d1) in this process and
on fresh 1-worker process LocalClusters with Dask's statistical profiler on and off, one task
at a time, and prints per arm: wall inside run_point, the task thread's CPU, the task's wall,
the client's round trip, and the worker process's whole CPU during the tasks.  Round trip minus
task wall is the scheduling / serialization cost; worker CPU minus task-thread CPU is what the
worker's other threads (event loop, profiler, monitors) burn while the task runs.
Not a test (not collected): a measurement tool.
"""
import os, sys, time, statistics
import dask, distributed
from empirical import experiment as reg, runner
from empirical.scheduling import limit_threads

EXP = sys.argv[1] if len(sys.argv) > 1 else "kl.adaptive.n.k2_d1"
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 2

def task(exp_id, point, module):
    t0, c0 = time.perf_counter(), time.thread_time()
    limit_threads(1)
    rows = runner.run_point(exp_id, point, module)
    return rows[0]["seconds_per_point"], time.thread_time() - c0, time.perf_counter() - t0

def local(exp):
    out = []
    for v in exp.quick_grid:
        out.append(task(exp.id, exp.point(v), exp.run.__module__))
    return out

def cluster(exp, profile):
    with dask.config.set({"distributed.worker.profile.enabled": profile}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=50,
                                      env={"OPENBLAS_NUM_THREADS": "1"}) as c, \
             distributed.Client(c) as cl:
            cl.submit(task, exp.id, exp.point(exp.quick_grid[0]), exp.run.__module__, pure=False).result()  # warm import
            import psutil
            cpu0 = cl.run(lambda: tuple(psutil.Process().cpu_times())[:2])
            out = []
            for v in exp.quick_grid:
                t0 = time.perf_counter()
                r = cl.submit(task, exp.id, exp.point(v), exp.run.__module__, pure=False).result()
                out.append(r + (time.perf_counter() - t0,))
            cpu1 = cl.run(lambda: tuple(psutil.Process().cpu_times())[:2])
            (a,), (b,) = cpu0.values(), cpu1.values()
            print(f"  worker process CPU during tasks {sum(b) - sum(a):.2f}s; task threads' CPU {sum(r[1] for r in out):.2f}s (profile {profile})")
            return out

def main():
    exp = reg.get(EXP)
    limit_threads(1)
    local(exp)  # warm
    res = {"local": [], "dask profile on": [], "dask profile off": []}
    for rep in range(REPS):
        res["local"] += local(exp)
        res["dask profile on"] += cluster(exp, True)
        res["dask profile off"] += cluster(exp, False)
    for k, rows in res.items():
        sp = sum(r[0] for r in rows); cpu = sum(r[1] for r in rows); inner = sum(r[2] for r in rows)
        rt = sum(r[3] for r in rows) if len(rows[0]) > 3 else inner
        print(f"{k:18s} run_point wall {sp:7.2f}s  task thread-CPU {cpu:7.2f}s  task wall {inner:7.2f}s  client round trip {rt:7.2f}s")
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
