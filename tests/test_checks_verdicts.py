"""Per-grid expectations (``Check.expect_full``) and what a finding is a finding of
(``Check.finding_on``): each behaviour on synthetic rows whose slope and level are known, with
the case that fails without it.  Toy bound: kl:toy_power_law = n^{-3/2} (tests/_toy.py)."""
import numpy as np
import pytest

from empirical.core import experiment as registry
from empirical.core.checks import analyse
from empirical.core.experiment import FINDING_ON, Check, Experiment

import _toy  # noqa: F401  (registers the toy bounds)

QUICK, FULL = (1.0, 2.0, 4.0, 8.0), (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
BAND = (0.5, 2.0)


def _check(**kw) -> Check:
    base = dict(bound="kl:toy_power_law", kind="two-sided", tolerance=0.1,
                reason="toy: 4 seeds of 1% log-noise give a CI half-width ≈ 0.01",
                level=BAND, level_source="theorem", level_reason="toy: the law's constant is 1")
    base.update(kw)
    return Check(**base)


def _exp(check: Check, **kw) -> Experiment:
    base = dict(id="toy.verdicts", paper="kl", title="verdicts", variable="n", quick_grid=QUICK,
                full_grid=FULL, fixed={}, seeds=4, run=lambda p, g: {}, metric="m",
                bound_values=lambda p: {"n": p["n"]}, checks=(check,), private=False)
    base.update(kw)
    return Experiment(**base)


def _rows(exp, grid, *, scale=1.0, slope=-1.5, bend=None, noise=0.01):
    """Rows of scale·n^slope (times (n/8)^bend past n = 8, the regime a full grid reaches),
    with log-normal seed noise of sd ``noise``."""
    rng = np.random.default_rng(7)
    rows = []
    for v in grid:
        y = scale * v ** slope * ((v / 8.0) ** bend if bend and v > 8 else 1.0)
        for r in range(exp.seeds):
            rows.append({"experiment": exp.id, "seed": r, f"p_{exp.variable}": v,
                         exp.metric: y * np.exp(noise * rng.standard_normal())})
    return rows


def _verdict(exp, rows) -> str:
    return analyse(exp, rows).results[0].verdict


# --- expect_full: one experiment, PASS on its quick grid and FINDING on its full grid ---------
def test_expect_full_gives_pass_on_the_quick_grid_and_finding_on_the_full_grid():
    """The law holds up to n = 8 (the quick grid) and bends past it (slope −2.5 beyond, and
    the level leaves its band at n = 32): declared PASS on quick, FINDING of both on full."""
    exp = _exp(_check(expect_full="finding", finding_on="slope+level"))
    quick = analyse(exp, _rows(exp, QUICK, bend=-1.0))
    full = analyse(exp, _rows(exp, FULL, bend=-1.0))
    assert (quick.grid, quick.results[0].verdict, quick.results[0].expect) == \
        ("quick", "PASS", "hold")
    assert (full.grid, full.results[0].verdict, full.results[0].expect) == \
        ("full", "FINDING", "finding")
    assert full.ok and "finding of the slope and level" in full.results[0].message
    # without expect_full the same full-grid rows FAIL (the rule bent before: drop the points)
    assert _verdict(_exp(_check()), _rows(exp, FULL, bend=-1.0)) == "FAIL"
    # and with it, full-grid rows that follow the law are a stale record
    assert _verdict(exp, _rows(exp, FULL)) == "NOT REPRODUCED"
    # the quick grid is still judged as holding: a quick grid that bends FAILS
    assert _verdict(exp, _rows(exp, QUICK, slope=-2.5)) == "FAIL"


def test_expected_verdict_per_grid():
    c = _check(expect_full="finding", finding_on="slope")
    assert (c.expected_verdict, c.expected_verdict_for(False), c.expected_verdict_for(True)) == \
        ("PASS", "PASS", "FINDING")
    assert _check().expected_verdict_for(True) == "PASS"           # None: as expect
    assert _check(expect="finding", finding_on="slope").expected_verdict_for(True) == "FINDING"
    assert _check(kind="reject", level=None, expect_full="finding").expected_verdict_for(True) \
        == "REJECTED"


def test_grid_is_read_from_the_rows_grid_values():
    exp = _exp(_check(expect_full="finding", finding_on="slope"))
    assert not exp.is_full(QUICK) and exp.is_full(FULL) and exp.is_full([32.0])
    assert not exp.is_full([1.0, 2.0])                 # values on both grids: the quick grid


# --- finding_on="slope": the level band is enforced ------------------------------------------
def test_a_slope_finding_fails_when_its_level_leaves_its_band():
    """Data n^{-1} against n^{-3/2}: the slope deviates by 0.5 (the finding), the level
    n^{1/2} ∈ [1, 2.8] lies in the band (0.5, 4).  10× the level: FAIL (the level is not what
    was recorded), where the reading before finding_on said FINDING (it could not fail)."""
    band = dict(level=(0.5, 4.0), level_source="theorem", level_reason="toy")
    exp = _exp(_check(expect="finding", finding_on="slope", **band))
    assert _verdict(exp, _rows(exp, QUICK, slope=-1.0)) == "FINDING"
    off = analyse(exp, _rows(exp, QUICK, slope=-1.0, scale=10.0)).results[0]
    assert off.verdict == "FAIL" and not off.ok
    assert "finding of the slope reproduced, but the level" in off.message
    with pytest.raises(ValueError, match="finding_on"):                 # undeclared: refused
        _check(expect="finding", **band)
    assert _verdict(exp, _rows(exp, QUICK)) == "NOT REPRODUCED"       # the slope is back


# --- finding_on="level": the slope must pass, the level must leave ----------------------------
def test_a_level_finding_needs_a_passing_slope_and_a_level_outside_its_band():
    exp = _exp(_check(kind="one-sided", expect="finding", finding_on="level"))
    found = analyse(exp, _rows(exp, QUICK, scale=3.0)).results[0]     # right slope, 3× level
    assert found.verdict == "FINDING" and "finding of the level" in found.message
    assert _verdict(exp, _rows(exp, QUICK)) == "NOT REPRODUCED"       # level back in band
    # the slope is enforced: one steeper than the upper bound allows FAILS
    assert _verdict(exp, _rows(exp, QUICK, slope=-0.5, scale=3.0)) == "FAIL"
    # an inconclusive slope cannot carry a level finding (before: FINDING whatever the level)
    noisy = analyse(exp, _rows(exp, QUICK, scale=3.0, noise=2.0)).results[0]
    assert noisy.observed.half_width > 0.1 and noisy.verdict == "INCONCLUSIVE", noisy.message
    assert not noisy.ok and "to resolve" in noisy.message


# --- finding_on="slope+level": both must deviate ---------------------------------------------
def test_a_finding_of_both_is_stale_when_either_part_returns():
    exp = _exp(_check(expect="finding", finding_on="slope+level", level=(0.5, 4.0),
                      level_source="theorem", level_reason="toy"))
    assert _verdict(exp, _rows(exp, QUICK, slope=-1.0, scale=10.0)) == "FINDING"
    only_slope = analyse(exp, _rows(exp, QUICK, slope=-1.0)).results[0]
    assert only_slope.verdict == "NOT REPRODUCED" and "the level now passes" in only_slope.message
    only_level = analyse(exp, _rows(exp, QUICK, scale=10.0)).results[0]
    assert only_level.verdict == "NOT REPRODUCED" and "the slope now passes" in only_level.message


# --- declarations are validated --------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    (dict(expect_full="fails"), "expect_full must be None, 'hold' or 'finding'"),
    (dict(expect="finding", finding_on="intercept"), "finding_on must be None or one of"),
    (dict(finding_on="slope"), "finding_on is only for a check expected to be a finding"),
    (dict(kind="reject", level=None, expect="finding", finding_on="slope"),
     "finding_on is only for a check expected"),
    (dict(expect="finding", finding_on="level", level=None), "needs a level band"),
    (dict(expect_full="finding", finding_on="slope+level", level=None), "needs a level band"),
])
def test_bad_declarations_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        _check(**kw)


