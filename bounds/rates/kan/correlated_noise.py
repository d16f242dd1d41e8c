"""Bounds of Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft, "Population Risk Bounds
for Kolmogorov–Arnold Networks Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648).

Setting: binary classification with the logistic loss ℓ(z) = log(1 + e^{−z}) on inputs in the unit
ball of R^d; a two-layer B-spline KAN of width m whose first-layer spline coefficients W ∈ R^{mdp}
are trained and whose second layer is fixed at initialisation; Algorithm 1 = mini-batch DP-SGD
(batch B drawn without replacement afresh at each step, per-example clipping at C_clip,
projection onto B(W₀, R_*)) with the correlated noise ξ_t = κ(Z_t − λZ_{t−1}) added to the summed
clipped gradient as C_clip·ξ_t.  γ is the NTK margin at initialisation (Assumption 3.3).
λ = 0 is independent-noise DP-SGD (App. D), κ = 0 non-private SGD (App. E), B = n full batch.

Every risk bound here is on the *averaged* risk over the iterates W_0, …, W_{T−1}: the empirical
("opt") risk (1/T)Σ_t L_S(W_t), or the population ("pop") risk (1/T)Σ_t E_{S,A} L(W_t).  These are
risks, not excess risks; under Assumption 3.3 the optimal risk is ≈ 0.

Symbols (names as in the sympy expressions; docs/papers/kan_bounds.md has the full table):
``n d m T eta B gamma epsilon delta`` as in the paper; ``lam`` = λ ∈ [0, 1) (the shared table's only
nonnegative symbol); ``noise_multiplier`` = κ (``kappa`` is the KL paper's exponent); ``beta`` =
β = C_{σ,b}p³ (Lemma B.7; η ≤ 1/(12β)); ``sample_frac`` = B/n (Corollary 5.3's ρ, App. F's r;
``rho`` is zCDP elsewhere); explicit-constant forms also use ``p C_clip G R_bar L_star
dist_star R``; stability uses ``b_grad`` (b_{δ,m}), ``avg_loss`` ((1/T)Σ_t E L_S(W_t)), ``R`` (R_*).

Constants hidden by ≍, ≲, Õ are 1.  Polylog factors are dropped exactly where the statement drops
them (main-text forms) and kept where the appendix prints them.  λ^T is written exp(T log λ) so
that T stays a scale variable of the calibrated bounds (a power λ^T would make T a shape
parameter, with no log-log exponent); its exponent in T therefore needs λ fixed
(``b.exponent("T", lam=0.5)``).

Registered ids (one line each)
------------------------------
Optimisation risk (averaged empirical risk), upper bounds:

* ``kan:thm4.1``             Theorem 4.1, A_corr (λ ∈ (0,1), κ > 0), main-text form; width window
                             and step condition as conditions.
* ``kan:A_corr``             the same expression without conditions (for parameters outside the
                             Õ-window at constant 1).
* ``kan:thmC.13``            Theorem C.13 with the logs its proof carries (step iii, eq. 16), τ_γ² =
                             log²T + log(n/δ) over γ².
* ``kan:thm4.1_explicit``    Lemma C.11 (= C.3 on the good events), every constant, 12β factor, δ_Z
                             = δ_Δ = δ_pot = δ/5.
* ``kan:A_van``              Theorem D.14 (λ = 0), A_van with its logs.
* ``kan:A_van_simplified``   Theorem D.14 without polylogarithmic factors.
* ``kan:A_non``              Theorem E.1 (κ = 0): 1/(γ²ηT) + 1/(γ√(BT)) + η/B.
* ``kan:fullbatch_gd_opt``   App. E, full-batch GD (B = n, Δ_t = 0): 1/(γ²ηT).
* ``kan:fullbatch_gd_etaT``  the same in the product etaT = ηT: 1/(γ²·etaT) (the ηT collapse).
* ``kan:fullbatch_gd_T_only`` App. E as printed with η ≍ 1: 1/(γ²T) (the collapse's competitor).
* ``kan:A_non_minibatch``    the mini-batch terms of A_non, 1/(γ√(BT)) + η/B (batch-size effect).

λ structure (kind identity; exact factors of the bounds, not rates):

* ``kan:lam_linear``                       1 − λ (linear noise terms of A_corr at fixed κ).
* ``kan:lam_quadratic``                    (1−λ)² + λ²η (quadratic noise term of A_corr at fixed κ).
* ``kan:lam_quadratic_explicit``           (1−λ)² + 12βηλ² (Lemma C.3).
* ``kan:lam_quadratic_c13``                (1−λ)² + 2βηλ² (the C.13 proof's misprint, KAN-E3).
* ``kan:lam_calibration``                  (1 − λ^T)/(1 − λ), the λ-factor of κ in Theorem 5.1 /
                                           F.12.
* ``kan:lam_linear_calibrated``            (1−λ)·(1−λ^T)/(1−λ) = 1 − λ^T.
* ``kan:lam_quadratic_calibrated``         ((1−λ)² + λ²η)((1−λ^T)/(1−λ))².
* ``kan:lam_quadratic_calibrated_explicit`` ((1−λ)² + 12βηλ²)((1−λ^T)/(1−λ))².
* ``kan:lam_fixed_kappa_ratio``            (L(1−λ) + Q((1−λ)² + ηλ²))/(L + Q), L, Q = A_corr's linear
                                           and quadratic noise coefficients: A_corr's noise part at λ
                                           over λ = 0 (KAN-E37).
* ``kan:lam_fixed_kappa_ratio_explicit``   the same with 12βηλ² (KAN-E38).
* ``kan:lam_linear_gap``, ``kan:lam_fixed_kappa_ratio_gap``  the same factors in lam_gap = 1 − λ.
* ``kan:lam_star``                         1/(1+η), the minimiser of kan:lam_quadratic.
* ``kan:lam_star_explicit``                1/(1+12βη), the minimiser of kan:lam_quadratic_explicit.
* ``kan:noise_drift``                      η²c²mdp(1 + (1−λ)²(T−2)), E‖accumulated noise‖² after
                                           T−1 updates (exact, not a bound).
* ``kan:noise_drift_mean_field``           the same with the noise std ÷ √m (flat in m; the
                                           width sweep's competitor).
* ``kan:lam_star_full``                    min{1, (1 + L/(2Q))/(1+η)}, argmin of A_corr over λ at
                                           fixed κ (linear term kept).

Population risk and generalisation, upper bounds:

* ``kan:thm5.2``             Theorem 5.2, (1 + ηT/n)(A_corr + (√m + R_*)δ).
* ``kan:thmC.23``            Theorem C.23, (1 + ηT log(1/δ)/n)(A_corr + log(n/δ)(√m + R_*)δ).
* ``kan:thmD.16``            Theorem D.16 (λ = 0) with A_van.
* ``kan:thmE.1_pop``         Theorem E.1 (κ = 0), (1 + ηT/n)(A_non + δ) + δ/γ.
* ``kan:thmC.22``            Theorem C.22, on-average argument stability 2eηb_{δ,m}T·avg_loss/n +
                             2R_*δ.
* ``kan:thmD.15``            Theorem D.15 (λ = 0) stability, η√log(1/δ)T·avg_loss/n + (log T +
                             √log(n/δ))δ/γ.
* ``kan:thmC.23_gen``        generalisation gap of the C.23 proof with constants,
                             2b(2eηbT·avg_loss/n + 2Rδ).
* ``kan:thmE.1_gen``         Theorem E.1 generalisation gap, ηT·avg_loss/n + δ/γ.

Noise calibration (kind conversion; the κ² that makes Algorithm 1 (ε, δ)-DP):

* ``kan:thm5.1_noise``        Theorem 5.1 (λ > 0, zero-out), ((1−λ^T)/(1−λ))²(rT + √(rT log(1/δ)))
                              log(1/δ)/ε².
* ``kan:thmF.12_noise``       Theorem F.12 as stated, constant 8.
* ``kan:thmF.12_noise_proof`` Theorem F.12 with the constant 2 its proof gives (KAN-E1).
* ``kan:thm5.4_noise``        Theorem 5.4 (λ = 0, replace-one), B²T log(1/δ)/(n²ε²).
* ``kan:thmD.9_noise``        Theorem D.9, 16B²T/(n²ε) + 32B²T log(1/δ)/(n²ε²).
* ``kan:calibration_gap``     F.12 at λ → 0⁺ over D.9: ≈ n/(4B), the discontinuity at λ = 0
                              (KAN-E7).

Corollaries, specialisations, prior rates (polylogs dropped as printed):

* ``kan:cor5.3``             Corollary 5.3 (λ > 0, B = ρn, m ≍ γ⁻⁶): 1/(γ√n) + √d/(γ⁴nε), opt and
                             pop.
* ``kan:cor5.3_noise_ratio`` A_corr over 1/(γ²ηT) at Cor 5.3's privacy-branch choices (O(1) in
                             n): the private/non-private ratio's bound.
* ``kan:tuned_eta_noise``    A_van's η-terms at B = n minimised over η, κ ∝ √T/ε: 2√(md)κ/(γn√T)
                             ∝ √(md)/(γnε) (App. D.3).
* ``kan:fixed_eta_noise``    A_van's quadratic noise term ηmdκ²/n² at B = n and a fixed η (the
                             E12 d and m sweeps' competitor: exponent +1 in m and d).
* ``kan:cor5.5``             Corollary 5.5 (λ = 0, B ≍ γ√n, m ≍ γ⁻⁴): 1/(γ√n) + √d/(γ³nε), opt and
                             pop.
* ``kan:cor5.6_opt``         Corollary 5.6 (κ = 0) optimisation risk 1/n.
* ``kan:cor5.6``             Corollary 5.6 population risk 1/(γ²n) (needs δ ≤ 1/n, KAN-E5).
* ``kan:fullbatch_dpgd``     App. D.3 full-batch DP-GD as stated: √d/(γ³nε).
* ``kan:fullbatch_dpgd_both`` App. D.3 full-batch DP-GD with the dropped η ≍ 1 branch: 1/(γ²n) +
                              √d/(γ³nε) (KAN-E6).
* ``kan:fullbatch_gd``       App. E full-batch GD population risk 1/(γ²n).
* ``kan:wang_gd``            Wang et al. (2026) full-batch GD, both layers, m ≍ γ⁻⁶: 1/(γ⁴n).
* ``kan:wang_dpgd``          Wang et al. (2026) full-batch DP-GD: √d/(γ⁴nε).
* ``kan:dpsco_lower``        lower bound, Bassily et al. (2019) DP-SCO: 1/√n + √d/(nε).

The population-risk, stability and generalisation theorems and the λ = 0 / κ = 0 rates
(Section 5, Apps. C.2, D, E) are defined in :mod:`bounds.rates.kan.population`; the calibrations,
corollaries, full-batch and prior rates in :mod:`bounds.rates.kan.calibration_corollaries`.  Both
import this module; the package imports all three.

Readings where the paper contradicts itself are in each bound's ``notes`` and in
docs/errata.md (KAN-E1 … KAN-E19).
"""
from __future__ import annotations

