"""Bounds of Tao, Zhang, Yu, Cheng, Dressler, Wang, "Second-Order Convergence in Private
Stochastic Non-Convex Optimization".

Setting (§4): population risk F(x) = E_z f(x; z), n i.i.d. samples per data set (per client in
the distributed case, m clients), (ε, δ)-DP under replace-one neighbours (Definition 3;
ICRL-DP, Definition 4, in the distributed case).  Assumption 1: every f(·; z) is G-Lipschitz,
M-smooth and ρ-Hessian-Lipschitz; Assumption 2: max F − F* ≤ U.  **In this paper ρ is the
Hessian-Lipschitz constant**, named ``hessian_lipschitz`` here because ``rho`` is the zCDP
parameter of the other papers.  An α-SOSP (Definition 2) has ‖∇F(x)‖ ≤ α and
λ_min(∇²F(x)) ≥ −√(ρα).

Constants the Õ hides are 1.  One log factor is kept explicitly: the (ε, δ) Gaussian mechanism
costs ``log_delta`` := 8 log(1.25/δ) (c1 = c2 = 8 log(1.25/δ)/log(1/δ) in Algorithm 2's noise
with replace-one sensitivities 2G/b1, 2M‖Δx‖/b2), and it always enters as ε²/log_delta (Lemma 7,
eq. 90–93), so the privacy terms are written with x = √(d·log_delta)/(nε).  Bounds that omit
it (``*_paper``) are the theorem as printed.

Registered ids
--------------
Framework (Theorem 1, §5):

* ``sosp:thm1``              α = c_α ψ: the SOSP accuracy Gauss-PSGD certifies from an oracle with
                             sampling noise nSG(σ) and Gaussian noise N(0, r²I).
* ``sosp:thm1_noise``        ψ = √(σ² + r²d) (eq. 3).
* ``sosp:lem1_curvature``    the curvature it can detect, √(ρα) = √(ρ c_α ψ) (Lemma 1, Definition 2).
* ``sosp:lem1_escape_time``  escape time from an exact strict saddle with curvature γ,
                             log(R/(ηr))/(ηγ) (Lemma 1's 𝔟(Γ)ηr ≥ R with R = √(α/ρ), η = √(ρα)/M²).
* ``sosp:lem1_diffusive``    competitor: the time pure diffusion takes to travel R, R²/(η²r²d).
* ``sosp:thm1_steps``        Lemma 6's step count Õ(UM²/(√ρ α^{5/2})).

Central Ada-DP-SPIDER (Theorem 2, §6):

* ``sosp:thm2``              (GUM/n)^{1/3} + G^{2/15}U^{2/5}M^{8/15}ρ^{−1/15} x^{2/5}.
* ``sosp:thm2_sampling``     its first (non-private) term;  ``sosp:thm2_privacy`` its second.
* ``sosp:thm2_paper``        the theorem's Õ form n^{−1/3} + (√d/(nε))^{2/5}.
* ``sosp:thm2_balance``      eq. 103: the larger of the four per-term solutions of the master
                             inequality (eq. 102) as a function of the drift threshold κ
                             (symbol ``kappa_drift``); substituting eq. 104's κ derives Theorem 2
                             (``derive_thm2`` / :func:`bounds.follows_from`).
* ``sosp:thm2_kappa``        eq. 104's κ = max{κ₁, κ₂}.
* ``sosp:lem8_refreshes``    Lemma 8: the number of O₁ refreshes, Uη/κ.
* ``sosp:thm2_curvature``    √(ρα) at Theorem 2's α: the curvature its output resolves.
* ``sosp:liu_claimed``       the prior claim [29] the paper calls flawed, n^{−1/3} + x^{3/7}.
* ``sosp:noise_scale``       the scale of one Gaussian release at a fixed batch, ∝ x.
* ``sosp:lem7_noise``        Lemma 7's estimation noise ψ = √(σ² + r²d) at given batches b1, b2
                             and drift threshold κ (eq. 3 with Lemma 7's σ and r).

Distributed (Theorem 3, §7):

* ``sosp:thm3``              (GUM/(mn))^{1/3} + G^{2/15}U^{2/5}M^{8/15}ρ^{−1/15} x_m^{2/5},
                             x_m = √(d·log_delta)/(√m nε)  (reading A: the theorem, its proof, Remark 3).
* ``sosp:thm3_sampling``, ``sosp:thm3_privacy``  its two terms.
* ``sosp:thm3_curvature``    √(ρα) at Theorem 3's α: the curvature the distributed output resolves.
* ``sosp:thm3_intro``        §1 contribution 3: (mn)^{−1/3} + (√(d·log_delta)/(εmn))^{2/5}
                             (reading B, errata SOSP-E1), with the same constants.
* ``sosp:thm3_intro_privacy`` reading B's privacy term alone (m-exponent −2/5).

Private model selection (Theorem 4, Remark 4, §7):

* ``sosp:thm4``              α' of Algorithm 4 (seven terms, as printed).
* ``sosp:thm4_hessian_error`` eq. 142: ‖∇²F̄ − ∇²F‖ ≤ M√(log(d/ω')/(mn)) + M d √(T·log_delta)/(√m nε)
                             at a fixed number T of candidates.
* ``sosp:thm4_hessian_error_tied``  the same with T = c_T UM²/(√ρ α^{5/2}), α = Theorem 3's rate
                             (M_s multiplies eq. 142; M is the landscape's, inside T and α).
* ``sosp:thm4_hessian_privacy`` eq. 142's privacy term alone; ``sosp:thm4_hessian_sampling`` its
                             sampling term alone; ``sosp:thm4_hessian_per_client``
                             eq. 142 at m = 1 (a competitor: no averaging over clients).
* ``sosp:thm4_gradient_error`` eq. 141: G√(log(d/ω')/(mn)) + G √(d T·log_delta)/(√m nε).
* ``sosp:thm4_gradient_privacy`` eq. 141's privacy term alone; ``sosp:thm4_gradient_sampling``
                             its sampling term alone; ``sosp:thm4_gradient_per_client`` eq. 141 at
                             m = 1 (a competitor).
* ``sosp:rem4_threshold``    Remark 4's dimension limit min{(√m nε)², (√m nε)^{6/13}}.
"""
from __future__ import annotations

