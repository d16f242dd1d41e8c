"""Bounds of Lowy, Liu, Asi, "Faster Algorithms for User-Level Private Stochastic Convex
Optimization".

Setting: n users, each holding m i.i.d. items from P; population loss F(x) = E_z f(x, z) over a
convex compact 𝒳 ⊂ R^d of **diameter** R (Assumption 1.1); f(·, z) convex and L-Lipschitz, and
β-smooth except in Section 4.  Privacy: user-level (ε, δ)-DP, neighbouring datasets differ in one
user's whole data (replace-one, Definition 1.3).  Symbols: ``n m d epsilon delta L R beta mu``,
``q`` (user-split exponent), ``K`` a minibatch of users, ``T`` a step count, ``eta`` a step size,
``zeta`` a failure probability, ``r`` the smoothing radius, ``lambda_reg`` Algorithm 3's λ.

Õ/≲ constants the paper hides are 1; polylogs are kept where the theorem prints them (e.g. the
√log(1/δ) of the privacy term) and dropped where it writes Õ(·) around a polylog-free form.

Registered ids
--------------
Risk (upper bounds on E F(x_out) − F*):

* ``userlevel:thm2.1``          Theorem 2.1/B.1 as STATED: LR(1/√(nmε) + √(d log(1/δ))/(√n ε √m)).
* ``userlevel:thm2.1_proof``    Theorem B.1 as its PROOF gives it, LR√d/√(nmε) (UL-E1).
* ``userlevel:thm3.2``          Theorem 3.2/C.3 (Algorithm 3): LR(1/√(nm) + √(d log(1/δ))/(εn√m)).
* ``userlevel:thm4.1``          Theorem 4.1/D.3 (smoothed Algorithm 3, non-smooth): same rate.
* ``userlevel:rem3.6``          Remark 3.6 (μ-strongly convex): (L²/μ)(1/(nm) + d log(1/δ)/(ε²n²m)).
* ``userlevel:eq18``            proof-level bound (18) of Thm C.3 in λ, τ (corrected, UL-E5).
* ``userlevel:eq18_printed``    (18) as printed (L² also multiplies the τ² term).
* ``userlevel:trivial``         footnote 3: group privacy / user-as-item DP-SGD, LR(1/√(nm) + √(d log(1/δ))/(εn)).
* ``userlevel:bs23_linear``     [BS23, Alg. 5] linear-time rate LR(1/√(nmε) + √d/(√(nm)ε)).
* ``userlevel:lower``           lower bound [LSA+21] LR(1/√(nm) + √d/(εn√m)) (kind lower).
* ``userlevel:thm2.1_privacy``, ``userlevel:thm3.2_privacy``, ``userlevel:rem3.6_privacy``,
  ``userlevel:trivial_privacy``,
  ``userlevel:trivial_sc_privacy``  the privacy terms alone (measured by coupled runs).
* ``userlevel:thm4.1_statistical``  Theorem 4.1's first term LR/√(nm) alone (ε-free).

Gradient complexity (suffix ``-gradients``):

* ``userlevel:thm2.1-gradients``            Algorithm 1: nm.
* ``userlevel:thm3.2-gradients``            Theorem 3.2/C.3's full expression.
* ``userlevel:thm3.2-gradients_intro``      Abstract/Figure 1: max{β^{1/4}(nm)^{9/8}, β^{1/2}n^{1/4}m^{5/4}}.
* ``userlevel:alg3_saturated-gradients``    Algorithm 3 with K_i = n_i (literal constants): nm√(β/λ).
* ``userlevel:thm4.1-gradients``            Theorem 4.1/D.3 as printed: mn(1 + n^{3/8}m^{1/4}ε^{1/4}).
* ``userlevel:thm4.1-gradients_derived``    Σ_i T_iK_im with D.3's own T_i, K_i (UL-E3).
* ``userlevel:gain_ratio``       Theorem 3.2's privacy term over footnote 3's: m^{−1/2} (user- vs
  item-level); ``userlevel:gain_ratio_sc`` the strongly convex ratio m^{−1}.
* ``userlevel:bs23-gradients``, ``userlevel:al24-gradients``, ``userlevel:al24_nonsmooth-gradients``
  Figure 1's prior algorithms.

Lemmas and calibration:

* ``userlevel:lem2.3``          Lemma 2.3/B.4: ‖x̃ − ỹ‖ ≲ ηL√(T log(dT/ζ)).
* ``userlevel:lem3.5``          Lemma 3.5/C.6: E‖g − ∇F̃_i‖² ≲ L² log(ndm)/(Km).
* ``userlevel:lem2.3_naive``    competitor: the triangle-inequality bound 2ηLT.
* ``userlevel:lem2.3_instance`` Lemma 2.3's instance constant on the linear stream (exact RMS
  η√((T+1)(2T+1)/(3T)) of the average-iterate distance; not a theorem of the paper).
* ``userlevel:lem3.5_itemlevel`` competitor: L²/K (no 1/m from averaging).
* ``userlevel:lemD.1``          Lemma D.1: |f_r − f| ≤ Lr.
* ``userlevel:lemD.1_smoothness``  f_r is L√d/r-smooth.
* ``userlevel:alg2_sigma``      Algorithm 2's σ_i = 1000τ√T_i log(nde^ε/δ)/(εn_i) (identity).
* ``userlevel:alg1_sigma``      Algorithm 1's σ_i = 100τ_i log²(n/δ)/(εC) (identity).
* ``userlevel:gauss_sigma``     Definition A.5: σ = Δ√(2 log(2/δ))/ε (conversion).

Readings where the paper contradicts itself are stated in each bound's ``notes`` and collected in
docs/errata.md (UL-E1 …).
"""
from __future__ import annotations

