"""KAN paper (Wang et al.), a private run inside Theorem 4.1's width window: Algorithm 1 with
correlated noise (λ = 0.5, B = ρn, T = ⌈c_T·min{√n/γ, nεγ²/√d}⌉ as Corollary 5.3 chooses, κ from
Theorem 5.1 / F.12 at every point), population risk in n against Theorem 5.2 at the run's own
parameters and Corollary 5.3.

The window is read as Theorem 4.1 prints it, with its Ω̃/Õ polylogs and constants taken as 1:
m_lo = γ⁻⁴ ≤ m ≤ m_hi = B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)² + λ²η))} (``bounds`` M_LO, M_HI),
with unit clipping (C_clip = 1, the unit F.12 is stated in, so κ is the noise std on the summed
gradient as the window assumes).  Theorem 5.2's own width condition (polylog as printed) is not
met by any affordable run and is not claimed.  The cheapest instance found inside it: d = 2,
m = 16 at the 0.98 margin quantile (γ₀ ≈ 0.56, so m_lo ≈ 10), η = c_η = 1/4 (Corollary 5.3's
η ≍ 1 with constant 1/4), n ≥ 1000 (F.12's rT ≥ 3 ln(2/δ) and the upper end).  Under the
calibration κ² ∝ T, so m_hi ∝ B²/(η²κ²T) ∝ n²/(ηT)² ∝ n/η² along the schedule: the window
opens with n and closes as η → 1 (m/m_hi ≈ 19 at n = 1000 with η = 1).  Every row stores
``width_m_gamma4`` = m/m_lo (≥ 1 inside) and ``width_hi_ratio`` = m/m_hi (≤ 1 inside); both ends
are enforced as row invariants (``max_``/``limit_``), so a point outside the window is an
ERROR, not a data point.

Inside the window the calibrated quadratic noise term of A_corr is at most its optimisation term
(ηκ²md((1−λ)² + λ²η)/B² = (m/m_hi)/(γ²ηT) on the min's second branch), so the run sits in
Corollary 5.3's 1/(γ√n) branch (n_c = d/(γ⁶ε²) ≈ 66 here) and the paired κ = 0 row (same data,
batches, init) has nearly its risk.  The control (``kan.window.n.outside``) is the same instance,
width, schedule (T and B of ε = 1), data, batches and Z at ε = 0.1: κ is 10× larger and m/m_hi
100× larger, outside the window at every point; its private/non-private ratio must not be the
flat O(1) share the window guarantees.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import privacy_pairs as pairs
from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated, f12_conditions
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import (CONSTANT_ONE_LEVEL, _common, _instance, held_out,
                                           privacy_columns, sample_rows, width_hi_ratio)


def window_schedule(n: int, gamma: float, point: dict) -> dict:
    """Corollary 5.3's choices with explicit constants: B = ⌊ρn⌋, T = ⌈c_T·min{√n/γ,
    nε_Tγ²/√d}⌉ (ε_T: the ε the schedule is set for, so that the control keeps the schedule of
    the in-window run), η = c_η, δ = min{1/(n√m), γ/n} (the corollary's own condition)."""
    d, m = int(point["d"]), int(point["m"])
    eps_T = float(point.get("schedule_epsilon", point["epsilon"]))
    return {"B": int(point["sample_frac"] * n),
            "T": math.ceil(point["T_const"] * min(math.sqrt(n) / gamma,
                                                  n * eps_T * gamma ** 2 / math.sqrt(d))),
            "delta": min(1.0 / (n * math.sqrt(m)), gamma / n), "eta": float(point["eta"])}


def _values(point: dict) -> dict:
    """Theorem 5.2's symbols at what the run uses: the schedule's (η, T, B, δ), F.12's κ written
    out in :mod:`algorithms.privacy_pairs`, λ, m, d and γ₀."""
    inst = _instance(point)
    n = int(point["n"])
    s = window_schedule(n, inst.gamma0, point)
    lam, eps = float(point["lam"]), float(point["epsilon"])
    return {"n": n, "d": inst.d, "m": inst.model.m, "gamma": inst.gamma0, "eta": s["eta"],
            "T": s["T"], "B": s["B"], "delta": s["delta"], "lam": lam, "epsilon": eps,
            "sample_frac": float(point["sample_frac"]),
            "noise_multiplier": pairs.kappa_thm_f12(lam, s["T"], s["B"], n, eps, s["delta"])}


def _run_window(point: dict, rngs: list) -> dict:
    """Per seed the private run (κ from F.12) and a κ = 0 row on the same data, batches and Z."""
    inst = _instance(point)
    n = int(point["n"])
    s = window_schedule(n, inst.gamma0, point)
    eps, lam = float(point["epsilon"]), float(point["lam"])
    why = f12_conditions(s["T"], s["B"], n, eps, s["delta"])
    if why:   # the grid is chosen inside F.12's conditions; outside them κ would not be certified
        raise ValueError(f"kan.window: n={n} is outside Theorem F.12's conditions: {why}")
    priv = calibrate(eps, s["delta"], lam=lam, T=s["T"], n=n, B=s["B"], sampler="fresh",
                     calibration="thm5.1")
    H, y = sample_rows(inst, n, rngs)
    H, y = np.repeat(H, 2, axis=0), np.repeat(y, 2, axis=0)
    Ht, yt = held_out(inst, point)
    R = len(rngs)
    meter = NoiseMeter(R)
    run = dp_sgd_correlated(inst.model, H, y, T=s["T"], eta=s["eta"], B=s["B"],
                            C_clip=point["C_clip"], lam=lam,
                            noise_multiplier=[priv.noise_multiplier, 0.0], R_star=math.inf,
                            rng=rngs, rows_per_seed=2, H_test=Ht, y_test=yt,
                            eval_every=max(1, s["T"] // 10), eval_subsample=1000,
                            observe=correlated_hook(meter, np.full(2 * R, lam), 2, measured=0))
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / s["B"])
    pop = run.avg_test_loss.reshape(R, 2)
    opt = run.avg_train_loss.reshape(R, 2)
    hi = width_hi_ratio(_values(point))
    full = lambda v: np.full(R, float(v))  # noqa: E731
    # inside the window at both ends, as row invariants (a point outside is an ERROR)
    inside = ({"max_width_hi_ratio": full(hi), "limit_width_hi_ratio": full(1.0),
               "max_width_lo_inverse": full(1.0 / (inst.model.m * inst.gamma0 ** 4)),
               "limit_width_lo_inverse": full(1.0)} if point.get("inside", 1) else {})
    return {"pop_risk": pop[:, 0], "pop_risk_nonprivate": pop[:, 1],
            "noise_excess": pop[:, 0] - pop[:, 1],
            "opt_risk": opt[:, 0], "opt_risk_nonprivate": opt[:, 1],
            "max_drift": run.max_drift.reshape(R, 2)[:, 0],
            "clip_fraction": run.clip_fraction.reshape(R, 2)[:, 0],
            "gamma0": full(inst.gamma0), "lam": full(lam), "delta": full(s["delta"]),
            "f12_rT": full(s["B"] * s["T"] / n),
            "f12_rT_needed": full(3 * math.log(2 / s["delta"])),
            "width_hi_ratio": full(hi), "noise_ratio": pop[:, 0] / pop[:, 1], **inside,
            **meter.columns(),
            # F.12's κ as used against its formula written out in algorithms.privacy_pairs
            "used_noise_multiplier": full(priv.noise_multiplier),
            "theory_noise_multiplier": full(_values(point)["noise_multiplier"]),
            **privacy_columns(priv, R), **_common(point, run, R)}


_FIXED = {"m": 16, "d": 2, "p": 6, "margin_quantile": 0.98, "epsilon": 1.0, "lam": 0.5,
          "sample_frac": 0.5, "T_const": 1.0, "eta": 0.25, "C_clip": 1.0}
_PROBLEM = "NTK teacher with margin γ₀ (G1), d = 2, m = 16; held-out sample of 2000 for L(W_t)"
_ALGORITHM = ("dp_sgd_correlated, λ = 0.5, fresh batches B = n/2, η = 1/4, C_clip = 1, κ from "
              "Theorem F.12 (zero-out); a κ = 0 row on the same data, batches and Z")
_GRID = (1000, 2000, 4000, 8000)
_FULL_ONLY = ("8 seeds × 4 sizes of paired runs up to n = 8000 (B·m·T·2 ≈ 2·10⁷ per seed at "
              "n = 8000) cost ≈ 70 CPU-s (≈ 35 at n ≤ 4000), above the 3 CPU-s quick-grid "
              "allowance; the window needs n ≥ 1000 (m/m_hi ≈ 0.74 there, rows width_hi_ratio); "
              "full grid: the slope n^−0.13 [−0.14, −0.11] is a FINDING against Corollary 5.3 "
              "and Theorem 5.2 (KAN-E30, KAN-E42)")

#: Theorem 5.2 with constant 1 at the run's own parameters.
_LEVEL = CONSTANT_ONE_LEVEL

WINDOW_N = register(Experiment(
    id="kan.window.n",
    paper="kan",
    title="Inside Thm 4.1's width window (λ = 0.5, B = n/2, η = 1/4, T = ⌈√n/γ⌉, κ from F.12 "
          "at ε = 1): population risk vs n",
    variable="n",
    quick_grid=_GRID[:3],
    full_grid=_GRID,
    full_only=_FULL_ONLY,
    fixed=_FIXED,
    seeds=8,
    run=_run_window,
    metric="pop_risk",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM,
    description="Inside Theorem 4.1's window at every point (γ⁻⁴ ≤ m ≤ m_hi, polylogs and "
                "constants 1; rows width_m_gamma4 ≈ 1.6, width_hi_ratio 0.74 → 0.094, enforced); "
                "control kan.window.n.outside.",
    checks=(
        Check("kan:cor5.3", "one-sided", 0.15,
              "one-sided: Corollary 5.3's rate 1/(γ√n) + √d/(γ⁴nε) (constants and polylog "
              "dropped) at the run's n, d, ε, γ₀; an upper bound, so the risk may fall faster, "
              "not slower.  0.15: 8 seeds (CI half-width ≈ 0.03–0.05 over an 8× range of n) and "
              "the iterate average's start at log 2",
              use_asymptotic=False, expect="finding",
              note="KAN-E30: inside the window too the risk falls like n^−0.13 [−0.14, −0.11] "
                   "(0.62 → 0.48 on n = 1000–8000) against the corollary's local −0.57: the "
                   "window caps ηT (m/m_hi ∝ (ηT/n)² at B = n/2), so the run stays "
                   "pre-asymptotic"),
        Check("kan:thm5.2", "one-sided", 0.15,
              "one-sided: Theorem 5.2, (1 + ηT/n)(A_corr + (√m + R_*)δ), an upper bound at each "
              "point's own η, T, B, δ, λ, F.12 κ, m and γ₀; one-sided, 0.15 as for the "
              "corollary", **_LEVEL, expect="finding", finding_on="slope+level",
              note="KAN-E42: inside the window the theorem falls 0.45 → 0.10 (local −0.74), "
                   "non-vacuous at constant 1; the risk exceeds it 1.4–5.0× (above the band "
                   "from n = 4000; "
                   "C.13's polylog(nT/δ) ≈ 19–24 would cover it)"),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in n, ruled out by the same "
              "data"),
    ),
))