from pathlib import Path

import sympy as sp

from bounds.compare import Derivation, follows_from
from bounds.core import UNIT_OPEN, Bound, register, register_paper, sym

# The paper's experiments and audits (imported with its bounds when its experiments are
# asked for) and the algorithms the report links.
register_paper(
    "sosp", "empirical.papers.sosp", algorithms=("algorithms.sosp.nonconvex",),
    title='Tao, Zhang, Yu, Cheng, Dressler, Wang, "Second-Order Convergence in Private Stochastic Non-Convex Optimization"',
    citation='Youming Tao, Zuyuan Zhang, Dongxiao Yu, Xiuzhen Cheng, Falko Dressler, Di Wang. [Second-Order Convergence in Private Stochastic Non-Convex Optimization](https://arxiv.org/abs/2505.15647), arXiv:2505.15647.',
    url='https://arxiv.org/abs/2505.15647',
    errata=str(Path(__file__).resolve().parents[2] / "docs" / "errata" / "sosp.md"))

n, d, m = sym("n"), sym("d"), sym("m")
epsilon, delta = sym("epsilon"), sym("delta", UNIT_OPEN)
G, U, M = sym("G"), sym("U"), sym("M")
hessian_lipschitz = sym("hessian_lipschitz")
log_delta = sym("log_delta")            # 8 log(1.25/δ): value supplied by the caller
kappa_drift = sym("kappa_drift")        # Algorithm 2's drift threshold κ (not the KL κ)
sigma, r, psi = sym("sigma"), sym("r"), sym("psi")
b1, b2 = sym("b1"), sym("b2")          # Algorithm 2's batch sizes of O₁ and O₂
gamma, alpha = sym("gamma"), sym("alpha")
c_alpha = sym("c_alpha")                # α = c_α ψ: the constant 16√C s μ² of Theorem 1
T = sym("T")
omega = sym("omega")

R_ = sp.Rational
_sqrt, _log, _max = sp.sqrt, sp.log, sp.Max
rho_h = hessian_lipschitz

_DP = "(ε, δ)-DP, replace-one neighbouring data sets (Definition 3)"
_ICRL = "(ε, δ)-ICRL-DP: each client's transcript is (ε, δ)-DP in its own records (Definition 4)"
_A1 = "Assumption 1: every f(·;z) is G-Lipschitz, M-smooth, ρ-Hessian-Lipschitz (ρ = hessian_lipschitz)"
_A2 = "Assumption 2: max_x F(x) − F* ≤ U"


def log_delta_value(delta_: float) -> float:
    """The value of ``log_delta`` at δ: 8·ln(1.25/δ) (Gaussian mechanism, c = 8 under replace-one)."""
    import math

    if not 0.0 < float(delta_) < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta_!r}")
    return 8.0 * math.log(1.25 / float(delta_))


#: x = √(d log_delta)/(nε) and its distributed form x_m = √(d log_delta)/(√m nε).
X_CENTRAL = _sqrt(d * log_delta) / (n * epsilon)
X_DISTRIBUTED = _sqrt(d * log_delta) / (_sqrt(m) * n * epsilon)

#: The constant in front of the privacy term of Theorems 2, 3: G^{2/15}U^{2/5}M^{8/15}ρ^{−1/15}.
PRIVACY_CONST = G**R_(2, 15) * U**R_(2, 5) * M**R_(8, 15) * rho_h**R_(-1, 15)

# ------------------------------------------------------------------------------------------------
# Theorem 1 and Lemma 1: the Gauss-PSGD framework
# ------------------------------------------------------------------------------------------------
PSI = _sqrt(sigma**2 + r**2 * d)