from pathlib import Path

import sympy as sp

from bounds.core import UNIT_OPEN, Bound, register, register_paper, sym

# The paper's experiments and audits (imported with its bounds when its experiments are
# asked for) and the algorithms the report links.
register_paper(
    "userlevel", "empirical.papers.userlevel", algorithms=("algorithms.userlevel.sco",),
    title='Lowy, Liu, Asi, "Faster Algorithms for User-Level Private Stochastic Convex Optimization"',
    citation='Andrew Lowy, Daogao Liu, Hilal Asi. [Faster Algorithms for User-Level Private Stochastic Convex Optimization](https://arxiv.org/abs/2410.18391), arXiv:2410.18391.',
    url='https://arxiv.org/abs/2410.18391',
    errata=str(Path(__file__).resolve().parents[2] / "docs" / "errata" / "userlevel.md"))

n, m, d = sym("n"), sym("m"), sym("d")
epsilon, delta = sym("epsilon"), sym("delta", UNIT_OPEN)
L, R, beta, mu = sym("L"), sym("R"), sym("beta"), sym("mu")
q, K, T, eta, zeta, r = sym("q"), sym("K"), sym("T"), sym("eta"), sym("zeta"), sym("r")
lambda_reg, tau, n_i, C = sym("lambda_reg"), sym("tau"), sym("n_i"), sym("C")

_sqrt, _log = sp.sqrt, sp.log
_R = sp.Rational

_PRIV = "user-level (ε, δ)-DP, replace-one: neighbours differ in one user's m items (Definition 1.3)"
_ASSUME = ("𝒳 ⊂ R^d convex, compact, diameter R (Assumption 1.1)",
           "f(·, z) convex and L-Lipschitz for every z",
           "users' data Z_i ~ P^m i.i.d. (utility only)")
_SMOOTH = "f(·, z) β-smooth (Assumption 1.2)"
LG = _log(1 / delta)

#: Optimal user-level rate (Theorem 3.2/C.3 and 4.1/D.3, up to polylogs).
OPT = L * R * (1 / _sqrt(n * m) + _sqrt(d * LG) / (epsilon * n * _sqrt(m)))

#: Algorithm 3's base regularisation (Theorem C.3).
ALG3_LAMBDA = (L / R) * (1 / _sqrt(n * m) + _sqrt(d) / (epsilon * n * _sqrt(m)))

#: Theorem D.3's smoothing radius and the resulting smoothness of f_r.
NS_R = R * _sqrt(d) / (epsilon * n * _sqrt(m))
NS_BETA = L * _sqrt(d) / NS_R

#: Theorem 2.1/B.1's smoothness condition.
ALG1_BETA_MAX = (L / R) * _sqrt(d * m * n * epsilon)

_EPS10 = sp.Le(epsilon, 10)

