"""KAN paper (Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft, arXiv 2605.12648): the
population-risk, stability and generalisation bounds (Theorem 5.2 / C.23, Theorem C.22, Theorems
D.15 / D.16, Theorem E.1) and the λ = 0 (Theorem D.14, A_van) and κ = 0 (Theorem E.1, A_non, App. E
full-batch GD) optimisation rates.

The symbols and the shared sub-expressions (A_corr, R_*, the width conditions) are those of
:mod:`bounds.rates.kan.correlated_noise`; ids and readings are listed in its docstring.
"""
from __future__ import annotations

import sympy as sp

from bounds.core import Bound, register, sym
from bounds.rates.kan.correlated_noise import (
    A_CORR, A_NON, A_VAN, A_VAN_SIMPLIFIED, B, R, R_STAR, T, THM52_WIDTH, THMD16_WIDTH,
    _CALIBRATED, _LD, _LOG_NT, _NONPRIVATE, _RS_LOGS, _SRC, _THM41_ASSUMPTIONS, _THM41_CONDITIONS,
    _log, _sqrt, avg_loss, b_grad, d, delta, eta, gamma, m, n)

# ------------------------------------------------------------------------------------------------
# Section 5 / App. C.2: population risk, stability, generalisation
# ------------------------------------------------------------------------------------------------

_POP_QUANTITY = ("averaged population risk (1/T)Σ_{t<T} E_{S,A} L(W_t) of Algorithm 1, with "
                 "probability ≥ 1 − δ over the initialisation")

THM52 = register(Bound(
    id="kan:thm5.2",
    expr=(1 + eta * T / n) * (A_CORR + (_sqrt(m) + R_STAR) * delta),
    quantity=_POP_QUANTITY + " (λ > 0)",
    source=f"{_SRC}, Theorem 5.2 (Section 5.1; proof Theorem C.23, App. C.2)",
    assumptions=_THM41_ASSUMPTIONS + (
        "m ≳ R_*² log(m/δ)η²(T·A_corr + (log(n/δ) + R_*)(√(T log(1/δ)/B) + log(1/δ)))²",),
    privacy=_CALIBRATED,
    kind="upper",
    conditions=_THM41_CONDITIONS + (sp.Le(B, n), THM52_WIDTH),
    notes="Main-text form; C.23 carries log(1/δ) in the prefactor and log(n/δ) on the δ term "
          "(kan:thmC.23, KAN-E2).  Generalisation via on-average argument stability with the "
          "noise shared by the coupled runs, so κ and λ enter only through A_corr.",
))

THMC23 = register(Bound(
    id="kan:thmC.23",
    expr=(1 + eta * T * _LD / n) * (A_CORR + _log(n / delta) * (_sqrt(m) + R_STAR) * delta),
    quantity=_POP_QUANTITY + " (λ > 0), logs as in the appendix",
    source=f"{_SRC}, Theorem C.23 (App. C.2, restatement of Theorem 5.2)",
    assumptions=THM52.assumptions,
    privacy=_CALIBRATED,
    kind="upper",
    conditions=THM52.conditions,
    notes="A_corr itself is the main-text form (C.23 reuses the symbol A_corr of C.13, whose "
          "polylog it leaves implicit).",
))

_VAN_ASSUMPTIONS = (
    "δ ∈ (0, 1), λ = 0; Assumptions 3.2 and 3.3; η ≤ 1/(12C_{σ,b}p³); C_clip ≥ G_δ",
    "m ≳ max{log(m/δ)(log⁴T + log²(n/δ))/γ⁴, log(nT/δ)/(Td)}; R_* ≍ (log T + √log(n/δ))/γ",
    "no upper limit on m (the λ = 0 analysis uses the projection directly)",
)

A_VAN_B = register(Bound(
    id="kan:A_van",
    expr=A_VAN,
    quantity="averaged empirical risk (1/T)Σ_{t<T} L_S(W_t) of Algorithm 1 with λ = 0, with "
             "probability ≥ 1 − δ (A_van)",
    source=f"{_SRC}, Theorem D.14 (App. D.2)",
    assumptions=_VAN_ASSUMPTIONS,
    privacy=_CALIBRATED,
    kind="upper",
    conditions=(sp.Ge(m, _log(m / delta) * (_log(T)**4 + _log(n / delta)**2) / gamma**4),
                sp.Ge(m, _LOG_NT / (T * d))),
    notes="As printed, constant 1.  Compared with A_corr at λ = 0 it has no η√(md)κ/(B^{3/2}√T) "
          "cross term.  The proof recalls 'C_clip ≤ G_δ ≲ √log(1/δ)' where the theorem assumes "
          "C_clip ≥ G_δ; with C_clip ≍ G_δ both give the printed logs (KAN-E11).",
))

