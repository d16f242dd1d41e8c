"""One task queue for all experiments (empirical/run/scheduling.py): rows identical to direct
run_point calls on every executor, longest first, failures confined to their experiment,
analyses cached and invalidated, progress readable on a terminal and in a log."""
import io
import json

import numpy as np
import pytest

import _toy
from empirical.run.runner import TIMING_COLUMNS
from empirical.store import analysis_cache
from empirical.run import runner
from empirical.core import experiment as registry
from empirical.run.progress import Progress, format_seconds
from empirical.run.runner import SweepError, point_key, sweep
from empirical.run.scheduling import (default_workers, estimate_costs, limit_threads, sweep_all)

#: A real (paper) experiment small enough for the default run (about a second on an idle
#: 2-core machine): Algorithm 3 of the KL paper at d = 1, with its privacy filter and stops.
REAL = "kl.adaptive.n.k2_d1"


def _strip(rows):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in TIMING_COLUMNS},
                             sort_keys=True) for r in rows)


@pytest.fixture
def one_blas_thread():
    """dprates computes every row with one BLAS thread (scheduling.limit_threads); restore the
    test process's count afterwards."""
    before = limit_threads(1)
    yield
    if before:
        limit_threads(before)


def _run_points(exp):
    """The reference: ``run_point`` of every grid point in this process, no queue, no storage
    (what the per-experiment runner did before ``sweep`` became a wrapper of ``sweep_all``)."""
    return [r for v in exp.quick_grid
            for r in runner.run_point(exp.id, exp.point(v), exp.run.__module__)]


@pytest.fixture(scope="module")
def real_rows():
    """REAL's rows by direct run_point calls, computed once, one BLAS thread."""
    before = limit_threads(1)
    try:
        return _run_points(registry.get(REAL))
    finally:
        if before:
            limit_threads(before)


def test_rows_identical_to_direct_run_point_on_every_executor(tmp_path, one_blas_thread,
                                                               real_rows):
    exps = [_toy.TOY, registry.get(REAL)]
    old = {_toy.TOY.id: _strip(_run_points(_toy.TOY)), REAL: _strip(real_rows)}
    # In-process the queue calls the same run_point: the toy suffices there (and runner.sweep,
    # a wrapper of the queue, gives the same rows).
    inproc = sweep_all([_toy.TOY], results=tmp_path / "in", workers=1)
    assert _strip(inproc[_toy.TOY.id].rows) == old[_toy.TOY.id], "in-process"
    assert _strip(sweep(_toy.TOY, results=tmp_path / "sweep", workers=2)) == old[_toy.TOY.id]
    pooled = sweep_all(exps, results=tmp_path / "pool", workers=2)
    for e in exps:
        assert _strip(pooled[e.id].rows) == old[e.id], f"{e.id}: pool"
    distributed = pytest.importorskip("distributed")
    from empirical.run.scheduling import local_cluster

    # The cluster dprates starts (one thread a worker, profiler off); in-process workers here
    # (cheap to start), which also take the config active at their start.
    with local_cluster(2, processes=False) as cluster:
        with distributed.Client(cluster) as client:
            # the profiler's 10 ms stack sampling is what made a 1-worker cluster slow
            assert not any(client.run(lambda dask_worker: "profile" in
                                      dask_worker.periodic_callbacks).values())
            assert set(client.nthreads().values()) == {1}
        dask = sweep_all(exps, results=tmp_path / "dask", scheduler=cluster.scheduler_address,
                         analyse=True)
    for e in exps:
        assert _strip(dask[e.id].rows) == old[e.id], f"{e.id}: Dask"
        # ... and the analysis made on a worker is the one made here.
        here = analysis_cache.analyse_quietly(e, list(dask[e.id].rows))
        assert analysis_cache.encode(dask[e.id].analysis) == analysis_cache.encode(here)
    # Stored files are the same records (checksummed, fingerprinted) whatever the executor.
    for e in exps:
        for v in e.quick_grid:
            name = f"{point_key(e, e.point(v))}.json"
            a = json.loads((tmp_path / "dask" / e.paper / e.id / name).read_text())
            b = json.loads((tmp_path / "pool" / e.paper / e.id / name).read_text())
            assert a["fingerprint"] == b["fingerprint"] and a["point"] == b["point"]