# ------------------------------------------------------------------------------------------------
# Section 2: Algorithm 1 (linear time)
# ------------------------------------------------------------------------------------------------
THM2_1 = register(Bound(
    id="userlevel:thm2.1",
    expr=L * R * (1 / _sqrt(n * m * epsilon) + _sqrt(d * LG) / (_sqrt(n) * epsilon * _sqrt(m))),
    quantity="excess population risk E F(x_l) − F* of Algorithm 1 (as stated)",
    source="user-level SCO paper, Theorem 2.1 (informal) / Theorem B.1 (App. B)",
    assumptions=_ASSUME + (_SMOOTH, "β ≤ (L/R)√(dmnε)", "ε ≤ 10",
                           "n^{1−q} ≥ (100/(1−2^{−q}))·log(n/δ)/ε; m ≤ n^J"),
    privacy=_PRIV,
    # β ≤ (L/R)√(dmnε) is a hypothesis too, but bounds.core resolves conditions only over the
    # expression's own symbols (β does not occur in the rate), so it is stated in `assumptions`
    # and checked by the experiments (empirical.papers.userlevel.experiments._alg1_vacuous).
    conditions=(_EPS10,),
    notes="As STATED: privacy term √(d log(1/δ))/(√(nm)ε), ε-exponent −1 (the form of the BS23 "
          "rate it is compared with).  The proof of B.1 gives LR√d/√(nmε) (userlevel:thm2.1_proof, "
          "ε-exponent −1/2); the two agree in n, m, d.  Erratum UL-E1; decided by "
          "userlevel.alg1.privacy.eps.localised (ε^{−0.56}: −1 rejected).",
))

THM2_1_PROOF = register(Bound(
    id="userlevel:thm2.1_proof",
    expr=L * R * _sqrt(d) / _sqrt(n * m * epsilon),
    quantity="excess population risk of Algorithm 1, as the proof of Theorem B.1 gives it",
    source="user-level SCO paper, end of the proof of Theorem B.1: R²/(ηT_1) + dηL² with "
           "η = R/(L√(dmnε)), T_1 = n_1m/C, C ∝ 1/ε (polylogs dropped)",
    assumptions=THM2_1.assumptions,
    privacy=_PRIV,
    conditions=THM2_1.conditions,
    notes="Competing reading of Theorem 2.1 (UL-E1): ε-exponent −1/2 everywhere.  Both terms of "
          "the proof bound scale as LR√d/√(nmε): the localisation term R²/(ηT_1) carries the "
          "factor Cε/((1−2^{−q})2^{−q}) ≈ 100·log(20nme^ε/δ)/(…), ε-free.",
))

THM2_1_PRIVACY = register(Bound(
    id="userlevel:thm2.1_privacy",
    expr=L * R * _sqrt(d * LG) / (_sqrt(n) * epsilon * _sqrt(m)),
    quantity="privacy term of Theorem 2.1/B.1 as STATED (excess risk due to the output noise)",
    source="user-level SCO paper, Theorem 2.1 (informal) / Theorem B.1, second term",
    assumptions=THM2_1.assumptions,
    privacy=_PRIV,
    conditions=THM2_1.conditions,
    notes="Exponents n −1/2, m −1/2, d +1/2, ε −1 exactly.  The proof's reading "
          "(userlevel:thm2.1_proof, a single term) has ε −1/2 (UL-E1); measured by the coupled "
          "runs of empirical.papers.userlevel.alg1_privacy.",
))

THM2_1_GRADS = register(Bound(
    id="userlevel:thm2.1-gradients",
    expr=n * m,
    quantity="gradient evaluations of Algorithm 1",
    source="user-level SCO paper, Theorem 2.1/B.1 ('gradient complexity ≤ nm')",
    assumptions=THM2_1.assumptions,
    privacy=_PRIV,
    notes="Exactly Σ_i n_i m = nm·2^{−q}(1 − 2^{−ql}) ≤ nm up to rounding: linear time.",
))

# ------------------------------------------------------------------------------------------------
# Section 3: Algorithm 3 (accelerated phased ERM with outlier gradient removal)
# ------------------------------------------------------------------------------------------------
_THM32_COND = (_EPS10, sp.Lt(delta, 1 / (m * n)))

THM3_2 = register(Bound(
    id="userlevel:thm3.2",
    expr=OPT,
    quantity="excess population risk E F(x_l) − F* of Algorithm 3",
    source="user-level SCO paper, Theorem 3.2 (informal) / Theorem C.3 (App. C)",
    assumptions=_ASSUME + (_SMOOTH + " (any β < ∞, Remark 3.4)", "ε ≤ 10, δ < 1/(mn)",
                           "λ = (L/R)(1/√(nm) + √d/(εn√m)), p ≥ 3q + 2.5 + log_n √m"),
    privacy=_PRIV + " (Theorem 3.1 = C.1)",
    conditions=_THM32_COND,
    notes="Optimal up to polylogs (matches userlevel:lower up to √log(1/δ)).  Regime exponents: "
          "statistical (n ≥ n* = d log(1/δ)/ε²) n −1/2, m −1/2; privacy (n ≤ n*) n −1, m −1/2, "
          "d +1/2, ε −1.  Asymptotic exponents: n −1/2, m −1/2, d +1/2, ε 0.",
))

