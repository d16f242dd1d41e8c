"""Bounds of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression via Adaptive
Clipping".

Setting: one-pass private linear regression.  Data (x_i, y_i), i < n, i.i.d. with
y = ⟨x, w*⟩ + z, z independent of x, E z² = σ²; H = E[xxᵀ] normalised to ‖H‖₂ = 1, so
μ = λ_min(H) = 1/κ with κ = ``condition_number``.  The bounded quantity is the excess
population risk L(w̄) − L(w*) = ½ (w̄ − w*)ᵀ H (w̄ − w*) (the factor ½ included).  (ε, δ)-DP under
*replace-one* neighbours (the paper's text; its Def. 2.2 parenthetical describes add/remove, the
proofs' sensitivities 2ηζ and 2ηζ_t/b are replace-one: errata LR-E2).

Symbols (shared table, :func:`bounds.core.sym`): ``n`` (the paper's N), ``d``, ``epsilon``,
``delta``, ``sigma`` (label-noise std), ``condition_number`` (κ), ``w_norm`` (‖w*‖_H; = ‖w*‖ for
H = I), ``K2`` and ``a`` (the (H, K₂, a, β)-Tail constants; a = ½ sub-Gaussian, a = 1
sub-exponential), ``T`` (number of phases of DP-AMBSSGD), ``alpha`` (noise multiplier),
``eta``, ``zeta`` (step size and clip of DP-SSGD).

Conventions (errata LR-E*):

* R_x² (the §2 fourth-moment constant, E‖x‖²xxᵀ ⪯ R_x²H) is encoded as ``d + 2``: exact for
  x ~ N(0, I), an upper bound for Gaussian x with ‖H‖ = 1 (Tr H + 2‖H‖ ≤ d + 2).  The paper's
  "R_x² ≤ d‖H‖" (LR-E3) changes constants only.
* Tr(H⁻¹) ≤ κd and Tr(H) ≤ d are used where the lemma has traces (equalities for H = I).
* Õ/Ω̃ constants the paper hides are 1.  Theorem 3.7's hidden polylog is made explicit as
  log^{4a+1} n (T = c₁κ log n phases times ζ_t² ∝ log^{4a} n, Lemma 3.11): reading LR-E5.  The
  theorem "as printed" (no hidden log) is ``linreg:thm37_printed``.
* Theorem 3.7's phase count T = c₁κ log n is encoded with c₁ = 1 (the value the algorithm
  uses; the paper leaves c₁ free, and its N⁻¹⁰⁰ bias needs c₁ ≈ 400: LR-E6).

Registered ids
--------------
Upper bounds (excess risk):

* ``linreg:thm11``          Theorem 1.1 (informal, x ~ N(0, I)): 8σ²d/n + σ²d²/(ε²n²).
* ``linreg:thm32``          Theorem 3.2, DP-SSGD: σ²d/n + K₂²κ²d²(‖w*‖²_H+σ²)log^{4a}n·log²(n/δ)/(ε²n²).
* ``linreg:thm32_privacy``  its privacy term alone.
* ``linreg:cor33``          Corollary 3.3 (Gaussian): dσ²/n + d²(‖w*‖²+σ²)log²(n/δ)/(ε²n²).
* ``linreg:lem35``          Lemma 3.5, DP-SSGD without clipping, explicit in η, ζ, α.
* ``linreg:lem311``         Lemma 3.11, DP-AMBSSGD without clipping, explicit in T, α (b, s, η of
                            Theorem 3.7 substituted).
* ``linreg:lem35_privacy``  Lemma 3.5's α-dependent terms (in η, ζ, α).
* ``linreg:lem35_cor33_privacy``  Lemma 3.5's α-terms at Corollary 3.3's η, ζ, α.
* ``linreg:lem35_thm31_privacy``  Lemma 3.5's α-terms at Theorem 3.1's α and Cor. 3.3's ζ, η free.
* ``linreg:lem311_main``    Lemma 3.11 without its bias term (privacy + statistical terms).
* ``linreg:lem311_bias``    Lemma 3.11's bias term (σ = 0): 4e^{−ημ}‖w*‖²e^{−ημT/4}/(η²μ²T²).
* ``linreg:lem311_privacy`` Lemma 3.11 minus its value at α = 0 (every α-dependent term).
* ``linreg:lem311_nonprivate`` Lemma 3.11 at α = 0.
* ``linreg:adaptive_privacy_alpha``  Lemma 3.11's leading privacy term
                            96α²K₂²R_x²log^{4a}n σ²Tr(H⁻¹)/(Tb²), in α (the α-sweeps' bound).
* ``linreg:thm37``          Theorem 3.7: ‖w*‖²_H/n¹⁰⁰ + 8σ²d/n + κ²d²σ² log^{4a+1}n·log(1/δ)/(ε²n²).
* ``linreg:thm37_printed``  the same with the hidden polylog dropped.
* ``linreg:thm37_privacy``, ``linreg:thm37_nonprivate``  its privacy and 8σ²d/n terms.
* ``linreg:thm37_main``     Theorem 3.7 without the ‖w*‖²_H/n¹⁰⁰ bias term.
* ``linreg:cor38``          Corollary 3.8 (Gaussian).
* ``linreg:cor38_privacy``  its privacy term 8d²σ² log(1/δ)/(ε²n²) alone.
* ``linreg:ssp_privacy``    sufficient statistics perturbation's privacy term (the prior method of
                            §1 / Thm 3.2 Remark ii) with SSP's own sensitivity.
* ``linreg:ssp_privacy_rdp`` the same with α from the Gaussian mechanism's RDP curve (ε sweeps).
* ``linreg:objpert_privacy`` objective perturbation's privacy term (Kifer et al. 2012, §1 / Thm 3.2
                            Remark ii) on the instance, first order.
* ``linreg:dperm_privacy``  §1's DP-ERM privacy term L‖C‖√d/(εN) with L ≈ d (convex Lipschitz).
* ``linreg:fixed_clip``     ours: Algorithm 2 with a *fixed* clip ζ = 4K₂R_x log^{2a}n(‖w*‖_H + √κσ)
                            (Theorem 3.2's ζ), eq. (60) with ζ_t ≡ ζ, b = n/T (no DP-STAT points).
* ``linreg:fixed_clip_privacy``  its α-dependent term.
* ``linreg:fixed_clip_floor``  ours: that term at σ = 0, the floor fixed clipping keeps as σ → 0.
* ``linreg:lipschitz_clip_privacy``  ours: the same with the worst-case ("Lipschitz") clip
                            ζ = log^{2a}n·(R_x²‖w*‖ + R_xσ) of prior DP-SGD analyses: d³.
* ``linreg:cai_upper``      Cai, Wang, Zhang 2021 upper bound, σ²d/n + (d‖w*‖²_H + σ²)d²/(ε²n²).
* ``linreg:prior_efficient`` prior efficient methods (DP-SGD, SSP): d²R_x²‖w*‖²/(ε²n²) = d³‖w*‖²/(ε²n²).
* ``linreg:naive_privacy_boundary``  ours: the same at ε = √(log(n/δ)/n) (Theorem 3.1's cap).
* ``linreg:naive_privacy``  ours: DP-SSGD's privacy term without amplification by shuffling
                            (α ∝ 1/ε): d²(‖w*‖²+σ²)/(ε²n) — the rate the 1/√n of Theorem 3.1 removes.

Lower bound:

* ``linreg:cai_lower``      Cai, Wang, Zhang 2021: σ²d/n + σ²d²/(ε²n²).

Noise multipliers (kind ``conversion``):

* ``linreg:thm31_alpha``    Theorem 3.1 / Cor. 3.3: α = log(n/δ)/(ε√n).
* ``linreg:thm36_alpha``    Theorem 3.6 (ε ≤ log(1/δ)): α = √(8 log(1/δ))/ε.
* ``linreg:thm36_alpha_general``  Theorem 3.6, any ε: α = 2√(log(1/δ)+ε)/ε.
* ``linreg:thm36_rho``      Theorem 3.6: DP-AMBSSGD is 1/α²-zCDP.
"""
from __future__ import annotations

