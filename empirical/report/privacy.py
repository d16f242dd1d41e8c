"""The report's privacy tables (empirical/report/__init__.py): per paper, what each experiment's stored
rows spent against their guarantee beside the audited lower bound of its algorithm; and the
stored privacy audits (``dprates audit``, empirical/store/audit_store.py), in HTML and Markdown.
"""
from __future__ import annotations

import re
from typing import Sequence

from empirical.core.experiment import PRIVACY_UNITS
from empirical.report.data import AuditView, ExperimentState
from empirical.report.markdown import md_text
from empirical.report.format import (_NA, _anchor_audit, _anchor_exp, _badge, _e, _range,
                                     _slug, _table)

def _audit_cell(st: ExperimentState, audits: AuditView) -> str:
    """The audited lower bounds of the experiment's algorithm, each linked to its audit row
    (an audit runs at its own parameters, so its ε is not the experiment's ε)."""
    names = audits.by_experiment.get(st.experiment.id, [])
    if not names:
        reg = audits.registered_by_experiment.get(st.experiment.id, [])
        return ("not audited" if not reg else
                "not audited (registered, not stored: <code>dprates audit "
                + _e(" ".join(reg)) + "</code>)")
    parts = []
    for n in names:
        a = audits.stored[n]
        claimed = _NA if a.claimed is None else f"{a.claimed:.3g}"
        stale = ' <span class="v finding">stale</span>' if a.status == "stale" else ""
        parts.append(f'<a href="#{_anchor_audit(n)}">{_e(n)}</a>: ε<sub>lo</sub> '
                     f"{_e(a.audited)} (claimed {claimed}, power {_e(audit_power(a))}) "
                     f"{_badge(a.verdict)}{stale}")
    return "<br>".join(parts)


def _privacy_table(states: list[ExperimentState], audits: AuditView) -> str:
    head = ("experiment", "unit", "target", "guarantee", "spent", "max spent / guarantee",
            "audited lower bound (ε at the audit's δ and setting, vs its claim)", "verdict")
    rows = []
    for st in states:
        exp = st.experiment
        link = f'<a href="#{_anchor_exp(exp.id)}">{_e(exp.id)}</a>'
        if not exp.private:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, _NA, "not private (baseline/control)"])
            continue
        audited = _audit_cell(st, audits)
        if not st.rows:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, audited, _badge(st.unrun_label)])
            continue
        unit = next((u for u in PRIVACY_UNITS if all(f"{u}_{c}" in st.rows[0]
                                                     for c in ("target", "guarantee", "spent"))), None)
        a = st.analysis
        verdict = (_badge("PRIVACY FAIL") + f"<br><small>{_e(a.privacy_error)}</small>"
                   if a is not None and a.privacy_error else _badge("PASS"))
        if unit is None:
            rows.append([link, _NA, _NA, _NA, _NA, _NA, audited, verdict])
            continue
        col = {c: [r.get(f"{unit}_{c}") for r in st.rows] for c in ("target", "guarantee", "spent")}
        ratios = [s / g for s, g in zip(col["spent"], col["guarantee"])
                  if s is not None and g not in (None, 0)]
        rows.append([link, {"rho": "ρ (zCDP)", "epsilon": "ε"}.get(unit, unit),
                     _range(col["target"]), _range(col["guarantee"]), _range(col["spent"]),
                     f"{max(ratios):.4g}" if ratios else _NA, audited, verdict])
    return _table(head, rows)


def audit_power(a) -> str:
    """A stored audit's power as tables show it: the fraction of the exact ε this many runs
    certify on a correctly calibrated reference mechanism, LOW below the flag, and the exact ε
    from which a bug is certain to be caught (power × E > claimed); "—" when not computed."""
    p = getattr(a, "power", None)
    if p is None:
        return "—"
    low = " LOW" if getattr(a, "low_power", False) else ""
    pp, pc = getattr(a, "profile_power", None), getattr(a, "profile_claimed", None)
    profile = getattr(a, "profile_delta", None) is not None and pp is not None
    out = f"{p:.2f}" + ("" if profile else low)
    if a.claimed is not None and p > 0:
        out += f"; catches exact ε ≥ {a.claimed / p:.3g}"
    if profile:       # LOW then flags both points
        out += f"; at δ_p {pp:.2f}" + (f", catches ε(δ_p) ≥ {pc / pp:.3g}"
                                       if pc is not None and pp > 0 else "") + low
    return out


def audit_profile(a) -> str:
    """A stored audit's profile point as tables show it: δ_p, the claimed ε(δ_p) and the
    audited ε_lo there; "—" when the target claims no profile."""
    d = getattr(a, "profile_delta", None)
    if d is None:
        return "—"
    lo = getattr(a, "profile_epsilon_lo", None)
    claim = getattr(a, "profile_claimed", None)
    return (f"δ_p {d:g}: ε_lo {'∞' if lo is None else f'{lo:.3f}'} vs "
            f"{'—' if claim is None else f'{claim:.3f}'}")


