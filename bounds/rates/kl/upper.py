"""Upper bounds of the KL paper (Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private
Non-Convex Optimization under the KL Condition with Optimal Rates"): Theorem 1 (KL Spider),
Theorem 2 and Lemma 3 (proximal point), Theorems 4 and 5 (adaptive noisy GD), Theorem 9
(Algorithm 4), and the shared sub-expressions of the algorithms' parameter choices.  The ids and
the conventions (constants 1, logs as printed) are listed in :mod:`bounds.rates.kl`.
"""
from __future__ import annotations

import sympy as sp

from bounds.core import UNIT_OPEN, Bound, register, sym

n, d, rho, beta = sym("n"), sym("d"), sym("rho"), sym("beta")
kappa, gamma = sym("kappa"), sym("gamma")
L0, L1, L1t, F0 = sym("L0"), sym("L1"), sym("L1t"), sym("F0")
T = sym("T")
D = sym("D")
epsilon, delta = sym("epsilon"), sym("delta", UNIT_OPEN)
tau, lambda_g = sym("tau"), sym("lambda_g")

_sqrt, _log = sp.sqrt, sp.log

_ZCDP = "ρ-zCDP, replace-one neighbouring datasets (Definition 2)"
_DP = "(ε, δ)-DP, replace-one neighbouring datasets (Definition 3)"

# ------------------------------------------------------------------------------------------------
# Shared sub-expressions (public: the algorithms' parameter choices, in the paper's notation)
# ------------------------------------------------------------------------------------------------

#: A = log(n√ρ/β), the log factor of Algorithm 3 / Theorems 4, 5.
A_LOG = _log(n * _sqrt(rho) / beta)

#: Algorithm 1 / Theorem 1: number of rounds K (not rounded up: the theorem states it unrounded).
K_ALG1 = ((1 + 64 * (1 / F0)**((2 - kappa) / kappa) * gamma**2 * L1)
          * (_log(F0) + kappa * _log(n * _sqrt(rho) / (gamma * L0 * _sqrt(d)))))

#: Algorithm 1 / Theorem 1: per-event failure probability β'.
BETA_PRIME_ALG1 = (beta / K_ALG1) * (gamma * L0 * _sqrt(K_ALG1 * d)
                                     / (n * _sqrt(rho) * F0**(1 / kappa)))**(2 - kappa)

#: Algorithm 2 / Theorem 2: number of proximal rounds T.
T_ALG2 = ((1 + 32 * F0**((kappa - 2) / kappa) * gamma**2 * L1t)
          * (_log(F0) + kappa * _log(n * _sqrt(rho) / (gamma * L0 * _sqrt(d)))))

#: Algorithm 2 / Theorem 2: failure probability β' = β/T of each inner call.
BETA_PRIME_ALG2 = beta / T_ALG2

#: The log factor of Lemma 3 / Theorem 2, log(n² log²(1/β')/(dβ')), with Algorithm 2's β'.
LOG_ALG2 = _log(n**2 * _log(1 / BETA_PRIME_ALG2)**2 / (d * BETA_PRIME_ALG2))

#: Theorem 4: number of phases p_max in the analysis of Algorithm 3.
P_MAX = (1 + 8 * gamma**2 * L1) * (_log(F0) + 2 * kappa / (4 - kappa)
                                   * _log(n * _sqrt(rho) / (gamma * L0)))

#: Theorem 4's explicit condition on ρ: L0² log(n√ρ/β)/(L1 n) ≤ √ρ.
THM4_CONDITION = sp.Le(L0**2 * A_LOG / (L1 * n), _sqrt(rho))

_KAPPA_12 = (sp.Ge(kappa, 1), sp.Le(kappa, 2))


# ------------------------------------------------------------------------------------------------
# Section 3: KL Spider (κ ∈ [1, 2]) and its lower bound
# ------------------------------------------------------------------------------------------------