from pathlib import Path

import sympy as sp

from bounds.core import UNIT_OPEN, Bound, register, register_paper, sym

# The paper's experiments and audits (imported with its bounds when its experiments are
# asked for) and the algorithms the report links.
register_paper(
    "linreg", "empirical.papers.linreg", algorithms=("algorithms.linreg.adaptive_clipping",),
    title='Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression via Adaptive Clipping"',
    citation='Prateek Varshney, Abhradeep Thakurta, Prateek Jain. [(Nearly) Optimal Private Linear Regression via Adaptive Clipping](https://arxiv.org/abs/2207.04686), arXiv:2207.04686.',
    url='https://arxiv.org/abs/2207.04686',
    errata=str(Path(__file__).resolve().parents[2] / "docs" / "errata" / "linreg.md"))

n, d, epsilon, delta, sigma = sym("n"), sym("d"), sym("epsilon"), sym("delta", UNIT_OPEN), sym("sigma")
condition_number, w_norm = sym("condition_number"), sym("w_norm")
K2, a, T, alpha = sym("K2"), sym("a"), sym("T"), sym("alpha")
eta, zeta = sym("eta"), sym("zeta")

_log, _sqrt, _exp = sp.log, sp.sqrt, sp.exp

_DP = "(ε, δ)-DP, replace-one neighbouring datasets (§2; errata LR-E2)"
_SRC = "linreg paper"

#: R_x² for Gaussian x with ‖H‖ = 1 and Tr H ≤ d (exact, d + 2, for H = I): errata LR-E3.
RX2 = d + 2
#: μ = λ_min(H) with ‖H‖ = 1.
MU = 1 / condition_number
#: Tr(H⁻¹) ≤ κd (equality for H = I).
TRACE_HINV = condition_number * d
#: Tr(H) ≤ d.
TRACE_H = d