#: The control's noise: ε = 0.1 with the schedule (T, B) of ε = 1, so only κ changes (10×).
_OUTSIDE = _FIXED | {"epsilon": 0.1, "schedule_epsilon": 1.0, "inside": 0}

WINDOW_N_OUTSIDE = register(Experiment(
    id="kan.window.n.outside",
    paper="kan",
    title="Control of kan.window.n: the same runs at ε = 0.1 (κ 10×, outside the window): "
          "private/non-private population risk vs n",
    variable="n",
    quick_grid=_GRID[:3],
    full_grid=_GRID,
    full_only="24 seeds × 4 sizes of paired runs up to n = 8000 cost ≈ 200 CPU-s, far above the "
              "3 CPU-s quick-grid allowance; full grid: ratio n^−0.090 [−0.128, −0.055], the "
              "flat share REJECTED",
    fixed=_OUTSIDE,
    seeds=24,   # at 8 the CI (±0.057) straddled the competitor's edge (INCONCLUSIVE)
    run=_run_window,
    metric="noise_ratio",
    bound_values=_values,
    problem=_PROBLEM,
    algorithm=_ALGORITHM.replace("ε = 1", "ε = 0.1") + "; T and B of the ε = 1 schedule",
    description="Outside the window at every point (width_hi_ratio ≈ 74 → 9): the noise's share "
                "of the risk must not be the O(1), n-flat share the window guarantees.",
    checks=(
        Check("kan:cor5.3_noise_ratio", "reject", 0.05,
              "the in-window prediction: inside the window the noise terms over the optimisation "
              "term are O(1) and flat in n (slope ≈ 0 here); outside it the paired "
              "private/non-private ratio must not be flat.  0.05: the ratio is paired (same "
              "data, batches, init), 24 seeds (CI half-width ≈ 0.035)"),
    ),
))
