"""Mutation self-test: deliberately broken variants of the algorithms, and which checks catch them.

A :class:`Mutant` is a list of :class:`Patch` es, each replacing one module attribute (a noise
draw, a sensitivity, a step count, a projection, an accountant call) for the duration of
:func:`applied`; no algorithm source is edited.  ``run_mutant`` applies one in a fresh
subprocess (so cached problems, plans and registries start clean), re-runs the mutant's quick
grids with ``verify``'s analysis (slopes, levels, privacy and settings verdicts), its privacy
audits and its unit tests, and reports what failed.  A mutant is *caught* when anything failed;
every registered mutant must be caught (``dprates audit --mutants``; as a test:
``DPRATES_MUTATION=1 pytest tests/test_mutants.py``).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

if __name__ == "__main__":  # pragma: no cover
    # `python -m empirical.privacy.mutants` (run_mutant's subprocess) would run this file twice: as
    # __main__ and, once an audit module imports it, as empirical.privacy.mutants, each with a registry
    # of its own.  Handing over before anything is defined leaves one module and one registry,
    # so every audit module's mutants are known here (tests/test_mutants.py checks it).
    from empirical.privacy.mutants import _main

    sys.exit(_main())

__all__ = ["Patch", "Mutant", "register_mutant", "mutants", "get_mutant", "applied",
           "with_mutant", "scaled_result", "run_mutant", "run_all", "format_mutant_table",
           "run_cli", "CLASSES", "audit_catches"]


@dataclass(frozen=True)
class Patch:
    """Replace ``module.attribute`` by ``make(original)``.

    ``everywhere``: also replace every module global in ``sys.modules`` bound to the same
    original object (``from module import f`` copies), so a bug in a shared primitive reaches
    all its callers; ``False`` confines the bug to ``module`` (e.g. one paper's use of a shared
    sensitivity function)."""

    module: str
    attribute: str
    make: Callable[[Any], Any]
    everywhere: bool = True


@dataclass(frozen=True)
class Mutant:
    name: str
    paper: str
    description: str
    patches: tuple[Patch, ...]
    experiments: tuple[str, ...] = ()
    audits: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    audit_trials: int | None = None
    #: bug class (:data:`CLASSES`)
    bug_class: str = ""
    #: when ``verify`` (not an audit) is expected to catch it: which check, and why
    verify_note: str = ""

    def __post_init__(self) -> None:
        if not self.patches:
            raise ValueError(f"{self.name}: a mutant needs at least one patch")
        if not (self.experiments or self.audits or self.tests):
            raise ValueError(f"{self.name}: a mutant must name experiments, audits or tests "
                             "that should catch it")
        if self.bug_class and self.bug_class not in CLASSES:
            raise ValueError(f"bug_class must be one of {CLASSES}, got {self.bug_class!r}")


_MUTANTS: dict[str, Mutant] = {}
#: The bug classes the self-test covers.  Privacy and accounting classes (the first four) must be
#: caught by an audit; "averaging skipped" changes no privacy claim (averaging is
#: post-processing) and is a rate bug for verify's level checks.
CLASSES = ("noise omitted", "relation factor slipped", "composition count halved",
           "AboveThreshold noise slip", "averaging skipped")


def register_mutant(m: Mutant) -> Mutant:
    """Add ``m`` to the registry (at import time of an audit module).

    Registering the same mutant again (a module imported twice, e.g. once as ``__main__``)
    replaces it; a different mutant under a registered name is a ValueError, because the
    first would silently never run."""
    old = _MUTANTS.get(m.name)
    if old is not None and (old.paper, old.description) != (m.paper, m.description):
        raise ValueError(f"mutant name {m.name!r} is registered already "
                         f"({old.paper}: {old.description})")
    _MUTANTS[m.name] = m
    return m


def audit_modules() -> list[str]:
    """The project's audit modules (``empirical/papers/<key>/audit.py`` and ``mutants.py``):
    where the paper's mutants are registered, beside the audits that should catch them."""
    import pkgutil

    import empirical.papers

    return sorted(f"empirical.papers.{m.name}.{leaf}"
                  for m in pkgutil.iter_modules(empirical.papers.__path__) if m.ispkg
                  for leaf in ("audit", "mutants")
                  if any(os.path.exists(os.path.join(p, m.name, f"{leaf}.py"))
                         for p in empirical.papers.__path__))


