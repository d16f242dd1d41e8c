"""Running sweeps: seeding, executors, atomic storage and resumption.

Seeds: repetition r of point p of experiment e uses
``Generator(PCG64(SeedSequence([h(e), h(p), r])))`` with h a SHA-256 digest of the experiment id
and of the point's parameter values.  A row's numbers therefore depend only on (e, p, r): not on
the grid it sits in, on how many seeds share the batch, or on the executor (in-process, a local
process pool, or a Dask cluster).

Storage: one JSON file per completed point under ``results/<paper>/<experiment>/<key>.json``,
written to a temporary file and renamed into place, so a killed sweep leaves only complete
points and a rerun skips them.  The key hashes the experiment id and version, the point and the
number of seeds, so a changed algorithm (bump ``Experiment.version``) or grid is never confused
with old results.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from empirical.experiment import Experiment, get

__all__ = ["seed_generators", "point_key", "run_point", "sweep", "load_rows", "results_dir"]


def results_dir(path: str | os.PathLike | None = None) -> Path:
    """``path``, else $DPRATES_RESULTS, else ./results."""
    return Path(path or os.environ.get("DPRATES_RESULTS", "results"))


def _digest(obj) -> int:
    blob = json.dumps(obj, sort_keys=True, default=float).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little")


def seed_generators(exp_id: str, point: dict, seeds: int) -> list[np.random.Generator]:
    """One generator per repetition, from ``SeedSequence([h(experiment), h(point), r])``."""
    e, p = _digest(exp_id), _digest(point)
    return [np.random.Generator(np.random.PCG64(np.random.SeedSequence([e, p, r])))
            for r in range(seeds)]


def point_key(exp: Experiment, point: dict) -> str:
    blob = {"experiment": exp.id, "version": exp.version, "point": point, "seeds": exp.seeds}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=float).encode()).hexdigest()[:16]


def _jsonable(v):
    a = np.asarray(v)
    if a.dtype.kind in "fc":
        return [None if not math.isfinite(x) else float(x) for x in a.astype(float).ravel()]
    if a.dtype.kind in "iub":
        return [int(x) for x in a.ravel()]
    return [str(x) for x in a.ravel()]


def run_point(exp_id: str, point: dict, module: str | None = None) -> list[dict]:
    """Run every seed of one point; return long-format rows (one per seed).

    Module-level and keyed by ids so it pickles to process pools and Dask workers; ``module``
    (the module defining the experiment) is imported first so that a fresh worker registers it.
    """
    if module:
        importlib.import_module(module)
    exp = get(exp_id)
    gens = seed_generators(exp.id, point, exp.seeds)
    t0 = time.perf_counter()
    out = exp.run(dict(point), gens)
    elapsed = time.perf_counter() - t0
    if exp.metric not in out:
        raise ValueError(f"{exp.id}: run() returned no {exp.metric!r} column")
    cols = {k: _jsonable(v) for k, v in out.items()}
    for k, v in cols.items():
        if len(v) != exp.seeds:
            raise ValueError(f"{exp.id}: column {k!r} has {len(v)} entries, expected {exp.seeds}")
    rows = []
    for r in range(exp.seeds):
        row = {"experiment": exp.id, "seed": r, **{f"p_{k}": v for k, v in point.items()}}
        row.update({k: v[r] for k, v in cols.items()})
        row["seconds_per_point"] = elapsed
        rows.append(row)
    return rows


def _atomic_write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _point_path(root: Path, exp: Experiment, point: dict) -> Path:
    return root / exp.paper / exp.id / f"{point_key(exp, point)}.json"


def load_rows(exp: Experiment, *, full: bool = False, results: str | os.PathLike | None = None
              ) -> tuple[list[dict], list[float]]:
    """Stored rows of the grid's completed points, and the grid values still missing."""
    root = results_dir(results)
    rows, missing = [], []
    for v in exp.grid(full):
        path = _point_path(root, exp, exp.point(v))
        if path.exists():
            rows.extend(json.loads(path.read_text())["rows"])
        else:
            missing.append(v)
    return rows, missing


def sweep(exp: Experiment, *, full: bool = False, workers: int = 1, scheduler: str | None = None,
          results: str | os.PathLike | None = None, progress: Callable[[str], None] | None = None,
          on_point_done: Callable[[float], None] | None = None) -> list[dict]:
    """Run the missing points of ``exp``'s grid and return all its rows.

    ``workers`` > 1 uses a local process pool; ``scheduler`` (a Dask scheduler address, e.g.
    ``tcp://host:8786``) runs the points on that cluster instead.  Each point is stored as soon
    as it completes.  ``on_point_done`` is called after each store (tests use it to interrupt).
    """
    if workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers}")
    root = results_dir(results)
    say = progress or (lambda msg: None)
    todo = [v for v in exp.grid(full) if not _point_path(root, exp, exp.point(v)).exists()]
    grid = exp.grid(full)
    done = len(grid) - len(todo)
    if done:
        say(f"[{exp.id}] {done}/{len(grid)} points already stored, resuming")

    def store(v, rows):
        nonlocal done
        point = exp.point(v)
        _atomic_write_json(_point_path(root, exp, point),
                           {"experiment": exp.id, "version": exp.version, "point": point,
                            "rows": rows})
        done += 1
        say(f"[{exp.id}] {done}/{len(grid)} {exp.variable}={v:g} "
            f"({rows[0]['seconds_per_point']:.1f}s)")
        if on_point_done is not None:
            on_point_done(v)

    if not todo:
        pass
    elif scheduler:
        from dask.distributed import Client, as_completed as dask_completed

        with Client(scheduler) as client:
            futs = {client.submit(run_point, exp.id, exp.point(v), exp.run.__module__, pure=False): v for v in todo}
            for fut in dask_completed(futs):
                store(futs[fut], fut.result())
    elif workers > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            futs = {pool.submit(run_point, exp.id, exp.point(v), exp.run.__module__): v for v in todo}
            for fut in as_completed(futs):
                store(futs[fut], fut.result())
    else:
        for v in todo:
            store(v, run_point(exp.id, exp.point(v), exp.run.__module__))
    rows, missing = load_rows(exp, full=full, results=root)
    if missing:  # pragma: no cover - only if files vanish underneath us
        raise RuntimeError(f"{exp.id}: points {missing} missing after the sweep")
    return rows


def stderr_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
