"""Tables and counts in the documentation, generated from the registries so that they cannot go
stale: each paper's bounds, experiments, audit targets and mutants on ``docs/papers/<paper>.md``,
all audit targets and mutants on docs/privacy.md, the counts per paper on docs/methodology.md.

A generated block sits between two markers::

    <!-- generated: KIND [PAPER] -->
    ...
    <!-- end generated -->

with the kinds of :data:`BLOCKS`: ``bounds``, ``experiments`` and ``audits`` take a paper key;
``mutants`` takes one or, without, lists every paper's; ``audit-index`` (counts per paper, linked
to the paper pages that list them), ``audit-targets`` (those of no paper page), ``audit-counts``
and ``registry-counts`` take none.  :func:`refresh` re-renders every block of a text,
:func:`stale_blocks` names the blocks that differ.  ``python -m empirical.report.doc_tables
[FILE ...]`` rewrites the blocks of the files named (default: every Markdown file under docs/
with a block); ``--check`` only names the stale ones (exit 1).  tests/test_docs.py and
tests/test_paper_pages.py run it in a fresh process, so that nothing a test registers leaks into
the tables.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable, Sequence

import bounds
from empirical.report import errata

__all__ = ["DOCS", "PAGES", "BLOCKS", "bounds_table", "experiments_table", "audits_table",
           "mutants_table", "audit_targets", "audit_counts", "registry_counts", "render",
           "refresh", "stale_blocks", "main"]

#: The documentation directory of this checkout, and its per-paper pages.
DOCS = errata.ERRATA.parent
PAGES = DOCS / "papers"

_BLOCK = re.compile(r"(<!-- generated: (?P<kind>[a-z][\w-]*)(?: (?P<paper>[a-z][a-z0-9_]*))? -->\n)"
                    r"(?P<body>.*?)"
                    r"(?P<end><!-- end generated -->)", re.S)


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def _source(text: str) -> str:
    # Only the paper is cited on the pages; a trailing reference to other reading material is cut.
    return re.split(r";\s*(?:the\s+)?notes\b|,?\s*notes'? (?:§|E\d)", text)[0].rstrip(" ;,")


#: "KL paper, " and the like: the page is that paper's, so the table's caption says it once.
_OWN_PAPER = re.compile(r"^(?:the\s+)?[\w-]+(?: [\w-]+)?\s+paper,\s+")
#: A result with its location, "Theorem 4 (§7, proof App. D.3, eq. 141–143)".
_LOCATED = re.compile(r"\b((?:Theorem|Thm|Lemma|Corollary|Proposition|Remark) [\w.]+) "
                      r"(\((?:[^()]|\([^()]*\))*\))")


def _sources(texts: Sequence[str]) -> list[str]:
    """The sources of one paper's bounds, shortened for its page: the paper's own name dropped,
    and a result's location given at its first mention only."""
    seen: set[str] = set()
    out = []
    for text in texts:
        short = _OWN_PAPER.sub("", _source(text))

        def once(m: re.Match) -> str:
            if m.group(0) in seen:
                return m.group(1)
            seen.add(m.group(0))
            return m.group(0)

        out.append(_LOCATED.sub(once, short))
    return out


# ---------------------------------------------------------------------------------------------
# One paper's tables (docs/papers/<paper>.md)
# ---------------------------------------------------------------------------------------------

#: A bound's source is cut here in the tables (as in the coverage table): the page is read for
#: where a statement is, and `dprates bounds show` prints it whole.
_SOURCE_CHARS = 90