def test_blas_thread_count_changes_the_bits_so_every_executor_uses_one(one_blas_thread):
    """Why the cap is not only about speed: the same dot product at 1 and 2 OpenBLAS threads."""
    x = np.random.default_rng(1).standard_normal(2_000_000)
    one = x @ x
    if not limit_threads(2):
        pytest.skip("no OpenBLAS with a thread setter in this numpy")
    two = x @ x
    limit_threads(1)
    assert one == pytest.approx(two, rel=1e-12)
    # Not asserted to differ (a single-core build would not); recorded in the docstring above.


def test_longest_point_first_across_experiments(tmp_path):
    costs = {(e.id, v): c for e, c0 in ((_toy.TOY, 1.0), (_toy.TOY_WRONG, 10.0))
             for v, c in zip(e.quick_grid, np.arange(6) * c0)}
    order = []
    sweep_all([_toy.TOY, _toy.TOY_WRONG], results=tmp_path, workers=1, costs=costs, order=order)
    want = sorted(costs, key=lambda k: -costs[k])
    assert [c for c in (costs[k] for k in order)] == [costs[k] for k in want]
    assert order[0] == (_toy.TOY_WRONG.id, 32.0)


def test_costs_come_from_stored_timings_then_a_size_heuristic(tmp_path):
    sweep(_toy.TOY, results=tmp_path)
    # Rewrite two stored timings: the estimate must use them and extrapolate the others.
    for v, s in ((1.0, 2.0), (4.0, 8.0)):
        path = tmp_path / "kl" / _toy.TOY.id / f"{point_key(_toy.TOY, _toy.TOY.point(v))}.json"
        rec = json.loads(path.read_text())
        for r in rec["rows"]:
            r["seconds_per_point"] = s
        path.write_text(json.dumps(rec))
    for v in (2.0, 8.0, 16.0, 32.0):
        (tmp_path / "kl" / _toy.TOY.id / f"{point_key(_toy.TOY, _toy.TOY.point(v))}.json"
         ).unlink()
    est = estimate_costs([_toy.TOY], results=tmp_path)
    assert est[(_toy.TOY.id, 1.0)] == 2.0 and est[(_toy.TOY.id, 4.0)] == 8.0
    assert est[(_toy.TOY.id, 32.0)] == pytest.approx(64.0)      # log-log line through the two
    fresh = estimate_costs([_toy.TOY], results=tmp_path / "none")   # nothing stored: n is a size
    assert fresh[(_toy.TOY.id, 32.0)] > fresh[(_toy.TOY.id, 1.0)]


def test_a_failing_point_fails_only_its_experiment(tmp_path):
    out = sweep_all([_toy.TOY_FAILS, _toy.TOY], results=tmp_path, workers=2)
    assert "toy.fails at n=4: ValueError: boom" in str(out[_toy.TOY_FAILS.id].error)
    assert out[_toy.TOY_FAILS.id].rows is None
    assert len(out[_toy.TOY.id].rows) == 6 * _toy.TOY.seeds and out[_toy.TOY.id].error is None


def test_worker_running_other_code_stops_the_run(tmp_path, monkeypatch):
    real = runner._remote_point

    def elsewhere(exp_id, point, module):
        rows, fp = real(exp_id, point, module)
        return rows, {**fp, "digest": "0" * 16, "versions": {**fp["versions"], "numpy": "9"}}

    from empirical.run import points

    monkeypatch.setattr(points, "_remote_point", elsewhere)
    with pytest.raises(SweepError, match="worker ran different code"):
        sweep_all([_toy.TOY], results=tmp_path, workers=2)


def test_killed_worker_is_retried_in_a_new_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("DPRATES_TOY_MARKER", str(tmp_path / "died"))
    said = []
    out = sweep_all([_toy.TOY_DIES, _toy.TOY], results=tmp_path / "r", workers=2,
                    say=said.append)
    assert (tmp_path / "died").exists() and any("worker process died" in m for m in said)
    assert all(o.rows is not None and len(o.rows) == 6 * _toy.TOY.seeds for o in out.values()), \
        {k: (str(o.error), str(o.stats)) for k, o in out.items()}


