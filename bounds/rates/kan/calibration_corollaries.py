"""KAN paper: the privacy calibrations (Theorems 5.1 / F.12 for λ > 0, 5.4 / D.9 for λ = 0), the
corollaries (5.3, 5.5, 5.6), the full-batch specialisations, the prior rates they are compared
with, and numeric functions the experiments use.

The optimisation theorems and the shared sub-expressions are in
:mod:`bounds.rates.kan.correlated_noise`, the population-risk theorems in
:mod:`bounds.rates.kan.population`; the package imports all three, which registers every ``kan:*``
id.
"""
from __future__ import annotations

import math
import sys
from typing import Mapping

import sympy as sp

from bounds.core import Bound, register, sym
from bounds.rates.kan.correlated_noise import (
    B, C_PRIV, KAPPA2_D9, KAPPA2_F12, KAPPA2_F12_PROOF, KAPPA2_THM51, KAPPA2_THM54, R, R_bar, T,
    THMD16_WIDTH, THME1_WIDTH, Z_MAX, _DP_REPLACE, _DP_ZERO_OUT, _LAM_OPEN, _Min, _SRC,
    _kappa2_f12, _kappa2_thm51, _log, _sqrt, d, delta, dist_star, epsilon, eta, gamma,
    lam, m, n, sample_frac)
from bounds.rates.kan.population import _nonprivate_upper


# ------------------------------------------------------------------------------------------------
# Privacy calibration (Theorems 5.1 / F.12 for λ > 0, 5.4 / D.9 for λ = 0)
# ------------------------------------------------------------------------------------------------

_NOISE_QUANTITY = ("squared noise multiplier κ² such that Algorithm 1 is (ε, δ)-DP (noise C_clip·κ "
                   "per coordinate on the summed clipped gradient; per-step std C_clip·κ/B on the "
                   "averaged gradient)")

THM51_NOISE = register(Bound(
    id="kan:thm5.1_noise",
    expr=KAPPA2_THM51,
    quantity=_NOISE_QUANTITY + ", λ > 0 (≍: constant 1)",
    source=f"{_SRC}, Theorem 5.1 (Section 5.1; proof App. F, 'Proof of Theorem 2')",
    assumptions=("λ ∈ (0, 1); r = B/n; T steps; the noise stream of Algorithm 1",
                 "F.12's hypotheses (ε, δ ≤ 1, rT ≥ 3 ln(2/δ)) are not repeated in Theorem 5.1 (KAN-E9)"),
    privacy=_DP_ZERO_OUT,
    kind="conversion",
    conditions=_LAM_OPEN + (sp.Le(B, n), sp.Lt(delta, 1)),
    notes="Conservative closed form (the paper says it does not optimise it).  Its λ-factor "
          "((1−λ^T)/(1−λ))² cancels A_corr's (1−λ) gains (kan:lam_*_calibrated).  Linear in the "
          "sampling rate r (no amplification): at λ → 0⁺ it exceeds the λ = 0 calibration by "
          "≈ n/(4B) (kan:calibration_gap, KAN-E7).",
))

_F12_CONDITIONS = _LAM_OPEN + (sp.Le(epsilon, 1), sp.Le(delta, 1), sp.Le(B, n),
                               sp.Ge(B * T / n, 3 * _log(2 / delta)))
_F12_ASSUMPTIONS = ("ε, δ ∈ (0, 1]; r = B/n with rT ≥ 3 ln(2/δ) (Chernoff, Lemma F.10 with c₁ = ½)",
                    "unit clipping ‖∇ℓ‖ ≤ 1 (apply to ĝ/C_clip); participation indicators i.i.d. "
                    "Bernoulli(r) across steps (exact for fresh fixed-size batches each step)",
                    "λ ∈ (0, 1); sensitivity ‖Cy‖₂ ≤ ((1−λ^T)/(1−λ))√τ (Lemma F.11)")

THMF12_NOISE = register(Bound(
    id="kan:thmF.12_noise",
    expr=KAPPA2_F12,
    quantity=_NOISE_QUANTITY + ", λ > 0, explicit",
    source=f"{_SRC}, Theorem F.12 (App. F.3)",
    assumptions=_F12_ASSUMPTIONS,
    privacy=_DP_ZERO_OUT,
    kind="conversion",
    conditions=_F12_CONDITIONS,
    notes="As stated, constant 8.  The proof (classic Gaussian mechanism, κ² ≥ Δ²·2ln(1.25/δ')/ε², "
          "δ' = δ/2, Δ² = ((1−λ^T)/(1−λ))²τ) gives 2 (kan:thmF.12_noise_proof): the stated κ² is 4× "
          "what the proof needs, still valid (KAN-E1).  Noise convention: Algorithm 1's κ (App. "
          "F.1's N(0, κ²) agrees at C_clip = 1, KAN-E12).",
))