def bounds_table(paper: str) -> list[str]:
    """Markdown rows: every registered bound of ``paper`` with its kind and source."""
    bounds.core._load_all(paper)
    ids = bounds.ids(paper)
    if not ids:
        raise ValueError(f"paper must be one of {bounds.papers()} with registered bounds, "
                         f"got {paper!r}")
    rows = ["| id | source in the paper (kind, where not an upper bound; past 90 characters, "
            "the whole source is `dprates bounds show ID`'s) |", "|---|---|"]
    for bid, source in zip(ids, _sources([bounds.get(b).source for b in ids])):
        kind = bounds.get(bid).kind
        short = source if len(source) <= _SOURCE_CHARS else source[:_SOURCE_CHARS - 1] + "…"
        rows.append(f"| `{bid}` | {'' if kind == 'upper' else f'({kind}) '}{_cell(short)} |")
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
               "finding, full grid" if full == "finding" else
               "finding, quick grid" if quick == "finding" else "")
        # the paper's own bounds without the "paper:" prefix the table's header names
        bound = c.bound.removeprefix(f"{exp.paper}:")
        parts.append(f"{_KIND_MARK.get(c.kind, c.kind)} {bound}" + (f" ({tag})" if tag else ""))
    return "; ".join(parts)


#: One mark per check kind, explained in the experiments table's header.
_KIND_MARK = {"two-sided": "=", "one-sided": "≤", "one-sided-lower": "≥", "reject": "≠"}


def experiments_table(paper: str) -> list[str]:
    """Markdown rows: every registered experiment of ``paper`` with its checks (bound and kind;
    ``finding`` where a finding is declared)."""
    from empirical.core import experiment as registry

    exps = [e for e in registry.experiments(paper) if e.id.startswith(f"{paper}.")]
    if not exps:
        raise ValueError(f"paper {paper!r} has no registered experiments")
    marks = "= two-sided, ≤ one-sided, ≥ one-sided-lower, ≠ rejected competitor"
    own = f"bounds `{paper}:…`; " if paper in bounds.papers() and bounds.ids(paper) else ""
    heads = ([f"checks ({own}{marks})"] if not all(getattr(e, "contrasts", ()) for e in exps)
             else []) + (["contrasts (kind)"] if any(getattr(e, "contrasts", ()) for e in exps)
                         else [])
    head = " or ".join(heads)
    # the swept variable where the id does not name it
    rows = [f"| experiment | {head} |", "|---|---|"]
    for e in exps:
        named = {e.variable, _SHORT.get(e.variable, e.variable)} & set(re.split(r"[._]", e.id))
        swept = "" if named or (len(e.variable) > 2 and e.variable in e.id) else f" (in {e.variable})"
        rows.append(f"| `{e.id}`{swept} | {_checks_cell(e)} |")
    return rows


#: How experiment ids abbreviate a swept variable.
_SHORT = {"epsilon": "eps", "condition_number": "kappa"}


def audits_table(paper: str) -> list[str]:
    """Markdown rows: every honest audit target of ``paper`` with the algorithm, neighbouring
    relation, view and claimed ε, then one line naming its broken controls (described where no
    mutant of the same name describes them)."""
    from empirical.privacy import audit
    from empirical.privacy import mutants

    audit._load(paper)
    mutants._load()
    targets = [t for t in audit.targets() if t.paper == paper]
    if not targets:
        raise ValueError(f"paper {paper!r} has no registered audit targets")
    named = {m.name for m in mutants.mutants()}
    rows = ["| target | algorithm | relation, view | claimed ε (δ) |", "|---|---|---|---|"]
    for t in sorted((t for t in targets if t.expect != "broken"), key=lambda t: t.name):
        # the function's name without its module path (the page names the modules)
        algorithm = re.sub(r"\balgorithms\.(?:\w+\.)+(?=\w)", "", t.algorithm)
        rows.append(f"| `{t.name}` | {_cell(algorithm)} | {t.relation}, {t.view} | "
                    f"{t.claimed_epsilon():.3g} ({t.delta:.3g}) |")
    controls = sorted((t for t in targets if t.expect == "broken"), key=lambda t: t.name)
    if controls:
        rows += ["", "Broken controls (each must be `CAUGHT`; a mutant of the same name describes "
                 "it): " + "; ".join(f"`{t.name}`" + ("" if t.name in named else
                                                      f" ({_cell(t.algorithm)})")
                                     for t in controls) + "."]
    return rows