THM1_NOISE = register(Bound(
    id="sosp:thm1_noise", expr=PSI,
    quantity="the oracle's total noise ψ = √(σ² + r²d) (eq. 3)",
    source="SOSP paper, §5.1, eq. 3", kind="identity",
))

THM1 = register(Bound(
    id="sosp:thm1",
    expr=c_alpha * psi,
    quantity="α such that Gauss-PSGD (Algorithm 1) returns an α-SOSP of F w.p. ≥ 1 − ω, "
             "from an oracle ∇F + ζ + ξ, ζ ~ nSG(σ), ξ ~ N(0, r²I)",
    source="SOSP paper, Theorem 1 (§5.3, proof App. B): α = 4χ = 16√C s μ² ψ = Θ̃(ψ)",
    assumptions=(_A1, _A2, "parameters (5) with s, C absolute constants and μ a log factor"),
    kind="upper",
    notes="α = 16√C·s·μ²·ψ = c_α·ψ (c_α: the constant and the log factor μ², which the "
          "practical parametrization fixes once).  The claim: the certified accuracy is linear in "
          "the total noise ψ = √(σ² + r²d) (sosp:thm1_noise).",
))

LEM1_CURVATURE = register(Bound(
    id="sosp:lem1_curvature",
    expr=_sqrt(rho_h * c_alpha * psi),
    quantity="smallest negative curvature γ = −λ_min at an exact saddle from which Gauss-PSGD "
             "escapes w.p. ≥ 1 − ω (α = ψ up to the constant c_α)",
    source="SOSP paper, Lemma 1 and Definition 2: escape is guaranteed when λ_min ≤ −√(ρα)",
    assumptions=(_A1, "α = c_α ψ (Theorem 1), Γ, R, η of parameters (5)"),
    kind="upper",
    notes="Upper bound on the escape threshold γ*: Lemma 1 guarantees escape at γ ≥ √(ρα); "
          "with Γ ∝ 1/(η√(ρα)) (the paper's choice) no curvature much below √(ρα) can carry the "
          "noise out to R within Γ steps, so γ* ∝ √(ρψ) is also the expected scaling.",
))

ETA_ = _sqrt(rho_h * alpha) / M**2
RADIUS_ = _sqrt(alpha / rho_h)

LEM1_ESCAPE_TIME = register(Bound(
    id="sosp:lem1_escape_time",
    expr=_log(RADIUS_ / (ETA_ * r)) / (ETA_ * gamma),
    quantity="steps until ‖x_t − x̃‖ ≥ R from an exact saddle x̃ with λ_min = −γ, noise N(0, r²I)",
    source="SOSP paper, Lemma 1 (App. B.1): 𝔟(t)ηr/10 ≤ ‖𝒫_p(t)‖, 𝔟(t) = (1+ηγ)^t/√(2ηγ), "
           "solved for 𝔟(t)ηr = R",
    assumptions=(_A1, "η = √(ρα)/M², R = √(α/ρ) (practical parametrization, ι = 1)"),
    kind="upper",
    notes="(1+ηγ)^t ≈ e^{ηγt}; the √(2ηγ) and 1/10 constants only shift the log's argument.  "
          "The law is logarithmic in 1/r: its log-log slope in r is −1/log(R/(ηr)).",
))

LEM1_DIFFUSIVE = register(Bound(
    id="sosp:lem1_diffusive",
    expr=RADIUS_**2 / (ETA_**2 * r**2 * d),
    quantity="competitor: steps a driftless random walk with step noise ηr per coordinate needs "
             "to travel R (no negative curvature used)",
    source="competitor for the escape-time experiment (not in the paper)",
    kind="upper",
    notes="Slope −2 in r: what escape would cost if the noise did not excite the negative "
          "curvature exponentially.",
))

THM1_STEPS = register(Bound(
    id="sosp:thm1_steps",
    expr=U * M**2 / (_sqrt(rho_h) * alpha**R_(5, 2)),
    quantity="number of oracle calls T of Gauss-PSGD (Lemma 6), worst case over landscapes",
    source="SOSP paper, Lemma 6 and Theorem 1: T = Õ(16ι²UM²/(√ρ α^{5/2}))",
    assumptions=(_A1, _A2),
    kind="upper",
    notes="Worst case: U/Φ saddles each costing Γ steps.  One saddle costs ≈ α^{−1}.",
))

# ------------------------------------------------------------------------------------------------
# Theorem 2: central Ada-DP-SPIDER
# ------------------------------------------------------------------------------------------------
THM2_SAMPLING_EXPR = (G * U * M / n)**R_(1, 3)
THM2_PRIVACY_EXPR = PRIVACY_CONST * X_CENTRAL**R_(2, 5)