THMF12_NOISE_PROOF = register(Bound(
    id="kan:thmF.12_noise_proof",
    expr=KAPPA2_F12_PROOF,
    quantity=_NOISE_QUANTITY + ", λ > 0, constant of F.12's proof",
    source=f"{_SRC}, proof of Theorem F.12 (App. F.3) with Lemmas F.9–F.11",
    assumptions=_F12_ASSUMPTIONS + ("classic Gaussian mechanism bound, which needs ε ≤ 1",),
    privacy=_DP_ZERO_OUT,
    kind="conversion",
    conditions=_F12_CONDITIONS,
    notes="Competing reading of KAN-E1: exactly kan:thmF.12_noise / 4.",
))

THM54_NOISE = register(Bound(
    id="kan:thm5.4_noise",
    expr=KAPPA2_THM54,
    quantity=_NOISE_QUANTITY + ", λ = 0 (≍: constant 1)",
    source=f"{_SRC}, Theorem 5.4 (Section 5.2; proof Theorem D.9, App. D.1)",
    assumptions=("λ = 0; subsampling rate q = B/n; T steps",),
    privacy=_DP_REPLACE,
    kind="conversion",
    conditions=(sp.Le(B, n), sp.Lt(delta, 1)),
    notes="Quadratic in B/n (amplification by subsampling), unlike Theorem 5.1 (KAN-E7).",
))

THMD9_NOISE = register(Bound(
    id="kan:thmD.9_noise",
    expr=KAPPA2_D9,
    quantity=_NOISE_QUANTITY + ", λ = 0, explicit",
    source=f"{_SRC}, Theorem D.9 (App. D.1)",
    assumptions=("λ = 0; δ > 0; RDP of the subsampled Gaussian ε_t(α) ≤ 8αq²/κ² (Lemma D.7, "
                 "'standard low-sampling regime'), composition over T, α = 1 + 2log(1/δ)/ε",
                 "intended for B < n; for B = n the plain Gaussian mechanism (Wang et al. 2026)"),
    privacy=_DP_REPLACE,
    kind="conversion",
    conditions=(sp.Le(B, n), sp.Lt(delta, 1)),
    notes="Lemma D.7's constant c_sgm = 8 is asymptotic (Wang–Balle–Kasiviswanathan Thm 9), not a "
          "proven inequality for every (q, κ, α) (KAN-E13): verify ε with an accountant.",
))

CALIBRATION_GAP = register(Bound(
    id="kan:calibration_gap",
    expr=_kappa2_f12(8, sp.Integer(1)) / KAPPA2_D9,
    quantity="ratio κ²(F.12, λ → 0⁺) / κ²(D.9, λ = 0) at the same (B, n, T, ε, δ)",
    source=f"{_SRC}, Theorems F.12 and D.9",
    assumptions=("same (B, n, T, ε, δ); F.12's λ-factor (1−λ^T)/(1−λ) → 1 as λ → 0⁺",),
    privacy="compares a zero-out (λ > 0) with a replace-one (λ = 0) calibration",
    kind="identity",
    notes="≈ ln(2.5/δ)/(4r ln(1/δ)) ≈ n/(4B) for rT ≫ ln(1/δ), ε ≪ log(1/δ): the calibrated κ jumps "
          "at λ = 0.  Not in the paper (KAN-E7).",
))


# ------------------------------------------------------------------------------------------------
# Corollaries, full-batch specialisations, prior rates
# ------------------------------------------------------------------------------------------------

#: Corollary 5.3's T ≍ min{√n/γ, nεγ²/√d}: the n-branch point is n_c = d/(γ⁶ε²).
T_COR53 = _Min(_sqrt(n) / gamma, n * epsilon * gamma**2 / _sqrt(d))
#: Corollary 5.5's η ≍ min{1, γ²√nε/√d}: the n-branch point is n_b = d/(γ⁴ε²).
ETA_COR55 = _Min(1, gamma**2 * _sqrt(n) * epsilon / _sqrt(d))
#: App. D.3's full-batch DP-GD step size η ≍ min{1, ε/(γ√(md))}.
ETA_FULLBATCH_DPGD = _Min(1, epsilon / (gamma * _sqrt(m * d)))


