"""The errata, docs/errata/<paper>.md (all five papers and the real-data experiments) with the
conventions in docs/errata.md: every entry carries a status and kind from the allowed sets, sits on
its paper's registered page, every errata id the code, tests and docs cite exists, and what an
entry names (experiments, tests) exists too, so that the errata cannot go stale silently."""
from __future__ import annotations

import fnmatch
import functools
import re
from pathlib import Path

import pytest

from empirical.report import errata
from empirical.core import experiment as registry

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = errata.entries()
PAGES = errata.pages()


def _errata_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PAGES)


def _sources() -> list[Path]:
    """Every file that may cite an erratum: code, tests, docs and the README."""
    out = [p for d in ("algorithms", "bounds", "empirical", "tests")
           for p in sorted((ROOT / d).rglob("*.py"))]
    out += sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    return [p for p in out if p.exists() and p not in PAGES]


def test_every_entry_has_an_allowed_status_and_kind():
    assert len(ENTRIES) >= 100
    for e in ENTRIES.values():
        assert e.status in errata.STATUSES and e.kind in errata.KINDS, e.id
        assert e.title and e.body, e.id


def test_each_page_is_its_papers_registered_page_and_holds_only_its_entries():
    from bounds.core import paper_info, papers

    _experiment_ids()                     # imports every paper's unit (`real` registers there)
    registered = {Path(paper_info(k).errata).resolve(): k for k in papers() if paper_info(k).errata}
    assert {p.resolve() for p in PAGES} <= set(registered), "a page no paper registers"
    for page in PAGES:
        assert page.stem == registered[page.resolve()], page.name
        prefixes = {e.paper for e in ENTRIES.values() if e.page == page}
        assert len(prefixes) == 1, (page.name, prefixes)
        # the index links every page
        assert f"](errata/{page.name})" in errata.ERRATA.read_text(encoding="utf-8"), page.name


def test_a_malformed_status_line_is_refused(tmp_path):
    bad = tmp_path / "e.md"
    for meta in ("Status: closed · Kind: reading", "Status: decided · Kind: opinion",
                 "no status line here"):
        bad.write_text(f"# Errata\n\n### XX-E1 — a title\n{meta}\n\nbody\n", encoding="utf-8")
        with pytest.raises(ValueError, match="XX-E1"):
            errata.entries(bad)
    bad.write_text("### XX-E1 — a\nStatus: open · Kind: note\n\nb\n\n"
                   "### XX-E1 — b\nStatus: open · Kind: note\n\nc\n", encoding="utf-8")
    with pytest.raises(ValueError, match="twice"):
        errata.entries(bad)
    ok = "### XX-E1 — a\nStatus: open · Kind: note\n\nb\n"
    bad.write_text(ok, encoding="utf-8")
    assert list(errata.entries(bad)) == ["XX-E1"] and errata.entries(bad)["XX-E1"].page == bad


def test_superseded_entries_name_an_existing_entry_that_is_not_superseded():
    for e in (e for e in ENTRIES.values() if e.status == "superseded"):
        targets = errata.cited_ids(e.body) - {e.id}
        if not targets:                   # withdrawn, not replaced: it must say where it went
            assert "not an erratum" in e.body.lower(), e.id
            continue
        for t in targets:
            assert t in ENTRIES and ENTRIES[t].status != "superseded", (e.id, t)


def test_every_errata_id_cited_in_code_tests_and_docs_exists():
    missing = {}
    for p in _sources():
        for eid in errata.cited_ids(p.read_text(encoding="utf-8")) - set(ENTRIES):
            if eid.startswith(("XX-", "PLUGIN-")):   # synthetic examples; a plugin's own errata
                continue
            missing.setdefault(eid, []).append(str(p.relative_to(ROOT)))
    assert not missing, missing


def test_ids_cited_inside_the_errata_exist():
    assert errata.cited_ids(_errata_text()) <= set(ENTRIES)


@functools.lru_cache(maxsize=None)
def _experiment_ids() -> frozenset[str]:
    ids: set[str] = set()
    from bounds.core import papers

    for paper in papers():
        try:
            ids |= set(registry.ids(paper))
        except Exception:                 # an optional extra missing (scikit-learn for `real`)
            pass
    return frozenset(ids)


def test_experiments_named_by_an_entry_exist():
    registered = _experiment_ids()
    code = "\n".join(p.read_text(encoding="utf-8")
                     for p in sorted((ROOT / "empirical").rglob("*.py")))
    for e in ENTRIES.values():
        for x in e.experiments:
            if "*" in x:
                assert fnmatch.filter(registered, x), (e.id, x)
            elif x.startswith("real.") and not any(i.startswith("real.") for i in registered):
                assert f'"{x}"' in code, (e.id, x)
            else:
                # registered, or declared for the slow full-grid runs only
                assert x in registered or f'"{x}"' in code, (e.id, x)


def test_tests_named_in_the_errata_exist():
    text = _errata_text()
    defined = set()
    for p in (ROOT / "tests").glob("*.py"):
        defined |= set(re.findall(r"def (test_\w+)", p.read_text(encoding="utf-8")))
    named = set(re.findall(r"`(?:[\w/.]+::)?(test_\w+)", text)) - {p.stem for p in
                                                                    (ROOT / "tests").glob("*.py")}
    assert named and named <= defined, named - defined


def test_files_paths_named_in_the_errata_exist():
    text = _errata_text()
    for path in re.findall(r"`((?:algorithms|bounds|empirical|tests|docs)/[\w/.]+\.(?:py|md))`",
                           text):
        assert (ROOT / path).exists(), path


def test_errata_stay_small():
    # a record of decisions, not a notebook: the size is part of what keeps it readable
    # (≈ 130 entries of a few hundred bytes each)
    total = sum(p.stat().st_size for p in [errata.ERRATA, *PAGES])
    assert total <= 60_000, f"errata: {total / 1000:.1f} KB"


@functools.lru_cache(maxsize=None)
def _code_words() -> frozenset[str]:
    return frozenset(w for d in ("algorithms", "bounds", "empirical", "tests")
                     for p in (ROOT / d).rglob("*.py")
                     for w in re.findall(r"\w+", p.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", [*PAGES, *sorted((ROOT / "docs" / "papers").glob("*.md"))],
                         ids=lambda p: p.name)
def test_code_names_quoted_in_errata_and_paper_pages_exist(path):
    """A function, class, column or experiment quoted as `name` (or `module.name`) must occur in
    the code or tests, so a rename cannot leave the documentation pointing at nothing."""
    words = _code_words()
    text = re.sub(r"<!-- generated.*?<!-- end generated -->", "", path.read_text(encoding="utf-8"),
                  flags=re.S)
    quoted = set(re.findall(r"`([A-Za-z_][\w.]*)`", text))
    missing = sorted(q for q in quoted - _experiment_ids() if q.split(".")[-1] not in words)
    assert not missing, missing