THM3_2_GRADS = register(Bound(
    id="userlevel:thm3.2-gradients",
    expr=(m * n * (1 + epsilon * (beta * R / L)**_R(1, 4)
                   * sp.Min((m * n)**_R(1, 8), (epsilon**2 * n**2 * m / d)**_R(1, 8)))
          + _sqrt(beta * R / L) * (n**_R(1, 4) * m**_R(5, 4) / epsilon
                                   + n**_R(1, 2) * m**_R(5, 4) / (d**_R(1, 4) * epsilon**_R(1, 2)))),
    quantity="gradient evaluations of Algorithm 3 (Σ_i T_i K_i m)",
    source="user-level SCO paper, Theorem 3.2 / C.3 (gradient complexity)",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="As printed.  The derivation gives a min where the second bracket is written as a sum "
          "(an upper bound either way).  At n = d, ε = 1, βR = L it equals (mn)^{9/8} + "
          "2n^{1/4}m^{5/4} + mn (the paper prints (mn)^{9/8} + n^{1/4}m^{5/4}).  Exponents: n 9/8, "
          "m 5/4 (the second term wins as m → ∞), ε 1, β 1/2.",
))

THM3_2_GRADS_INTRO = register(Bound(
    id="userlevel:thm3.2-gradients_intro",
    expr=sp.Max(beta**_R(1, 4) * (n * m)**_R(9, 8), beta**_R(1, 2) * n**_R(1, 4) * m**_R(5, 4)),
    quantity="gradient evaluations of Algorithm 3 (abstract / Figure 1 form)",
    source="user-level SCO paper, abstract and Figure 1 (L = R = ε = 1, n = d)",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="The headline max{β^{1/4}(nm)^{9/8}, β^{1/2}n^{1/4}m^{5/4}}; (nm)^{9/8} wins iff n^7 ≥ m.",
))

ALG3_SATURATED_GRADS = register(Bound(
    id="userlevel:alg3_saturated-gradients",
    expr=n * m * _sqrt(beta / ALG3_LAMBDA),
    quantity="gradient evaluations of Algorithm 3 when every minibatch is the whole phase "
             "(K_i = n_i, what the literal 500·log constants give at feasible n)",
    source="derived from Algorithm 3's schedule (T_i ≈ √(β/λ_i), K_i = n_i)",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="(nm)^{5/4}·√(βR/L) in the statistical regime.  A "
          "competitor for the gradient-count sweeps: a schedule whose batches saturate.",
))

REM3_6 = register(Bound(
    id="userlevel:rem3.6",
    expr=L**2 / mu * (1 / (n * m) + d * LG / (epsilon**2 * n**2 * m)),
    quantity="excess risk, μ-strongly convex f (Algorithm 3 in the FKT20 §5.1 meta-algorithm)",
    source="user-level SCO paper, Remark 3.6",
    assumptions=_ASSUME + (_SMOOTH, "f(·, z) μ-strongly convex"),
    privacy=_PRIV,
    conditions=_THM32_COND,
    notes="The 'squared' exponents: privacy regime n −2, m −1, d +1, ε −2.  Fixed quadratic-growth "
          "instances show these, which is why risk checks against Theorem 3.2 are one-sided.",
))

# Proof-level bound (18) of Theorem C.3, in the free λ and τ.
EQ18 = register(Bound(
    id="userlevel:eq18",
    expr=(L * R * _sqrt(d) / (epsilon * n * _sqrt(m)) + L**2 / (lambda_reg * n * m)
          + d * tau**2 * LG / (lambda_reg * epsilon**2 * n**2) + lambda_reg * R**2),
    quantity="excess risk of Algorithm 3 for a given λ and τ (proof of Theorem C.3, eq. (18))",
    source="user-level SCO paper, proof of Theorem C.3, eq. (18), from (15) and (17)",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="Corrected form (UL-E5): (15) and (17) give L²/(λnm) and dτ² log(1/δ)/(λε²n²); the "
          "printed (18) puts L² in front of both.  With τ ≈ L/√m and λ = ALG3_LAMBDA this is "
          "userlevel:thm3.2 up to log(1/δ).",
))

EQ18_PRINTED = register(Bound(
    id="userlevel:eq18_printed",
    expr=(L * R * _sqrt(d) / (epsilon * n * _sqrt(m))
          + L**2 / lambda_reg * (1 / (n * m) + d * tau**2 * LG / (epsilon**2 * n**2))
          + lambda_reg * R**2),
    quantity="eq. (18) exactly as printed",
    source="user-level SCO paper, proof of Theorem C.3, eq. (18)",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="Dimensionally inconsistent (L³ in the τ² term when τ ∝ L); kept as the printed reading "
          "of UL-E5.",
))

