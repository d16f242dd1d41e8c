"""User-level SCO paper, ``bounds/rates/userlevel.py``: every rate is registered with its
provenance, and the relations the paper asserts between its rates hold symbolically (exponents,
identities) and numerically (local slopes).  Exponent literals appear only where the test checks
an identity the paper states (e.g. the 9/8 headline, the n^{13/8}m^{7/4} speed-up)."""
import math

import pytest
import sympy as sp

import bounds
from bounds import Bound, sym
from bounds.rates import userlevel as ub

n, m, d, eps, delta = sym("n"), sym("m"), sym("d"), sym("epsilon"), sym("delta")
L, R, beta, lam, tau = sym("L"), sym("R"), sym("beta"), sym("lambda_reg"), sym("tau")

IDS = ("userlevel:thm2.1", "userlevel:thm2.1_proof", "userlevel:thm2.1-gradients",
       "userlevel:thm3.2", "userlevel:thm3.2-gradients", "userlevel:thm3.2-gradients_intro",
       "userlevel:alg3_saturated-gradients", "userlevel:thm4.1", "userlevel:thm4.1-gradients",
       "userlevel:thm4.1-gradients_derived", "userlevel:rem3.6", "userlevel:eq18",
       "userlevel:eq18_printed", "userlevel:lem2.3", "userlevel:lem3.5", "userlevel:lemD.1",
       "userlevel:lemD.1_smoothness", "userlevel:alg2_sigma", "userlevel:alg1_sigma",
       "userlevel:gauss_sigma", "userlevel:trivial", "userlevel:bs23_linear",
       "userlevel:bs23-gradients", "userlevel:al24-gradients", "userlevel:al24_nonsmooth-gradients",
       "userlevel:lower", "userlevel:thm3.2_privacy", "userlevel:rem3.6_privacy",
       "userlevel:trivial_privacy", "userlevel:trivial_sc_privacy", "userlevel:lem2.3_naive",
       "userlevel:lem3.5_itemlevel")

PT = dict(n=1e4, m=64.0, d=20.0, epsilon=1.0, delta=1e-9, L=2.0, R=4.0, beta=1.0, mu=0.5)


def _tmp(expr):
    return Bound(id="userlevel:tmp", expr=expr, quantity="derived", source="test")


@pytest.mark.parametrize("bid", IDS)
def test_every_id_registered_with_provenance(bid):
    b = bounds.get(bid)
    assert b.paper == "userlevel" and b.source and b.quantity
    assert b.kind in ("upper", "lower", "identity", "conversion")
    assert bid in bounds.ids("userlevel")


def test_gradient_bounds_use_the_suffix_convention():
    grads = [i for i in bounds.ids("userlevel") if "gradients" in i]
    assert all("-gradients" in i for i in grads)
    assert "userlevel:thm3.2-gradients" in grads and "userlevel:thm2.1-gradients" in grads


def test_headline_count_at_n_eq_d():
    """Theorem 3.2's count at n = d, ε = 1, βR = L is (mn)^{9/8} + 2n^{1/4}m^{5/4} + mn (the paper
    prints one n^{1/4}m^{5/4}: UL-E2)."""
    e = bounds.get("userlevel:thm3.2-gradients").expr.subs({d: n, eps: 1, beta: L / R})
    want = (m * n)**sp.Rational(9, 8) + 2 * n**sp.Rational(1, 4) * m**sp.Rational(5, 4) + m * n
    assert sp.simplify(e - want) == 0


def test_speedups_over_al24():
    ns = bounds.get("userlevel:al24_nonsmooth-gradients").expr.subs(d, n)
    ours = bounds.get("userlevel:thm4.1-gradients").expr.subs(eps, 1)
    ratio = _tmp(ns / ours)
    assert ratio.exponent("n") == sp.Rational(13, 8) and ratio.exponent("m") == sp.Rational(7, 4)
    sm = _tmp(bounds.get("userlevel:al24-gradients").expr
              / (beta**sp.Rational(1, 4) * (n * m)**sp.Rational(9, 8)))
    assert sm.exponent("beta") == sp.Rational(3, 4) and sm.exponent("n") == sp.Rational(3, 8)


def test_intro_max_switches_at_n7_eq_m():
    a = (m * n)**sp.Rational(9, 8)
    b = n**sp.Rational(1, 4) * m**sp.Rational(5, 4)
    assert sp.simplify(sp.log(a / b) - sp.Rational(1, 8) * sp.log(n**7 / m)) == 0 or \
        sp.simplify(sp.expand_log(sp.log(a / b), force=True)
                    - sp.expand_log(sp.Rational(1, 8) * sp.log(n**7 / m), force=True)) == 0


def test_theorem21_readings_agree_in_n_m_d_and_split_in_epsilon():
    st, pr = bounds.get("userlevel:thm2.1"), bounds.get("userlevel:thm2.1_proof")
    for v in ("n", "m", "d"):
        assert st.exponent(v) == pr.exponent(v)
    at = dict(n=1e6, m=100.0, d=1e3, epsilon=0.1, delta=1e-6, L=1.0, R=1.0)
    assert st.local_slope("epsilon", at) == pytest.approx(-1.0, abs=0.01)
    assert pr.local_slope("epsilon", at) == pytest.approx(-0.5, abs=1e-9)


