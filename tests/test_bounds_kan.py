"""KAN paper, ``bounds/rates/kan/correlated_noise.py``: every rate is registered with its provenance, the
λ structure of Theorem 4.1 is exact, the privacy calibrations are what their proofs give, and each
corollary's rate follows from its theorem under the corollary's parameter choices, in each branch,
in every direction that stays inside the branch.

Expected exponents are never typed as slope literals except where the test checks a value the
paper claims (e.g. Corollary 5.3's γ⁻⁴, Corollary 5.6's 1/(γ²n)); the claimed value is then
compared with what the theorem gives, and competing values are shown to be rejected.
"""
import math
import re
from pathlib import Path

import numpy as np
import pytest

from bounds.core import domain
import sympy as sp

import bounds
from bounds import Bound, follows_from, sym
from bounds.rates.kan import calibration_corollaries as kcc
from bounds.rates.kan import correlated_noise as kb
from bounds.rates.kan import population as kpop

n, d, m, T, eta, B = (sym(s) for s in ("n", "d", "m", "T", "eta", "B"))
lam, kappa, gamma, epsilon, delta = (sym(s) for s in ("lam", "noise_multiplier", "gamma",
                                                      "epsilon", "delta"))
beta, sample_frac = sym("beta"), sym("sample_frac")
gamma_inv, epsilon_inv, d_scale = sym("gamma_inv"), sym("epsilon_inv"), sym("d_scale")

#: Ids the issue (and the KAN experiments) rely on.
CONTRACT_IDS = (
    "kan:thm4.1", "kan:thm4.1_explicit", "kan:lam_linear", "kan:lam_quadratic",
    "kan:lam_quadratic_explicit", "kan:lam_calibration", "kan:lam_linear_calibrated",
    "kan:lam_quadratic_calibrated", "kan:lam_star", "kan:lam_star_explicit", "kan:lam_star_full",
    "kan:thm5.2", "kan:thm5.1_noise", "kan:thmF.12_noise", "kan:thm5.4_noise", "kan:thmD.9_noise",
    "kan:cor5.3", "kan:cor5.5", "kan:cor5.6", "kan:A_van", "kan:A_non", "kan:thmC.22",
    "kan:fullbatch_dpgd", "kan:fullbatch_gd", "kan:wang_gd", "kan:wang_dpgd", "kan:dpsco_lower",
)
KAN_BOUNDS = {v.id: v for mod in (kb, kpop, kcc) for v in vars(mod).values() if isinstance(v, Bound)}

#: A point where every symbol of every bound has a legal value.
GENERIC = dict(n=1e4, d=16.0, m=256.0, T=500.0, eta=0.5, B=2500.0, lam=0.5, noise_multiplier=2.0,
               gamma=0.25, epsilon=0.5, delta=1e-6, beta=0.1, sample_frac=0.25, p=6.0,
               C_clip=1.0, G=1.0, R_bar=40.0, L_star=1e-3, dist_star=20.0, R=60.0, b_grad=1.0,
               avg_loss=0.05, etaT=250.0, lam_gap=0.5)
FIXED = dict(lam=sp.Rational(1, 2), sample_frac=sp.Rational(1, 4))


def _tmp(expr, label="tmp", kind="upper"):
    """An unregistered Bound for derived expressions (terms, ratios, paths)."""
    return Bound(id=f"kan:{label}", expr=expr, quantity="derived", source="test", kind=kind)


def _vals(b, **over):
    return {k: over.get(k, GENERIC[k]) for k in b.variables}


def _inverted(b: Bound, name: str, new: sp.Symbol) -> Bound:
    """``b`` with ``name`` → 1/``new``: exponents in ``new`` are exponents as ``name`` → 0."""
    return _tmp(b.expr.subs(sym(name), 1 / new), b.label.replace(".", "_") + "_inv", b.kind)


def _regime_inverted(reg: dict, name: str, new: sp.Symbol) -> dict:
    out = {k: sp.sympify(v).subs(sym(name), 1 / new) for k, v in reg.items()}
    out[name] = 1 / new
    return out


def _tight(der) -> bool:
    return der.holds and all(sp.simplify(a - c) == 0 for a, c in der.exponents.values())


# ------------------------------------------------------------------------------ registry, text
@pytest.mark.parametrize("bid", sorted(KAN_BOUNDS))
def test_every_bound_is_registered_with_provenance(bid):
    b = bounds.get(bid)
    assert b is KAN_BOUNDS[bid]
    assert b.source.startswith("KAN paper")
    assert len(b.quantity) > 20 and b.assumptions and all(a.strip() for a in b.assumptions)
    assert b.privacy
    assert b.shape_parameters == ()       # T stays a scale variable (λ^T = exp(T log λ))
    for v in b.scale_variables:
        if v == "T" and b.expr.has(kb.LAM_POW_T):
            continue                      # needs a limit in T at fixed λ: test_calibration_exponents
        if not domain(v).unbounded_above:   # λ ∈ [0, 1), δ ∈ (0, 1): no limit at ∞
            with pytest.raises(ValueError, match="cannot go to ∞"):
                b.exponent(v)
            continue
        e = b.exponent(v, **{k: val for k, val in FIXED.items() if k != v})
        assert not e.has(sp.Limit, sp.nan, sp.zoo), (bid, v, e)
    assert "kan:" in b.describe()
    assert b(check_conditions=False, **_vals(b)) > 0


def test_contract_ids_exist_and_kinds():
    assert set(CONTRACT_IDS) <= set(bounds.ids("kan"))
    assert set(bounds.ids("kan")) == set(KAN_BOUNDS)
    kinds = {k: b.kind for k, b in KAN_BOUNDS.items()}
    assert {k for k, v in kinds.items() if v == "lower"} == {"kan:dpsco_lower"}
    assert {k for k, v in kinds.items() if v == "conversion"} == {
        "kan:thm5.1_noise", "kan:thmF.12_noise", "kan:thmF.12_noise_proof", "kan:thm5.4_noise",
        "kan:thmD.9_noise"}
    assert all(kinds[k] == "identity" for k in KAN_BOUNDS if k.startswith("kan:lam_"))


def test_docstring_and_api_page_list_every_id():
    doc = kb.__doc__
    api = (Path(__file__).parents[1] / "docs/papers/kan_bounds.md").read_text()
    for bid in KAN_BOUNDS:
        assert doc.count(f"``{bid}``") == 1, bid
        assert f"`{bid}`" in api, f"{bid} missing from docs/papers/kan_bounds.md"
    assert set(re.findall(r"``(kan:[A-Za-z0-9_.]+)``", doc)) == set(KAN_BOUNDS)
    assert set(re.findall(r"`(kan:[A-Za-z0-9_.]+)`", api)) == set(KAN_BOUNDS)


def test_symbol_names_fixed_by_the_issue():
    a = bounds.get("kan:thm4.1")
    assert set(a.variables) == {"B", "T", "d", "eta", "gamma", "lam", "m", "noise_multiplier"}
    assert "kappa" not in {s for b in KAN_BOUNDS.values() for s in b.variables}
    assert "rho" not in {s for b in KAN_BOUNDS.values() for s in b.variables}
    assert lam.is_nonnegative and not lam.is_positive


# ------------------------------------------------------------------------------------ conditions
def test_theorem41_window_and_step_condition():
    b = bounds.get("kan:thm4.1")
    at = dict(gamma=0.5, eta=0.01, T=100.0, B=1000.0, lam=0.5, noise_multiplier=1.0, d=4.0)
    # window: γ⁻⁴ = 16 ≤ m ≤ B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)²+λ²η))}
    m_hi_f = sp.lambdify([sym(k) for k in at], kb.M_HI, "math")
    m_hi = m_hi_f(*at.values())
    assert m_hi == pytest.approx(1e6 / (1e-4 * 0.25 * 4) / (100 * (0.25 + 0.25 * 0.01)), rel=1e-12)
    assert b.applies(**at, m=64.0)
    assert not b.applies(**at, m=8.0)                      # below γ⁻⁴
    assert not b.applies(**at, m=2 * m_hi)                 # above the window
    assert not b.applies(**dict(at, eta=1.0, T=1e4), m=64.0)   # step condition > 1
    assert not b.applies(**dict(at, lam=0.0), m=64.0)      # Theorem 4.1 needs λ > 0
    # the window closes as λ → 1 under the calibrated κ ∝ (1−λ^T)/(1−λ) (Theorem 4.1, Remark 4.2)
    cal = sp.lambdify((lam, T), kb.LAM_CALIBRATION, "math")

    def m_hi_cal(l):
        return m_hi_f(*dict(at, lam=l, noise_multiplier=cal(l, 100)).values())
    his = [m_hi_cal(l) for l in (0.5, 0.9, 0.99, 0.999)]
    assert his == sorted(his, reverse=True) and his[-1] < his[0] / 50


def test_c13_carries_the_width_condition_theorem41_omits():
    c13, t41 = bounds.get("kan:thmC.13"), bounds.get("kan:thm4.1")
    extra = [c for c in c13.conditions if c not in t41.conditions]
    lhs = [c for c in extra if c.rhs.has(d)]
    assert len(lhs) == 1 and sp.simplify(lhs[0].rhs - sp.log(n * T / delta) / (T * d)) == 0