_THM1_ASSUMPTIONS = (
    "κ ∈ [1, 2], γ > 0",
    "f(·;x) L0-Lipschitz and L1-smooth on the ball B_B(w0), "
    "B = Õ(F0^{1/κ}/(γL1) + F0^{(κ−1)/κ}γ)",
    "F(·;S) satisfies (γ, κ)-KL* on B_B(w0) w.r.t. the closest minimiser w*",
    "input F0 ≥ F(w0;S) − F(w*;S) with F0 ≤ (L0γ)^κ (Algorithm 1's input condition)",
    "full-batch gradients; K, β' as in Algorithm 1 (unrounded)",
)

THM1 = register(Bound(
    id="kl:thm1",
    expr=(gamma * L0 * _sqrt(d * K_ALG1 * _log(1 / BETA_PRIME_ALG1)) / (n * _sqrt(rho)))**kappa,
    quantity="excess empirical risk F(w̄;S) − F(w*;S) of Algorithm 1's output, "
             "with probability ≥ 1 − β",
    source="KL paper, Theorem 1 (Section 3, Algorithm 1 KL Spider; proof in Section 3 and App. B)",
    assumptions=_THM1_ASSUMPTIONS,
    privacy=_ZCDP + "; Theorem 1 states ρ, Lemma 8 (App. B.1) proves only 2ρ (errata KL-E14)",
    kind="upper",
    conditions=_KAPPA_12 + (sp.Le(F0, (L0 * gamma)**kappa),),
    notes="First (O) form of Theorem 1, constant 1.  The proof ends with Φ̂_K ≤ "
          "(32γL0√(Kd log(1/β'))/(n√ρ))^κ, i.e. the hidden constant is 32^κ (Algorithm 1's Φ̂ "
          "floor is 32^κ times this expression).  K and β' are Algorithm 1's, unrounded; "
          "log(F0) is kept, so K and the bound are undefined when n√ρ/(γL0√d) is too small.  "
          "Exponents: n −κ, d κ/2, ρ −κ/2; local slopes are flatter by the log factors "
          "(−1.245 at n = 1e6 on the p = 4 radial instance).",
))

THM1_SIMPLIFIED = register(Bound(
    id="kl:thm1_simplified",
    expr=(gamma * L0 * _sqrt(d) * _sqrt(1 + (1 / F0)**((2 - kappa) / kappa) * gamma**2 * L1)
          / (n * _sqrt(rho)))**kappa,
    quantity="excess empirical risk F(w̄;S) − F(w*;S) of Algorithm 1 (Õ: polylog factors dropped), "
             "with probability ≥ 1 − β",
    source="KL paper, Theorem 1 (Section 3), second (Õ) form",
    assumptions=_THM1_ASSUMPTIONS,
    privacy=THM1.privacy,
    kind="upper",
    conditions=THM1.conditions,
    notes="The Õ form printed in Theorem 1; equals kl:thm1 up to the factor "
          "(K log(1/β')/(1 + (1/F0)^{(2−κ)/κ}γ²L1))^{κ/2}, i.e. polylog(n) up to constants.  With "
          "F0 = (L0γ)^κ, (1/F0)^{(2−κ)/κ}γ²L1 = γ^κ L1/L0^{2−κ} (the paper's remark).",
))


#: The n-slope of Theorem 1 as a function of κ, for the κ-continuum check: ``slope_thm1`` is
#: |secant log-log n-slope of kl:thm1 over [n/10, 10n]| at an instance's own κ (and γ, L0, L1,
#: F0, d, ρ), computed from kl:thm1 itself (:func:`thm1_nslope`); the identity says the measured
#: slope of Algorithm 1's excess equals it.  A regression of measured on predicted slopes across
#: κ then has slope 1 (the log-log slope of this identity) and level 1 at every κ.
slope_thm1 = sym("slope_thm1")
_NSLOPE_RATIO = 10.0

