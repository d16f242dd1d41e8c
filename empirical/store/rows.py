"""The row store: one verified file per completed grid point, keyed and fingerprinted.

Storage: one JSON file per completed point under ``results/<paper>/<experiment>/<key>.json``,
written to a temporary file and renamed into place, so a killed sweep leaves only complete
points and a rerun skips them.  The key hashes the experiment id (and its legacy ``version``),
the point and the number of seeds.  Each file also carries

* a *code fingerprint*: SHA-256 digests of the source of every module whose code can change the
  rows (see :func:`code_fingerprint`) and the versions of numpy, scipy and dp-accounting.  A
  stored point whose fingerprint differs from the current code is *stale* and is recomputed, so
  a change to an algorithm invalidates exactly the experiments that use it, with no hand-kept
  version number;
* a *checksum* of its own content.  A file that is empty, truncated, not an object, missing
  fields, edited by hand or belonging to another point is *corrupt*: it is named in one line,
  moved aside to ``<key>.json.corrupt[.N]`` and recomputed.

Running the points is :mod:`empirical.run.runner`'s (and the scheduler's); this module computes
nothing.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from empirical.core import experiment as _registry
from empirical.core.experiment import Experiment
# Finding and reading source files lives in the core; the old names stay importable here.
from empirical.core.modules import _FILE_CACHE  # noqa: F401
from empirical.core.modules import module_file as _module_file
from empirical.core.modules import module_imports as _imports  # noqa: F401
from empirical.core.modules import scan_file as _scan_file

__all__ = ["TIMING_COLUMNS", "RESULT_FORMAT", "SweepError", "ResultWriteError", "results_dir",
           "point_key", "code_fingerprint", "experiment_fingerprint", "forget_fingerprints", "installed_versions",
           "check_writable", "load_rows", "stderr_progress"]


#: Per-point timing columns of every row: wall seconds (the scheduler's longest-first order) and
#: CPU seconds of the process that ran the point.  They differ between runs of the same point, so
#: row comparisons leave them out.
TIMING_COLUMNS = ("seconds_per_point", "cpu_seconds_per_point")

#: Layout of a result file; files of another format are stale and recomputed.
RESULT_FORMAT = 2


class SweepError(RuntimeError):
    """A sweep could not run or finish; the message is one line naming the cause."""


class ResultWriteError(SweepError):
    """A result (or the results directory) could not be written.

    ``unsaved`` maps grid values to the rows computed but not stored, so a library caller loses
    nothing it paid for even when the disk is full.
    """

    def __init__(self, msg: str, unsaved: Mapping[float, list] | None = None):
        super().__init__(msg)
        self.unsaved = dict(unsaved or {})


def results_dir(path: str | os.PathLike | None = None) -> Path:
    """``path``, else $DPRATES_RESULTS, else ./results."""
    return Path(path or os.environ.get("DPRATES_RESULTS", "results"))


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=float).encode()


def _digest(obj) -> int:
    blob = json.dumps(obj, sort_keys=True, default=float).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little")


def point_key(exp: Experiment, point: dict) -> str:
    # ``version`` stays in the key so that old result trees keep their names; the code
    # fingerprint inside the file is what now detects changed code.
    blob = {"experiment": exp.id, "version": exp.version, "point": point, "seeds": exp.seeds}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=float).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Code fingerprint
# --------------------------------------------------------------------------------------------

#: Modules that never change a row's numbers (declaration, analysis, drawing, the CLI, the
#: symbolic layer), so editing them must not invalidate stored results.
_NOT_ROW_CODE = ("empirical.core", "empirical.run", "empirical.store", "empirical.privacy",
                 "empirical.report", "empirical.cli", "bounds")
#: Numerical core every algorithm may use, fingerprinted whatever the imports say.
_CORE = ("algorithms.base", "algorithms.accounting", "algorithms.primitives",
         "algorithms.validation")
_PROJECT = ("algorithms", "empirical")
_VERSIONED = ("numpy", "scipy", "dp-accounting")


def _is_paper_audit(name: str) -> bool:
    # A paper unit's audits (empirical.papers.<key>.audit) judge rows; they never compute them.
    parts = name.split(".")
    return len(parts) == 4 and parts[:2] == ["empirical", "papers"] and parts[3] == "audit"


def _is_paper_package(name: str) -> bool:
    # A paper unit's __init__ (empirical.papers.<key>) only imports its declaring modules so
    # that loading the paper registers it; a run module importing a sibling (``from
    # empirical.papers.<key> import sensitivity``) must not pull the declarations into its rows'
    # fingerprint through it, or editing a check would recompute every stored point.
    parts = name.split(".")
    return len(parts) <= 3 and parts[:2] == ["empirical", "papers"]


def _is_row_code(name: str) -> bool:
    if any(name == p or name.startswith(p + ".") or name.startswith(p + "_")
           for p in _NOT_ROW_CODE) or name == "empirical" or _is_paper_audit(name) \
            or _is_paper_package(name):
        return False
    return name.split(".")[0] in _PROJECT


def forget_fingerprints() -> None:
    """Re-read source files at the next fingerprint (call after reloading a module)."""
    with _FINGERPRINT_LOCK:
        _FILE_CACHE.clear()
        _CLOSURES.clear()


_VERSIONS: dict[str, str] = {}


def installed_versions(dists: Iterable[str]) -> dict[str, str]:
    """Installed versions of ``dists`` ("absent" when not installed).  They cannot change under a
    running process (a reinstall needs a restart to take effect), so each is read once."""
    for dist in dists:
        if dist not in _VERSIONS:
            try:
                _VERSIONS[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                _VERSIONS[dist] = "absent"
    return {d: _VERSIONS[d] for d in dists}


def _package_versions() -> dict[str, str]:
    return installed_versions(_VERSIONED)


def code_fingerprint(module: str, code: Sequence[str] = ()) -> dict:
    """What a row computed by ``module``'s ``run`` depends on, and its digest.

    Covered: ``module`` itself; every ``algorithms.*`` / ``empirical.*`` module it imports,
    transitively (imports inside functions count); for a module outside this project (a
    researcher's paper), every module of its top-level package; the modules in ``code`` (what
    the experiment declares, :attr:`Experiment.code`: each one's source, every module of a
    package, and the modules of this project they import); the numerical core
    (``algorithms.base``, ``accounting``, ``primitives``, ``validation``); the versions of
    numpy, scipy and dp-accounting.  Not covered, because they cannot change a row: the harness (``experiment``,
    ``runner``, ``checks``, ``fitting``, ``figures``, ``cli``, audits) and ``bounds``.
    Returns ``{"digest", "code": {module: sha}, "versions": {dist: version}}``.
    """
    with _FINGERPRINT_LOCK:
        return _code_fingerprint(module, tuple(code))


def experiment_fingerprint(exp: Experiment) -> dict:
    """:func:`code_fingerprint` of ``exp``'s rows: its ``run``'s module and its declared code."""
    return code_fingerprint(exp.run.__module__, exp.code)


#: ast.parse is not thread-safe on CPython 3.11 ("AST constructor recursion depth mismatch"),
#: and a threaded Dask worker fingerprints several points at once.
_FINGERPRINT_LOCK = threading.Lock()
#: Fingerprints by (module, declared code): the files are pinned per process (scan_file), so
#: the closure over them is too; experiments of one module share it.
_CLOSURES: dict[tuple[str, tuple[str, ...]], dict] = {}


def _code_fingerprint(module: str, declared: tuple[str, ...] = ()) -> dict:
    if (module, declared) not in _CLOSURES:
        _CLOSURES[module, declared] = _code_closure(module, declared)
    code = dict(_CLOSURES[module, declared])
    versions = _package_versions()
    digest = hashlib.sha256(_canonical({"format": RESULT_FORMAT, "code": code,
                                        "versions": versions})).hexdigest()[:16]
    return {"digest": digest, "code": code, "versions": versions}


def _code_closure(module: str, declared: tuple[str, ...]) -> dict[str, str]:
    """{module: source digest} over ``module``, what it imports of this project (transitively),
    its package's modules and the ``declared`` code."""
    code: dict[str, str] = {}
    todo = [module, *_CORE, *_package_modules(module)]
    for name in declared:
        path = _module_file(name)
        if path is None:       # Experiment checks its code when declared; gone since
            raise ValueError(f"code names module {name!r}, which cannot be found")
        todo += [name, *(_modules_under(name, path.parent) if path.name == "__init__.py" else ())]
    while todo:
        name = todo.pop()
        if name in code:
            continue
        path = _module_file(name)
        if path is None:
            continue
        sha, imported = _scan_file(name, path)
        code[name] = sha
        todo.extend(m for m in imported if _is_row_code(m) and m not in code)
    return code