import sympy as sp

from bounds.core import UNIT_HALF_OPEN, UNIT_LEFT_OPEN, UNIT_OPEN, Bound, register, sym

n, d, m, T, eta, B = sym("n"), sym("d"), sym("m"), sym("T"), sym("eta"), sym("B")
lam, kappa, gamma = sym("lam", UNIT_HALF_OPEN), sym("noise_multiplier"), sym("gamma")
epsilon, delta = sym("epsilon"), sym("delta", UNIT_OPEN)
beta, sample_frac = sym("beta"), sym("sample_frac", UNIT_LEFT_OPEN)
p, C_clip, G, R_bar, L_star, dist_star = (sym("p"), sym("C_clip"), sym("G"), sym("R_bar"),
                                          sym("L_star"), sym("dist_star"))
R, b_grad, avg_loss = sym("R"), sym("b_grad"), sym("avg_loss")

_sqrt, _log, _Min = sp.sqrt, sp.log, sp.Min

_SRC = "KAN paper"
_DP_ZERO_OUT = ("(ε, δ)-DP, zero-out neighbouring datasets (App. F.1: one record's clipped gradient "
                "replaced by 0), fixed-size batches drawn without replacement afresh at each step")
_DP_REPLACE = ("(ε, δ)-DP, replace-one neighbouring datasets (Lemma D.7: sensitivity 2C_clip/B), "
               "batches drawn without replacement afresh at each step")