#: Theorem 3.7's schedule with c₁ = 1 (LR-E6): T = κ log n phases.
T_THM37 = condition_number * _log(n)
#: Theorem 3.7: b = n/T − s with s = b/10, i.e. b = 10n/(11T), s = n/(11T).
B_THM37 = 10 * n / (11 * T)
S_THM37 = n / (11 * T)
#: Theorem 3.7's step size η = b/(R_x² + (b − 1)‖H‖).
ETA_THM37 = B_THM37 / (RX2 + B_THM37 - 1)
#: Theorem 3.7's noise multiplier (Theorem 3.6, ε ≤ log(1/δ)).
ALPHA_THM36 = _sqrt(8 * _log(1 / delta)) / epsilon
#: Theorem 3.1 / Corollary 3.3's noise multiplier (constant c₃ = 1).
ALPHA_THM31 = _log(n / delta) / (epsilon * _sqrt(n))
#: Theorem 3.2's fixed clip ζ = 4K₂R_x log^{2a} n (√‖H‖ ‖w*‖ + √κ σ).
ZETA_THM32 = 4 * K2 * _sqrt(RX2) * _log(n)**(2 * a) * (w_norm + _sqrt(condition_number) * sigma)
#: The worst-case ("Lipschitz") clip of prior DP-SGD analyses: ‖x‖²‖w − w*‖ + ‖x‖|z| at w₀ = 0,
#: with ‖x‖² ≤ R_x² log^{2a} n.
ZETA_LIPSCHITZ = _log(n)**(2 * a) * (RX2 * w_norm + _sqrt(RX2) * sigma)

_TAIL = ("x satisfies the (H, K₂, a, β)-Tail condition (Def. 2.1; eq. (3) read with ≤ 2, LR-E1), "
         "z independent of x satisfies (σ², K₂, a, β)-Tail")
_NORM = "‖H‖₂ = 1 (normalisation), κ = 1/λ_min(H), R_x² = d + 2 (LR-E3)"


def _bound(label: str, expr, quantity: str, source: str, **kw) -> Bound:
    return register(Bound(id=f"linreg:{label}", expr=expr, quantity=quantity,
                          source=f"{_SRC}, {source}", **kw))


_EXCESS = "excess population risk L(w̄) − L(w*) = ½‖w̄ − w*‖²_H"
_PRIV_TERM = ("privacy term of the excess risk: the part that vanishes with the privacy noise "
              "(measured with common random numbers, same data with and without the noise)")

# ------------------------------------------------------------------------------------------------
# Theorem 1.1 and the prior work it is compared with
# ------------------------------------------------------------------------------------------------
THM11 = _bound(
    "thm11", 8 * sigma**2 * d / n + sigma**2 * d**2 / (epsilon**2 * n**2), _EXCESS,
    "Theorem 1.1 (informal)",
    assumptions=("x ~ N(0, I_d), z ~ N(0, σ²)", "n ≥ d log³ d", "w.p. ≥ 1 − n⁻¹⁰⁰"),
    privacy=_DP, conditions=(sp.Ge(n, d * _log(d)**3),),
    notes="Õ constant 1; the sample-size log power differs across the paper (d log d, d log² d, "
          "d log³ d): the theorem's d log³ d is encoded (LR-E9).")

CAI_LOWER = _bound(
    "cai_lower", sigma**2 * d / n + sigma**2 * d**2 / (epsilon**2 * n**2),
    "minimax excess risk of any (ε, δ)-DP estimator", "Thm 3.7 Remark ii, quoting Cai et al. 2021",
    kind="lower", privacy=_DP, assumptions=("Gaussian design, Gaussian label noise",))

CAI_UPPER = _bound(
    "cai_upper", sigma**2 * d / n + (d * w_norm**2 + sigma**2) * d**2 / (epsilon**2 * n**2),
    _EXCESS, "§1, Cai et al. 2021's upper bound (exponential-time-free, n ≥ d^{3/2})",
    privacy=_DP, conditions=(sp.Ge(n, d**sp.Rational(3, 2)),))

PRIOR_EFFICIENT = _bound(
    "prior_efficient", d**2 * RX2 * w_norm**2 / (epsilon**2 * n**2), _PRIV_TERM,
    "Theorem 3.2 Remark ii (DP-SGD, objective perturbation, SSP: ≈ d²R_x²‖w*‖²/(ε²n²), "
    "d³/(ε²n²) for Gaussian x and σ = 0)", privacy=_DP,
    notes="R_x² = d + 2 (LR-E3); the d³ the paper quotes for x ~ N(0, I).")

NAIVE_PRIVACY = _bound(
    "naive_privacy", d**2 * (w_norm**2 + sigma**2) * _log(1 / delta) / (epsilon**2 * n), _PRIV_TERM,
    "ours: DP-SSGD's privacy term with parallel composition only (α = √(2 log(1.25/δ))/ε, no "
    "shuffling amplification); Lemma 3.5's 4ζ²α²Tr(H⁻¹)/n with ζ² ∝ d(‖w*‖²+σ²)", privacy=_DP,
    notes="not in the paper; the competitor the n⁻² of Theorem 3.1 must beat.")

