"""The coverage table (empirical/core/coverage.py) is computed from the registry: every rate
statement × variable once, swept cells naming exactly the experiments that sweep them."""
import sympy as sp
import pytest

import bounds
from empirical.core import coverage
from empirical.core import experiment as registry


@pytest.fixture(scope="module")
def kl_cells():
    return coverage.cells("kl")


def test_every_statement_variable_pair_once(kl_cells):
    want = [(i, v) for i in bounds.ids("kl") if bounds.get(i).kind in ("upper", "lower")
            for v in bounds.get(i).variables]
    assert [(c.bound, c.variable) for c in kl_cells] == want
    assert set(coverage.summary(kl_cells)) == set(coverage.STATUSES)
    assert sum(coverage.summary(kl_cells).values()) == len(want)


def test_swept_cells_name_exactly_the_sweeping_experiments(kl_cells):
    exps = registry.experiments()
    for c in kl_cells:
        sweeping = {e.id for e in exps if e.variable == c.variable
                    and any(k.bound == c.bound for k in e.checks)}
        assert set(c.experiments) == sweeping if c.swept else not sweeping
        if c.swept:
            assert len(c.verdicts) == len(c.experiments)
    # the KL rates are swept in n, d and rho by their own experiments
    assert {c.variable for c in kl_cells if c.bound == "kl:thm1" and c.swept} >= {"n", "d", "rho"}


def test_log_only_variables_are_told_apart():
    x, y = sp.Symbol("x", positive=True), sp.Symbol("y", positive=True)
    b = bounds.Bound(id="kl:coverage_probe", expr=x ** 2 * sp.log(1 + y / x), quantity="q",
                     source="test")
    assert coverage._log_only(b, "y") and not coverage._log_only(b, "x")


def test_verdicts_come_from_the_analyses_given(kl_cells):
    c = next(c for c in kl_cells if c.swept)

    class _R:
        bound, verdict = c.bound, "INCONCLUSIVE"

    class _A:
        error = privacy_error = ""
        results = (_R(),)

    got = coverage.cells("kl", {c.experiments[0]: _A()})
    again = next(g for g in got if (g.bound, g.variable) == (c.bound, c.variable))
    assert again.verdicts[0] == "INCONCLUSIVE" and set(again.verdicts[1:]) <= {""}


def test_declarations_are_validated_and_shown():
    with pytest.raises(ValueError, match="reason"):
        coverage.declare_unswept("kl:thm7", "D", " ")
    with pytest.raises(ValueError, match="variable must be one of"):
        coverage.declare_unswept("kl:thm7", "nope", "why")
    before = coverage.declared_reasons()
    try:
        coverage.declare_unswept("kl:lb_stationary", "d", "a probe reason")
        cell = next(c for c in coverage.cells("kl")
                    if (c.bound, c.variable) == ("kl:lb_stationary", "d"))
        assert (cell.status, cell.reason) == ("declared", "a probe reason")
    finally:
        coverage._DECLARED.clear()
        coverage._DECLARED.update(before)


def test_unjudged_statements_carry_their_declared_reason():
    with pytest.raises(ValueError, match="reason"):
        coverage.declare_unjudged("kl:lb_stationary", "")
    with pytest.raises(KeyError):
        coverage.declare_unjudged("kl:no_such_bound", "why")
    judged = {c.bound for c in coverage.cells("kl") if c.status in ("swept", "held")}
    unjudged = next(c.bound for c in coverage.cells("kl")
                    if c.bound not in judged and c.status in ("none", "declared"))
    some_judged = sorted(judged)[0]
    before, before_u = coverage.declared_reasons(), coverage.unjudged_reasons()
    try:
        coverage.declare_unjudged(unjudged, "a probe reason")
        coverage.declare_unjudged(some_judged, "ignored: experiments judge it")
        cs = coverage.cells("kl")
        mine = [c for c in cs if c.bound == unjudged
                and (c.bound, c.variable) not in before and c.status != "log"]
        assert mine and all(c.status == "declared" and c.reason.endswith("a probe reason")
                            for c in mine)
        assert not any(c.bound == some_judged and "ignored" in c.reason for c in cs)
    finally:
        coverage._DECLARED.clear()
        coverage._DECLARED.update(before)
        coverage._UNJUDGED.clear()
        coverage._UNJUDGED.update(before_u)


def test_markdown_cells_stay_cells():
    cs = [coverage.Cell("kl:x", "a | b <script>", "n", "none", reason="r|s")]
    md = coverage.markdown(cs)
    row = md.splitlines()[2]
    assert "<script>" not in md and row.count(" | ") == 3 and "\\|" in row


def test_cli_prints_the_table(capsys):
    from empirical.cli import main

    assert main(["coverage", "kl"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| bound | statement | swept | not swept |") and "`kl:thm9`" in out


def test_report_page_and_summary_carry_the_table():
    from empirical.report.page import _coverage_html
    from empirical.report.summary import _md_coverage

    page = _coverage_html("kl", [])
    assert 'id="coverage-kl"' in page and "<code>kl:thm1</code>" in page
    md = "\n".join(_md_coverage("kl", []))
    assert "### Coverage" in md and "`kl:thm9`" in md


def test_userlevel_rate_variables_are_swept_or_carry_a_reason(coverage_gaps):
    """Every (statement, variable) pair of the user-level paper is swept, log-only or declared
    with its reason (empirical/papers/userlevel/coverage_reasons.py)."""
    assert coverage_gaps["userlevel"] == []
