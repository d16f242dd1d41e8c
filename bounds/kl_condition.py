"""Bounds of Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private Non-Convex
Optimization under the KL Condition with Optimal Rates" (``../shared/papers/kl_condition_zcdp.txt``).

Setting: private empirical risk minimisation, F(w;S) = (1/n) Σ_i f(w;x_i), under ρ-zCDP with the
*replace-one* neighbouring relation (the paper's Definition 2).  (γ, κ)-KL means
F(w) − F* ≤ γ^κ ‖∇F(w)‖^κ.  Symbols: ``L0`` Lipschitz, ``L1`` smoothness, ``L1t`` weak
convexity L̃1, ``F0`` ≥ F(w0) − F*, ``beta`` failure probability.

Big-O constants the paper hides are taken as 1; log factors are kept exactly as printed.
"""
from __future__ import annotations

import sympy as sp

from bounds.core import Bound, register, sym

n, d, rho, beta = sym("n"), sym("d"), sym("rho"), sym("beta")
L0, L1t = sym("L0"), sym("L1t")
D = sym("D")
epsilon = sym("epsilon")

_ZCDP = "ρ-zCDP, replace-one neighbouring datasets (Definition 2)"

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
          "algorithms.kl_condition.noisy_gd spends exactly ρ. See docs/errata.md (KL-E1).",
))

#: Theorem 7: lower bound for unconstrained convex Lipschitz ERM (no strong convexity, no KL).
#: Its n-exponent −1 is the competing rate that Theorem 9's experiments must reject.
THM7 = register(Bound(
    id="kl:thm7",
    expr=L0 * D * sp.Min(sp.sqrt(d) / (n * epsilon), 1),
    quantity="expected excess empirical risk E[F(A(S)) − F(w*)] of any (ε,δ)-DP algorithm, "
             "worst case over convex L0-Lipschitz losses with ‖w*‖ ≤ D",
    source="KL paper, Theorem 7 (Appendix B)",
    assumptions=("0 < ε ≤ 1, δ < 1/n", "f convex, L0-Lipschitz, √d L0/(nεD)-smooth, ‖w*‖ ≤ D",
                 "unconstrained domain"),
    privacy="(ε, δ)-DP, replace-one",
    kind="lower",
))