def test_a_worker_validation_is_not_redone_in_this_process(tmp_path, monkeypatch):
    """The conftest pre-sweep validates on the pool; the test modules' later runner.sweep calls
    must not validate again (kl.regr.n.k4_3 alone takes 30 CPU-s to validate)."""
    from empirical.run import tasks

    # both grids' marks: an earlier test in this process may have validated the toy's full grid
    monkeypatch.delitem(registry._VALIDATED, (id(_toy.TOY), False), raising=False)
    monkeypatch.delitem(registry._VALIDATED, (id(_toy.TOY), True), raising=False)
    sweep_all([_toy.TOY], results=tmp_path / "a", workers=2)
    assert registry.is_validated(_toy.TOY)

    def must_not_run(*a, **k):
        raise AssertionError("validated twice")

    monkeypatch.setattr(tasks, "_remote_validate", must_not_run)
    out = sweep_all([_toy.TOY], results=tmp_path / "b", workers=1)
    assert not out[_toy.TOY.id].invalid and len(out[_toy.TOY.id].rows) == 6 * _toy.TOY.seeds
    assert sweep(_toy.TOY, results=tmp_path / "b").stats.cached == 6
    # A copy that is not the registered object is validated again (the worker saw get(id)).
    import dataclasses

    copy = dataclasses.replace(_toy.TOY)
    assert not registry.is_validated(copy)
    assert not registry.mark_validated(copy) and not registry.is_validated(copy)
    assert not registry.is_validated(_toy.TOY, full=True)     # per grid


def test_default_workers_is_the_usable_cores():
    import os

    assert default_workers() == len(os.sched_getaffinity(0))


# -- analyses cached beside their results ------------------------------------------------------

def test_analysis_cached_reused_and_invalidated(tmp_path):
    first = sweep_all([_toy.TOY], results=tmp_path, workers=1, analyse=True)[_toy.TOY.id]
    assert not first.analysis_cached and first.analysis.results[0].verdict == "PASS"
    again = sweep_all([_toy.TOY], results=tmp_path, workers=1, analyse=True)[_toy.TOY.id]
    assert again.analysis_cached
    assert analysis_cache.encode(again.analysis) == analysis_cache.encode(first.analysis)
    # Changed rows (one stored metric) -> a refit, not the cached verdict.
    rows = [dict(r) for r in first.rows]
    rows[0]["metric"] *= 2
    a, hit = analysis_cache.cached_analyse(_toy.TOY, rows, results=tmp_path)
    assert not hit and a.fit.slope != first.analysis.fit.slope
    # The quick and full grids do not share a cache.
    assert not analysis_cache.cached_analyse(_toy.TOY, list(first.rows), full=True,
                                             results=tmp_path)[1]


def test_analysis_invalidated_when_its_code_changes(tmp_path, monkeypatch):
    mod = tmp_path / "pkg" / "ac_toy_decl.py"
    mod.parent.mkdir()
    mod.write_text("def values(p):\n    return {'n': p['n']}\n")
    monkeypatch.syspath_prepend(str(mod.parent))
    import importlib

    decl = importlib.import_module("ac_toy_decl")
    exp = registry.Experiment(**{**_toy.TOY.__dict__, "id": "toy.ac", "bound_values": decl.values})
    rows = [{**r, "experiment": exp.id} for r in sweep(_toy.TOY, results=tmp_path / "r")]
    key = analysis_cache.analysis_key(exp, rows, False)
    mod.write_text(mod.read_text() + "# a changed tolerance, say\n")
    assert analysis_cache.analysis_key(exp, rows, False) == key, "pinned in this process"
    runner.forget_fingerprints()
    assert analysis_cache.analysis_key(exp, rows, False) != key


def test_cache_round_trip_is_exact_and_runs_no_code(real_rows):
    exp = registry.get(REAL)
    rows = real_rows
    a = analysis_cache.analyse_quietly(exp, list(rows))
    data = json.loads(json.dumps(analysis_cache.encode(a)))
    b = analysis_cache.decode(data)
    assert b.experiment is exp and b.fit.slope == a.fit.slope
    assert [(r.verdict, r.local, r.observed.ci_low) for r in b.results] == \
        [(r.verdict, r.local, r.observed.ci_low) for r in a.results]
    assert analysis_cache.encode(b) == analysis_cache.encode(a)
    assert all(np.array_equal(a.per_point[k], b.per_point[k]) for k in a.per_point)
    with pytest.raises(ValueError, match="not a cached type"):      # only the three dataclasses
        analysis_cache.decode({"$dc": "Popen", "f": {"args": "rm -rf /"}})


