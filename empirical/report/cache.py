"""What the report would otherwise recompute on every build: the
exact asymptotic exponents of every bound as MathML, and the figures drawn from the analyses.

Profiled on the full quick-grid report (cProfile, 167 bound articles, 100 figures): sympy's
exponents took ~49% of the time, drawing and PNG-encoding the figures ~31%, refitting analyses
~18% (already cached beside the rows by ``verify``: :mod:`empirical.store.analysis_cache`).

* **Exponents** are keyed by the bound's id and expression (``srepr``, which includes the symbols'
  assumptions), its scale variables and shape parameters, the source of ``bounds/core.py``
  (the exponent code) and of ``empirical/report/mathml.py`` (the MathML printer), and sympy's
  version.  They are read from ``results/report-exponents.cache`` (written by each build) and
  from ``empirical/report/report_exponents.json``, shipped with the code and refreshed by
  ``python -m empirical.report.cache`` (an entry whose key no longer matches is simply not
  used: a stale file costs time, never a wrong exponent).
* **Figures** are stored, sealed with their checksum (:mod:`empirical.store.integrity`), beside the analysis cache as ``figure-<grid>.cache`` under a key made
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
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

import sympy as sp

from empirical.store import integrity

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
        rec = integrity.parse_json(path.read_bytes())
        if rec.get("format") == _FORMAT and isinstance(rec.get("entries"), dict):
            return {k: v for k, v in rec["entries"].items() if isinstance(v, str)}
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def _write(path: Path, entries: dict) -> None:
    try:
        integrity.atomic_write_text(path, json.dumps({"format": _FORMAT, "entries": entries},
                                                     sort_keys=True, indent=0))
    except OSError as exc:
        print(f"dprates report: could not write the cache {path} ({exc})", file=sys.stderr)


#: What :func:`empirical.report.mathml.exponents_html` emits: a list of presentation-MathML
#: formulas.  Nothing else (no script, style, link, event handler or URL) is ever rendered
#: from a results directory's exponent cache.
_MATHML_TAGS = frozenset({"ul", "li", "b", "math", "mi", "mn", "mo", "ms", "mtext", "mrow",
                          "mfrac", "msup", "msub", "msubsup", "mover", "munder", "munderover",
                          "msqrt", "mroot", "mtable", "mtr", "mtd", "mspace", "mstyle",
                          "mpadded", "mphantom", "mfenced"})
_MATHML_ATTRS = frozenset({"fence", "stretchy", "symmetric", "display", "mathvariant",
                           "separator", "form", "lspace", "rspace"})


class _MathMLOnly(HTMLParser):
    """Accepts a fragment only when every tag and attribute is in the lists above, attribute
    values are plain words, and there is no comment, declaration or processing instruction."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ok = True

    def handle_starttag(self, tag, attrs):
        if tag not in _MATHML_TAGS or any(
                k not in _MATHML_ATTRS or not re.fullmatch(r"[A-Za-z0-9.\-]*", v or "")
                for k, v in attrs):
            self.ok = False

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag not in _MATHML_TAGS:
            self.ok = False

    def handle_comment(self, data):
        self.ok = False

    handle_decl = handle_pi = unknown_decl = handle_comment


def is_exponent_markup(fragment: str) -> bool:
    """Whether ``fragment`` is markup the exponents' printer could have produced (see
    :class:`_MathMLOnly`); anything else read from a results directory is recomputed."""
    if not isinstance(fragment, str):
        return False
    parser = _MathMLOnly()
    try:
        parser.feed(fragment)
        parser.close()
    except Exception:  # a fragment the parser cannot read is not trusted
        return False
    return parser.ok