def _regime_cor53(t: sp.Expr) -> dict[str, sp.Expr]:
    # C.24's κ² ≲ T/ε²: (1−λ^T)/(1−λ) ≤ 1/(1−λ), and √(rT log(1/δ)) ≤ rT once rT ≥ log(1/δ)
    # (F.12's hypothesis rT ≥ 3 ln(2/δ) implies it).  Both are upper bounds on κ, and A_corr
    # increases with κ, so substituting them is valid; without the second one the bound is not
    # the corollary's rate as d → ∞ (KAN-E9, tested).
    b, dl = sample_frac * n, gamma**3 / n
    k2 = (2 * B * T / n * _log(1 / delta) / ((1 - lam)**2 * epsilon**2)).subs(
        {B: b, T: t, delta: dl}, simultaneous=True)
    return {"eta": sp.Integer(1), "B": b, "m": gamma**-6, "T": t, "delta": dl,
            "noise_multiplier": _sqrt(k2)}


def regime_cor53_raw(t: sp.Expr) -> dict[str, sp.Expr]:
    """Corollary 5.3's choices with Theorem 5.1's κ² as printed (both terms, λ-factor bounded by
    1/(1−λ)), at step count ``t``: the regime without F.12's rT ≥ 3 ln(2/δ) (KAN-E9)."""
    b, dl = sample_frac * n, gamma**3 / n
    k2 = _kappa2_thm51(1 / (1 - lam)).subs({B: b, T: t, delta: dl}, simultaneous=True)
    return {"eta": sp.Integer(1), "B": b, "m": gamma**-6, "T": t, "delta": dl,
            "noise_multiplier": _sqrt(k2)}


def _regime_cor55(e: sp.Expr) -> dict[str, sp.Expr]:
    b, t, dl = gamma * _sqrt(n), _sqrt(n) / gamma, gamma / n
    k2 = KAPPA2_THM54.subs({B: b, T: t, delta: dl}, simultaneous=True)
    return {"eta": e, "B": b, "m": gamma**-4, "T": t, "delta": dl, "noise_multiplier": _sqrt(k2)}


def _regime_fullbatch_dpgd(e: sp.Expr) -> dict[str, sp.Expr]:
    dl = gamma / n
    k2 = KAPPA2_THM54.subs({B: n, T: n, delta: dl}, simultaneous=True)
    return {"eta": e.subs(m, gamma**-4), "B": n, "m": gamma**-4, "T": n, "delta": dl,
            "noise_multiplier": _sqrt(k2)}


def _regime_cor56(dl: sp.Expr) -> dict[str, sp.Expr]:
    b = gamma * _sqrt(n)
    return {"B": b, "eta": b / n, "T": n**2 / (gamma**2 * b), "m": gamma**-4, "delta": dl}


#: Parameter choices of each corollary, as {symbol name: expression in the remaining symbols},
#: ready for ``follows_from`` (values never contain a key, so substitution order is irrelevant).
#: Branches: "both" keeps the paper's min{·,·}; "private" / "nonprivate" fix the branch where
#: the privacy term / the 1/(γ√n) term dominates.  δ is the largest the corollary allows.
REGIMES: dict[str, dict[str, dict[str, sp.Expr]]] = {
    "cor5.3": {"both": _regime_cor53(T_COR53),
               "private": _regime_cor53(n * epsilon * gamma**2 / _sqrt(d)),
               "nonprivate": _regime_cor53(_sqrt(n) / gamma)},
    "cor5.5": {"both": _regime_cor55(ETA_COR55),
               "private": _regime_cor55(gamma**2 * _sqrt(n) * epsilon / _sqrt(d)),
               "nonprivate": _regime_cor55(sp.Integer(1))},
    "fullbatch_dpgd": {"both": _regime_fullbatch_dpgd(ETA_FULLBATCH_DPGD),
                       "private": _regime_fullbatch_dpgd(epsilon / (gamma * _sqrt(m * d))),
                       "nonprivate": _regime_fullbatch_dpgd(sp.Integer(1))},
    # Corollary 5.6 has no privacy branch; its two entries are the two δ readings (KAN-E5).
    "cor5.6": {"delta_as_stated": _regime_cor56(1 / (gamma * n)),
               "delta_needed": _regime_cor56(1 / n)},
    "fullbatch_gd": {"delta_as_stated": {"B": n, "eta": sp.Integer(1), "T": n / gamma**2,
                                         "m": gamma**-4, "delta": 1 / (gamma * n)},
                     "delta_needed": {"B": n, "eta": sp.Integer(1), "T": n / gamma**2,
                                      "m": gamma**-4, "delta": 1 / n}},
}