def test_f12_conditions_and_calibrated_noise_multiplier():
    at = dict(lam=0.5, T=200.0, B=250.0, n=1000.0, epsilon=0.5, delta=1e-3)
    k = kcc.calibrated_noise_multiplier("kan:thmF.12_noise", **at)
    assert k == pytest.approx(math.sqrt(bounds.get("kan:thmF.12_noise")(**at)))
    with pytest.raises(ValueError, match="epsilon"):                # F.12 needs ε ≤ 1
        kcc.calibrated_noise_multiplier("kan:thmF.12_noise", **dict(at, epsilon=2.0))
    with pytest.raises(ValueError, match="fails"):                  # rT ≥ 3 ln(2/δ)
        kcc.calibrated_noise_multiplier("kan:thmF.12_noise", **dict(at, T=20.0))
    assert kcc.calibrated_noise_multiplier("kan:thmF.12_noise", check_conditions=False,
                                          **dict(at, T=20.0)) > 0
    with pytest.raises(ValueError, match=r"lam must be in \[0, 1\)"):
        kcc.calibrated_noise_multiplier("kan:thm5.1_noise", **dict(at, lam=1.0))
    with pytest.raises(ValueError, match="B must be in"):
        kcc.calibrated_noise_multiplier("kan:thm5.4_noise", **dict(at, B=2000.0))
    with pytest.raises(ValueError, match="bound_id must be one of"):
        kcc.calibrated_noise_multiplier("kan:thm4.1", **at)
    # λ = 0 calibrations ignore lam
    assert kcc.calibrated_noise_multiplier("kan:thmD.9_noise", **dict(at, lam=0.0)) > 0


def test_corollary_delta_conditions():
    """δ is not a symbol of the corollaries' rates, so its hypotheses are side conditions (core's
    Bound.applies substitutes only a rate's own symbols): every condition of every bound uses only
    that bound's symbols, so the harness can call applies() with the rate's values."""
    for b in KAN_BOUNDS.values():
        for c in b.conditions:
            assert {s.name for s in c.free_symbols} <= set(b.variables), (b.id, c)
    ok = kcc.side_conditions_hold
    assert ok("kan:cor5.3", gamma=0.5, n=1e3, delta=0.5**3 / 1e3, d=4, epsilon=1)
    assert not ok("kan:cor5.3", gamma=0.5, n=1e3, delta=0.5 / 1e3, d=4, epsilon=1)  # > 1/(n√m)
    assert not ok("kan:cor5.3", gamma=2.0, n=1e3, delta=1e-9, d=4, epsilon=1)       # γ ≤ 1
    # the stated δ ≤ 1/(γn) is not enough for the 1/(γ²n) rate (KAN-E5): the reading needs 1/n
    assert not ok("kan:cor5.6", gamma=0.5, n=1e3, delta=1.5e-3)
    assert ok("kan:cor5.6", gamma=0.5, n=1e3, delta=1e-3)
    with pytest.raises(ValueError, match="needs values for"):
        ok("kan:cor5.5", gamma=0.5, n=1e3)
    with pytest.raises(ValueError, match="bound_id must be one of"):
        ok("kl:thm9", n=1.0)


# ------------------------------------------------------------------------------- λ structure
def test_a_corr_lambda_structure_is_exact():
    a = bounds.get("kan:thm4.1").expr
    lin, quad = bounds.get("kan:lam_linear").expr, bounds.get("kan:lam_quadratic").expr
    assert sp.simplify(a - (kb.A_CORR_NOISE_FREE + lin * kb.A_CORR_L + quad * kb.A_CORR_Q)) == 0
    # the noise-free part is A_corr at κ → 0, and the two noise parts are linear / quadratic in κ
    assert sp.simplify(kb.A_CORR_NOISE_FREE - a.subs(kappa, 0)) == 0
    assert sp.simplify(sp.diff(kb.A_CORR_L, kappa, 2)) == 0
    assert sp.simplify(kb.A_CORR_Q - kb.A_CORR_Q.subs(kappa, 1) * kappa**2) == 0
    # Theorem 4.1's own terms: (1−λ)κ/(B√T)(1/γ + η√(md)/√B) and ((1−λ)²+λ²η)ηκ²md/B²
    paper = (1 / (gamma**2 * eta * T) + 1 / (gamma * sp.sqrt(B * T)) + eta * (1 / B + 1 / T)
             + (1 - lam) * kappa / (B * sp.sqrt(T)) * (1 / gamma + eta * sp.sqrt(m * d) / sp.sqrt(B))
             + ((1 - lam)**2 + lam**2 * eta) * eta * kappa**2 * m * d / B**2)
    assert sp.simplify(a - paper) == 0


def test_explicit_bound_quadratic_factor_is_12_beta():
    e = bounds.get("kan:thm4.1_explicit").expr
    c, vz = kb.C_PRIV, kb.V_Z
    quad = 3 * eta * bounds.get("kan:lam_quadratic_explicit").expr * c**2 * vz / T
    rest = sp.expand(e - quad)
    # what is left is linear in (1−λ) (the M_pot martingales) and free of β: no λ² term survives
    assert not rest.has(beta)
    assert sp.simplify(sp.diff(rest, lam, 2)) == 0
    # A_corr's λ²η is the 12βη of Lemma C.3 with 12β → 1; the C.13 proof's reading has 2β
    q, qe, q13 = (bounds.get(i).expr for i in ("kan:lam_quadratic", "kan:lam_quadratic_explicit",
                                                  "kan:lam_quadratic_c13"))
    assert sp.simplify(qe.subs(beta, sp.Rational(1, 12)) - q) == 0
    assert sp.simplify(q13.subs(beta, 6 * beta) - qe) == 0


@pytest.mark.parametrize("quad_id, star_id", [("kan:lam_quadratic", "kan:lam_star"),
                                              ("kan:lam_quadratic_explicit", "kan:lam_star_explicit")])
def test_lambda_star_is_the_minimiser_of_the_quadratic_factor(quad_id, star_id):
    q, star = bounds.get(quad_id).expr, bounds.get(star_id).expr
    crit = sp.solve(sp.diff(q, lam), lam)
    assert len(crit) == 1 and sp.simplify(crit[0] - star) == 0
    assert sp.simplify(sp.diff(q, lam, 2)) .is_positive                 # convex: a minimum
    c = sp.simplify(q.subs(lam, 1))                                        # back up to cη at λ = 1
    vmin = sp.simplify(q.subs(lam, star))
    assert sp.simplify(vmin - c / (1 + c)) == 0 and sp.simplify(c - vmin).is_positive


def test_remark_42_monotone_claim_holds_for_the_linear_factor_only():
    """'The bound improves monotonically as λ → 1 for fixed κ' (Remark 4.2) — rejected for the
    quadratic factor at any η > 0, true for the linear one (KAN-E8)."""
    lin, quad = bounds.get("kan:lam_linear"), bounds.get("kan:lam_quadratic")
    grid = np.linspace(0, 0.999, 400)
    qf = sp.lambdify((lam, eta), quad.expr, "numpy")
    assert np.all(np.diff(sp.lambdify(lam, lin.expr, "numpy")(grid)) < 0)
    for e in (0.05, 0.5, 1.0):
        ql = qf(grid, e)
        k = int(np.argmin(ql))
        assert grid[k] == pytest.approx(1 / (1 + e), abs=3e-3)
        assert ql[-1] > ql[k] * (1 + e / 2)                              # rises again


def test_lambda_star_full_minimises_a_corr_at_fixed_kappa():
    a, full, star = (bounds.get(i) for i in ("kan:thm4.1", "kan:lam_star_full", "kan:lam_star"))
    L, Q = sp.Symbol("L", positive=True), sp.Symbol("Q", positive=True)
    psi = L * (1 - lam) + Q * ((1 - lam)**2 + eta * lam**2)
    crit = sp.solve(sp.diff(psi, lam), lam)[0]
    assert sp.simplify(crit - (1 + L / (2 * Q)) / (1 + eta)) == 0
    # numerically: the grid argmin of A_corr equals kan:lam_star_full, and it is ≥ kan:lam_star
    grid = np.linspace(0, 0.9999, 20001)
    for kap, mm in ((0.5, 64.0), (5.0, 256.0), (50.0, 4096.0)):
        at = dict(gamma=0.3, eta=0.5, T=400.0, B=64.0, noise_multiplier=kap, m=mm, d=8.0)
        f = sp.lambdify(lam, a.expr.subs({sym(k): v for k, v in at.items()}), "numpy")
        best = grid[int(np.argmin(f(grid)))]
        pred = full(**at)
        assert best == pytest.approx(min(pred, 0.9999), abs=2e-4)
        assert pred >= star(eta=0.5)
    # when the quadratic term dominates (Q ≫ L) the full minimiser tends to 1/(1+η)
    big = dict(gamma=1.0, eta=0.5, T=1e6, B=64.0, noise_multiplier=100.0, m=1e6, d=64.0)
    assert full(**big) == pytest.approx(star(eta=0.5), rel=1e-3)