THM1_NSLOPE = register(Bound(
    id="kl:thm1_nslope",
    expr=slope_thm1,
    quantity="|secant log-log slope in n of Algorithm 1's excess over [n/10, 10n]|, against "
             "the same secant of Theorem 1's bound at the instance's κ",
    source="KL paper, Theorem 1 (Section 3): its n-exponent as a function of κ ∈ [1, 2]",
    assumptions=_THM1_ASSUMPTIONS,
    privacy=THM1.privacy,
    kind="identity",
    notes="Theorem 1 is tight on the radial instances (KL with equality, the stop at the Φ̂ "
          "floor), so the measured n-slope equals the bound's at every κ; the asymptotic value "
          "is κ, the secant is flatter by the logs of K and β' (1.257 at κ = 4/3, n = 1e7).",
))


#: The competing reading of how κ enters the n-rate: ``slope_thm4_main`` is the same secant of
#: Theorem 4's first term (exponent 2κ/(4−κ), what Algorithm 3 attains without knowing κ).
slope_thm4_main = sym("slope_thm4_main")

THM4_MAIN_NSLOPE = register(Bound(
    id="kl:thm4_main_nslope",
    expr=slope_thm4_main,
    quantity="|secant log-log slope in n of an excess over [n/10, 10n]|, against the same "
             "secant of Theorem 4's first term at the instance's κ",
    source="KL paper, Theorem 4 (Section 5): its first term's n-exponent as a function of κ",
    privacy=THM1.privacy,
    kind="identity",
    notes="The competitor of kl:thm1_nslope across κ: 2κ/(4−κ) < κ for κ < 2, equal at κ = 2.",
))


def secant_nslope(bound_id: str, values: dict, ratio: float = _NSLOPE_RATIO) -> float:
    """|d log b / d log n| of bound ``bound_id`` as the secant over [n/ratio, n·ratio] at
    ``values`` (all of the bound's symbols; n the centre), every log factor kept."""
    import math

    from bounds.core import get

    if not ratio > 1.0:
        raise ValueError(f"ratio must be in (1, inf), got {ratio!r}")
    b = get(bound_id)
    hi = b(**{**values, "n": values["n"] * ratio}, check_conditions=False)
    lo = b(**{**values, "n": values["n"] / ratio}, check_conditions=False)
    return -(math.log(hi) - math.log(lo)) / (2.0 * math.log(ratio))


# ------------------------------------------------------------------------------------------------
# Section 4: proximal point (κ ≥ 2)
# ------------------------------------------------------------------------------------------------

_THM2_ASSUMPTIONS = (
    "κ ≥ 2, γ > 0",
    "f(·;x) L0-Lipschitz; F(·;S) L̃1-weakly convex and (γ, κ)-KL* on B_B(w0), "
    "B = Õ((L0/L̃1)(1 + √(Td log(n²log²(1/β')/(dβ')))/(n√ρ)) + L0F0^{(κ−2)/κ}γ²); no smoothness",
    "inner solver 𝒜 = Algorithm 4 (Lemma 3 / Theorem 9) at budget ρ/T and failure β' = β/T",
    "T, β' as in Algorithm 2 (unrounded)",
)

THM2 = register(Bound(
    id="kl:thm2",
    expr=(gamma * L0 * _sqrt(T_ALG2 * d * LOG_ALG2) / (n * _sqrt(rho)))**kappa,
    quantity="excess empirical risk F(w_T;S) − F(w*;S) of Algorithm 2's output, "
             "with probability ≥ 1 − β",
    source="KL paper, Theorem 2 (Section 4, Algorithm 2; proof in App. C.2)",
    assumptions=_THM2_ASSUMPTIONS,
    privacy=_ZCDP + " (T calls at ρ/T each, composed)",
    kind="upper",
    conditions=(sp.Ge(kappa, 2),),
    notes="First (O) form, constant 1, T = (1 + 32F0^{(κ−2)/κ}γ²L̃1)[log F0 + κ log(n√ρ/(γL0√d))] "
          "and β' = β/T.  The proof's contraction factor is printed c = 1 + F0^{(2−κ)/κ}/(32γ²L1) "
          "(L1, a smoothness constant the section does not assume) while T uses L̃1 and the rest of "
          "the proof uses L̃1: read L̃1 throughout (errata KL-E11).  L̃1 cancels out of the rate "
          "except through T.  The proof's induction step assumes F(w_t*) − F* ≥ Φ̂_t from "
          "F(w_t) − F* > Φ̂_t, which does not follow when the inner excess is comparable to Φ̂_t "
          "(errata KL-E13); the rate is encoded as stated.",
))

