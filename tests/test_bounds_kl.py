"""KL paper, ``bounds/rates/kl/``: every rate is registered with its provenance, and the
relations the paper asserts between its rates hold symbolically (exponents) and numerically
(local slopes, crossovers, conversions).

Expected exponents are never typed in as slope literals except where the test checks a
mathematical identity stated by the paper (e.g. Theorem 4 at κ = 2 is −κ, Theorem 6 under the
growth ↔ KL dictionary is Corollary 1's (ε, δ) form).
"""
import math

import pytest
import sympy as sp

import bounds
from bounds import Bound, sym
from bounds.rates import kl as klb

n, d, rho, kappa, gamma = sym("n"), sym("d"), sym("rho"), sym("kappa"), sym("gamma")
L0, L1, F0, beta, epsilon, delta = (sym("L0"), sym("L1"), sym("F0"), sym("beta"),
                                    sym("epsilon"), sym("delta"))
tau, lambda_g, T = sym("tau"), sym("lambda_g"), sym("T")

#: The ids the contract between the KL modules requires (plus the extras this module adds).
CONTRACT_IDS = (
    "kl:thm1", "kl:cor1", "kl:thm2", "kl:lem3", "kl:thm4", "kl:thm4_simplified", "kl:thm4_main",
    "kl:thm4_floor", "kl:thm4_kappa1", "kl:thm4_kappa2", "kl:thm5", "kl:thm5_best",
    "kl:thm5_worst", "kl:thm6", "kl:thm7", "kl:thm8", "kl:thm9", "kl:prior_pl",
    "kl:prior_stationary", "kl:prior_stationary_noisy_gd", "kl:lb_stationary",
    "kl:zcdp_to_dp", "kl:dp_to_zcdp", "kl:lem14",
)
EXTRA_IDS = ("kl:thm1_simplified", "kl:thm2_simplified", "kl:cor1_dp", "kl:prior_nonconvex_global")

#: The radial p = 4 instance: κ = 4/3, γ = 1/4, L0 = 4, L1 = 12, F0 = 1/16.
P4 = dict(kappa=4 / 3, gamma=0.25, L0=4.0, L1=12.0, F0=1 / 16, beta=0.1, d=1.0, rho=1.0)

#: A point where every symbol of every bound has a legal value (used for bad-input checks).
GENERIC = dict(n=1e6, d=10.0, rho=1.0, kappa=1.5, gamma=0.5, L0=2.0, L1=3.0, L1t=0.5, F0=0.5,
               beta=0.1, epsilon=0.5, delta=1e-6, T=100.0, D=1.0, tau=3.0, lambda_g=2.0)

KL_MODULE_BOUNDS = {v.id: v for v in vars(klb).values() if isinstance(v, Bound)}


def _tmp(expr, label="tmp"):
    """An unregistered Bound for derived expressions (ratios, single terms)."""
    return Bound(id=f"kl:{label}", expr=expr, quantity="derived", source="test")


def _is_clean(e) -> bool:
    """A computed exponent: a sympy expression with no unevaluated limit or nan.  (−∞ may appear
    only as the exponent of a Piecewise branch that is identically 0, e.g. Theorem 4's third term
    at κ = 2.)"""
    e = sp.sympify(e)
    for pw in e.atoms(sp.Piecewise):
        e = e.subs(pw, sp.Piecewise(*[(0 if v == -sp.oo else v, c) for v, c in pw.args]))
    return not e.has(sp.Limit, sp.nan, sp.zoo, sp.oo, -sp.oo)


# -------------------------------------------------------------------------------- registry, text
@pytest.mark.parametrize("bid", CONTRACT_IDS + EXTRA_IDS)
def test_every_id_is_registered_with_provenance(bid):
    b = bounds.get(bid)
    assert b.id == bid and bid in KL_MODULE_BOUNDS
    assert b.source.startswith("KL paper") or "BS16" in b.source
    assert len(b.quantity) > 20 and b.assumptions and all(a.strip() for a in b.assumptions)
    assert b.privacy and any(w in b.privacy for w in ("zCDP", "DP"))
    assert b.kind in ("upper", "lower", "conversion")
    for v in ("n", "d", "rho"):
        e = b.exponent(v)
        assert _is_clean(e), f"{bid}: exponent in {v} is {e}"
    b.describe()  # renders, including all exponents


