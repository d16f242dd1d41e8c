"""The layout's rules, read from the code's own imports (every ``import``, inside functions
too; type-only imports under ``if TYPE_CHECKING`` are not imports at run time).

* ``bounds`` and ``algorithms`` import nothing above them; ``bounds`` imports no numpy layer.
* No paper package of ``algorithms`` imports another paper's, and the shared numerics import no
  paper package.
* ``empirical.core`` imports only ``bounds`` among this project's modules, and of the outside
  world only the standard library, numpy, scipy, sympy and mpmath: it writes no file, starts
  no process.
* A paper unit (``empirical.papers.<key>``) never imports ``empirical.run``, ``report`` or
  ``cli``, and reaches another paper's code (unit, bounds, algorithms) only if it declares that
  paper in ``bounds.register_paper(uses=...)``.
* There is no import cycle, imports inside functions included.
* No module outside a paper's own code names a paper key (as a string such as an id or a
  module path, or as an identifier): the core discovers papers, it does not list them.

Paper keys are the project's own declared papers (pyproject.toml's ``dprates.papers`` entry
points), so a new paper is covered by adding its entry point.
"""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import lru_cache
from pathlib import Path

import pytest

import bounds

ROOT = Path(__file__).parents[1]
TOPS = ("bounds", "algorithms", "empirical")