# ------------------------------------------------------------------------------------------------
# Section 4: non-smooth losses (randomized smoothing + Algorithm 3)
# ------------------------------------------------------------------------------------------------
THM4_1 = register(Bound(
    id="userlevel:thm4.1",
    expr=OPT,
    quantity="excess population risk of smoothed Algorithm 3 on non-smooth f",
    source="user-level SCO paper, Theorem 4.1 (informal) / Theorem D.3 (App. D)",
    assumptions=_ASSUME + ("f convex and L-Lipschitz on 𝒳_r = 𝒳 + B(0, r), r = R√d/(εn√m)",
                           "ε ≤ 10, δ < 1/(mn)"),
    privacy=_PRIV,
    conditions=_THM32_COND,
    notes="Via |f_r − f| ≤ Lr = LR√d/(εn√m).  D.3's proof sets λ = 1/√(mn) (units dropped; read "
          "(L/R)/√(mn)), which gives the optimal privacy term only when d log(1/δ) ≲ ε²n (UL-E4).",
))

THM4_1_GRADS = register(Bound(
    id="userlevel:thm4.1-gradients",
    expr=m * n * (1 + n**_R(3, 8) * m**_R(1, 4) * epsilon**_R(1, 4)),
    quantity="gradient evaluations of smoothed Algorithm 3 (as printed)",
    source="user-level SCO paper, Theorem 4.1 / D.3 (gradient complexity)",
    assumptions=THM4_1.assumptions,
    privacy=_PRIV,
    notes="Printed form; n^{11/8}m^{5/4} at ε = 1.  D.3's own T_i, K_i give ε^{5/4} and an extra "
          "n^{3/4}m^{3/2}ε^{−1/2} term (userlevel:thm4.1-gradients_derived, UL-E3).",
))

THM4_1_GRADS_DERIVED = register(Bound(
    id="userlevel:thm4.1-gradients_derived",
    expr=(m * n * (1 + n**_R(3, 8) * m**_R(1, 4) * epsilon**_R(5, 4))
          + n**_R(3, 4) * m**_R(3, 2) / _sqrt(epsilon)),
    quantity="gradient evaluations of smoothed Algorithm 3, Σ_i T_iK_im with D.3's T_i, K_i",
    source="derived from Theorem D.3's T_i = 1 + n_i^{3/4}m^{1/2}ε^{1/2}log(ndm), "
           "K_i = n_iε/√T_i + log(nmde^ε/δ)/ε (polylogs dropped)",
    assumptions=THM4_1.assumptions,
    privacy=_PRIV,
    notes="Competing reading of the non-smooth count (UL-E3).  Agrees with the printed form at "
          "ε = 1 while m ≲ n^{5/2}; m-exponent 3/2 asymptotically (the dropped term).",
))

LEM_D1 = register(Bound(
    id="userlevel:lemD.1",
    expr=L * r,
    quantity="sup_x |f_r(x, z) − f(x, z)| for the uniform-ball smoothing of radius r",
    source="user-level SCO paper, Lemma D.1 [YNS12, DBW12]",
    assumptions=("f(·, z) convex and L-Lipschitz on 𝒳 + B(0, r)",),
    privacy="n/a",
    notes="Printed as f_r ≤ f ≤ f_r + Lr; for convex f Jensen gives f ≤ f_r ≤ f + Lr (UL-E6).",
))

LEM_D1_SMOOTH = register(Bound(
    id="userlevel:lemD.1_smoothness",
    expr=L * _sqrt(d) / r,
    quantity="smoothness constant of f_r",
    source="user-level SCO paper, Lemma D.1",
    assumptions=LEM_D1.assumptions,
    privacy="n/a",
))

# ------------------------------------------------------------------------------------------------
# Lemmas 2.3, 3.5 and the noise calibrations
# ------------------------------------------------------------------------------------------------
LEM2_3 = register(Bound(
    id="userlevel:lem2.3",
    expr=eta * L * _sqrt(T * _log(d * T / zeta)),
    quantity="‖x̃ − ỹ‖ (w.p. ≥ 1 − ζ) for average iterates of two independent T-step projected "
             "SGD runs on i.i.d. data",
    source="user-level SCO paper, Lemma 2.3 / B.4",
    assumptions=("f(·, z) convex, L-Lipschitz, β-smooth; η ≤ 1/β", "D, D' ~ P^T independent"),
    privacy="n/a (stability)",
    notes="The proof shows ‖x_t − y_t‖ ≤ cηL√(t log(dT/ζ)) + 2ηL for every t.  Tight up to the log "
          "on the linear loss (noise sums are random walks).",
))