def test_module_docstring_lists_every_id_once():
    doc = klb.__doc__
    for bid in KL_MODULE_BOUNDS:
        assert doc.count(f"``{bid}``") == 1, bid
    listed = set(__import__("re").findall(r"``(kl:[a-z0-9_]+)``", doc))
    assert listed == set(KL_MODULE_BOUNDS)


def test_kinds_and_conditions():
    kinds = {bid: b.kind for bid, b in KL_MODULE_BOUNDS.items()}
    assert {k for k, v in kinds.items() if v == "conversion"} == {
        "kl:zcdp_to_dp", "kl:dp_to_zcdp", "kl:lem14"}
    assert {k for k, v in kinds.items() if v == "lower"} == {
        "kl:cor1", "kl:cor1_dp", "kl:thm6", "kl:thm7", "kl:thm8", "kl:lb_stationary",
        "kl:prior_nonconvex_global"}
    # κ ranges of the theorems
    assert not bounds.get("kl:thm1").applies(**dict(P4, n=1e6, kappa=2.5))
    assert bounds.get("kl:thm2").applies(**dict(GENERIC, kappa=3.0))
    assert not bounds.get("kl:thm2").applies(**dict(GENERIC, kappa=1.5))
    assert not bounds.get("kl:thm8").applies(n=10, epsilon=1.0, kappa=2)       # ε > ln 2
    assert bounds.get("kl:thm8").applies(n=10, epsilon=0.5, kappa=2)
    # Algorithm 1's input condition F0 ≤ (L0γ)^κ
    assert not bounds.get("kl:thm1").applies(**dict(P4, n=1e6, F0=2.0))


def test_thm4_condition_is_the_papers_relational():
    b = bounds.get("kl:thm4")
    assert klb.THM4_CONDITION in b.conditions
    lhs = L0**2 * sp.log(n * sp.sqrt(rho) / beta) / (L1 * n)
    assert sp.simplify(klb.THM4_CONDITION.lhs - lhs) == 0
    assert klb.THM4_CONDITION.rhs == sp.sqrt(rho)
    # p = 4 radial (L0 = 4, L1 = 12, ρ = 1, β = 0.1): holds from n ≈ 20 on
    def holds(nn):
        return b.applies(**dict(P4, n=nn))
    assert not holds(5) and holds(50) and holds(1e8)
    direct = lambda nn: 16 * math.log(nn / 0.1) / (12 * nn) <= 1.0
    for nn in (5, 10, 15, 20, 25, 30, 100):
        assert holds(nn) == direct(nn)


# ---------------------------------------------------------------- Theorem 1 against Corollary 1
@pytest.mark.parametrize("k", [sp.Rational(6, 5), sp.Rational(4, 3), sp.Rational(3, 2), 2])
def test_thm1_matches_cor1_exponents(k):
    t1, c1 = bounds.get("kl:thm1"), bounds.get("kl:cor1")
    for v in ("n", "d", "rho"):
        e1, ec = t1.exponent(v, kappa=k), c1.exponent(v, kappa=k)
        assert e1 == ec, (v, e1, ec)
        assert e1 != 0          # every variable genuinely enters


def test_thm1_matches_cor1_symbolically():
    der = bounds.follows_from(bounds.get("kl:cor1"), bounds.get("kl:thm1"), {}, ["n", "d", "rho"])
    assert der.holds, der.exponents
    assert all(et.has(kappa) for et, _ in der.exponents.values())


@pytest.mark.parametrize("k", [6 / 5, 4 / 3, 3 / 2, 2.0])
def test_thm1_over_cor1_is_polylog_in_n(k):
    """thm1/cor1 = (K log(1/β'))^{κ/2}: its local n-slope tends to 0 like (polylog degree)/ln n,
    the degree being at most κ (K and log(1/β') each grow like log n)."""
    t1, c1 = bounds.get("kl:thm1"), bounds.get("kl:cor1")
    ratio = _tmp(t1.expr / c1.expr, "ratio")
    at = dict(P4, kappa=k)
    slopes = {nn: ratio.local_slope("n", dict(at, n=nn)) for nn in (1e6, 1e12, 1e50, 1e300)}
    assert all(s > 0 for s in slopes.values())                  # logs do grow ...
    assert slopes[1e300] < slopes[1e12] < slopes[1e6]           # ... ever more slowly
    assert slopes[1e300] < 0.005
    for nn, s in slopes.items():
        assert s * math.log(nn) <= k + 0.25, (nn, s * math.log(nn))