def mutants_table(paper: str | None = None) -> list[str]:
    """Markdown rows: every registered mutant of ``paper`` (None: of every paper, with a paper
    column), what it breaks, and the experiments, audits and tests it is run against (any of
    them failing counts as caught)."""
    from empirical.privacy import mutants

    mutants._load()
    ms = [m for m in mutants.mutants() if paper is None or m.paper == paper]
    if not ms:
        raise ValueError(f"paper {paper!r} has no registered mutants")
    if paper is not None:
        ms = sorted(ms, key=lambda m: m.name)
    rows = ([f"| mutant | what it breaks | run against (ids without `{paper}.`) |", "|---|---|---|"]
            if paper else
            ["| mutant | paper | the bug injected | re-run to catch it |", "|---|---|---|---|"])

    def own(ids: Sequence[str]) -> list[str]:
        return [i.removeprefix(f"{paper}.") if paper else i for i in ids]

    for m in ms:
        against = own(m.experiments)
        against += [("audits " if len(m.audits) > 1 else "audit ") + ", ".join(own(m.audits))
                    ] if m.audits else []
        # a test by its function name (its file is the paper's audit or mutant test)
        against += [t.split("::")[-1] for t in m.tests]
        middle = _cell(m.description) if paper else f"{m.paper} | {_cell(m.description)}"
        rows.append(f"| `{m.name}` | {middle} | {', '.join(against)} |")
    return rows


# ---------------------------------------------------------------------------------------------
# Tables over all papers (docs/privacy.md, docs/methodology.md)
# ---------------------------------------------------------------------------------------------

def audit_index() -> list[str]:
    """Markdown rows: per paper, its audit claims, broken controls and mutants, with a link to
    the paper's page, where each is listed in full (one table each, not repeated here)."""
    from empirical.privacy.audit import targets
    from empirical.privacy.mutants import mutants as registered

    ts, ms = targets(), registered()
    rows = ["| paper | audit claims | broken controls | mutants | listed in |", "|---|---|---|---|---|"]
    for paper in sorted({t.paper for t in ts} | {m.paper for m in ms}):
        mine = [t for t in ts if t.paper == paper]
        page = Path(DOCS, "papers", f"{paper}.md")
        where = f"[docs/papers/{paper}.md](papers/{paper}.md)" if page.exists() else "below"
        rows.append(f"| `{paper}` | {sum(t.expect != 'broken' for t in mine)} | "
                    f"{sum(t.expect == 'broken' for t in mine)} | "
                    f"{sum(m.paper == paper for m in ms)} | {where} |")
    return rows


def audit_targets() -> list[str]:
    """Markdown rows: every registered audit target of no paper page (the core mechanisms),
    claims and broken controls."""
    from empirical.privacy.audit import targets

    rows = ["| target | paper | relation | view | kind | what is run |", "|---|---|---|---|---|---|"]
    for t in targets():
        if Path(DOCS, "papers", f"{t.paper}.md").exists():
            continue
        kind = "control (must be caught)" if t.expect == "broken" else "claim"
        rows.append(f"| `{t.name}` | {t.paper} | {t.relation} | {t.view} | {kind} | "
                    f"{_cell(t.algorithm)} |")
    return rows


def audit_counts() -> list[str]:
    """One sentence: how many audit targets (claims, controls) and mutants, over which papers."""
    from empirical.privacy.audit import targets
    from empirical.privacy.mutants import mutants as registered

    ts, ms = targets(), registered()
    controls = sum(t.expect == "broken" for t in ts)
    papers = sorted({t.paper for t in ts})
    return [f"{len(ts)} audit targets ({len(ts) - controls} claims, {controls} broken controls) "
            f"over {', '.join(papers)}; {len(ms)} mutants over "
            f"{', '.join(sorted({m.paper for m in ms}))}."]


