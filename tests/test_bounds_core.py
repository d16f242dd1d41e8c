"""Core of bounds/: exponents, local slopes, numeric values, registry, comparisons."""
import math

import pytest
import sympy as sp

import bounds
from bounds import asymptotic_exponent, sym

n, d, rho, kappa, beta = sym("n"), sym("d"), sym("rho"), sym("kappa"), sym("beta")


@pytest.mark.parametrize("expr, expected", [
    (n**-2, -2),
    (d / (n**2 * rho), -2),
    (sp.log(n) / n, -1),
    (sp.log(sp.log(n)) * n**3, 3),
    (1 / n + 1 / n**2, -1),                       # sum: slowest-decaying term
    (sp.sqrt(d) / n + 1 / sp.sqrt(n), sp.Rational(-1, 2)),
    (sp.Min(1, sp.sqrt(d) / n), -1),
    (sp.Max(1, sp.sqrt(d) / n), 0),
    (sp.Min(n, n**2), 1),
    (sp.log(1 + 1 / n) * n**2, 1),                # log(1 + u) ~ u
    ((n * sp.log(n))**sp.Rational(3, 2), sp.Rational(3, 2)),
    (sp.exp(-1 / n) / n, -1),                     # falls back to sympy's limit
    (d**2, 0),                                    # free of n
])
def test_exponent_of_known_expressions(expr, expected):
    assert sp.simplify(asymptotic_exponent(expr, n) - expected) == 0


def test_exponent_symbolic_kappa():
    e = asymptotic_exponent((sp.sqrt(d) / (n * sp.sqrt(rho)))**(2 * kappa / (4 - kappa)), n)
    assert sp.simplify(e - (-2 * kappa / (4 - kappa))) == 0
    both = (sp.sqrt(d) / n)**(2 * kappa / (4 - kappa)) + (1 / n)**(kappa / 2)
    e2 = asymptotic_exponent(both, n)
    assert e2.subs(kappa, sp.Rational(4, 3)) == sp.Rational(-2, 3)   # the d-free term wins in n


@pytest.mark.parametrize("expr", [
    d * sp.log(n**2 / d) / (n**2 * rho),
    (sp.sqrt(d) / n)**sp.Rational(4, 3) + (1 / n)**sp.Rational(2, 3),
    sp.Min(1, sp.sqrt(d) / n) * sp.log(n),
])
def test_exponent_agrees_with_local_slope_far_out(expr):
    """The exact exponent is the limit of the local slope: check numerically at n = 1e300."""
    b = bounds.Bound(id="kl:test_tmp", expr=expr, quantity="test", source="test")
    at = {"n": 1e300, "d": 7.0, "rho": 1.0}
    exact = float(b.exponent("n", d=7, rho=1))
    assert b.local_slope("n", at={k: at[k] for k in b.variables}) == pytest.approx(exact, abs=0.01)


def test_local_slope_matches_analytic_derivative():
    b = bounds.get("kl:thm9")
    at = dict(n=1000.0, d=10.0, rho=1.0, beta=0.1, L0=1.0, L1t=1.0)
    L = math.log(1000.0**2 * math.log(20.0)**2 / (10 * 0.1))
    assert b.local_slope("n", at) == pytest.approx(-2 + 2 / L, rel=1e-10)
    assert b.local_slope("rho", at) == pytest.approx(-1.0, rel=1e-12)
    assert b.local_slope("d", at) == pytest.approx(1 - 1 / L, rel=1e-10)


def test_numeric_value_and_bad_input():
    b = bounds.get("kl:thm9")
    v = b(n=1000, d=10, rho=1, beta=0.1, L0=2, L1t=1)
    assert v == pytest.approx(4 * 10 * math.log(1e6 * math.log(20)**2 / 1.0) / 1e6)
    with pytest.raises(ValueError, match="n must be"):
        b(n=0, d=10, rho=1, beta=0.1, L0=2, L1t=1)
    with pytest.raises(ValueError, match="rho must be"):
        b(n=10, d=10, rho=float("nan"), beta=0.1, L0=2, L1t=1)
    with pytest.raises(ValueError, match="needs values for"):
        b(n=10)
    # Outside the theorem's range the printed log goes negative: the value is returned as is
    # (the harness drops such points as vacuous), but no log-slope exists there.
    far = dict(n=1, d=1e9, rho=1e-9, beta=0.1, L0=1, L1t=1)
    with pytest.warns(bounds.OutsideConditionsWarning):
        assert b(**far) < 0 and not b.applies(**far)
    with pytest.raises(ValueError, match="not finite"), pytest.warns(bounds.OutsideConditionsWarning):
        b.local_slope("n", far)


