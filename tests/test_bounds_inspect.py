"""bounds/explain.py and empirical/cli/bounds_command.py: `dprates bounds derive` walks a corollary out of
its theorem (KL, linreg, KAN) with the verdict of core's follows_from, and fails on a wrong
parameter choice; `dprates bounds compare` finds the crossover symbolically and numerically and
says which bound is larger on each side of it."""
from __future__ import annotations

import math

import pytest
import sympy as sp

import bounds
from bounds import explain
from bounds.compare import crossover
from bounds.core import sym
from empirical.cli import bounds_command as cli_bounds

n, d, rho = sym("n"), sym("d"), sym("rho")


# ------------------------------------------------------------------------------------- derive
def test_derive_thm5_best_case_step_by_step():
    (rep,) = explain.derive("kl:thm5_best")
    text = rep.format()
    assert "T := n**2*rho/d" in text and "Substituted and simplified" in text
    # the substituted theorem's exponents are core's follows_from's, compared to the corollary's
    der = bounds.follows_from(bounds.get("kl:thm5_best"), bounds.get("kl:thm5"),
                              {"T": n**2 * rho / d}, ["n", "d", "rho"])
    assert rep.exponents == der.exponents and rep.holds == der.holds is True
    cor = bounds.get("kl:thm5_best")
    assert all(c == cor.exponent(v) for v, (_, c) in rep.exponents.items())
    # the d-exponent is strictly below the corollary's: it holds, but not tightly, and says so
    assert not rep.tight and "HOLDS (the substituted theorem is at most" in text
    assert "d: substituted theorem 1/4  <  corollary 1/2" in text


def test_derive_fails_on_a_wrong_parameter_choice():
    """Corollary 5.6's 1/n from A_non needs T ≍ n^{3/2}/γ³; with T = n (one pass) the 1/(Tηγ²)
    term is n^{-1/2}: derive says it does not follow."""
    from bounds.rates.kan import calibration_corollaries as kb

    wrong = dict(kb.regime("cor5.6", "delta_needed"), T=n)
    rep = explain._derive_one(explain.DerivationSpec("kan:cor5.6_opt", "kan:A_non", wrong, ("n",)))
    assert not rep.holds and "DOES NOT FOLLOW" in rep.format()
    assert rep.exponents["n"] == (sp.Rational(-1, 2), -1)
    (right,) = explain.derive("kan:cor5.6_opt")            # the registered choice: tight
    assert right.tight


@pytest.mark.parametrize("cor", ["linreg:cor33", "kl:thm5_worst"])
def test_derive_is_tight_where_the_corollary_is_the_theorem_at_its_choices(cor):
    (rep,) = explain.derive(cor)
    spec = rep.spec
    fixed = {k: sp.sympify(v) for k, v in spec.fixed.items()}
    c = bounds.get(cor)
    assert rep.tight and rep.holds
    assert {v: e for v, (_, e) in rep.exponents.items()} == {
        v: c.exponent(v, **fixed) for v in spec.variables}


def test_derive_kan_cor56_under_both_delta_readings():
    reps = {r.spec.label: r for r in explain.derive("kan:cor5.6")}
    assert set(reps) == {"delta_needed", "delta_as_stated"}
    for r in reps.values():
        assert r.holds and "delta := " in r.format()
    assert "delta := 1/n" in reps["delta_needed"].format()


def test_derive_names_what_can_be_derived():
    with pytest.raises(KeyError, match="derivable"):
        explain.derive("kl:thm9")                       # a theorem with no registered corollary
    with pytest.raises(KeyError, match="closest"):
        explain.derive("kl:thm5_bst")                   # a typo: core's closest-match message


# ------------------------------------------------------------------------------------ compare
AT = dict(n=1e3, d=10.0, rho=1.0)