THM2_SIMPLIFIED = register(Bound(
    id="kl:thm2_simplified",
    expr=(gamma * L0 * _sqrt(d * (1 + F0**((kappa - 2) / kappa) * gamma**2 * L1t))
          / (n * _sqrt(rho)))**kappa,
    quantity="excess empirical risk of Algorithm 2 (Õ: polylog factors dropped), "
             "with probability ≥ 1 − β",
    source="KL paper, Theorem 2 (Section 4), second (Õ) form",
    assumptions=_THM2_ASSUMPTIONS,
    privacy=THM2.privacy,
    kind="upper",
    conditions=THM2.conditions,
    notes="The Õ form printed in Theorem 2 (T's log factor and the log of Lemma 3 dropped).",
))

LEM3 = register(Bound(
    id="kl:lem3",
    expr=L0**2 * d * LOG_ALG2 * T_ALG2 / (L1t * n**2 * rho),
    quantity="excess F_t(w_t;S) − min F_t of each inner call of Algorithm 2 on the L̃1-strongly "
             "convex F_t = F + L̃1‖· − w_{t−1}‖², with probability ≥ 1 − β' per call",
    source="KL paper, Lemma 3 (Section 4; implemented by Algorithm 4, App. E) as used in the proof "
           "of Theorem 2 (App. C.2)",
    assumptions=("f(·;x) L0-Lipschitz and L̃1-weakly convex, so F_t is L̃1-strongly convex",
                 "each call gets budget ρ/T and failure probability β' = β/T, T as in Algorithm 2"),
    privacy=_ZCDP + " (each inner call ρ/T-zCDP)",
    kind="upper",
    notes="Lemma 3 states O(L0² d log(n² log²(1/β')/(dβ'))/(L̃1 n² ρ')) for a ρ'-zCDP call; inside "
          "Algorithm 2, ρ' = ρ/T, which gives the factor T (the proof of Theorem 2 writes "
          "τ ≤ aL0²d log(…)T/(L̃1n²ρ)).  Constant 1.  Exponent in n is −2: the competitor the "
          "outer loop's −κ rate must beat for κ > 2.",
))


# ------------------------------------------------------------------------------------------------
# Section 5: adaptive noisy gradient descent (Algorithm 3)
# ------------------------------------------------------------------------------------------------

_THM4_ASSUMPTIONS = (
    "κ ∈ [1, 2], β, γ > 0; κ and γ unknown to the algorithm (inputs only L0, L1, ρ, β, w0)",
    "ρ satisfies L0² log(n√ρ/β)/(L1 n) ≤ √ρ (explicit condition of Theorem 4)",
    "F(·;S) L1-smooth and L0-Lipschitz, and (γ, κ)-KL* on the valley 𝒮 (the path-connected "
    "component containing w0 of {F ≤ α}) w.r.t. w*_𝒮 = argmin_𝒮 F",
    "A = log(n√ρ/β); p_max = (1 + 8γ²L1)[log F0 + (2κ/(4−κ)) log(n√ρ/(γL0))]",
)
_THM4_QUANTITY = ("excess empirical risk F(w_T;S) − F(w*_𝒮;S) of Algorithm 3's iterate w_T, "
                  "with probability ≥ 1 − 2β")
_THM4_SOURCE = "KL paper, Theorem 4 (Section 5, Algorithm 3; proof in App. D.3)"
_THM4_PRIVACY = _ZCDP + " (Theorem 3: fully adaptive composition, stop at ρ/2 + last step ρ/2)"