_THM2_SRC = "SOSP paper, Theorem 2 (§6, proof App. C.3, eq. 98–105)"
_THM2_ASSUME = (_A1, _A2, "b1 = nκ/(2Uη), b2 = nηχ²/(2U), κ of eq. 104, parameters (5)",
                "the paper assumes M ≥ √(ρα)")

THM2 = register(Bound(
    id="sosp:thm2",
    expr=THM2_SAMPLING_EXPR + THM2_PRIVACY_EXPR,
    quantity="α such that Gauss-PSGD with Ada-DP-SPIDER returns an α-SOSP of F (w.h.p.)",
    source=_THM2_SRC,
    assumptions=_THM2_ASSUME,
    privacy=_DP,
    kind="upper",
    notes="eq. 105 with Õ-constants 1 and the Gaussian mechanism's 8 log(1.25/δ) kept inside x "
          "(log_delta).  Exponents: n −1/3 (asymptotic; the privacy term has −2/5), d 1/5, ε 0 "
          "asymptotically (the privacy term has −2/5).",
))

THM2_SAMPLING = register(Bound(
    id="sosp:thm2_sampling", expr=THM2_SAMPLING_EXPR,
    quantity="Theorem 2's non-private term (GUM/n)^{1/3}",
    source=_THM2_SRC, assumptions=_THM2_ASSUME, privacy=_DP, kind="upper",
    notes="The rate without privacy (ε → ∞): exponent −1/3 in n.",
))

THM2_PRIVACY = register(Bound(
    id="sosp:thm2_privacy", expr=THM2_PRIVACY_EXPR,
    quantity="Theorem 2's privacy term G^{2/15}U^{2/5}M^{8/15}ρ^{−1/15}(√(d log_delta)/(nε))^{2/5}",
    source=_THM2_SRC, assumptions=_THM2_ASSUME, privacy=_DP, kind="upper",
    notes="Exponents −2/5 (n), 1/5 (d), −2/5 (ε).",
))

THM2_PAPER = register(Bound(
    id="sosp:thm2_paper", expr=n**R_(-1, 3) + (_sqrt(d) / (n * epsilon))**R_(2, 5),
    quantity="Theorem 2 as printed (Õ form, constants and logs dropped)",
    source=_THM2_SRC + " and §1 contribution 2", privacy=_DP, kind="upper",
))

#: eq. 102's four terms with η = √(ρα)/M², χ ≍ α (eq. 101): α² ≲ A + B + C + D.
MASTER_TERMS = {
    "A": G**2 * U * _sqrt(rho_h * alpha) / (M**2 * n * kappa_drift),
    "B": G**2 * d * log_delta * U**2 * rho_h * alpha / (M**4 * n**2 * epsilon**2 * kappa_drift**2),
    "C": M**4 * U * kappa_drift / (_sqrt(rho_h) * n * alpha**R_(5, 2)),
    "D": M**6 * d * log_delta * U**2 * kappa_drift / (rho_h * n**2 * epsilon**2 * alpha**5),
}
#: eq. 103: each term's solution of α² = term.
PER_TERM_SOLUTIONS = {
    "A": (G**2 * U * _sqrt(rho_h) / (M**2 * n * kappa_drift))**R_(2, 3),
    "B": G**2 * d * log_delta * U**2 * rho_h / (M**4 * n**2 * epsilon**2 * kappa_drift**2),
    "C": (M**4 * U * kappa_drift / (n * _sqrt(rho_h)))**R_(2, 9),
    "D": (M**6 * d * log_delta * U**2 * kappa_drift / (rho_h * n**2 * epsilon**2))**R_(1, 7),
}

THM2_BALANCE = register(Bound(
    id="sosp:thm2_balance",
    expr=_max(*PER_TERM_SOLUTIONS.values()),
    quantity="α from the master inequality (eq. 102) for a given drift threshold κ: the largest "
             "per-term solution (eq. 103)",
    source="SOSP paper, App. C.3, eq. 101–103",
    assumptions=_THM2_ASSUME,
    privacy=_DP,
    kind="upper",
    notes="κ (kappa_drift) is free; eq. 104 picks κ₁ (A = C) and κ₂ (B = D) and takes the max.",
))

KAPPA_1 = G**R_(3, 2) * U**R_(1, 2) * rho_h**R_(1, 2) / (M**R_(5, 2) * n**R_(1, 2))
KAPPA_2 = (G**R_(14, 15) * d**R_(2, 5) * U**R_(4, 5) * rho_h**R_(8, 15) * log_delta**R_(2, 5)
           / (M**R_(34, 15) * (n * epsilon)**R_(4, 5)))

THM2_KAPPA = register(Bound(
    id="sosp:thm2_kappa", expr=_max(KAPPA_1, KAPPA_2),
    quantity="Algorithm 2's drift threshold κ chosen by Theorem 2 (eq. 104)",
    source=_THM2_SRC + ", eq. 104", privacy=_DP, kind="identity",
    notes="κ₁ balances terms A and C of eq. 102, κ₂ balances B and D (log_delta kept).",
))