_NONPRIVATE = "none (κ = 0: non-private SGD)"
_CALIBRATED = ("(ε, δ)-DP when κ is calibrated by kan:thm5.1_noise (λ > 0, zero-out) or "
               "kan:thm5.4_noise (λ = 0, replace-one); the risk bound itself holds for any κ")

# ------------------------------------------------------------------------------------------------
# Shared sub-expressions (public: experiments evaluate them at their own parameters)
# ------------------------------------------------------------------------------------------------

#: λ^T, written so that T is not a shape parameter (see the module docstring).
LAM_POW_T = sp.exp(T * _log(lam))

#: (1 − λ^T)/(1 − λ): ‖C‖₂ bound of Lemma F.11, the λ-factor of the calibrated κ.
LAM_CALIBRATION = (1 - LAM_POW_T) / (1 - lam)

#: Projection radius R_* ≍ (log T + √log(n/δ))/γ of Theorems 4.1, 5.2, D.14.
R_STAR = (_log(T) + _sqrt(_log(n / delta))) / gamma

#: Localisation scale τ_γ, τ_γ² ≍ (log²T + log(n/δ))/γ² (proof of C.13).
TAU_GAMMA = _sqrt(_log(T)**2 + _log(n / delta)) / gamma

#: λ-factors of A_corr at fixed κ (Theorem 4.1, Remark 4.2) and of Lemma C.3 (explicit 12β).
LAM_LINEAR = 1 - lam
LAM_QUADRATIC = (1 - lam)**2 + lam**2 * eta
LAM_QUADRATIC_EXPLICIT = (1 - lam)**2 + 12 * beta * eta * lam**2

#: A_corr = A_CORR_NOISE_FREE + A_CORR_L·(1−λ) + A_CORR_Q·((1−λ)² + λ²η)  (Theorem 4.1).
A_CORR_NOISE_FREE = 1 / (gamma**2 * eta * T) + 1 / (gamma * _sqrt(B * T)) + eta * (1 / B + 1 / T)
A_CORR_L = kappa / (B * _sqrt(T)) * (1 / gamma + eta * _sqrt(m * d) / _sqrt(B))
A_CORR_Q = eta * kappa**2 * m * d / B**2
A_CORR = A_CORR_NOISE_FREE + LAM_LINEAR * A_CORR_L + LAM_QUADRATIC * A_CORR_Q