def test_registry_and_lookup():
    all_ids = bounds.ids()
    assert all_ids == sorted(all_ids) and "kl:thm9" in all_ids
    assert set(bounds.ids("kl")) <= set(all_ids)
    with pytest.raises(KeyError, match="kl:thm9"):
        bounds.get("kl:thm99")
    with pytest.raises(ValueError, match="paper must be one of"):
        bounds.ids("nope")
    b = bounds.get("kl:thm9")
    assert b.symbol("n") is sym("n")
    with pytest.raises(KeyError, match="no symbol"):
        b.symbol("kappa")
    assert "L_{0}" in b.latex() and b.source and b.assumptions and "zCDP" in b.privacy


def test_bound_validation():
    with pytest.raises(ValueError, match="paper"):
        bounds.Bound(id="nopaper:x", expr=n, quantity="q", source="s")
    with pytest.raises(ValueError, match="kind"):
        bounds.Bound(id="kl:x", expr=n, quantity="q", source="s", kind="sideways")
    b = bounds.Bound(id="kl:reg_tmp", expr=n, quantity="q", source="s")
    bounds.register(b)
    with pytest.raises(ValueError, match="already registered"):
        bounds.register(bounds.Bound(id="kl:reg_tmp", expr=n, quantity="q", source="s"))


def test_compare_and_crossover():
    fast = bounds.Bound(id="kl:cmp_fast", expr=d / n**2, quantity="q", source="s")
    slow = bounds.Bound(id="kl:cmp_slow", expr=1 / n, quantity="q", source="s")
    c = bounds.compare(fast, slow, "n", {"n": 10.0, "d": 100.0})
    assert c.larger == "kl:cmp_fast" and c.eventually_larger == "kl:cmp_slow"
    assert c.exponent_gap == -1
    x = bounds.crossover(fast, slow, "n", {"d": 100.0}, 1.0, 1e6)
    assert x == pytest.approx(100.0, rel=1e-9)
    assert bounds.crossover(fast, slow, "n", {"d": 100.0}, 200.0, 1e6) is None


def test_follows_from_substitution():
    T = sym("T")
    thm = bounds.Bound(id="kl:ff_thm", expr=1 / T + T * d / n**2, quantity="q", source="s")
    cor = bounds.Bound(id="kl:ff_cor", expr=sp.sqrt(d) / n, quantity="q", source="s")
    ok = bounds.follows_from(cor, thm, {"T": n / sp.sqrt(d)}, ["n", "d"])
    assert ok.holds and ok.exponents["n"] == (-1, -1)
    bad = bounds.follows_from(cor, thm, {"T": n}, ["n"])     # wrong tuning: 1/T + d/n ~ 1/n only
    assert bad.holds and bad.exponents["n"][0] == -1
    worse = bounds.follows_from(cor, thm, {"T": sp.sqrt(n)}, ["n"])
    assert not worse.holds


def test_piecewise_and_shape_parameters():
    """A κ-Piecewise term (0 in one branch) keeps its condition; κ in an exponent is a shape
    parameter with no log-log exponent; division by zero is a ValueError, not a crash."""
    expr = n ** (-kappa / 2) + sp.Piecewise((n ** (kappa / (kappa - 2)), kappa < 2), (0, True))
    b = bounds.Bound(id="kl:pw_tmp", expr=expr, quantity="q", source="s")
    assert b.exponent("n", kappa=2) == -1
    assert b.exponent("n", kappa=sp.Rational(3, 2)) == sp.Rational(-3, 4)
    assert b.exponent("n").subs(kappa, sp.Rational(3, 2)) == sp.Rational(-3, 4)
    assert b.shape_parameters == ("kappa",) and b.scale_variables == ("n",)
    with pytest.raises(ValueError, match="kappa appears in an exponent"):
        b.exponent("kappa")
    z = bounds.Bound(id="kl:zero_tmp", expr=n ** (1 / (2 - kappa)), quantity="q", source="s")
    with pytest.raises(ValueError, match="undefined"):
        z(n=3.0, kappa=2.0)


def test_unknown_symbols_are_refused():
    b = bounds.get("kl:thm9")
    with pytest.raises(KeyError, match="unknown symbol 'not_a_symbol'"):
        b.exponent("not_a_symbol")
    with pytest.raises(KeyError, match="did you mean 'rho'"):
        b.exponent("rhoo")
    assert b.exponent("kappa") == 0          # a known parameter this bound does not depend on
    with pytest.raises(KeyError, match="no symbol"):
        b.local_slope("not_a_symbol", dict(n=10, d=1, rho=1, beta=0.1, L0=1, L1t=1))


def test_evaluation_outside_conditions_warns_and_can_be_made_an_error():
    import warnings

    b = bounds.get("kl:thm9")
    far = dict(n=1, d=1e9, rho=1e-9, beta=0.1, L0=1, L1t=1)
    ok = dict(n=1e4, d=10, rho=1, beta=0.1, L0=1, L1t=1)
    with pytest.warns(bounds.OutsideConditionsWarning, match="kl:thm9 evaluated outside"):
        b(**far)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bounds.OutsideConditionsWarning)
        b(**ok)
        b(check_conditions=False, **far)
        with pytest.raises(bounds.OutsideConditionsWarning):
            b(**far)