def _package_modules(module: str) -> list[str]:
    """Every module of ``module``'s top-level package when that package is not this project's
    (a researcher's paper): any of its files can change a row, imported by ``module`` or not
    (a module reached through a registry, a relative or a late import).  [] for this project's
    modules, whose imports are followed, and for a plugin that is one file."""
    top = module.partition(".")[0]
    if top in _PROJECT or top == "bounds":
        return []
    init = _module_file(top)
    if init is None or init.name != "__init__.py":
        return []
    return _modules_under(top, init.parent)


def _modules_under(package: str, root: Path) -> list[str]:
    """Every module of ``package``, whose directory is ``root``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if any(not p.isidentifier() for p in parts):
            continue                      # not importable as a module of the package
        out.append(".".join((package,) + (parts[:-1] if parts[-1] == "__init__" else parts)))
    return out


def _fingerprint_change(old: Mapping, new: Mapping) -> str:
    """Which modules or package versions differ, in a few words."""
    parts = []

    def table(rec: Mapping, key: str) -> dict:
        got = rec.get(key)
        return {str(k): v for k, v in got.items()} if isinstance(got, dict) else {}
    oc, nc = table(old, "code"), table(new, "code")
    changed = sorted(k for k in set(oc) | set(nc) if oc.get(k) != nc.get(k))
    if changed:
        parts.append("code of " + ", ".join(changed[:4]) + (" ..." if len(changed) > 4 else ""))
    ov, nv = table(old, "versions"), table(new, "versions")
    for k in sorted(set(ov) | set(nv)):
        if ov.get(k) != nv.get(k):
            parts.append(f"{k} {ov.get(k)} -> {nv.get(k)}")
    return "; ".join(parts) or "fingerprint differs"


# --------------------------------------------------------------------------------------------
# Storage
# --------------------------------------------------------------------------------------------

def _umask() -> int:
    # os.umask can only be read by setting it; done once at import, before any threads write.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def _atomic_write_json(path: Path, obj) -> None:
    """Write ``obj`` to ``path`` via a temporary file (mkstemp in its directory, never a
    planted symlink) and a rename: never a partial file."""
    from empirical.store.integrity import atomic_write_bytes

    atomic_write_bytes(path, json.dumps(obj, sort_keys=True).encode(), _FILE_MODE)


def check_writable(directory: str | os.PathLike, what: str = "results directory") -> Path:
    """Create ``directory`` if needed and prove a file can be written there, else one-line error."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise ResultWriteError(f"{what} {d} is not writable ({exc.strerror or exc})") from None
    return d