A_VAN_SIMPLE = register(Bound(
    id="kan:A_van_simplified",
    expr=A_VAN_SIMPLIFIED,
    quantity=A_VAN_B.quantity + " (polylogs dropped)",
    source=f"{_SRC}, Theorem D.14 (App. D.2), polylogarithmic factors dropped",
    assumptions=_VAN_ASSUMPTIONS,
    privacy=_CALIBRATED,
    kind="upper",
    notes="Same exponents as kan:A_van in every scale variable (tested).",
))

def _nonprivate_upper(**fields) -> Bound:
    """Register a non-private (κ = 0) upper bound: App. E's rates and the prior GD rate."""
    return register(Bound(privacy=_NONPRIVATE, kind="upper", **fields))


A_NON_B = _nonprivate_upper(
    id="kan:A_non",
    expr=A_NON,
    quantity="averaged empirical risk (1/T)Σ_{t<T} L_S(W_t) of clipped projected mini-batch SGD "
             "(κ = 0), with probability ≥ 1 − δ (A_non)",
    source=f"{_SRC}, Theorem E.1 (App. E)",
    assumptions=("δ ∈ (0, 1), κ = 0; Assumptions 3.2 and 3.3; η ≤ 1/(12C_{σ,b}p³); C_clip ≥ G_δ",
                 "m ≳ log(m/δ)(log⁴T + log²(n/δ))/γ⁴"),
    notes="A_corr at κ = 0 has an extra η/T, absorbed by 1/(γ²ηT) when η ≤ 1, γ ≤ 1.",
)

FULLBATCH_GD_OPT = _nonprivate_upper(
    id="kan:fullbatch_gd_opt",
    expr=1 / (gamma**2 * eta * T),
    quantity="averaged empirical risk (1/T)Σ_{t<T} L_S(W_t) of full-batch projected GD (B = n, κ = 0)",
    source=f"{_SRC}, App. E, 'Recovery of full-batch GD'",
    assumptions=("B = n (Δ_t = 0: the mini-batch terms of A_non vanish), κ = 0",
                 "m ≳ polylog(n/δ)/γ⁴; the paper takes η ≍ 1 and writes 1/(γ²T)"),
    notes="η kept (the paper sets η ≍ 1) so that experiments can test the ηT collapse.",
)

#: The product ηT (the "time" of the gradient flow that full-batch GD discretises).
etaT = sym("etaT")

def _fullbatch_gd_variant(bid: str, expr: sp.Expr, quantity: str, source: str, notes: str,
                          extra: tuple[str, ...] = ()) -> Bound:
    """A reading of App. E's full-batch GD rate (kan:fullbatch_gd_opt's hypotheses, non-private)."""
    return _nonprivate_upper(id=bid, expr=expr, quantity=quantity, source=source,
                             assumptions=FULLBATCH_GD_OPT.assumptions + extra, notes=notes)


FULLBATCH_GD_ETAT = _fullbatch_gd_variant(
    "kan:fullbatch_gd_etaT", 1 / (gamma**2 * etaT),
    "averaged empirical risk of full-batch GD (B = n, κ = 0) as a function of the product ηT "
    "alone (the ηT collapse)",
    f"{_SRC}, App. E, 'Recovery of full-batch GD' (kan:fullbatch_gd_opt with η kept)",
    "kan:fullbatch_gd_opt written in the product etaT = ηT: runs with different (η, T) at equal "
    "ηT have the same bound, so the bound is flat in η along ηT = const (exponent 0).",
    ("η below the divergence threshold ≈ 1/β (the bound's η ≤ 1/(12C_{σ,b}p³))",))

FULLBATCH_GD_PRINTED = _fullbatch_gd_variant(
    "kan:fullbatch_gd_T_only", 1 / (gamma**2 * T),
    "averaged empirical risk of full-batch GD as App. E prints it (η ≍ 1 absorbed: a function "
    "of T alone)",
    f"{_SRC}, App. E, 'Recovery of full-batch GD' (as printed, η ≍ 1)",
    "The competitor of the ηT collapse: read literally, the risk depends on T only, so along "
    "ηT = const it would grow like η.")

A_NON_MINIBATCH = _nonprivate_upper(
    id="kan:A_non_minibatch",
    expr=1 / (gamma * _sqrt(B * T)) + eta / B,
    quantity="the mini-batch terms of A_non (what Theorem E.1 charges for batches of B instead "
             "of n): read as a bound on |avg L_S(SGD, B) − avg L_S(GD)| on the same data",
    source=f"{_SRC}, Theorem E.1 (App. E)",
    assumptions=A_NON_B.assumptions + (
        "reading: A_non − 1/(γ²ηT) bounds the effect of the batch size at fixed (η, T)",),
    notes="Slope in B between −1/2 (1/(γ√(BT)) dominates) and −1 (η/B dominates).",
)