def test_finding_on_values():
    assert FINDING_ON == ("slope", "level", "slope+level")


def test_expect_full_needs_a_full_grid_that_the_rows_can_show():
    with pytest.raises(ValueError, match="expect_full differs"):
        _exp(_check(expect_full="finding", finding_on="slope"), full_grid=QUICK)
    _exp(_check(expect_full="hold"), full_grid=QUICK)        # same expectation: no need


# --- the registered declarations -------------------------------------------------------------
def test_every_finding_with_a_level_band_says_what_it_is_a_finding_of():
    """Check refuses such a declaration; this pins that no registered one slipped through."""
    got = {(e.id, i) for e in registry.experiments() for i, c in enumerate(e.checks)
           if c.level is not None and c.finding_on is None and c.kind != "reject"
           and "finding" in (c.expectation(False), c.expectation(True))}
    assert not got, sorted(got)


def test_registered_declarations():
    d = registry.get("linreg.amb.d.privacy")
    assert {128, 256} <= set(d.full_grid) and max(d.quick_grid) == 64
    assert [c.expected_verdict_for(True) for c in d.checks] == ["FINDING", "REJECTED", "REJECTED"]
    assert [c.expected_verdict_for(False) for c in d.checks] == ["PASS", "REJECTED", "REJECTED"]
    assert d.checks[0].finding_on == "slope+level"
    fb = registry.get("linreg.amb.d.feedback").checks[0]
    assert fb.finding_on == "slope" and fb.level is not None and fb.level_reason
    assert registry.get("userlevel.alg3.eps.pole").checks[0].finding_on == "level"
    assert registry.get("userlevel.alg3.logistic.m").checks[0].finding_on == "slope"


