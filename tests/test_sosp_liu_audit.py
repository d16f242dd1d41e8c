"""Privacy of [29]'s algorithm (algorithms/sosp/liu.py; audits and mutants in
empirical/papers/sosp/audit_liu.py): the noise it adds against the scales recomputed from its
parametrization, AboveThreshold's exact ε on the audited query sequences against the claim (and
the broken variants' above it), the exact law against the algorithm's own selection, and the
cheap audits (the AboveThreshold ones need 10⁵ runs: ``dprates audit sosp`` and the mutation
self-test run them)."""
import numpy as np
import pytest

from algorithms.sosp.liu import liu_select
from empirical.privacy import audit, mutants
from empirical.papers.sosp import experiments as _sosp  # noqa: F401  (registers the paper)
from empirical.papers.sosp import audit_liu as al
from empirical.privacy.audit import spawn_rows


def _within(r: dict, family: str) -> bool:
    """measured/claimed within 5 standard errors of 1: Gaussian rms ratio s.e. 1/√(2k),
    Laplace mean |e|/b s.e. 1/√k."""
    se = (1.0 / np.sqrt(2.0 * r["count"])) if family == "gauss" else 1.0 / np.sqrt(r["count"])
    return abs(r["ratio"] - 1.0) <= 5.0 * se


def test_liu_noise_matches_its_claim():
    """O₁ noise, AboveThreshold's threshold and query noise, measured on the algorithm's draws,
    each within 5 s.e. of the scale recomputed from [29]'s parametrization; under each mutant
    the channel it breaks leaves that band (0 for an omitted noise, 1/2 for the halved one)."""
    m = al.measure_liu_noise(rows=100)
    assert _within(m["o1"], "gauss") and m["o1"]["count"] == 100
    assert _within(m["svt_threshold"], "laplace") and _within(m["svt_query"], "laplace")
    for name, ch in (("sosp.liu.svt_threshold_noise_removed", "svt_threshold"),
                     ("sosp.liu.svt_query_noise_halved", "svt_query"),
                     ("sosp.liu.o1_noise_removed", "o1")):
        with mutants.applied(mutants.get_mutant(name)):
            r = al.measure_liu_noise(rows=100)[ch]
        assert not _within(r, "gauss" if ch == "o1" else "laplace"), (name, r)


def test_svt_exact_epsilon_against_the_claim():
    """On the audited sequences the honest AboveThreshold's exact ε(δ) stays below the claimed
    Δ/b_T + 2Δ/b_q = 1 and the worst one comes within 5% of it (the sequence is near the worst
    case the bound allows); each broken variant's exceeds the claim by > 0.3, so the audit has
    something to catch."""
    claim = al._claim()
    assert claim == pytest.approx(1.0, rel=1e-6)
    honest = [al.svt_exact_epsilon(n) for n in al.SVT_SEQUENCES]
    assert max(honest) <= claim and max(honest) >= 0.95 * claim
    assert al.svt_exact_epsilon("raise k-1, lower the last", threshold_factor=0.0) > claim + 0.3
    assert al.svt_exact_epsilon("raise k-1, lower the last", query_factor=0.5) > claim + 0.3


def test_svt_index_law_matches_the_selection_code():
    """The exact law of the output index against liu_select's frequencies on 4000 rows
    (the tail bins pooled): each bin within 5 binomial s.e."""
    plan, sc = al.liu_audit_plan(), al.svt_scales()
    for side in (0, 1):
        s = al._svt_scores_on(side, "raise k-1, lower the last")
        R = 4000
        idx = liu_select(np.zeros((R, al.SVT_K, 1)), plan,
                         lambda g, X, k, r: (s.reshape(1, -1, 1), np.zeros((1, s.size, 1, 1))),
                         spawn_rows(np.random.default_rng([7, side]), R))
        emp = np.bincount(np.where(idx >= 0, idx, al.SVT_K), minlength=al.SVT_K + 1) / R
        law = al.svt_index_law(s, sc["threshold"], sc["b_threshold"], sc["b_query"])
        assert law.sum() == pytest.approx(1.0, abs=1e-6)
        for e, p in ((emp[:4], law[:4]), (emp[4:].sum(), law[4:].sum())):
            assert np.all(np.abs(e - p) <= 5 * np.sqrt(p * (1 - p) / R) + 1e-12)


def test_liu_oracle_audit():
    """The O₁ canary on the DP-SPIDER channel (the searched target runs 8·10⁴ per side in
    ``dprates audit``): honest ε_lo ≤ the exact ε ≤ the claim; with the O₁ noise omitted the
    bound clears the claim."""
    from algorithms import accounting
    z = al.liu_audit_plan().spider.z
    claim = accounting.epsilon(accounting.gaussian_event(z), al.ORACLE_DELTA)
    t = audit.get_target("sosp.liu.oracle.stepwise")
    assert t.claimed_epsilon() == pytest.approx(claim, rel=1e-12)
    assert t.exact_epsilon() <= claim
    rel = al._oracle_release("O1 linear")
    s = [rel(side, np.random.default_rng([3, side]), 1500) for side in (0, 1)]
    honest = audit.epsilon_lower_bound(s[0], s[1], al.ORACLE_DELTA).epsilon
    assert honest <= t.exact_epsilon()
    with mutants.applied(mutants.get_mutant("sosp.liu.o1_noise_removed")):
        s = [rel(side, np.random.default_rng([4, side]), 500) for side in (0, 1)]
    assert audit.epsilon_lower_bound(s[0], s[1], al.ORACLE_DELTA).epsilon > claim


def test_liu_targets_and_mutants_are_registered():
    names = {t.name: t for t in audit.targets(["sosp"])}
    kinds = {t.expect for n, t in names.items() if n.startswith("sosp.liu.")}
    assert kinds == {"private", "broken"}
    assert names["sosp.liu.svt"].reference == "laplace"
    ms = {m.name: m for m in mutants.mutants(["sosp"])}
    for n in ("sosp.liu.svt_threshold_noise_removed", "sosp.liu.svt_query_noise_halved",
              "sosp.liu.o1_noise_removed"):
        assert n in ms and n in names and names[n].expect == "broken"
        assert "sosp.liu.best.n" in ms[n].experiments