_GEN_NOTE = ("avg_loss is the run's own averaged training loss (1/T)Σ_{t<T} E L_S(W_t), so the "
             "bound is a function of a measured quantity.")

THMC22 = register(Bound(
    id="kan:thmC.22",
    expr=2 * sp.E * eta * b_grad * T * avg_loss / n + 2 * R * delta,
    quantity="on-average argument stability E[(1/n)Σ_i ‖W_T − W_T^{(i)}‖] of Algorithm 1 over "
             "coupled runs on S and S^{(i)} (one example replaced) sharing init, batches and noise",
    source=f"{_SRC}, Theorem C.22 (App. C.2)",
    assumptions=("assumptions of Lemmas C.20, C.21 (optimisation good event, width "
                 "m ≳ C²p³(log(m/δ)+p)R_*⁴); P(Ê^{(i)c}) ≤ δ_stab = δ (as in C.23)",
                 "b_grad = b_{δ,m} ≥ sup ‖∇f_W(x)‖ over the ball K = B(W₀, R_*), R = R_*"),
    privacy="any κ, λ: the coupled runs share the noise, which cancels in W_T − W_T^{(i)}",
    kind="upper",
    notes="Σ_{t<T} E L_S(W_t) written T·avg_loss.  " + _GEN_NOTE + "  Free of κ and λ.",
))

THMC23_GEN = register(Bound(
    id="kan:thmC.23_gen",
    expr=2 * b_grad * (2 * sp.E * eta * b_grad * T * avg_loss / n + 2 * R * delta),
    quantity="generalisation gap E_{S,A}[L(W_T) − L_S(W_T)] of Algorithm 1",
    source=f"{_SRC}, proof of Theorem C.23 (Lemma C.15 with Theorem C.22)",
    assumptions=THMC22.assumptions + ("loss b_grad-Lipschitz in W on K (|ℓ'| ≤ 1)",),
    privacy=THMC22.privacy,
    kind="upper",
    notes="First inequality of the C.23 proof, constants kept (Lemma C.15's factor 2b).  The "
          "proof then writes ≲ η log(1/δ)T·avg_loss/n + √log(1/δ)R_*δ.  " + _GEN_NOTE,
))

THMD15 = register(Bound(
    id="kan:thmD.15",
    expr=eta * _sqrt(_LD) * T * avg_loss / n + _RS_LOGS * delta / gamma,
    quantity="on-average argument stability E[(1/n)Σ_i ‖W_T − W_T^{(i)}‖] of Algorithm 1 with λ = 0",
    source=f"{_SRC}, Theorem D.15 (App. D.3)",
    assumptions=_VAN_ASSUMPTIONS + ("m ≳ log(m/δ)η²(T²A_van² + log(n/δ)log²(1/δ)(T/B + 1))",),
    privacy=THMC22.privacy,
    kind="upper",
    notes="Σ_t E L_S(W_t) written T·avg_loss.  " + _GEN_NOTE,
))

THMD16 = register(Bound(
    id="kan:thmD.16",
    expr=((1 + eta * T * _LD / n) * (A_VAN + delta * _sqrt(_log(n / delta)))
          + _sqrt(_LD) * _RS_LOGS * delta / gamma),
    quantity=_POP_QUANTITY + " (λ = 0)",
    source=f"{_SRC}, Theorem D.16 (App. D.3)",
    assumptions=THMD15.assumptions,
    privacy=_CALIBRATED,
    kind="upper",
    conditions=A_VAN_B.conditions + (sp.Le(B, n), THMD16_WIDTH),
))

THME1_GEN = _nonprivate_upper(
    id="kan:thmE.1_gen",
    expr=eta * T * avg_loss / n + delta / gamma,
    quantity="generalisation gap E_{S,A}[L(W_T) − L_S(W_T)] of mini-batch SGD (κ = 0)",
    source=f"{_SRC}, Theorem E.1 (App. E)",
    assumptions=A_NON_B.assumptions + ("m ≳ log(m/δ)η²(T²A_non² + log(n/δ)log²(1/δ)(T/B + 1))",),
    notes="(η/n)Σ_t E L_S(W_t) written ηT·avg_loss/n.  " + _GEN_NOTE,
)

THME1_POP = _nonprivate_upper(
    id="kan:thmE.1_pop",
    expr=(1 + eta * T / n) * (A_NON + delta) + delta / gamma,
    quantity=_POP_QUANTITY + " for mini-batch SGD (κ = 0)",
    source=f"{_SRC}, Theorem E.1 (App. E)",
    assumptions=THME1_GEN.assumptions,
    conditions=(sp.Le(B, n),),
)