# ------------------------------------------------------------------------------------------------
# §3.1 DP-SSGD
# ------------------------------------------------------------------------------------------------
THM31_ALPHA = _bound(
    "thm31_alpha", ALPHA_THM31, "noise multiplier α of DP-SSGD (std 2ηζα on each step)",
    "Theorem 3.1 (α = Ω(log(n/δ)/(ε√n)), constant 1 as in Corollary 3.3)", kind="conversion",
    privacy=_DP, conditions=(sp.Le(epsilon, _sqrt(_log(n / delta) / n)),),
    notes="valid only for ε = O(√(log(n/δ)/n)) (amplification by shuffling, Feldman et al. 2021 "
          "Thm 3.8): errata LR-E7.")

_THM32_PRIV = (K2**2 * condition_number**2 * d**2 * (w_norm**2 + sigma**2) * _log(n)**(4 * a)
               * _log(n / delta)**2 / (epsilon**2 * n**2))
THM32 = _bound(
    "thm32", sigma**2 * d / n + _THM32_PRIV, _EXCESS, "Theorem 3.2 (with eq. (6)'s log^{4a} n)",
    assumptions=(_TAIL, _NORM, "η, α, ζ of Theorem 3.2", "w.p. ≥ 1 − n⁻¹⁰⁰"), privacy=_DP,
    conditions=(sp.Le(epsilon, _sqrt(_log(n / delta) / n)),
                sp.Ge(n, condition_number * d * _log(condition_number * d + 1)**(2 * a + 1)
                      * _log(1 / delta) / epsilon)),
    notes="Õ: the log^{4a} n of eq. (6) kept, constant 1; log(κd) read as log(κd + 1) so that "
          "d = κ = 1 is not degenerate.")
THM32_PRIVACY = _bound("thm32_privacy", _THM32_PRIV, _PRIV_TERM, "Theorem 3.2, second term",
                       privacy=_DP, assumptions=THM32.assumptions)

COR33 = _bound(
    "cor33", d * sigma**2 / n + d**2 * (w_norm**2 + sigma**2) * _log(n / delta)**2
    / (n**2 * epsilon**2), _EXCESS, "Corollary 3.3",
    assumptions=("x ~ N(0, I), z ~ N(0, σ²)", "η = 1/(4d), ζ = √d√(‖w*‖²+σ²) log n, "
                 "α = log(n/δ)/(ε√n)"), privacy=_DP,
    conditions=(sp.Le(epsilon, _sqrt(_log(1 / delta) / n)),),
    notes="item 1 writes ε = O(√(log(1/δ)/n)) where Thm 3.1 has log(n/δ); the sample condition "
          "'N ≥ d² log(ε/log(1/δ))' is garbled and not encoded (LR-E8).")

_L35_NOISE = sigma**2 + 4 * zeta**2 * alpha**2 / MU          # ‖Σ + 4ζ²α²I‖_H with Σ = σ²H
LEM35 = _bound(
    "lem35",
    RX2 / 2 * _exp(-eta * MU * (n / 2 + 1)) * w_norm**2
    + (eta * RX2 / (1 - eta * RX2)) * d * _L35_NOISE / n
    + (sigma**2 * d + 4 * zeta**2 * alpha**2 * TRACE_HINV) / n,
    _EXCESS + " (in expectation, no clipping)", "Lemma 3.5",
    assumptions=("no gradient is clipped", "η ≤ 1/(2R_x²)", _NORM, "Σ = σ²H (z independent of x)"),
    privacy=_DP, conditions=(sp.Le(eta, 1 / (2 * RX2)),),
    notes="w_norm here is ‖w*‖₂ (the lemma's bias term); Tr(H⁻¹) = κd.")
LEM35_PRIVACY = _bound(
    "lem35_privacy", sp.expand(LEM35.expr - LEM35.expr.subs(alpha, 0)),
    _PRIV_TERM, "Lemma 3.5, its α-dependent terms", privacy=_DP, assumptions=LEM35.assumptions)

#: Corollary 3.3's parameters: η = 1/(4d), ζ = √d·√(‖w*‖² + σ²)·log n, α = log(n/δ)/(ε√n).
COR33_PARAMS = {eta: 1 / (4 * d), zeta: _sqrt(d) * _sqrt(w_norm**2 + sigma**2) * _log(n),
                alpha: ALPHA_THM31}
LEM35_COR33_PRIVACY = _bound(
    "lem35_cor33_privacy", LEM35_PRIVACY.expr.subs(COR33_PARAMS), _PRIV_TERM,
    "Lemma 3.5's α-terms at Corollary 3.3's η, ζ, α (the explicit form behind Cor. 3.3's "
    "d²(‖w*‖²+σ²)log²(n/δ)/(ε²n²), with ζ's log²n kept)", privacy=_DP,
    assumptions=LEM35.assumptions, conditions=(sp.Le(1 / (4 * d), 1 / (2 * RX2)),))