def test_thm1_simplified_is_thm1_up_to_logs():
    der = bounds.follows_from(bounds.get("kl:thm1_simplified"), bounds.get("kl:thm1"), {},
                              ["n", "d", "rho"])
    assert der.holds, der.exponents
    r = _tmp(bounds.get("kl:thm1").expr / bounds.get("kl:thm1_simplified").expr)
    assert r.local_slope("n", dict(P4, n=1e300)) < 0.005


# --------------------------------------------------- Theorem 1 local slopes on the p = 4 instance
def _thm1_independent(nn: float, kap: float, g: float, l0: float, l1: float, f0: float,
                      b: float, dd: float, r: float) -> float:
    """Theorem 1 written out in plain floats, independently of the sympy encoding."""
    K = (1 + 64 * (1 / f0) ** ((2 - kap) / kap) * g**2 * l1) * (
        math.log(f0) + kap * math.log(nn * math.sqrt(r) / (g * l0 * math.sqrt(dd))))
    bp = (b / K) * (g * l0 * math.sqrt(K * dd) / (nn * math.sqrt(r) * f0 ** (1 / kap))) ** (2 - kap)
    return (g * l0 * math.sqrt(dd * K * math.log(1 / bp)) / (nn * math.sqrt(r))) ** kap


@pytest.mark.parametrize("nn, hand_slope", [(1e6, -1.245), (1e7, -1.258), (1e8, -1.267)])
def test_thm1_local_slopes_reproduce_hand_computed_values(nn, hand_slope):
    b = bounds.get("kl:thm1")
    s = b.local_slope("n", dict(P4, n=nn))
    # values computed independently by hand ...
    assert s == pytest.approx(hand_slope, abs=0.005)
    # ... and a plain-float central difference of the paper's formula
    args = (P4["kappa"], P4["gamma"], P4["L0"], P4["L1"], P4["F0"], P4["beta"], P4["d"], P4["rho"])
    h = 1e-4
    fd = (math.log(_thm1_independent(nn * math.exp(h), *args))
          - math.log(_thm1_independent(nn * math.exp(-h), *args))) / (2 * h)
    assert s == pytest.approx(fd, abs=1e-6)
    assert b(**dict(P4, n=nn)) == pytest.approx(_thm1_independent(nn, *args), rel=1e-10)
    assert s > float(b.exponent("n", kappa=sp.Rational(4, 3)))   # logs flatten the slope


# ------------------------------------------------------------------------------------- Theorem 2
def test_thm2_exponents_and_simplification():
    t2, t2s, lem3 = (bounds.get(i) for i in ("kl:thm2", "kl:thm2_simplified", "kl:lem3"))
    der = bounds.follows_from(t2s, t2, {}, ["n", "d", "rho"])
    assert der.holds, der.exponents
    for k in (2, 3, 4):
        assert t2.exponent("n", kappa=k) == bounds.get("kl:cor1").exponent("n", kappa=k)
        # for κ > 2 the outer loop beats the inner solver's own n⁻² rate (the 'reject' competitor)
        gap = t2.exponent("n", kappa=k) - lem3.exponent("n", kappa=k)
        assert (gap < 0) if k > 2 else (gap == 0)
    # L̃1 enters only through T: doubling L̃1 at large F0^{(κ−2)/κ}γ²L̃1 scales the bound by ≈ 2^{κ/2}
    at = dict(GENERIC, kappa=3.0, n=1e12, L1t=1e3)
    ratio = t2(**dict(at, L1t=2e3)) / t2(**at)
    assert ratio == pytest.approx(2 ** 1.5, rel=0.05)