LEM8_REFRESHES = register(Bound(
    id="sosp:lem8_refreshes", expr=U * ETA_ / kappa_drift,
    quantity="number |𝒯| of O₁ refreshes of Ada-DP-SPIDER",
    source="SOSP paper, Lemma 8 (App. C.2): |𝒯| ≤ O(Uη/κ)",
    assumptions=(_A1, _A2, "T = O(U/(ηχ²))"), privacy=_DP, kind="upper",
))

THM2_CURVATURE = register(Bound(
    id="sosp:thm2_curvature", expr=_sqrt(rho_h * (THM2_SAMPLING_EXPR + THM2_PRIVACY_EXPR)),
    quantity="the negative curvature √(ρα) Gauss-PSGD + Ada-DP-SPIDER resolves at Theorem 2's α "
             "(Definition 2's Hessian tolerance of the output)",
    source=_THM2_SRC + " with Definition 2 and Lemma 1",
    assumptions=_THM2_ASSUME, privacy=_DP, kind="upper",
    notes="Exponents are half of Theorem 2's (n −1/6 asymptotically, the privacy term −1/5).  "
          "Lemma 1 assumes fresh isotropic noise at every step; Ada-DP-SPIDER's noise is frozen "
          "between refreshes (errata SOSP-E10): the experiment sosp.escape.spider.n measures it.",
))

LIU_CLAIMED = register(Bound(
    id="sosp:liu_claimed",
    expr=THM2_SAMPLING_EXPR + PRIVACY_CONST * X_CENTRAL**R_(3, 7),
    quantity="the rate [29] (Liu et al.) claims for DP-SOSP, which the paper shows is flawed",
    source="SOSP paper, §1 contribution 2 and §3 L1 (claimed by [29]): Õ(n^{−1/3} + (√d/(nε))^{3/7})",
    privacy=_DP, kind="upper",
    notes="Encoded with Theorem 2's constants so that the two differ only in the exponent of x "
          "(3/7 vs 2/5, a gap of 1/35).",
))

NOISE_SCALE = register(Bound(
    id="sosp:noise_scale", expr=X_CENTRAL,
    quantity="the scale of one Gaussian release of Ada-DP-SPIDER at a fixed batch: its std is "
             "z·2G_s/b with z ∝ √(log(1/δ))/ε, i.e. ∝ √(d·log_delta)/(nε) in norm at b ∝ n",
    source="SOSP paper, Algorithm 2 and Lemma 7 (O₁'s noise N(0, c1 G² log(1/δ)/(b1²ε²) I))",
    privacy=_DP, kind="identity",
    notes="Exponent −1 in ε: what a quantity driven by the Gaussian noise alone follows when "
          "everything else is held (the competitor of the plan-frozen controls).",
))

#: Lemma 7's σ² and r² at batches b1, b2 and drift threshold κ, log factors 1 (the sub-Gaussian
#: log²d of σ is a tail factor; the rms has none), r with the Gaussian mechanism's calibration
#: c1 = c2 = log_delta/(4 log(1/δ)) of Algorithm 2's lines 7, 13 at sensitivities 2G/b1, 2M/b2.
LEM7_SIGMA_SQ = G**2 / b1 + M**2 * kappa_drift / b2
LEM7_R_SQ = log_delta * (G**2 / b1**2 + M**2 * kappa_drift / b2**2) / epsilon**2
LEM7_NOISE = register(Bound(
    id="sosp:lem7_noise", expr=_sqrt(LEM7_SIGMA_SQ + LEM7_R_SQ * d),
    quantity="the rms estimation error ψ = √(σ² + r²d) of Ada-DP-SPIDER's ĝ at fixed batches "
             "b1, b2 and drift threshold κ (sampling variance σ², Gaussian noise r² per "
             "coordinate)",
    source="SOSP paper, Lemma 7 (proof App. C.1), eq. 3",
    assumptions=(_A1, "b1, b2, κ fixed (not Theorem 2's choices)"),
    privacy=_DP, kind="upper",
    notes="ε-exponent −1 where the Gaussian part dominates, 0 where the sampling part does; "
          "G and M bound the per-record spread (a record's variance may be smaller).",
))

# ------------------------------------------------------------------------------------------------
# Theorem 3: distributed Ada-DP-SPIDER, and the introduction's version (errata SOSP-E1)
# ------------------------------------------------------------------------------------------------
_THM3_SRC = "SOSP paper, Theorem 3 (§7, proof App. D, eq. 118–121; Remark 3)"
_THM3_ASSUME = _THM2_ASSUME + ("m clients, n records each, arbitrarily heterogeneous 𝒟_j",)
THM3_SAMPLING_EXPR = (G * U * M / (m * n))**R_(1, 3)
THM3_PRIVACY_EXPR = PRIVACY_CONST * X_DISTRIBUTED**R_(2, 5)

