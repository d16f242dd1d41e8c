"""Runner: seeding, determinism across executors, atomic storage, resumption."""
import json

import numpy as np
import pytest

import _toy
from empirical.run.runner import TIMING_COLUMNS
from empirical.core import experiment as registry
from empirical.core.checks import analyse
from empirical.run.runner import load_rows, point_key, run_point, seed_generators, sweep


def test_seed_generators_depend_only_on_experiment_point_and_repetition():
    a = seed_generators("e", {"n": 1.0}, 3)
    b = seed_generators("e", {"n": 1.0}, 5)
    for ga, gb in zip(a, b):
        assert ga.standard_normal() == gb.standard_normal()
    c = seed_generators("e", {"n": 2.0}, 1)[0].standard_normal()
    e2 = seed_generators("f", {"n": 1.0}, 1)[0].standard_normal()
    first = seed_generators("e", {"n": 1.0}, 1)[0].standard_normal()
    assert len({c, e2, first}) == 3


def test_same_seed_same_rows():
    p = _toy.TOY.point(4.0)
    assert _strip(run_point(_toy.TOY.id, p)) == _strip(run_point(_toy.TOY.id, p))


def _strip(rows):
    return sorted((json.dumps({k: v for k, v in r.items() if k not in TIMING_COLUMNS},
                              sort_keys=True) for r in rows))


def test_identical_rows_in_process_pool_and_dask(tmp_path):
    local = sweep(_toy.TOY, results=tmp_path / "a")
    pooled = sweep(_toy.TOY, results=tmp_path / "b", workers=2)
    assert _strip(local) == _strip(pooled)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        dask_rows = sweep(_toy.TOY, results=tmp_path / "c", scheduler=cluster.scheduler_address)
    assert _strip(local) == _strip(dask_rows)
    assert len(local) == len(_toy.TOY.quick_grid) * _toy.TOY.seeds


def test_interrupted_sweep_resumes_without_redoing_or_losing_points(tmp_path):
    class Killed(Exception):
        pass

    def kill_after_three(v, count=[0]):
        count[0] += 1
        if count[0] == 3:
            raise Killed

    _toy.CALLS.clear()
    with pytest.raises(Killed):
        sweep(_toy.TOY, results=tmp_path, on_point_done=kill_after_three)
    rows, missing = load_rows(_toy.TOY, results=tmp_path)
    assert len(missing) == len(_toy.TOY.quick_grid) - 3 and len(rows) == 3 * _toy.TOY.seeds
    assert not list(tmp_path.rglob(".tmp-*")), "no partial files left behind"
    _toy.CALLS.clear()
    resumed = sweep(_toy.TOY, results=tmp_path)
    assert sorted(_toy.CALLS) == sorted(missing), "only the missing points are recomputed"
    fresh = sweep(_toy.TOY, results=tmp_path / "fresh")
    assert _strip(resumed) == _strip(fresh)


def test_result_files_keyed_by_version_and_point(tmp_path):
    sweep(_toy.TOY, results=tmp_path)
    files = sorted(p.name for p in (tmp_path / "kl" / _toy.TOY.id).glob("*.json"))
    assert files == sorted(f"{point_key(_toy.TOY, _toy.TOY.point(v))}.json" for v in _toy.TOY.quick_grid)


def test_toy_analysis_recovers_its_slope(tmp_path):
    rows = sweep(_toy.TOY, results=tmp_path)
    a = analyse(_toy.TOY, rows)
    assert a.fit.covers(-1.5) and abs(a.fit.slope + 1.5) < 0.15
    (res,) = a.results
    assert res.asymptotic == -1.5 and res.local == pytest.approx(-1.5) and res.verdict == "PASS"


def test_bad_sweep_parameters(tmp_path):
    with pytest.raises(ValueError, match="workers"):
        sweep(_toy.TOY, results=tmp_path, workers=0)
    with pytest.raises(KeyError, match="no experiment"):
        registry.get("toy.nope")


def test_experiment_declaration_is_validated():
    base = dict(id="toy.bad", paper="kl", title="t", variable="x", quick_grid=(1, 2, 3),
                full_grid=(1, 2, 3), fixed={}, seeds=3, run=_toy.run_power_law, metric="m",
                bound_values=lambda p: p,
                checks=(registry.Check("kl:thm9", "two-sided", 0.1, "why"),))
    with pytest.raises(ValueError, match="3 grid points"):
        registry.Experiment(**{**base, "quick_grid": (1, 2)})
    with pytest.raises(ValueError, match="seeds"):
        registry.Experiment(**{**base, "seeds": 1})
    with pytest.raises(ValueError, match="reason"):
        registry.Check("kl:thm9", "two-sided", 0.1, "  ")
    with pytest.raises(ValueError, match="tolerance"):
        registry.Check("kl:thm9", "two-sided", 0.0, "why")
    with pytest.raises(ValueError, match="kind"):
        registry.Check("kl:thm9", "sideways", 0.1, "why")
