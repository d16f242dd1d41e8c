"""The errata as data, for all five papers and the real-data experiments: one page per paper,
``docs/errata/<paper>.md`` (:data:`PAGES`), and the conventions with an index, ``docs/errata.md``
(:data:`ERRATA`).

Each entry is a heading ``## <ID> — <title>`` (ID like ``KL-E32``, ``UL-E13``) followed by one
line ``Status: <status> · Kind: <kind> · Experiments: `id`, `id` …`` (the experiments part is
optional).  Code, tests and experiment reasons cite entries by id; each paper names its page with
``bounds.register_paper(errata=...)`` and the report renders it (:mod:`empirical.report.page`).
:func:`entries` reads the pages; :func:`cited_ids` finds the ids a text cites, so a test can
require every cited id to exist.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ERRATA", "PAGES", "STATUSES", "KINDS", "Erratum", "pages", "entries", "cited_ids"]

def _checkout() -> Path:
    # the directory holding docs/ and bounds/, however deep this module sits in empirical/
    here = Path(__file__).resolve()
    return next((p for p in here.parents if (p / "docs").is_dir() and (p / "bounds").is_dir()),
                here.parents[1])


#: The conventions and the index of the per-paper pages, in this checkout.
ERRATA = _checkout() / "docs" / "errata.md"
#: The directory of the per-paper pages ``<paper>.md``.
PAGES = _checkout() / "docs" / "errata"


def pages() -> list[Path]:
    """The per-paper errata pages of this checkout, by file name."""
    return sorted(PAGES.glob("*.md"))

#: open: the evidence does not settle it; decided: settled by a derivation, test or experiment;
#: re-opened: was decided, later evidence unsettled it; superseded: replaced by the entry named.
STATUSES = ("open", "decided", "re-opened", "superseded")
#: reading: a choice where the paper is ambiguous; finding: a claim the experiments contradict;
#: fix: a defect of this suite, corrected; note: an observation that contradicts nothing.
KINDS = ("reading", "finding", "fix", "note")

_ID = r"[A-Z][A-Za-z]*-E\d+"
_HEADING = re.compile(rf"^#{{2,6}}\s+({_ID})\b\s*(?:[—:-]\s*)?(.*)$")
_META = re.compile(r"^Status:\s*(?P<status>[\w-]+)\s*·\s*Kind:\s*(?P<kind>[\w-]+)"
                   r"(?:\s*·\s*Experiments:\s*(?P<exps>.+))?\s*$")
_CITED = re.compile(rf"\b({_ID})\b")


@dataclass(frozen=True)
class Erratum:
    """One entry: ``id`` (``KL-E32``), ``title``, ``status`` (one of :data:`STATUSES`), ``kind``
    (one of :data:`KINDS`), ``experiments`` (ids or glob patterns, in the order written) and
    ``body`` (the Markdown below the status line)."""

    id: str
    title: str
    status: str
    kind: str
    experiments: tuple[str, ...]
    body: str
    #: the page the entry is written on
    page: Path | None = None

    @property
    def paper(self) -> str:
        """The id's prefix: ``KL``, ``KAN``, ``LR``, ``UL``, ``SOSP`` or ``REAL``."""
        return self.id.partition("-")[0]


def entries(path: Path | str | None = None) -> dict[str, Erratum]:
    """Every entry of one errata page (``path``), or of every page of :func:`pages` (by page,
    then in page order), by id.  ValueError (naming the entry) on a duplicate id, a missing or
    malformed status line, or a status or kind outside the allowed sets."""
    out: dict[str, Erratum] = {}
    for page in ([Path(path)] if path is not None else pages()):
        _read(page, out)
    return out


def _read(page: Path, out: dict[str, Erratum]) -> None:
    lines = page.read_text(encoding="utf-8").splitlines()
    heads = [(i, m) for i, ln in enumerate(lines) if (m := _HEADING.match(ln))]
    for k, (i, m) in enumerate(heads):
        eid, title = m.group(1), m.group(2).strip()
        if eid in out:
            raise ValueError(f"errata: {eid} appears twice ({out[eid].page.name} and "
                             f"{page.name})")
        meta = _META.match(lines[i + 1]) if i + 1 < len(lines) else None
        if meta is None:
            raise ValueError(f"errata: {eid} needs the line 'Status: … · Kind: …' under its "
                             f"heading, got {lines[i + 1] if i + 1 < len(lines) else ''!r}")
        status, kind = meta.group("status"), meta.group("kind")
        if status not in STATUSES:
            raise ValueError(f"errata: {eid} status must be one of {STATUSES}, got {status!r}")
        if kind not in KINDS:
            raise ValueError(f"errata: {eid} kind must be one of {KINDS}, got {kind!r}")
        exps = tuple(re.findall(r"`([^`]+)`", meta.group("exps") or ""))
        # the body runs to the next heading of any level
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("#")),
                   len(lines))
        out[eid] = Erratum(eid, title, status, kind, exps, "\n".join(lines[i + 2:end]).strip(),
                           page)


def cited_ids(text: str) -> set[str]:
    """The errata ids a text cites (``KL-E32``, ``UL-E13`` …)."""
    return set(_CITED.findall(text))