THM3 = register(Bound(
    id="sosp:thm3", expr=THM3_SAMPLING_EXPR + THM3_PRIVACY_EXPR,
    quantity="α such that Gauss-PSGD with distributed Ada-DP-SPIDER returns an α-SOSP of "
             "F = (1/m)Σ_j F_j",
    source=_THM3_SRC, assumptions=_THM3_ASSUME, privacy=_ICRL, kind="upper",
    notes="Reading A (errata SOSP-E1): the privacy term improves only as m^{−1/5} because each "
          "client adds single-client-scale noise (eq. 108, 112).",
))
THM3_CURVATURE = register(Bound(
    id="sosp:thm3_curvature", expr=_sqrt(rho_h * (THM3_SAMPLING_EXPR + THM3_PRIVACY_EXPR)),
    quantity="the negative curvature √(ρα) Gauss-PSGD + distributed Ada-DP-SPIDER resolves at "
             "Theorem 3's α (Definition 2's Hessian tolerance of the output)",
    source=_THM3_SRC + " with Definition 2",
    assumptions=_THM3_ASSUME, privacy=_ICRL, kind="upper",
    notes="Half of Theorem 3's exponents: m^{−1/10} where the privacy term dominates, "
          "(mn)^{−1/6} in the sampling term.",
))
THM3_SAMPLING = register(Bound(
    id="sosp:thm3_sampling", expr=THM3_SAMPLING_EXPR,
    quantity="Theorem 3's non-private term (GUM/(mn))^{1/3}", source=_THM3_SRC,
    assumptions=_THM3_ASSUME, privacy=_ICRL, kind="upper"))
THM3_PRIVACY = register(Bound(
    id="sosp:thm3_privacy", expr=THM3_PRIVACY_EXPR,
    quantity="Theorem 3's privacy term, ∝ (√d/(√m nε))^{2/5}", source=_THM3_SRC,
    assumptions=_THM3_ASSUME, privacy=_ICRL, kind="upper"))

_INTRO_PRIVACY_EXPR = PRIVACY_CONST * (_sqrt(d * log_delta) / (epsilon * m * n))**R_(2, 5)
THM3_INTRO = register(Bound(
    id="sosp:thm3_intro", expr=THM3_SAMPLING_EXPR + _INTRO_PRIVACY_EXPR,
    quantity="the introduction's statement of Theorem 3 (reading B)",
    source="SOSP paper, §1 contribution 3: Õ((mn)^{−1/3} + (√d/(εmn))^{2/5})",
    privacy=_ICRL, kind="upper",
    notes="Contradicts Theorem 3 (m^{−2/5} against m^{−1/5} in the privacy term); encoded with "
          "Theorem 3's constants so the readings differ only in the m-dependence (SOSP-E1).",
))
THM3_INTRO_PRIVACY = register(Bound(
    id="sosp:thm3_intro_privacy", expr=_INTRO_PRIVACY_EXPR,
    quantity="reading B's privacy term (√d/(εmn))^{2/5}",
    source="SOSP paper, §1 contribution 3", privacy=_ICRL, kind="upper"))

# ------------------------------------------------------------------------------------------------
# Theorem 4 and Remark 4: private model selection (Algorithm 4)
# ------------------------------------------------------------------------------------------------
_THM4_SRC = "SOSP paper, Theorem 4 (§7, proof App. D.3, eq. 141–143)"
THM4 = register(Bound(
    id="sosp:thm4",
    expr=(alpha + 1 / (m * n) + 1 / _sqrt(m * n) + alpha / _sqrt(m * n)
          + _sqrt(d) / (_sqrt(m) * n * epsilon * alpha**R_(5, 4))
          + d / (_sqrt(m) * n * epsilon * alpha**R_(3, 4))
          + d**2 / (m * n**2 * epsilon**2 * alpha**R_(5, 2))),
    quantity="α' such that Algorithm 4's selected point is an α'-SOSP, given an α-SOSP among "
             "T = Õ(α^{−5/2}) candidates",
    source=_THM4_SRC, assumptions=(_A1, "mn ≥ (4/9) log(8d/ω')"), privacy=_ICRL, kind="upper",
    notes="As printed; α/√(mn) is most likely √α/√(mn) (dominated either way, SOSP-E6).  T has "
          "been replaced by α^{−5/2}; d enters squared only through the squared Hessian "
          "tolerance.",
))

THM4_HESSIAN_ERROR = register(Bound(
    id="sosp:thm4_hessian_error",
    expr=(M * _sqrt(_log(d / omega) / (m * n))
          + M * d * _sqrt(T * log_delta) / (_sqrt(m) * n * epsilon)),
    quantity="‖∇²F̄(x) − ∇²F(x)‖_op of Algorithm 4's aggregated noisy Hessian at a candidate",
    source=_THM4_SRC + ", eq. 142 (matrix Bernstein + ‖H_p‖ ≤ O(Md√(T log(1/δ))/(√m nε)))",
    assumptions=(_A1, "T candidates, each client's noise calibrated for 2T releases"),
    privacy=_ICRL, kind="upper",
    notes="At a fixed T the d-exponent is 1 (noise std ∝ √d from the Frobenius sensitivity, "
          "operator norm of a Wigner matrix ∝ √d more).  With T tied to α = Theorem 3's rate "
          "(T ∝ α^{−5/2} ∝ d^{−1/2}) it is 3/4.",
))