def regime(corollary: str, branch: str = "both") -> dict[str, sp.Expr]:
    """Parameter choices of ``corollary`` (a key of :data:`REGIMES`) in ``branch``, as a copy."""
    if corollary not in REGIMES:
        raise ValueError(f"corollary must be one of {sorted(REGIMES)}, got {corollary!r}")
    if branch not in REGIMES[corollary]:
        raise ValueError(f"branch for {corollary} must be one of {sorted(REGIMES[corollary])}, "
                         f"got {branch!r}")
    return dict(REGIMES[corollary][branch])


COR53 = register(Bound(
    id="kan:cor5.3",
    expr=1 / (gamma * _sqrt(n)) + _sqrt(d) / (gamma**4 * n * epsilon),
    quantity="averaged empirical risk (w.p. ≥ 1 − δ) and averaged population risk (w.p. ≥ 1 − δ "
             "over the init) of Algorithm 1 with λ > 0 (polylog(n/δ) dropped)",
    source=f"{_SRC}, Corollary 5.3 (Section 5.1; proof Corollary C.24, App. C.2)",
    assumptions=("λ ∈ (0, 1) fixed, bounded away from 1; ρ = B/n ∈ (0, 1) fixed; η ≍ 1; "
                 "C_clip ≍ G_δ; κ from Theorem 5.1",
                 "m ≍ polylog(n/δ)/γ⁶; δ ≤ min{1/(n√m), γ/n}; T ≍ min{√n/γ, nεγ²/√d}"),
    privacy=_DP_ZERO_OUT + " (κ of Theorem 5.1)",
    kind="upper",
    conditions=(sp.Le(gamma, 1),),
    notes="Side condition (SIDE_CONDITIONS) δ ≤ min{1/(n√m), γ/n}, written at m = γ⁻⁶: "
          "min{1/(n√m), γ/n} = γ³/n.  Branch point n_c = d/(γ⁶ε²): below it √d/(γ⁴nε) "
          "(exponents n −1, ε −1, d ½, γ −4), above it "
          "1/(γ√n).  No λ in the rate: the calibration cancels the (1−λ) gains.  The privacy "
          "term is the optimisation term 1/(γ²ηT) at the ε-dependent T; γ⁻⁴ comes from m ≍ γ⁻⁶ "
          "in the quadratic noise term.",
))

def _cor53_noise_ratio() -> sp.Expr:
    # A_corr / (1/(γ²ηT)) at Corollary 5.3's privacy-branch choices (η = 1, B = ρn,
    # T = nεγ²/√d, κ² = T/ε² from C.24, λ-factors 1): every noise term over the optimisation
    # term; m is kept (the corollary's m ≍ γ⁻⁶ makes the quadratic term's share γ⁶m = 1).
    from bounds.rates.kan.correlated_noise import A_CORR, kappa
    t = n * epsilon * gamma**2 / _sqrt(d)
    sub = {eta: sp.Integer(1), B: sample_frac * n, T: t, kappa: _sqrt(t) / epsilon,
           lam: sp.Integer(0)}
    return sp.expand((A_CORR * gamma**2 * T).subs(sub, simultaneous=True))


COR53_NOISE_RATIO = register(Bound(
    id="kan:cor5.3_noise_ratio",
    expr=_cor53_noise_ratio(),
    quantity="A_corr over its optimisation term 1/(γ²ηT) under Corollary 5.3's privacy-branch "
             "choices: the factor by which noise (and mini-batching) may inflate the risk of the "
             "same run without noise; read as a bound on private/non-private risk at equal "
             "(η, T, B)",
    source=f"{_SRC}, Corollary 5.3 (proof Corollary C.24, App. C.2)",
    assumptions=("η = 1, B = ρn, T = nεγ²/√d (n below n_c = d/(γ⁶ε²)), κ² ≲ T/ε² (C.24), "
                 "λ-factors bounded by 1 (the (1−λ) ≤ 1 and (1−λ)² + ηλ² ≤ 1 + η read at λ = 0)",),
    privacy=_DP_ZERO_OUT + " (κ of Theorem 5.1)",
    kind="upper",
    conditions=(sp.Le(gamma, 1),),
    notes="Every term is O(1) in n (the cross term falls like n^(−1/2)), so the ratio stays "
          "bounded as n grows: the corollary's rate is the optimisation term at its T.  With "
          "m ≍ γ⁻⁶ the quadratic noise term alone contributes γ⁶m = 1.",
))