def _audit_table(stored: list) -> str:
    """Every stored audit of one paper: the claim, the audited lower bound with its confidence,
    the verdict, the runs and seeding, the code fingerprint (stale ones marked)."""
    head = ("audit target", "algorithm", "relation / view", "δ", "claimed ε",
            "audited ε<sub>lo</sub> (confidence)", "exact ε", "power", "profile point",
            "runs/side", "verdict",
            "code fingerprint")
    rows = []
    for a in stored:
        rec = a.record
        name = _e(a.target) + (" <small>(broken control)</small>" if a.expect == "broken" else "")
        fp = _e(a.fingerprint) + (f'<br><span class="v finding">stale</span> <small>{_e(a.reason)}'
                                  "</small>" if a.status == "stale" else "")
        rows.append([f'<span id="{_anchor_audit(a.target)}">{name}</span>', _e(a.algorithm),
                     f"{_e(a.relation)} / {_e(a.view)}", f"{a.delta:g}",
                     _NA if a.claimed is None else f"{a.claimed:.3f}",
                     f"{_e(a.audited)} ({100 * a.confidence:g}%)",
                     _NA if a.exact is None else f"{a.exact:.3f}", _e(audit_power(a)),
                     _e(audit_profile(a)),
                     f"{a.trials:,}" + (f" (pair: {_e(rec.get('pair', ''))})"
                                        if rec.get("pair") not in (None, "given") else ""),
                     _badge(a.verdict), fp])
    return _table(head, rows)


_AUDIT_NOTE = ("<p class=\"meta\">Stored by <code>dprates audit</code> (results/audits/). "
               "ε<sub>lo</sub> is a lower bound on the true ε(δ) at the stated confidence "
               "(Clopper–Pearson on held-out runs of one neighbouring pair); ε<sub>lo</sub> &gt; "
               "claimed proves a violation, ε<sub>lo</sub> ≤ claimed is evidence, not proof, of "
               "privacy; its power is the fraction of the exact ε the same number of runs "
               "certifies on a correctly calibrated reference mechanism (LOW: weak evidence), "
               "and a bug is certain to be caught once the exact ε exceeds claimed/power. "
               "A target claiming a privacy profile δ ↦ ε(δ) is also judged at a profile point "
               "δ<sub>p</sub> chosen by power before any run, on the same runs, each point at "
               "α/2 (Bonferroni); either point above its claim is a violation. "
               "Broken controls must be CAUGHT. Each audit runs at its own parameters, "
               "so its claimed ε is not an experiment's; runs are seeded from "
               "SeedSequence([h(target), h(pair), h(tag), side, block]).</p>")


def _harness_audits_html(audits: AuditView, papers: Sequence[str]) -> str:
    """Stored audits of no paper on the page (the core harness's power targets and broken
    controls), and stored audit files that could not be read."""
    others = sorted({a.paper for a in audits.stored.values()} - set(papers))
    parts = [f'<h3 id="audits-{_slug(p)}">{_e(p)}</h3>{_audit_table(audits.for_paper(p))}'
             for p in others]
    if audits.problems:
        parts.append("<p>Skipped:</p><ul>" + "".join(f"<li>{_e(m)}</li>" for m in audits.problems)
                     + "</ul>")
    if not parts:
        return ""
    return ('<section id="audits-other"><h2>Privacy audits: harness and other papers</h2>'
            + _AUDIT_NOTE + "".join(parts) + "</section>")


def _audits_section(paper: str, audits: AuditView) -> str:
    stored = audits.for_paper(paper)
    slug = _slug(paper)
    if not stored:
        reg = sorted(k for k, p in audits.registered.items() if p == paper)
        what = (f"none stored; registered: <code>{_e(' '.join(reg))}</code> "
                f"(<code>dprates audit {_e(paper)}</code>)" if reg else "none registered")
        return f'<h3 id="audits-{slug}">Privacy audits</h3><p>{what}.</p>'
    return (f'<h3 id="audits-{slug}">Privacy audits</h3>{_AUDIT_NOTE}' + _audit_table(stored))


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------

def _md_audits(stored: list) -> list[str]:
    """Stored privacy audits of one paper as a Markdown table (empty when none)."""
    if not stored:
        return []
    out = ["", "### Privacy audits", "",
           "| audit target | δ | claimed ε | audited ε_lo (confidence) | power | profile point "
           "| runs/side | verdict |",
           "|---|---|---|---|---|---|---|---|"]
    for a in stored:
        name = (f"`{a.target}`" if re.fullmatch(r"[\w.:\-]+", str(a.target))
                else md_text(a.target)) + (" (broken control)" if a.expect == "broken" else "")
        claimed = "—" if a.claimed is None else f"{a.claimed:.3f}"
        stale = " (stale)" if a.status == "stale" else ""
        out.append(f"| {name} | {a.delta:g} | {claimed} | {md_text(a.audited)} "
                   f"({100 * a.confidence:g}%) | {md_text(audit_power(a))} | "
                   f"{md_text(audit_profile(a))} | {a.trials:,} | **{md_text(a.verdict)}**{stale} |")
    out += ["", "power: the fraction of the exact ε the same number of runs certifies on a correctly "
            "calibrated reference mechanism (LOW: an OK verdict is weak evidence); a bug is "
            "certain to be caught once the exact ε exceeds claimed/power; profile point: the "
            "claimed profile δ ↦ ε(δ) judged at δ_p on the same runs (each point at α/2)."]
    return out