#: Theorem 4.1's step condition (its left side must be ≲ 1).
STEP_CONDITION = (eta * gamma * _sqrt(T) * (1 / _sqrt(B) + kappa * (1 - lam) / B)
                  + eta**2 * gamma**2 * (T / B + 1))
#: Theorem 4.1's width window m_lo ≤ m ≤ m_hi (Ω̃/Õ constants and polylogs 1).
M_LO = gamma**-4
M_HI = B**2 / (eta**2 * kappa**2 * gamma**2 * d) * _Min(1, 1 / (T * LAM_QUADRATIC))

_LOG_NT = _log(n * T / delta)

#: App. F's sampling rate r = B/n and its high-probability participation count τ (Lemma F.10, c₁ = ½).
F12_TAU = B * T / n + _sqrt(3 * B * T / n * _log(2 / delta))


# The κ² of each calibration, with the λ-factor as an argument so that the corollaries' regimes
# can substitute its upper bound 1/(1−λ) (a subs on the composite expression would not match).
def _kappa2_thm51(lam_factor: sp.Expr) -> sp.Expr:
    return (lam_factor**2 * (B * T / n + _sqrt(B * T / n * _log(1 / delta))) * _log(1 / delta)
            / epsilon**2)


def _kappa2_f12(constant: int, lam_factor: sp.Expr) -> sp.Expr:
    return constant * lam_factor**2 * F12_TAU * _log(sp.Rational(5, 2) / delta) / epsilon**2


KAPPA2_THM51 = _kappa2_thm51(LAM_CALIBRATION)
KAPPA2_F12 = _kappa2_f12(8, LAM_CALIBRATION)
KAPPA2_F12_PROOF = _kappa2_f12(2, LAM_CALIBRATION)
KAPPA2_THM54 = B**2 * T * _log(1 / delta) / (n**2 * epsilon**2)
KAPPA2_D9 = 16 * B**2 * T / (n**2 * epsilon) + 32 * B**2 * T * _log(1 / delta) / (n**2 * epsilon**2)

_LD = _log(1 / delta)
_RS_LOGS = _log(T) + _sqrt(_log(n / delta))
A_VAN = ((_log(T)**2 + _log(n / delta)) / (gamma**2 * eta * T)
         + _LD * _RS_LOGS / (gamma * _sqrt(B * T))
         + _LD * _RS_LOGS * kappa / (gamma * B * _sqrt(T))
         + eta * _LD * (1 / B + _LD / T)
         + eta * m * d * _LD**2 * kappa**2 / B**2)
A_VAN_SIMPLIFIED = (1 / (gamma**2 * eta * T) + 1 / (gamma * _sqrt(B * T)) + kappa / (gamma * B * _sqrt(T))
                    + eta * (1 / B + 1 / T) + eta * m * d * kappa**2 / B**2)
A_NON = 1 / (gamma**2 * eta * T) + 1 / (gamma * _sqrt(B * T)) + eta / B

#: Width conditions of Theorems D.15/D.16 (A_van) and E.1 (A_non), ≳ read with constant 1.
THMD16_WIDTH = sp.Ge(m, _log(m / delta) * eta**2 * (T**2 * A_VAN**2
                                                    + _log(n / delta) * _log(1 / delta)**2 * (T / B + 1)))
THME1_WIDTH = sp.Ge(m, _log(m / delta) * eta**2 * (T**2 * A_NON**2
                                                   + _log(n / delta) * _log(1 / delta)**2 * (T / B + 1)))

_LAM_OPEN = (sp.Gt(lam, 0), sp.Lt(lam, 1))
_THM41_CONDITIONS = _LAM_OPEN + (sp.Ge(m, M_LO), sp.Le(m, M_HI), sp.Le(STEP_CONDITION, 1))

#: Theorem 5.2's width condition (constant and polylog as printed, ≳ read with constant 1).
THM52_WIDTH = sp.Ge(m, R_STAR**2 * _log(m / delta) * eta**2
                    * (T * A_CORR + (_log(n / delta) + R_STAR)
                       * (_sqrt(T * _LD / B) + _LD))**2)


# ------------------------------------------------------------------------------------------------
# Section 4 / App. C: optimisation risk with correlated noise
# ------------------------------------------------------------------------------------------------

_THM41_ASSUMPTIONS = (
    "δ ∈ (0, 1), 0 < λ < 1, κ > 0; Assumption 3.2 (σ, b_k and derivatives bounded) and "
    "Assumption 3.3 (NTK separability at initialisation with margin γ ∈ (0, 1])",
    "R_* ≍ (log T + √log(n/δ))/γ; η ≤ 1/(12C_{σ,b}p³); C_clip ≍ G_δ with C_clip ≥ G_δ "
    "(clipping inactive)",
    "step condition ηγ√T(1/√B + κ(1−λ)/B) + η²γ²(T/B + 1) ≲ 1",
    "width window Ω̃(γ⁻⁴) ≤ m ≤ Õ(B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)² + λ²η))})",
)

