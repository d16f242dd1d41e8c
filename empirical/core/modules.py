"""Modules as source files, found and read without importing anything: where a module's source
is (:func:`module_file`), which modules it imports (:func:`module_imports`, imports inside
functions included), and its digest (:func:`scan_file`, read once per process).  The row store's
code fingerprints are built from these; :func:`check_code` validates the modules an experiment
declares as its code.  Reads source files; writes none and imports none."""
from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from typing import Iterable

#: (source digest, imported module names) of every file read, by path.
_FILE_CACHE: dict[str, tuple[tuple, str, tuple[str, ...]]] = {}


def module_file(name: str) -> Path | None:
    """The source file of module ``name``, found without importing anything.

    (``importlib.util.find_spec`` would import parent modules: fingerprinting must not run
    code, least of all while a paper module is still being imported.)
    """
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None)
    if path is None:
        parent, _, leaf = name.rpartition(".")
        search = None
        if parent:
            pmod = sys.modules.get(parent)
            search = getattr(pmod, "__path__", None) if pmod is not None else None
            if search is None:
                ppath = module_file(parent)
                if ppath is None or ppath.name != "__init__.py":
                    return None      # `from module import function`: not a module
                search = [str(ppath.parent)]
        try:
            spec = importlib.machinery.PathFinder.find_spec(leaf, search)
            if spec is None and not parent:
                # A top-level package installed in editable mode is found by its own meta-path
                # finder, not on sys.path; find_spec of a top-level name imports nothing.
                spec = importlib.util.find_spec(leaf)
        except (ImportError, ValueError):
            return None
        path = spec.origin if spec is not None else None
    return Path(path) if path and str(path).endswith(".py") else None


def module_imports(tree: ast.AST, package: str) -> set[str]:
    """Absolute names of the modules an AST imports (anywhere, including inside functions)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)   # `from pkg import module`
    return out


def scan_file(name: str, path: Path) -> tuple[str, tuple[str, ...]]:
    """(SHA-256 of the source, imported module names), read once per process.

    Pinned, not re-read when the file changes: a process runs the code it imported, so a file
    edited under a running sweep must not relabel rows computed by the old code.  Forked pool
    workers inherit the pins, so they agree with their parent.  Experiments pin their modules
    when registered (close to import time); :func:`forget_fingerprints` drops the pins (after
    ``importlib.reload``).
    """
    hit = _FILE_CACHE.get(str(path))
    if hit is not None:
        return hit[1], hit[2]
    src = path.read_bytes()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    try:
        imported = tuple(sorted(module_imports(ast.parse(src), package)))
    except SyntaxError:
        imported = ()
    sha = hashlib.sha256(src).hexdigest()[:16]
    _FILE_CACHE[str(path)] = ((), sha, imported)
    return sha, imported


def check_code(owner: str, code: object) -> tuple[str, ...]:
    """``code`` (the modules an experiment declares as its code) as a tuple of module names, or
    ValueError naming ``code``: a tuple or list of dotted module names, each the name of a
    Python source module (or package) that can be found now, without importing it."""
    if isinstance(code, str) or not isinstance(code, Iterable):
        raise ValueError(f"{owner}: code must be a tuple of module names, got {code!r}")
    names = tuple(code)
    for name in names:
        if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
            raise ValueError(f"{owner}: code must be a tuple of dotted module names, got "
                             f"{name!r} in {names!r}")
        if module_file(name) is None:
            raise ValueError(f"{owner}: code names module {name!r}, which cannot be found (no "
                             "Python source file of that name on sys.path)")
    return names