def _point_path(root: Path, exp: Experiment, point: dict) -> Path:
    return root / exp.paper / exp.id / f"{point_key(exp, point)}.json"


def _record(exp: Experiment, point: dict, rows: list[dict], fp: dict) -> dict:
    rec = {"format": RESULT_FORMAT, "experiment": exp.id, "version": exp.version,
           "point": point, "seeds": exp.seeds, "fingerprint": fp["digest"],
           "code": fp["code"], "versions": fp["versions"], "rows": rows}
    # Round-trip through JSON first so that the checksum is that of what a reader will parse.
    rec = json.loads(_canonical(rec))
    rec["checksum"] = hashlib.sha256(_canonical(rec)).hexdigest()
    return rec


_FIELDS = ("format", "experiment", "point", "seeds", "fingerprint", "rows", "checksum")


@dataclass
class _Stored:
    """What is on disk for one grid point."""

    status: str                 # "ok", "missing", "stale", "corrupt"
    rows: list | None = None
    reason: str = ""


def _read_point(path: Path, exp: Experiment, point: dict, fp: dict) -> _Stored:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return _Stored("missing")
    except OSError as exc:
        return _Stored("corrupt", reason=f"unreadable ({exc.strerror or exc})")
    from empirical.store.integrity import CorruptFile, parse_json

    try:
        rec = parse_json(raw)
    except CorruptFile as exc:
        return _Stored("corrupt", reason=str(exc))
    if not isinstance(rec, dict):
        return _Stored("corrupt", reason=f"not a JSON object but a {type(rec).__name__}")
    if rec.get("format") != RESULT_FORMAT and "rows" in rec and "checksum" not in rec:
        return _Stored("stale", reason="written by an older dprates (no checksum or fingerprint)")
    missing = [k for k in _FIELDS if k not in rec]
    if missing:
        return _Stored("corrupt", reason=f"missing fields {missing}")
    body = {k: v for k, v in rec.items() if k != "checksum"}
    try:
        digest = hashlib.sha256(_canonical(body)).hexdigest()
    except (TypeError, ValueError, RecursionError):
        digest = ""
    if digest != rec["checksum"]:
        return _Stored("corrupt", reason="checksum mismatch (edited or damaged after writing)")
    want = json.loads(_canonical({"experiment": exp.id, "point": point, "seeds": exp.seeds}))
    got = {k: rec[k] for k in want}
    if got != want:
        return _Stored("corrupt", reason=f"belongs to another point ({got['experiment']} "
                       f"{got['point']}, {got['seeds']} seeds)")
    rows = rec["rows"]
    if (not isinstance(rows, list) or len(rows) != exp.seeds
            or not all(isinstance(r, dict) and exp.metric in r for r in rows)):
        return _Stored("corrupt", reason=f"rows are not {exp.seeds} records with {exp.metric!r}")
    bad = _row_types(rows, exp)
    params = json.loads(_canonical({f"p_{k}": v for k, v in point.items()}))
    if not bad and any(r.get(k) != v for r in rows for k, v in params.items()):
        bad = "rows carry other parameter values than the point"
    if bad:
        return _Stored("corrupt", reason=bad)
    if rec["fingerprint"] != fp["digest"]:
        return _Stored("stale", rows=rows, reason="code changed: " + _fingerprint_change(rec, fp))
    return _Stored("ok", rows=rows)


