"""Lower bounds, prior rates and privacy conversions of the KL paper (Menart et al.): Corollary 1
and its (ε, δ) form, Theorems 6–8, the stationary-point and global lower bounds the paper
quotes, [WYX17] and [ABG+23]'s rates, the zCDP ↔ (ε, δ) conversions and Lemma 14, and the
derivations of corollaries from their theorems (ids listed in :mod:`bounds.rates.kl`).
"""
from __future__ import annotations

import sympy as sp

from bounds.core import Bound, register, sym

from bounds.rates.kl.upper import (_DP, _ZCDP, D, L0, _log, _sqrt, d, delta, epsilon, gamma, kappa,
                                   lambda_g, n, rho, tau)


_COR1_ASSUMPTIONS = (
    "1 < κ ≤ 2 with κ = 1 + Ω(1); B, L0, L1 > 0 arbitrary",
    "hard instance: f L0-Lipschitz and L1-smooth on B_B(w0), F(·;S) convex with "
    "(1/γ, κ/(κ−1))-growth, hence (γ, κ)-KL (Lemma 6)",
    "via Theorem 6 with λ = 1/γ, τ = κ/(κ−1) (τ ≥ 2, τ = O(1)), and ρ-zCDP ⇒ (ε, δ)-DP",
)

COR1 = register(Bound(
    id="kl:cor1",
    expr=(gamma * L0 * _sqrt(d) / (n * _sqrt(rho)))**kappa,
    quantity="expected excess empirical risk E[F(A(S);S) − F(w*;S)] of any ρ-zCDP algorithm on "
             "the worst instance (Ω̃: polylog factors and constants dropped)",
    source="KL paper, Corollary 1 (Section 3.1; details in App. B.5)",
    assumptions=_COR1_ASSUMPTIONS,
    privacy=_ZCDP,
    kind="lower",
    conditions=(sp.Gt(kappa, 1), sp.Le(kappa, 2)),
    notes="Independent of B and L1.  The ρ form follows from the (ε, δ) form (kl:cor1_dp) with "
          "ε ≈ √ρ up to log(1/δ) factors, which Ω̃ hides; the factor [κ/(κ−1)]^{1−κ} is dropped "
          "because κ = 1 + Ω(1).  Matches kl:thm1 up to logs for κ ∈ (1, 2].",
))

COR1_DP = register(Bound(
    id="kl:cor1_dp",
    expr=(kappa / (kappa - 1))**(1 - kappa) * (gamma * L0 * _sqrt(d) / (n * epsilon))**kappa,
    quantity="expected excess empirical risk of any (ε, δ)-DP algorithm on the worst "
             "(γ, κ)-KL instance (Ω̃)",
    source="KL paper, App. B.5 (Corollary 1 before the zCDP conversion)",
    assumptions=_COR1_ASSUMPTIONS + ("0 < ε ≤ 1, 2^{−Ω(n)} ≤ δ < 1/n (from Theorem 6)",),
    privacy=_DP,
    kind="lower",
    conditions=(sp.Gt(kappa, 1), sp.Le(kappa, 2), sp.Le(epsilon, 1)),
    notes="Theorem 6 with λ = 1/γ, τ = κ/(κ−1): τ^{−1/(τ−1)} = [κ/(κ−1)]^{1−κ} and "
          "τ/(τ−1) = κ (checked symbolically in tests).",
))


# ------------------------------------------------------------------------------------------------
# Appendices B, C: lower bounds
# ------------------------------------------------------------------------------------------------

THM6 = register(Bound(
    id="kl:thm6",
    expr=tau**(-1 / (tau - 1)) * (L0 * _sqrt(d) / (lambda_g * n * epsilon))**(tau / (tau - 1)),
    quantity="expected excess empirical risk E[F(A(S);S) − inf F] of any (ε, δ)-DP algorithm, "
             "worst case over convex L0-Lipschitz, L1-smooth losses with (λ, τ)-growth",
    source="KL paper, Theorem 6 (App. B.4)",
    assumptions=("L0, L1, B, λ ≥ 0; τ ≥ 2, τ = O(1)", "0 < ε ≤ 1, 2^{−Ω(n)} ≤ δ < 1/n",
                 "f convex, L0-Lipschitz and L1-smooth on a set 𝒲 containing a ball of radius B; "
                 "F(·;S) has (λ, τ)-growth F(w) − F(w_p) ≥ λ^τ‖w − w_p‖^τ"),
    privacy=_DP,
    kind="lower",
    conditions=(sp.Ge(tau, 2), sp.Le(epsilon, 1)),
    notes="Symbols: tau = τ, lambda_g = λ (growth constant).  Dictionary to KL (Lemma 6, convex): "
          "λ = 1/γ, τ = κ/(κ−1), so τ/(τ−1) = κ and this is kl:cor1_dp.  Exponent in n: "
          "−τ/(τ−1).",
))

