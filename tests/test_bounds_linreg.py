"""Bounds of the linear-regression paper (bounds/rates/linreg.py): exponents against
the paper's statements, the two headline claims with the core's compare/follows_from, the
corollaries from their theorems, the noise multipliers against the accountant, conditions and
bad input."""
import math

import pytest
import sympy as sp

import bounds
from algorithms import accounting
from bounds.rates import linreg as lr
from bounds.compare import compare, crossover, follows_from

AT = dict(n=1e5, d=16, epsilon=1.0, delta=1e-6, sigma=1.0, condition_number=1.0, w_norm=1.0,
          K2=1.0, a=0.5)


def _exp(bid, var, **fixed):
    return bounds.get(bid).exponent(var, **fixed)


def test_every_id_is_registered_and_described():
    ids = bounds.ids("linreg")
    for want in ("thm11", "thm32", "cor33", "lem35", "lem311", "thm37", "cor38", "cai_lower",
                 "cai_upper", "prior_efficient", "thm31_alpha", "thm36_alpha", "fixed_clip",
                 "lipschitz_clip_privacy"):
        assert f"linreg:{want}" in ids
    for i in ("linreg:thm37", "linreg:thm32", "linreg:cor33"):   # (lem311's symbolic exponents
        assert bounds.get(i).describe()                         # in all 10 symbols are slow)


@pytest.mark.parametrize("bid, var, want", [
    # Theorem 3.7's privacy term: n⁻², d², ε⁻², σ², κ²; its non-private term n⁻¹, d¹, ε⁰.
    ("linreg:thm37_privacy", "n", -2), ("linreg:thm37_privacy", "d", 2),
    ("linreg:thm37_privacy", "epsilon", -2), ("linreg:thm37_privacy", "sigma", 2),
    ("linreg:thm37_privacy", "condition_number", 2), ("linreg:thm37_privacy", "w_norm", 0),
    ("linreg:thm37_nonprivate", "n", -1), ("linreg:thm37_nonprivate", "d", 1),
    ("linreg:thm37_nonprivate", "epsilon", 0),
    # DP-SSGD's privacy term carries (‖w*‖² + σ²): exponent 2 in ‖w*‖.
    ("linreg:thm32_privacy", "w_norm", 2), ("linreg:thm32_privacy", "n", -2),
    ("linreg:prior_efficient", "d", 3), ("linreg:lipschitz_clip_privacy", "d", 3),
    ("linreg:naive_privacy", "n", -1), ("linreg:cai_lower", "n", -1),
    ("linreg:thm31_alpha", "n", sp.Rational(-1, 2)), ("linreg:thm36_alpha", "epsilon", -1),
])
def test_exponents_match_the_paper(bid, var, want):
    assert _exp(bid, var) == want


def test_headline_a_factor_d_over_prior_methods():
    """Theorem 3.2 Remark ii / Thm 3.7 Remark v: the privacy term is d² against prior d³."""
    c = compare(bounds.get("linreg:prior_efficient"), bounds.get("linreg:thm37_privacy"), "d", AT)
    assert c.exponent_gap == 1 and c.eventually_larger == "linreg:prior_efficient"
    # at σ = ‖w*‖ they cross at a finite d (constants 1): beyond it the paper's bound is smaller
    x = crossover(bounds.get("linreg:prior_efficient"), bounds.get("linreg:thm37_privacy"), "d",
                  AT, 1.0, 1e6)
    assert x is not None and 1 < x < 1e6


def test_headline_privacy_term_vanishes_with_sigma_only_under_adaptive_clipping():
    """Adaptive (Thm 3.7): privacy term → 0 as σ → 0.  Fixed (Thm 3.2, and the fixed-clip
    baseline): a positive floor at σ = 0."""
    s = lr.sigma
    assert sp.limit(bounds.get("linreg:thm37_privacy").expr, s, 0) == 0
    for bid in ("linreg:thm32_privacy", "linreg:fixed_clip_privacy"):
        lim = sp.limit(bounds.get(bid).expr, s, 0)
        assert lim != 0 and float(lim.subs({bounds.core.sym(k): v for k, v in dict(AT, T=12, alpha=2).items()})) > 0, bid
    # Lemma 3.11's α-terms carry σ² + Δ² (Δ = (‖w*‖+σ)/n¹⁰⁰) plus a cross term α²·‖w*‖²e^{−ημT/4}
    # that vanishes only with the theorem's T = c₁κ log n, c₁ ≈ 400 (LR-E6): at c₁ = 1 (T = 12)
    # it leaves 4% of the σ = 1 value at σ = 10⁻⁸; at c₁ = 400 the factor is σ².
    lem = bounds.get("linreg:lem311_privacy")
    v = dict(AT, T=12, alpha=2.0)
    assert lem(**dict(v, sigma=1e-8)) / lem(**v) == pytest.approx(0.0436, rel=1e-2)
    v = dict(AT, T=400 * math.log(1e5), alpha=2.0)
    assert lem(**dict(v, sigma=1e-8)) / lem(**v) == pytest.approx(1e-16, rel=1e-3)
    fix = bounds.get("linreg:fixed_clip_privacy")
    assert fix(**dict(v, sigma=1e-8)) / fix(**v) == pytest.approx(0.25, rel=1e-3)   # (w+σ)²
    # and as σ → 0 the ratio fixed/adaptive grows like σ⁻²: exponent in u = 1/σ
    u = sp.Symbol("u", positive=True)
    ratio = (bounds.get("linreg:thm32_privacy").expr / bounds.get("linreg:thm37_privacy").expr)
    assert sp.limit(sp.log(ratio.subs(s, 1 / u)) / sp.log(u), u, sp.oo) == 2


