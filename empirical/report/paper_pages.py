"""Generated tables of the per-paper pages ``docs/papers/<paper>.md`` (all five papers and the
real-data experiments): each paper's registered bounds and experiments, written between markers so
that the pages cannot drift from the registries (``bounds``, :mod:`empirical.core.experiment`).

A page holds blocks::

    <!-- generated: bounds kl -->
    ...
    <!-- end generated -->

with kinds ``bounds``, ``experiments``, ``audits`` (the registered privacy audit targets,
:mod:`empirical.privacy.audit`) and ``mutants`` (the mutation self-test's broken variants,
:mod:`empirical.privacy.mutants`).  :func:`regenerate` rewrites every block of a page;
``python -m empirical.report.paper_pages`` rewrites the pages in place, ``--check`` only reports stale
ones (exit status 1).  ``tests/test_paper_pages.py`` requires every page to be current.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Sequence

import bounds
from empirical.report import errata

__all__ = ["PAGES", "bounds_table", "experiments_table", "audits_table", "mutants_table", "regenerate", "main"]

#: The directory of the per-paper pages.
PAGES = errata.ERRATA.parent / "papers"

_BLOCK = re.compile(r"(<!-- generated: (?P<kind>bounds|experiments|audits|mutants) (?P<paper>[a-z][a-z0-9_]*) -->\n)"
                    r"(?P<body>.*?)"
                    r"(<!-- end generated -->)", re.S)


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def _source(text: str) -> str:
    # Only the paper is cited on the pages; a trailing reference to other reading material is cut.
    return re.split(r";\s*(?:the\s+)?notes\b|,?\s*notes'? (?:§|E\d)", text)[0].rstrip(" ;,")


def bounds_table(paper: str) -> list[str]:
    """Markdown rows: every registered bound of ``paper`` with its kind and source."""
    bounds.core._load_all(paper)
    ids = bounds.ids(paper)
    if not ids:
        raise ValueError(f"paper must be one of {bounds.papers()} with registered bounds, "
                         f"got {paper!r}")
    rows = ["| id | kind | source |", "|---|---|---|"]
    for bid in ids:
        b = bounds.get(bid)
        rows.append(f"| `{bid}` | {b.kind} | {_cell(_source(b.source))} |")
    return rows


def _checks_cell(exp) -> str:
    contrasts = getattr(exp, "contrasts", ())
    if contrasts:
        return "; ".join(f"{_cell(c.name)} ({c.kind}"
                         + (", finding" if c.expect == "finding" else "") + ")"
                         for c in contrasts)
    parts = []
    for c in exp.checks:
        quick, full = c.expectation(False), c.expectation(True)
        tag = ("finding" if quick == full == "finding" else
               "finding on the full grid" if full == "finding" else
               "finding on the quick grid" if quick == "finding" else "")
        parts.append(f"`{c.bound}` {c.kind}" + (f" ({tag})" if tag else ""))
    return "; ".join(parts)


def experiments_table(paper: str) -> list[str]:
    """Markdown rows: every registered experiment of ``paper`` with its swept variable and its
    checks (bound and kind; ``finding`` where a finding is declared)."""
    from empirical.core import experiment as registry

    exps = [e for e in registry.experiments(paper) if e.id.startswith(f"{paper}.")]
    if not exps:
        raise ValueError(f"paper {paper!r} has no registered experiments")
    rows = ["| experiment | swept | checks |", "|---|---|---|"]
    for e in exps:
        rows.append(f"| `{e.id}` | `{e.variable}` | {_checks_cell(e)} |")
    return rows


def audits_table(paper: str) -> list[str]:
    """Markdown rows: every registered audit target of ``paper`` with the algorithm, neighbouring
    relation, view, claimed ε and whether it is an honest target or a broken control."""
    from empirical.privacy import audit

    audit._load(paper)
    targets = [t for t in audit.targets() if t.paper == paper]
    if not targets:
        raise ValueError(f"paper {paper!r} has no registered audit targets")
    rows = ["| target | algorithm | relation | view | claimed ε | kind |",
            "|---|---|---|---|---|---|"]
    for t in sorted(targets, key=lambda t: (t.expect != "private", t.name)):
        kind = "honest" if t.expect == "private" else "broken control"
        rows.append(f"| `{t.name}` | {_cell(t.algorithm)} | {t.relation} | {t.view} | "
                    f"{t.claimed_epsilon():.3g} at δ = {t.delta:.3g} | {kind} |")
    return rows


def mutants_table(paper: str) -> list[str]:
    """Markdown rows: every registered mutant of ``paper``, what it breaks, and the experiments,
    audits and tests it is run against (any of them failing counts as caught)."""
    from empirical.privacy import mutants

    mutants._load()
    ms = [m for m in mutants.mutants() if m.paper == paper]
    if not ms:
        raise ValueError(f"paper {paper!r} has no registered mutants")
    rows = ["| mutant | what it breaks | run against |", "|---|---|---|"]
    for m in sorted(ms, key=lambda m: m.name):
        against = [f"`{e}`" for e in m.experiments] + [f"audit `{a}`" for a in m.audits]
        against += [f"`{t}`" for t in m.tests]
        rows.append(f"| `{m.name}` | {_cell(m.description)} | {', '.join(against)} |")
    return rows


_TABLES = {"bounds": bounds_table, "experiments": experiments_table, "audits": audits_table,
           "mutants": mutants_table}


def regenerate(text: str) -> str:
    """``text`` with every generated block rewritten from the registries."""
    def block(m: re.Match) -> str:
        return (m.group(1) + "\n".join(_TABLES[m.group("kind")](m.group("paper"))) + "\n"
                + m.group(5))
    return _BLOCK.sub(block, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated blocks of every page (``--check``: only list stale pages)."""
    p = argparse.ArgumentParser(prog="python -m empirical.report.paper_pages", description=__doc__)
    p.add_argument("--check", action="store_true", help="report stale pages, change nothing")
    args = p.parse_args(argv)
    stale = []
    for page in sorted(PAGES.glob("*.md")):
        old = page.read_text(encoding="utf-8")
        try:
            new = regenerate(old)
        except bounds.core.OptionalExtraMissing as exc:    # scikit-learn for `real`
            print(f"skipped: {page.name}: {exc}")
            continue
        if new != old:
            stale.append(page.name)
            if not args.check:
                tmp = page.with_suffix(".md.tmp")
                tmp.write_text(new, encoding="utf-8")
                tmp.replace(page)           # atomic: a reader never sees half a page
    for name in stale:
        print(("stale: " if args.check else "rewrote: ") + name)
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
