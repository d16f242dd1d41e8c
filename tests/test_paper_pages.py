"""docs/papers/<paper>.md (all five papers and the real-data experiments): the generated tables of
bounds, experiments, audit targets and mutants match the registries (empirical/report/doc_tables.py), every
paper has a page with all four, and the pages cite the papers, not text users do not have."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from empirical.report import errata
from empirical.report import doc_tables

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(doc_tables.PAGES.glob("*.md"))
PAPERS = ("kl", "kan", "linreg", "sosp", "userlevel")


@pytest.fixture(scope="module")
def stale_pages() -> list[str]:
    # A fresh interpreter: the pages describe what `dprates` registers, not the extras other
    # tests of this pytest run register (tests/_toy.py adds toy bounds and experiments to "kl").
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "empirical.report.doc_tables", "--check",
                           *map(str, PAGES)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    skipped = [ln for ln in proc.stdout.splitlines() if ln.startswith("skipped: ")]
    assert all(ln.startswith("skipped: real.md") for ln in skipped), skipped
    return [ln.removeprefix("stale: ").partition(":")[0] for ln in proc.stdout.splitlines()
            if ln.startswith("stale: ")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_generated_tables_are_current(page, stale_pages):
    if page.stem == "real":
        pytest.importorskip("sklearn")
    assert page.name not in stale_pages, (
        f"{page.name} is stale: run `python -m empirical.report.doc_tables`")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_has_a_page_with_its_tables(paper):
    text = (doc_tables.PAGES / f"{paper}.md").read_text(encoding="utf-8")
    for kind in ("bounds", "experiments", "audits", "mutants"):
        assert f"<!-- generated: {kind} {paper} -->" in text, (paper, kind)
    # the first lines cite the paper: its authors, its title in italics, its arXiv abstract page
    head = "\n".join(text.splitlines()[:6])
    assert re.search(r"\*[A-Z(][^*]{20,}\*", head), paper
    assert "(https://arxiv.org/abs/" in head, paper
    # and the page links the paper's errata page
    assert f"](../errata/{paper}.md)" in text, paper


def test_a_stale_table_is_detected_and_rewritten(tmp_path):
    stale = "x\n<!-- generated: bounds kl -->\n| old |\n<!-- end generated -->\ny\n"
    new = doc_tables.refresh(stale)
    assert new != stale and "`kl:thm9`" in new and new.startswith("x\n") and new.endswith("y\n")
    assert doc_tables.refresh(new) == new
    with pytest.raises(ValueError, match="paper"):
        doc_tables.bounds_table("nosuchpaper")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_errata_ids_on_the_pages_exist(page):
    assert errata.cited_ids(page.read_text(encoding="utf-8")) <= set(errata.entries())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_stay_short(page):
    # an account of one paper, with its generated tables; the evidence lives in the errata
    assert len(page.read_text(encoding="utf-8").splitlines()) <= 300, page.name