def test_corollaries_follow_from_their_theorems():
    k = {"condition_number": 1, "K2": 1, "a": sp.Rational(1, 2)}
    d38 = follows_from(bounds.get("linreg:cor38"), bounds.get("linreg:thm37"), k,
                       ["n", "d", "epsilon", "sigma"], delta=1e-6, w_norm=1)
    assert d38, d38.exponents
    d33 = follows_from(bounds.get("linreg:cor33"), bounds.get("linreg:thm32"), k,
                       ["n", "d", "epsilon", "sigma", "w_norm"], delta=1e-6)
    assert d33, d33.exponents
    d11 = follows_from(bounds.get("linreg:thm11"), bounds.get("linreg:cor38"), {},
                       ["n", "d", "epsilon", "sigma"], delta=1e-6, w_norm=1)
    assert d11, d11.exponents


def test_lemma311_at_theorem37s_parameters_gives_its_privacy_exponents():
    """Theorem 3.7 from Lemma 3.11: with T = κ log n and α = √(8 log(1/δ))/ε, the lemma's
    α-terms scale as n⁻², ε⁻², d² (privacy) and its α-free part as n⁻¹ (the bias term is
    n^{−ημ/4·κ log n}·… — negligible)."""
    sub = {lr.T: lr.T_THM37, lr.alpha: lr.ALPHA_THM36}
    priv = bounds.core.Bound("linreg:_lem311_at_thm37", bounds.get("linreg:lem311_privacy").expr.subs(sub),
                             "", "")
    fixed = dict(d=16, epsilon=1, delta=1e-6, sigma=1, condition_number=1, K2=1, a=0.5, w_norm=1)
    assert priv.exponent("n", **{k: v for k, v in fixed.items()}) == -2
    # The lemma's leading term is (8/(Tb))·12α²K₂²R_x²log^{4a}n·σ²Tr(H⁻¹)/b: at Thm 3.7's b it is
    # 96·(121/100)·κ log n·α²(d+2)·log n·σ²·d/n² (a = ½) — the log^{4a+1} n of our reading LR-E5.
    lead = bounds.get("linreg:adaptive_privacy_alpha").expr.subs(sub)
    want = (96 * sp.Rational(121, 100) * lr.condition_number * sp.log(lr.n) * lr.ALPHA_THM36**2
            * lr.K2**2 * (lr.d + 2) * sp.log(lr.n)**(4 * lr.a) * lr.sigma**2 * lr.condition_number
            * lr.d / lr.n**2)
    assert sp.simplify(lead - want) == 0


def test_noise_multipliers_against_the_accountant():
    """Theorem 3.6: 1/α²-zCDP with α = √(8 log(1/δ))/ε (ε ≤ log(1/δ)) or 2√(log(1/δ)+ε)/ε is
    (ε, δ)-DP — checked with Bun–Steinke's conversion and with dp-accounting."""
    for eps in (0.25, 1.0, 4.0, 13.0):
        for bid in ("linreg:thm36_alpha", "linreg:thm36_alpha_general"):
            a = bounds.get(bid)(epsilon=eps, delta=1e-6)
            rho = bounds.get("linreg:thm36_rho")(alpha=a)
            assert accounting.zcdp_to_epsilon_closed_form(rho, 1e-6) <= eps * (1 + 1e-12)
            assert accounting.zcdp_to_epsilon(rho, 1e-6) <= eps * (1 + 1e-12)
    # Corollary 3.3's α = log(n/δ)/(ε√n)
    assert bounds.get("linreg:thm31_alpha")(n=1e4, epsilon=4, delta=1e-6) == pytest.approx(
        math.log(1e4 / 1e-6) / (4 * 100))


def test_conditions():
    thm32 = bounds.get("linreg:thm32")
    # Theorem 3.1/3.2 need ε ≲ √(log(n/δ)/n): ε = 4 at n = 10⁴ is outside (LR-E7)
    assert not thm32.applies(**dict(AT, n=1e4, epsilon=4.0))
    assert bounds.get("linreg:thm37").applies(**AT)
    assert not bounds.get("linreg:thm37").applies(**dict(AT, n=50))
    lem = bounds.get("linreg:lem311")
    vals = dict(AT, T=12, alpha=2.0)
    assert lem.applies(**vals) and not lem.applies(**dict(vals, n=3000))


def test_bad_input():
    b = bounds.get("linreg:thm37")
    with pytest.raises(ValueError, match="n must be"):
        b(**dict(AT, n=-1))
    with pytest.raises(ValueError, match="needs values"):
        b(n=1e5)
