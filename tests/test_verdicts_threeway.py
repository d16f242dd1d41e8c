"""Three-way verdicts as equivalence tests (empirical/core/checks.py): every branch on synthetic rows
whose slope is known, the cases the two-way verdicts got wrong, bounded variables, refused wide
intervals, labels, and the false-PASS / false-FINDING rates the module docstring states.  Toy
bounds: kl:toy_power_law = n^{-3/2} (tests/_toy.py) and kl:toy_lam (below, λ ∈ [0, 1))."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import bounds
from empirical.core.checks import (FINDING_LEVEL, INCONCLUSIVE, REFERENCE, REFUSED,
                              acceptance_interval, analyse, detectable_exponent_error)
from empirical.core.experiment import Check, Experiment
from empirical.core.validation import validate_experiment

import _toy  # noqa: F401  (registers kl:toy_power_law)

GRID = (1.0, 2.0, 4.0, 8.0, 16.0)
LAM_GRID = (0.2, 0.35, 0.5, 0.65, 0.8)
lam = bounds.sym("lam")
#: λ^7 + λ^{0.3}: the "λ → ∞" exponent is 7, the slope over [0.2, 0.8] is ≈ +0.3.
TOY_LAM = (bounds.get("kl:toy_lam") if "kl:toy_lam" in bounds.ids("kl") else
           bounds.register(bounds.Bound(id="kl:toy_lam", expr=lam ** 7 + lam ** sp.Rational(3, 10),
                                        quantity="toy metric in λ", source="tests")))


#: n^-1 + n^-2: bent over 1..16 (local ≈ −1.23) away from its n → ∞ exponent −1.
n = bounds.sym("n")
TOY_TWO = (bounds.get("kl:toy_two_terms") if "kl:toy_two_terms" in bounds.ids("kl") else
           bounds.register(bounds.Bound(id="kl:toy_two_terms", expr=1 / n + n ** -2,
                                        quantity="toy metric", source="tests")))


def _check(**kw) -> Check:
    base = dict(bound="kl:toy_power_law", kind="two-sided", tolerance=0.1, reason="toy")
    base.update(kw)
    return Check(**base)


def _exp(*checks, grid=GRID, variable="n", seeds=6) -> Experiment:
    return Experiment(id="toy.threeway", paper="kl", title="three-way", variable=variable,
                      quick_grid=grid, full_grid=grid, fixed={}, seeds=seeds,
                      run=lambda p, g: {}, metric="m",
                      bound_values=lambda p: {variable: p[variable]}, checks=checks,
                      private=False)


def _rows(exp, slope, noise, seed=0, scale=1.0):
    """scale·v^slope with log-normal seed noise of sd ``noise``."""
    rng = np.random.default_rng(seed)
    v = np.asarray(exp.quick_grid, dtype=float)
    y = scale * v[:, None] ** slope * np.exp(noise * rng.standard_normal((v.size, exp.seeds)))
    return [{"seed": s, f"p_{exp.variable}": float(v[i]), "m": float(y[i, s])}
            for i in range(v.size) for s in range(exp.seeds)]


def _result(exp, slope, noise, seed=0, **kw):
    return analyse(exp, _rows(exp, slope, noise, seed, **kw)).results[0]


# --- hold: PASS, FAIL, INCONCLUSIVE ----------------------------------------------------------
def test_hold_passes_only_with_the_whole_ci_inside_a():
    exp = _exp(_check())
    r = _result(exp, -1.5, 0.01)
    assert r.verdict == "PASS" and r.ok
    assert r.acceptance[0] <= r.observed.ci_low and r.observed.ci_high <= r.acceptance[1]
    assert _result(exp, -1.0, 0.01).verdict == "FAIL"


def test_a_ci_straddling_the_edge_of_a_does_not_pass():
    """True slope 0.015 outside the tolerance, CI half-width ≈ 0.06: under the old rule the
    point estimate inside the tolerance passed (7 of 20); now no replicate passes."""
    exp = _exp(_check())
    verdicts = [_result(exp, -1.5 + 0.115, 0.15, seed=s) for s in range(20)]
    assert all(0.03 < r.observed.half_width < 0.12 for r in verdicts)
    assert not any(r.verdict == "PASS" for r in verdicts)
    straddle = [r for r in verdicts if r.verdict == INCONCLUSIVE]
    assert straddle and all(not r.ok and "to resolve" in r.message for r in straddle)
    assert all("seeds instead of 6" in r.message or "sits on an edge" in r.message
               for r in straddle)


def test_one_sided_a_is_open_below():
    exp = _exp(_check(kind="one-sided"))
    r = _result(exp, -2.5, 0.01)           # far steeper than the upper bound: allowed
    assert r.verdict == "PASS" and r.acceptance[0] == -math.inf
    assert _result(exp, -1.0, 0.01).verdict == "FAIL"


# --- one-sided-lower: the mirror of one-sided (a lower bound's slope may be exceeded) ---------
def test_one_sided_lower_a_is_open_above():
    """Bound slope −3/2, tol 0.1: A = [−1.6, +∞).  A flatter (or growing) slope passes, a
    steeper one fails; power is judged downward only."""
    exp = _exp(_check(kind="one-sided-lower"))
    r = _result(exp, -0.5, 0.01)
    assert r.verdict == "PASS" and r.acceptance == (pytest.approx(-1.6), math.inf)
    assert "one-sided-lower" in r.message and "+∞)" in r.message
    down, up = r.detectable
    assert up == math.inf and -1.2 < down < -0.8          # ≈ −1.6 − (−0.5) plus the CI
    assert _result(exp, -2.5, 0.01).verdict == "FAIL"
    assert _result(exp, 1.0, 0.01).verdict == "PASS"


def test_one_sided_lower_is_shown_and_counted_apart():
    from empirical.cli import format_table, summary_counts

    exp = _exp(_check(kind="one-sided-lower"))
    a = analyse(exp, _rows(exp, -0.5, 0.01))
    table = format_table([a])
    assert "[-1.60, +inf)" in table and "one-sided-lower = lower bound only" in table
    assert "/ +∞" in table                       # the upward error is not judged
    assert "1 lower-bound-consistent (one-sided-lower PASS)" in summary_counts([a])


def test_one_sided_lower_ci_straddling_the_edge_does_not_pass():
    """True slope 0.015 below the lower edge −1.6, CI half-width ≈ 0.06: never PASS."""
    exp = _exp(_check(kind="one-sided-lower"))
    verdicts = [_result(exp, -1.6 - 0.015, 0.15, seed=s) for s in range(20)]
    assert all(0.03 < r.observed.half_width < 0.12 for r in verdicts)
    assert not any(r.verdict == "PASS" for r in verdicts)
    assert any(r.verdict == INCONCLUSIVE and "to resolve" in r.message for r in verdicts)


def test_one_sided_lower_finding_branches():
    exp = _exp(_check(kind="one-sided-lower", expect="finding"), seeds=4)
    assert _result(exp, -2.5, 0.01).verdict == "FINDING"
    assert _result(exp, -1.0, 0.01).verdict == "NOT REPRODUCED"
    # a wide CI on the band (true slope = the bound's, half-width > tol) is never a FINDING
    wide = [_result(exp, -1.5, 0.5, seed=s) for s in range(10)]
    assert all(r.observed.half_width > 0.1 for r in wide)
    assert not any(r.verdict == "FINDING" for r in wide)


def test_one_sided_lower_level_band_power_and_width():
    band = dict(level=(0.5, 2.0), level_source="theorem", level_reason="toy")
    exp = _exp(_check(kind="one-sided-lower", **band))
    assert _result(exp, -1.5, 0.01).verdict == "PASS"
    assert _result(exp, -1.5, 0.01, scale=3.0).verdict == "FAIL"     # level above its band
    weak = _result(_exp(_check(kind="one-sided-lower", tolerance=0.4)), -1.5, 0.01)
    assert weak.verdict == "PASS" and "UNDERPOWERED" in weak.labels
    # the open upper end is not "too wide"; a lower reach past 0.5 is
    assert _result(_exp(_check(kind="one-sided-lower", tolerance=0.45)), 2.0, 0.01).verdict == "PASS"
    with pytest.raises(ValueError, match="wide_reason"):
        _check(kind="one-sided-lower", tolerance=0.8)


# --- finding: FINDING only at 99%, NOT REPRODUCED, INCONCLUSIVE ----------------------------
def test_a_wide_ci_on_the_band_is_not_a_finding():
    """True slope = the bound's, CI half-width ≈ 0.2 against tol 0.1: under the old rule a
    declared finding 'reproduced' in 10 of 10 replicates; now none does."""
    exp = _exp(_check(expect="finding"), seeds=4)
    verdicts = [_result(exp, -1.5, 0.5, seed=s) for s in range(10)]
    assert all(r.observed.half_width > 0.1 for r in verdicts)
    assert not any(r.verdict == "FINDING" for r in verdicts)
    assert {r.verdict for r in verdicts} <= {INCONCLUSIVE, "NOT REPRODUCED"}


def test_finding_branches():
    exp = _exp(_check(expect="finding"))
    assert _result(exp, -1.0, 0.01).verdict == "FINDING"
    assert _result(exp, -1.5, 0.01).verdict == "NOT REPRODUCED"


def test_a_finding_needs_the_stricter_interval():
    """Find a replicate whose 95% CI lies outside A but whose 99% CI does not: INCONCLUSIVE for
    a finding, FAIL for a check expected to hold (the 95% deviation stands there)."""
    hold, finding = _exp(_check()), _exp(_check(expect="finding"))
    for seed in range(200):
        rows = _rows(hold, -1.5 + 0.1 + 0.12, 0.2, seed)
        h = analyse(hold, rows).results[0]
        f = analyse(finding, rows).results[0]
        if h.verdict == "FAIL" and f.verdict != "FINDING":
            assert f.verdict == INCONCLUSIVE and f"{FINDING_LEVEL:.0%} CI" in f.message
            return
    pytest.fail("no replicate between the 95% and the 99% interval")


def test_finding_on_level_needs_a_passing_slope():
    band = dict(level=(0.5, 2.0), level_source="theorem", level_reason="toy")
    exp = _exp(_check(kind="one-sided", expect="finding", finding_on="level", **band))
    assert _result(exp, -1.5, 0.01, scale=3.0).verdict == "FINDING"
    assert _result(exp, -1.5, 0.01).verdict == "NOT REPRODUCED"
    assert _result(exp, -0.5, 0.01, scale=3.0).verdict == "FAIL"


# --- competitors: REJECTED, NOT REJECTED, INCONCLUSIVE, REFERENCE ----------------------------
def test_reject_needs_the_whole_ci_outside_the_competitors_interval():
    exp = _exp(_check(bound="kl:toy_wrong_rate", kind="reject", tolerance=0.2))
    assert _result(exp, -1.5, 0.01).verdict == "REJECTED"           # competitor slope −1
    assert _result(exp, -1.0, 0.01).verdict == "NOT REJECTED"
    r = _result(exp, -1.0 - 0.2, 0.15)                                # on the competitor's edge
    assert r.verdict == INCONCLUSIVE and not r.ok


def test_a_competitor_outside_its_assumptions_is_a_reference():
    exp = _exp(_check(bound="kl:toy_wrong_rate", kind="reject", reference="toy: not its class"))
    r = _result(exp, -1.5, 0.01)
    assert r.verdict == REFERENCE and r.ok and "would give REJECTED" in r.message
    with pytest.raises(ValueError, match="reference is for a reject check"):
        _check(reference="x")


# --- bounded variables ---------------------------------------------------------------------
def test_a_bounded_variable_never_uses_an_infinite_limit_exponent():
    """A bound in λ ∈ [0, 1) whose 'λ → ∞' exponent is 7 and local slope ≈ +0.3: data growing
    like λ³ passed a one-sided check through the +7 before; now A ends at local + tol."""
    exp = _exp(_check(bound="kl:toy_lam", kind="one-sided", tolerance=0.15), grid=LAM_GRID,
               variable="lam")
    r = _result(exp, 3.0, 0.01)
    assert math.isnan(r.asymptotic) and "bounded" in r.asymptotic_expr
    assert r.acceptance == (-math.inf, pytest.approx(r.local + 0.15))
    assert 0.2 < r.local < 0.5 and r.verdict == "FAIL"
    with pytest.raises(ValueError, match="cannot go to ∞"):
        TOY_LAM.exponent("lam")
    assert acceptance_interval("two-sided", 0.3, math.nan, 0.1) == (pytest.approx(0.2), 0.4)


def test_a_grid_near_the_lower_edge_uses_the_edge_limit():
    exp = _exp(_check(bound="kan:lam_linear_gap", kind="two-sided", tolerance=0.1),
               grid=(0.005, 0.01, 0.02, 0.05), variable="lam_gap")
    r = _result(exp, 1.0, 0.01)
    assert r.asymptotic == 1.0 and "lam_gap → 0" in r.asymptotic_expr and r.verdict == "PASS"


# --- refused intervals, labels, power ---------------------------------------------------------
def test_an_acceptance_interval_too_wide_to_fail_is_refused_unless_it_says_why():
    """Refused at declaration: at construction when the tolerance alone reaches past 0.5, at
    validation (before any run) when the band's asymptotic end does; the analysis still refuses
    what slips through (REFUSED)."""
    for kind in ("two-sided", "one-sided", "one-sided-lower"):
        with pytest.raises(ValueError, match="wide_reason"):
            _check(kind=kind, tolerance=0.8)
    why = _exp(_check(kind="one-sided", tolerance=0.8, wide_reason="toy: stated"))
    assert _result(why, -1.5, 0.01).verdict == "PASS"
    # n^-1 + n^-2 over 1..16: local ≈ −1.23, asymptotic −1; one-sided A reaches local + 0.53
    bent = _exp(_check(bound="kl:toy_two_terms", kind="one-sided", tolerance=0.3))
    with pytest.raises(ValueError, match="no plausible bug could fail it"):
        validate_experiment(bent)
    assert _result(bent, -1.2, 0.01).verdict == REFUSED
    validate_experiment(_exp(_check(bound="kl:toy_two_terms", kind="one-sided", tolerance=0.2)))
    # the lower-sided mirror does not reach up to the asymptotic end: not too wide
    validate_experiment(_exp(_check(bound="kl:toy_two_terms", kind="one-sided-lower",
                                    tolerance=0.3)))
    validate_experiment(_exp(_check(bound="kl:toy_two_terms", kind="one-sided", tolerance=0.3,
                                    wide_reason="toy: the bend is the bound's own")))


def test_labels_and_detectable_error():
    band = dict(level=(0.5, 2.0), level_reason="toy")
    guard = _exp(_check(level_source="calibration", history="toy: moved", **band))
    r = _result(guard, -1.5, 0.01)
    assert r.verdict == "PASS" and {"REGRESSION GUARD", "REDEFINED"} <= set(r.labels)
    assert "[REGRESSION GUARD]" in r.shown_verdict and r.history == "toy: moved"
    assert "level band: calibration" in r.sources
    down, up = r.detectable
    assert down == pytest.approx(detectable_exponent_error(r)[0]) and -0.25 < down < 0 < up < 0.25
    weak = _result(_exp(_check(kind="one-sided", tolerance=0.4)), -1.5, 0.01)
    assert weak.verdict == "PASS" and "UNDERPOWERED" in weak.labels and weak.ok
    with pytest.raises(ValueError, match="level_source"):
        _check(level=(0.5, 2.0), level_reason="toy")


# --- the stated error rates ------------------------------------------------------------------
_REPS = 40


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(offset=st.floats(0.0, 0.1), noise=st.floats(0.05, 0.4), seed=st.integers(0, 10**6))
def test_false_pass_and_false_finding_rates_stay_at_their_levels(offset, noise, seed):
    """The worst cases: a true slope just outside A (``offset`` beyond the edge) may PASS at
    most 2.5% of the time; one just inside A may be a FINDING at most 0.5% of the time.  Counts
    over _REPS replicates stay below the 99.9% binomial quantile of those rates, with the
    level allowed a factor 1.6 for the bootstrap's finite-sample coverage."""
    hold, finding = _exp(_check()), _exp(_check(expect="finding"))
    edge = -1.5 + 0.1
    passes = sum(_result(hold, edge + offset + 1e-3, noise, seed + i).verdict == "PASS"
                 for i in range(_REPS))
    found = sum(_result(finding, edge - offset - 1e-3, noise, seed + i).verdict == "FINDING"
                for i in range(_REPS))
    assert passes <= stats.binom.ppf(0.999, _REPS, 1.6 * 0.025), (passes, offset, noise)
    assert found <= stats.binom.ppf(0.999, _REPS, 1.6 * (1 - FINDING_LEVEL) / 2), \
        (found, offset, noise)