THM41 = register(Bound(
    id="kan:thm4.1",
    expr=A_CORR,
    quantity="averaged empirical risk (1/T)Σ_{t<T} L_S(W_t) of Algorithm 1 (λ ∈ (0,1)), with "
             "probability ≥ 1 − δ over the initialisation and the algorithm (A_corr)",
    source=f"{_SRC}, Theorem 4.1 (Section 4.2; restated and proved as Theorem C.13, App. C.1)",
    assumptions=_THM41_ASSUMPTIONS,
    privacy=_CALIBRATED,
    kind="upper",
    conditions=_THM41_CONDITIONS,
    notes="Main-text form: C.13 multiplies the bracket by polylog(nT/δ) (kan:thmC.13 keeps the "
          "proof's logs; KAN-E2).  Conditions are the window and step condition with their Õ/≲ "
          "constants set to 1, so applies() is indicative, not a proof obligation.  The C.13 proof "
          "also uses m ≳ log(nT/δ)/(Td), which Theorem 4.1 omits (KAN-E4; in kan:thmC.13).  The "
          "λ-structure at fixed κ is exact: A_corr = A_CORR_NOISE_FREE + (1−λ)A_CORR_L + "
          "((1−λ)² + λ²η)A_CORR_Q.",
))

A_CORR_B = register(Bound(
    id="kan:A_corr",
    expr=A_CORR,
    quantity=THM41.quantity,
    source=THM41.source,
    assumptions=THM41.assumptions,
    privacy=_CALIBRATED,
    kind="upper",
    notes="kan:thm4.1 without its conditions: the same expression A_corr, for evaluating the "
          "rate where the Õ-window or the step condition (constants 1) fail at practical "
          "parameters (the harness drops grid points outside a primary bound's conditions).  "
          "Outside the window the theorem does not guarantee it.",
))

THMC13 = register(Bound(
    id="kan:thmC.13",
    expr=((_log(T)**2 + _log(n / delta)) / (gamma**2 * eta * T)
          + TAU_GAMMA * _sqrt(_LOG_NT / (B * T))
          + LAM_LINEAR * kappa / B * TAU_GAMMA * _sqrt(_LOG_NT / T)
          + LAM_LINEAR * eta * kappa / B * _sqrt(m * d * _LOG_NT / (B * T))
          + eta * (1 / B + _LOG_NT / T)
          + LAM_QUADRATIC * eta * kappa**2 / B**2 * (m * d + _LOG_NT / T)),
    quantity=THM41.quantity + ", logs kept",
    source=f"{_SRC}, proof of Theorem C.13, step (iii): eq. (16) with the estimates of z, V_Z, "
           "V_Δ, M that follow it",
    assumptions=_THM41_ASSUMPTIONS + (
        "m ≳ log(m/δ)(log²T + log(n/δ))/γ⁴ (Lemma C.12) and m ≳ log(nT/δ)/(Td) (used in the proof)",),
    privacy=_CALIBRATED,
    kind="upper",
    conditions=_THM41_CONDITIONS + (
        sp.Ge(m, _log(m / delta) * (_log(T)**2 + _log(n / delta)) / gamma**4),
        sp.Ge(m, _LOG_NT / (T * d))),
    notes="The statement's polylog(nT/δ)·[A_corr] leaves the polylog's degree open; this is the "
          "bound the proof actually derives before collapsing the logs, with G_δ ≲ √log(1/δ) "
          "dropped and R̄ = τ_γ (constant C_R̄ = 1).  Equals kan:thm4.1 up to polylog(nT/δ) "
          "factors (tested).  Eq. (16) writes λ²η² where Lemma C.11 has 12βλ²η² (KAN-E3).",
))

#: Lemma C.11's auxiliary failure probabilities as C.13 sets them (δ_Z = δ_Δ = δ_pot = δ/5).
_DZ = _DDELTA = _DPOT = delta / 5
C_PRIV = C_clip * kappa / B
V_Z = (T - 1) * m * d * p + 2 * _sqrt((T - 1) * m * d * p * _log(2 / _DZ)) + 2 * _log(2 / _DZ)
V_DELTA = 2 * T * G**2 / B + 8 * G**2 * _log(1 / _DDELTA)
Z_MAX = _sqrt(m * d * p) + _sqrt(2 * _log(2 * T / _DZ))
M_POT = (4 * _sqrt(2) * eta * G * R_bar * _sqrt(T * _log(6 / _DPOT) / B)
         + 4 * LAM_LINEAR * eta * C_PRIV * R_bar * _sqrt(T * _log(6 / _DPOT))
         + 4 * LAM_LINEAR * eta**2 * C_PRIV * G * _sqrt(V_Z * _log(6 / _DPOT) / B))
#: Lemma C.3's self-consistency condition (10).
SELF_CONSISTENCY = sp.Le(dist_star**2 + sp.Rational(8, 3) * eta * T * L_star + M_POT
                         + 2 * eta**2 * V_DELTA
                         + ((1 - lam)**2 * eta**2 + 12 * beta * lam**2 * eta**3) * C_PRIV**2 * V_Z,
                         R_bar**2)