THM4_HESSIAN_PRIVACY = register(Bound(
    id="sosp:thm4_hessian_privacy",
    expr=M * d * _sqrt(T * log_delta) / (_sqrt(m) * n * epsilon),
    quantity="‖∇²F̄(x) − ∇²F(x)‖_op of Algorithm 4's aggregated noisy Hessian, privacy term",
    source=_THM4_SRC + ", eq. 142's second term (‖H_p‖ ≤ O(Md√(T log(1/δ))/(√m nε)))",
    assumptions=(_A1, "T candidates, each client's noise calibrated for 2T releases"),
    privacy=_ICRL, kind="upper",
    notes="The term that dominates where the privacy noise does (d√(T log_delta)/(ε√n) ≫ "
          "√log(d/ω')); its exponents are the ones the noise sets: d¹, n⁻¹, ε⁻¹, m^{−1/2}.",
))

THM4_HESSIAN_SAMPLING = register(Bound(
    id="sosp:thm4_hessian_sampling",
    expr=M * _sqrt(_log(d / omega) / (m * n)),
    quantity="‖∇²F̄(x) − ∇²F(x)‖_op of Algorithm 4's aggregated Hessian, sampling term",
    source=_THM4_SRC + ", eq. 142's first term (matrix Bernstein over the mn held-out records)",
    assumptions=(_A1,), privacy=_ICRL, kind="upper",
    notes="Free of ε and T: what the error would follow if the privacy noise did not (the "
          "competitor of sosp.select.eps, .n and .T).",
))

THM4_HESSIAN_PER_CLIENT = register(Bound(
    id="sosp:thm4_hessian_per_client",
    expr=(M * _sqrt(_log(d / omega) / n) + M * d * _sqrt(T * log_delta) / (n * epsilon)),
    quantity="eq. 142 without the server's average over m clients (competitor)",
    source=_THM4_SRC + ", eq. 142 at m = 1 (competing reading, not the paper's)",
    assumptions=(_A1,), privacy=_ICRL, kind="upper",
    notes="What one client's release would carry if averaging did not reduce the m clients' "
          "independent noises: m-free.  The competitor of sosp.select.m.",
))

THM4_GRADIENT_ERROR = register(Bound(
    id="sosp:thm4_gradient_error",
    expr=(G * _sqrt(_log(d / omega) / (m * n))
          + G * _sqrt(d * T * log_delta) / (_sqrt(m) * n * epsilon)),
    quantity="‖∇F̄(x) − ∇F(x)‖ of Algorithm 4's aggregated noisy gradient at a candidate",
    source=_THM4_SRC + ", eq. 141", privacy=_ICRL, kind="upper",
    notes="d-exponent 1/2 at fixed T: what a vector release costs (the competitor of the "
          "Hessian's d-exponent 1).",
))

THM4_GRADIENT_PRIVACY = register(Bound(
    id="sosp:thm4_gradient_privacy",
    expr=G * _sqrt(d * T * log_delta) / (_sqrt(m) * n * epsilon),
    quantity="‖∇F̄(x) − ∇F(x)‖ of Algorithm 4's aggregated noisy gradient, privacy term",
    source=_THM4_SRC + ", eq. 141's second term (the average of m client noises, each "
                       "N(0, σ_g²I) with σ_g ∝ G√(T log(1/δ))/(nε))",
    assumptions=(_A1, "T candidates, each client's noise calibrated for 2T releases"),
    privacy=_ICRL, kind="upper",
    notes="Exponents −1 (n), −1/2 (m), +1/2 (T), −1 (ε), +1/2 (d), +1 (G): the norm of a "
          "Gaussian vector attains it.",
))

THM4_GRADIENT_SAMPLING = register(Bound(
    id="sosp:thm4_gradient_sampling",
    expr=G * _sqrt(_log(d / omega) / (m * n)),
    quantity="‖∇F̄(x) − ∇F(x)‖ of Algorithm 4's aggregated gradient, sampling term",
    source=_THM4_SRC + ", eq. 141's first term (vector Bernstein over the mn held-out records)",
    assumptions=(_A1,), privacy=_ICRL, kind="upper",
    notes="Free of ε and T: what the error would follow if the privacy noise did not.",
))