def test_calibrated_lambda_factors_are_exact():
    """With κ = κ₀(1−λ^T)/(1−λ) (Theorem 5.1's λ-dependence), A_corr's noise terms become the
    κ₀ terms times kan:lam_linear_calibrated and kan:lam_quadratic_calibrated, exactly."""
    k0 = sp.Symbol("k0", positive=True)
    sub = {kappa: k0 * kb.LAM_CALIBRATION}
    lin_cal = (kb.LAM_LINEAR * kb.A_CORR_L).subs(sub)
    quad_cal = (kb.LAM_QUADRATIC * kb.A_CORR_Q).subs(sub)
    assert sp.simplify(lin_cal - bounds.get("kan:lam_linear_calibrated").expr
                       * kb.A_CORR_L.subs(kappa, k0)) == 0
    assert sp.simplify(quad_cal - bounds.get("kan:lam_quadratic_calibrated").expr
                       * kb.A_CORR_Q.subs(kappa, k0)) == 0
    # (1−λ^T)/(1−λ) is the geometric sum Σ_{k<T} λ^k (checked at T = 7)
    assert sp.simplify(kb.LAM_CALIBRATION.subs(T, 7) - sum(lam**k for k in range(7))) == 0


def test_calibration_cancels_the_lambda_gain():
    """Under Theorem 5.1's calibration λ gives no gain: the linear factor is ≈ 1 while T(1−λ) ≫ 1,
    the quadratic one is increasing ≈ 1 + ηλ²/(1−λ)², saturating at ηT² as λ → 1 (Theorem 4.1 with Theorem 5.1's κ)."""
    lin, quad = bounds.get("kan:lam_linear_calibrated"), bounds.get("kan:lam_quadratic_calibrated")
    Tv, e = 1000.0, 0.5
    grid = [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95]
    ql = [quad(lam=l, T=Tv, eta=e) for l in grid]
    assert ql == sorted(ql)                                                 # increasing
    for l, v in zip(grid, ql):
        assert v == pytest.approx(1 - 2 * l**Tv + e * l**2 / (1 - l)**2, rel=1e-6)
        assert lin(lam=l, T=Tv) == pytest.approx(1.0, abs=1e-12)
    assert quad(lam=1 - 1e-9, T=Tv, eta=e) == pytest.approx(e * Tv**2, rel=1e-5)
    assert lin(lam=1 - 1e-9, T=Tv) < 1e-5
    # the competing claim 'correlation helps at the calibrated κ' is rejected: λ = 0.5 is worse
    assert quad(lam=0.5, T=Tv, eta=e) > quad(lam=1e-3, T=Tv, eta=e)


def test_lemma_f11_bound_on_the_encoder_norm():
    """‖C‖₂ ≤ (1−λ^T)/(1−λ) (Lemma F.11), true because C's max row sum equals its max column sum
    (the lemma's row-sum argument alone does not bound a spectral norm, KAN-E10); the worst
    participation pattern (a block at the start) nearly attains it."""
    cal = bounds.get("kan:lam_calibration")
    for lv in (0.3, 0.7, 0.95):
        for Tv in (5, 12, 40):
            C = np.tril(lv ** np.subtract.outer(np.arange(Tv), np.arange(Tv)).clip(0))
            bound = cal(lam=lv, T=Tv)
            assert np.abs(C).sum(1).max() == pytest.approx(np.abs(C).sum(0).max()) == pytest.approx(bound)
            assert np.linalg.norm(C, 2) <= bound * (1 + 1e-12)
            assert bound <= 1 / (1 - lv)
    C = np.tril(0.5 ** np.subtract.outer(np.arange(10), np.arange(10)).clip(0))
    ys = np.array([[(k >> j) & 1 for j in range(10)] for k in range(1 << 10)], dtype=float)
    ys = ys[ys.sum(1) <= 3]                              # every participation pattern with ≤ τ = 3
    norms = np.linalg.norm(ys @ C.T, axis=1)
    worst = ys[int(np.argmax(norms))]
    assert norms.max() == pytest.approx(2.708, abs=1e-3)                  # brute force over participation sets
    assert list(worst) == [1, 1, 1] + [0] * 7                            # a block at the start
    assert cal(lam=0.5, T=10) * math.sqrt(3) == pytest.approx(3.461, abs=1e-3)


# ---------------------------------------------------------------------------- noise calibration
def test_f12_constant_8_is_four_times_its_proof():
    assert sp.simplify(bounds.get("kan:thmF.12_noise").expr
                       - 4 * bounds.get("kan:thmF.12_noise_proof").expr) == 0
    # the proof: classic Gaussian mechanism κ² ≥ Δ²·2ln(1.25/δ')/ε², δ' = (1−c₁)δ, c₁ = ½,
    # Δ² = ((1−λ^T)/(1−λ))²τ, τ = rT + √(3rT ln(1/(c₁δ))) (Lemmas F.10, F.11)
    c1 = sp.Rational(1, 2)
    tau = B * T / n + sp.sqrt(3 * B * T / n * sp.log(1 / (c1 * delta)))
    proof = kb.LAM_CALIBRATION**2 * tau * 2 * sp.log(sp.Rational(5, 4) / ((1 - c1) * delta)) / epsilon**2
    assert sp.simplify(proof - bounds.get("kan:thmF.12_noise_proof").expr) == 0


def test_d9_is_its_rdp_derivation():
    alpha = 1 + 2 * sp.log(1 / delta) / epsilon
    assert sp.simplify(16 * alpha * T * B**2 / (n**2 * epsilon)
                       - bounds.get("kan:thmD.9_noise").expr) == 0


def test_calibration_exponents():
    t51, f12, t54, d9 = (bounds.get(i) for i in ("kan:thm5.1_noise", "kan:thmF.12_noise",
                                                 "kan:thm5.4_noise", "kan:thmD.9_noise"))
    for v in ("T", "B", "n", "epsilon"):
        assert t51.exponent(v, lam=sp.Rational(1, 2)) == f12.exponent(v, lam=sp.Rational(1, 2))
    for v in ("T", "B", "n"):
        assert t54.exponent(v) == d9.exponent(v)
    # ε: D.9's 16B²T/(n²ε) term makes it ε⁻¹ as ε → ∞, but both are ε⁻² as ε → 0
    assert (t54.exponent("epsilon"), d9.exponent("epsilon")) == (-2, -1)
    assert (_inverted(t54, "epsilon", epsilon_inv).exponent("epsilon_inv")
            == _inverted(d9, "epsilon", epsilon_inv).exponent("epsilon_inv") == 2)
    # λ > 0: linear in B/n (no amplification); λ = 0: quadratic in B/n (Theorems F.12 and D.9)
    at = dict(lam=0.5, T=1e6, B=100.0, n=1e4, epsilon=0.5, delta=1e-5)     # rT = 1e4 ≫ ln(1/δ)
    assert f12.local_slope("B", at) == pytest.approx(1.0, abs=0.05)
    assert d9.local_slope("B", at) == pytest.approx(2.0, abs=1e-9)
    # T: κ² ∝ T once the λ-factor has saturated (T(1−λ) ≫ 1)
    assert f12.local_slope("T", at) == pytest.approx(1.0, abs=0.1)


def test_calibration_gap_at_lambda_zero_is_n_over_4b():
    gap = bounds.get("kan:calibration_gap")
    for nn, bb in ((1e4, 100.0), (1e5, 100.0), (1e5, 1000.0)):
        at = dict(n=nn, B=bb, T=1e7, epsilon=0.5, delta=1e-6)               # rT ≥ 1e4
        ratio = gap(**at)
        lead = math.log(2.5e6) / (4 * (bb / nn) * math.log(1e6))   # ln(2.5/δ)/(4r ln(1/δ))
        assert ratio == pytest.approx(lead, rel=0.25)
        assert gap.local_slope("n", at) == pytest.approx(1.0, abs=0.1)
        assert gap.local_slope("B", at) == pytest.approx(-1.0, abs=0.1)
    # at B = ρn the gap is a constant (why Corollary 5.3 takes B = ρn): no slope in n
    at = dict(n=1e5, B=0.25e5, T=1e3, epsilon=0.5, delta=1e-6)
    lam0_ratio = _tmp(gap.expr.subs(B, sample_frac * n), "gap_rho")
    assert lam0_ratio.exponent("n") == 0
    assert lam0_ratio(**{k: at.get(k, 0.25) for k in lam0_ratio.variables}) < 2


# --------------------------------------------------------------- Theorem 4.1 forms against each other
def test_c13_is_theorem41_up_to_polylog():
    c13, t41 = bounds.get("kan:thmC.13"), bounds.get("kan:thm4.1")
    for v in ("T", "B", "m", "d", "eta"):
        assert c13.exponent(v, lam=sp.Rational(1, 2)) == t41.exponent(v, lam=sp.Rational(1, 2))
    assert _inverted(c13, "gamma", gamma_inv).exponent("gamma_inv") == \
        _inverted(t41, "gamma", gamma_inv).exponent("gamma_inv")
    ratio = _tmp(c13.expr / t41.expr, "c13_ratio")
    for v in ("T", "n"):
        at = dict(GENERIC, **{v: 1e200})
        assert 0 <= ratio.local_slope(v, {k: at[k] for k in ratio.variables}) < 0.02
    assert c13(**_vals(c13)) >= t41(**_vals(t41))