THM41_EXPLICIT = register(Bound(
    id="kan:thm4.1_explicit",
    expr=(8 * L_star + 3 * dist_star**2 / (eta * T) + 3 * M_POT / (eta * T) + 6 * eta * V_DELTA / T
          + 3 * ((1 - lam)**2 * eta + 12 * beta * lam**2 * eta**2) * C_PRIV**2 * V_Z / T),
    quantity="averaged empirical risk (1/T)Σ_{t=1}^T L_S(W_{t−1}) of Algorithm 1 for any comparator "
             "W* (L_star = L_S(W*), dist_star = ‖W₀ − W*‖), conditional on the data and on an "
             "initialisation in E_δ, with probability ≥ 1 − 3δ/5 over the algorithm",
    source=f"{_SRC}, Lemma C.11 (App. C.1; Lemma C.3 on the events of Lemmas C.5, C.6, C.10), "
           "with M from eq. (13), V_Z, z from Lemma C.5, V_Δ from Lemma C.6",
    assumptions=(
        "0 < λ < 1; Assumption 3.2; initialisation in E_δ (Lemma B.5); C_clip ≥ G_δ; η ≤ 1/(12β), "
        "β = C_{σ,b}p³",
        "(7) m ≳ C²_{σ,b}p³(log(m/δ) + p)(R̄ + ηc z)⁴ (localisation, constant 1 here)",
        "(10) self-consistency ‖W₀−W*‖² + (8/3)ηT L_S(W*) + M + 2η²V_Δ + ((1−λ)²η²c² + "
        "12βλ²η³c²)V_Z ≤ R̄²",
        "R_* ≥ R̄ + ‖W* − W₀‖ + ηc z (projection inactive); c = c_priv = C_clip κ/B",
        "δ_Z = δ_Δ = δ_pot = δ/5 as in the proof of C.13",
    ),
    privacy=_CALIBRATED,
    kind="upper",
    conditions=_LAM_OPEN + (
        sp.Le(eta, 1 / (12 * beta)), sp.Ge(C_clip, G), SELF_CONSISTENCY,
        sp.Ge(m, (beta / p**3)**2 * p**3 * (_log(m / delta) + p) * (R_bar + eta * C_PRIV * Z_MAX)**4)),
    notes="All constants as printed (log(6/δ_pot) = log(30/δ)).  The quadratic-noise λ-factor is "
          "(1−λ)² + 12βηλ² (kan:lam_quadratic_explicit); A_corr writes λ²η, dropping 12β, and the "
          "C.13 proof prints 2βλ²η³ in (10) (KAN-E3).  The 8L_S(W*) + 3‖W₀−W*‖²/(ηT) part is the "
          "comparator term; C.12's comparator has L_S(W*) ≤ 1/T and ‖W₀−W*‖ ≤ τ_γ.  The projection "
          "condition R_* ≥ R̄ + ‖W*−W₀‖ + ηcz is in SIDE_CONDITIONS (R is not a symbol of the "
          "rate).  Condition (7) "
          "is ≳ in the paper; here with constant 1 and C_{σ,b} = β/p³.",
))


# ------------------------------------------------------------------------------------------------
# λ structure (Theorem 4.1, Remark 4.2)
# ------------------------------------------------------------------------------------------------

_LAM_SOURCE = f"{_SRC}, Theorem 4.1 and Remark 4.2 (Section 4.2)"
_LAM_ASSUMPTIONS = ("λ ∈ [0, 1); a factor of A_corr's noise terms, not a risk bound",)


def _lam_identity(bid: str, expr: sp.Expr, quantity: str, source: str, notes: str = "",
                  conditions: tuple = (sp.Lt(lam, 1),)) -> Bound:
    return register(Bound(id=bid, expr=expr, quantity=quantity, source=source,
                          assumptions=_LAM_ASSUMPTIONS, privacy=_CALIBRATED, kind="identity",
                          conditions=conditions, notes=notes))


LAM_LINEAR_B = _lam_identity(
    "kan:lam_linear", LAM_LINEAR,
    "λ-factor of A_corr's linear noise terms (Gaussian and cross martingales) at fixed κ",
    _LAM_SOURCE, "Non-increasing in λ: the only factor for which Remark 4.2's 'improves "
    "monotonically as λ → 1' holds (KAN-E8).")

LAM_QUADRATIC_B = _lam_identity(
    "kan:lam_quadratic", LAM_QUADRATIC,
    "λ-factor of A_corr's quadratic noise term ηκ²md/B² at fixed κ", _LAM_SOURCE,
    "Minimised at λ* = 1/(1+η) (kan:lam_star) with value η/(1+η); rises back to η at λ = 1, so "
    "it is not monotone in λ (KAN-E8).")

LAM_QUADRATIC_EXPLICIT_B = _lam_identity(
    "kan:lam_quadratic_explicit", LAM_QUADRATIC_EXPLICIT,
    "λ-factor of the quadratic noise term of Lemmas C.3/C.11, 3((1−λ)²η + 12βλ²η²)c²V_Z/T = "
    "3η((1−λ)² + 12βηλ²)c²V_Z/T", f"{_SRC}, Lemma C.3 / C.11 (App. C.1)",
    "12βη ≤ 1 under η ≤ 1/(12β).  Minimised at 1/(1+12βη) (kan:lam_star_explicit).")

