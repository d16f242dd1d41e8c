"""Fault injection: damaged result files, changed code, killed workers, unwritable directories, a
full disk, Ctrl-C and a killed parent.  In each case nothing already computed is lost and the
error (one line) names its cause."""
import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import _toy
from empirical.run.runner import TIMING_COLUMNS
from empirical.run import cluster, points, runner
from empirical.store import rows
from empirical.cli import main
from empirical.run.runner import (PointError, ResultWriteError, SchedulerError, load_rows, point_key,
                              sweep)

TESTS = Path(__file__).parent


def _strip(rows):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in TIMING_COLUMNS},
                             sort_keys=True) for r in rows)


def _file(root, v, exp=_toy.TOY):
    return root / exp.paper / exp.id / f"{point_key(exp, exp.point(v))}.json"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The toy sweep's rows, computed once."""
    return _strip(sweep(_toy.TOY, results=tmp_path_factory.mktemp("ref")))


def _tamper(path: Path) -> None:
    rec = json.loads(path.read_text())
    rec["rows"][0]["metric"] *= 1.5          # a plausible value, checksum left as it was
    path.write_text(json.dumps(rec))


def _other_point(path: Path) -> None:
    other = _file(path.parents[2], _toy.TOY.quick_grid[0])
    path.write_bytes(other.read_bytes())