def test_lem3_is_theorem9_shape_with_factor_T():
    lem3, t9 = bounds.get("kl:lem3"), bounds.get("kl:thm9")
    for v in ("n", "d", "rho"):
        assert lem3.exponent(v, kappa=3) == t9.exponent(v)
    # factor T: lem3/(L0²d/(L̃1n²ρ)) = T · log(n² log²(1/β')/(dβ'))
    at = dict(GENERIC, kappa=3.0)
    Tval = float(klb.T_ALG2.subs({sym(k): v for k, v in at.items()}))
    bp = at["beta"] / Tval
    expect = (at["L0"]**2 * at["d"] / (at["L1t"] * at["n"]**2 * at["rho"]) * Tval
              * math.log(at["n"]**2 * math.log(1 / bp)**2 / (at["d"] * bp)))
    assert lem3(**at) == pytest.approx(expect, rel=1e-10)


# ------------------------------------------------------------------------------------- Theorem 4
def test_thm4_main_exponent_is_2kappa_over_4_minus_kappa():
    main = bounds.get("kl:thm4_main")
    e = main.exponent("n")
    assert sp.simplify(e + 2 * kappa / (4 - kappa)) == 0
    assert sp.simplify(main.exponent("d") - kappa / (4 - kappa)) == 0
    assert sp.simplify(main.exponent("rho") + kappa / (4 - kappa)) == 0


def test_thm4_exponent_equals_kappa_at_2_and_is_smaller_below():
    e = -bounds.get("kl:thm4_main").exponent("n")          # = 2κ/(4−κ)
    assert e.subs(kappa, 2) == 2                            # = κ at κ = 2
    gap = sp.simplify(kappa - e)                            # κ − 2κ/(4−κ)
    assert sp.solveset(gap > 0, kappa, sp.Interval.open(1, 2)) == sp.Interval.open(1, 2)
    assert sp.solveset(sp.Eq(gap, 0), kappa, sp.Interval(1, 2)) == sp.FiniteSet(2)
    opt = bounds.get("kl:thm1")
    for k in (sp.Rational(11, 10), sp.Rational(6, 5), sp.Rational(4, 3), sp.Rational(3, 2),
              sp.Rational(19, 10)):
        # strictly slower than the optimal (known-κ) rate of Theorem 1
        assert bounds.get("kl:thm4_main").exponent("n", kappa=k) > opt.exponent("n", kappa=k)
    assert bounds.get("kl:thm4_main").exponent("n", kappa=2) == opt.exponent("n", kappa=2)


@pytest.mark.parametrize("special, k", [("kl:thm4_kappa1", 1), ("kl:thm4_kappa2", 2)])
def test_thm4_special_cases_follow_from_simplified(special, k):
    simp, sc = bounds.get("kl:thm4_simplified"), bounds.get(special)
    der = bounds.follows_from(sc, simp, {"kappa": k}, ["n", "d", "rho"])
    assert der.holds and all(a == b for a, b in der.exponents.values()), der.exponents
    assert sp.simplify(simp.expr.subs(kappa, k) - sc.expr) == 0      # same expression


def test_thm4_terms_and_the_full_bound():
    full, main, floor = (bounds.get(i) for i in ("kl:thm4", "kl:thm4_main", "kl:thm4_floor"))
    # the full bound is main + floor + the iteration-cap term, which is absent at κ = 2
    at = dict(P4, d=1e5, n=1e6)
    cap = (klb.P_MAX / (n * sp.sqrt(rho)))**(kappa / (2 - kappa))
    cap_val = float(cap.subs({sym(k): v for k, v in at.items()}))
    assert full(**at) == pytest.approx(main(**at) + floor(**at) + cap_val, rel=1e-12)
    at2 = dict(at, kappa=2.0)
    assert full(**at2) == pytest.approx(main(**at2) + floor(**at2), rel=1e-12)
    assert full.exponent("n", kappa=2) == -1                 # κ = 2: the d-free 1/(n√ρ) wins in n
    # the symbolic exponent (generic branch κ < 2) agrees with the exponent at fixed κ
    sym_e = full.exponent("n")
    assert _is_clean(sym_e)
    for k in (1, sp.Rational(6, 5), sp.Rational(4, 3), sp.Rational(3, 2), sp.Rational(19, 10)):
        assert sp.simplify(sym_e.subs(kappa, k) - full.exponent("n", kappa=k)) == 0
        # in n alone the d-free term always dominates: 2κ/(4−κ) ≥ κ/2
        assert full.exponent("n", kappa=k) == floor.exponent("n", kappa=k)
    # the simplified form has the same exponents as the full bound
    for v in ("n", "d", "rho"):
        for k in (1, sp.Rational(4, 3), sp.Rational(3, 2), 2):
            assert full.exponent(v, kappa=k) == bounds.get("kl:thm4_simplified").exponent(v, kappa=k)


