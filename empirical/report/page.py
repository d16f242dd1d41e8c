"""The report's HTML page (empirical/report/__init__.py): styles, the summary matrix, one section per
paper (bounds, experiments, summary figures, privacy), the errata with the verdicts they name,
the environment; assembled by ``render_html``.
"""
from __future__ import annotations

import base64
import datetime as _dt
import fnmatch
import re
from pathlib import Path
from typing import Callable

import bounds
from empirical.core import experiment as registry
from empirical.report.articles import (_bound_article, _bound_owners, _checks_by_bound,
                                       _experiment_article, _grid_of, _shown_bounds)
from empirical.report.data import AuditView, ExperimentState, _fresh_cached
from empirical.report.format import (_CSS_CLASS, _ERRATA, _NA, _SEVERITY, _anchor_bound,
                                     _anchor_check, _anchor_exp, _badge, _cell_summary, _e,
                                     _matrix_entries, _natural_key, _paper_meta_html,
                                     _paper_title, _slug, _var_order, paper_doc, paper_errata)
from empirical.report.markdown import markdown_to_html
from empirical.report.privacy import _audits_section, _harness_audits_html, _privacy_table
from empirical.report.contrasts import contrast_table_html, is_comparison

__all__ = ["render_html"]

_STYLE = """
:root { --ok:#d7f0d8; --finding:#ffe3b3; --bad:#f8c9c4; --none:#e4e4e4; --fg:#1d2329; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       max-width: 1320px; margin: 0 auto; padding: 0 24px 80px; }
header { border-bottom: 2px solid #333; margin-bottom: 12px; }
h1 { margin: 18px 0 4px; font-size: 26px; }
h2 { margin-top: 42px; border-bottom: 1px solid #999; }
h3 { margin-top: 28px; }
.meta { color: #555; font-size: 13px; margin: 0 0 10px; }
nav.toc { font-size: 14px; margin: 8px 0 16px; }
nav.toc a { margin-right: 14px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid #c8c8c8; padding: 3px 7px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td small { color: #555; }
table.matrix td.cell { text-align: center; min-width: 92px; padding: 0; }
table.matrix td.cell a { display: block; padding: 4px 6px; color: inherit; text-decoration: none; }
table.matrix td.cell a:hover { outline: 2px solid #333; }
table.matrix th.paper { background: #e6ebf2; text-align: left; font-size: 14px; }
table.matrix small.kind { color: #777; font-weight: normal; }
td.ok, .v.ok { background: var(--ok); } td.finding, .v.finding { background: var(--finding); }
td.bad, .v.bad { background: var(--bad); } td.none, .v.none { background: var(--none); }
td.empty { background: #fff; color: #bbb; text-align: center; }
td.partial { background-image: repeating-linear-gradient(45deg, transparent 0 6px,
             rgba(0,0,0,.06) 6px 12px); }
.v { padding: 0 5px; border-radius: 3px; font-weight: 600; font-size: 12px; white-space: nowrap; }
.legend span.v { margin-right: 8px; }
article { border-left: 3px solid #cfd8e3; padding: 2px 0 4px 14px; margin: 18px 0; }
article h4 { margin: 4px 0 6px; font-size: 16px; }
dl.facts { display: grid; grid-template-columns: 150px 1fr; gap: 2px 12px; margin: 6px 0;
           font-size: 14px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; }
/* An OpenType MATH font makes brackets and braces stretch; use whichever the reader has. */
math { font-size: 1.12em; font-family: "STIX Two Math", "Latin Modern Math", "Cambria Math",
       "DejaVu Math TeX Gyre", math; }
.formula { overflow-x: auto; overflow-y: hidden; padding: 6px 0; margin: 0 0 6px 24px; }
.formula math[display="block"] { display: inline-block; font-size: 19px; }
p.stmt { margin: 4px 0 2px; }
figure { margin: 8px 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 12px; color: #555; }
details > summary { cursor: pointer; font-weight: 600; margin: 10px 0; }
.errata h4 { margin-top: 22px; }
.errata table.md td, .errata table.md th { font-size: 12.5px; }
code { background: #f4f4f4; padding: 0 3px; border-radius: 3px; font-size: 12.5px; }
"""

