"""The paper registry of ``bounds``: which papers exist, the modules that define each, and
what each says of itself (title, citation, link, errata page).

A paper is declared by a ``dprates.papers`` entry point (this project's own papers are its
pyproject's entry points), by :func:`register_paper`, or by ``dprates --module``; its modules
are imported only when one of its ids is asked for (:func:`load_papers`), so a broken paper
never breaks another's runs.  This module knows nothing of bounds or experiments.
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.metadata
import importlib.util
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

__all__ = ["ENTRY_POINT_GROUP", "PaperInfo", "register_paper", "papers", "paper_modules",
           "paper_info", "OptionalExtraMissing", "PaperLoadWarning", "LOAD_ERRORS",
           "load_papers", "load_paper", "check_paper"]

#: Entry-point group through which a package declares papers, this project's own included (its
#: pyproject.toml): ``[project.entry-points."dprates.papers"] mypaper = "mypkg.rates"`` declares
#: paper key ``mypaper`` (ids ``mypaper:...``), and ``mypkg.rates`` is imported when its ids are
#: asked for; it may call :func:`register_paper` to name its other modules, title and citation.
#: ``dprates --module mypkg.rates`` does the same for a package that is not installed.
ENTRY_POINT_GROUP = "dprates.papers"
_PAPER_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
#: paper key -> modules (absolute names) that register its bounds and experiments, papers in the
#: order they were declared (entry points first, in their declared order).
_PLUGINS: dict[str, list[str]] = {}
_ENTRY_POINTS_READ = False


@dataclass(frozen=True)
class PaperInfo:
    """What a paper says of itself through :func:`register_paper`; the CLI (``dprates papers``)
    and the report show it."""

    key: str
    title: str = ""
    citation: str = ""
    url: str = ""
    #: a Markdown page of the paper's errata (absolute, or relative to the working directory)
    errata: str = ""
    #: other papers whose units this one builds on (it may import and name them)
    uses: tuple[str, ...] = ()
    #: modules whose public names are the paper's algorithms (the report links them)
    algorithms: tuple[str, ...] = ()


#: paper key -> its :class:`PaperInfo`.
_INFO: dict[str, PaperInfo] = {}
#: paper key -> the modules that called :func:`register_paper` for it (``--module`` scoping).
_DECLARED_BY: dict[str, set[str]] = {}


def register_paper(key: str, *modules: str, title: str | None = None,
                   citation: str | None = None, url: str | None = None,
                   errata: str | None = None, uses: Iterable[str] = (),
                   algorithms: Iterable[str] = ()) -> str:
    """Declare a paper key (idempotent), the modules that define it and what it says of itself.

    ``modules`` (absolute module names) are imported when one of the paper's ids is asked for;
    a module that calls ``register_paper`` for its own key needs not list itself.  ``title``,
    ``citation``, ``url`` and ``errata`` (a Markdown page) are shown by ``dprates papers`` and
    the report; given again, a keyword replaces the earlier value.  ``uses``: paper keys whose
    units this paper builds on.  ``algorithms``: modules whose public names are its algorithms.
    """
    if not isinstance(key, str) or not _PAPER_KEY.match(key):
        raise ValueError(f"paper key must match [a-z][a-z0-9_]* (e.g. 'mypaper'), got {key!r}")
    _read_entry_points()             # declared papers keep their declared order
    for name, text in (("title", title), ("citation", citation), ("url", url),
                       ("errata", errata)):
        if text is not None and not isinstance(text, str):
            raise ValueError(f"{name} must be a string, got {type(text).__name__}")
    uses, algorithms = tuple(uses), tuple(algorithms)
    for other in uses:
        if not isinstance(other, str) or not _PAPER_KEY.match(other) or other == key:
            raise ValueError(f"uses must name other paper keys, got {other!r}")
    mods = _PLUGINS.setdefault(key, [])
    mods.extend(m for m in modules if m not in mods)
    caller = sys._getframe(1).f_globals.get("__name__", "")
    _DECLARED_BY.setdefault(key, set()).add(caller)
    old = _INFO.get(key, PaperInfo(key))
    given = {"title": title, "citation": citation, "url": url, "errata": errata}
    _INFO[key] = dataclasses.replace(
        old, **{k: v for k, v in given.items() if v is not None},
        uses=old.uses + tuple(u for u in uses if u not in old.uses),
        algorithms=old.algorithms + tuple(a for a in algorithms if a not in old.algorithms))
    return key


def _source_entry_points() -> tuple[str | None, list[tuple[str, str]]]:
    """(distribution name, [(key, module)]) declared in the pyproject.toml of the source tree
    this module is running from, if it runs from one: a checkout declares its papers the same
    way installed or not (an editable install's metadata may be another checkout's)."""
    toml = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if not toml.is_file():
        return None, []
    import tomllib

    try:
        project = tomllib.loads(toml.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None, []
    group = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
    return project.get("name"), [(k, str(v)) for k, v in group.items()]


def _entry_points() -> list[tuple[str, str]]:
    """(key, module) of every declared paper: the running source tree's, then installed
    distributions' (by name), each in its declared order."""
    name, out = _source_entry_points()
    seen = {name} if name else set()
    dists = sorted(importlib.metadata.distributions(),
                   key=lambda d: (d.metadata["Name"] or "").lower())
    for dist in dists:
        dname = dist.metadata["Name"]
        if dname in seen:
            continue
        seen.add(dname)
        out += [(ep.name, ep.value) for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
    return out


def _read_entry_points() -> None:
    global _ENTRY_POINTS_READ
    if _ENTRY_POINTS_READ:
        return
    _ENTRY_POINTS_READ = True
    for key, value in _entry_points():
        try:
            register_paper(key, value.partition(":")[0])
        except ValueError as exc:
            warnings.warn(f"ignoring entry point {key} = {value} in group "
                          f"{ENTRY_POINT_GROUP}: {exc}", stacklevel=2)


def papers() -> tuple[str, ...]:
    """Every known paper key, in the order declared: entry points (this project's papers are
    its entry points) in their declared order, then papers registered at run time."""
    _read_entry_points()
    return tuple(_PLUGINS)


def paper_modules(key: str) -> tuple[str, ...]:
    """The modules declared for paper ``key`` (entry point first), then those that declared it
    by calling :func:`register_paper`."""
    _read_entry_points()
    mods = _PLUGINS.get(check_paper(key), [])
    return tuple(mods) + tuple(sorted(m for m in _DECLARED_BY.get(key, ()) if m not in mods))


def paper_info(key: str) -> PaperInfo:
    """What paper ``key`` says of itself; its bounds modules are imported first (a paper's
    module calls :func:`register_paper` with its title when imported).  A module that fails to
    import leaves the information it did not reach empty."""
    try:
        load_paper(check_paper(key), "bounds")
    except Exception:
        pass
    return _INFO.get(key, PaperInfo(key))


class OptionalExtraMissing(ImportError):
    """Raised by a paper's module when an optional extra it needs is not installed (e.g. the
    real-data experiments without scikit-learn).  Loading every paper records it in
    :data:`LOAD_ERRORS` like any failure, but the CLI reports it as a note, not an error: a
    plain install must be able to verify the papers it can run."""


class PaperLoadWarning(UserWarning):
    """A paper's module failed to import while every paper was being loaded; it was skipped."""


#: (paper, package) -> one-line reason, for paper modules that failed to import while loading
#: *every* paper (one paper's broken module must not stop the others; the CLI reports these).
LOAD_ERRORS: dict[tuple[str, str], str] = {}


def load_papers(package: str = "bounds", paper: str | None = None) -> None:
    """Load ``paper`` (errors propagate: it was asked for) or every paper (a module that fails
    to import is recorded in :data:`LOAD_ERRORS`, warned about, and skipped)."""
    if paper is not None:
        load_paper(paper, package)
        return
    for key in papers():
        try:
            load_paper(key, package)
        except Exception as exc:
            if (key, package) not in LOAD_ERRORS:
                msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                LOAD_ERRORS[(key, package)] = msg
                warnings.warn(f"paper {key!r}: its {package} module failed to import ({msg}); "
                              "skipped", PaperLoadWarning, stacklevel=3)


def load_paper(key: str, package: str = "bounds") -> None:
    """Import the modules that register ``key``'s bounds (``package="bounds"``) or its bounds
    and experiments (``package="empirical"``): the module its entry point names, then the ones
    it declares (:func:`register_paper`), until none is left."""
    _read_entry_points()
    done: set[str] = set()
    while todo := [m for m in _PLUGINS.get(key, ()) if m not in done]:
        for name in todo:
            done.add(name)
            # bounds/ knows nothing of runs: loading a paper's bounds imports none of this
            # project's empirical modules (a paper with no bounds, e.g. the real-data
            # pseudo-paper, is declared there alone).
            if package == "bounds" and name.partition(".")[0] == "empirical":
                continue
            importlib.import_module(name)


def check_paper(key: str, what: str = "paper") -> str:
    """``key`` if it is a known paper; else ValueError naming the allowed keys and the closest."""
    known = papers()
    if key not in known:
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.3)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{what} must be one of {known}, got {key!r}{hint}")
    return key
