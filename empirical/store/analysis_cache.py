"""Analyses (slope fits with their bootstrap CIs, and every check's verdict) cached beside the
results they came from, so that ``dprates figures`` and a repeated ``verify`` do not refit
unchanged experiments.

An analysis is stored in ``results/<paper>/<experiment>/analysis-<quick|full>.cache`` (JSON; not
``*.json``, so it is never mistaken for a point file) under a key made of

* the experiment id and grid (quick or full);
* a digest of the rows analysed (their canonical JSON: any changed, added or recomputed-but-
  different row changes it);
* the *analysis fingerprint*: SHA-256 of the source of every module the verdict depends on — the
  module that declared the experiment (its checks, tolerances, level bands, ``bound_values``)
  and the project modules it imports, ``empirical.core.checks``, ``empirical.core.fitting``,
  ``empirical.core.experiment`` (with the declaration's validation), this module and
  ``empirical.store.integrity``, every file of ``bounds/`` — and the versions of numpy, scipy and
  sympy.

Each file carries the SHA-256 checksum of its own content (:mod:`empirical.store.integrity`, as
point files do).  A file whose key differs is stale and overwritten by the next analysis; one
that fails its checksum, nests too deep or does not decode is corrupt: named, moved aside to
``.corrupt`` and the analysis recomputed.  On Dask the worker's own analysis fingerprint comes
back with its analysis and must equal this process's, else the run stops (a worker running
other fitting code is refused).  The file is JSON with typed
records for the dataclasses of ``empirical.core.checks`` and ``empirical.core.fitting`` only (Analysis,
CheckResult, SlopeFit, ComparisonAnalysis, ...) and numpy arrays, so reading it runs no code
(unlike a pickle) and floats round-trip exactly.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from empirical.core import experiment as registry
from empirical.store import integrity
from empirical.core.checks import Analysis, analyse
from empirical.core.experiment import Experiment

__all__ = ["analyse_quietly", "cached_analyse", "cache_path", "analysis_key",
           "analysis_fingerprint", "worker_fingerprint", "encode", "decode", "CACHE_FORMAT"]

#: Layout of a cache file; another format is a miss.
CACHE_FORMAT = 2
#: The analysis harness: checks and tolerances, fitting, the declaration and its validation
#: (``experiment.validate_experiment``), this module's encoding, the bounds' core.
_HARNESS = ("empirical.core.checks", "empirical.core.results", "empirical.core.rowchecks",
            "empirical.core.contrasts", "empirical.core.fitting", "empirical.core.experiment",
            "empirical.core.check_declaration",
            "empirical.store.analysis_cache", "empirical.store.integrity", "bounds.core",
            "bounds.symbols", "bounds.exponents")
_VERSIONED = ("numpy", "scipy", "sympy")
#: Modules whose dataclasses an analysis may hold (Analysis, CheckResult, SlopeFit, the
#: comparison experiments' ContrastResult, ...).
_MODULES = ("empirical.core.checks", "empirical.core.results", "empirical.core.contrasts",
            "empirical.core.fitting")


def analyse_quietly(exp: Experiment, rows: list[dict]) -> Analysis:
    """:func:`empirical.core.checks.analyse`, without OutsideConditionsWarning: the analysis decides
    on conditions itself (it drops points where the primary bound's conditions fail and says
    so)."""
    from bounds.core import OutsideConditionsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OutsideConditionsWarning)
        return analyse(exp, rows)


# --------------------------------------------------------------------------------------------
# Key
# --------------------------------------------------------------------------------------------

def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()[:16]


def _rows_digest(rows: list[dict]) -> str:
    return _sha(json.dumps(rows, sort_keys=True, separators=(",", ":"), default=float).encode())


def _declaring_module(exp: Experiment) -> str:
    # bound_values is a function of the declaring module in every paper; run may live elsewhere.
    return getattr(exp.bound_values, "__module__", None) or exp.run.__module__


def _bounds_files() -> list[Path]:
    return sorted(_bounds_root().rglob("*.py"))


def _bounds_root() -> Path:
    import bounds

    return Path(bounds.__file__).parent


def analysis_fingerprint(exp: Experiment) -> str:
    """Digest of the code and versions an analysis of ``exp`` depends on (see module doc)."""
    from empirical.store import rows as runner

    code: dict[str, str] = {}
    todo = [_declaring_module(exp), *_HARNESS]
    top = todo[0].split(".")[0]
    while todo:
        name = todo.pop()
        if name in code:
            continue
        path = runner._module_file(name)
        if path is None:
            continue
        # runner pins each file's digest at first read: a process analyses with the code it
        # imported, even if the file is edited under it.
        sha, imported = runner._scan_file(name, path)
        code[name] = sha
        todo.extend(m for m in imported if m.split(".")[0] in ("empirical", "bounds", top)
                    and m not in code)
    for path in _bounds_files():
        # pinned like the modules above (runner.forget_fingerprints re-reads): the digest of
        # the bounds this process imported; the first 16 hex digits of SHA-256, as before
        rel = path.relative_to(_bounds_root()).as_posix()     # bounds/rates/kl.py, ...
        code.setdefault(f"bounds/{rel}", runner._scan_file(f"bounds/{rel}", path)[0])
    # A band read from a data file (a held-out calibration) is not in any module's source.
    code["declared levels"] = _sha(repr([(c.bound, c.kind, c.level) for c in exp.checks]
                                        ).encode())
    return _sha(json.dumps({"code": code, "versions": _versions()}, sort_keys=True).encode())


def worker_fingerprint(exp: Experiment) -> dict[str, str]:
    """What a worker's analysis and figure of ``exp`` were produced by: the analysis
    fingerprint and the digest of ``empirical.store.figures`` (both pinned at first read).  A parent
    accepts a worker's analysis only when this equals its own."""
    from empirical.store import rows as runner  # imported late, as above

    path = runner._module_file("empirical.store.figures")
    fig = runner._scan_file("empirical.store.figures", path)[0] if path is not None else "absent"
    return {"analysis": analysis_fingerprint(exp), "figures": fig}