def test_a_van_simplified_has_a_vans_exponents_and_a_corr_has_an_extra_cross_term():
    av, avs, ac = (bounds.get(i) for i in ("kan:A_van", "kan:A_van_simplified", "kan:thm4.1"))
    for v in ("T", "B", "m", "d", "eta", "noise_multiplier"):
        assert av.exponent(v) == avs.exponent(v)
    # A_corr at λ = 0 minus A_van (logs dropped) is exactly the cross term η√(md)κ/(B^{3/2}√T)
    diff = sp.simplify(ac.expr.subs(lam, 0) - avs.expr)
    assert sp.simplify(diff - eta * sp.sqrt(m * d) * kappa / (B**sp.Rational(3, 2) * sp.sqrt(T))) == 0


def test_a_non_is_a_corr_without_noise_and_full_batch_gd_drops_the_sgd_terms():
    an, ac, fb = (bounds.get(i) for i in ("kan:A_non", "kan:thm4.1", "kan:fullbatch_gd_opt"))
    assert sp.simplify(kb.A_CORR_NOISE_FREE - an.expr - eta / T) == 0
    assert fb.exponent("T") == -1 and fb.exponent("eta") == -1       # the ηT collapse
    x = sp.Symbol("x", positive=True)
    assert not fb.expr.subs(eta, x / T).has(T)


def test_explicit_bound_evaluates_and_its_conditions_bind():
    b = bounds.get("kan:thm4.1_explicit")
    at = dict(GENERIC, beta=0.1, eta=0.5, lam=0.5, noise_multiplier=0.05, C_clip=1.0, G=1.0,
              m=128.0, d=4.0, p=6.0, T=400.0, B=200.0, delta=0.01, L_star=1 / 400,
              dist_star=8.0, R_bar=20.0, R=40.0)       # (7), (10) and R_* ≥ R̄ + ‖W*−W₀‖ + ηcz hold
    v = b(check_conditions=False, **_vals(b, **at))
    assert v > 8 * at["L_star"]
    assert b.applies(**_vals(b, **at)) and kcc.side_conditions_hold(b.id, **at)
    assert not kcc.side_conditions_hold(b.id, **dict(at, R=25.0))     # projection radius too small
    assert not b.applies(**_vals(b, **dict(at, m=32.0)))            # localisation (7) fails
    assert not b.applies(**_vals(b, **dict(at, eta=1.0)))       # η ≤ 1/(12β) fails
    assert not b.applies(**_vals(b, **dict(at, C_clip=0.5)))    # C_clip ≥ G_δ fails
    assert not b.applies(**_vals(b, **dict(at, R_bar=15.0)))    # self-consistency (10) fails
    # the noise part scales like ((1−λ)²η + 12βλ²η²)c²V_Z/T plus the (1−λ) martingales
    v0 = b(check_conditions=False, **_vals(b, **dict(at, noise_multiplier=1e-12)))
    assert v > v0


# ------------------------------------------------------------------- stability and generalisation
def test_stability_is_free_of_the_noise_and_decays_like_1_over_n():
    for bid in ("kan:thmC.22", "kan:thmD.15", "kan:thmC.23_gen", "kan:thmE.1_gen"):
        b = bounds.get(bid)
        assert not {"noise_multiplier", "lam"} & set(b.variables)
        at = _vals(b, delta=1e-30)
        assert b.local_slope("n", at) == pytest.approx(-1.0, abs=1e-6)
        assert b.local_slope("avg_loss", at) == pytest.approx(1.0, abs=1e-6)
    c22, gen = bounds.get("kan:thmC.22"), bounds.get("kan:thmC.23_gen")
    assert sp.simplify(gen.expr - 2 * sym("b_grad") * c22.expr) == 0
    assert c22(**_vals(c22, eta=1.0, b_grad=1.0, T=100.0, avg_loss=0.1, n=100.0, delta=1e-30)) \
        == pytest.approx(2 * math.e * 0.1 * 100 / 100)


def test_population_bounds_contain_the_optimisation_bounds():
    pairs = (("kan:thm5.2", "kan:thm4.1"), ("kan:thmC.23", "kan:thm4.1"),
             ("kan:thmD.16", "kan:A_van"), ("kan:thmE.1_pop", "kan:A_non"))
    for pop, opt in pairs:
        p_, o_ = bounds.get(pop), bounds.get(opt)
        assert p_(check_conditions=False, **_vals(p_)) >= o_(check_conditions=False, **_vals(o_))
        # the generalisation factor (1 + ηT/n) adds one power of T to the η/B term
        assert p_.exponent("T", lam=sp.Rational(1, 2)) == o_.exponent("T", lam=sp.Rational(1, 2)) + 1


# -------------------------------------------------------------- corollaries follow from theorems
_PRIV53 = _tmp(sp.sqrt(d) / (gamma**4 * n * epsilon), "cor53_private_term")
_NONPRIV = _tmp(1 / (gamma * sp.sqrt(n)), "nonprivate_term")
_PRIV55 = _tmp(sp.sqrt(d) / (gamma**3 * n * epsilon), "cor55_private_term")


def _follows(cor: Bound, thm: str, reg: dict, variables, tight=True):
    der = follows_from(cor, bounds.get(thm), reg, variables, **FIXED)
    return _tight(der) if tight else der.holds, der


#: Paths n → ∞ that stay inside each corollary's privacy branch *and* its own hypotheses:
#: (ε, d, γ) = (n^{−a}, n^{c}, n^{−b}) up to constants.  Cor 5.3 needs n/n_c → 0 with
#: n_c = d/(γ⁶ε²), and T = nεγ²/√d → ∞ (so that ρT ≥ 3 ln(2/δ), F.12); Cor 5.5 needs
#: η = γ²√nε/√d → 0 (its T = √n/γ always grows).  Pure d → ∞ or ε → 0 leaves Cor 5.3's regime
#: (T → 0), see test_cor53_needs_f12s_rt_condition.
PATHS = {
    "cor5.3": ((0, sp.Rational(3, 2), 0), (sp.Rational(3, 4), 0, 0),
               (sp.Rational(1, 2), sp.Rational(1, 4), 0), (0, 0, sp.Rational(1, 4))),
    "cor5.5": ((0, 2, 0), (1, 0, 0), (sp.Rational(1, 2), sp.Rational(1, 2), 0),
               (0, 0, sp.Rational(1, 4))),
}


def _path_subs(a, c, b) -> dict:
    return {epsilon: sym("eps_scale") * n**-a, d: d_scale * n**c, gamma: sym("gamma_scale") * n**-b}


def _path_regime(reg: dict, path: dict) -> dict:
    r = {k: sp.sympify(v).subs(path, simultaneous=True) for k, v in reg.items()}
    r.update({s.name: v for s, v in path.items()})
    return r


def _on_path(b: Bound, path: dict) -> Bound:
    return _tmp(b.expr.subs(path, simultaneous=True), b.label.replace(".", "_") + "_path", b.kind)


def _solve_exponents(path_exps, corollary: str) -> dict:
    """(e_n, e_d, e_ε, e_γ) from the exponents along the four paths: along (a, c, b) the
    exponent is e_n + c·e_d − a·e_ε − b·e_γ."""
    e = sp.symbols("e_n e_d e_eps e_gamma")
    eqs = [sp.Eq(e[0] + c * e[1] - a * e[2] - b * e[3], pe)
           for (a, c, b), pe in zip(PATHS[corollary], path_exps)]
    eqs.append(sp.Eq(e[3], e[3]))
    sol = sp.solve(eqs[:3], e[:3], dict=True)
    assert len(sol) == 1
    sol = {k: v for k, v in sol[0].items()}
    return {"n": sol[e[0]], "d": sol[e[1]], "epsilon": sol[e[2]]}


def _check_private_branch(cor_term: Bound, full_cor: Bound, thm: str, corollary: str):
    """follows_from along each path of PATHS: the theorem under the corollary's choices has the
    privacy term's exponent (tight), and the corollary's full rate bounds it."""
    reg = kcc.regime(corollary, "private")
    got = []
    for a, c, b in PATHS[corollary]:
        path = _path_subs(a, c, b)
        r = _path_regime(reg, path)
        der = follows_from(_on_path(cor_term, path), bounds.get(thm), r, ["n"], **FIXED)
        assert _tight(der), (thm, corollary, (a, c, b), der.exponents)
        assert follows_from(_on_path(full_cor, path), bounds.get(thm), r, ["n"], **FIXED).holds
        got.append(der.exponents["n"][0])
    # the paths pin down the n, d, ε exponents (γ from the fourth path): they are the corollary's
    sol = _solve_exponents(got, corollary)
    assert sol == {v: cor_term.exponent(v) for v in ("n", "d", "epsilon")}
    (a, c, b), pe = PATHS[corollary][3], got[3]
    e_gamma = sp.solve(sp.Symbol("x") * (-b) + sol["n"] - pe, sp.Symbol("x"))[0]
    assert e_gamma == -_inverted(cor_term, "gamma", gamma_inv).exponent("gamma_inv")
    return sol, e_gamma