#: κ² of the classical Gaussian mechanism composed over T full-batch steps, 2T ln(1.25/δ)/ε²: the
#: noise of kan:tuned_eta_noise and kan:fixed_eta_noise.
_KAPPA2_GAUSS_T = 2 * T * _log(sp.Rational(5, 4) / delta) / epsilon**2


def _tuned_eta_noise_term() -> sp.Expr:
    # A_van (logs dropped) at B = n: its η-terms 1/(γ²ηT) + ηmdκ²/n² have the minimum
    # 2√(md)κ/(γn√T) over η; κ of the Gaussian mechanism composed over T full-batch steps,
    # κ² = 2T ln(1.25/δ)/ε² (classical; dp-accounting's exact κ differs by a constant factor,
    # not in its ε-exponent).  The noise-free terms (1/n, 1/T, 1/(γ√(nT))) are left out: this is
    # the term the √d/(nε) rates come from.
    return 2 * _sqrt(m * d) * _sqrt(_KAPPA2_GAUSS_T) / (gamma * n * _sqrt(T))


TUNED_ETA_NOISE = register(Bound(
    id="kan:tuned_eta_noise",
    expr=_tuned_eta_noise_term(),
    quantity="the noise term of full-batch DP-GD's averaged empirical risk (λ = 0, B = n) at the "
             "step size η that balances it against the optimisation term (A_van's η-terms "
             "minimised over η): 2√(md)κ/(γn√T) ∝ √(md)/(γnε)",
    source=f"{_SRC}, Theorem D.14 (A_van) at B = n with η tuned; App. D.3 'Recovery of full-batch "
           "DP-GD'",
    assumptions=("λ = 0, B = n, κ² = 2T ln(1.25/δ)/ε² (Gaussian mechanism over T steps)",
                 "η free (the theorem's η ≤ 1/(12C_{σ,b}p³) ignored), logs of A_van dropped; the "
                 "tuned risk is this term plus noise-free terms, so it is the ε-dependent part"),
    privacy="each run (ε, δ)-DP (add-remove, Gaussian mechanism); choosing η on the data is "
            "not accounted (a utility curve)",
    kind="upper",
    notes="The origin of the √d/(nε) rates (exponent −1 in ε, +1/2 in d and m).",
))


def _fixed_eta_noise_term() -> sp.Expr:
    # the quadratic noise term of A_van at B = n and a fixed η (not tuned): ηmdκ²/n², with the
    # same Gaussian-mechanism κ as kan:tuned_eta_noise; exponent +1 in m and in d
    return eta * m * d * _KAPPA2_GAUSS_T / n**2


FIXED_ETA_NOISE = register(Bound(
    id="kan:fixed_eta_noise",
    expr=_fixed_eta_noise_term(),
    quantity="the quadratic noise term ηmdκ²/n² of full-batch DP-GD's averaged empirical risk "
             "(λ = 0, B = n) at a fixed step size η (A_van's noise term without tuning η)",
    source=f"{_SRC}, Theorem D.14 (A_van) at B = n",
    assumptions=("λ = 0, B = n, κ² = 2T ln(1.25/δ)/ε² (Gaussian mechanism over T steps), η fixed",),
    privacy="each run (ε, δ)-DP (add-remove, Gaussian mechanism)",
    kind="upper",
    notes="Competitor of kan:tuned_eta_noise in the tuned-η d and m sweeps (App. D.3): growth like md "
          "(exponent +1 in d and m) is what an untuned step would pay; tuning η halves it.",
))