def _versions() -> dict[str, str]:
    from empirical.store import rows as runner  # imported late, as above

    return runner.installed_versions(_VERSIONED)


def analysis_key(exp: Experiment, rows: list[dict], full: bool) -> str:
    """The cache key of ``exp``'s analysis of ``rows`` (see module doc)."""
    return _sha(json.dumps({"format": CACHE_FORMAT, "experiment": exp.id, "full": bool(full),
                            "rows": _rows_digest(rows), "code": analysis_fingerprint(exp)},
                           sort_keys=True).encode())


def cache_path(exp: Experiment, full: bool, results: str | os.PathLike | None = None) -> Path:
    from empirical.store.rows import results_dir

    grid = "full" if full else "quick"
    return results_dir(results) / exp.paper / exp.id / f"analysis-{grid}.cache"


# --------------------------------------------------------------------------------------------
# Encoding (typed JSON; decoding runs no code)
# --------------------------------------------------------------------------------------------

def _float(x: float) -> Any:
    # JSON has no NaN/inf; keep them as strings so they round-trip.
    return x if math.isfinite(x) else repr(x)


def _enc(obj: Any) -> Any:
    if isinstance(obj, Experiment):
        return {"$exp": obj.id}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) \
            and type(obj).__module__.startswith(_MODULES):
        cls = type(obj)
        return {"$dc": f"{cls.__module__}:{cls.__qualname__}",
                "f": {f.name: _enc(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if isinstance(obj, np.ndarray):
        return {"$nd": obj.dtype.str, "shape": list(obj.shape),
                "v": [_enc(x) for x in obj.ravel().tolist()]}
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return {"$f": _float(float(obj))} if not math.isfinite(obj) else float(obj)
    if isinstance(obj, str) or obj is None:
        return obj
    if isinstance(obj, tuple):
        return {"$t": [_enc(x) for x in obj]}
    if isinstance(obj, list):
        return [_enc(x) for x in obj]
    if isinstance(obj, Mapping):
        return {"$map": [[_enc(k), _enc(v)] for k, v in obj.items()]}
    raise TypeError(f"cannot cache a {type(obj).__name__}")


def _dataclass(name: str) -> type:
    """The dataclass a record names: only dataclasses of dprates' own analysis modules, which
    are already imported wherever an analysis exists (never an arbitrary callable)."""
    module, _, qual = name.partition(":")
    cls = getattr(sys.modules.get(module), qual, None) if module.startswith(_MODULES) else None
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise ValueError(f"{name!r} is not a cached type")
    return cls


_SCALARS = {"float": (int, float), "int": (int,), "str": (str,), "bool": (bool,),
            "np.ndarray": (np.ndarray,), "dict": (dict,)}


def _has_type(value: Any, annotation: str) -> bool:
    """Whether a decoded field value fits its dataclass annotation (a string: the modules use
    postponed annotations).  Scalars, arrays, ``X | None`` and ``tuple[...]`` are checked; a
    field whose annotation names a class is left to the record it decodes from."""
    parts = [a.strip() for a in str(annotation).split("|")]
    if value is None:
        return "None" in parts
    for part in parts:
        if part in _SCALARS:
            if isinstance(value, _SCALARS[part]) and not (
                    isinstance(value, bool) and part in ("float", "int")):
                return True
        elif part.startswith("tuple["):
            if isinstance(value, tuple):
                return True
        elif part != "None":
            return True         # a dataclass or other named type: checked when decoded
    return False


def _dec(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_dec(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    if "$exp" in obj:
        return registry.get(obj["$exp"])
    if "$dc" in obj:
        cls = _dataclass(obj["$dc"])
        fields = {f.name: f for f in dataclasses.fields(cls)}
        vals = {k: _dec(v) for k, v in obj["f"].items()}
        for k, v in vals.items():
            if not _has_type(v, fields[k].type):
                raise ValueError(f"{cls.__name__}.{k} must be {fields[k].type}, "
                                 f"got {type(v).__name__}")
        out = cls(**{k: v for k, v in vals.items() if fields[k].init})
        for k, v in vals.items():
            if not fields[k].init:
                object.__setattr__(out, k, v)
        return out
    if "$nd" in obj:
        vals = [_dec(x) for x in obj["v"]]
        return np.array(vals, dtype=np.dtype(obj["$nd"])).reshape(obj["shape"])
    if "$f" in obj:
        return float(obj["$f"])
    if "$t" in obj:
        return tuple(_dec(x) for x in obj["$t"])
    if "$map" in obj:
        return {_dec(k): _dec(v) for k, v in obj["$map"]}
    raise ValueError(f"unknown record {sorted(obj)[:3]}")


def encode(analysis: Analysis) -> dict:
    """``analysis`` as typed JSON (the experiment by id)."""
    return _enc(analysis)


def decode(data: dict) -> Analysis:
    """The :class:`Analysis` that :func:`encode` gave (its experiment looked up by id)."""
    out = _dec(data)
    if not isinstance(out, Analysis):
        raise ValueError("not an analysis record")
    return out


# --------------------------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------------------------

def load(exp: Experiment, key: str, full: bool,
         results: str | os.PathLike | None = None,
         say: Callable[[str], None] | None = None) -> Analysis | None:
    """The cached analysis under ``key``, or None: missing, or written under another key (other
    rows or code: overwritten by the next analysis).  A file that fails its checksum, does not
    parse within :data:`empirical.store.integrity.MAX_DEPTH`, or holds records that do not decode
    into an analysis of ``exp`` is corrupt: named on ``say`` (default stderr), moved aside,
    and the analysis recomputed."""
    from empirical.store.rows import stderr_progress

    say = say or stderr_progress
    path = cache_path(exp, full, results)
    rec = integrity.read_sealed(path, "analysis cache", say)
    if rec is None or rec.get("format") != CACHE_FORMAT or rec.get("key") != key:
        return None
    try:
        out = decode(rec["analysis"])
        if out.experiment is not exp:
            raise ValueError(f"holds the analysis of {out.experiment.id}")
        return out
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        integrity.quarantine(path, "analysis cache", f"undecodable ({str(exc)[:80]})", say)
        return None


def store(exp: Experiment, key: str, full: bool, analysis: Analysis | dict,
          results: str | os.PathLike | None = None) -> None:
    """Write the cache atomically, sealed with its checksum; an unwritable cache only costs a
    refit next time."""
    data = analysis if isinstance(analysis, dict) else encode(analysis)
    try:
        integrity.atomic_write_json(cache_path(exp, full, results),
                                    {"format": CACHE_FORMAT, "key": key, "experiment": exp.id,
                                     "analysis": data})
    except (OSError, TypeError, ValueError) as exc:
        print(f"dprates: could not cache the analysis of {exp.id} ({exc})", file=sys.stderr)


def cached_analyse(exp: Experiment, rows: list[dict], *, full: bool = False,
                   results: str | os.PathLike | None = None) -> tuple[Analysis, bool]:
    """``(analysis, hit)``: the stored analysis of exactly these rows under the current
    analysis code, else a fresh one (then stored)."""
    key = analysis_key(exp, rows, full)
    hit = load(exp, key, full, results)
    if hit is not None:
        return hit, True
    a = analyse_quietly(exp, rows)
    store(exp, key, full, a, results)
    return a, False