def test_damaged_cache_is_a_miss(tmp_path):
    sweep_all([_toy.TOY], results=tmp_path, workers=1, analyse=True)
    path = analysis_cache.cache_path(_toy.TOY, False, tmp_path)
    path.write_text("{not json")
    out = sweep_all([_toy.TOY], results=tmp_path, workers=1, analyse=True)[_toy.TOY.id]
    assert not out.analysis_cached and out.analysis.results[0].verdict == "PASS"
    assert json.loads(path.read_text())["key"], "rewritten"


# -- progress ---------------------------------------------------------------------------------

class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_progress_in_a_log_is_plain_periodic_lines():
    out, clock = io.StringIO(), _Clock()
    p = Progress(10, total_cost=20.0, cached=3, stream=out, tty=False, interval=10, clock=clock)
    for i in range(10):
        clock.t += 3.0
        p.advance(1, cost=4.0 if i < 3 else 8 / 7)     # expensive points first
    p.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0] == "points 1/10 (10%), 3 cached, 3s elapsed, ~12s left"
    assert lines[-1] == "points 10/10 (100%), 3 cached, 30s elapsed"
    assert len(lines) == 4, lines       # t = 3, 15, 27 and the end: at most one per 10 s


def test_progress_on_a_terminal_updates_one_line_in_place():
    out, clock = io.StringIO(), _Clock()
    p = Progress(4, stream=out, tty=True, min_redraw=0.0, clock=clock)
    for _ in range(2):
        clock.t += 65
        p.advance()
    p.say("kl.x: a corrupt file, moved aside")
    clock.t += 65
    p.advance()
    p.advance()
    p.close()
    text = out.getvalue()
    assert text.count("\n") == 2, "one message line and the final newline"
    assert "\rpoints 2/4 (50%), 2m10s elapsed, ~2m10s left" in text
    assert "kl.x: a corrupt file, moved aside\n" in text
    assert text.rstrip("\n").rsplit("\r", 1)[-1].startswith("points 4/4 (100%), 3m15s elapsed")


def test_format_seconds_and_bad_totals():
    assert [format_seconds(s) for s in (4.4, 187, 3725)] == ["4s", "3m07s", "1h02m"]
    with pytest.raises(ValueError, match="total"):
        Progress(-1)
    with pytest.raises(ValueError, match="interval"):
        Progress(1, interval=0)


def test_interrupted_queue_resumes_without_redoing_points(tmp_path):
    class Interrupt(Progress):
        def advance(self, n=1, cost=None):
            super().advance(n, cost)
            if self.done == 3:
                raise KeyboardInterrupt

    exps = [_toy.TOY, _toy.TOY_WRONG]
    with pytest.raises(KeyboardInterrupt):
        sweep_all(exps, results=tmp_path, workers=1,
                  progress=lambda n, c, k: Interrupt(n, total_cost=c, cached=k,
                                                     stream=io.StringIO()))
    assert not list(tmp_path.rglob(".tmp-*")), "no partial files"
    _toy.CALLS.clear()
    out = sweep_all(exps, results=tmp_path, workers=1)
    assert sum(o.stats.cached for o in out.values()) == 3 and len(_toy.CALLS) == 9
    fresh = sweep_all(exps, results=tmp_path / "fresh", workers=1)
    assert all(_strip(out[k].rows) == _strip(fresh[k].rows) for k in out)


def test_comparison_analyses_are_cached_too():
    """Real-data experiments return a ComparisonAnalysis (extra ``columns``, contrast results):
    the cache writes any dataclass of empirical.core.checks / fitting, and nothing else."""
    from empirical.core.checks import ComparisonAnalysis

    a = ComparisonAnalysis(_toy.TOY, None, (), (1.0,), (), {1.0: np.ones(3)},
                           columns={1.0: {"acc": np.array([0.5, 0.75, np.nan])}})
    b = analysis_cache.decode(json.loads(json.dumps(analysis_cache.encode(a))))
    assert type(b) is ComparisonAnalysis and b.experiment is _toy.TOY
    assert np.array_equal(b.columns[1.0]["acc"], a.columns[1.0]["acc"], equal_nan=True)
    with pytest.raises(TypeError, match="cannot cache"):
        analysis_cache.encode(Progress(1))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_local_cluster_rejects_a_bad_worker_count(bad):
    from empirical.run.scheduling import local_cluster

    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="n_workers must be an integer >= 1"):
        local_cluster(bad)