#: Theorem 3.1's α = log(n/δ)/(ε√n) and Corollary 3.3's ζ = √d√(‖w*‖² + σ²) log n, η left free.
THM31_PARAMS = {zeta: COR33_PARAMS[zeta], alpha: ALPHA_THM31}
LEM35_THM31_PRIVACY = _bound(
    "lem35_thm31_privacy", LEM35_PRIVACY.expr.subs(THM31_PARAMS), _PRIV_TERM,
    "Lemma 3.5's α-terms at Theorem 3.1's α and Corollary 3.3's ζ, at the step η the run fixes "
    "in advance (any η ≤ 1/(2R_x²))", privacy=_DP, assumptions=LEM35.assumptions,
    conditions=(sp.Le(eta, 1 / (2 * RX2)),))
NAIVE_PRIVACY_BOUNDARY = _bound(
    "naive_privacy_boundary", NAIVE_PRIVACY.expr.subs(epsilon, _sqrt(_log(n / delta) / n)),
    _PRIV_TERM, "ours: linreg:naive_privacy along Theorem 3.1's boundary ε = √(log(n/δ)/n): "
    "without amplification by shuffling the privacy term would not fall with n there",
    privacy=_DP, notes="the competitor of an n-sweep that holds ε at Theorem 3.1's cap.")

# ------------------------------------------------------------------------------------------------
# §3.2 DP-AMBSSGD
# ------------------------------------------------------------------------------------------------
THM36_ALPHA = _bound(
    "thm36_alpha", ALPHA_THM36, "noise multiplier α of DP-AMBSSGD", "Theorem 3.6 (ε ≤ log(1/δ))",
    kind="conversion", privacy=_DP, conditions=(sp.Le(epsilon, _log(1 / delta)),))
THM36_ALPHA_GENERAL = _bound(
    "thm36_alpha_general", 2 * _sqrt(_log(1 / delta) + epsilon) / epsilon,
    "noise multiplier α of DP-AMBSSGD", "Theorem 3.6 (any ε)", kind="conversion", privacy=_DP)
THM36_RHO = _bound(
    "thm36_rho", 1 / alpha**2, "zCDP parameter of DP-AMBSSGD", "Theorem 3.6 (DP-STAT ½α⁻² + "
    "gradient step ½α⁻²)", kind="conversion", privacy="ρ-zCDP, replace-one",
    notes="2× conservative when the DP-STAT points and the gradient points are disjoint "
          "(parallel composition gives ½α⁻²): errata LR-E11.")

_DELTA_GRID = (w_norm + sigma) / n**100          # Δ of Lemma 3.11
_LOGZ = K2**2 * RX2 * _log(n)**(4 * a)            # K₂²R_x² log^{4a} n
_b, _eta = B_THM37, ETA_THM37
LEM311 = _bound(
    "lem311",
    (4 * _exp(-_eta * MU) / (_eta**2 * MU**2 * T**2)
     + 96 * alpha**2 / (T * _b**2) * _LOGZ * condition_number * TRACE_HINV)
    * (w_norm**2 * _exp(-_eta * MU * T / 4)
       + 2 * _eta / (MU * _b) * sigma**2 * TRACE_H
       + 24 * _eta * alpha**2 / (MU * _b**2) * _LOGZ * (sigma**2 + _DELTA_GRID**2) * TRACE_H)
    + 8 / (T * _b) * (sigma**2 * d + 12 * alpha**2 / _b * _LOGZ * (sigma**2 + _DELTA_GRID**2)
                      * TRACE_HINV),
    _EXCESS + " (no clipping)", "Lemma 3.11 with Theorem 3.7's b, s, η",
    assumptions=("no gradient is clipped", "ζ_t ≤ R_xK₂log^{2a}n(√κ‖w_t − w*‖_H + σ + Δ)",
                 "T(b + s) = n, s = b/10, η = b/(R_x² + (b − 1))", _NORM,
                 "Σ = σ²H: Tr(H⁻¹Σ) = σ²d, Tr(HΣ) ≤ σ²d"), privacy="(1/α²)-zCDP",
    conditions=(sp.Ge(_b**2, 24 * _eta * alpha**2 * _LOGZ * condition_number * TRACE_H / MU),),
    notes="N^{−ημc₁κ/4} written as e^{−ημT/4} (T = c₁κ log n); Tr H⁻¹ = κd, Tr H = d upper bounds.")
LEM311_MAIN = _bound(
    "lem311_main", LEM311.expr.subs(w_norm, 0), _EXCESS + " minus the bias term",
    "Lemma 3.11 without its ‖w*‖² bias term (its privacy and statistical terms, both branches "
    "with the lemma's constants)", assumptions=LEM311.assumptions, privacy="(1/α²)-zCDP",
    conditions=LEM311.conditions,
    notes="‖w*‖ enters Lemma 3.11 only through the bias term e^{−ημT/4}‖w*‖² (and Δ = "
          "(‖w*‖ + σ)/n¹⁰⁰, negligible): at c₁ = 1 that term decays only as n^{−ημ/4} (LR-E6), "
          "while the measured bias is negligible on H = I (linreg.wnorm.adaptive), so the "
          "branch transition is compared with the lemma's other terms, exponent −1 in n.")