COR55 = register(Bound(
    id="kan:cor5.5",
    expr=1 / (gamma * _sqrt(n)) + _sqrt(d) / (gamma**3 * n * epsilon),
    quantity="averaged empirical risk (w.p. ≥ 1 − δ) and averaged population risk (w.p. ≥ 1 − δ "
             "over the init) of Algorithm 1 with λ = 0 (polylogs dropped)",
    source=f"{_SRC}, Corollary 5.5 (Section 5.2; proof App. D.3)",
    assumptions=("λ = 0; κ from Theorem 5.4; η ≤ 1/(12C_{σ,b}p³); C_clip ≥ G_δ; δ ≤ γ/n",
                 "m ≍ polylog(n/δ)/γ⁴; B ≍ γ√n; T ≍ √n/γ (BT ≍ n); η ≍ min{1, γ²√nε/√d}"),
    privacy=_DP_REPLACE + " (κ of Theorem 5.4)",
    kind="upper",
    conditions=(sp.Le(gamma, 1),),
    notes="Side condition δ ≤ γ/n.  Branch point n_b = d/(γ⁴ε²) (η < 1 below it).  The d and ε "
          "exponents come from the η choice (rate = 1/(γ²ηT)).",
))

COR56_OPT = _nonprivate_upper(
    id="kan:cor5.6_opt",
    expr=1 / n,
    quantity="averaged empirical risk of mini-batch SGD (κ = 0), w.p. ≥ 1 − δ",
    source=f"{_SRC}, Corollary 5.6 (Section 5.3; proof App. E)",
    assumptions=("κ = 0; m ≳ polylog(n/δ)/γ⁴; B ≲ γ√n; η ≍ B/n; T ≳ n²/(γ²B)",),
    notes="All three terms of A_non equal 1/n at T ≍ n²/(γ²B).",
)

COR56 = _nonprivate_upper(
    id="kan:cor5.6",
    expr=1 / (gamma**2 * n),
    quantity="averaged population risk of mini-batch SGD (κ = 0), w.p. ≥ 1 − δ over the init",
    source=f"{_SRC}, Corollary 5.6 (Section 5.3; proof App. E)",
    assumptions=("κ = 0; m ≳ polylog(n/δ)/γ⁴; B ≲ γ√n; η ≍ B/n; T ≍ n²/(γ²B)",
                 "δ ≤ 1/(γn) as stated, and δ ≤ 1/n (needed by E.1's (1 + ηT/n)δ term, KAN-E5)"),
    conditions=(sp.Le(gamma, 1),),
    notes="Reading chosen: the rate with δ ≤ 1/n (side conditions δ ≤ 1/(γn) and δ ≤ 1/n).  "
          "Under the stated δ ≤ 1/(γn) alone, E.1's (1 + ηT/n)δ ≍ δ/γ² is only ≲ 1/(γ³n) "
          "(tested with follows_from, KAN-E5).  The proof's "
          "'A_non ≲ 1/(γ²n)' should read A_non ≲ 1/n (KAN-E5).",
)

FULLBATCH_DPGD = register(Bound(
    id="kan:fullbatch_dpgd",
    expr=_sqrt(d) / (gamma**3 * n * epsilon),
    quantity="averaged empirical and population risk of full-batch DP-GD (B = n, λ = 0), as stated",
    source=f"{_SRC}, App. D.3 'Recovery of full-batch DP-GD' and Section 5.2 'Comparison'",
    assumptions=("B = n, λ = 0; m ≍ polylog(n/δ)/γ⁴; η ≍ min{1, ε/(γ√(md))}; κ² ≍ T/ε² ≍ n/ε², "
                 "i.e. T ≍ n (implicit in the proof, KAN-E6); δ ≲ γ/n",),
    privacy="(ε, δ)-DP via the Gaussian mechanism at B = n (Wang et al. 2026), replace-one",
    kind="upper",
    notes="Holds in the η < 1 branch (ε < γ√(md)); in the η ≍ 1 branch the proof's own "
          "1/(γ²ηn) = 1/(γ²n) term exceeds it and was dropped (kan:fullbatch_dpgd_both, KAN-E6).",
))

FULLBATCH_DPGD_BOTH = register(Bound(
    id="kan:fullbatch_dpgd_both",
    expr=1 / (gamma**2 * n) + _sqrt(d) / (gamma**3 * n * epsilon),
    quantity=FULLBATCH_DPGD.quantity.replace("as stated", "both step-size branches"),
    source=FULLBATCH_DPGD.source + " (the proof's intermediate bound, both branches)",
    assumptions=FULLBATCH_DPGD.assumptions,
    privacy=FULLBATCH_DPGD.privacy,
    kind="upper",
    notes="The proof bounds 1/(γ²ηn) by 1/(γ²n) + √(md)/(γnε) and then keeps only the second "
          "term; with m ≍ γ⁻⁴ this is the full rate (KAN-E6).",
))