DAMAGE = {
    "empty": (lambda p: p.write_bytes(b""), "empty file"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
                  "truncated or not JSON"),
    "empty object": (lambda p: p.write_text("{}"), "missing fields"),
    "list": (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
    "binary": (lambda p: p.write_bytes(b"\x00\xff\xfe"), "truncated or not JSON"),
    "tampered": (_tamper, "checksum mismatch"),
    "another point": (_other_point, "belongs to another point"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damaged_file_is_named_moved_aside_and_recomputed(tmp_path, reference, kind):
    sweep(_toy.TOY, results=tmp_path)
    v = _toy.TOY.quick_grid[3]
    path = _file(tmp_path, v)
    damage, reason = DAMAGE[kind]
    damage(path)
    said, _toy.CALLS[:] = [], []
    rows = sweep(_toy.TOY, results=tmp_path, progress=said.append)
    assert _toy.CALLS == [v], "only the damaged point is recomputed"
    assert _strip(rows) == reference
    assert (rows.stats.fresh, rows.stats.cached, rows.stats.recomputed) == (0, 5, 1)
    (msg,) = [m for m in said if "corrupt" in m]
    assert str(path) in msg and reason in msg and "\n" not in msg
    assert path.with_name(path.name + ".corrupt").exists(), "the evidence is kept, aside"


def test_load_rows_names_a_damaged_file_and_counts_it_missing(tmp_path):
    sweep(_toy.TOY, results=tmp_path)
    path = _file(tmp_path, 4.0)
    path.write_text("{")
    said = []
    rows, missing = load_rows(_toy.TOY, results=tmp_path, progress=said.append)
    assert missing == [4.0] and len(rows) == 5 * _toy.TOY.seeds
    assert len(said) == 1 and str(path) in said[0] and "dprates run toy.power_law" in said[0]


def test_figures_command_survives_a_damaged_file(tmp_path, capsys):
    sweep(_toy.TOY, results=tmp_path)
    _file(tmp_path, 4.0).write_text("")
    assert main(["figures", "--paper", "kl", "--results", str(tmp_path),
                 "--figures", str(tmp_path / "fig")]) == 0
    err = capsys.readouterr().err
    assert "empty file" in err and "toy.power_law: 1 grid points not stored" in err


def test_changed_code_recomputes_exactly_the_experiments_that_use_it(tmp_path, monkeypatch):
    mod = tmp_path / "pkg" / "fp_toy_mod.py"
    mod.parent.mkdir()
    mod.write_text("from _toy import run_power_law\n\n\ndef run(point, rngs):\n"
                   "    return run_power_law(point, rngs)\n")
    monkeypatch.syspath_prepend(str(mod.parent))
    import importlib

    from empirical.core.experiment import Experiment, register

    fp_mod = importlib.import_module("fp_toy_mod")
    exp = register(Experiment(**{**_toy.TOY.__dict__, "id": "toy.fp", "run": fp_mod.run}))
    root = tmp_path / "res"
    sweep(exp, results=root)
    sweep(_toy.TOY, results=root)
    mod.write_text(mod.read_text() + "# a change to the algorithm\n")
    said = []
    # This process still runs the code it imported (fingerprints are pinned); a new process,
    # as in the next `dprates run`, reads the changed file:
    assert sweep(exp, results=root).stats.cached == 6
    runner.forget_fingerprints()
    assert sweep(exp, results=root, progress=said.append).stats.recomputed == 6
    assert any("stale" in m and "fp_toy_mod" in m for m in said)
    assert sweep(_toy.TOY, results=root).stats.cached == 6, "other experiments are untouched"
    real = runner._package_versions()
    monkeypatch.setattr(rows, "_package_versions", lambda: {**real, "numpy": "0.0"})
    said = []
    assert sweep(_toy.TOY, results=root, progress=said.append).stats.recomputed == 6
    assert any(f"numpy {real['numpy']} -> 0.0" in m for m in said)


def test_fingerprint_covers_imported_algorithms_and_core_not_the_harness():
    fp = runner.code_fingerprint("empirical.papers.kl.experiments")["code"]
    assert {"empirical.papers.kl.experiments", "algorithms.kl.noisy_gd", "algorithms.primitives",
            "algorithms.accounting", "algorithms.base"} <= set(fp)
    assert not {"empirical.run.runner", "empirical.core.checks", "empirical.core.experiment",
                "bounds.core"} & set(fp)
    assert set(runner.code_fingerprint("_toy")["versions"]) == {"numpy", "scipy", "dp-accounting"}


def test_old_format_file_is_stale_not_corrupt(tmp_path):
    sweep(_toy.TOY, results=tmp_path)
    path = _file(tmp_path, 2.0)
    rec = json.loads(path.read_text())
    path.write_text(json.dumps({k: rec[k] for k in ("experiment", "version", "point", "rows")}))
    said = []
    rows = sweep(_toy.TOY, results=tmp_path, progress=said.append)
    assert rows.stats.recomputed == 1 and any("older dprates" in m for m in said)
    assert not path.with_name(path.name + ".corrupt").exists()


def test_result_files_are_readable_by_others(tmp_path):
    sweep(_toy.TOY, results=tmp_path)
    mode = stat.S_IMODE(_file(tmp_path, 1.0).stat().st_mode)
    assert mode & 0o044 == 0o044 & ~runner._umask()


def test_unwritable_results_fail_before_any_point(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    _toy.CALLS.clear()
    with pytest.raises(ResultWriteError, match="not writable") as info:
        sweep(_toy.TOY, results=blocker / "results")
    assert str(blocker) in str(info.value) and not _toy.CALLS
    code = main(["run", "toy.power_law", "--module", "_toy", "--results", str(blocker / "r"),
                 "--no-figures"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not _toy.CALLS
    assert err.count("\n") == 0 and err.startswith("dprates: error: argument --results:")


@pytest.mark.parametrize("workers", [1, 2])
def test_full_disk_keeps_what_was_stored_and_names_the_file(tmp_path, monkeypatch, workers):
    # runner.sweep is scheduling.sweep_all for one experiment: this covers the queue's in-process
    # and pool paths (test_scheduling had a copy of this test on sweep_all itself).
    real, calls = os.fsync, [0]

    def fsync(fd):
        calls[0] += 1
        if calls[0] >= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(ResultWriteError, match="No space left on device") as info:
        sweep(_toy.TOY, results=tmp_path, workers=workers)
    monkeypatch.setattr(os, "fsync", real)
    assert "cannot write" in str(info.value) and ".json" in str(info.value)
    assert info.value.unsaved, "the rows computed but not stored are handed back"
    rows, missing = load_rows(_toy.TOY, results=tmp_path)
    assert len(rows) == 2 * _toy.TOY.seeds and len(missing) == 4
    assert not list(tmp_path.rglob(".tmp-*")), "no partial files"
    _toy.CALLS.clear()
    again = sweep(_toy.TOY, results=tmp_path)
    assert again.stats.cached == 2 and again.stats.fresh == 4


def test_a_failing_point_is_named_and_earlier_points_kept(tmp_path, capsys):
    from empirical.run.scheduling import estimate_costs

    # In-process, the queue runs the costliest point first and stops at the failure: every
    # point run before it is stored, none is started after it.
    costs = estimate_costs([_toy.TOY_FAILS], results=tmp_path)
    queue = sorted(_toy.TOY.quick_grid, key=lambda v: (-costs[(_toy.TOY_FAILS.id, v)], v))
    _toy.CALLS.clear()
    with pytest.raises(PointError, match=r"toy\.fails at n=4: ValueError: boom"):
        sweep(_toy.TOY_FAILS, results=tmp_path)
    ran = list(_toy.CALLS)                           # run_fails_at_4 raises before recording 4
    assert ran == queue[:queue.index(4.0)] and queue.index(4.0) < len(queue) - 1
    rows, missing = load_rows(_toy.TOY_FAILS, results=tmp_path)
    assert sorted({r["p_n"] for r in rows}) == sorted(ran) and len(rows) == len(ran) * 6
    assert sorted(missing) == sorted(set(_toy.TOY.quick_grid) - set(ran))
    assert main(["run", "toy.fails", "--results", str(tmp_path), "--no-figures"]) == 1
    assert "ERROR: toy.fails at n=4: ValueError: boom" in capsys.readouterr().out


def test_killed_pool_worker_loses_only_its_point(tmp_path, monkeypatch, reference):
    monkeypatch.setenv("DPRATES_TOY_MARKER", str(tmp_path / "died"))
    said = []
    rows = sweep(_toy.TOY_DIES, results=tmp_path / "r", workers=2, progress=said.append)
    assert (tmp_path / "died").exists() and any("worker process died" in m for m in said)
    assert len(rows) == len(_toy.TOY.quick_grid) * _toy.TOY.seeds
    assert rows.stats.fresh == len(_toy.TOY.quick_grid)


# -- Dask -----------------------------------------------------------------------------------------

def test_unreachable_scheduler_fails_fast_in_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(cluster, "DASK_TIMEOUT", 1.0)
    t0 = time.monotonic()
    code = main(["run", "toy.power_law", "--module", "_toy", "--results", str(tmp_path),
                 "--scheduler", "tcp://127.0.0.1:9", "--no-figures"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and time.monotonic() - t0 < 8
    assert err.count("\n") == 0 and "argument --scheduler: cannot reach Dask scheduler" in err


def test_scheduler_without_workers_fails_fast(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(cluster, "DASK_TIMEOUT", 1.0)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as c:
        t0 = time.monotonic()
        with pytest.raises(SchedulerError, match="has no workers"):
            sweep(_toy.TOY, results=tmp_path, scheduler=c.scheduler_address)
        assert time.monotonic() - t0 < 5
    assert not list(tmp_path.rglob("*.json"))


def test_dask_worker_dying_mid_sweep_loses_only_its_points(tmp_path, monkeypatch, reference):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("DPRATES_TOY_MARKER", str(tmp_path / "died"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None, silence_logs=50) as c:
        rows = sweep(_toy.TOY_DIES, results=tmp_path / "r", scheduler=c.scheduler_address)
    assert (tmp_path / "died").exists(), "a worker really died"
    assert rows.stats.fresh == len(_toy.TOY.quick_grid)
    local = sweep(_toy.TOY_DIES, results=tmp_path / "local", workers=2)
    assert _strip(rows) == _strip(local)


# -- Ctrl-C and a killed parent (real processes) ----------------------------------------------

def _start_slow_run(tmp_path) -> tuple[subprocess.Popen, Path, Path]:
    pids, results = tmp_path / "pids", tmp_path / "results"
    pids.mkdir()
    env = {**os.environ, "DPRATES_TOY_PIDS": str(pids),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "empirical.cli", "run", "toy.slow",
                             "--module", "_toy", "--workers", "2", "--results", str(results),
                             "--no-figures"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # a shell starts commands with Ctrl-C at its default; a process
                            # started from a test run may inherit SIGINT ignored (Python then
                            # installs no KeyboardInterrupt handler at all), so restore it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not [f for f in results.rglob("*.json") if not f.name.startswith(".")]:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no point was stored within 60 s"
        time.sleep(0.05)
    return proc, pids, results


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie (killed, not yet reaped by init) is not running
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _wait_dead(pids, timeout=5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return left


def test_ctrl_c_stops_cleanly_keeping_what_was_written(tmp_path):
    proc, pids, results = _start_slow_run(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)          # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err.strip().splitlines()[-1]
    assert not _wait_dead([int(p.name) for p in pids.iterdir()])
    rows, missing = load_rows(_toy.TOY_SLOW, results=results)
    assert rows and missing and not list(results.rglob(".tmp-*"))


def test_pool_workers_end_with_their_parent(tmp_path):
    proc, pids, results = _start_slow_run(tmp_path)
    workers = [int(p.name) for p in pids.iterdir() if int(p.name) != proc.pid]
    assert workers
    proc.kill()
    proc.communicate(timeout=10)
    assert not _wait_dead(workers), "pool workers outlived their parent"


def _remote_point_elsewhere(exp_id, point, module):
    """A worker whose numpy differs from the parent's (as on a badly provisioned cluster)."""
    rows, fp = _REAL_REMOTE(exp_id, point, module)
    versions = {**fp["versions"], "numpy": "9.9.9"}
    return rows, {**fp, "digest": "0" * 16, "versions": versions}


_REAL_REMOTE = runner._remote_point


def test_a_worker_running_other_code_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(points, "_remote_point", _remote_point_elsewhere)
    with pytest.raises(runner.SweepError, match=r"worker ran different code.*numpy .* -> 9\.9\.9"):
        sweep(_toy.TOY, results=tmp_path, workers=2)
    assert not [f for f in tmp_path.rglob("*.json") if not f.name.startswith(".")]