def _load() -> None:
    from empirical.core import experiment as registry

    registry._load_all()
    importlib.import_module("empirical.privacy.audit")._load()
    # Every audit module, not only those its paper's module or the audit registry happen to
    # import (sosp_audit and audit_userlevel were reached only through their paper modules).
    for name in audit_modules():
        importlib.import_module(name)


def mutants(selection: Sequence[str] | None = None) -> list[Mutant]:
    """Registered mutants by name, name prefix or paper key; all when empty (KeyError for a
    selector matching none)."""
    from empirical.privacy.audit import select_registered

    _load()
    return select_registered(_MUTANTS, selection, "mutant")


def get_mutant(name: str) -> Mutant:
    if name not in _MUTANTS:
        _load()
    return _MUTANTS[name]


@contextlib.contextmanager
def applied(m: Mutant) -> Iterator[Mutant]:
    """Apply ``m``'s patches (see :class:`Patch`), restoring every replaced binding on exit."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for p in m.patches:
            mod = importlib.import_module(p.module)
            orig = getattr(mod, p.attribute)
            new = p.make(orig)
            holders = [mod]
            if p.everywhere:
                holders += [x for x in list(sys.modules.values())
                            if x is not None and x is not mod
                            and getattr(x, "__dict__", {}).get(p.attribute, None) is orig]
                # also other names bound to the same object
                for x in list(sys.modules.values()):
                    d = getattr(x, "__dict__", None)
                    if not isinstance(d, dict):
                        continue
                    for k, v in list(d.items()):
                        if v is orig and k != p.attribute:
                            saved.append((x, k, v))
                            setattr(x, k, new)
            for h in holders:
                saved.append((h, p.attribute, orig))
                setattr(h, p.attribute, new)
        yield m
    finally:
        for holder, attr, val in reversed(saved):
            setattr(holder, attr, val)


def with_mutant(name: str, release: Callable[..., Any]) -> Callable[..., Any]:
    """``release(side, rng, trials)`` run under the registered mutant ``name``: an audit's
    broken control, which must be CAUGHT.  The wrapper keeps ``release``'s ``__module__``
    (functools.wraps): the audit store fingerprints the module that defines a target's release
    (empirical/store/audit_store.py), which must stay the audit module, not this one."""
    @functools.wraps(release)
    def broken(side: int, rng: np.random.Generator, trials: int) -> Any:
        with applied(get_mutant(name)):
            return release(side, rng, trials)
    return broken


def scaled_result(factor: float) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``make(orig)`` for a :class:`Patch`: the function returning ``factor`` × what ``orig``
    returns (a noise draw, a sensitivity, an accountant's ε)."""
    return lambda orig: (lambda *a, **k: factor * orig(*a, **k))