LEM311_BIAS = _bound(
    "lem311_bias", 4 * _exp(-_eta * MU) / (_eta**2 * MU**2 * T**2) * w_norm**2 * _exp(-_eta * MU * T / 4),
    _EXCESS + " at σ = 0 (the bias term; the privacy terms vanish with σ and Δ)",
    "Lemma 3.11's first product at σ = Δ = 0, α-free part", assumptions=LEM311.assumptions,
    notes="geometric in T: the claim that adaptive clipping converges to w* at σ = 0.")
LEM311_NONPRIVATE = _bound(
    "lem311_nonprivate", LEM311.expr.subs(alpha, 0), _EXCESS + " at α = 0",
    "Lemma 3.11 at α = 0", assumptions=LEM311.assumptions)
LEM311_PRIVACY = _bound(
    "lem311_privacy", sp.expand(LEM311.expr - LEM311.expr.subs(alpha, 0)), _PRIV_TERM,
    "Lemma 3.11, its α-dependent terms", privacy="(1/α²)-zCDP", assumptions=LEM311.assumptions)

_THM37_PRIV = (K2**2 * condition_number**2 * d**2 * sigma**2 * _log(n)**(4 * a + 1)
               * _log(1 / delta) / (epsilon**2 * n**2))
_THM37_COND = (sp.Ge(n, condition_number**2 * d * (1 + _sqrt(_log(1 / delta)) / epsilon)),)
_THM37_ASSUME = (_TAIL, _NORM, "b, s, η, T, B, α of Theorem 3.7", "w.p. ≥ 1 − n⁻¹⁰⁰")
THM37 = _bound(
    "thm37", w_norm**2 / n**100 + 8 * sigma**2 * d / n + _THM37_PRIV, _EXCESS, "Theorem 3.7",
    assumptions=_THM37_ASSUME, privacy=_DP, conditions=_THM37_COND,
    notes="hidden polylog made explicit as log^{4a+1} n (LR-E5), Õ constant 1.")
THM37_PRINTED = _bound(
    "thm37_printed", w_norm**2 / n**100 + 8 * sigma**2 * d / n
    + condition_number**2 * d**2 * sigma**2 * _log(1 / delta) / (epsilon**2 * n**2), _EXCESS,
    "Theorem 3.7 as printed (Õ term without its hidden polylog)", assumptions=_THM37_ASSUME,
    privacy=_DP, conditions=_THM37_COND)
THM37_MAIN = _bound(
    "thm37_main", 8 * sigma**2 * d / n + _THM37_PRIV, _EXCESS + " minus the n⁻¹⁰⁰ bias term",
    "Theorem 3.7, second and third terms", assumptions=_THM37_ASSUME, privacy=_DP,
    conditions=_THM37_COND)
THM37_PRIVACY = _bound("thm37_privacy", _THM37_PRIV, _PRIV_TERM, "Theorem 3.7, third term",
                       assumptions=_THM37_ASSUME, privacy=_DP, conditions=_THM37_COND)
THM37_NONPRIVATE = _bound("thm37_nonprivate", 8 * sigma**2 * d / n,
                          "non-private part of the excess risk (α = 0, same data)",
                          "Theorem 3.7, second term", assumptions=_THM37_ASSUME)

COR38 = _bound(
    "cor38", w_norm**2 / n**100 + 8 * d * sigma**2 / n * (1 + d * _log(1 / delta) / (n * epsilon**2)),
    _EXCESS, "Corollary 3.8", assumptions=("x ~ N(0, I), z ~ N(0, σ²)", "w.p. ≥ 1 − n⁻¹⁰⁰"),
    privacy=_DP, conditions=(sp.Ge(n, d * (1 + _sqrt(_log(1 / delta)) / epsilon)),),
    notes="η = 1/(4d) of item 1 contradicts Thm 3.7's η; Thm 3.7's is used (LR-E10).")

COR38_PRIVACY = _bound(
    "cor38_privacy", 8 * d**2 * sigma**2 * _log(1 / delta) / (epsilon**2 * n**2), _PRIV_TERM,
    "Corollary 3.8, its privacy term 8dσ²/n · d log(1/δ)/(nε²) alone (Õ constant 1)",
    assumptions=COR38.assumptions, privacy=_DP, conditions=COR38.conditions,
    notes="the single term the headline's n-sweep must reject where the statistical term shows.")