THM4_GRADIENT_PER_CLIENT = register(Bound(
    id="sosp:thm4_gradient_per_client",
    expr=G * _sqrt(_log(d / omega) / n) + G * _sqrt(d * T * log_delta) / (n * epsilon),
    quantity="competitor: eq. 141 at m = 1, the gradient error if the server's average of m "
             "clients did not reduce their noise",
    source=_THM4_SRC + ", eq. 141 at m = 1 (competing reading, not the paper's)",
    privacy=_ICRL, kind="upper",
    notes="m-free (slope 0 in m): the competitor of the gradient error's m^{−1/2}.",
))

#: T tied to the accuracy: Lemma 6's count U M²/(√ρ α^{5/2}) at α = Theorem 3's rate.
T_TIED = (U * M**2 / (_sqrt(rho_h) * alpha**R_(5, 2))).subs(alpha, THM3_SAMPLING_EXPR + THM3_PRIVACY_EXPR)

#: c_T: the constant of T = c_T·UM²/(√ρ α^{5/2}); M_s: the per-record Hessian spread that
#: multiplies eq. 142 (= M in the paper; kept apart from the landscape M inside T and α).
c_T, M_s = sym("c_T"), sym("M_s")

THM4_HESSIAN_ERROR_TIED = register(Bound(
    id="sosp:thm4_hessian_error_tied",
    expr=THM4_HESSIAN_ERROR.expr.subs(M, M_s).subs(T, c_T * T_TIED),
    quantity="eq. 142's Hessian error with T = Õ(α^{−5/2}) candidates, α = Theorem 3's rate",
    source=_THM4_SRC + ", eq. 142 with the T of Lemma 6 (as in Theorem 4's last step)",
    privacy=_ICRL, kind="upper",
    notes="d-exponent 3/4: T ∝ α^{−5/2} ∝ d^{−1/2} offsets d^{1/4} of the fixed-T exponent 1.",
))

N_SEL = _sqrt(m) * n * epsilon
REM4_THRESHOLD = register(Bound(
    id="sosp:rem4_threshold", expr=sp.Min(N_SEL**2, N_SEL**R_(6, 13)),
    quantity="largest d for which private selection keeps α' ≲ α",
    source="SOSP paper, Remark 4", privacy=_ICRL, kind="identity",
    notes="With α = d^{1/5}N^{−2/5}: √d/(Nα^{5/4}) ≤ α iff d ≤ N², d²/(N²α^{5/2}) ≤ α iff "
          "d ≤ N^{6/13}.",
))


# ------------------------------------------------------------------------------------------------
# Derivation of Theorem 2 from the balance of eq. 102's terms
# ------------------------------------------------------------------------------------------------
def solve_kappa(first: str, second: str) -> sp.Expr:
    """The κ at which two per-term solutions of eq. 103 are equal (positive real root)."""
    eq = sp.Eq(sp.log(PER_TERM_SOLUTIONS[first]), sp.log(PER_TERM_SOLUTIONS[second]))
    sol = sp.solve(sp.expand_log(eq, force=True), kappa_drift)
    if len(sol) != 1:
        raise ValueError(f"expected one κ balancing {first} and {second}, got {sol}")
    return sp.simplify(sol[0])


def derive_thm2(variables=("n", "d", "epsilon")) -> dict[str, Derivation]:
    """Theorem 2 (and each of its terms) from the balance, via :func:`bounds.follows_from`.

    * privacy term ⟸ eq. 103's B and D at κ₂ (the κ balancing them);
    * sampling term ⟸ eq. 103's A and C at κ₁;
    * the full bound ⟸ the max of all four at κ = max{κ₁, κ₂} (eq. 104).
    Each ``Derivation`` is truthy when the substituted balance has, in every variable, the
    asymptotic exponent of the corresponding bound.
    """
    k1, k2 = solve_kappa("A", "C"), solve_kappa("B", "D")
    bd = Bound(id="sosp:balance_BD", expr=sp.Max(PER_TERM_SOLUTIONS["B"], PER_TERM_SOLUTIONS["D"]),
               quantity="eq. 103 B, D", source="derived")
    ac = Bound(id="sosp:balance_AC", expr=sp.Max(PER_TERM_SOLUTIONS["A"], PER_TERM_SOLUTIONS["C"]),
               quantity="eq. 103 A, C", source="derived")
    out = {
        "privacy": follows_from(THM2_PRIVACY, bd, {"kappa_drift": k2}, variables),
        "sampling": follows_from(THM2_SAMPLING, ac, {"kappa_drift": k1}, variables),
        "full": follows_from(THM2, THM2_BALANCE, {"kappa_drift": sp.Max(KAPPA_1, KAPPA_2)},
                             variables),
    }
    return out


# Corollaries from their theorems, for `dprates bounds derive` (bounds/explain.py).
from bounds.explain import DerivationSpec, register_derivation  # noqa: E402

register_derivation(DerivationSpec(
    "sosp:thm2", "sosp:thm2_balance", lambda: {"kappa_drift": sp.Max(KAPPA_1, KAPPA_2)},
    ("n", "d", "epsilon"),
    note="eq. 104: the drift κ = max{κ₁, κ₂} balancing eq. 103's terms"))