# Checks, in the browser, that every image decoded, every #link has a target and every formula
# has a box; the result is written to <html data-selfcheck=...> for the headless-browser test.
_SELFCHECK = """
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  var links = Array.from(document.querySelectorAll('a[href^="#"]'));
  var broken = links.filter(function (a) {
    return !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));
  });
  var maths = Array.from(document.getElementsByTagName('math'));
  // formulas inside a closed <details> have no box until opened; count only the visible ones
  var flat = maths.filter(function (m) {
    return !m.closest('details:not([open])') && m.getBoundingClientRect().width <= 0; });
  document.documentElement.setAttribute('data-selfcheck', JSON.stringify({
    images: imgs.length, images_failed: bad.length, links: links.length,
    links_broken: broken.map(function (a) { return a.getAttribute('href'); }),
    math: maths.length, math_unrendered: flat.length}));
});
"""


# ---------------------------------------------------------------------------------------------
# Summary matrix
# ---------------------------------------------------------------------------------------------

def _matrix_html(states: list[ExperimentState]) -> str:
    cells = _matrix_entries(states)
    papers = sorted({p for p, _, _ in cells})
    variables = _var_order({v for _, _, v in cells})
    head = "<tr><th>bound</th>" + "".join(f"<th>{_e(v)}</th>" for v in variables) + "</tr>"
    body = []
    for paper in papers:
        body.append(f'<tr><th class="paper" colspan="{len(variables) + 1}">'
                    f'<a href="#paper-{_slug(paper)}">{_e(paper)}</a>: {_e(_paper_title(paper))}</th></tr>')
        for b in sorted({b for p, b, _ in cells if p == paper}, key=_natural_key):
            kind = bounds.get(b).kind
            tds = [f'<th><a href="#{_anchor_bound(b)}">{_e(b)}</a> '
                   f'<small class="kind">{_e(kind)}</small></th>']
            for v in variables:
                entries = cells.get((paper, b, v))
                if not entries:
                    tds.append('<td class="empty">·</td>')
                    continue
                worst, text = _cell_summary([(e, verdict) for e, verdict, _ in entries])
                partial = " partial" if any(p for _, _, p in entries) else ""
                tip = "; ".join(f"{e}: {verdict}" for e, verdict, _ in entries)
                tds.append(f'<td class="cell {_CSS_CLASS.get(worst, "none")}{partial}" '
                           f'title="{_e(tip)}"><a href="#{_anchor_check(b, v)}">{_e(text)}</a></td>')
            body.append("<tr>" + "".join(tds) + "</tr>")
    legend = ('<p class="legend">' + "".join(_badge(v) for v in
              ("PASS", "REJECTED", "FINDING", "FAIL", "NOT REJECTED", "NOT RUN", "STALE")) +
              "<small>REJECTED: a competing rate the data rule out (good). FINDING: a claim the "
              "experiments contradict, documented in the errata. STALE: stored by other code "
              "(rerun to analyse). Hatched: some grid points not run. Each cell links to its "
              "checks.</small></p>")
    return (f'<table class="matrix"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
            + legend)


# ---------------------------------------------------------------------------------------------
# Paper sections
# ---------------------------------------------------------------------------------------------