def _check_nonprivate_branch(full_cor: Bound, thm: str, corollary: str):
    reg = kcc.regime(corollary, "nonprivate")
    ok, der = _follows(_NONPRIV, thm, reg, ["n", "epsilon"])       # n, ε → ∞ stay in the branch
    assert ok, der.exponents
    assert follows_from(full_cor, bounds.get(thm), reg, ["n", "epsilon"], **FIXED).holds


@pytest.mark.parametrize("thm", ["kan:thm4.1", "kan:thm5.2", "kan:thmC.13", "kan:thmC.23"])
def test_cor53_follows_from_theorem_in_both_branches(thm):
    cor = bounds.get("kan:cor5.3")
    sol, e_gamma = _check_private_branch(_PRIV53, cor, thm, "cor5.3")
    assert (sol["n"], sol["d"], sol["epsilon"], e_gamma) == (-1, sp.Rational(1, 2), -1, -4)  # claimed
    _check_nonprivate_branch(cor, thm, "cor5.3")


@pytest.mark.parametrize("thm", ["kan:A_van", "kan:A_van_simplified", "kan:thmD.16"])
def test_cor55_follows_from_theorem_in_both_branches(thm):
    cor = bounds.get("kan:cor5.5")
    sol, e_gamma = _check_private_branch(_PRIV55, cor, thm, "cor5.5")
    assert (sol["n"], sol["d"], sol["epsilon"], e_gamma) == (-1, sp.Rational(1, 2), -1, -3)  # claimed
    _check_nonprivate_branch(cor, thm, "cor5.5")


def test_cor53_and_cor55_competing_rates_are_rejected():
    # γ: Corollary 5.3's regime gives γ⁻⁴, not Corollary 5.5's γ⁻³ ...
    reg = _regime_inverted(kcc.regime("cor5.3", "private"), "gamma", gamma_inv)
    der = follows_from(_inverted(_PRIV55, "gamma", gamma_inv), bounds.get("kan:thm5.2"), reg,
                       ["gamma_inv"], **FIXED)
    assert not der.holds and der.exponents["gamma_inv"] == (4, 3)
    # ... because of the width m ≍ γ⁻⁶: at m ≍ γ⁻⁴ the quadratic noise term would give γ⁻²
    reg4 = dict(reg, m=gamma_inv**4)
    q = _tmp(kb.A_CORR_Q, "q")
    assert follows_from(_inverted(_tmp(sp.sqrt(d) / (gamma**2 * n * epsilon)), "gamma", gamma_inv),
                        q, reg4, ["gamma_inv"], **FIXED).holds
    # n: in the non-private branch the rate is n^{-1/2}, not the privacy branch's n^{-1}
    der = follows_from(_tmp(1 / n, "n_inv"), bounds.get("kan:thm5.2"),
                       kcc.regime("cor5.3", "nonprivate"), ["n"], **FIXED)
    assert not der.holds
    # Corollary 5.5 privacy branch with η ≍ 1 (no ε-tuned step) does not give the ε⁻¹ rate
    reg1 = _regime_inverted(dict(kcc.regime("cor5.5", "private"), eta=sp.Integer(1)), "epsilon",
                            epsilon_inv)
    der = follows_from(_inverted(_PRIV55, "epsilon", epsilon_inv), bounds.get("kan:A_van"), reg1,
                       ["epsilon_inv"])
    assert not der.holds


def test_cor53_needs_f12s_rt_condition_in_the_d_direction():
    """Theorem 5.1's κ² has a √(rT log(1/δ)) term; C.24 drops it (κ² ≲ T/ε²), which needs
    rT ≳ log(1/δ) — F.12's hypothesis, not stated in Corollary 5.3 (KAN-E9).  Without it the
    privacy-branch d-exponent is 3/4, not 1/2."""
    raw = kcc.regime_cor53_raw(n * epsilon * gamma**2 / sp.sqrt(d))
    der = follows_from(_PRIV53, bounds.get("kan:thm4.1"), raw, ["d"], **FIXED)
    assert not der.holds and der.exponents["d"] == (sp.Rational(3, 4), sp.Rational(1, 2))
    ok, _ = _follows(_PRIV53, "kan:thm4.1", kcc.regime("cor5.3", "private"), ["d"])
    assert ok
    # the condition itself: ρT ≥ 3 ln(2/δ) with T = nεγ²/√d caps d in the private branch
    f12 = bounds.get("kan:thmF.12_noise")
    pt = dict(n=1e4, epsilon=0.5, gamma=0.5, lam=0.5, delta=0.5**3 / 1e4)
    Tv = lambda dd: pt["n"] * pt["epsilon"] * pt["gamma"]**2 / math.sqrt(dd)
    ok_d = [f12.applies(**dict(pt, B=0.25 * pt["n"], T=Tv(dd))) for dd in (1, 1e2, 1e4, 1e6)]
    assert ok_d[0] and not ok_d[-1]


def test_both_branches_with_the_min_step_count():
    """With T = min{√n/γ, nεγ²/√d} the substituted Theorem 5.2 has Corollary 5.3's local slope
    deep in each branch and stays within a polylog factor of it (exponents cannot see both
    branches at once).  Its kink sits well above n_c = d/(γ⁶ε²): the privacy term carries a
    polylog (≈ 250 here) that the corollary hides, so experiments should fit the kink."""
    reg = kcc.regime("cor5.3", "both")
    sub = {sym(k): v for k, v in reg.items()}
    thm = _tmp(bounds.get("kan:thm5.2").expr.subs(sub, simultaneous=True).subs(
        {lam: sp.Rational(1, 2), sample_frac: sp.Rational(1, 4)}), "thm52_cor53")
    cor = bounds.get("kan:cor5.3")
    at = dict(d=1e4, gamma=0.3, epsilon=0.1)
    n_c = at["d"] / (at["gamma"]**6 * at["epsilon"]**2)
    for f in (1e-4, 1e-3, 1e-2):                                     # privacy branch
        pt = dict(at, n=f * n_c)
        assert thm.local_slope("n", pt) == pytest.approx(cor.local_slope("n", pt), abs=0.07)
        assert cor.local_slope("n", pt) == pytest.approx(-1, abs=0.05)
    pt = dict(at, n=1e6 * n_c)                                       # non-private branch
    assert thm.local_slope("n", pt) == pytest.approx(-0.5, abs=0.01)
    for f in (1e-4, 1e-2, 1, 1e2, 1e4, 1e6):
        nn = f * n_c
        r = thm(**at, n=nn) / cor(**at, n=nn)
        assert 1 <= r <= 10 * math.log(nn / (at["gamma"]**3 / nn))**2
    # the theorem is still privacy-dominated (slope < −0.75) a hundred times past n_c
    assert thm.local_slope("n", dict(at, n=1e2 * n_c)) < -0.75 < cor.local_slope("n", dict(at, n=1e2 * n_c))


def test_cor56_follows_from_theorem_e1_and_the_delta_readings():
    reg = kcc.regime("cor5.6", "delta_needed")
    ok, der = _follows(bounds.get("kan:cor5.6_opt"), "kan:A_non", reg, ["n"])
    assert ok, der.exponents
    g0 = _inverted(bounds.get("kan:cor5.6_opt"), "gamma", gamma_inv)
    ok, der = _follows(g0, "kan:A_non", _regime_inverted(reg, "gamma", gamma_inv), ["gamma_inv"])
    assert ok, der.exponents                                       # opt: no γ at all
    cor = bounds.get("kan:cor5.6")
    for reading, holds_in_gamma in (("delta_needed", True), ("delta_as_stated", False)):
        r = kcc.regime("cor5.6", reading)
        assert _follows(cor, "kan:thmE.1_pop", r, ["n"])[0]
        der = follows_from(_inverted(cor, "gamma", gamma_inv), bounds.get("kan:thmE.1_pop"),
                           _regime_inverted(r, "gamma", gamma_inv), ["gamma_inv"])
        assert der.holds == holds_in_gamma, (reading, der.exponents)
    # under δ = 1/(γn) the γ-exponent is that of 1/(γ³n): the (1 + ηT/n)δ term (KAN-E5)
    der = follows_from(_inverted(cor, "gamma", gamma_inv), bounds.get("kan:thmE.1_pop"),
                       _regime_inverted(kcc.regime("cor5.6", "delta_as_stated"), "gamma", gamma_inv),
                       ["gamma_inv"])
    assert der.exponents["gamma_inv"] == (3, 2)


def test_fullbatch_gd_follows_from_theorem_e1():
    fb = bounds.get("kan:fullbatch_gd")
    for reading, holds_in_gamma in (("delta_needed", True), ("delta_as_stated", False)):
        r = kcc.regime("fullbatch_gd", reading)
        assert _follows(fb, "kan:thmE.1_pop", r, ["n"])[0]
        der = follows_from(_inverted(fb, "gamma", gamma_inv), bounds.get("kan:thmE.1_pop"),
                           _regime_inverted(r, "gamma", gamma_inv), ["gamma_inv"])
        assert der.holds == holds_in_gamma, der.exponents