LEM2_3_INSTANCE = register(Bound(
    id="userlevel:lem2.3_instance",
    expr=eta * _sqrt((T + 1) * (2 * T + 1) / (3 * T)),
    quantity="RMS ‖x̃ − ỹ‖ of the average iterates (1/T)Σ_{t=1}^{T} x_t of two independent "
             "T-step SGD runs on the linear stream f = ⟨z, x⟩, z = μ0 + ξ, E‖ξ‖² = 1, no "
             "projection: exactly η√(2Σ_{k=1}^{T} k²)/T",
    source="user-level SCO paper, Lemma 2.3 / B.4, on the instance: x_t − y_t = −ηΣ_{s≤t}(ξ_s − "
           "ξ'_s), so x̃ − ỹ = −(η/T)Σ_s (T − s + 1)(ξ_s − ξ'_s) and E‖ξ_s − ξ'_s‖² = 2",
    assumptions=("linear loss, no projection (the ball never binds)", "D, D' independent"),
    privacy="n/a (stability)",
    notes="An exact constant of the instance (the lemma's ≲ hides it): the last iterate instead "
          "of the average has RMS η√(2T), √3 times more; a step of 2η, twice.",
))

LEM3_5 = register(Bound(
    id="userlevel:lem3.5",
    expr=L**2 * _log(n * d * m) / (K * m),
    quantity="E‖g_i^t − ∇F̃_i(x)‖² (minibatch of K users of m items, outlier removal keeping all)",
    source="user-level SCO paper, Lemma 3.5 / C.6",
    assumptions=("δ ≤ 1/(nm), ε ≲ 1", "condition on S_i^t = D_i^t", "x independent of D_i"),
    privacy="n/a (variance)",
    notes="The statement has log(ndm); the proof ends with log²(ndm).  Exact with-replacement "
          "identity: (1/K)(1/n_i)Σ_Z‖q(Z) − q̄‖², whose mean is (1 − 1/n_i)tr Cov∇f/(Km).",
))

LEM2_3_NAIVE = register(Bound(
    id="userlevel:lem2.3_naive",
    expr=2 * eta * L * T,
    quantity="‖x̃ − ỹ‖ by the triangle inequality alone (each step moves ≤ ηL)",
    source="competitor to Lemma 2.3 (no concentration): the deterministic bound 2ηLT",
    assumptions=LEM2_3.assumptions,
    privacy="n/a (stability)",
    notes="Slope 1 in T; Lemma 2.3's point is that independent noise gives √T.",
))

LEM3_5_ITEM = register(Bound(
    id="userlevel:lem3.5_itemlevel",
    expr=L**2 / K,
    quantity="E‖g − ∇F̃_i‖² when a user's mean gradient is only known to have norm ≤ L",
    source="competitor to Lemma 3.5: the item-level variance bound (no 1/m from averaging)",
    assumptions=LEM3_5.assumptions,
    privacy="n/a (variance)",
    notes="m-exponent 0: what the analysis gives without the concentration of user means.",
))

ALG2_SIGMA = register(Bound(
    id="userlevel:alg2_sigma",
    expr=1000 * tau * _sqrt(T) * _log(n * d * sp.exp(epsilon) / delta) / (epsilon * n_i),
    quantity="Gaussian noise std σ_i of Algorithm 2 (per coordinate)",
    source="user-level SCO paper, Algorithm 2, line 13",
    assumptions=("τ the concentration radius, T = T_i steps, n_i users in the phase",),
    privacy=_PRIV,
    kind="identity",
    notes="Slopes: −1 in n_i, +1/2 in T, −1 in ε (the log's e^ε aside); τ ∝ 1/√m gives −1/2 in m.",
))

ALG1_SIGMA = register(Bound(
    id="userlevel:alg1_sigma",
    expr=100 * tau * _log(n / delta)**2 / (epsilon * C),
    quantity="Gaussian output-noise std σ_i of Algorithm 1 (per coordinate)",
    source="user-level SCO paper, Algorithm 1, line 24",
    assumptions=("τ = τ_i, C = 100 log(20nme^ε/δ)/ε groups",),
    privacy=_PRIV,
    kind="identity",
    notes="With C ∝ 1/ε the ε cancels: σ_i ≈ τ_i log²(n/δ)/log(20nme^ε/δ).",
))