THM8 = register(Bound(
    id="kl:thm8",
    expr=sp.Rational(1, 4) * (1 / (n * epsilon))**kappa,
    quantity="expected excess empirical risk E[F(A(S);S) − inf F] of any (ε, δ)-DP algorithm on "
             "the worst convex 1-Lipschitz (1, κ)-KL instance",
    source="KL paper, Theorem 8 (App. C.3)",
    assumptions=("κ ≥ 2, 0 < ε ≤ ln 2, 0 < δ ≤ (1 − e^{−ε})/16, d ∈ ℕ, B > 0",
                 "one-dimensional construction (ALD21 Thm 5): f(w;±1) = |w ∓ a| or |w ∓ a|^τ, "
                 "τ = κ/(κ−1) ∈ (1, 2], a = (nε)^{−1/(τ−1)}/2",
                 "f convex and 1-Lipschitz on 𝒲 ⊇ ball of radius B; F(·;S) (1, κ)-KL"),
    privacy=_DP,
    kind="lower",
    conditions=(sp.Ge(kappa, 2), sp.Le(epsilon, sp.log(2))),
    notes="Constant 1/4 is stated.  The proof names the class-imbalance fraction ρ = 1/(nε); it "
          "is not the privacy parameter.  Shows Theorem 2's rate is tight for d = 1.",
))

#: Theorem 7 (App. B.6): lower bound for unconstrained convex Lipschitz ERM (no strong convexity,
#: no KL).  Its n-exponent −1 is the competing rate that Theorem 9's experiments must reject.
THM7 = register(Bound(
    id="kl:thm7",
    expr=L0 * D * sp.Min(sp.sqrt(d) / (n * epsilon), 1),
    quantity="expected excess empirical risk E[F(A(S)) − F(w*)] of any (ε,δ)-DP algorithm, "
             "worst case over convex L0-Lipschitz losses with ‖w*‖ ≤ D",
    source="KL paper, Theorem 7 (Appendix B.6)",
    assumptions=("0 < ε ≤ 1, δ < 1/n", "f convex, L0-Lipschitz, √d L0/(nεD)-smooth, ‖w*‖ ≤ D",
                 "unconstrained domain"),
    privacy="(ε, δ)-DP, replace-one",
    kind="lower",
    notes="Used in the proof of Theorem 6.  The construction's Huber regulariser is printed as "
          "‖w‖² inside 4D and 4D‖w‖ outside, which is continuous but not C¹ at 4D (the C¹ form is "
          "8D‖w‖ − 16D²); the rate is unaffected.",
))


# ------------------------------------------------------------------------------------------------
# Prior rates the paper compares with
# ------------------------------------------------------------------------------------------------

PRIOR_PL = register(Bound(
    id="kl:prior_pl",
    expr=d / (n**2 * epsilon**2),
    quantity="excess empirical risk of noisy gradient descent under the PL condition (Õ)",
    source="KL paper, Section 1 and 1.2, citing [48] = WYX17 (Wang, Ye, Xu 2017)",
    assumptions=("F L0-Lipschitz, L1-smooth and PL (κ = 2)",),
    privacy=_DP,
    kind="upper",
    notes="As the paper cites it (ε form; ε ≈ √ρ up to log(1/δ) makes it d/(n²ρ), the first "
          "term of kl:thm4_kappa2).  Optimal by the strongly convex lower bound [12] = BST14.",
))

PRIOR_STATIONARY = register(Bound(
    id="kl:prior_stationary",
    expr=(_sqrt(d) / (n * _sqrt(rho)))**sp.Rational(2, 3),
    quantity="gradient norm ‖∇F(w;S)‖ of the output: best known rate for approximate stationary "
             "points of smooth non-convex ERM (Õ)",
    source="KL paper, discussion after Theorem 5 (Section 5.1), citing [1] = ABG+23",
    assumptions=("f L0-Lipschitz and L1-smooth, possibly non-convex; variance-reduced method",),
    privacy=_ZCDP,
    kind="upper",
))

PRIOR_STATIONARY_NOISY_GD = register(Bound(
    id="kl:prior_stationary_noisy_gd",
    expr=(_sqrt(d) / (n * _sqrt(rho)))**sp.Rational(1, 2),
    quantity="gradient norm ‖∇F(w;S)‖ of the output of noisy gradient descent (no variance "
             "reduction) on smooth non-convex ERM (Õ)",
    source="KL paper, discussion after Theorem 5 (Section 5.1), citing [48] = WYX17",
    assumptions=("f L0-Lipschitz and L1-smooth, possibly non-convex",),
    privacy=_ZCDP,
    kind="upper",
    notes="kl:thm5_worst recovers this rate (d^{1/4}/(√n ρ^{1/4})).",
))

LB_STATIONARY = register(Bound(
    id="kl:lb_stationary",
    expr=_sqrt(d) / (n * epsilon),
    quantity="gradient norm ‖∇F(w;S)‖ any (ε, δ)-DP algorithm can guarantee (Ω) for approximate "
             "stationary points",
    source="KL paper, discussion after Theorem 5 (Section 5.1) ('an existing work showed', no "
           "citation given)",
    assumptions=("f Lipschitz and smooth, possibly non-convex",),
    privacy=_DP,
    kind="lower",
    notes="The paper notes it is not directly comparable with kl:thm5_best, which does not hold "
          "for all functions.",
))