def test_thm4_at_kappa2_matches_the_pl_prior_rate_up_to_logs():
    main, prior = bounds.get("kl:thm4_main"), bounds.get("kl:prior_pl")
    prior_rho = _tmp(prior.expr.subs(epsilon, sp.sqrt(rho)), "prior_rho")   # ε ≈ √ρ
    for v in ("n", "d", "rho"):
        assert main.exponent(v, kappa=2) == prior_rho.exponent(v)


def _terms(bid):
    a, b = bounds.get(bid).expr.args
    # order: the d-dependent term first
    return (_tmp(a, "t_a"), _tmp(b, "t_b")) if a.has(d) else (_tmp(b, "t_a"), _tmp(a, "t_b"))


@pytest.mark.parametrize("k", [1.0, 4 / 3, 1.5, 2.0])
def test_thm4_crossover_dimension_scales_like_n_sqrt_rho_to_kappa_half(k):
    main, floor = _terms("kl:thm4_simplified")
    at = dict(rho=1.0, kappa=k)
    dstar = {nn: bounds.crossover(main, floor, "d", dict(at, n=nn), 1e-3, 1e40) for nn in (1e6, 1e8)}
    assert all(v is not None for v in dstar.values())
    slope = math.log(dstar[1e8] / dstar[1e6]) / math.log(1e8 / 1e6)
    assert slope == pytest.approx(k / 2, abs=1e-6)
    assert dstar[1e6] == pytest.approx(1e6 ** (k / 2), rel=1e-6)      # d* = (n√ρ)^{κ/2}
    # and in ρ: d* ∝ (√ρ)^{κ/2}
    d_rho = bounds.crossover(main, floor, "d", dict(at, n=1e6, rho=16.0), 1e-3, 1e40)
    assert math.log(d_rho / dstar[1e6]) / math.log(4.0) == pytest.approx(k / 2, abs=1e-6)
    # below d* the d-free term is the larger one
    assert floor(n=1e6, rho=1.0, kappa=k) > main(n=1e6, rho=1.0, kappa=k, d=dstar[1e6] / 10)


def test_thm4_crossover_with_log_factors():
    """kl:thm4_main = kl:thm4_floor at d* = (n√ρ)^{κ/2}(cA)^{(4−κ)/2}/(γ²L0²A p_max),
    c = max{γ²,1}L0²/min{L1,1} (solve the two printed terms for d)."""
    main, floor = bounds.get("kl:thm4_main"), bounds.get("kl:thm4_floor")
    at = dict(P4, d=1.0)
    for nn in (1e6, 1e8):
        pt = dict(at, n=nn)
        A = math.log(nn * math.sqrt(pt["rho"]) / pt["beta"])
        p = float(klb.P_MAX.subs({sym(k): v for k, v in pt.items()}))
        c = max(pt["gamma"]**2, 1) * pt["L0"]**2 / min(pt["L1"], 1)
        k = pt["kappa"]
        expect = ((nn * math.sqrt(pt["rho"]))**(k / 2) * (c * A)**((4 - k) / 2)
                  / (pt["gamma"]**2 * pt["L0"]**2 * A * p))
        got = bounds.crossover(main, floor, "d", pt, 1e-6, 1e40)
        assert got == pytest.approx(expect, rel=1e-8)


