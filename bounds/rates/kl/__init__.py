"""Bounds of Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private Non-Convex
Optimization under the KL Condition with Optimal Rates".

Setting: private empirical risk minimisation, F(w;S) = (1/n) Σ_i f(w;x_i), under ρ-zCDP with the
*replace-one* neighbouring relation (the paper's Definition 2).  (γ, κ)-KL means
F(w) − F* ≤ γ^κ ‖∇F(w)‖^κ.  Symbols: ``L0`` Lipschitz, ``L1`` smoothness, ``L1t`` weak
convexity L̃1, ``F0`` ≥ F(w0) − F*, ``beta`` failure probability, ``T`` an iteration count,
``tau``/``lambda_g`` the exponent/constant of (λ, τ)-growth, ``epsilon``/``delta`` (ε, δ)-DP.

Big-O constants the paper hides are taken as 1; log factors are kept exactly as printed (so
``log(F0)`` may be negative and a bound may be undefined at small n: evaluating it there raises
``ValueError``, which the harness treats as a vacuous point).

Registered ids (one line each)
------------------------------
Upper bounds (excess empirical risk unless stated):

* ``kl:thm1``              Theorem 1, KL Spider (κ ∈ [1,2]): (γL0√(dK log(1/β'))/(n√ρ))^κ, K, β' of Alg. 1.
* ``kl:thm1_simplified``   Theorem 1's Õ form (γL0√d √(1+(1/F0)^{(2−κ)/κ}γ²L1)/(n√ρ))^κ.
* ``kl:thm2``              Theorem 2, private proximal point (κ ≥ 2): (γL0√(Td log(n²log²(1/β')/(dβ')))/(n√ρ))^κ.
* ``kl:thm2_simplified``   Theorem 2's Õ form (γL0√(d(1+F0^{(κ−2)/κ}γ²L̃1))/(n√ρ))^κ.
* ``kl:lem3``              Lemma 3 inside Alg. 2: inner solver's excess at budget ρ/T, failure β' = β/T.
* ``kl:thm4``              Theorem 4, adaptive noisy GD: main + floor + iteration-cap terms (A, p_max).
* ``kl:thm4_main``         Theorem 4's first (d-dependent) term (γL0√(dA p_max)/(n√ρ))^{2κ/(4−κ)}.
* ``kl:thm4_floor``        Theorem 4's second (d-free) term (max{γ²,1}L0²A/(min{L1,1}n√ρ))^{κ/2}.
* ``kl:thm4_simplified``   Theorem 4's Õ form (√d/(n√ρ))^{2κ/(4−κ)} + (1/(n√ρ))^{κ/2}.
* ``kl:thm4_intro``        the introduction's statement, d-free term (1/n)^{κ/2} (competing reading, KL-E10).
* ``kl:thm4_kappa1``       Theorem 4 at κ = 1: (√d/(n√ρ))^{2/3} + 1/(√n ρ^{1/4}).
* ``kl:thm4_kappa2``       Theorem 4 at κ = 2 (PL): d/(n²ρ) + 1/(n√ρ).
* ``kl:thm5``              Theorem 5, gradient norm of Alg. 3 + exponential mechanism, in terms of T.
* ``kl:thm5_best``         Theorem 5's best case (T = Θ̃(min{n√ρ, n²ρ/d})): √d/(n√ρ) + 1/(√n ρ^{1/4}).
* ``kl:thm5_worst``        Theorem 5's worst case: d^{1/4}/(√n ρ^{1/4}) + 1/(√n ρ^{1/4}).
* ``kl:thm5_abstract``     the abstract's Theorem 5 rate √d/(n√ρ), its d-free term dropped (KL-E15).
* ``kl:thm9``              Theorem 9, Alg. 4 noisy projected GD on the L̃1-strongly convex F̃.
* ``kl:prior_pl``          [WYX17] noisy GD under PL: d/(n²ε²), as the paper cites it.
* ``kl:prior_stationary``  [ABG+23] best known stationary-point rate (√d/(n√ρ))^{2/3}.
* ``kl:prior_stationary_noisy_gd``  [WYX17] noisy-GD stationary-point rate (√d/(n√ρ))^{1/2}.

Lower bounds:

* ``kl:cor1``              Corollary 1 (1 < κ ≤ 2, ρ-zCDP): Ω̃((γL0√d/(n√ρ))^κ).
* ``kl:cor1_dp``           Corollary 1 in (ε, δ) form (App. B.5): [κ/(κ−1)]^{1−κ}(γL0√d/(nε))^κ.
* ``kl:thm6``              Theorem 6 (smooth convex (λ,τ)-growth): τ^{−1/(τ−1)}(L0√d/(λnε))^{τ/(τ−1)}.
* ``kl:thm7``              Theorem 7 (unconstrained convex Lipschitz): L0 D min{√d/(nε), 1}.
* ``kl:thm8``              Theorem 8 (κ ≥ 2, (1,κ)-KL, 1-D): (1/4)(1/(nε))^κ.
* ``kl:lb_stationary``     stationary-point lower bound the paper quotes: √d/(nε).
* ``kl:prior_nonconvex_global``  [GTU23] global minimisation of non-convex Lipschitz losses: d/(nε).

Identities:

* ``kl:thm1_nslope``        Theorem 1's n-slope at the instance's κ (``slope_thm1``; ``secant_nslope``).
* ``kl:thm4_main_nslope``   Theorem 4's first-term n-slope at the instance's κ (``slope_thm4_main``).

Conversions:

* ``kl:zcdp_to_dp``        ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP [BS16, Prop. 1.3].
* ``kl:dp_to_zcdp``        the largest ρ with ρ + 2√(ρ log(1/δ)) ≤ ε: (√(log(1/δ)+ε) − √log(1/δ))².
* ``kl:lem14``             Lemma 14: (ε, 0)-DP ⇒ (ε²/2)-zCDP [BS16, Prop. 1.4].

Readings where the paper contradicts itself are stated in each bound's ``notes`` and collected
in docs/errata.md (KL-E1, KL-E2, KL-E10…).
"""
from pathlib import Path

from bounds.core import register_paper
from bounds.rates.kl.upper import *  # noqa: F401,F403  (the package is the paper's module: bounds.rates.kl.THM4, ...)
from bounds.rates.kl.lower import *  # noqa: F401,F403
from bounds.rates.kl.upper import (A_LOG, BETA_PRIME_ALG1, BETA_PRIME_ALG2, K_ALG1,  # noqa: F401
                                   LOG_ALG2, P_MAX, T_ALG2, THM4_CONDITION, THM4_CAP_TERM)

# The paper's experiments and audits (imported with its bounds when its experiments are
# asked for) and the algorithms the report links.
register_paper(
    "kl", "empirical.papers.kl", algorithms=("algorithms.kl.condition",),
    # Theorem 8's control is drawn with the real-data unit's line plot.
    uses=("real",),
    title='Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private Non-Convex Optimization under the KL Condition with Optimal Rates"',
    citation='Michael Menart, Enayat Ullah, Raman Arora, Raef Bassily, Cristóbal Guzmán. [Differentially Private Non-Convex Optimization under the KL Condition with Optimal Rates](https://arxiv.org/abs/2311.13447), arXiv:2311.13447.',
    url='https://arxiv.org/abs/2311.13447',
    errata=str(Path(__file__).resolve().parents[3] / "docs" / "errata" / "kl.md"))