def _contrasts_html(paper: str, states: list[ExperimentState], html_dir: Path | None) -> str:
    """The contrasts of the paper's comparison experiments, one table, with a link to the page
    that says what they show (docs/papers/<paper>.md); "" when the paper has none."""
    comp = [st for st in states if is_comparison(st)]
    if not comp:
        return ""
    doc = paper_doc(paper)
    link = ""
    if doc is not None:
        from empirical.report.summary import relative_link

        href = relative_link(doc, Path(html_dir or Path.cwd()) / "index.html")
        link = (f' What each one shows, and why the claims are stated so: '
                f'<a href="{_e(href)}">docs/papers/{_e(paper)}.md</a>.')
    return (f'<h3 id="contrasts-{_slug(paper)}">Contrasts</h3>'
            f'<p class="meta">{len(comp)} experiments judged by contrasts, not slopes: a paired '
            "per-seed gain of one measured column over another at given grid values. "
            "<b>greater</b> (one-sided: the lower end of the 95% Student-t interval of the mean "
            "gain must exceed the margin at every point; when several candidates compete, the best "
            "is chosen on even seeds and judged on odd ones), <b>increasing</b> (one-sided: the "
            "gain at the last value minus the first, 95% Welch interval above the margin), "
            "<b>report</b> (no claim, INFO). Every mean stands beside the privacy the rows "
            f"report spending for it.{link}</p>" + contrast_table_html(comp))


def _contrast_tally(states: list[ExperimentState]) -> str:
    """One line under the matrix for the experiments judged by contrasts (no bound, so no
    matrix row): their verdicts, linked to each paper's contrast table."""
    by_paper: dict[str, list[tuple[str, str]]] = {}
    for st in states:
        if is_comparison(st):
            by_paper.setdefault(st.experiment.paper, []).extend(st.verdicts())
    parts = []
    for paper, verdicts in sorted(by_paper.items()):
        worst, text = _cell_summary(verdicts) if verdicts else ("NOT RUN", "no contrasts")
        parts.append(f'<a href="#contrasts-{_slug(paper)}">{_e(paper)}</a>: '
                     f'<span class="v {_CSS_CLASS.get(worst, "none")}">{_e(text)}</span>')
    if not parts:
        return ""
    return ('<p>Contrasts (experiments judged by paired comparisons at grid values, not by a '
            "bound's slope): " + "; ".join(parts) + ".</p>")


def _paper_section(paper: str, states: list[ExperimentState], audits: AuditView,
                   summaries: dict[str, bytes | str], refs, checks: dict[str, dict[str, list]],
                   owner: dict[str, str], html_dir: Path | None = None,
                   errata: dict[str, str] | None = None) -> str:
    errata = errata or {}
    all_ids = {i for i, p in owner.items() if p == paper}
    checked = sorted((i for i in all_ids if i in checks), key=_natural_key)
    unchecked = sorted((i for i in all_ids if i not in checks), key=_natural_key)
    parts = [f'<section id="paper-{_slug(paper)}"><h2>{_e(paper)}: {_e(_paper_title(paper))}</h2>']
    parts += [m for m in (_paper_meta_html(paper),) if m]
    n_done = sum(st.status == "complete" for st in states)
    n_full = sum(st.full_only_skipped for st in states)
    parts.append(f'<p class="meta">{len(states)} experiments, {n_done} complete, '
                 f"{sum(st.status == 'partial' for st in states)} partial, "
                 f"{sum(st.status == 'not run' for st in states)} not run"
                 + (f" ({n_full} full grid only)" if n_full else "") + "; "
                 f"{len(checked)} bounds checked, {len(unchecked)} not checked by an experiment.</p>")
    parts.append(_contrasts_html(paper, states, html_dir))
    if all_ids or not any(is_comparison(st) for st in states):
        parts.append(f'<h3 id="bounds-{_slug(paper)}">Bounds and their checks</h3>')
    parts += [_bound_article(bounds.get(i), checks[i], refs) for i in checked]
    if unchecked:
        parts.append(f"<details><summary>{len(unchecked)} bounds not checked by an experiment "
                     "(lower bounds, conversions, prior work, simplified forms)</summary>")
        parts += [_bound_article(bounds.get(i), {}, refs) for i in unchecked]
        parts.append("</details>")
    parts.append(f'<h3 id="experiments-{_slug(paper)}">Experiments</h3>')
    parts += [_experiment_article(st, refs) for st in states]
    parts.append(_coverage_html(paper, states))
    mine = {k: v for k, v in summaries.items()
            if any(s.id == k for s in registry.summaries(paper))}
    if mine:
        parts.append(f'<h3 id="summary-figures-{_slug(paper)}">Summary figures</h3>')
        for sid, png in sorted(mine.items()):
            if isinstance(png, bytes):
                b64 = base64.b64encode(png).decode("ascii")
                parts.append(f'<figure><img alt="{_e(sid)}" src="data:image/png;base64,{b64}">'
                             f"<figcaption>{_e(sid)}</figcaption></figure>")
            else:
                parts.append(f"<p>{_e(sid)} could not be drawn: {_e(png)}</p>")
    parts.append(f'<h3 id="privacy-{_slug(paper)}">Privacy</h3>'
                 "<p>From each stored row's <code>&lt;unit&gt;_target</code>, "
                 "<code>_guarantee</code> (data-independent, dp-accounting) and <code>_spent</code> "
                 "(what the releases compose to; ex post when stops depend on the data). "
                 "Audited lower bounds come from stored privacy audits "
                 f'(<a href="#audits-{_slug(paper)}">below</a>) of the same algorithm; '
                 "\"not audited\" where none is stored.</p>")
    parts.append(_privacy_table(states, audits))
    parts.append(_audits_section(paper, audits))
    if paper in errata:       # the paper's registered errata page (this project's: docs/errata/)
        parts.append(f'<h3 id="errata-{_slug(paper)}">Errata</h3>' + errata[paper])
    parts.append("</section>")
    return "\n".join(parts)


