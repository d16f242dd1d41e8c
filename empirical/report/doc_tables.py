"""Tables and counts in the documentation, generated from the registries so they cannot go
stale: the audit targets and mutants of docs/privacy.md, the experiments and bounds per paper.

A generated block in a Markdown file sits between ``<!-- generated: NAME -->`` and
``<!-- end: NAME -->``; ``python -m empirical.report.doc_tables FILE ...`` rewrites every block of the
files named; ``--check FILE ...`` only names the stale ones (exit 1), which tests/test_docs.py
runs in a fresh process, so that nothing a test registers leaks into the tables.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

__all__ = ["BLOCKS", "render", "refresh", "stale_blocks"]

_BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end: \2 -->)", re.S)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def audit_targets() -> str:
    from empirical.privacy.audit import targets

    rows = ["| target | paper | relation | view | kind | what is run |", "|---|---|---|---|---|---|"]
    for t in targets():
        kind = "control (must be caught)" if t.expect == "broken" else "claim"
        rows.append(f"| `{t.name}` | {t.paper} | {t.relation} | {t.view} | {kind} | "
                    f"{_cell(t.algorithm)} |")
    return "\n".join(rows)


def mutants() -> str:
    from empirical.privacy.mutants import mutants as registered

    rows = ["| mutant | paper | the bug injected | re-run to catch it |", "|---|---|---|---|"]
    for m in registered():
        by = [f"`{e}`" for e in m.experiments] + [f"audit `{a}`" for a in m.audits]
        by += [f"`{t.split('::')[-1]}`" for t in m.tests]
        rows.append(f"| `{m.name}` | {m.paper} | {_cell(m.description)} | {', '.join(by)} |")
    return "\n".join(rows)


def audit_counts() -> str:
    from empirical.privacy.audit import targets
    from empirical.privacy.mutants import mutants as registered

    ts, ms = targets(), registered()
    controls = sum(t.expect == "broken" for t in ts)
    papers = sorted({t.paper for t in ts})
    return (f"{len(ts)} audit targets ({len(ts) - controls} claims, {controls} broken controls) "
            f"over {', '.join(papers)}; {len(ms)} mutants over "
            f"{', '.join(sorted({m.paper for m in ms}))}.")


def registry_counts() -> str:
    import bounds
    from empirical.core import experiment as registry

    rows = ["| paper | bounds | experiments | quick-grid points | full-grid points |",
            "|---|---|---|---|---|"]
    exps = registry.experiments()
    for paper in sorted({e.paper for e in exps}):
        mine = [e for e in exps if e.paper == paper]
        nb = len(bounds.ids(paper)) if paper in bounds.papers() else 0
        rows.append(f"| `{paper}` | {nb or '–'} | {len(mine)} | {sum(len(e.grid()) for e in mine)}"
                    f" | {sum(len(e.grid(True)) for e in mine)} |")
    rows.append(f"| all | {len(bounds.ids())} | {len(exps)} | {sum(len(e.grid()) for e in exps)}"
                f" | {sum(len(e.grid(True)) for e in exps)} |")
    return "\n".join(rows)


BLOCKS: dict[str, Callable[[], str]] = {
    "audit-targets": audit_targets,
    "mutants": mutants,
    "audit-counts": audit_counts,
    "registry-counts": registry_counts,
}


def render(name: str) -> str:
    if name not in BLOCKS:
        raise ValueError(f"name must be one of {sorted(BLOCKS)}, got {name!r}")
    from bounds.core import LOAD_ERRORS

    text = BLOCKS[name]().rstrip("\n") + "\n"
    if LOAD_ERRORS:      # a table missing a paper whose module failed to import would be wrong
        raise RuntimeError(f"cannot render {name!r}: {dict(LOAD_ERRORS)}")
    return text


def refresh(text: str) -> str:
    """``text`` with every generated block re-rendered."""
    return _BLOCK.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def stale_blocks(text: str) -> list[str]:
    """Names of the blocks of ``text`` whose content differs from a fresh rendering."""
    return [m.group(2) for m in _BLOCK.finditer(text) if m.group(3) != render(m.group(2))]


def _main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:          # exit 1 naming the stale blocks, rewrite nothing
        stale = {n: s for n in argv[1:] if (s := stale_blocks(Path(n).read_text("utf-8")))}
        for name, blocks in stale.items():
            print(f"{name}: stale: {', '.join(blocks)}")
        return 1 if stale else 0
    for name in argv:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        new = refresh(text)
        if new != text:
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)
            print(f"{path}: refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
