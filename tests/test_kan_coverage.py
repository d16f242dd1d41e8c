"""KAN paper coverage (empirical.core.coverage): every variable of every rate statement is swept,
enters only through a log, or carries a declared reason (empirical.papers.kan.unswept)."""
from __future__ import annotations

import empirical.papers.kan  # noqa: F401  (registers the experiments and declarations)
from empirical.core import coverage


def test_no_kan_statement_has_a_held_or_unjudged_variable_without_a_reason(coverage_gaps):
    assert coverage_gaps["kan"] == []


def test_the_private_t_and_b_sweeps_count_as_sweeps_of_theorems_41_and_d14():
    swept = {(c.bound, c.variable): c.experiments for c in coverage.cells("kan")
             if c.status == "swept"}
    assert "kan.private.T" in swept[("kan:A_corr", "T")]
    assert "kan.private.B" in swept[("kan:A_corr", "B")]
    assert "kan.private.T" in swept[("kan:thmC.13", "T")]
    assert "kan.private.d9.T" in swept[("kan:A_van", "T")]
    assert "kan.private.d9.B" in swept[("kan:A_van_simplified", "B")]