THM4_MAIN = register(Bound(
    id="kl:thm4_main",
    expr=(gamma * L0 * _sqrt(d * A_LOG * P_MAX) / (n * _sqrt(rho)))**(2 * kappa / (4 - kappa)),
    quantity="first (d-dependent) term of Theorem 4's bound on " + _THM4_QUANTITY,
    source=_THM4_SOURCE + ", first term",
    assumptions=_THM4_ASSUMPTIONS,
    privacy=_THM4_PRIVACY,
    kind="upper",
    conditions=_KAPPA_12 + (THM4_CONDITION,),
    notes="Exponents: n −2κ/(4−κ), d κ/(4−κ), ρ −κ/(4−κ).  2κ/(4−κ) ≤ κ on [1, 2] with equality "
          "only at κ = 2: the price of not knowing κ.  Dominates kl:thm4_floor only for "
          "d ≳ (n√ρ)^{κ/2}.  Constant 1.",
))

THM4_FLOOR = register(Bound(
    id="kl:thm4_floor",
    expr=(sp.Max(gamma**2, 1) * L0**2 * A_LOG / (sp.Min(L1, 1) * n * _sqrt(rho)))**(kappa / 2),
    quantity="second (d-free) term of Theorem 4's bound on " + _THM4_QUANTITY,
    source=_THM4_SOURCE + ", second term",
    assumptions=_THM4_ASSUMPTIONS,
    privacy=_THM4_PRIVACY,
    kind="upper",
    conditions=_KAPPA_12 + (THM4_CONDITION,),
    notes="From the σ̂ = L0/(√n ρ^{1/4}) noise on the gradient-norm estimate N_t (Lemmas 12, 13).  "
          "Exponents: n −κ/2, d 0, ρ −κ/4.  The introduction prints this term as (1/n)^{κ/2} "
          "(no privacy parameter); the theorem's (1/(n√ρ))^{κ/2} is used (errata KL-E10).",
))

THM4_CAP_TERM = sp.Piecewise(((P_MAX / (n * _sqrt(rho)))**(kappa / (2 - kappa)), kappa < 2),
                             (0, True))

THM4 = register(Bound(
    id="kl:thm4",
    expr=THM4_MAIN.expr + THM4_FLOOR.expr + THM4_CAP_TERM,
    quantity=_THM4_QUANTITY,
    source=_THM4_SOURCE,
    assumptions=_THM4_ASSUMPTIONS,
    privacy=_THM4_PRIVACY,
    kind="upper",
    conditions=_KAPPA_12 + (THM4_CONDITION,),
    notes="All three terms as printed, constant 1.  The third term (p_max/(n√ρ))^{κ/(2−κ)} (from "
          "the iteration cap T ≤ n√ρ/2) has exponent ∞ at κ = 2, where the paper's own κ = 2 "
          "special case drops it; it is encoded as a Piecewise that is 0 at κ = 2, so the bound "
          "evaluates at κ = 2 (with κ symbolic, its exponent is a Piecewise on κ < 2).  It never dominates asymptotically since κ/(2−κ) ≥ κ/2.",
))

THM4_SIMPLIFIED = register(Bound(
    id="kl:thm4_simplified",
    expr=(_sqrt(d) / (n * _sqrt(rho)))**(2 * kappa / (4 - kappa)) + (1 / (n * _sqrt(rho)))**(kappa / 2),
    quantity=_THM4_QUANTITY + " (Õ: polylog factors and problem constants dropped)",
    source=_THM4_SOURCE + ", simplified Õ form",
    assumptions=_THM4_ASSUMPTIONS,
    privacy=_THM4_PRIVACY,
    kind="upper",
    conditions=_KAPPA_12,
    notes="The theorem's simplification (uses κ/(2−κ) ≥ κ/2 to drop the third term).  The two "
          "terms are equal at d* = (n√ρ)^{κ/2}.  Second term read as (1/(n√ρ))^{κ/2}, not the "
          "introduction's (1/n)^{κ/2} (errata KL-E10).",
))