def test_optimal_rate_regimes_and_lower_bound():
    b, lo = bounds.get("userlevel:thm3.2"), bounds.get("userlevel:lower")
    priv = dict(n=100.0, m=10.0, d=1e4, epsilon=0.1, delta=1e-6, L=1.0, R=1.0)
    assert b.local_slope("n", priv) == pytest.approx(-1.0, abs=0.01)
    assert b.exponent("n") == -sp.Rational(1, 2) and b.exponent("m") == -sp.Rational(1, 2)
    assert all(b(**{k: v for k, v in PT.items() if k in b.variables})
               >= lo(**{k: v for k, v in PT.items() if k in lo.variables}) for _ in [0])
    # the user-as-item baseline is flat in m where its privacy term rules
    t = bounds.get("userlevel:trivial")
    assert t.exponent("m") == 0                                    # its m-free term wins as m → ∞
    assert t.local_slope("m", priv) == pytest.approx(0.0, abs=0.01)
    assert b.local_slope("m", priv) == pytest.approx(-0.5, abs=1e-9)
    assert bounds.get("userlevel:trivial_privacy").exponent("m") == 0


def test_lambda_balances_eq18():
    """Theorem C.3's λ minimises (L²/λ)(1/(nm) + d/(ε²n²m)) + λR² up to a factor ≤ √2 (with the
    corrected (18) and τ = L/√m, log(1/δ) set to 1)."""
    e = bounds.get("userlevel:eq18").expr.subs({tau: L / sp.sqrt(m), delta: sp.exp(-1)})
    e = e - L * R * sp.sqrt(d) / (eps * n * sp.sqrt(m))
    f = sp.lambdify((lam, n, m, d, eps, L, R), e)
    for vals in [(1e4, 64, 20, 1.0, 2, 4), (100, 10, 1e4, 0.1, 1, 1)]:
        lam_c = float(ub.ALG3_LAMBDA.subs(dict(zip((n, m, d, eps, L, R), vals))))
        best = min(f(lam_c * 2**(k / 20), *vals) for k in range(-200, 201))
        assert f(lam_c, *vals) <= math.sqrt(2) * best * (1 + 1e-9)


def test_eq18_printed_is_dimensionally_off():
    """Scaling L → cL, τ → cτ (τ ∝ L) scales the corrected (18) by c and the printed one by c³
    in its τ² term (UL-E5)."""
    c = sym("c")
    for bid, power in (("userlevel:eq18", 1), ("userlevel:eq18_printed", 3)):
        e = sp.expand(bounds.get(bid).expr)
        term = [a for a in sp.Add.make_args(e) if a.has(tau)][0]
        # λ has the units of L/R, so it scales with L too
        scaled = term.subs({L: c * L, tau: c * tau, lam: c * lam}, simultaneous=True) / term
        assert sp.simplify(scaled) == c**power


def test_smoothing_constants():
    assert sp.simplify(ub.NS_BETA - L / R * eps * n * sp.sqrt(m)) == 0
    lr = bounds.get("userlevel:lemD.1").expr.subs(sym("r"), ub.NS_R)
    assert sp.simplify(lr - L * R * sp.sqrt(d) / (eps * n * sp.sqrt(m))) == 0


def test_nonsmooth_count_readings():
    pr, de = bounds.get("userlevel:thm4.1-gradients"), bounds.get("userlevel:thm4.1-gradients_derived")
    assert pr.exponent("n") == de.exponent("n") == sp.Rational(11, 8)
    assert pr.exponent("epsilon") == sp.Rational(1, 4) and de.exponent("epsilon") == sp.Rational(5, 4)
    assert sp.simplify(pr.expr.subs(eps, 1) - (m * n + n**sp.Rational(11, 8) * m**sp.Rational(5, 4))) == 0


def test_alg3_count_exponents():
    b = bounds.get("userlevel:thm3.2-gradients")
    assert b.exponent("n") == sp.Rational(9, 8) and b.exponent("m") == sp.Rational(5, 4)
    assert bounds.get("userlevel:alg3_saturated-gradients").exponent("n") == sp.Rational(5, 4)
    assert bounds.get("userlevel:thm2.1-gradients").exponent("n") == 1


def test_conditions():
    b = bounds.get("userlevel:thm3.2")
    vals = {k: v for k, v in PT.items() if k in b.variables}
    assert b.applies(**vals)
    assert not b.applies(**dict(vals, delta=1e-3))           # δ < 1/(mn) fails
    assert not b.applies(**dict(vals, epsilon=20.0))         # ε ≤ 10 fails


def test_n_star_crossover():
    b = bounds.get("userlevel:thm3.2")
    at = dict(m=64.0, d=20.0, epsilon=0.5, delta=1e-6, L=1.0, R=1.0)
    ns = ub.n_star(20.0, 0.5, 1e-6)
    # the two terms are equal at n*: local n-slope is the average −3/4
    assert b.local_slope("n", dict(at, n=ns)) == pytest.approx(-0.75, abs=1e-6)


@pytest.mark.parametrize("bad", [dict(n=-1.0), dict(epsilon=0.0), dict(d=float("nan"))])
def test_bad_values_raise(bad):
    b = bounds.get("userlevel:thm3.2")
    vals = {k: v for k, v in PT.items() if k in b.variables}
    with pytest.raises(ValueError, match=list(bad)[0]):
        b(**dict(vals, **bad))
    with pytest.raises(ValueError):
        ub.n_star(20.0, 1.0, 2.0)


def test_lemma_competitors_have_the_exponents_the_lemmas_improve_on():
    assert bounds.get("userlevel:lem2.3").exponent("T") == sp.Rational(1, 2)
    assert bounds.get("userlevel:lem2.3_naive").exponent("T") == 1
    assert bounds.get("userlevel:lem3.5").exponent("m") == -1
    assert bounds.get("userlevel:lem3.5_itemlevel").exponent("m") == 0