LAM_QUADRATIC_C13 = _lam_identity(
    "kan:lam_quadratic_c13", (1 - lam)**2 + 2 * beta * eta * lam**2,
    "λ-factor of the quadratic noise term as printed in (10) inside the proof of C.13 "
    "(2βλ²η³ instead of 12βλ²η³)", f"{_SRC}, proof of Theorem C.13, step (ii)",
    "Competing reading of KAN-E3, kept so that a fitted λ* can be compared with both "
    "1/(1+12βη) and 1/(1+2βη); Lemma C.3 (the statement used) has 12β.")

LAM_CALIBRATION_B = _lam_identity(
    "kan:lam_calibration", LAM_CALIBRATION,
    "(1 − λ^T)/(1 − λ) = Σ_{k<T} λ^k, the λ-factor of the calibrated κ (Theorems 5.1, F.12) and "
    "Lemma F.11's bound on ‖C‖₂", f"{_SRC}, Theorem 5.1 (Section 5.1), Lemma F.11 (App. F.3)",
    "Between 1 (λ = 0) and T (λ → 1); ≤ 1/(1−λ).  Lemma F.11 justifies ‖C‖₂ ≤ it by the maximum "
    "row sum alone, true here only because C's maximum column sum is the same (KAN-E10).")

LAM_LINEAR_CAL = _lam_identity(
    "kan:lam_linear_calibrated", 1 - LAM_POW_T,
    "λ-factor of A_corr's linear noise terms when κ = κ₀(1−λ^T)/(1−λ) (Theorem 5.1 calibration): "
    "(1−λ)·(1−λ^T)/(1−λ)", f"{_SRC}, Theorem 4.1 with Theorem 5.1's κ",
    "Non-increasing in λ, ≈ 1 while T(1−λ) ≫ 1; falls to 0 only for λ ≳ 1 − 1/T.")

LAM_QUADRATIC_CAL = _lam_identity(
    "kan:lam_quadratic_calibrated", LAM_QUADRATIC * LAM_CALIBRATION**2,
    "λ-factor of A_corr's quadratic noise term when κ = κ₀(1−λ^T)/(1−λ): "
    "((1−λ)² + λ²η)((1−λ^T)/(1−λ))² = (1−λ^T)² + ηλ²((1−λ^T)/(1−λ))²",
    f"{_SRC}, Theorem 4.1 with Theorem 5.1's κ (Section 5.1, 'Interpretation')",
    "≈ 1 + ηλ²/(1−λ)² while T(1−λ) ≫ 1 (increasing: no gain from λ), saturating at ηT² as "
    "λ → 1 at fixed T.  This is why Corollary 5.3 shows no λ.")

LAM_QUADRATIC_CAL_EXPLICIT = _lam_identity(
    "kan:lam_quadratic_calibrated_explicit", LAM_QUADRATIC_EXPLICIT * LAM_CALIBRATION**2,
    "kan:lam_quadratic_calibrated with Lemma C.3's 12βη", f"{_SRC}, Lemma C.3 with Theorem 5.1's κ")

LAM_STAR = _lam_identity(
    "kan:lam_star", 1 / (1 + eta),
    "argmin over λ ∈ [0,1) of (1−λ)² + λ²η (A_corr's quadratic noise factor)", _LAM_SOURCE,
    "The minimiser of the quadratic term alone; the minimiser of the whole A_corr at fixed κ is "
    "kan:lam_star_full ≥ this.", conditions=())

LAM_STAR_EXPLICIT = _lam_identity(
    "kan:lam_star_explicit", 1 / (1 + 12 * beta * eta),
    "argmin over λ ∈ [0,1) of (1−λ)² + 12βηλ² (Lemma C.3's quadratic noise factor)",
    f"{_SRC}, Lemma C.3 / C.11", "≥ 1/2 under η ≤ 1/(12β).  Reading 2β (KAN-E3): 1/(1+2βη).",
    conditions=())

LAM_STAR_FULL = _lam_identity(
    "kan:lam_star_full", _Min(1, (1 + A_CORR_L / (2 * A_CORR_Q)) / (1 + eta)),
    "argmin over λ ∈ [0,1) of A_corr at fixed κ with the linear term kept "
    "(1 means A_corr decreases all the way to λ → 1)", f"{_SRC}, Theorem 4.1",
    "A_corr is convex in λ; d/dλ[L(1−λ) + Q((1−λ)² + ηλ²)] = 0 at λ = (1 + L/(2Q))/(1+η), "
    "L = A_CORR_L, Q = A_CORR_Q.  Tends to kan:lam_star when L ≪ Q.  Not in the paper.",
    conditions=())



def _noise_ratio(quadratic: sp.Expr) -> sp.Expr:
    # A_corr's noise part at fixed κ over its λ = 0 value (both λ-factors are 1 at λ = 0), with
    # the linear/quadratic split A_CORR_L : A_CORR_Q evaluated at the run's own parameters
    return (A_CORR_L * LAM_LINEAR + A_CORR_Q * quadratic) / (A_CORR_L + A_CORR_Q)