#: The introduction's statement of Theorem 4 (§1.1), kept as the competing reading of KL-E10:
#: its d-free term (1/n)^{κ/2} carries no privacy parameter, so its ρ-slope is 0 where it rules.
THM4_INTRO = register(Bound(
    id="kl:thm4_intro",
    expr=(_sqrt(d) / (n * epsilon))**(2 * kappa / (4 - kappa)) + (1 / n)**(kappa / 2),
    quantity=_THM4_QUANTITY + " as stated in the introduction (Õ, (ε, δ) form)",
    source="KL paper, Section 1.1 (contributions), statement of the adaptive rate",
    assumptions=_THM4_ASSUMPTIONS,
    privacy="(ε, δ)-DP via ρ = Θ(ε²/log(1/δ)), replace-one",
    kind="upper",
    conditions=_KAPPA_12,
    notes="Competing reading of Theorem 4's second term (errata KL-E10); the theorem itself "
          "has (1/(n√ρ))^{κ/2}.  Experiments map ρ to ε by the zCDP→DP conversion.",
))

THM4_KAPPA1 = register(Bound(
    id="kl:thm4_kappa1",
    expr=(_sqrt(d) / (n * _sqrt(rho)))**sp.Rational(2, 3) + 1 / (_sqrt(n) * rho**sp.Rational(1, 4)),
    quantity=_THM4_QUANTITY + " at κ = 1 (Õ)",
    source="KL paper, remark after Theorem 4 (Section 5), κ = 1",
    assumptions=("κ = 1 (slowest KL regime)",) + _THM4_ASSUMPTIONS[1:],
    privacy=_THM4_PRIVACY,
    kind="upper",
    notes="kl:thm4_simplified at κ = 1 (identical expression).",
))

THM4_KAPPA2 = register(Bound(
    id="kl:thm4_kappa2",
    expr=d / (n**2 * rho) + 1 / (n * _sqrt(rho)),
    quantity=_THM4_QUANTITY + " at κ = 2, the PL case (Õ)",
    source="KL paper, remark after Theorem 4 (Section 5), κ = 2",
    assumptions=("κ = 2 (PL with μ = 1/(2γ²))",) + _THM4_ASSUMPTIONS[1:],
    privacy=_THM4_PRIVACY,
    kind="upper",
    notes="kl:thm4_simplified at κ = 2; 'nearly optimal' (the d/(n²ρ) term matches the strongly "
          "convex lower bound; the d-free 1/(n√ρ) dominates unless d ≳ n√ρ).",
))

_THM5_ASSUMPTIONS = (
    "f(·;x) L1-smooth and L0-Lipschitz; no KL condition (possibly non-convex)",
    "T + 1 = largest t reached by Algorithm 3; t* drawn from {0..T} with probability "
    "∝ exp(−(n√ρ/(2L0))‖∇F(w_t;S)‖) (exponential mechanism)",
    "F0 ≥ F(w0;S) − inf F",
)
_THM5_PRIVACY = (_ZCDP + " at total 2ρ as stated (ρ for the run, Theorem 3, plus ρ/2 for the "
                 "exponential mechanism via Lemma 14: really 3ρ/2, errata KL-E12)")
_THM5_QUANTITY = "gradient norm ‖∇F(w_t*;S)‖ at the selected iterate, with probability ≥ 1 − 3β"

THM5 = register(Bound(
    id="kl:thm5",
    expr=(sp.Min(_sqrt(F0 * L1 / T), (L0 * _sqrt(F0 * L1 * d) / (n * _sqrt(rho)))**sp.Rational(1, 2))
          + L0 * _sqrt(A_LOG) / (_sqrt(n) * rho**sp.Rational(1, 4))),
    quantity=_THM5_QUANTITY,
    source="KL paper, Theorem 5 (Section 5.1; proof in App. D.6)",
    assumptions=_THM5_ASSUMPTIONS,
    privacy=_THM5_PRIVACY,
    kind="upper",
    notes="As stated in the theorem, constant 1, with √log(n√ρ/β) in the last term; the proof's "
          "Eq. (15)-(16) carry log rather than √log in places (errata KL-E12).  T is the "
          "(data-dependent) number of iterations Algorithm 3 ran.",
))

