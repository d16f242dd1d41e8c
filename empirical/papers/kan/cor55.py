"""KAN paper (Wang et al.), Corollary 5.5 (λ = 0, B ≍ γ√n, single pass): population risk
in n with κ from Theorem D.9 as stated and with κ calibrated tightly by dp-accounting to the same
(ε, δ) (Theorem 5.4's replace-one relation).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import privacy_pairs as pairs
from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.lam import calibration_routes
from empirical.papers.kan.problems import _common, _instance, held_out, privacy_columns, sample_rows


# =============================================================================================
# Corollary 5.5: λ = 0, single pass, population risk vs n (Theorem 5.4 / D.9 calibration)
# =============================================================================================
def cor55_schedule(n: int, gamma: float, epsilon: float, d: int) -> dict:
    """Corollary 5.5's choices (constants 1): B = ⌈γ√n⌉, T = ⌈√n/γ⌉, η = min{1, γ²√n ε/√d}."""
    return {"B": max(1, math.ceil(gamma * math.sqrt(n))), "T": math.ceil(math.sqrt(n) / gamma),
            "eta": min(1.0, gamma ** 2 * math.sqrt(n) * epsilon / math.sqrt(d))}


#: Value discretisation of the pair's PLD in the stored rows: the lower bound loses at most
#: steps × 1e-3 (≤ 0.4 on the quick grid) and costs ≈ 0.1 s a point.
PAIR_DISCRETIZATION = 1e-3


def _run_cor55(point: dict, rngs: list) -> dict:
    inst = _instance(point)
    n, d = int(point["n"]), inst.d
    sch = cor55_schedule(n, inst.gamma0, point["epsilon"], d)
    cal = "tight" if point.get("calibration_tight") else "thm5.4"
    priv = calibrate(point["epsilon"], point["delta"], lam=0.0, T=sch["T"], n=n, B=sch["B"],
                     sampler="fresh", calibration=cal, tight_relation="replace-one")
    H, y = sample_rows(inst, n, rngs)
    Ht, yt = held_out(inst, point)
    R = len(rngs)
    meter = NoiseMeter(R)
    run = dp_sgd_correlated(inst.model, H, y, T=sch["T"], eta=sch["eta"], B=sch["B"],
                            C_clip=point["C_clip"], lam=0.0, noise_multiplier=priv.noise_multiplier,
                            R_star=math.inf, rng=rngs, H_test=Ht, y_test=yt,
                            eval_every=max(1, sch["T"] // 10), eval_subsample=1000,
                            observe=correlated_hook(meter, np.zeros(R)))
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / sch["B"])
    # A lower bound on the true ε of the κ used (exact PLD of an achievable replace-one pair,
    # algorithms.privacy_pairs): beside the accountant's upper bounds, it is what shows D.9's κ
    # not private (KAN-E25), and it cross-checks the tight calibration by a second route: a
    # lower bound above the certified ε proves the accountant wrong (one-sided; the pair need
    # not be the worst, so lower < certified says nothing more).
    lower = pairs.pair_epsilon_lower(priv.noise_multiplier, sch["B"] / n, sch["T"] - 1,
                                     float(point["delta"]), "replace-one",
                                     value_discretization=PAIR_DISCRETIZATION)
    return {"pop_risk": run.avg_test_loss, "opt_risk": run.avg_train_loss,
            "last_test_loss": run.test_curve[:, -1], "test_loss_se": run.test_loss_se,
            "gamma0": np.full(R, inst.gamma0), "lam": np.zeros(R),
            "clip_fraction": run.clip_fraction, "epsilon_pair_lower": np.full(R, lower),
            **meter.columns(),
            **({"max_epsilon_pair_lower": np.full(R, lower),
                "limit_epsilon_pair_lower": np.full(R, priv.epsilon_guarantee)}
               if cal == "tight" else {}),
            **calibration_routes(priv, cal, 0.0, sch["T"], n, sch["B"], "fresh",
                                 float(point["epsilon"]), float(point["delta"]), R),
            **privacy_columns(priv, R), **_common(point, run, R)}


def _cor55_values(point: dict) -> dict:
    return {"n": point["n"], "d": point["d"], "epsilon": point["epsilon"],
            "gamma": _instance(point).gamma0, "delta": point["delta"]}


_COR55_FIXED = {"m": 32, "d": 5, "p": 6, "margin_quantile": 0.8, "epsilon": 1.0, "delta": 1e-6,
                "C_clip": 0.5}

COR55_N = register(Experiment(
    id="kan.cor55.n",
    paper="kan",
    title="Cor. 5.5 as stated (λ = 0, B = γ√n, T = √n/γ, η = min{1, γ²√nε/√d}, κ from D.9): "
          "population risk vs n",
    variable="n",
    quick_grid=(500, 1000, 2000, 4000, 8000),
    full_grid=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000),
    fixed={**_COR55_FIXED, "calibration_tight": 0},
    seeds=4,
    run=_run_cor55,
    metric="pop_risk",
    bound_values=_cor55_values,
    # Not a private run: D.9's κ → 0 in this regime and is not (ε, δ)-DP (KAN-E25); the rows
    # still carry every ε column, and tests pin epsilon_spent > epsilon_target.
    private=False,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0, fresh batches, κ from Thm D.9 (replace-one)",
    description="Utility of the corollary exactly as stated.  The D.9 noise multiplier shrinks "
                "like n^(-1/4) here; the exact ε of an achievable replace-one pair "
                "(epsilon_pair_lower, a lower bound) exceeds the target from n = 2000 on, so "
                "this is not a private run (KAN-E25); kan.cor55.n.tight is the private "
                "counterpart."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.095 (row width_m_gamma4), below "
                  "m ≳ γ⁻⁴; λ = 0 has no upper end.",
    checks=(
        Check("kan:cor5.5", "one-sided", 0.15,
              "upper bound (polylog dropped): the averaged population risk may fall faster; "
              "0.15 covers 4 seeds (CI half-width ≈ 0.03) and the iterate average's start at "
              "log 2", expect="finding",
              note="KAN-E26: slope −0.24 against the corollary's local −0.74 on n ∈ [500, 8000] "
                   "at m = 32 (m γ₀⁴ = 0.1: the width condition fails by 10×)"),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, full-batch DP-GD, √d/(γ⁴nε)): slope −1 in n; the "
              "same data must rule it out as a description of this run (same tolerance)"),
    ),
))

COR55_N_TIGHT = register(Experiment(
    id="kan.cor55.n.tight",
    paper="kan",
    title="Cor. 5.5's schedule with κ calibrated by dp-accounting (replace-one, sampling without "
          "replacement) to the same (ε, δ): population risk vs n",
    variable="n",
    quick_grid=(500, 1000, 2000, 4000, 8000),
    full_grid=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000),
    fixed={**_COR55_FIXED, "calibration_tight": 1},
    seeds=4,
    run=_run_cor55,
    metric="pop_risk",
    bound_values=_cor55_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0, fresh batches, κ from dp-accounting at (ε, δ)",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.095 (row width_m_gamma4), below m ≳ "
                "γ⁻⁴; λ = 0 has no upper end.",
    checks=(
        Check("kan:cor5.5", "one-sided", 0.15,
              "upper bound (polylog dropped), now with honest noise; 0.15 as for kan.cor55.n",
              expect="finding",
              note="KAN-E26: same slope (−0.24) as with D.9's smaller κ: the noise is not what "
                   "limits the rate on this grid"),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in n, ruled out by the same data"),
    ),
))