def test_compare_finds_the_crossover_as_an_expression_and_numerically():
    res = explain.compare_bounds("kl:thm5_best", "kl:thm5_worst", AT, ["n"], points=61)
    (vc,) = res.variables
    assert len(vc.crossover_exprs) == 1
    assert sp.simplify(vc.crossover_exprs[0] - sp.sqrt(d / rho)) == 0
    root = math.sqrt(AT["d"] / AT["rho"])
    assert vc.crossover_values[0] == pytest.approx(root, rel=1e-12)
    assert vc.crossovers == pytest.approx((root,), rel=1e-9)
    assert crossover("kl:thm5_best", "kl:thm5_worst", "n", AT, 1, 100) == pytest.approx(root)
    # the worst case is the larger above the crossover (where the stated point lies), the best
    # case below it; the ratio at the point is the bounds' own ratio
    best, worst = bounds.get("kl:thm5_best"), bounds.get("kl:thm5_worst")
    assert [r.larger for r in vc.regions] == ["kl:thm5_best", "kl:thm5_worst"]
    assert vc.regions[0].hi == pytest.approx(root)
    assert vc.comparison.ratio == pytest.approx(best(**AT) / worst(**AT))
    assert vc.comparison.exponent_gap == 0
    assert "n = sqrt(d)/sqrt(rho)" in res.format()


def test_compare_rejects_bad_input():
    with pytest.raises(ValueError, match="span"):
        explain.compare_bounds("kl:thm5_best", "kl:thm5_worst", AT, ["n"], span=0.5)
    with pytest.raises(ValueError, match="range of n"):
        explain.compare_bounds("kl:thm5_best", "kl:thm5_worst", AT, ["n"], ranges={"n": (5, 1)})


# -------------------------------------------------------------------------------------- CLI
def test_cli_compare_and_derive(capsys):
    assert cli_bounds.main(["compare", "kl:thm5_best", "kl:thm5_worst", "--var", "n",
                            "--at", "n=1000,d=10", "--at", "rho=1"]) == 0
    out = capsys.readouterr().out
    assert "crossover(s) in" in out and "n = 3.16228" in out and "values from --at" in out
    assert "experiment" not in out.split("values from")[1]     # all given: none looked up
    assert cli_bounds.main(["derive", "kl:thm4_kappa2"]) == 0
    assert "HOLDS" in capsys.readouterr().out
    assert cli_bounds.main(["derive", "--list"]) == 0
    assert "kan:cor5.6" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["compare", "kl:thm5_bst", "kl:thm5_worst"], "closest"),
    (["compare", "kl:thm5_best", "kl:thm5_worst", "--at", "foo=1"], "foo"),
    (["compare", "kl:thm5_best", "kl:thm5_worst", "--at", "n=abc"], "NAME=VALUE"),
    (["compare", "kl:thm5_best", "kl:thm5_worst", "--var", "kappa", "--at", "n=1,d=1,rho=1"],
     "--var"),
    (["derive", "kl:thm9"], "derivable"),
    (["derive"], "corollary id"),
])
def test_cli_bad_arguments_are_one_line_errors(argv, words, capsys):
    assert cli_bounds.main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_cli_takes_missing_values_from_an_experiment_that_checks_the_bound(monkeypatch):
    from empirical.core import experiment as registry

    first, second = bounds.get("kl:thm5_best"), bounds.get("kl:thm5_worst")
    at, sources = cli_bounds.values_for(first, second, {"rho": 0.5})
    assert at["rho"] == 0.5 and sources[0] == "--at: rho"
    exp_id = sources[1].split()[1]
    exp = registry.get(exp_id)
    assert any(c.bound in (first.id, second.id) for c in exp.checks)
    grid = exp.grid(False)
    mid = math.exp(sum(map(math.log, grid)) / len(grid))
    want = exp.bound_values(exp.point(mid))
    assert all(at[k] == pytest.approx(want[k]) for k in ("n", "d") if k in want)
    # nothing to take a value from: a one-line error naming the symbols
    monkeypatch.setattr(cli_bounds, "_experiment_values", lambda ids: [])
    with pytest.raises(ValueError, match=r"no value for \['gamma', 'kappa'\]"):
        cli_bounds.values_for(bounds.get("kl:cor1"), bounds.get("kl:cor1"), {"L0": 1})