FULLBATCH_GD = _nonprivate_upper(
    id="kan:fullbatch_gd",
    expr=1 / (gamma**2 * n),
    quantity="averaged population risk of full-batch GD (B = n, κ = 0), w.p. ≥ 1 − δ over the init",
    source=f"{_SRC}, App. E 'Recovery of full-batch GD' and Section 5.3 'Comparison'",
    assumptions=("B = n, κ = 0, η ≍ 1, T ≍ n/γ², m ≳ polylog(n/δ)/γ⁴; δ ≤ 1/(γn) as stated "
                 "(δ ≤ 1/n needed, as in KAN-E5)",),
    conditions=(sp.Le(gamma, 1),),
    notes="Side condition δ ≤ 1/n (the stated δ ≤ 1/(γn) is not enough, as in KAN-E5).",
)

WANG_GD = _nonprivate_upper(
    id="kan:wang_gd",
    expr=1 / (gamma**4 * n),
    quantity="population risk of full-batch GD on a two-layer KAN, both layers trained (prior work)",
    source=f"{_SRC}, Section 5.3 'Comparison', citing Wang, Zhou, Liznerski, Kloft (ICML 2026)",
    assumptions=("full batch, m ≳ polylog(n/δ)/γ⁶ (as the KAN paper cites it)",),
)

WANG_DPGD = register(Bound(
    id="kan:wang_dpgd",
    expr=_sqrt(d) / (gamma**4 * n * epsilon),
    quantity="population risk of full-batch DP-GD (independent noise) on a two-layer KAN (prior work)",
    source=f"{_SRC}, Section 5.2 'Comparison', citing Wang, Zhou, Liznerski, Kloft (ICML 2026)",
    assumptions=("full batch, m ≍ polylog(n/δ)/γ⁶ (as the KAN paper cites it)",),
    privacy="(ε, δ)-DP, Gaussian mechanism (as cited)",
    kind="upper",
))

DPSCO_LOWER = register(Bound(
    id="kan:dpsco_lower",
    expr=1 / _sqrt(n) + _sqrt(d) / (n * epsilon),
    quantity="excess population risk any (ε, δ)-DP algorithm must incur on the worst convex "
             "Lipschitz stochastic problem (DP-SCO)",
    source=f"{_SRC}, Section 1 (contributions), citing Bassily, Feldman, Talwar, Thakurta (NeurIPS 2019)",
    assumptions=("convex, Lipschitz losses on a bounded domain; constants dropped",),
    privacy="(ε, δ)-DP, replace-one",
    kind="lower",
    notes="A convex lower bound on excess risk, compared by the paper with KAN population risk "
          "(≈ excess risk under separability, optimum ≈ 0).  Cor 5.3/5.5 match it in n, d, ε "
          "(not in γ, which the convex class does not have).",
))


# ------------------------------------------------------------------------------------------------
# Numeric functions for experiments
# ------------------------------------------------------------------------------------------------

_NOISE_IDS = ("kan:thm5.1_noise", "kan:thmF.12_noise", "kan:thmF.12_noise_proof",
              "kan:thm5.4_noise", "kan:thmD.9_noise")


def calibrated_noise_multiplier(bound_id: str, *, check_conditions: bool = True,
                                **values: float) -> float:
    """κ = √(κ²) of the calibration ``bound_id`` at ``values``.

    ``values`` needs every symbol of the bound (``lam`` is ignored by the λ = 0 calibrations).  With
    ``check_conditions`` a point outside the theorem's hypotheses (e.g. F.12's ε ≤ 1 or
    rT ≥ 3 ln(2/δ)) raises ValueError naming the failed condition.
    """
    if bound_id not in _NOISE_IDS:
        raise ValueError(f"bound_id must be one of {_NOISE_IDS}, got {bound_id!r}")
    b = _BY_ID[bound_id]
    lam_v = values.get("lam")
    if lam_v is not None and not (0 <= float(lam_v) < 1):
        raise ValueError(f"lam must be in [0, 1), got {lam_v!r}")
    if "B" in values and "n" in values and float(values["B"]) > float(values["n"]):
        raise ValueError(f"B must be in (0, n] = (0, {values['n']}], got {values['B']!r}")
    vals = {k: v for k, v in values.items() if k in b.variables}
    if check_conditions:
        _check_conditions(b, {**vals, **({"lam": lam_v} if lam_v is not None else {})})
    return math.sqrt(b(check_conditions=False, **vals))   # conditions handled above