GAUSS_SIGMA = register(Bound(
    id="userlevel:gauss_sigma",
    expr=sym("Delta") * _sqrt(2 * _log(2 / delta)) / epsilon,
    quantity="Gaussian mechanism noise std for (ε, δ)-DP at ℓ2-sensitivity Δ",
    source="user-level SCO paper, Definition A.5",
    privacy="(ε, δ)-DP",
    kind="conversion",
    notes="log(2/δ), not the textbook 1.25/δ; valid for ε ≤ 1 (Lemma A.6 says 'Laplace' by typo).",
))

# ------------------------------------------------------------------------------------------------
# Baselines, prior work (Figure 1, rebuilt from the prose) and the lower bound
# ------------------------------------------------------------------------------------------------
TRIVIAL = register(Bound(
    id="userlevel:trivial",
    expr=L * R * (1 / _sqrt(n * m) + _sqrt(d * LG) / (epsilon * n)),
    quantity="excess risk of the user-as-item baseline (group privacy + an item-level algorithm)",
    source="user-level SCO paper, footnote 3 (e.g. group privacy + [FKT20])",
    assumptions=_ASSUME,
    privacy=_PRIV,
    notes="Its privacy term does not improve with m (m-exponent 0 where it dominates): the "
          "competitor every m-sweep must reject.  √log(1/δ) kept like userlevel:thm3.2's.",
))

BS23_LINEAR = register(Bound(
    id="userlevel:bs23_linear",
    expr=L * R * (1 / _sqrt(n * m * epsilon) + _sqrt(d) / (_sqrt(n * m) * epsilon)),
    quantity="excess risk of [BS23, Algorithm 5] (user-level LDP, linear time)",
    source="user-level SCO paper, §1 and Remark 2.2 citing [BS23]",
    assumptions=_ASSUME + ("β < (Lε³/R)√(n³/(md³))", "m ≤ d/ε² ≤ n"),
    privacy=_PRIV,
))

BS23_GRADS = register(Bound(
    id="userlevel:bs23-gradients",
    expr=m * n**_R(3, 2),
    quantity="gradient evaluations of [BS23] (optimal risk, smooth)",
    source="user-level SCO paper, Figure 1 / §1 (L = R = ε = 1, n = d)",
    assumptions=("β < n/√(md) ∧ n^{3/2}/(d√m)", "n ≥ √d/ε, m ≤ max(√d, nε²/√d)"),
    privacy=_PRIV,
))

AL24_GRADS = register(Bound(
    id="userlevel:al24-gradients",
    expr=beta * (n * m)**_R(3, 2),
    quantity="gradient evaluations of [AL24] (optimal risk, smooth)",
    source="user-level SCO paper, Figure 1 / §1",
    assumptions=("n ≥ log(md)/ε",),
    privacy=_PRIV,
    notes="Speed-up of Theorem 3.2 over it: β^{3/4}(nm)^{3/8} (when n^7 ≥ m).",
))

AL24_NS_GRADS = register(Bound(
    id="userlevel:al24_nonsmooth-gradients",
    expr=(n * m)**3 + (m * n)**2 * _sqrt(d),
    quantity="gradient evaluations of [AL24] (optimal risk, non-smooth)",
    source="user-level SCO paper, Figure 1 / §1",
    assumptions=("n ≥ log(md)/ε",),
    privacy=_PRIV,
    notes="Speed-up of Theorem 4.1 over it at n = d: n^{13/8}m^{7/4}.",
))

LOWER = register(Bound(
    id="userlevel:lower",
    expr=L * R * (1 / _sqrt(n * m) + _sqrt(d) / (epsilon * n * _sqrt(m))),
    quantity="minimax excess risk of user-level (ε, δ)-DP SCO",
    source="[LSA+21], as quoted in the user-level SCO paper (§1)",
    assumptions=_ASSUME,
    privacy=_PRIV,
    kind="lower",
))


# Privacy terms alone (for sweeps that measure the privacy part of the error with coupled
# non-private runs): the data decide the regime, not the nominal
# crossover n*, whose hidden polylog constants are large at laptop scale.
THM3_2_PRIVACY = register(Bound(
    id="userlevel:thm3.2_privacy",
    expr=L * R * _sqrt(d * LG) / (epsilon * n * _sqrt(m)),
    quantity="privacy term of Theorem 3.2 (excess risk due to the noise)",
    source="user-level SCO paper, Theorem 3.2/C.3, second term",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    conditions=_THM32_COND,
    notes="Exponents n −1, m −1/2, d +1/2, ε −1 exactly.",
))