PRIOR_NONCONVEX_GLOBAL = register(Bound(
    id="kl:prior_nonconvex_global",
    expr=d / (n * epsilon),
    quantity="excess empirical risk achievable for global minimisation of non-convex Lipschitz "
             "losses, even with exponential running time (best possible rate, up to constants)",
    source="KL paper, Section 1, citing [31] = GTU23",
    assumptions=("f Lipschitz, non-convex, no KL condition",),
    privacy=_DP,
    kind="lower",
    notes="The paper says the best possible rate is only O(d/(nε)); encoded as the lower bound "
          "that motivates the KL assumption.",
))


# ------------------------------------------------------------------------------------------------
# Privacy conversions
# ------------------------------------------------------------------------------------------------

ZCDP_TO_DP = register(Bound(
    id="kl:zcdp_to_dp",
    expr=rho + 2 * _sqrt(rho * _log(1 / delta)),
    quantity="ε such that a ρ-zCDP algorithm is (ε, δ)-DP",
    source="KL paper, Section 2 ('Differential Privacy'), citing [11] = BS16, Proposition 1.3",
    assumptions=("δ ∈ (0, 1)",),
    privacy="ρ-zCDP ⇒ (ε, δ)-DP, same neighbouring relation",
    kind="conversion",
    conditions=(sp.Lt(delta, 1),),
    notes="The paper prints only 'ρ = O(ε²/log(1/δ)) for ε ≤ √log(1/δ)'; the exact map is BS16's "
          "Proposition 1.3.  kl:dp_to_zcdp is its inverse in ρ.",
))

DP_TO_ZCDP = register(Bound(
    id="kl:dp_to_zcdp",
    expr=(_sqrt(_log(1 / delta) + epsilon) - _sqrt(_log(1 / delta)))**2,
    quantity="the largest ρ whose zCDP guarantee implies (ε, δ)-DP by kl:zcdp_to_dp",
    source="inverse of BS16 Proposition 1.3; the KL paper (Section 2) states it as "
           "ρ = O(ε²/log(1/δ)) for ε ≤ √log(1/δ)",
    assumptions=("δ ∈ (0, 1), ε > 0",),
    privacy="(ε, δ)-DP target ⇒ ρ-zCDP budget, same neighbouring relation",
    kind="conversion",
    conditions=(sp.Lt(delta, 1),),
    notes="Solves ρ + 2√(ρL) = ε with L = log(1/δ): √ρ = √(L + ε) − √L.  Since "
          "(√(L+ε) − √L)² = ε²/(√(L+ε) + √L)², it is Θ(ε²/log(1/δ)) for ε ≤ log(1/δ), the "
          "paper's statement.",
))

LEM14 = register(Bound(
    id="kl:lem14",
    expr=epsilon**2 / 2,
    quantity="ρ such that an (ε, 0)-DP (pure DP) algorithm is ρ-zCDP",
    source="KL paper, Lemma 14 (App. D.6), citing [11] = BS16, Proposition 1.4",
    assumptions=("pure ε-DP",),
    privacy="(ε, 0)-DP ⇒ (ε²/2)-zCDP",
    kind="conversion",
    notes="Used for Theorem 5's exponential mechanism: ε = √ρ gives ρ/2.",
))


# Corollaries from their theorems, for `dprates bounds derive` (bounds/explain.py).
from bounds.explain import DerivationSpec, register_derivation  # noqa: E402

_nd_rho = ("n", "d", "rho")
for _spec in (
    DerivationSpec("kl:cor1", "kl:thm1", {}, _nd_rho,
                   note="no parameter choice: Thm 1's rate up to its log factors"),
    DerivationSpec("kl:thm1_simplified", "kl:thm1", {}, _nd_rho),
    DerivationSpec("kl:thm2_simplified", "kl:thm2", {}, _nd_rho),
    DerivationSpec("kl:thm4_kappa1", "kl:thm4_simplified", {"kappa": 1}, _nd_rho),
    DerivationSpec("kl:thm4_kappa2", "kl:thm4_simplified", {"kappa": 2}, _nd_rho),
    DerivationSpec("kl:thm5_best", "kl:thm5", {"T": sym("n")**2 * sym("rho") / sym("d")}, _nd_rho,
                   note="best case: gradients Ω(1), T = n²ρ/d iterations (budget-limited)"),
    DerivationSpec("kl:thm5_worst", "kl:thm5",
                   {"T": sym("n") * sp.sqrt(sym("rho")) / sp.sqrt(sym("d"))}, _nd_rho,
                   note="worst case: equal gradient norms N = d^{1/4}/(√n ρ^{1/4}), "
                        "T = N²n²ρ/d"),
    DerivationSpec("kl:cor1_dp", "kl:thm6",
                   {"tau": sym("kappa") / (sym("kappa") - 1), "lambda_g": 1 / sym("gamma")},
                   ("n", "d", "epsilon"),
                   note="the lower bound's dictionary: τ = κ/(κ−1), λ = 1/γ"),
):
    register_derivation(_spec)