@pytest.mark.parametrize("thm", ["kan:A_van", "kan:thmD.16"])
def test_fullbatch_dpgd_holds_in_the_private_branch_only(thm):
    stated, both = bounds.get("kan:fullbatch_dpgd"), bounds.get("kan:fullbatch_dpgd_both")
    priv = kcc.regime("fullbatch_dpgd", "private")
    for v in ("n", "d"):
        assert _follows(stated, thm, priv, [v])[0]
    assert _follows(_inverted(stated, "epsilon", epsilon_inv), thm,
                    _regime_inverted(priv, "epsilon", epsilon_inv), ["epsilon_inv"])[0]
    assert _follows(_inverted(stated, "gamma", gamma_inv), thm,
                    _regime_inverted(priv, "gamma", gamma_inv), ["gamma_inv"])[0]
    # η ≍ 1 branch (ε ≥ γ√(md)): the dropped 1/(γ²n) term rules as ε → ∞ (KAN-E6)
    nonpriv = kcc.regime("fullbatch_dpgd", "nonprivate")
    der = follows_from(stated, bounds.get(thm), nonpriv, ["n", "epsilon"])
    assert not der.holds and der.exponents["epsilon"] == (0, -1)
    assert _follows(both, thm, nonpriv, ["n", "epsilon"])[0]
    assert _follows(both, thm, priv, ["n", "d"], tight=False)[0]


def test_this_paper_against_wang_and_the_dpsco_lower_bound():
    inv = lambda bid: _inverted(bounds.get(bid), "gamma", gamma_inv).exponent("gamma_inv")
    # same n, d, ε scaling as Wang et al.; one power of γ better (DP-GD), two (GD)
    for ours, prior in (("kan:fullbatch_dpgd", "kan:wang_dpgd"), ("kan:fullbatch_gd", "kan:wang_gd")):
        for v in ("n", "d", "epsilon"):
            assert bounds.get(ours).exponent(v) == bounds.get(prior).exponent(v)
    assert inv("kan:wang_dpgd") - inv("kan:fullbatch_dpgd") == 1
    assert inv("kan:wang_gd") - inv("kan:fullbatch_gd") == 2
    # Corollaries 5.3/5.5 match the DP-SCO lower bound in n, d and ε (both branches) ...
    lb = bounds.get("kan:dpsco_lower")
    for cid in ("kan:cor5.3", "kan:cor5.5"):
        c = bounds.get(cid)
        for v in ("n", "d", "epsilon"):
            assert c.exponent(v) == lb.exponent(v)
        assert (_inverted(c, "epsilon", epsilon_inv).exponent("epsilon_inv")
                == _inverted(lb, "epsilon", epsilon_inv).exponent("epsilon_inv"))
        cmp = bounds.compare(c, lb, "n", dict(n=1e6, d=16.0, epsilon=1.0, gamma=0.5))
        assert cmp.ratio >= 1 and cmp.exponent_gap == 0
    # ... and Corollary 5.3's γ⁻⁴ is one power worse than 5.5's γ⁻³ (the cost of m ≍ γ⁻⁶)
    assert (inv("kan:cor5.3"), inv("kan:cor5.5")) == (4, 3)


def test_explicit_bound_with_lemma_c12s_comparator_has_a_corrs_exponents():
    """Lemma C.11 with C.12's comparator (L_S(W*) ≤ 1/T, ‖W₀ − W*‖ ≤ τ_γ), R̄ = τ_γ and
    G_δ, C_clip, p, β constants has exactly Theorem 4.1's and C.13's exponents."""
    e = bounds.get("kan:thm4.1_explicit")
    sub = {sym("L_star"): 1 / T, sym("dist_star"): kb.TAU_GAMMA, sym("R_bar"): kb.TAU_GAMMA,
           sym("G"): 1, sym("C_clip"): 1, sym("p"): 6, beta: sp.Rational(1, 12)}
    red = _tmp(e.expr.subs(sub), "explicit_reduced")
    half = dict(lam=sp.Rational(1, 2))
    for v in ("T", "B", "m", "d", "eta", "noise_multiplier", "n"):
        assert red.exponent(v, **half) == bounds.get("kan:thmC.13").exponent(v, **half) \
            == bounds.get("kan:thm4.1").exponent(v, **half), v
    assert (_inverted(red, "gamma", gamma_inv).exponent("gamma_inv", **half)
            == _inverted(bounds.get("kan:thm4.1"), "gamma", gamma_inv).exponent("gamma_inv", **half))


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("bid", sorted(i for i, b in KAN_BOUNDS.items() if "n" in b.variables))
def test_n_zero_raises_naming_n(bid):
    b = bounds.get(bid)
    with pytest.raises(ValueError, match=r"\bn must be"):
        b(check_conditions=False, **_vals(b, n=0.0))
    with pytest.raises(ValueError, match=r"\bn must be"):
        b(check_conditions=False, **_vals(b, n=-3.0))


def test_lambda_outside_its_range():
    a = bounds.get("kan:thm4.1")
    with pytest.raises(ValueError, match=r"lam must be a finite number in \[0, ∞\)"):
        a(check_conditions=False, **_vals(a, lam=-0.1))
    assert not a.applies(**_vals(a, lam=1.0))                       # λ < 1 is a condition
    with pytest.raises(ValueError, match="undefined|not a finite"):
        bounds.get("kan:lam_calibration")(check_conditions=False, lam=1.0, T=10.0)
    assert bounds.get("kan:lam_calibration")(lam=0.0, T=10.0) == 1.0
    with pytest.raises(ValueError, match="corollary must be one of"):
        kcc.regime("cor9.9")
    with pytest.raises(ValueError, match="branch for cor5.6 must be one of"):
        kcc.regime("cor5.6", "private")


def test_evaluation_outside_conditions_warns():
    a = bounds.get("kan:thm4.1")
    with pytest.warns(bounds.core.OutsideConditionsWarning, match="kan:thm4.1"):
        a(**_vals(a, m=1.0))                                         # below γ⁻⁴
    assert bounds.get("kan:A_corr")(**_vals(a, m=1.0)) == a(check_conditions=False, **_vals(a, m=1.0))


@pytest.mark.parametrize("corollary, noise_free, noise", [
    ("cor5.3", kb.A_CORR_NOISE_FREE, kb.LAM_LINEAR * kb.A_CORR_L + kb.LAM_QUADRATIC * kb.A_CORR_Q),
    ("cor5.5", 1 / (gamma**2 * eta * T) + 1 / (gamma * sp.sqrt(B * T)) + eta * (1 / B + 1 / T),
     kappa / (gamma * B * sp.sqrt(T)) + eta * m * d * kappa**2 / B**2),
])
def test_private_over_nonprivate_stays_bounded_in_the_corollary_regimes(corollary, noise_free, noise):
    """The prediction behind 'the private/non-private ratio stays bounded': under each
    corollary's choices the noise terms never have a larger exponent than the noise-free terms.
    In the privacy branch they have the *same* exponent (the quadratic noise term is of the
    order of 1/(γ²ηT), Corollary 5.3), so the ratio tends to a constant > 1, not to 1."""
    nf, nz = _tmp(noise_free, "noise_free"), _tmp(noise, "noise")
    reg = kcc.regime(corollary, "nonprivate")
    for v in ("n", "epsilon"):
        e_nf = follows_from(_tmp(sp.Integer(1)), nf, reg, [v], **FIXED).exponents[v][0]
        e_nz = follows_from(_tmp(sp.Integer(1)), nz, reg, [v], **FIXED).exponents[v][0]
        assert e_nz <= e_nf, (v, e_nz, e_nf)
    reg = kcc.regime(corollary, "private")
    for a, c, b in PATHS[corollary]:
        r = _path_regime(reg, _path_subs(a, c, b))
        e_nf = follows_from(_tmp(sp.Integer(1)), nf, r, ["n"], **FIXED).exponents["n"][0]
        e_nz = follows_from(_tmp(sp.Integer(1)), nz, r, ["n"], **FIXED).exponents["n"][0]
        assert e_nz == e_nf, ((a, c, b), e_nz, e_nf)


def test_calibrated_noise_grows_like_t():
    """The paper's κ² ∝ (B/n)T/ε² (Thm 5.1) and B²T/(n²ε²) (Thm 5.4): exponent 1 in T (λ fixed)."""
    for bid in ("kan:thm5.1_noise", "kan:thmF.12_noise", "kan:thm5.4_noise", "kan:thmD.9_noise"):
        assert bounds.get(bid).exponent("T", lam=sp.Rational(9, 10)) == 1
    # with λ → 1 at fixed T the λ-factor is T, i.e. κ² ∝ T³ (Lemma F.11's contiguous block)
    f12 = bounds.get("kan:thmF.12_noise")
    at = dict(lam=1 - 1e-9, T=1e4, B=250.0, n=1000.0, epsilon=0.5, delta=1e-3)
    assert f12.local_slope("T", at) == pytest.approx(3.0, abs=0.05)