# =============================================================================================
# running one mutant (inside its own process)
# =============================================================================================
def _run_here(m: Mutant, results: str, audit_trials: int | None) -> dict:
    """Apply ``m`` in this process and run everything that should catch it."""
    from empirical.privacy import audit
    from empirical.core import experiment as registry
    from empirical.core.checks import analyse, detectable_exponent_error
    from empirical.run.runner import sweep

    _load()
    report: dict = {"mutant": m.name, "experiments": {}, "audits": {}, "tests": {}}
    with applied(m):
        for eid in m.experiments:
            exp = registry.get(eid)
            # a full-grid-only experiment is judged where verify judges it: on its full grid
            # (its quick grid is inconclusive with or without the mutant)
            full = bool(exp.full_only)
            try:
                rows = sweep(exp, full=full, results=os.path.join(results, m.name), workers=1)
                a = analyse(exp, rows)
                failed = [f"{r.bound} {r.kind}: {r.verdict}" for r in a.results if not r.ok]
                if a.privacy_error:
                    failed.append(f"privacy: {a.privacy_error}")
                if a.error:
                    failed.append(f"error: {a.error}")
                report["experiments"][eid] = {
                    "caught": bool(failed), "failed": failed, "grid": "full" if full else "quick",
                    "checks": [{"bound": r.bound, "kind": r.kind, "verdict": r.verdict,
                                "slope": r.observed.slope, "tolerance": r.tolerance,
                                "level_range": r.level_range, "level_band": r.level_band,
                                "detectable": detectable_exponent_error(r, a.kept)}
                               for r in a.results]}
            except Exception as exc:   # a crash under the mutant is a catch too, but say so
                report["experiments"][eid] = {"caught": True,
                                              "failed": [f"crashed: {type(exc).__name__}: {exc}"],
                                              "checks": []}
        for name in m.audits:
            t = audit.get_target(name)
            r = audit.run_audit(t, trials=audit_trials or m.audit_trials)
            # caught at the target's δ or at its profile point (either ε_lo above its claim)
            points = [(t.delta, r.audited, r.claimed)] + (
                [(r.profile.delta, r.profile.audited, r.profile.claimed)] if r.profile else [])
            over = [p for p in points if p[1] > p[2]] or points[:1]
            report["audits"][name] = {"caught": r.exceeded, "delta": over[0][0],
                                      "audited": over[0][1], "claimed": over[0][2],
                                      "points": [list(p) for p in points],
                                      "verdict": r.verdict}
        if m.tests:
            import pytest

            code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", *m.tests])
            report["tests"] = {" ".join(m.tests): {"caught": int(code) != 0, "code": int(code)}}
    report["caught_by"] = ([f"experiment {k}: {'; '.join(v['failed'])}"
                            for k, v in report["experiments"].items() if v["caught"]]
                           + [f"audit {k}: " + "; ".join(
                               f"ε_lo {lo:.2f} > claimed {c:.2f} at δ = {d:g}"
                               for d, lo, c in v["points"] if lo > c)
                              for k, v in report["audits"].items() if v["caught"]]
                           + [f"tests {k}" for k, v in report["tests"].items() if v["caught"]])
    report["caught"] = bool(report["caught_by"])
    return report


def audit_catches(m: Mutant, *, trials: int | None = None, search: str = "quick") -> dict:
    """Apply ``m`` in this process and run only its audits: {target: (ε_lo, claimed)} and
    whether any ε_lo exceeds its claim (the audit half of :func:`run_mutant`, without the
    subprocess and the experiments; for the privacy classes, which the audits must catch)."""
    from empirical.privacy import audit

    _load()
    out: dict = {}
    with applied(m):
        for name in m.audits:
            r = audit.run_audit(audit.get_target(name), trials=trials or m.audit_trials,
                                search=search)
            # (ε_lo, claimed) at the point that exceeds its claim, else at the target's δ
            pp = r.profile if r.profile is not None and r.profile.exceeded else None
            out[name] = (pp.audited, pp.claimed) if pp else (r.audited, r.claimed)
    return {"audits": out, "caught": any(lo > c for lo, c in out.values())}


