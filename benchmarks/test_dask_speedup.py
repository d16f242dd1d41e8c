"""``--scheduler`` on a Dask LocalCluster gives rows identical to
a local run, and 2 workers are at least 1.8x faster than 1 on a sweep big enough to matter.

    pytest benchmarks/test_dask_speedup.py -s          # on an idle machine with >= 2 cores

The sweep: the KL paper's Algorithm 1 and 3 experiments (``kl.spider.*``, ``kl.adaptive.*``: 26
experiments, 122 points; 1051 s of point wall time in the loaded run that produced
``empirical/run/point_costs.json``, roughly 8x inflated, so about 2 minutes of compute idle), run through
:func:`empirical.run.scheduling.sweep_all` on process-based LocalClusters started by
:func:`empirical.run.scheduling.local_cluster` (one thread per worker, as ``dask worker --nthreads 1``
would be, profiler off and the event loop's monitors slowed: ``DASK_WORKER_CONFIG``), each into a
fresh results directory; the 1-worker and
2-worker clusters are timed one after the other on the same machine.  Cluster start-up is not
timed (a cluster outlives many runs); worker import of the project is (the first task imports
it).  The 1.8x target is one-sided (more is fine) and is the issue's: with longest-first
scheduling the two workers finish within one point of each other, so the ideal 2x is lost only
to the last point and to scheduling overhead.  Rows of both runs must equal those of a local
in-process run bit for bit (every executor computes with one BLAS thread).
"""
from __future__ import annotations

import json
import os
import time

import pytest

distributed = pytest.importorskip("distributed")

from empirical.run.runner import TIMING_COLUMNS
from empirical.core import experiment as registry  # noqa: E402
from empirical.run.scheduling import limit_threads, local_cluster, sweep_all   # noqa: E402

TARGET = 1.8
#: ``DPRATES_DASK_PREFIXES=kl.adaptive.n.`` (comma-separated) runs a smaller sweep, e.g. to check
#: the identical rows quickly; the speed-up is then reported, and asserted only on the default.
PREFIXES = tuple(os.environ.get("DPRATES_DASK_PREFIXES", "kl.spider.,kl.adaptive.").split(","))
DEFAULT = PREFIXES == ("kl.spider.", "kl.adaptive.")


def _experiments():
    return [e for e in registry.experiments("kl") if e.id.startswith(PREFIXES)]


def _rows(outcomes) -> dict[str, list[str]]:
    return {k: sorted(json.dumps({c: v for c, v in r.items() if c not in TIMING_COLUMNS},
                                 sort_keys=True) for r in o.rows)
            for k, o in outcomes.items()}


def _timed_cluster(n_workers: int, exps, results) -> tuple[float, dict]:
    with local_cluster(n_workers) as cluster:
        with distributed.Client(cluster) as client:
            client.wait_for_workers(n_workers)
        t0 = time.perf_counter()
        out = sweep_all(exps, results=results, scheduler=cluster.scheduler_address)
        return time.perf_counter() - t0, out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_dask_two_workers_speedup_and_identical_rows(tmp_path):
    exps = _experiments()
    assert exps and (len(exps) >= 20 or not DEFAULT), "the sweep must be big enough to matter"
    t1, one = _timed_cluster(1, exps, tmp_path / "one")
    t2, two = _timed_cluster(2, exps, tmp_path / "two")
    before = limit_threads(1)
    try:
        t0 = time.perf_counter()
        local = sweep_all(exps, results=tmp_path / "local", workers=1)
        tl = time.perf_counter() - t0
    finally:
        if before:
            limit_threads(before)
    points = sum(len(e.quick_grid) for e in exps)
    print(f"\nDask LocalCluster, {len(exps)} experiments / {points} points: 1 worker {t1:.1f} s, "
          f"2 workers {t2:.1f} s, speed-up {t1 / t2:.2f}x (target >= {TARGET}); local "
          f"in-process {tl:.1f} s (1 worker / in-process {t1 / tl:.2f}x); load average "
          f"{os.getloadavg()[0]:.1f}")
    assert _rows(one) == _rows(local) and _rows(two) == _rows(local)
    if DEFAULT:
        assert t1 / t2 >= TARGET, f"speed-up {t1 / t2:.2f}x < {TARGET}x (is the machine idle?)"