def test_compare_takes_ids_names_missing_values_and_minds_privacy_notions():
    import _toy  # noqa: F401  (registers kl:toy_power_law; the test must not rely on order)

    c = bounds.compare("kl:thm9", "kl:thm9", "n", dict(n=1e3, d=10, rho=1, beta=0.1, L0=1, L1t=1))
    assert c.ratio == pytest.approx(1.0) and c.exponent_gap == 0 and not c.privacy_note
    with pytest.raises(ValueError, match=r"kl:thm9 needs values for \['L0', 'L1t', 'beta'\]"):
        bounds.compare("kl:toy_power_law", "kl:thm9", "n", dict(n=10, d=1, rho=1))
    with pytest.raises(KeyError, match="no bound 'kl:thm99'"):
        bounds.compare("kl:thm99", "kl:thm9", "n", {})
    zcdp = bounds.Bound(id="kl:cmp_z", expr=d / (n**2 * rho), quantity="q", source="s",
                        privacy="ρ-zCDP, replace-one")
    approx = bounds.Bound(id="kl:cmp_a", expr=d / n**2, quantity="q", source="s",
                          privacy="(ε, δ)-DP, replace-one")
    assert (zcdp.privacy_notion, approx.privacy_notion) == ("zCDP", "(ε, δ)-DP")
    with pytest.raises(ValueError, match="different privacy notions"):
        bounds.compare(zcdp, approx, "n", dict(n=10.0, d=1.0, rho=1.0))
    mixed = bounds.compare(zcdp, approx, "n", dict(n=10.0, d=1.0, rho=1.0),
                           allow_mixed_privacy=True)
    assert "zCDP" in mixed.privacy_note and mixed.exponent_gap == 0
    with pytest.raises(ValueError, match="different privacy notions"):
        bounds.crossover(zcdp, approx, "n", dict(d=1.0, rho=1.0), 1.0, 10.0)
    assert bounds.Bound(id="kl:cmp_n", expr=n, quantity="q", source="s",
                        notion="ε-DP").privacy_notion == "ε-DP"


def test_exponent_of_log_of_min_in_a_variable_that_saturates():
    """log(Min(√n, nε)) is a log factor in ε (sympy's limit used to raise on it)."""
    from bounds.core import asymptotic_exponent
    n, e = bounds.sym("n"), bounds.sym("epsilon")
    assert asymptotic_exponent(sp.log(sp.Min(sp.sqrt(n), n * e)) / e, e) == -1


# -- exponents at given values: memo and shipped file ------------------------------------------

def _fresh_exponent(b, how, var, fixed):
    """The exponent computed from the expression, bypassing the memo and the shipped file."""
    x = b.symbol(var)
    e = b.expr.subs(b._subs(fixed, allow_partial=True, exclude=var))
    if how == "0":
        return sp.simplify(-asymptotic_exponent(e.subs(x, 1 / x), x))
    return sp.simplify(asymptotic_exponent(e, x))


def test_shipped_exponents_are_current_and_agree_with_a_fresh_computation():
    """The shipped file is of this code (else every verify recomputes it: refresh with
    `python -m empirical.report.cache RESULTS`), and a sample of its entries, recomputed from
    their bound's expression at their values, gives the exponent it ships."""
    import json
    import random

    from bounds import exponents

    rec = json.loads(exponents.SHIPPED_EXPONENTS.read_text())
    assert rec["code"] == exponents._code(), "stale bounds/exponent_cache.json"
    entries = sorted(rec["entries"].items())
    assert len(entries) > 100
    for key, e in random.Random(7).sample(entries, 25):
        b = bounds.get(e["bound"])
        assert exponents.exponent_key(sp.srepr(b.expr), e["how"], e["var"], e["fixed"]) == key
        fresh = _fresh_exponent(b, e["how"], e["var"], e["fixed"])
        assert sp.simplify(sp.sympify(e["exponent"]) - fresh) == 0, e


def test_a_shipped_exponent_under_another_expression_is_not_used(monkeypatch):
    from bounds import exponents

    b = bounds.get("kl:thm9")
    var = next(v for v in b.scale_variables if bounds.domain(v).unbounded_above)
    b._cache.clear()
    right = b.exponent(var)
    # the same key shape for another expression: planted with a wrong answer, never read
    wrong_key = exponents.exponent_key(sp.srepr(b.expr + 1), "oo", var, {})
    monkeypatch.setattr(exponents, "_SHIPPED", {wrong_key: {"exponent": "Integer(99)"}})
    b._cache.clear()
    assert b.exponent(var) == right
    # and under the bound's own key a planted answer is what comes back (the file is trusted
    # code): which is why the freshness test above checks it against the expression
    own = exponents.exponent_key(sp.srepr(b.expr), "oo", var, {})
    monkeypatch.setattr(exponents, "_SHIPPED", {own: {"exponent": "Integer(99)"}})
    b._cache.clear()
    assert b.exponent(var) == 99
    b._cache.clear()