def _row_types(rows: list, exp: Experiment) -> str:
    """Empty when every row is a flat record of JSON scalars whose metric is a number (or null,
    a non-finite value), its seed the row's index, its experiment ``exp``; else what is not."""
    for i, r in enumerate(rows):
        for k, v in r.items():
            if not isinstance(v, (str, int, float, bool)) and v is not None:
                return f"row {i}: column {k!r} holds a {type(v).__name__}, not a number or string"
        m = r[exp.metric]
        if isinstance(m, bool) or not (m is None or isinstance(m, (int, float))):
            return f"row {i}: metric {exp.metric!r} is not a number"
        if r.get("seed") != i or r.get("experiment") != exp.id:
            return f"row {i}: seed or experiment does not match its place in the file"
        for k in TIMING_COLUMNS:
            if k in r and (isinstance(r[k], bool) or not isinstance(r[k], (int, float))):
                return f"row {i}: {k!r} is not a number"

    def kind(v) -> str:     # null is a non-finite number (see _jsonable)
        return "bool" if isinstance(v, bool) else "str" if isinstance(v, str) else "number"
    columns = {k for r in rows for k in r}
    for k in sorted(columns):
        kinds = {kind(r.get(k)) for r in rows}
        if len(kinds) > 1 or any(k not in r for r in rows):
            return f"column {k!r} is not one type in every row"
    return ""


def _move_aside(path: Path) -> Path:
    """Rename a corrupt file out of the way (never delete evidence), to ``.corrupt[.N]``."""
    target = path.with_name(path.name + ".corrupt")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt.{n}")
        n += 1
    os.replace(path, target)
    return target


@dataclass
class _Scan:
    rows: dict[float, list]                  # grid value -> rows, valid points only
    todo: list[float]                        # grid values to compute
    redo: set[float] = field(default_factory=set)   # of those, values that had a bad file


def _scan(exp: Experiment, grid: Iterable[float], root: Path, fp: dict,
          say: Callable[[str], None], *, recompute_hint: str) -> _Scan:
    out = _Scan({}, [])
    stale: list[str] = []
    for v in grid:
        point = exp.point(v)
        path = _point_path(root, exp, point)
        got = _read_point(path, exp, point, fp)
        if got.status == "ok":
            out.rows[v] = got.rows
            continue
        out.todo.append(v)
        if got.status == "corrupt":
            try:
                where = f"moved aside to {_move_aside(path).name}"
            except OSError as exc:
                where = f"could not move it aside ({exc.strerror or exc})"
            say(f"{path}: corrupt result file: {got.reason}; {where}; {recompute_hint}")
            out.redo.add(v)
        elif got.status == "stale":
            stale.append(got.reason)
            out.redo.add(v)
    if stale:
        say(f"[{exp.id}] {len(stale)} stored point(s) are stale ({stale[0]}); {recompute_hint}")
    return out


def load_rows(exp: Experiment, *, full: bool = False, results: str | os.PathLike | None = None,
              progress: Callable[[str], None] | None = None) -> tuple[list[dict], list[float]]:
    """Stored rows of the grid's valid points, and the grid values still missing.

    Stale points (code changed) and corrupt files count as missing; corrupt files are named on
    ``progress`` (default: stderr) and moved aside.
    """
    root = results_dir(results)
    fp = experiment_fingerprint(exp)
    scan = _scan(exp, exp.grid(full), root, fp, progress or stderr_progress,
                 recompute_hint=f"`dprates run {exp.id}` recomputes it")
    rows = [r for v in exp.grid(full) if v in scan.rows for r in scan.rows[v]]
    return rows, scan.todo


def stderr_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _pin_registered(exp: Experiment) -> None:
    experiment_fingerprint(exp)


# Experiments registered from now on are pinned as they register, those registered before now.
_registry.ON_REGISTER.append(_pin_registered)
for _exp in list(_registry._REGISTRY.values()):
    try:
        _pin_registered(_exp)
    except Exception:  # pragma: no cover - the sweep fingerprints again and reports it
        pass