def registry_counts() -> list[str]:
    """Markdown rows: bounds, experiments and grid points per paper, and in all.  The quick-grid
    column counts what ``verify`` runs: a full-grid-only experiment's quick grid is not run."""
    from empirical.core import experiment as registry

    rows = ["| paper | bounds | experiments (full grid only) | quick-grid points "
            "| full-grid points |", "|---|---|---|---|---|"]
    exps = registry.experiments()

    def row(name: str, mine: list, nb: int) -> str:
        only = sum(bool(e.full_only) for e in mine)
        return (f"| {name} | {nb or '–'} | {len(mine)}{f' ({only})' if only else ''} | "
                f"{sum(len(e.grid()) for e in mine if not e.full_only)} | "
                f"{sum(len(e.grid(True)) for e in mine)} |")

    for paper in sorted({e.paper for e in exps}):
        mine = [e for e in exps if e.paper == paper]
        rows.append(row(f"`{paper}`", mine,
                        len(bounds.ids(paper)) if paper in bounds.papers() else 0))
    rows.append(row("all", list(exps), len(bounds.ids())))
    return rows


#: kind -> (renderer, whether it takes a paper: True required, False none, None optional)
BLOCKS: dict[str, tuple[Callable[..., list[str]], bool | None]] = {
    "bounds": (bounds_table, True),
    "experiments": (experiments_table, True),
    "audits": (audits_table, True),
    "mutants": (mutants_table, None),
    "audit-targets": (audit_targets, False),
    "audit-index": (audit_index, False),
    "audit-counts": (audit_counts, False),
    "registry-counts": (registry_counts, False),
}


def render(kind: str, paper: str | None = None) -> str:
    """The body of the block ``kind`` (``paper``'s where it takes one), newline-terminated."""
    if kind not in BLOCKS:
        raise ValueError(f"block kind must be one of {sorted(BLOCKS)}, got {kind!r}")
    fn, takes = BLOCKS[kind]
    if (takes is True and paper is None) or (takes is False and paper is not None):
        raise ValueError(f"block {kind!r} takes {'a paper key' if takes else 'no paper'}, "
                         f"got {paper!r}")
    from bounds.core import LOAD_ERRORS

    text = "\n".join(fn(paper) if paper is not None else fn()) + "\n"
    if LOAD_ERRORS:      # a table missing a paper whose module failed to import would be wrong
        raise RuntimeError(f"cannot render {kind!r}: {dict(LOAD_ERRORS)}")
    return text


def _name(m: re.Match) -> str:
    return m.group("kind") + (f" {m.group('paper')}" if m.group("paper") else "")


def refresh(text: str) -> str:
    """``text`` with every generated block re-rendered."""
    return _BLOCK.sub(lambda m: m.group(1) + render(m.group("kind"), m.group("paper"))
                      + m.group("end"), text)


def stale_blocks(text: str) -> list[str]:
    """Names (``kind [paper]``) of the blocks of ``text`` whose content differs from a fresh
    rendering."""
    return [_name(m) for m in _BLOCK.finditer(text)
            if m.group("body") != render(m.group("kind"), m.group("paper"))]


def _files() -> list[Path]:
    return [p for p in sorted(DOCS.rglob("*.md"))
            if p.name != "results.md" and "<!-- generated: " in p.read_text(encoding="utf-8")]


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated blocks of the files named (default: every file under docs/ with
    one); ``--check``: only name the stale files and blocks (exit status 1)."""
    p = argparse.ArgumentParser(prog="python -m empirical.report.doc_tables",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="report stale blocks, change nothing")
    p.add_argument("files", nargs="*", type=Path, help="Markdown files (default: docs/**/*.md)")
    args = p.parse_args(argv)
    stale = []
    for path in args.files or _files():
        old = path.read_text(encoding="utf-8")
        try:
            blocks = stale_blocks(old)
        except bounds.core.OptionalExtraMissing as exc:    # scikit-learn for `real`
            print(f"skipped: {path.name}: {exc}")
            continue
        if not blocks:
            continue
        stale.append(path)
        if args.check:
            print(f"stale: {path.name}: {', '.join(blocks)}")
            continue
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(refresh(old), encoding="utf-8")
        tmp.replace(path)                   # atomic: a reader never sees half a page
        print(f"rewrote: {path.name}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