def test_asymptotic_and_explicit_calibrations_differ_by_constants_only():
    """Theorem 5.1 (≍) against F.12, and Theorem 5.4 against D.9: the ratio has zero local slope
    in every parameter once rT ≫ ln(1/δ) and ε ≪ log(1/δ); its level is the hidden constant
    (8 for F.12 up to ln(2.5/δ)/ln(1/δ); 32 for D.9)."""
    r_f = _tmp(bounds.get("kan:thmF.12_noise").expr / bounds.get("kan:thm5.1_noise").expr, "r_f")
    r_d = _tmp(bounds.get("kan:thmD.9_noise").expr / bounds.get("kan:thm5.4_noise").expr, "r_d")
    at = dict(lam=0.5, T=1e9, B=100.0, n=1e4, epsilon=0.01, delta=1e-6)
    for r in (r_f, r_d):
        for v in r.variables:
            if v != "delta":
                assert abs(r.local_slope(v, {k: at[k] for k in r.variables})) < 0.02, (r.id, v)
    assert r_f(**{k: at[k] for k in r_f.variables}) == pytest.approx(
        8 * math.log(2.5e6) / math.log(1e6), rel=0.02)
    assert r_d(**{k: at[k] for k in r_d.variables}) == pytest.approx(32, rel=0.01)


def _exponent_in(expr, reg: dict, var_or_path) -> sp.Expr:
    """Exponent of ``expr`` under a corollary's regime, in a variable or along a path in n."""
    if isinstance(var_or_path, str):
        sub = {sym(k): v for k, v in reg.items()}
        e = sp.sympify(expr).subs(sub, simultaneous=True).subs(FIXED_SYMS)
        return _tmp(e).exponent(var_or_path)
    sub = {sym(k): sp.sympify(v).subs(var_or_path, simultaneous=True) for k, v in reg.items()}
    sub.update(var_or_path)
    e = sp.sympify(expr).subs(sub, simultaneous=True).subs(FIXED_SYMS)
    return _tmp(e).exponent("n")


FIXED_SYMS = {sym(k): v for k, v in FIXED.items()}


def _directions(corollary):
    return ([("nonprivate", "n"), ("nonprivate", "epsilon")]
            + [("private", _path_subs(a, c, b)) for a, c, b in PATHS[corollary]])


def _assert_lesssim(lhs, rhs, corollary):
    """lhs ≲ rhs (polylogs and constants aside) in every direction of the corollary's regime."""
    for branch, direction in _directions(corollary):
        reg = kcc.regime(corollary, branch)
        el, er = _exponent_in(lhs, reg, direction), _exponent_in(rhs, reg, direction)
        assert sp.simplify(el - er) <= 0, (corollary, branch, direction, el, er)


def test_cor53_regime_satisfies_the_conditions_of_theorems_41_and_52():
    """C.24 verifies Theorem 4.1's window and step condition and Theorem 5.2's width condition
    at m ≍ γ⁻⁶: re-checked here, up to polylogs, in every direction of both branches."""
    m_reg = gamma**-6
    _assert_lesssim(kb.STEP_CONDITION, sp.Integer(1), "cor5.3")
    _assert_lesssim(kb.M_LO, m_reg, "cor5.3")
    _assert_lesssim(m_reg, kb.M_HI, "cor5.3")
    _assert_lesssim(kb.THM52_WIDTH.rhs, m_reg, "cor5.3")
    # ... and m ≍ γ⁻⁴ (Corollary 5.5's width) would break Theorem 5.2's width condition
    with pytest.raises(AssertionError):
        _assert_lesssim(kb.THM52_WIDTH.rhs, gamma**-4, "cor5.3")


def test_cor55_regime_satisfies_the_conditions_of_theorems_d14_and_d16():
    m_reg = gamma**-4
    for c in bounds.get("kan:A_van").conditions:
        _assert_lesssim(c.rhs, m_reg, "cor5.5")
    _assert_lesssim(kb.THMD16_WIDTH.rhs, m_reg, "cor5.5")


def test_cor56_regime_satisfies_theorem_e1s_width_condition():
    reg = kcc.regime("cor5.6", "delta_needed")
    rhs = _exponent_in(kb.THME1_WIDTH.rhs.subs(gamma, 1 / gamma_inv),
                       _regime_inverted(reg, "gamma", gamma_inv), "gamma_inv")
    assert rhs == 4                                       # ≲ γ⁻⁴ = m (C.24-style check in γ)
    assert _exponent_in(kb.THME1_WIDTH.rhs, reg, "n") == 0


def test_c13_has_a_corrs_lambda_structure():
    """The logs C.13 keeps do not change the λ structure: linear factor 1 − λ, quadratic factor
    (1−λ)² + λ²η, nothing else depends on λ."""
    c13 = bounds.get("kan:thmC.13").expr
    quad = bounds.get("kan:lam_quadratic").expr
    q_part = sp.expand(c13).coeff(kappa, 2)
    assert sp.simplify(sp.factor(q_part) / quad).has(lam) is False
    rest = sp.expand(c13 - q_part * kappa**2)
    assert sp.simplify(sp.diff(rest, lam, 2)) == 0
    assert sp.simplify(rest.subs(lam, 1) - rest.subs(kappa, 0).subs(lam, 1)) == 0   # (1−λ) factor


@pytest.mark.parametrize("calibration, expected", [
    # A_corr's quadratic noise term with κ calibrated (Theorems 4.1, 5.1): (n, ε, d, T, η, B, m)
    ("thm5.1", (-1, -2, 1, 1, 1, -1, 1)),
    ("thm5.4", (-2, -2, 1, 1, 1, 0, 1)),
])
def test_notes_exponent_table_for_the_calibrated_quadratic_term(calibration, expected):
    # Thm 5.1 with its √(rT log(1/δ)) term dropped (rT ≫ log(1/δ), KAN-E9) and λ fixed
    k2 = {"thm5.1": 2 * B * T / n * sp.log(1 / delta) / ((1 - lam)**2 * epsilon**2),
          "thm5.4": kb.KAPPA2_THM54}[calibration]
    q = _tmp(kb.A_CORR_Q.subs(kappa, sp.sqrt(k2)), "q_cal")
    got = tuple(q.exponent(v, lam=sp.Rational(1, 2)) for v in ("n", "epsilon", "d", "T", "eta", "B", "m"))
    assert got == expected


def test_min_regimes_agree_with_their_branches():
    both, priv, nonp = (kcc.regime("cor5.3", b) for b in ("both", "private", "nonprivate"))
    at = {n: 1e4, d: 1e4, gamma: sp.Rational(3, 10), epsilon: sp.Rational(1, 10)}   # n ≪ n_c
    assert float(both["T"].subs(at)) == pytest.approx(float(priv["T"].subs(at)))
    at[n] = 1e12                                                                      # n ≫ n_c
    assert float(both["T"].subs(at)) == pytest.approx(float(nonp["T"].subs(at)))
    b55, p55 = kcc.regime("cor5.5", "both"), kcc.regime("cor5.5", "private")
    at = {n: 1e4, d: 1e4, gamma: sp.Rational(3, 10), epsilon: sp.Rational(1, 10)}
    eta_b = float(b55["eta"].subs(at))
    assert eta_b == pytest.approx(float(p55["eta"].subs(at))) and eta_b < 1
    # the regimes' values never contain a key (so substitution order cannot matter)
    for cor, branches in kcc.REGIMES.items():
        for reg in branches.values():
            keys = {sym(k) for k in reg}
            assert not any(sp.sympify(v).free_symbols & keys for v in reg.values()), cor


def test_noise_drift_is_the_cancellation_identity():
    """Σ_{s≤t}(Z_s − λZ_{s−1}) = Z_t + (1−λ)Σ_{s<t}Z_s, so after t = T−1 updates the expected
    squared norm per coordinate is 1 + (1−λ)²(T−2): checked from the recursion's coefficients
    (symbolically) and by Monte Carlo."""
    drift = bounds.get("kan:noise_drift")
    per_coord = sp.simplify(drift.expr / (eta**2 * kb.C_PRIV**2 * m * d * sym("p")))
    for Tv in (2, 3, 7):
        coef = [sp.Integer(0)] * Tv                      # coefficient of Z_0..Z_{T−1} in the sum
        for s_ in range(1, Tv):
            coef[s_] += 1
            coef[s_ - 1] -= lam
        coef[0] = 0                                      # Z_0 = 0
        assert sp.expand(sum(c**2 for c in coef) - per_coord.subs(T, Tv)) == 0
    rng = np.random.default_rng(0)
    Tv, dim, lv = 40, 16, 0.7
    Z = rng.standard_normal((4000, Tv, dim))
    Z[:, 0] = 0.0
    total = (Z[:, 1:] - lv * Z[:, :-1]).sum(1)
    at = dict(eta=1.0, C_clip=1.0, noise_multiplier=1.0, B=1.0, m=1.0, d=float(dim), p=1.0,
              lam=lv, T=float(Tv))
    assert (total**2).sum(1).mean() == pytest.approx(drift(**at), rel=0.03)
    # independent noise accumulates ∝ T; correlated noise ∝ 1 + (1−λ)²(T−2)
    assert drift.local_slope("T", dict(at, lam=0.0, T=1e6)) == pytest.approx(1.0, abs=1e-5)
    assert drift(**dict(at, lam=0.9, T=1e3)) < drift(**dict(at, lam=0.0, T=1e3)) / 50