def run_mutant(m: Mutant, *, results: str | None = None, audit_trials: int | None = None,
               timeout: float = 1800) -> dict:
    """Run ``m`` in a fresh subprocess; returns its report (``caught``, ``caught_by``, ...)."""
    root = results or tempfile.mkdtemp(prefix="dprates-mutants-")
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as fh:
        out = fh.name
    cmd = [sys.executable, "-m", "empirical.privacy.mutants", "--one", m.name, "--results", root,
           "--json", out] + (["--audit-trials", str(audit_trials)] if audit_trials else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        with open(out) as fh:
            rep = json.load(fh)
    except (OSError, json.JSONDecodeError):
        rep = {"mutant": m.name, "caught": False, "caught_by": [],
               "error": f"subprocess exit {proc.returncode}: {proc.stderr[-2000:]}"}
    finally:
        with contextlib.suppress(OSError):
            os.unlink(out)
    rep["seconds"] = time.perf_counter() - t0
    return rep


def run_all(selection: Sequence[str] | None = None, **kw) -> list[dict]:
    return [run_mutant(m, **kw) for m in mutants(selection)]


def format_mutant_table(reports: Sequence[dict]) -> str:
    lines = []
    for r in reports:
        m = _MUTANTS.get(r["mutant"])
        lines.append(f"{r['mutant']:<44} {'CAUGHT' if r['caught'] else 'MISSED'}  "
                     f"({r.get('seconds', 0):.0f}s)  {m.description if m else ''}"
                     + (f"  [{m.bug_class}]" if m and m.bug_class else ""))
        if m and m.verify_note:
            lines.append(f"    expected catcher: {m.verify_note}")
        for c in r.get("caught_by", []):
            lines.append(f"    caught by {c}")
        if r.get("error"):
            lines.append(f"    ERROR {r['error']}")
    return "\n".join(lines)


def detectable_report(exp_ids: Sequence[str], results: str | None = None) -> str:
    """Each check's smallest detectable exponent error on the *honest* data of the grid
    ``verify`` judges (the quick one; the full one for a full-grid-only experiment; run or
    loaded from ``results``), beside its tolerance: the largest e < 0 and e > 0 such that a bug
    multiplying the metric by v^e would still pass the slope and level checks
    (:func:`empirical.core.checks.detectable_exponent_error`)."""
    from empirical.core import experiment as registry
    from empirical.core.checks import analyse, detectable_exponent_error
    from empirical.run.runner import sweep

    lines = ["Smallest detectable exponent error on the honest data (a bug multiplying the metric "
             "by v^e passes only for e strictly inside these):",
             f"  {'experiment':<26} {'bound':<16} {'kind':<10} {'tol':<5} {'slope only':<17} "
             f"{'slope + level':<17}"]
    for eid in exp_ids:
        exp = registry.get(eid)
        a = analyse(exp, sweep(exp, full=bool(exp.full_only), results=results, workers=1))
        for r in a.results:
            if r.kind == "reject":
                continue
            both = detectable_exponent_error(r, a.kept)
            slope = detectable_exponent_error(dataclasses.replace(r, level_band=None), a.kept)
            lines.append(f"  {eid:<26} {r.bound:<16} {r.kind:<10} {r.tolerance:<5g} "
                         f"{slope[0]:+.3f} / {slope[1]:+.3f}   {both[0]:+.3f} / {both[1]:+.3f}")
    return "\n".join(lines)


def run_cli(args: argparse.Namespace) -> int:
    try:
        sel = mutants(getattr(args, "mutant", None))
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    reports = []
    for m in sel:
        print(f"[mutant] {m.name} ...", file=sys.stderr)
        reports.append(run_mutant(m, results=getattr(args, "results", None),
                                  audit_trials=getattr(args, "trials", None)))
        print(f"[mutant] {m.name}: {'CAUGHT' if reports[-1]['caught'] else 'MISSED'}",
              file=sys.stderr)
    print(format_mutant_table(reports))
    exp_ids = sorted({e for m in sel for e in m.experiments})
    if exp_ids:
        print()
        print(detectable_report(exp_ids, getattr(args, "results", None)
                                and os.path.join(args.results, "honest")))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    print(f"\n{len(reports) - len(missed)}/{len(reports)} mutants caught"
          + (f"; MISSED: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


# =============================================================================================
# the registry of broken variants
# =============================================================================================
def _scaled(factor: Callable[..., float]):
    """make(orig) for a noise draw returning standard normals of shape (..., d): multiply them."""
    def make(orig):
        def draw(*a, **k):
            z = orig(*a, **k)
            return z * factor(z)
        return draw
    return make


def _const(value):
    return lambda orig: (lambda *a, **k: value)


# =============================================================================================
def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m empirical.privacy.mutants")
    p.add_argument("--one", help="run this mutant in this process and write --json")
    p.add_argument("--json")
    p.add_argument("--results", default=None)
    p.add_argument("--audit-trials", type=int, default=None)
    p.add_argument("--list", action="store_true", help="list the registered mutants and exit")
    p.add_argument("mutant", nargs="*")
    a = p.parse_args(argv)
    if a.list:
        for m in mutants(a.mutant or None):
            print(f"{m.name:<44} {m.paper:<10} {m.bug_class or '-':<26} {m.description}")
        return 0
    if a.one:
        rep = _run_here(get_mutant(a.one), a.results or tempfile.mkdtemp(), a.audit_trials)
        from empirical.store.integrity import atomic_write_text

        atomic_write_text(a.json, json.dumps(
            rep, default=lambda o: o.tolist() if isinstance(o, np.ndarray) else str(o)))
        return 0
    ns = argparse.Namespace(mutant=a.mutant or None, results=a.results, trials=a.audit_trials)
    return run_cli(ns)