THM5_BEST = register(Bound(
    id="kl:thm5_best",
    expr=_sqrt(d) / (n * _sqrt(rho)) + 1 / (_sqrt(n) * rho**sp.Rational(1, 4)),
    quantity=_THM5_QUANTITY + ", best case (Õ)",
    source="KL paper, discussion after Theorem 5 (Section 5.1), best case",
    assumptions=_THM5_ASSUMPTIONS + ("most gradients along the run are Ω(1), so "
                                     "T = Θ̃(min{n√ρ, n²ρ/d})",),
    privacy=_THM5_PRIVACY,
    kind="upper",
    notes="The abstract advertises 'as fast as Õ(√d/(n√ρ))' but drops the d-free second term, "
          "which dominates unless d ≳ n√ρ (errata KL-E15): asymptotic exponents n −1/2, d 1/2, "
          "ρ −1/4; the first term alone has n −1, ρ −1/2.",
))

THM5_WORST = register(Bound(
    id="kl:thm5_worst",
    expr=d**sp.Rational(1, 4) / (_sqrt(n) * rho**sp.Rational(1, 4)) + 1 / (_sqrt(n) * rho**sp.Rational(1, 4)),
    quantity=_THM5_QUANTITY + ", worst case (Õ)",
    source="KL paper, discussion after Theorem 5 (Section 5.1), worst case",
    assumptions=_THM5_ASSUMPTIONS,
    privacy=_THM5_PRIVACY,
    kind="upper",
    notes="Recovers the noisy-GD rate (√d/(n√ρ))^{1/2} (kl:prior_stationary_noisy_gd) up to the "
          "d-free term; exponents n −1/2, d 1/4, ρ −1/4.",
))


THM5_ABSTRACT = register(Bound(
    id="kl:thm5_abstract",
    expr=_sqrt(d) / (n * _sqrt(rho)),
    quantity=_THM5_QUANTITY + ", as the abstract advertises it (Õ)",
    source="KL paper, abstract ('as fast as Õ(√d/(n√ρ))'), the first term of Theorem 5's best case",
    assumptions=_THM5_ASSUMPTIONS,
    privacy=_THM5_PRIVACY,
    kind="upper",
    notes="The abstract's rate drops Theorem 5's d-free term 1/(√n ρ^{1/4}) (errata KL-E15), "
          "which dominates unless d ≳ n√ρ: exponents n −1, d 1/2, ρ −1/2 against the best "
          "case's −1/2, 0, −1/4 at small d.  A competitor reading, rejected at d ≤ 256.",
))


# ------------------------------------------------------------------------------------------------
# Appendix E: Algorithm 4 (inner solver)
# ------------------------------------------------------------------------------------------------

#: Theorem 9 (Appendix E): Algorithm 4, noisy projected GD on the L̃1-strongly convex objective
#: F̃(w;S) = F(w;S) + L̃1‖w − w0‖².
THM9 = register(Bound(
    id="kl:thm9",
    expr=L0**2 * d * sp.log(n**2 * sp.log(2 / beta)**2 / (d * beta)) / (L1t * n**2 * rho),
    quantity="excess empirical risk F̃(w̄;S) − F̃(w*;S) of Algorithm 4's weighted average w̄, "
             "with probability ≥ 1 − β",
    source="KL paper, Theorem 9 (Appendix E, Algorithm 4)",
    assumptions=(
        "w ↦ f(w;x) is L0-Lipschitz and L̃1-weakly convex for every x",
        "F̃(w;S) = F(w;S) + L̃1‖w − w0‖² (hence L̃1-strongly convex)",
        "T = n²ρ log²(2/β)/d, η_t = 1/(L̃1 t), σ² = 4L0²T/(n²ρ), projection onto B(w0, L0/(2L̃1))",
    ),
    privacy=_ZCDP,
    kind="upper",
    conditions=(sp.Ge(n**2 * rho * sp.log(2 / beta)**2 / d, 1),),  # at least one iteration
    notes="The paper's σ² spends ρ/2, not ρ (per-step sensitivity 2L0/n, T−1 steps); "
          "algorithms.kl.condition.noisy_gd spends exactly ρ. See docs/errata.md (KL-E1).",
))