def test_branch_checks_can_fail_on_a_mutated_theorem():
    """The follows_from checks are not vacuous: with the quadratic noise term's ηκ²md/B² mutated
    to ηκ²md/B (a dropped batch factor), or the 1/(γ²ηT) term to 1/(γ²η√T), Corollary 5.3's
    privacy-branch rate no longer follows.  (A *smaller* term, e.g. √m for m in the noise or
    1/(γηT) for 1/(γ²ηT), still lets it follow: the check is one-sided where the bound is.)"""
    base = bounds.get("kan:thm4.1")
    mutants = {
        "batch": kb.A_CORR_NOISE_FREE + kb.LAM_LINEAR * kb.A_CORR_L
        + kb.LAM_QUADRATIC * kb.A_CORR_Q * B,
        "sqrt_T": kb.A_CORR - 1 / (gamma**2 * eta * T) + 1 / (gamma**2 * eta * sp.sqrt(T)),
    }
    for label, expr in mutants.items():
        mutant = Bound(id=f"kan:mutant_{label}", expr=expr, quantity="mutant", source="test")
        with pytest.raises(AssertionError):          # bounds.get passes a Bound object through
            _check_private_branch(_PRIV53, bounds.get("kan:cor5.3"), mutant, "cor5.3")
    _check_private_branch(_PRIV53, bounds.get("kan:cor5.3"), base.id, "cor5.3")   # the original


def test_cor53_raw_calibration_agrees_inside_the_regime():
    """Along the paths (ρT → ∞) Theorem 5.1's κ² as printed gives the same exponents as C.24's
    κ² ≲ T/ε²: the simplification only matters outside F.12's rT ≥ 3 ln(2/δ) (KAN-E9)."""
    for a, c, b in PATHS["cor5.3"]:
        path = _path_subs(a, c, b)
        t_path = (n * epsilon * gamma**2 / sp.sqrt(d)).subs(path, simultaneous=True)
        raw = _path_regime(kcc.regime_cor53_raw(n * epsilon * gamma**2 / sp.sqrt(d)), path)
        raw["T"] = t_path
        ours = _path_regime(kcc.regime("cor5.3", "private"), path)
        e_raw = follows_from(_tmp(sp.Integer(1)), bounds.get("kan:thm4.1"), raw, ["n"], **FIXED)
        e_ours = follows_from(_tmp(sp.Integer(1)), bounds.get("kan:thm4.1"), ours, ["n"], **FIXED)
        assert e_raw.exponents["n"][0] == e_ours.exponents["n"][0], (a, c, b)



# ------------------------------------------------------------------ bounds of the rate experiments
def test_etaT_collapse_bound_is_fullbatch_gd_in_the_product():
    """kan:fullbatch_gd_etaT is kan:fullbatch_gd_opt at ηT = etaT; flat in η along it, while the
    printed η ≍ 1 form (kan:fullbatch_gd_T_only) grows like η there."""
    gd, col, printed = (bounds.get(i) for i in ("kan:fullbatch_gd_opt", "kan:fullbatch_gd_etaT",
                                                "kan:fullbatch_gd_T_only"))
    for eta, T in ((0.25, 800.0), (1.0, 200.0), (4.0, 50.0)):
        assert float(col(gamma=0.3, etaT=eta * T)) == pytest.approx(float(gd(gamma=0.3, eta=eta, T=T)))
    assert printed.exponent("T") == -1 and "eta" not in printed.variables


def test_minibatch_terms_are_A_non_less_its_fullbatch_term():
    diff = sp.simplify(bounds.get("kan:A_non").expr - bounds.get("kan:fullbatch_gd_opt").expr
                       - bounds.get("kan:A_non_minibatch").expr)
    assert diff == 0
    mb = bounds.get("kan:A_non_minibatch")
    assert mb.exponent("B", eta=1, T=200, gamma=0.3) == sp.Rational(-1, 2)


def test_cor53_noise_ratio_is_bounded_in_n_and_its_quadratic_share_is_gamma6_m():
    """C.24: under Corollary 5.3's privacy-branch choices every noise term of A_corr over the
    optimisation term is O(1) in n; the quadratic one is γ⁶m/ρ² (= 1/ρ² at m = γ⁻⁶)."""
    b = bounds.get("kan:cor5.3_noise_ratio")
    assert b.exponent("n") == 0
    g, m_, r = sym("gamma"), sym("m"), sym("sample_frac")
    assert sp.simplify(b.expr.coeff(m_) - g**6 / r**2) == 0
    v = dict(d=5, epsilon=1.0, gamma=0.32, m=32, sample_frac=0.5)
    assert 1 < float(b(n=600, **v)) < 1.5 and float(b(n=2400, **v)) < float(b(n=600, **v))


def test_mean_field_drift_is_the_drift_over_m():
    nd, mf = bounds.get("kan:noise_drift"), bounds.get("kan:noise_drift_mean_field")
    assert sp.simplify(nd.expr / mf.expr - sym("m")) == 0
    assert nd.exponent("m") == 1 and "m" not in mf.variables


def test_tuned_eta_noise_term_is_the_balanced_eta_terms():
    """min over η of 1/(γ²ηT) + ηmdκ²/n² is 2√(md)κ/(γn√T); with κ ∝ √T/ε that is ∝ √(md)/(γnε)."""
    b = bounds.get("kan:tuned_eta_noise")
    assert b.exponent("epsilon") == -1 and b.exponent("n") == -1
    assert b.exponent("m") == sp.Rational(1, 2) and b.exponent("d") == sp.Rational(1, 2)
    assert b.exponent("T") == 0
    e_, k = sym("eta"), sym("noise_multiplier")
    g, T_, n_, m_, d_ = (sym(s) for s in ("gamma", "T", "n", "m", "d"))
    terms = 1 / (g**2 * e_ * T_) + e_ * m_ * d_ * k**2 / n_**2
    star = sp.solve(sp.diff(terms, e_), e_)
    best = sp.simplify(terms.subs(e_, [s for s in star if s.is_positive][0]))
    assert sp.simplify(best - 2 * sp.sqrt(m_ * d_) * k / (g * n_ * sp.sqrt(T_))) == 0


def test_fixed_kappa_noise_ratio_is_A_corrs_noise_part_over_its_lam0_value():
    """KAN-E37: kan:lam_fixed_kappa_ratio is (A_corr − noise-free part)(λ)/(same)(0), exactly;
    its gap form is the same function of 1 − λ; the explicit form equals it at 12β = 1; as
    λ → 1 it keeps the floor Qη/(L + Q) that (1−λ) alone lacks."""
    r, rx, rg = (bounds.get(i) for i in ("kan:lam_fixed_kappa_ratio",
                                          "kan:lam_fixed_kappa_ratio_explicit",
                                          "kan:lam_fixed_kappa_ratio_gap"))
    noise = kb.A_CORR - kb.A_CORR_NOISE_FREE
    assert sp.simplify(r.expr - noise / noise.subs(lam, 0)) == 0
    assert sp.simplify(r.expr.subs(lam, 1 - sym("lam_gap")) - rg.expr) == 0
    assert sp.simplify(rx.expr.subs(beta, sp.Rational(1, 12)) - r.expr) == 0
    floor = kb.A_CORR_Q * eta / (kb.A_CORR_L + kb.A_CORR_Q)
    assert sp.simplify(sp.limit(r.expr, lam, 1) - floor) == 0
    assert bounds.get("kan:lam_linear_gap").edge_exponent("lam_gap") == 1   # lam_gap → 0
    with pytest.raises(ValueError, match="cannot go to ∞"):
        bounds.get("kan:lam_linear_gap").exponent("lam_gap")


def test_factored_declarations_keep_their_expressions():
    """The factoring of the Gaussian κ² shared by the E12 noise terms, and the non-private
    upper bounds registered through one function, are the expressions and fields written out."""
    k2 = 2 * T * sp.log(sp.Rational(5, 4) / delta) / epsilon**2
    tuned, fixed = bounds.get("kan:tuned_eta_noise"), bounds.get("kan:fixed_eta_noise")
    assert sp.simplify(tuned.expr - 2 * sp.sqrt(m * d) * sp.sqrt(k2) / (gamma * n * sp.sqrt(T))) == 0
    assert sp.simplify(fixed.expr - eta * m * d * k2 / n**2) == 0
    assert bounds.get("kan:fullbatch_gd_opt").expr == 1 / (gamma**2 * eta * T)
    assert bounds.get("kan:cor5.6").expr == 1 / (gamma**2 * n)
    for bid in ("kan:A_non", "kan:fullbatch_gd_opt", "kan:fullbatch_gd_etaT", "kan:fullbatch_gd_T_only",
                "kan:A_non_minibatch", "kan:thmE.1_gen", "kan:thmE.1_pop", "kan:cor5.6_opt",
                "kan:cor5.6", "kan:fullbatch_gd", "kan:wang_gd"):
        b = bounds.get(bid)
        assert (b.kind, b.privacy) == ("upper", kb._NONPRIVATE), bid