LAM_FIXED_RATIO = _lam_identity(
    "kan:lam_fixed_kappa_ratio", _noise_ratio(LAM_QUADRATIC),
    "A_corr's noise terms at λ over those at λ = 0, fixed κ: (L(1−λ) + Q((1−λ)² + ηλ²))/(L + Q), "
    "L = A_CORR_L, Q = A_CORR_Q (printed constant 1 on ηλ²)", f"{_SRC}, Theorem 4.1",
    "The paired ratio E(λ)/E(0) of kan.lam.fixed_kappa is judged against this (KAN-E37): unlike "
    "(1−λ) alone it keeps the ηλ² floor that does not vanish as λ → 1.  Tends to "
    "kan:lam_quadratic when L ≪ Q and to kan:lam_linear when L ≫ Q.")

LAM_FIXED_RATIO_EXPLICIT = _lam_identity(
    "kan:lam_fixed_kappa_ratio_explicit", _noise_ratio(LAM_QUADRATIC_EXPLICIT),
    "kan:lam_fixed_kappa_ratio with Lemma C.3's 12βηλ² in place of ηλ²",
    f"{_SRC}, Theorem 4.1 with Lemma C.3 / C.11",
    "Equals kan:lam_fixed_kappa_ratio at 12β = 1; below it under η ≤ 1/(12β).  Evaluated by the "
    "experiment at β̂, the paper's β measured on its instance (KAN-E38).")

#: 1 − λ as a variable of its own, for sweeps towards λ → 1 (log-log slopes in 1 − λ).
lam_gap = sym("lam_gap", UNIT_LEFT_OPEN)   # 1 − λ ∈ (0, 1]

LAM_LINEAR_GAP = _lam_identity(
    "kan:lam_linear_gap", lam_gap,
    "kan:lam_linear as a function of lam_gap = 1 − λ", f"{_SRC}, Theorem 4.1 and Remark 4.2",
    "Exponent +1 in 1 − λ: the gain a floorless excess would keep as λ → 1.",
    conditions=(sp.Lt(lam_gap, 1),))

LAM_FIXED_RATIO_GAP = _lam_identity(
    "kan:lam_fixed_kappa_ratio_gap", LAM_FIXED_RATIO.expr.subs(lam, 1 - lam_gap),
    "kan:lam_fixed_kappa_ratio as a function of lam_gap = 1 − λ", f"{_SRC}, Theorem 4.1",
    "Tends to Q·η/(L + Q) > 0 as lam_gap → 0: the floor of the noise-induced excess at fixed κ.",
    conditions=(sp.Lt(lam_gap, 1),))

NOISE_DRIFT = register(Bound(
    id="kan:noise_drift",
    expr=eta**2 * C_PRIV**2 * m * d * p * (1 + (1 - lam)**2 * (T - 2)),
    quantity="E‖ηc Σ_{s=1}^{T−1} (Z_s − λZ_{s−1})‖², the accumulated injected noise of Algorithm 1's "
             "T−1 updates (iterates W_0..W_{T−1}), c = C_clip κ/B; equals the noise part of "
             "‖W_{T−1} − W₀‖² when the projection is inactive",
    source=f"{_SRC}, Algorithm 1 and the shifted-iterate identity (Lemma C.1, Step 2 of Section "
           "4.3)",
    assumptions=("Z_s i.i.d. N(0, I_{mdp}), Z₀ = 0; T ≥ 2",
                 "telescoping: Σ_{s≤t}(Z_s − λZ_{s−1}) = Z_t + (1−λ)Σ_{s<t} Z_s"),
    privacy=_CALIBRATED,
    kind="identity",
    conditions=(sp.Ge(T, 2), sp.Lt(lam, 1)),
    notes="Exact (an expectation, not a bound).  Against independent noise (λ = 0) the cumulative "
          "noise is reduced by the factor (1 + (1−λ)²(T−2))/(T−1) — the mechanism behind "
          "A_corr's (1−λ) factors.  Not stated as a formula in the paper.",
))


NOISE_DRIFT_MEAN_FIELD = register(Bound(
    id="kan:noise_drift_mean_field",
    expr=eta**2 * C_PRIV**2 * d * p * (1 + (1 - lam)**2 * (T - 2)),
    quantity="kan:noise_drift with the per-coordinate noise std scaled by 1/√m (the mean-field "
             "convention): the accumulated noise would not grow with the width",
    source=f"{_SRC}, Algorithm 1 (competitor reading, not the paper's: mean-field noise scaling)",
    assumptions=NOISE_DRIFT.assumptions,
    privacy=_CALIBRATED,
    kind="identity",
    conditions=(sp.Ge(T, 2), sp.Lt(lam, 1)),
    notes="The competitor of the width sweep: Algorithm 1 adds noise of std C_clip·κ/B per "
          "coordinate whatever m, so its drift grows like m (kan:noise_drift), not flat.",
))
