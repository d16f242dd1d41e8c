"""Privacy audit of objective perturbation (empirical/papers/linreg/audit_objpert.py): the pairs,
the closed-form law of the output against the algorithm's own runs, the exact ε of the pairs
against the claim, the measured noise, and small audits (the honest target stays below its
claim and its exact ε, the dropped-regulariser control is caught)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from empirical.papers.linreg import audit_objpert as ao
from empirical.privacy import audit, mutants


@pytest.mark.parametrize("kind", ["zero", "t*", "flip"])
@pytest.mark.parametrize("anchors", [0, 10])
def test_pairs_differ_in_one_record_inside_the_domain(kind, anchors):
    (X0, y0), (X1, y1) = ao.objpert_pair(kind, anchors)
    diff = np.flatnonzero(np.any(X0 != X1, axis=1) | (y0 != y1))
    assert diff.tolist() == [0]
    for X, y in ((X0, y0), (X1, y1)):     # nothing is projected: the pair is the data
        assert np.all(np.abs(X) <= ao._BX * (1 + 1e-12)) and np.all(np.abs(y) <= ao._BY)


def test_closed_form_law_matches_the_algorithm():
    """The interior mass of the law the exact ε integrates, against the algorithm's runs (3000
    per side: binomial s.e. ≤ 0.008), on both sides of the zero pair."""
    th = ao.theory_constants()
    rng = np.random.default_rng(7)
    for side, pair in enumerate(ao.objpert_pair("zero")):
        M, c = ao._moments(*pair, th["Lambda"])
        _, lo, hi = ao._law(M, c, th["noise_std"], np.zeros(1))
        inside = ao._objpert_release("zero", "interior")(side, rng, 3000)
        assert inside.mean() == pytest.approx(1.0 - lo - hi, abs=0.03)


def test_exact_epsilon_holds_the_jacobian_term_and_stays_below_the_claim():
    claim = ao.objpert_claim()
    assert claim == pytest.approx(ao.OP_EPSILON, rel=1e-6)
    zero = ao.pair_epsilon("zero")
    # the zero pair realises the Jacobian ratio 1 + λ/Λ = 1 + ε/2 on the interior
    assert math.log1p(ao.OP_EPSILON / 2) <= zero < 1.2 * math.log1p(ao.OP_EPSILON / 2)
    assert ao.pair_epsilon("flip") < ao.pair_epsilon("t*") < zero == ao.objpert_exact() < claim
    # without the regulariser the same pair leaks more than the claim
    assert ao.pair_epsilon("zero", Lam=0.0) > claim


def test_statistic_uses_measured_noise():
    th = ao.theory_constants()
    assert ao.measured_std() == pytest.approx(th["noise_std"], rel=0.1)   # 400 rows: ±3.5%
    with mutants.applied(mutants.get_mutant("linreg.objpert.noise_halved")):
        assert ao.measured_std() == pytest.approx(0.5 * th["noise_std"], rel=0.1)


@pytest.mark.slow
def test_objpert_audit_stays_below_its_exact_epsilon():
    r = audit.run_audit(audit.get_target("linreg.objpert"), trials=2_000)
    assert r.verdict == "OK" and r.audited <= r.exact < r.claimed
    assert set(r.search) >= {"zero, lr", "t*, lr", "flip, lr"}


def test_objpert_control_is_caught():
    c = audit.run_audit(audit.get_target("linreg.objpert.regulariser_dropped"), trials=6_000)
    assert c.verdict == "CAUGHT" and c.audited > c.claimed
