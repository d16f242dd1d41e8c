"""What the report would otherwise recompute on every build (issue 15 review, issue 14): the
exact asymptotic exponents of every bound as MathML, and the figures drawn from the analyses.

Profiled on the full quick-grid report (cProfile, 167 bound articles, 100 figures): sympy's
exponents took ~49% of the time, drawing and PNG-encoding the figures ~31%, refitting analyses
~18% (already cached beside the rows by ``verify``: :mod:`empirical.store.analysis_cache`).

* **Exponents** are keyed by the bound's id and expression (``srepr``, which includes the symbols'
  assumptions), its scale variables and shape parameters, the source of ``bounds/core.py``
  (the exponent code) and of ``empirical/report/mathml.py`` (the MathML printer), and sympy's
  version.  They are read from ``results/report-exponents.cache`` (written by each build) and
  from ``empirical/report_exponents.json``, shipped with the code and refreshed by
  ``python -m empirical.report.cache`` (an entry whose key no longer matches is simply not
  used: a stale file costs time, never a wrong exponent).
* **Figures** are stored beside the analysis cache as ``figure-<grid>.cache`` under a key made
  of the analysis key (rows digest + analysis code, :func:`analysis_cache.analysis_key`), the
  source of ``empirical/store/figures.py`` and matplotlib's version; summary figures as
  ``results/<paper>/summary-<id>-<grid>.cache`` under the keys of their experiments' analyses
  and the source of the module that draws them.

Files are JSON, written atomically; one that cannot be read or written only costs a recompute.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path
from typing import Callable

import sympy as sp

__all__ = ["ExponentCache", "exponent_key", "figure_key", "cached_bytes", "refresh_shipped"]

_HERE = Path(__file__).resolve().parent
_SHIPPED = _HERE / "report_exponents.json"
_FORMAT = 1


def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()[:16]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _source_digest(*paths: Path) -> str:
    return _sha(b"".join(p.read_bytes() for p in paths if p.exists()))


_CODE: dict[str, str] = {}


def _exponent_code() -> str:
    # Read once per process: the code that is running, not a file edited under it.
    if "exp" not in _CODE:
        import bounds

        _CODE["exp"] = _source_digest(Path(bounds.__file__).parent / "core.py",
                                      _HERE / "mathml.py") + _version("sympy")
    return _CODE["exp"]


def exponent_key(bound) -> str:
    """The cache key of a bound's exponents (see the module doc)."""
    # the id too: an exponent that cannot be computed is shown with a message naming the bound
    return _sha(json.dumps({"id": bound.id, "expr": sp.srepr(bound.expr),
                            "vars": list(bound.scale_variables),
                            "shape": list(bound.shape_parameters), "code": _exponent_code()},
                           sort_keys=True).encode())


def _read(path: Path) -> dict[str, str]:
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        if rec.get("format") == _FORMAT and isinstance(rec.get("entries"), dict):
            return rec["entries"]
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def _write(path: Path, entries: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": _FORMAT, "entries": entries}, sort_keys=True,
                                  indent=0), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        print(f"dprates report: could not write the cache {path} ({exc})", file=sys.stderr)


class ExponentCache:
    """Exponents' MathML by :func:`exponent_key`: the shipped file, then ``path`` (read and,
    when something was computed, rewritten by :meth:`save`)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries = {**_read(_SHIPPED), **(_read(path) if path else {})}
        self.new: dict[str, str] = {}

    def get(self, bound, compute: Callable[[], str]) -> str:
        key = exponent_key(bound)
        if key not in self.entries:
            self.entries[key] = self.new[key] = compute()
        return self.entries[key]

    def save(self) -> None:
        if self.path is not None and self.new:
            _write(self.path, {**_read(self.path), **self.new})
            self.new = {}


def figure_key(parts: list[str], code: list[Path]) -> str:
    """Key of a figure drawn from analyses with keys ``parts`` by the code in ``code``."""
    return _sha(json.dumps({"format": _FORMAT, "analyses": parts, "code": _source_digest(*code),
                            "matplotlib": _version("matplotlib")}).encode())


def cached_bytes(path: Path, key: str, draw: Callable[[], bytes]) -> bytes:
    """The bytes stored in ``path`` under ``key``, else ``draw()`` (then stored)."""
    try:
        rec = json.loads(path.read_text())
        if rec.get("key") == key:
            return base64.b64decode(rec["png"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    data = draw()
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "png": base64.b64encode(data).decode("ascii")}))
        os.replace(tmp, path)
    except OSError as exc:
        print(f"dprates report: could not cache a figure in {path} ({exc})", file=sys.stderr)
    return data


def refresh_shipped(papers: list[str] | None = None) -> int:
    """Recompute the shipped exponents of every bound (of ``papers``) under the current code,
    keeping only entries of bounds that exist; returns how many entries the file holds."""
    import bounds
    from empirical.report.mathml import exponents_html

    entries = {}
    for p in papers or bounds.core.papers():
        for i in bounds.ids(p):
            b = bounds.get(i)
            entries[exponent_key(b)] = exponents_html(b)
    _write(_SHIPPED, entries)
    return len(entries)


if __name__ == "__main__":  # pragma: no cover
    print(f"{refresh_shipped()} bound exponents written to {_SHIPPED}")