#: SSP's norm bound: ‖x‖ ≤ B_x = √(d + 2) + √(2 ln n), the Gaussian norm's high-probability bound.
SSP_BX2 = (_sqrt(d + 2) + _sqrt(2 * _log(n)))**2
#: ... and |y| ≤ B_y = √(‖w*‖² + σ²)·√(2 ln 2n) (y ~ N(0, ‖w*‖² + σ²)).
SSP_BY2 = (w_norm**2 + sigma**2) * 2 * _log(2 * n)
SSP_PRIVACY = _bound(
    "ssp_privacy",
    d * (2 * SSP_BX2**2 + 4 * SSP_BX2 * SSP_BY2) * (1 + w_norm**2) * _log(1 / delta)
    / (2 * epsilon**2 * n**2), _PRIV_TERM,
    "§1 and Theorem 3.2 Remark ii: sufficient statistics perturbation (Smith et al. 2017, "
    "Sheffet 2019), whose privacy term the paper quotes as ≈ d²R_x²‖w*‖²/(ε²n²); written with "
    "SSP's own sensitivity Δ² = 2B_x⁴ + 4B_x²B_y² of (XᵀX, Xᵀy) on ‖x‖ ≤ B_x, |y| ≤ B_y: "
    "½‖(XᵀX)⁻¹(e − Ew*)‖²_H ≈ dΔ²α²(1 + ‖w*‖²)/(2n²) with α² ≈ log(1/δ)/ε²",
    privacy=_DP, assumptions=("x ~ N(0, I), z ~ N(0, σ²)", "B_x = √(d+2) + √(2 ln n), "
                              "B_y = √(‖w*‖²+σ²)√(2 ln 2n)", "XᵀX ≈ nI (n ≫ d)"),
    notes="= d³‖w*‖²/(ε²n²)·O(1) once d ≫ log n (B_x² ≈ d), the rate the paper quotes; below "
          "that the log n in B_x flattens the d-slope.")


#: α² of one Gaussian release at (ε, δ) through its RDP curve a/(2α²) and the standard
#: conversion ε = a/(2α²) + log(1/δ)/(a − 1) at the best order (Mironov 2017, Prop. 3), solved
#: for α: α = (√(2L + 2ε) + √(2L))/(2ε), L = log(1/δ).  dp-accounting's α is below it (a sharper
#: conversion), so a bound written with it is an upper bound on the instance.
def _alpha2_rdp(e):
    L = _log(1 / delta)
    return (_sqrt(2 * L + 2 * e) + _sqrt(2 * L))**2 / (4 * e**2)


SSP_PRIVACY_RDP = _bound(
    "ssp_privacy_rdp",
    d * (2 * SSP_BX2**2 + 4 * SSP_BX2 * SSP_BY2) * (1 + w_norm**2) * _alpha2_rdp(epsilon)
    / (2 * n**2), _PRIV_TERM,
    "§1 and Theorem 3.2 Remark ii: linreg:ssp_privacy with α² = (√(2L+2ε) + √(2L))²/(4ε²), "
    "L = log(1/δ), the Gaussian mechanism's α through its RDP curve (Mironov 2017, Prop. 3) in "
    "place of ≈ log(1/δ)/ε²: the ε-dependence of the release SSP actually adds",
    privacy=_DP, assumptions=SSP_PRIVACY.assumptions,
    notes="→ linreg:ssp_privacy·2 as ε → 0; its ε-slope is −2 + ε/(√(2L+2ε)(√(2L+2ε)+√(2L))).")

#: Objective perturbation (KST12, Algorithm 1 with Gaussian noise) on SSP's domain and the ball
#: ‖w‖ ≤ B_w = 2‖w*‖: ζ = B_x(B_xB_w + B_y), λ = B_x², Λ = 2λ/ε, ε_G = ε − log(1 + ε/2).
OBJPERT_BW = 2 * w_norm
OBJPERT_ZETA = _sqrt(SSP_BX2) * (_sqrt(SSP_BX2) * OBJPERT_BW + _sqrt(SSP_BY2))
OBJPERT_LAMBDA = 2 * SSP_BX2 / epsilon
OBJPERT_EPS_G = epsilon - _log(1 + epsilon / 2)
OBJPERT_PRIVACY = _bound(
    "objpert_privacy",
    (d * (2 * OBJPERT_ZETA)**2 * _alpha2_rdp(OBJPERT_EPS_G) + OBJPERT_LAMBDA**2 * w_norm**2)
    / (2 * n**2), _PRIV_TERM,
    "§1 (objective perturbation, Chaudhuri et al. 2011, Kifer et al. 2012) and Theorem 3.2 "
    "Remark ii (≈ d²R_x²‖w*‖²/(ε²n²) for prior methods); ours: Kifer et al.'s Algorithm 1 with "
    "Gaussian noise on the instance, to first order: ½E‖(XᵀX + ΛI)⁻¹b‖² + ½‖Λ(XᵀX)⁻¹w*‖² with "
    "XᵀX ≈ nI, b ~ N(0, (2ζα)²I), ζ = B_x(B_xB_w + B_y) ≈ 2d‖w*‖ the gradient bound on the ball "
    "‖w‖ ≤ B_w = 2‖w*‖, Λ = 2B_x²/ε, α at ε_G = ε − log(1 + ε/2) through the RDP curve",
    privacy=_DP, assumptions=("x ~ N(0, I), z ~ N(0, σ²)", "B_x, B_y as linreg:ssp_privacy, "
                              "B_w = 2‖w*‖", "XᵀX ≈ nI (n ≫ d)", "the ball's constraint inactive"),
    notes="= 2d³‖w*‖²·α²·O(1)/n² once d ≫ log n: Theorem 3.2 Remark ii's d²R_x²‖w*‖²/(ε²n²) "
          "with ‖w*‖ → B_w; the Λ² term (the regulariser's bias) is ≈ 10⁻³ of the noise term here.")