def _coverage_html(paper: str, states: list[ExperimentState]) -> str:
    """Each rate statement × each variable: the experiments sweeping it with their verdicts, or
    why it is not swept (empirical/core/coverage.py)."""
    from empirical.core import coverage

    analyses = {st.experiment.id: st.analysis for st in states if st.analysis is not None}
    cs = coverage.cells(paper, analyses)
    if not cs:
        return ""
    shown = {st.experiment.id for st in states}     # articles on this section: link those
    rows, by = [], {}
    for c in cs:
        by.setdefault(c.bound, []).append(c)
    for bid, group in by.items():
        swept = "; ".join(
            f"{_e(c.variable)}: " + ", ".join(
                (f'<a href="#{_anchor_exp(e)}">{_e(e)}</a>' if e in shown else _e(e))
                + (f" {_badge(v)}" if v else "")
                for e, v in zip(c.experiments, c.verdicts))
            for c in group if c.swept)
        rest = "; ".join(f"{_e(c.variable)} ({_e(c.reason)})" for c in group if not c.swept)
        rows.append(f"<tr><td><code>{_e(bid)}</code></td><td>{swept or _NA}</td>"
                    f"<td>{rest or _NA}</td></tr>")
    n = coverage.summary(cs)
    return (f'<h3 id="coverage-{_slug(paper)}">Coverage: each rate statement × each variable'
            f"</h3><p class=\"meta\">{len(cs)} pairs: {n['swept']} swept; not swept: "
            f"{n['log']} only in a log factor, {n['declared']} with a stated reason, "
            f"{n['held']} held fixed by the experiments judging the statement, {n['none']} in "
            "statements no experiment judges.</p><details><summary>the table</summary>"
            "<table><tr><th>bound</th><th>swept (experiment, verdict)</th><th>not swept</th>"
            "</tr>" + "".join(rows) + "</table></details>")


# ---------------------------------------------------------------------------------------------
# Errata
# ---------------------------------------------------------------------------------------------

def _in_page(text: str) -> str:
    """Markdown links between the errata files made links inside the page: the conventions
    (docs/errata.md) to the errata section, a paper's errata page to the paper's errata."""
    text = re.sub(r"\]\((?:\.\./)?errata\.md\)", "](#errata)", text)
    return re.sub(r"\]\((?:\.\./)?errata/(\w+)\.md\)", lambda m: f"](#errata-{_slug(m.group(1))})",
                  text)


