"""docs/papers/<paper>.md (all five papers and the real-data experiments): the generated tables of
bounds, experiments, audit targets and mutants match the registries (empirical/paper_pages.py), every
paper has a page with all three, and the pages cite the papers, not text users do not have."""
from __future__ import annotations

import re

import pytest

import bounds
from empirical import errata, paper_pages

PAGES = sorted(paper_pages.PAGES.glob("*.md"))
PAPERS = ("kl", "kan", "linreg", "sosp", "userlevel")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_generated_tables_are_current(page):
    text = page.read_text(encoding="utf-8")
    if page.stem == "real":
        pytest.importorskip("sklearn")
    assert paper_pages.regenerate(text) == text, (
        f"{page.name} is stale: run `python -m empirical.paper_pages`")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_has_a_page_with_its_tables(paper):
    text = (paper_pages.PAGES / f"{paper}.md").read_text(encoding="utf-8")
    for kind in ("bounds", "experiments", "audits", "mutants"):
        assert f"<!-- generated: {kind} {paper} -->" in text, (paper, kind)
    # the generated bound table lists every registered id
    bounds.core._load_all(paper)
    assert set(re.findall(rf"`({paper}:[^`]+)`", text)) >= set(bounds.ids(paper))
    # the first lines cite the paper: its authors and its title in italics
    head = "\n".join(text.splitlines()[:6])
    assert re.search(r"\*[A-Z(][^*]{20,}\*", head), paper


def test_a_stale_table_is_detected_and_rewritten(tmp_path):
    stale = "x\n<!-- generated: bounds kl -->\n| old |\n<!-- end generated -->\ny\n"
    new = paper_pages.regenerate(stale)
    assert new != stale and "`kl:thm9`" in new and new.startswith("x\n") and new.endswith("y\n")
    assert paper_pages.regenerate(new) == new
    with pytest.raises(ValueError, match="paper"):
        paper_pages.bounds_table("nosuchpaper")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_errata_ids_on_the_pages_exist(page):
    assert errata.cited_ids(page.read_text(encoding="utf-8")) <= set(errata.entries())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_stay_short(page):
    # an account of one paper, with its generated tables; the evidence lives in the errata
    assert len(page.read_text(encoding="utf-8").splitlines()) <= 300, page.name