DPERM_PRIVACY = _bound(
    "dperm_privacy", RX2 * w_norm**2 * _sqrt(d * _log(1 / delta)) / (epsilon * n), _EXCESS,
    "§1: DP-ERM for convex L-Lipschitz losses on C (DP-SGD or objective perturbation, Chaudhuri "
    "et al. 2011, Kifer et al. 2012; Bassily et al. 2019, 2020), its privacy term "
    "L‖C‖₂√d/(εN), with \"L ≈ d when ‖C‖₂ = O(1)\" read as L = R_x²‖C‖, ‖C‖ = ‖w*‖",
    privacy=_DP, notes="the generic convex rate; linear regression on a Gaussian design is "
                       "strongly convex, so the methods' privacy terms fall faster (n⁻², ε⁻²).")

# ------------------------------------------------------------------------------------------------
# Fixed-clipping baselines (ours, for the adaptive-vs-fixed claim): Algorithm 2 with ζ_t ≡ ζ and
# no DP-STAT points (b = n/T), bounded by eq. (60)/Lemma 3.11's variance part with ζ fixed:
# 8/(Tb)·(Tr(H⁻¹Σ) + 4ζ²α²Tr(H⁻¹)/b).
# ------------------------------------------------------------------------------------------------
_B_FIXED = n / T


def _fixed_privacy(z):
    return 8 / (T * _B_FIXED) * 4 * z**2 * alpha**2 * TRACE_HINV / _B_FIXED


FIXED_CLIP = _bound(
    "fixed_clip", 8 / (T * _B_FIXED) * sigma**2 * d + _fixed_privacy(ZETA_THM32), _EXCESS,
    "ours: Algorithm 2 with Theorem 3.2's fixed clip ζ, eq. (60) with ζ_t ≡ ζ",
    assumptions=("no gradient is clipped", "b = n/T", _NORM), privacy="(1/(2α²))-zCDP",
    notes="not in the paper: the fixed-clipping baseline with DP-AMBSSGD's accounting.")
FIXED_CLIP_PRIVACY = _bound(
    "fixed_clip_privacy", _fixed_privacy(ZETA_THM32), _PRIV_TERM,
    "ours: the α-term of linreg:fixed_clip", privacy="(1/(2α²))-zCDP",
    assumptions=FIXED_CLIP.assumptions)
FIXED_CLIP_FLOOR = _bound(
    "fixed_clip_floor", _fixed_privacy(ZETA_THM32.subs(sigma, 0)), _PRIV_TERM + " at σ → 0",
    "ours: linreg:fixed_clip_privacy at σ = 0 (ζ = 4K₂R_x log^{2a}n ‖w*‖_H): the floor fixed "
    "clipping keeps as σ → 0 (Thm 3.2 Remark iii)", privacy="(1/(2α²))-zCDP",
    assumptions=FIXED_CLIP.assumptions)
LIPSCHITZ_CLIP_PRIVACY = _bound(
    "lipschitz_clip_privacy", _fixed_privacy(ZETA_LIPSCHITZ), _PRIV_TERM,
    "ours: the α-term of Algorithm 2 with the worst-case clip ζ = log^{2a}n(R_x²‖w*‖ + R_xσ) of "
    "prior DP-SGD analyses (Thm 3.2 Remark ii's d²R_x²‖w*‖²)", privacy="(1/(2α²))-zCDP",
    assumptions=FIXED_CLIP.assumptions)
ADAPTIVE_PRIVACY_ALPHA = _bound(
    "adaptive_privacy_alpha",
    8 / (T * B_THM37) * 12 * alpha**2 / B_THM37 * _LOGZ * sigma**2 * TRACE_HINV,
    _PRIV_TERM, "Lemma 3.11's leading privacy term 96α²K₂²R_x²log^{4a}n σ²Tr(H⁻¹)/(Tb²), in α",
    privacy="(1/α²)-zCDP", assumptions=LEM311.assumptions)


# Corollaries from their theorems, for `dprates bounds derive` (bounds/explain.py).
from bounds.explain import DerivationSpec, register_derivation  # noqa: E402

for _spec in (
    DerivationSpec("linreg:cor38", "linreg:thm37",
                   {"condition_number": 1, "K2": 1, "a": sp.Rational(1, 2)},
                   ("n", "d", "epsilon", "sigma"), {"delta": 1e-6, "w_norm": 1},
                   note="well-conditioned design (κ = 1), K₂ = 1, a = 1/2"),
    DerivationSpec("linreg:cor33", "linreg:thm32",
                   {"condition_number": 1, "K2": 1, "a": sp.Rational(1, 2)},
                   ("n", "d", "epsilon", "sigma", "w_norm"), {"delta": 1e-6},
                   note="well-conditioned design (κ = 1), K₂ = 1, a = 1/2"),
):
    register_derivation(_spec)