def _errata_html(states: list[ExperimentState], shown_bounds: set[str], papers: list[str]
                 ) -> tuple[str, dict[str, str], Callable[[str], str]]:
    """The errata conventions (docs/errata.md) and each paper's registered errata page rendered,
    experiment ids linked with their verdicts; and a function linking erratum labels (KL-E10)
    in other text to their headings."""
    pages = {p: page.read_text(encoding="utf-8") for p in papers
             if (page := paper_errata(p)) is not None}
    by_id = {st.experiment.id: st for st in states}
    labels = set(re.findall(r"^#{2,6}\s+([A-Z][A-Za-z]*-E\d+)\b", "\n".join(pages.values()),
                            flags=re.M))

    def refs(s: str) -> str:
        return re.sub(r"\b([A-Z][A-Za-z]*-E\d+)\b",
                      lambda m: (f'<a href="#erratum-{m.group(1)}">{m.group(1)}</a>'
                                 if m.group(1) in labels else m.group(1)), s)

    def verdict_of(st: ExperimentState) -> str:
        worst, _ = _cell_summary([(b, v) for b, v in st.verdicts()])
        return worst

    def code(s: str) -> str:
        if s in by_id:
            st = by_id[s]
            return (f'<a href="#{_anchor_exp(s)}"><code>{_e(s)}</code></a> '
                    f"{_badge(verdict_of(st))}")
        if s in shown_bounds:
            return f'<a href="#{_anchor_bound(s)}"><code>{_e(s)}</code></a>'
        matches = [st for i, st in by_id.items() if "*" in s and fnmatch.fnmatchcase(i, s)]
        if matches:
            worst, summary = _cell_summary([(st.experiment.id, verdict_of(st)) for st in matches])
            return f'<code>{_e(s)}</code> <span class="v {_CSS_CLASS.get(worst, "none")}">{_e(summary)}</span>'
        return f"<code>{_e(s)}</code>"

    def heading_id(h: str) -> str:
        m = re.match(r"([A-Z][A-Za-z]*-E\d+)\b", h)
        return f"erratum-{m.group(1)}" if m else "errata-" + _slug(h)

    def render(text: str, offset: int) -> str:
        # the file's own title duplicates the section's heading
        text = re.sub(r"\A#\s[^\n]*\n", "", text.lstrip())
        return markdown_to_html(_in_page(text), code=code, refs=refs, heading_id=heading_id,
                                heading_offset=offset)

    conventions = _ERRATA.read_text(encoding="utf-8") if _ERRATA.exists() else ""
    # it names every paper's page; only those of the papers on this page stay links
    conventions = re.sub(r"\[([^\]]*)\]\((?:\.\./)?errata/(\w+)\.md\)",
                         lambda m: m.group(0) if m.group(2) in pages else m.group(1), conventions)
    return (render(conventions, 1), {p: render(text, 2) for p, text in pages.items()}, refs)


# ---------------------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------------------