class ExponentCache:
    """Exponents' MathML by :func:`exponent_key`: the shipped file (part of the code), then
    ``path`` in the results directory (read and, when something was computed, rewritten by
    :meth:`save`).  An entry of ``path`` is used only for a key the shipped file lacks, and
    only when it is markup the printer could have produced (:func:`is_exponent_markup`);
    any other entry is named once and recomputed."""

    def __init__(self, path: Path | None,
                 say: Callable[[str], None] | None = None) -> None:
        self.path = path
        stored = _read(path) if path else {}
        bad = sorted(k for k, v in stored.items() if not is_exponent_markup(v))
        if bad:
            (say or (lambda m: print(m, file=sys.stderr)))(
                f"{path}: {len(bad)} exponent entr{'y' if len(bad) == 1 else 'ies'} hold "
                "markup the exponent printer does not produce; ignored and recomputed")
        self.entries = {**{k: v for k, v in stored.items() if k not in bad}, **_read(_SHIPPED)}
        self.new: dict[str, str] = {}

    def get(self, bound, compute: Callable[[], str]) -> str:
        key = exponent_key(bound)
        if key not in self.entries:
            self.entries[key] = self.new[key] = compute()
        return self.entries[key]

    def save(self) -> None:
        if self.path is not None and self.new:
            kept = {k: v for k, v in _read(self.path).items() if is_exponent_markup(v)}
            _write(self.path, {**kept, **self.new})
            self.new = {}


def figure_key(parts: list[str], code: list[Path]) -> str:
    """Key of a figure drawn from analyses with keys ``parts`` by the code in ``code``."""
    return _sha(json.dumps({"format": _FORMAT, "analyses": parts, "code": _source_digest(*code),
                            "matplotlib": _version("matplotlib")}).encode())


def cached_bytes(path: Path, key: str, draw: Callable[[], bytes],
                 say: Callable[[str], None] | None = None) -> bytes:
    """The PNG stored in ``path`` under ``key``, else ``draw()`` (then stored, sealed with its
    checksum).  A file that fails its checksum, nests too deep, or is not base64 is corrupt:
    named on ``say`` (default stderr), moved aside, and the figure drawn again."""
    say = say or (lambda m: print(m, file=sys.stderr))
    rec = integrity.read_sealed(path, "figure cache", say)
    if rec is not None and rec.get("format") == _FORMAT and rec.get("key") == key:
        try:
            return base64.b64decode(rec["png"], validate=True)
        except (KeyError, TypeError, ValueError) as exc:
            integrity.quarantine(path, "figure cache", f"undecodable ({str(exc)[:60]})", say)
    data = draw()
    try:
        integrity.atomic_write_json(path, {"format": _FORMAT, "key": key,
                                           "png": base64.b64encode(data).decode("ascii")})
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


def refresh_band_exponents(results: str | os.PathLike | None = None,
                           full: bool = False) -> int:
    """Rewrite ``bounds/exponent_cache.json`` with every exponent that validating and analysing
    each experiment asks for (:meth:`bounds.Bound.exponent` at the experiment's values): the
    grid's ends, and with ``results`` the stored rows' analyses; returns how many entries the
    file holds.  Computed afresh, so entries of changed code or expressions drop out."""
    import warnings

    import bounds
    from bounds import exponents
    from empirical.core.checks import analyse
    from empirical.core.experiment import experiments
    from empirical.core.validation import validate_experiment
    from empirical.store.rows import load_rows

    exponents.shipped_exponent("")                 # load the old file, then use none of it
    exponents._SHIPPED = {}
    for exp in experiments():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                validate_experiment(exp, full=full)
                if results is not None:
                    rows, _ = load_rows(exp, full=full, results=results, progress=lambda m: None)
                    if rows:
                        analyse(exp, rows)
            except (ValueError, KeyError, ZeroDivisionError):
                continue                           # reported by verify; nothing to ship
    entries = {}
    for i in bounds.ids():
        b = bounds.get(i)
        specs = b._cache.get("exponent_specs", {})
        entries.update({k: (i, *specs[k], e) for k, e in b._cache.get("exponents", {}).items()
                        if all(isinstance(v, (int, float)) for v in specs[k][2].values())})
    exponents.write_shipped(entries)
    return len(entries)


if __name__ == "__main__":  # pragma: no cover
    print(f"{refresh_shipped()} bound exponents written to {_SHIPPED}")
    where = sys.argv[1] if len(sys.argv) > 1 else None
    print(f"{refresh_band_exponents(where)} exponents at experiment values written to "
          "bounds/exponent_cache.json" + (f" (from the rows in {where})" if where else ""))