# ------------------------------------------------------------------------------------- Theorem 5
def test_thm5_best_and_worst_exponents():
    best, worst = bounds.get("kl:thm5_best"), bounds.get("kl:thm5_worst")
    first_best, floor_best = _terms("kl:thm5_best")
    first_worst, floor_worst = _terms("kl:thm5_worst")
    assert floor_best.expr == floor_worst.expr                  # the common d-free term
    # best-case term: the 'privacy scale' √d/(n√ρ) itself
    scale = _tmp(sp.sqrt(d) / (n * sp.sqrt(rho)), "scale")
    assert all(first_best.exponent(v) == scale.exponent(v) for v in ("n", "d", "rho"))
    # worst case: the square root of the privacy scale (noisy-GD rate)
    ngd = bounds.get("kl:prior_stationary_noisy_gd")
    assert all(first_worst.exponent(v) == ngd.exponent(v) for v in ("n", "d", "rho"))
    assert all(first_worst.exponent(v) == scale.exponent(v) / 2 for v in ("n", "d", "rho"))
    # with the d-free term, both decay like it in n and ρ; they differ in d
    for v in ("n", "rho"):
        assert best.exponent(v) == worst.exponent(v) == floor_best.exponent(v)
    assert best.exponent("d") == 2 * worst.exponent("d") == scale.exponent("d")


def test_thm5_cases_follow_from_the_theorem():
    thm5 = bounds.get("kl:thm5")
    # best case: T = n²ρ/d iterations (gradients Ω(1), budget-limited)
    der = bounds.follows_from(bounds.get("kl:thm5_best"), thm5, {"T": n**2 * rho / d},
                              ["n", "d", "rho"])
    assert der.holds, der.exponents
    # worst case: equal gradient norms N, T = N²n²ρ/d with N = d^{1/4}/(√n ρ^{1/4})
    der = bounds.follows_from(bounds.get("kl:thm5_worst"), thm5, {"T": n * sp.sqrt(rho) / sp.sqrt(d)},
                              ["n", "d", "rho"])
    assert der.holds and all(a == b for a, b in der.exponents.values()), der.exponents
    # the stationary-point rates in n (ρ-form, ε = √ρ): lower bound < ABG+23 < noisy GD
    lb = _tmp(bounds.get("kl:lb_stationary").expr.subs(epsilon, sp.sqrt(rho)), "lb")
    es = [b.exponent("n") for b in (lb, bounds.get("kl:prior_stationary"),
                                     bounds.get("kl:prior_stationary_noisy_gd"))]
    assert es[0] < es[1] < es[2]


# -------------------------------------------------------------------------- lower bounds 6 and 8
def test_thm6_exponent_and_dictionary():
    t6 = bounds.get("kl:thm6")
    assert sp.simplify(t6.exponent("n") + tau / (tau - 1)) == 0
    dictionary = {"tau": kappa / (kappa - 1), "lambda_g": 1 / gamma}
    der = bounds.follows_from(bounds.get("kl:cor1_dp"), t6, dictionary, ["n", "d", "epsilon"])
    assert der.holds, der.exponents
    assert sp.simplify(der.exponents["n"][0] + kappa) == 0          # −τ/(τ−1) = −κ
    # the whole expression becomes App. B.5's [κ/(κ−1)]^{1−κ}(γL0√d/(nε))^κ
    sub = t6.expr.subs({tau: kappa / (kappa - 1), lambda_g: 1 / gamma})
    cor = bounds.get("kl:cor1_dp")
    for k in (1.2, 4 / 3, 1.5, 2.0):
        pt = dict(GENERIC, kappa=k)
        v = float(sub.subs({sym(s): val for s, val in pt.items()}))
        assert v == pytest.approx(cor(**pt), rel=1e-12)
    # and (ε ≈ √ρ) Corollary 1's ρ form, up to the κ-only prefactor
    c1 = bounds.get("kl:cor1")
    cor_rho = _tmp(cor.expr.subs(epsilon, sp.sqrt(rho)), "cor_rho")
    assert all(sp.simplify(cor_rho.exponent(v) - c1.exponent(v)) == 0 for v in ("n", "d", "rho"))


def test_thm8_exponent_and_tightness_of_thm2_for_d1():
    t8 = bounds.get("kl:thm8")
    assert sp.simplify(t8.exponent("n") + kappa) == 0
    assert t8(n=100, epsilon=0.5, kappa=3) == pytest.approx(0.25 * 50.0**-3)
    t2 = bounds.get("kl:thm2")
    t2_eps = _tmp(t2.expr.subs({rho: epsilon**2, d: 1}), "t2_eps")       # ρ ≈ ε², d = 1
    for k in (2, 3, 4):
        for v in ("n", "epsilon"):
            assert t2_eps.exponent(v, kappa=k) == t8.exponent(v, kappa=k)