def render_html(states: list[ExperimentState], env: dict[str, str], audits: AuditView | None,
                summaries: dict[str, bytes | str], errors: dict[str, str] | None = None, *,
                html_dir: Path | None = None) -> str:
    """The whole page as one string (styles, figures and formulas inline); ``errors`` are
    papers whose experiments could not be loaded; ``audits`` the stored privacy audits
    (:func:`empirical.report.data._audits`; None or empty: none); ``html_dir`` the directory
    the page is written to (links to docs/ are relative to it; default the working directory)."""
    if not isinstance(audits, AuditView):
        audits = AuditView()
    broken = "".join(
        # a missing optional extra (scikit-learn for `real`) skips a paper; it is not an error
        f"<li>{_badge('NOT RUN')} paper {_e(p)} skipped: {_e(msg.partition(': ')[2])}</li>"
        if msg.startswith("OptionalExtraMissing:") else
        f"<li>{_badge('ERROR')} paper {_e(p)}: experiments could not be loaded: {_e(msg)}</li>"
        for p, msg in sorted((errors or {}).items()))
    broken = f'<ul class="errors">{broken}</ul>' if broken else ""
    papers = sorted({st.experiment.paper for st in states})
    conventions, errata, refs = _errata_html(states, _shown_bounds(states, papers), papers)
    worst_counts: dict[str, int] = {}
    for st in states:
        for _, v in st.verdicts():
            worst_counts[v] = worst_counts.get(v, 0) + 1
    tally = " ".join(_badge(v, f" {k}") for v, k in
                     sorted(worst_counts.items(), key=lambda kv: -_SEVERITY.get(kv[0], 3)))
    toc = " ".join(f'<a href="#paper-{_slug(p)}">{_e(p)}</a>' for p in papers)
    if set(a.paper for a in audits.stored.values()) - set(papers) or audits.problems:
        toc += ' <a href="#audits-other">audits (harness)</a>'
    toc += ' <a href="#errata">errata</a> <a href="#environment">environment</a>'
    prov_head = ("experiment", "grid points stored", "rows", "seeds", "stored (UTC)",
                 "code fingerprint", "fresh / cached")
    prov = []
    for st in states:
        t = st.stored
        when = _NA if t is None else " – ".join(
            sorted({_dt.datetime.fromtimestamp(x, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
                    for x in t}))
        npts = len(_grid_of(st))
        prov.append([f'<a href="#{_anchor_exp(st.experiment.id)}">{_e(st.experiment.id)}</a>',
                     f"{npts - len(st.missing)}/{npts}", str(len(st.rows)),
                     str(st.experiment.seeds), when,
                     _e(", ".join(st.fingerprints) or _NA), _e(_fresh_cached(st.rows))])
    env_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in env.items())
    prov_rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in prov)
    checks, owner = _checks_by_bound(states), _bound_owners(states, papers)
    paper_sections = "\n".join(
        _paper_section(p, [st for st in states if st.experiment.paper == p], audits, summaries,
                       refs, checks, owner, html_dir, errata)
        for p in papers) + _harness_audits_html(audits, papers)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dprates verification report</title>
<style>{_STYLE}</style>
<script>{_SELFCHECK}</script>
</head><body>
<header id="top"><h1>dprates: verification report</h1>
<p class="meta">Convergence rates of differentially private optimizers, theory against experiment.
Generated {_e(env.get("generated (UTC)", ""))} UTC from stored results ({_e(env.get("grid", ""))} grid)
at commit <code>{_e(env.get("git commit", "unknown")[:12])}</code>. Nothing on this page was recomputed
except fits of stored rows.</p>
<nav class="toc">{toc}</nav></header>
<section id="summary"><h2 style="margin-top:8px">Summary: bound × swept variable</h2>
{broken}<p>Checks by verdict: {tally}</p>
{_matrix_html(states)}{_contrast_tally(states)}
<p class="meta">Checks: <b>two-sided</b>, the bound is tight on this instance (observed slope within
the tolerance of the band between the bound's local slope over the grid and its asymptotic
exponent); <b>one-sided</b>, only an upper bound is claimed (the observed slope may be steeper);
<b>one-sided-lower</b>, only a lower bound is claimed (the observed slope may be flatter);
<b>reject</b>, a competing rate the same data must rule out.</p>
</section>
{paper_sections}
<section id="errata" class="errata"><h2>Errata and readings</h2>
<p class="meta">docs/errata.md; each paper's entries are in its section, with the verdicts
of the experiments each entry names.</p>
{conventions}
</section>
<section id="environment"><h2>Environment</h2>
<table>{env_rows}</table>
<h3>Stored results</h3>
<table><thead><tr>{''.join(f'<th>{h}</th>' for h in prov_head)}</tr></thead><tbody>{prov_rows}</tbody></table>
</section>
</body></html>
"""