# --- a competitor whose values hold the swept symbol fixed is judged at those values ----------
def test_competitor_held_fixed_by_its_values_is_judged_at_them_not_at_its_symbolic_exponent():
    """"The law at n = 1 for every n" (values holding n fixed) is flat along the sweep: data
    falling as n^{-3/2} rule it out.  Judged at the bound's symbolic exponent −3/2 instead (as
    before), the same data would leave it NOT REJECTED."""
    main = _check(level=None, level_source=None, level_reason="")
    held = Check("kl:toy_power_law", "reject", 0.1, "toy: the rate at n = 1, flat in n",
                 values=lambda p: {"n": 1.0})
    exp = _exp(main, id="toy.held_competitor", checks=(main, held))
    a = analyse(exp, _rows(exp, QUICK))
    got = a.results[1]
    assert (got.local, got.asymptotic) == (0.0, 0.0)
    assert got.verdict == "REJECTED", got.message
    assert "asymptotic +0.000 ruled out" in got.message
    # the primary check is judged as before: its band reaches the symbolic exponent
    assert a.results[0].verdict == "PASS" and a.results[0].asymptotic == -1.5


def test_competitor_held_fixed_while_another_symbol_moves_is_judged_at_its_local_slope():
    """Values that hold n fixed but move another symbol (here d = n, so the bound n^{-1/2}·d at
    n = 4 grows like the sweep) have no exponent in n to take: local slope only."""
    import bounds

    if "kl:toy_held_two" not in bounds.ids("kl"):
        bounds.register(bounds.Bound(id="kl:toy_held_two",
                                     expr=bounds.sym("d") / bounds.sym("n") ** 0.5,
                                     quantity="toy metric", source="tests/test_checks_verdicts.py"))
    main = _check(level=None, level_source=None, level_reason="")
    held = Check("kl:toy_held_two", "reject", 0.1, "toy: n held at 4, d follows the sweep",
                 values=lambda p: {"n": 4.0, "d": p["n"]})
    exp = _exp(main, id="toy.held_two", checks=(main, held))
    got = analyse(exp, _rows(exp, QUICK)).results[1]
    assert abs(got.local - 1.0) < 1e-9 and np.isnan(got.asymptotic)
    assert "values hold n fixed" in str(got.asymptotic_expr)
    assert got.verdict == "REJECTED", got.message