# ---------------------------------------------------------------------------------- conversions
@pytest.mark.parametrize("r, dl", [(1e-4, 1e-6), (0.01, 1e-5), (0.5, 1e-8), (1.0, 1e-6), (8.0, 0.3)])
def test_zcdp_dp_conversions_are_inverse(r, dl):
    to_dp, to_zcdp = bounds.get("kl:zcdp_to_dp"), bounds.get("kl:dp_to_zcdp")
    eps = to_dp(rho=r, delta=dl)
    assert eps == pytest.approx(r + 2 * math.sqrt(r * math.log(1 / dl)), rel=1e-12)
    assert to_zcdp(epsilon=eps, delta=dl) == pytest.approx(r, rel=1e-9)
    assert to_dp(rho=to_zcdp(epsilon=0.7, delta=dl), delta=dl) == pytest.approx(0.7, rel=1e-9)


def test_dp_to_zcdp_is_the_papers_order_eps2_over_log():
    """(√(L+ε) − √L)² = ε²/(√(L+ε) + √L)² ∈ [ε²/(4(L+ε)), ε²/(4L)], so Θ(ε²/log(1/δ)) for ε ≤ L."""
    to_zcdp = bounds.get("kl:dp_to_zcdp")
    for eps in (0.1, 0.5, 1.0, 3.0):
        for dl in (1e-3, 1e-6, 1e-10):
            L = math.log(1 / dl)
            r = to_zcdp(epsilon=eps, delta=dl)
            assert eps**2 / (4 * (L + eps)) <= r <= eps**2 / (4 * L)
    assert not to_zcdp.applies(epsilon=1.0, delta=1.5)


def test_lemma14_and_the_exponential_mechanism_cost():
    lem = bounds.get("kl:lem14")
    assert lem(epsilon=0.3) == pytest.approx(0.045)
    # Theorem 5: the exponential mechanism with ε = √ρ costs ρ/2
    assert sp.simplify(lem.expr.subs(epsilon, sp.sqrt(rho)) - rho / 2) == 0
    # pure ε-DP → ε²/2-zCDP → back to (ε', δ): ε' ≥ ε²/2 and close to ε²/2 for tiny ε
    to_dp = bounds.get("kl:zcdp_to_dp")
    assert to_dp(rho=lem(epsilon=0.3), delta=1e-6) > lem(epsilon=0.3)


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("bid", sorted(i for i, b in KL_MODULE_BOUNDS.items() if "n" in b.variables))
def test_n_zero_raises_naming_n(bid):
    b = bounds.get(bid)
    vals = {k: GENERIC[k] for k in b.variables}
    assert b(**vals) > 0  # the point is legal: only n = 0 makes it fail
    with pytest.raises(ValueError, match=r"\bn must be"):
        b(**dict(vals, n=0))
    with pytest.raises(ValueError, match=r"\bn must be"):
        b(**dict(vals, n=-5.0))


def test_undefined_region_raises_value_error():
    # at n√ρ/(γL0√d) < F0^{-1/κ} (here n < 8) Theorem 1's K is negative: undefined, reported as ValueError
    with pytest.raises(ValueError, match="not a finite real"):
        bounds.get("kl:thm1")(**dict(P4, n=2.0))
    with pytest.raises(ValueError, match="delta must be"):
        bounds.get("kl:zcdp_to_dp")(rho=1.0, delta=float("nan"))


def test_shape_parameters_have_no_asymptotic_exponent():
    """κ and τ are exponents of the rates: asking for 'the exponent as κ → ∞' is an error (sympy's
    limit fallback does not return on kl:thm1), and describe() lists scale variables only."""
    for bid in ("kl:thm1", "kl:thm4", "kl:thm8", "kl:cor1_dp"):
        with pytest.raises(ValueError, match="kappa appears in an exponent"):
            bounds.get(bid).exponent("kappa")
    with pytest.raises(ValueError, match="tau appears in an exponent"):
        bounds.get("kl:thm6").exponent("tau")
    text = bounds.get("kl:thm1").describe()
    assert "exponent in n: -kappa" in text and "exponent in kappa" not in text