REM3_6_PRIVACY = register(Bound(
    id="userlevel:rem3.6_privacy",
    expr=L**2 / mu * d * LG / (epsilon**2 * n**2 * m),
    quantity="privacy term of Remark 3.6 (μ-strongly convex)",
    source="user-level SCO paper, Remark 3.6, second term",
    assumptions=REM3_6.assumptions,
    privacy=_PRIV,
    notes="Exponents n −2, m −1, d +1, ε −2 exactly: the square of Theorem 3.2's privacy term "
          "over L²/μ, tight for strongly convex quadratics (noise of variance σ² ∝ 1/(ε²n²m) "
          "per coordinate enters the excess as dσ²).",
))

THM4_1_STATISTICAL = register(Bound(
    id="userlevel:thm4.1_statistical",
    expr=L * R / _sqrt(n * m),
    quantity="statistical term of Theorem 4.1 (the excess the noise would leave unchanged)",
    source="user-level SCO paper, Theorem 4.1/D.3, first term",
    assumptions=THM4_1.assumptions,
    privacy=_PRIV,
    conditions=_THM32_COND,
    notes="ε-exponent 0: the competitor of an ε sweep whose excess the noise does not reach, "
          "as the bound's dominant term has it where d log(1/δ) ≪ ε²n.",
))

TRIVIAL_PRIVACY = register(Bound(
    id="userlevel:trivial_privacy",
    expr=L * R * _sqrt(d * LG) / (epsilon * n),
    quantity="privacy term of the user-as-item baseline",
    source="user-level SCO paper, footnote 3, second term",
    assumptions=_ASSUME,
    privacy=_PRIV,
    notes="m-exponent 0: treating a user as one item wastes its m samples.",
))

TRIVIAL_PRIVACY_SC = register(Bound(
    id="userlevel:trivial_sc_privacy",
    expr=L**2 / mu * d * LG / (epsilon**2 * n**2),
    quantity="privacy term of the user-as-item baseline on a μ-strongly convex loss",
    source="footnote 3's baseline with the strongly convex item-level rate [FKT20] (squared)",
    assumptions=_ASSUME + ("f(·, z) μ-strongly convex",),
    privacy=_PRIV,
    notes="m-exponent 0, n −2, d +1, ε −2.",
))

# Ratio of the user-level to the user-as-item privacy terms on the same instance (footnote 3):
# the gain user-level DP claims over item-level DP, as a function of m alone.
GAIN_RATIO = register(Bound(
    id="userlevel:gain_ratio",
    expr=1 / _sqrt(m),
    quantity="excess of Algorithm 3 over that of the user-as-item baseline, same data and ε",
    source="user-level SCO paper, Theorem 3.2/C.3's privacy term over footnote 3's "
           "(LR√(d log(1/δ))/(εn√m) ÷ LR√(d log(1/δ))/(εn))",
    assumptions=THM3_2.assumptions,
    privacy=_PRIV,
    notes="Theorem 3.2's conditions (ε ≤ 10, δ < 1/(mn)) are in its assumptions: a ratio in m "
          "alone cannot resolve them (bounds.core resolves conditions over the expression's "
          "symbols).  m-exponent −1/2: the convex rates' gain.  Upper bound only (both rates hide constants; "
          "the ratio's level is not predicted).",
))

GAIN_RATIO_SC = register(Bound(
    id="userlevel:gain_ratio_sc",
    expr=1 / m,
    quantity="excess ratio Algorithm 3 / user-as-item baseline on a μ-strongly convex loss",
    source="Remark 3.6's privacy term over the strongly convex user-as-item term "
           "(userlevel:rem3.6_privacy ÷ userlevel:trivial_sc_privacy)",
    assumptions=REM3_6.assumptions,
    privacy=_PRIV,
    notes="m-exponent −1 (the squared rates' gain).",
))

# ------------------------------------------------------------------------------------------------
# Crossovers (public functions for the experiments; sympy, no numpy)
# ------------------------------------------------------------------------------------------------


def n_star(d_: float, epsilon_: float, delta_: float) -> float:
    """Statistical/privacy crossover of OPT: n* = d log(1/δ)/ε² (1/√(nm) = √(d log(1/δ))/(εn√m)).

    ValueError unless d > 0, ε > 0 and δ ∈ (0, 1)."""
    import math
    for name, v in (("d", d_), ("epsilon", epsilon_)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number in (0, inf), got {v!r}")
    if not (isinstance(delta_, (int, float)) and 0 < delta_ < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta_!r}")
    return float(d_ * math.log(1 / delta_) / epsilon_**2)


__all__ = ["OPT", "ALG3_LAMBDA", "NS_R", "NS_BETA", "ALG1_BETA_MAX", "n_star"]