@lru_cache(maxsize=1)
def _modules() -> dict[str, Path]:
    out = {}
    for top in TOPS:
        for p in (ROOT / top).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports_of(name: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported name, line, at module level) of every import in ``path``: a ``from a import
    b`` is ``a.b`` when that is a module, else ``a``; relative imports resolved."""
    mods = _modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []

    def visit(node: ast.AST, top: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.If) and _is_type_checking(ch):
                continue
            here = top and not isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda, ast.ClassDef))
            if isinstance(ch, ast.ClassDef):
                here = top            # a class body runs at import time
            if isinstance(ch, ast.Import):
                out.extend((a.name, ch.lineno, top) for a in ch.names)
            elif isinstance(ch, ast.ImportFrom):
                base = ch.module or ""
                if ch.level:
                    parts = package.split(".")
                    parent = ".".join(parts[: len(parts) - ch.level + 1])
                    base = f"{parent}.{base}" if base else parent
                for a in ch.names:
                    full = f"{base}.{a.name}"
                    out.append((full if full in mods else base, ch.lineno, top))
            visit(ch, here)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return out


def _resolve(target: str) -> str | None:
    """The project module ``target`` names (its longest importable prefix), None outside."""
    mods = _modules()
    while target and target not in mods:
        target = target.rpartition(".")[0]
    return target or None


@lru_cache(maxsize=1)
def _edges() -> list[tuple[str, str, int, bool]]:
    out = []
    for name, path in sorted(_modules().items()):
        for target, line, top in _imports_of(name, path):
            if target.partition(".")[0] in TOPS:
                out.append((name, target, line, top))
    return out


@lru_cache(maxsize=1)
def _paper_keys() -> tuple[str, ...]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return tuple(project["entry-points"]["dprates.papers"])


def _unit(module: str) -> str | None:
    """The paper whose code ``module`` is: empirical.papers.<key>, bounds.rates.<key>,
    algorithms.<key>."""
    parts = module.split(".")
    keys = _paper_keys()
    if parts[:2] == ["empirical", "papers"] and len(parts) > 2 and parts[2] in keys:
        return parts[2]
    if parts[:2] == ["bounds", "rates"] and len(parts) > 2 and parts[2] in keys:
        return parts[2]
    if parts[0] == "algorithms" and len(parts) > 1 and parts[1] in keys:
        return parts[1]
    return None


def _uses(key: str) -> set[str]:
    from empirical.core import experiment as registry

    registry.ids(key)             # a paper's unit declares what it uses when it is loaded
    return set(bounds.paper_info(key).uses)


def _violations(rule) -> list[str]:
    return [f"{a} -> {b} (line {line})" for a, b, line, top in _edges() if rule(a, b)]


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_walk_sees_the_imports_it_must():
    """The rules below can fail: the walk finds imports inside functions and relative ones."""
    edges = {(a, b): top for a, b, _, top in _edges()}
    assert edges[("empirical.cli.work", "empirical.store.analysis_cache")] is False  # in a function
    assert edges[("empirical.papers.kl.experiments", "empirical.papers.kl.problems")] is True
    assert len(_paper_keys()) >= 6 and "kl" in _paper_keys()
    assert _unit("algorithms.kl.condition") == "kl" and _unit("algorithms.accounting") is None


def test_bounds_and_algorithms_import_nothing_above_them():
    bad = _violations(lambda a, b: (_under(a, "bounds") and not _under(b, "bounds"))
                      or (_under(a, "algorithms") and not _under(b, "algorithms")))
    assert not bad, bad


def test_no_algorithms_paper_package_imports_another():
    def rule(a: str, b: str) -> bool:
        if not (_under(a, "algorithms") and _under(b, "algorithms")):
            return False
        ua, ub = _unit(a), _unit(b)
        return ub is not None and ua != ub        # shared numerics import no paper package either
    bad = _violations(rule)
    assert not bad, bad


_CORE_OUTSIDE = {"numpy", "scipy", "sympy", "mpmath", "bounds"}


def test_core_imports_only_bounds():
    bad = _violations(lambda a, b: _under(a, "empirical.core")
                      and not _under(b, "bounds", "empirical.core"))
    assert not bad, bad
    outside = []
    for name, path in _modules().items():
        if _under(name, "empirical.core"):
            for target, line, _ in _imports_of(name, path):
                top = target.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in _CORE_OUTSIDE | {"empirical"}:
                    outside.append(f"{name} -> {target} (line {line})")
    assert not outside, outside


def test_paper_units_import_no_harness_above_them_and_no_other_paper():
    def rule(a: str, b: str) -> bool:
        ua = _unit(a)
        if ua is None or not _under(a, "empirical.papers"):
            return False
        if _under(b, "empirical.run", "empirical.report", "empirical.cli"):
            return True
        ub = _unit(b)
        return ub is not None and ub != ua and ub not in _uses(ua)
    bad = _violations(rule)
    assert not bad, bad


def _cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    adj: dict[str, list[str]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    counter = 0
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(adj[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = counter
                counter += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(adj[w])))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def test_cycle_finder_finds_a_cycle():
    assert _cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]
    assert _cycles([("a", "b"), ("b", "c")]) == []


def test_no_import_cycle_at_module_level():
    top_edges = [(a, _resolve(b)) for a, b, _, top in _edges() if top and _resolve(b)]
    cycles = _cycles([(a, b) for a, b in top_edges if a != b])
    assert not cycles, cycles


#: Imports inside functions left out of the test below, one edge each (none: every import,
#: inside a function or not, points one way).
_CYCLE_ALLOWED: set[tuple[str, str]] = set()


def test_no_import_cycle_including_imports_inside_functions():
    """An import inside a function closes a cycle as surely as one at the top, only later: no
    cycle anywhere, but for the edges of :data:`_CYCLE_ALLOWED`, each of which must still exist."""
    edges = {(a, _resolve(b)) for a, b, _, _ in _edges() if _resolve(b) and _resolve(b) != a}
    gone = _CYCLE_ALLOWED - edges
    assert not gone, f"no longer imported; delete from _CYCLE_ALLOWED: {sorted(gone)}"
    cycles = _cycles(sorted(edges - _CYCLE_ALLOWED))
    assert not cycles, cycles


# --------------------------------------------------------------------------------------------
# No paper named outside its own code
# --------------------------------------------------------------------------------------------

def _names_in(text: str, keys: tuple[str, ...]) -> set[str]:
    """Paper keys a name or a string that is one name names: the key itself, an id (``kl:thm9``,
    ``kl.thm9.n``), or a module path of a paper's code (``empirical.papers.kl``,
    ``bounds.rates.kl.x``, ``algorithms.kl.condition``).  Prose (docstrings, messages) is not a
    name."""
    if not re.fullmatch(r"[A-Za-z_][\w.:\-]*", text):
        return set()
    m = re.match(r"(?:empirical\.papers\.|bounds\.rates\.|algorithms\.)?([a-z][a-z0-9_]*)", text)
    return {m.group(1)} if m and m.group(1) in keys else set()


def _named_keys(path: Path, keys: tuple[str, ...]) -> dict[str, int]:
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts = [node.value]
        elif isinstance(node, ast.Name):
            texts = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [node.name]
        elif isinstance(node, ast.arg):
            texts = [node.arg]
        elif isinstance(node, ast.alias):
            texts = [node.name, node.asname or ""]
        elif isinstance(node, ast.ImportFrom):
            texts = [node.module or ""]
        for t in texts:
            for k in _names_in(t, keys):
                found.setdefault(k, getattr(node, "lineno", 0))
    return found


def test_key_finder_finds_what_it_must():
    keys = ("kl", "real")
    assert _names_in("kl:thm9", keys) == {"kl"} and _names_in("kl.thm9.n", keys) == {"kl"}
    assert _names_in("empirical.papers.kl.problems", keys) == {"kl"}
    assert _names_in("real.kan.lambda", keys) == {"real"}
    assert _names_in("the KL paper's kl rate", keys) == set()     # prose is not a name
    assert _names_in("algorithms.kl", keys) == {"kl"} and _names_in("kl", keys) == {"kl"}
    assert _names_in("empirical.report.contrasts", keys) == set()


def test_no_module_outside_a_papers_code_names_a_paper():
    keys = _paper_keys()
    bad = []
    for name, path in sorted(_modules().items()):
        unit = _unit(name)
        allowed = {unit} | _uses(unit) if unit else set()
        for key, line in sorted(_named_keys(path, keys).items()):
            if key not in allowed:
                bad.append(f"{name} names {key!r} (line {line})")
    assert not bad, bad


@pytest.mark.parametrize("key", ["kl", "kan", "linreg", "sosp", "userlevel", "real"])
def test_every_built_in_paper_is_declared_and_discovered(key):
    """This project's papers are found the way a plugin's are: from their entry points."""
    assert key in _paper_keys() and key in bounds.papers()
    assert bounds.core.paper_modules(key)[0] == dict(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
        ["dprates.papers"])[key]