def _check_conditions(b: Bound, values: Mapping[str, float], extra: tuple = ()) -> None:
    subs = {sym(k): sp.nsimplify(v) if isinstance(v, float) else v for k, v in values.items()}
    for c in b.conditions + tuple(extra):
        r = c.subs(subs)
        if r.free_symbols:
            raise ValueError(f"{b.id}: condition {c} needs values for "
                             f"{sorted(s.name for s in r.free_symbols)}")
        if not bool(r):
            raise _ConditionFailed(f"{b.id}: condition {c} fails at {dict(values)}")


#: Hypotheses on symbols a rate does not contain (δ of the corollaries, R_* of the explicit form).
#: ``Bound.applies`` substitutes only a rate's own symbols, so these live here and are checked by
#: :func:`side_conditions_hold`.
SIDE_CONDITIONS: dict[str, tuple[sp.Basic, ...]] = {
    "kan:thm4.1_explicit": (sp.Ge(R, R_bar + dist_star + eta * C_PRIV * Z_MAX),),
    "kan:cor5.3": (sp.Le(delta, _Min(gamma**3 / n, gamma / n)),),
    "kan:cor5.5": (sp.Le(delta, gamma / n),),
    "kan:cor5.6": (sp.Le(delta, 1 / (gamma * n)), sp.Le(delta, 1 / n)),
    "kan:fullbatch_gd": (sp.Le(delta, 1 / n),),
    "kan:fullbatch_dpgd": (sp.Le(delta, gamma / n),),
    "kan:fullbatch_dpgd_both": (sp.Le(delta, gamma / n),),
    "kan:thmD.15": (THMD16_WIDTH,),
    "kan:thmE.1_gen": (THME1_WIDTH,),
    "kan:thmE.1_pop": (THME1_WIDTH,),
}


def side_conditions_hold(bound_id: str, **values: float) -> bool:
    """Whether ``bound_id``'s conditions *and* its :data:`SIDE_CONDITIONS` hold at ``values``."""
    b = _BY_ID.get(bound_id)
    if b is None:
        raise ValueError(f"bound_id must be one of the kan ids {sorted(_BY_ID)}, got {bound_id!r}")
    try:
        _check_conditions(b, values, extra=SIDE_CONDITIONS.get(bound_id, ()))
    except _ConditionFailed:
        return False
    return True


class _ConditionFailed(ValueError):
    pass


# Every kan:* bound: this module's, the optimisation theorems' and the population theorems'.
_BY_ID = {v.id: v for space in (vars(sys.modules["bounds.rates.kan.correlated_noise"]),
                                vars(sys.modules["bounds.rates.kan.population"]), globals())
          for v in list(space.values()) if isinstance(v, Bound)}


# Corollaries from their theorems, for `dprates bounds derive` (bounds/explain.py).
from bounds.explain import DerivationSpec, register_derivation  # noqa: E402


def _regime_of(corollary: str, branch: str):
    # evaluated when derived: the regime's substitutions are computed here
    return lambda: regime(corollary, branch)


for _spec in (
    DerivationSpec("kan:cor5.6_opt", "kan:A_non", _regime_of("cor5.6", "delta_needed"),
                   ("n",), note="B ≍ γ√n, η ≍ B/n, T ≍ n²/(γ²B), m ≍ γ⁻⁴ (Cor 5.6's choices)"),
    DerivationSpec("kan:cor5.6", "kan:thmE.1_pop", _regime_of("cor5.6", "delta_needed"),
                   ("n",), label="delta_needed",
                   note="Cor 5.6's choices with δ = 1/n (the reading E.1 needs, KAN-E5)"),
    DerivationSpec("kan:cor5.6", "kan:thmE.1_pop", _regime_of("cor5.6", "delta_as_stated"),
                   ("n",), label="delta_as_stated",
                   note="Cor 5.6's choices with δ = 1/(γn) as printed (KAN-E5)"),
    DerivationSpec("kan:fullbatch_gd", "kan:thmE.1_pop",
                   _regime_of("fullbatch_gd", "delta_needed"), ("n",),
                   note="B = n, η ≍ 1, T ≍ n/γ², δ = 1/n"),
):
    register_derivation(_spec)
