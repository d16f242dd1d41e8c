"""KAN paper: rate experiments beyond the λ sweeps —
the non-private ηT collapse and batch-size effect (Theorem E.1 / App. E) and
Corollary 5.3 (correlated noise, B = ρn, κ from Theorem 5.1/F.12).  Problem and run
machinery are those of :mod:`empirical.papers.kan.experiments` (the NTK teacher with margin γ₀).

Every check states whether it is one- or two-sided and why; each experiment has a competing rate
that the same data must reject.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated, f12_conditions
from empirical.core.experiment import Check, Experiment, register
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.papers.kan.experiments import calibration_routes
from empirical.papers.kan.problems import (PLAIN_GD, _common, _instance, held_out,
                                           nonprivate_columns, privacy_columns, sample_rows)

__all__ = ["cor53_schedule", "ETAT_COLLAPSE", "BATCH_B", "COR53_N", "COR53_RATIO_N", "WIDTH_M",
           "TUNED_ETA_EPS", "TUNED_ETA_D", "TUNED_ETA_M", "COR53_EPS"]



# =============================================================================================
# E2: the ηT collapse of full-batch GD (App. E: opt ≲ 1/(γ²ηT))
# =============================================================================================
def _run_etaT(point: dict, rngs: list) -> dict:
    """Full-batch GD at step η for T = P/η iterates (P = ``etaT``, η a power of 2 so T is exact):
    the averaged training risk along ηT = P."""
    inst = _instance(point)
    n, eta = int(point["n"]), float(point["eta"])
    T = int(round(point["etaT"] / eta))
    H, y = sample_rows(inst, n, rngs)
    run = dp_sgd_correlated(inst.model, H, y, T=T, eta=eta, B=n, rng=rngs,
                            eval_every=max(1, T // 50), **PLAIN_GD)
    R = len(rngs)
    return {"avg_train_loss": run.avg_train_loss, "last_train_loss": run.train_curve[:, -1],
            "used_etaT": np.full(R, eta * T), "theory_etaT": np.full(R, float(point["etaT"])),
            "max_drift": run.max_drift, **nonprivate_columns(point, run, inst, R)}


def _etaT_values(point: dict) -> dict:
    eta = float(point["eta"])
    return {"eta": eta, "T": int(round(point["etaT"] / eta)), "etaT": float(point["etaT"]),
            "gamma": _instance(point).gamma0}


ETAT_COLLAPSE = register(Experiment(
    id="kan.nonpriv.etaT",
    paper="kan",
    title="Full-batch GD along ηT = 200 (η = 1/4 … 4, T = 200/η): the ηT collapse (App. E)",
    variable="eta",
    quick_grid=(0.25, 0.5, 1.0, 2.0, 4.0),
    full_grid=(0.125, 0.25, 0.5, 1.0, 2.0, 4.0),
    fixed={"n": 64, "m": 32, "d": 5, "p": 6, "margin_quantile": 0.95, "etaT": 200.0},
    seeds=8,
    run=_run_etaT,
    metric="avg_train_loss",
    bound_values=_etaT_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1), same data at every η (paired seeds)",
    algorithm="dp_sgd_correlated with κ = 0, B = n, no clipping, no projection (full-batch GD)",
    description="The rate 1/(γ²ηT) depends on η and T only through ηT.  Along ηT = const the "
                "bound is flat in η, and so must the risk be if GD tracks its gradient flow at "
                "time ηT (η below the divergence threshold).  The competitor is App. E as "
                "printed (η ≍ 1 absorbed, a function of T alone), which would make the risk "
                "grow like η here.",
    checks=(
        Check("kan:fullbatch_gd_etaT", "two-sided", 0.1,
              "two-sided because the claim here is an equality, not only a bound: GD with step η "
              "follows the gradient flow to time ηT up to O(η·curvature) per unit time, so at "
              "equal ηT the averaged risk is the same (slope 0 in η).  0.1 allows the "
              "discretisation drift (on fixed data the risk moves by < 1% over η ∈ [1/4, 4]) and "
              "8 seeds whose data sets differ between grid points (CI half-width ≈ 0.05); the "
              "competitor's slope +1 is 10 tolerances away",
              level=(1.0, 10.0),
              level_source="calibration", level_reason="observed/(1/(γ₀²ηT)) is the hidden constant of the 1/(γ²ηT) term at "
                           "this ηT: measured 4.6–4.9; it is the pre-asymptotic factor KAN-E27 "
                           "records (3–13 along T at η = 2).  ≥ 1: the risk cannot beat the "
                           "bound's shape at constant 1 by more than the averaging start at log 2 "
                           "allows; ≤ 10: a constant beyond KAN-E27's range would mean the level is "
                           "not set by ηT"),
        Check("kan:fullbatch_gd_T_only", "reject", 0.1,
              "competitor: App. E as printed, 1/(γ²T) with η ≍ 1 absorbed — a function of T "
              "alone, slope +1 in η along ηT = const; the same data must rule it out"),
    ),
))


# =============================================================================================
# E3: batch size at fixed (η, T) (Theorem E.1's mini-batch terms 1/(γ√(BT)) + η/B)
# =============================================================================================
#: SGD batch schedules per seed: the effect of one schedule has either sign and can be ≈ 0, so
#: each seed averages its magnitude over this many independent schedules on the same data.
BATCH_SCHEDULES = 4


def _run_batch(point: dict, rngs: list) -> dict:
    """SGD with batches of B (fresh, without replacement) and full-batch GD on the same data,
    same η and T: the batch effect |avg L_S(SGD) − avg L_S(GD)|, averaged per seed over
    ``BATCH_SCHEDULES`` independent batch schedules (generators spawned from the seed's)."""
    inst = _instance(point)
    n, B, T, eta = int(point["n"]), int(point["B"]), int(point["T"]), float(point["eta"])
    k = BATCH_SCHEDULES
    H, y = sample_rows(inst, n, rngs)
    ev = max(1, T // 20)
    gd = dp_sgd_correlated(inst.model, H, y, T=T, eta=eta, B=n, rng=rngs, eval_every=ev,
                           **PLAIN_GD)
    kids = [c for g in rngs for c in g.spawn(k)]
    sgd = dp_sgd_correlated(inst.model, np.repeat(H, k, axis=0), np.repeat(y, k, axis=0), T=T,
                            eta=eta, B=B, rng=kids, eval_every=ev, **PLAIN_GD)
    R = len(rngs)
    diff = sgd.avg_train_loss.reshape(R, k) - gd.avg_train_loss[:, None]
    return {"batch_effect": np.abs(diff).mean(axis=1), "signed_batch_effect": diff.mean(axis=1),
            "avg_train_loss": sgd.avg_train_loss.reshape(R, k).mean(axis=1),
            "avg_train_loss_fullbatch": gd.avg_train_loss,
            # one entry per seed: every k-th of the seed × schedule rows
            **{key: v[::k] for key, v in nonprivate_columns(point, sgd, inst, R * k).items()}}


def _batch_values(point: dict) -> dict:
    return {"B": point["B"], "T": point["T"], "eta": point["eta"],
            "gamma": _instance(point).gamma0}


BATCH_B = register(Experiment(
    id="kan.nonpriv.B",
    paper="kan",
    title="SGD (κ = 0) at fixed η = 1, T = 200, n = 128: batch effect |L(B) − L(n)| vs B "
          "(Thm E.1's mini-batch terms)",
    variable="B",
    quick_grid=(1, 2, 4, 8, 16),
    full_grid=(1, 2, 4, 8, 16, 32),
    fixed={"n": 128, "m": 32, "d": 5, "p": 6, "margin_quantile": 0.95, "T": 200, "eta": 1.0},
    seeds=6,
    run=_run_batch,
    metric="batch_effect",
    bound_values=_batch_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1); SGD and GD on the same data (paired)",
    algorithm="dp_sgd_correlated with κ = 0, fresh batches of B (and B = n), no clipping/projection",
    description="Theorem E.1 charges 1/(γ√(BT)) + η/B for batches of B.  The signed effect "
                "averages to ≈ 0 (both signs occur: on separable data the gradient noise "
                "self-bounds by the loss), so the metric is its magnitude per seed.  B ≤ n/8 so "
                "that sampling without replacement is close to the bound's i.i.d. reading.",
    checks=(
        Check("kan:A_non_minibatch", "one-sided", 0.2,
              "one-sided: Theorem E.1 is an upper bound, so the batch effect may fall faster "
              "than 1/(γ√(BT)) + η/B (slope −0.6 … −1 here) but not slower.  0.2: 6 seeds, each the mean "
              "magnitude over 4 batch schedules of an effect whose sign varies (CI half-width "
              "≈ 0.18 on a 16× range of B)",
              level=(1e-4, 1.0),
              level_source="theorem", level_reason="observed/bound ≤ 1 is the theorem's term with constant 1; measured "
                           "≈ 1e-3, far below (the mini-batch terms are loose on separable data, "
                           "where SGD's gradient noise barely moves the average).  1e-4 only excludes an effect that vanishes "
                           "(a batch sampler that ignored B)", use_asymptotic=False,
              history="the band reached the asymptotic exponent (A up to −0.30, 0.54 above the "
                      "local slope): narrowed to the local slope alone"),
        Check("kan:fullbatch_gd_opt", "reject", 0.2,
              "competitor: no batch effect at all (the full-batch rate 1/(γ²ηT), flat in B); "
              "the data must show the effect falling with B"),
    ),
))


# =============================================================================================
# Corollary 5.3: λ > 0, B = ρn, T ≍ min{√n/γ, nεγ²/√d}, κ from Theorem 5.1/F.12
# =============================================================================================
def cor53_schedule(n: int, gamma: float, epsilon: float, d: int, m: int, sample_frac: float,
                   T_const: float) -> dict:
    """Corollary 5.3's choices: B = ⌊ρn⌋, T = ⌈c_T·min{√n/γ, nεγ²/√d}⌉ (≍ hides c_T; c_T = 2
    makes F.12's rT ≥ 3 ln(2/δ) hold from n ≈ 600 at γ₀ ≈ 0.32), δ = min{1/(n√m), γ/n} (the
    corollary's own condition), η = 1."""
    return {"B": int(sample_frac * n),
            "T": math.ceil(T_const * min(math.sqrt(n) / gamma, n * epsilon * gamma ** 2 / math.sqrt(d))),
            "delta": min(1.0 / (n * math.sqrt(m)), gamma / n), "eta": 1.0}


def _run_cor53(point: dict, rngs: list, paired: bool = False) -> dict:
    """Per seed the run with κ from F.12 (λ = ``lam``); with ``paired`` a second row with the same
    data, batches and Z and κ = 0 (the non-private run at the same (η, T, B)).  The private row
    is the same either way (its generator, batches and noise do not depend on the second row)."""
    inst = _instance(point)
    n, d, m = int(point["n"]), inst.d, inst.model.m
    sch = cor53_schedule(n, inst.gamma0, point["epsilon"], d, m, point["sample_frac"],
                         point["T_const"])
    why = f12_conditions(sch["T"], sch["B"], n, point["epsilon"], sch["delta"])
    if why:   # the grid is chosen inside F.12's conditions; outside them κ would not be certified
        raise ValueError(f"kan.cor53: n={n} is outside Theorem F.12's conditions: {why}")
    lam = float(point["lam"])
    priv = calibrate(point["epsilon"], sch["delta"], lam=lam, T=sch["T"], n=n, B=sch["B"],
                     sampler="fresh", calibration="thm5.1")
    kr = 2 if paired else 1          # rows per seed
    H, y = sample_rows(inst, n, rngs)
    H, y = np.repeat(H, kr, axis=0), np.repeat(y, kr, axis=0)
    Ht, yt = held_out(inst, point)
    R = len(rngs)
    meter = NoiseMeter(R)       # the private row (first of each seed's kr) measured
    run = dp_sgd_correlated(inst.model, H, y, T=sch["T"], eta=sch["eta"], B=sch["B"],
                            C_clip=point["C_clip"], lam=lam,
                            noise_multiplier=[priv.noise_multiplier, 0.0][:kr], R_star=math.inf,
                            rng=rngs, rows_per_seed=kr, H_test=Ht, y_test=yt,
                            eval_every=max(1, sch["T"] // 10), eval_subsample=1000,
                            observe=correlated_hook(meter, np.full(R * kr, lam), kr, measured=0))
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / sch["B"])
    pop = run.avg_test_loss.reshape(R, kr)
    opt = run.avg_train_loss.reshape(R, kr)
    rT = sch["B"] * sch["T"] / n
    pair = ({"pop_risk_nonprivate": pop[:, 1], "private_over_nonprivate": pop[:, 0] / pop[:, 1],
             "opt_risk_nonprivate": opt[:, 1]} if paired else {})
    return {"pop_risk": pop[:, 0], "opt_risk": opt[:, 0], **pair,
            "max_drift": run.max_drift.reshape(R, kr)[:, 0],
            "clip_fraction": run.clip_fraction.reshape(R, kr)[:, 0],
            "gamma0": np.full(R, inst.gamma0), "lam": np.full(R, lam),
            # F.12's participation condition, as used (it holds on every kept grid point)
            "f12_rT": np.full(R, rT), "f12_rT_needed": np.full(R, 3 * math.log(2 / sch["delta"])),
            # the width the corollary assumes (m ≍ γ⁻⁶) beside the width used
            "width_cor53": np.full(R, inst.gamma0 ** -6), **meter.columns(),
            **calibration_routes(priv, "thm5.1", lam, sch["T"], n, sch["B"], "fresh",
                                 float(point["epsilon"]), sch["delta"], R),
            **privacy_columns(priv, R), **_common(point, run, R)}


def _run_cor53_paired(point: dict, rngs: list) -> dict:
    """:func:`_run_cor53` with the non-private row (the ratio experiment's metric needs it)."""
    return _run_cor53(point, rngs, paired=True)


def _cor53_values(point: dict) -> dict:
    inst = _instance(point)
    sch = cor53_schedule(int(point["n"]), inst.gamma0, point["epsilon"], inst.d, inst.model.m,
                         point["sample_frac"], point["T_const"])
    return {"n": point["n"], "d": inst.d, "epsilon": point["epsilon"], "gamma": inst.gamma0,
            "delta": sch["delta"], "m": inst.model.m, "sample_frac": point["sample_frac"]}


_COR53_FIXED = {"m": 32, "d": 5, "p": 6, "margin_quantile": 0.95, "epsilon": 1.0, "lam": 0.5,
                "sample_frac": 0.5, "T_const": 2.0, "C_clip": 0.5}
_COR53_DESC = ("Feasible regime: γ₀ ≈ 0.32 (margin quantile 0.95), ρ = 1/2, c_T = 2 and the "
               "corollary's own δ = min{1/(n√m), γ/n} put every grid point inside F.12's "
               "rT ≥ 3 ln(2/δ) (rows: f12_rT, f12_rT_needed); n < n_c = d/(γ⁶ε²) ≈ 4500, the "
               "privacy branch (T = 2nεγ²/√d).  Not inside the corollary's width: m = 32 "
               "against m ≍ γ⁻⁶ ≈ 900 (rows: width_cor53).")

COR53_N = register(Experiment(
    id="kan.cor53.n",
    paper="kan",
    title="Cor. 5.3 (λ = 0.5, B = n/2, T = 2·min{√n/γ, nεγ²/√d}, κ from F.12 at ε = 1): "
          "population risk vs n",
    variable="n",
    quick_grid=(600, 1200, 2400),
    full_grid=(600, 1200, 2400, 4800, 9600),
    fixed=_COR53_FIXED,
    seeds=20,   # at 4 the CI (±0.057) straddled the edge of A (INCONCLUSIVE)
    run=_run_cor53,
    metric="pop_risk",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, fresh batches B = n/2, κ from Theorem F.12 (zero-out)",
    description=_COR53_DESC,
    checks=(
        Check("kan:cor5.3", "one-sided", 0.15,
              "one-sided: an upper bound (polylog dropped); the averaged population risk may "
              "fall faster.  0.15 covers 20 seeds (CI half-width ≈ 0.02; at 4 seeds, ≈ 0.06, the 99% interval a finding needs straddled A) and the iterate "
              "average's start at log 2",
              expect="finding",
              note="KAN-E30: slope ≈ −0.3 against the corollary's local −0.83 on n ∈ [600, 2400]; "
                   "m γ₀⁶ = 0.034, so the corollary's width m ≍ γ⁻⁶ fails by 30× (as KAN-E26 for "
                   "Cor 5.5); the private/non-private ratio stays bounded (kan.cor53.ratio.n)"),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in n, ruled out by the same data"),
    ),
))

COR53_RATIO_N = register(Experiment(
    id="kan.cor53.ratio.n",
    paper="kan",
    title="Cor. 5.3's regime: private/non-private population risk at equal (η, T, B) vs n",
    variable="n",
    quick_grid=(600, 1200, 2400),
    full_grid=(600, 1200, 2400, 4800, 9600),
    fixed=_COR53_FIXED,
    seeds=4,
    run=_run_cor53_paired,
    metric="private_over_nonprivate",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, B = n/2, κ from F.12 and κ = 0 (paired: same data, "
              "batches, Z)",
    description=_COR53_DESC + "  The corollary's content in its privacy branch: the noise is "
                              "subdominant, so the private risk stays within a constant factor "
                              "of the non-private run's.",
    checks=(
        Check("kan:cor5.3_noise_ratio", "one-sided", 0.1,
              "one-sided: the noise terms over the optimisation term are O(1) in n under the "
              "corollary's choices (bound slope ≈ 0), so the ratio may fall but not grow.  0.1: "
              "the ratio is paired (same data, batches, Z), its seed spread is ≈ 5% (CI "
              "half-width ≈ 0.08 on 4 seeds over a 4× range of n)",
              level=(0.6, 1.0),
              level_source="theorem", level_reason="observed/bound ≤ 1 is the ratio bound with constant 1 (≈ 1.38 here); "
                           "the private risk is not below the non-private one on average, so "
                           "observed ≥ 1/1.38 = 0.72, less seed noise (0.6)"),
        Check("kan:wang_dpgd", "reject", 0.1,
              "competitor: a ratio falling like the private term √d/(γ⁴nε) alone (slope −1), "
              "i.e. noise that dominates at small n and vanishes; the data must rule it out"),
    ),
))


_COR53_EPS_FIXED = {k: v for k, v in _COR53_FIXED.items() if k != "epsilon"} | {"n": 2400}

COR53_EPS = register(Experiment(
    id="kan.cor53.eps",
    paper="kan",
    title="Cor. 5.3 (λ = 0.5, B = n/2, T = 2·min{√n/γ, nεγ²/√d}, κ from F.12, n = 2400): "
          "population risk vs ε",
    variable="epsilon",
    quick_grid=(0.4, 0.63, 1.0),
    full_grid=(0.35, 0.4, 0.5, 0.63, 0.8, 1.0),
    fixed=_COR53_EPS_FIXED,
    seeds=4,
    run=_run_cor53,
    metric="pop_risk",
    bound_values=_cor53_values,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated, λ = 0.5, fresh batches B = n/2, κ from Theorem F.12 (zero-out)",
    description="F.12 needs ε ≤ 1 and rT ≥ 3 ln(2/δ); with T = 2nεγ²/√d the second admits only "
                "ε ≳ 0.33 at n = 2400 (rows f12_rT, f12_rT_needed), so the ε range is at most 3× "
                "and both grids stay inside it (a point outside raises).  " + _COR53_DESC,
    checks=(
        Check("kan:cor5.3", "one-sided", 0.15,
              "one-sided: an upper bound (polylog dropped) whose ε-dependence is the private term "
              "√d/(γ⁴nε) beside 1/(γ√n); the risk may fall faster in ε but not slower.  0.15: 4 "
              "seeds (CI half-width ≈ 0.05 on a 2.5–2.9× range of ε) and the iterate average's "
              "start at log 2",
              level=(1e-3, 3.0),
              level_source="calibration", level_reason="one-sided (an upper bound with its constants and polylog(n/δ) "
                           "hidden): the lower end only excludes a vanishing risk.  The upper end "
                           "is a calibration (docs/methodology.md, 'Level bands'): observed/bound at "
                           "constant 1 is 1.38–2.02 on the quick grid and 1.28–2.02 on the full "
                           "grid (rising with ε: the risk flattens while the bound's ε-term "
                           "vanishes), × 1.5 → 3.0; so the corollary at constant 1 is exceeded "
                           "≈ 2× on this instance (allowed by ≲), and a risk 1.5× above the "
                           "measured at ε = 1 fails", use_asymptotic=False,
              expect="finding", finding_on="slope",
              history='the band reached the ε → ∞ exponent 0 (A up to +0.15, 0.83 above the local slope −0.68), so a risk 0.42 flatter than the bound passed: narrowed to the local slope alone'),
        Check("kan:wang_dpgd", "reject", 0.15,
              "prior work (Wang et al. 2026, √d/(γ⁴nε)): slope −1 in ε, ruled out by the same data"),
    ),
))


# =============================================================================================
# Theorem 4.1's width window: noise drift and projection activity as m grows
# =============================================================================================
def _window_ends(point: dict, gamma: float, R_star: float) -> dict:
    """The window's ends at this point from ``bounds`` (constants 1): m_lo = γ⁻⁴ and
    m_hi = B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)² + λ²η))}; and m_drift, the width at which the
    exact expected noise drift (kan:noise_drift) reaches the projection radius R_*."""
    from bounds.rates.kan.correlated_noise import M_HI, M_LO, NOISE_DRIFT

    n = int(point["n"])
    vals = {"B": n, "eta": point["eta"], "noise_multiplier": point["noise_multiplier"],
            "gamma": gamma, "d": point["d"], "T": point["T"], "lam": point["lam"],
            "C_clip": point["C_clip"], "p": point["p"]}
    subs = {NOISE_DRIFT.symbol(k): v for k, v in vals.items() if k != "gamma"}
    drift_per_m = float(NOISE_DRIFT.expr.subs({**subs, NOISE_DRIFT.symbol("m"): 1}))
    names = {s.name: s for s in M_HI.free_symbols | M_LO.free_symbols}
    hi = float(M_HI.subs({names[k]: v for k, v in vals.items() if k in names}))
    return {"m_lo": gamma ** -4, "m_hi": hi, "m_drift": R_star ** 2 / drift_per_m}


def _run_width(point: dict, rngs: list) -> dict:
    """Per seed (same data, batches, Z): the noisy run unprojected (W̃ of the proof) and
    projected onto B(W₀, R_*), and the noise-free run.  Metric: the noise drift
    ‖W̃_T^κ − W_T^0‖², whose expectation is kan:noise_drift while gradients move little."""
    inst = _instance(point)
    n, T, kap, lam = int(point["n"]), int(point["T"]), point["noise_multiplier"], point["lam"]
    delta = point["delta"]
    R_star = (math.log(T) + math.sqrt(math.log(n / delta))) / inst.gamma0
    H, y = sample_rows(inst, n, rngs)
    H2, y2 = np.repeat(H, 2, axis=0), np.repeat(y, 2, axis=0)
    kw = dict(T=T, eta=point["eta"], B=n, C_clip=point["C_clip"], lam=lam, rng=rngs,
              eval_every=max(1, T // 10))
    # the projected run must see the same noise stream: give it copies of the fresh generators
    proj = dp_sgd_correlated(inst.model, H, y, noise_multiplier=kap, R_star=R_star,
                             **{**kw, "rng": copy.deepcopy(rngs)})
    free = dp_sgd_correlated(inst.model, H2, y2, noise_multiplier=[kap, 0.0], R_star=math.inf,
                             rows_per_seed=2, **kw)
    R = len(rngs)
    W = free.W.reshape(R, 2, -1)
    L = free.avg_train_loss.reshape(R, 2)
    ends = _window_ends(point, inst.gamma0, R_star)
    return {"noise_drift_sq": np.sum((W[:, 0] - W[:, 1]) ** 2, axis=1),
            "max_drift_unprojected": free.max_drift.reshape(R, 2)[:, 0],
            "projection_active": proj.projection_active, "projection_radius": np.full(R, R_star),
            "max_drift": proj.max_drift, "limit_drift": np.full(R, R_star),
            "excess_unprojected": L[:, 0] - L[:, 1],
            "excess_projected": proj.avg_train_loss - L[:, 1],
            "gamma0": np.full(R, inst.gamma0), "lam": np.full(R, lam),
            "noise_multiplier": np.full(R, kap),
            **{k: np.full(R, v) for k, v in ends.items()}, **_common(point, free, R)}


def _width_values(point: dict) -> dict:
    return {"B": point["n"], "eta": point["eta"], "noise_multiplier": point["noise_multiplier"],
            "C_clip": point["C_clip"], "d": point["d"], "p": point["p"], "T": point["T"],
            "lam": point["lam"], "m": point["m"]}


WIDTH_M = register(Experiment(
    id="kan.width.m",
    paper="kan",
    title="Width window of Thm 4.1 (full batch, κ = 16, λ = 0.5, T = 100): noise drift and "
          "projection activity vs m",
    variable="m",
    quick_grid=(8, 16, 32, 64, 128),
    full_grid=(8, 16, 32, 64, 128, 256),
    fixed={"n": 100, "d": 5, "p": 6, "margin_quantile": 0.95, "T": 100, "eta": 1.0,
           "C_clip": 1.0, "noise_multiplier": 16.0, "lam": 0.5, "delta": 1e-3},
    seeds=8,   # at 4 the CI (±0.076) straddled the edge of A (INCONCLUSIVE)
    run=_run_width,
    metric="noise_drift_sq",
    bound_values=_width_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1) at each width (a new initialisation per m)",
    algorithm="dp_sgd_correlated, B = n, κ fixed; unprojected (W̃), projected onto "
              "B(W₀, R_*) with R_* = (log T + √log(n/δ))/γ₀, and κ = 0 (paired)",
    description="Theorem 4.1 needs γ⁻⁴ ≲ m ≲ B²/(η²κ²γ²d)·min{1, 1/(T((1−λ)²+λ²η))}.  At "
                "constant 1 the window is empty here (m_lo ≈ 95 > m_hi ≈ 1.5, rows m_lo, m_hi), "
                "and m ≥ γ⁻⁴ rules out the suite's affordable widths anyway: the sweep measures "
                "what happens across it.  The upper end is where the noise drift reaches R_*; "
                "the exact drift identity puts that at m_drift ≈ 30 (rows), and the projection "
                "starts binding there.",
    checks=(
        Check("kan:noise_drift", "two-sided", 0.1,
              "two-sided: E‖ηcΣ(Z_s − λZ_{s−1})‖² = η²c²mdp(1 + (1−λ)²(T−2)) is exact (not a "
              "bound), and the difference of the paired noisy and noise-free runs equals it up "
              "to the gradient feedback, small in the lazy regime; slope 1 in m.  0.1: 4 "
              "seeds of a χ²-like sum with mdp = 240 degrees of freedom at m = 8 (relative sd "
              "≈ 0.1 per seed, CI half-width ≈ 0.08 over a 16× range of m)",
              level=(0.8, 1.25),
              level_source="instance", level_reason="observed/expected drift is 1 for the pure noise sum; the gradient "
                           "feedback (noise moves W, so the gradients differ between the paired "
                           "runs) may shrink or grow it by a few percent; 0.8–1.25 allows that "
                           "and 8-seed χ² spread, and rejects a noise std off by 12%"),
        Check("kan:noise_drift_mean_field", "reject", 0.1,
              "competitor: a noise std scaled by 1/√m (the mean-field convention), which makes "
              "the drift flat in m; the data must rule it out"),
    ),
))


# =============================================================================================
# Tuned η against ε (App. D.3, 'Recovery of full-batch DP-GD'): where does √d/(nε) come from?
# =============================================================================================
#: Step sizes searched per seed (powers of 2 up to the divergence threshold ≈ 8 found by
#: kan.nonpriv.etaT's probe; 1/4 was never the best on the grid's ε, so it is not searched).
TUNED_ETAS = (0.5, 1.0, 2.0, 4.0, 8.0)


def _run_tuned_eta(point: dict, rngs: list, etas: tuple[float, ...] = TUNED_ETAS) -> dict:
    """Full-batch DP-GD (λ = 0, B = n) with κ from the tight calibration at (ε, δ) (an exact
    Gaussian mechanism composed over the T − 1 steps), run at every η of ``TUNED_ETAS`` on the
    same data and noise (copies of the generators); the metric is each seed's best averaged
    training risk over η (an oracle choice: a utility curve, not a private release)."""
    inst = _instance(point)
    n, T = int(point["n"]), int(point["T"])
    priv = calibrate(point["epsilon"], point["delta"], lam=0.0, T=T, n=n, B=n, sampler="cyclic",
                     calibration="tight")
    H, y = sample_rows(inst, n, rngs)
    risks = np.stack([
        dp_sgd_correlated(inst.model, H, y, T=T, eta=eta, B=n, C_clip=point["C_clip"], lam=0.0,
                          noise_multiplier=priv.noise_multiplier, R_star=math.inf,
                          rng=copy.deepcopy(rngs), eval_every=max(1, T // 10)).avg_train_loss
        for eta in etas], axis=1)                                             # (R, len(etas))
    R = len(rngs)
    best = risks.argmin(axis=1)
    return {"tuned_risk": risks.min(axis=1), "tuned_eta": np.asarray(etas)[best],
            "tuned_eta_at_grid_edge": (best == len(etas) - 1).astype(float),
            "tuned_eta_at_grid_bottom": (best == 0).astype(float),
            "risk_eta1": risks[:, etas.index(1.0)], "gamma0": np.full(R, inst.gamma0),
            "lam": np.zeros(R), **privacy_columns(priv, R),
            "T": np.full(R, float(T)), "B": np.full(R, float(n))}


def _tuned_values(point: dict) -> dict:
    inst = _instance(point)
    return {"n": point["n"], "T": point["T"], "gamma": inst.gamma0, "m": inst.model.m,
            "d": inst.d, "delta": point["delta"], "epsilon": point["epsilon"]}


TUNED_ETA_EPS = register(Experiment(
    id="kan.tuned_eta.eps",
    paper="kan",
    title="Full-batch DP-GD (λ = 0, n = 1000, T = 50), η tuned per seed over 1/2 … 8: best "
          "risk vs ε (App. D.3)",
    variable="epsilon",
    quick_grid=(0.125, 0.25, 0.5, 1.0),
    full_grid=(0.0625, 0.125, 0.25, 0.5, 1.0, 2.0),
    fixed={"n": 1000, "m": 16, "d": 5, "p": 6, "margin_quantile": 0.95, "T": 50,
           "delta": 1e-5, "C_clip": 1.0},
    seeds=4,
    run=_run_tuned_eta,
    metric="tuned_risk",
    bound_values=_tuned_values,
    # Each run is (ε, δ)-DP (rows carry the privacy columns), but choosing η on the training
    # data is not accounted: the tuned risk is a utility curve, not a private release.
    private=False,
    problem="NTK teacher with margin γ₀ (G1)",
    algorithm="dp_sgd_correlated, λ = 0, B = n, κ from calibrate('tight') (exact Gaussian), "
              "η ∈ {1/2, …, 8} on the same data and noise",
    description="The bounds' √d/(nε) rates come from tuning η against the quadratic noise term "
                "ηmdκ²/B²: the tuned noise term is ≈ 2√(md)κ/(γn√T) ∝ 1/ε.  Measured: the "
                "best risk barely moves with ε, so on this instance the ε-dependence the "
                "bound attributes to the noise is not what limits the tuned run.",
    checks=(
        Check("kan:tuned_eta_noise", "one-sided", 0.1,
              "one-sided: an upper bound (A_van's η-terms minimised over η, the part that "
              "depends on ε); the tuned risk may fall faster in ε but not slower.  0.1: 4 seeds of a per-seed minimum over a shared η "
              "grid (CI half-width ≈ 0.03); the grid's factor-2 spacing moves the minimum by a "
              "few percent at most (the risk is flat near η*)",
              expect="finding",
              note="KAN-E34: the tuned risk falls as ε^(−0.21) against −1 on ε ∈ [1/8, 1]; the "
                   "tuned η reaches the grid's top (8) at ε = 1 and the risk approaches the "
                   "noise-free level: the √(md)/(γnε) term is not what limits the tuned run"),
        Check("kan:fullbatch_gd_opt", "reject", 0.1,
              "competitor: no ε-dependence at all (the non-private rate, flat in ε); the same "
              "data must show the tuned risk still falling with ε",
              values=lambda pt: {**_tuned_values(pt), "eta": max(TUNED_ETAS)}),
    ),
))


# =============================================================================================
# Tuned η against d and m (App. D.3): the √(md) of the tuned noise term
# =============================================================================================
#: Shared settings of the d and m sweeps: ε = 1/8, where kan.tuned_eta.eps found the noise to
#: matter most (best η 1–2, inside the searched grid), and the eps sweep's n, T, δ, clip.
_TUNED_DM = {"n": 1000, "p": 6, "margin_quantile": 0.95, "T": 50, "delta": 1e-5, "C_clip": 1.0,
             "epsilon": 0.125}
#: Step sizes of the d and m sweeps: at ε = 1/8 the best η is 1–2 at (m, d) = (16, 5) and falls
#: like 1/√(md) (η* ∝ B/(κγ√(Tmd))), so the grid reaches down to 1/8 and stops at 4.
TUNED_ETAS_DM = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0)


def _run_tuned_eta_dm(point: dict, rngs: list) -> dict:
    """:func:`_run_tuned_eta` over :data:`TUNED_ETAS_DM`."""
    return _run_tuned_eta(point, rngs, TUNED_ETAS_DM)


_TUNED_DM_NOTE = ("E12 expected observed slopes below +1/2 (a looseness finding, not a failure); "
                  "γ₀ changes with the instance at each grid value and enters the bound's local "
                  "slope through its values")


#: Upper ends of the d and m sweeps' level bands: 1.5 × the largest observed/bound of their
#: grids (both at the grid's first point, quick = full there: the same seeds), see the reason.
_TUNED_DM_LEVEL_HI = {"d": 0.86, "m": 0.64}


def _tuned_dm_checks(var: str, tol: float, why: str) -> tuple[Check, ...]:
    hi = _TUNED_DM_LEVEL_HI[var]
    return (
        Check("kan:tuned_eta_noise", "one-sided", tol,
              f"one-sided: an upper bound (A_van's η-terms minimised over η) growing like "
              f"√({var}) at the instance's γ₀; the tuned risk may grow more slowly in {var} but "
              f"not faster.  {why}",
              level=(1e-3, hi),
              level_source="calibration", level_reason=f"one-sided (an upper bound; logs of A_van and constants dropped): the "
                           f"lower end only excludes a vanishing risk.  The upper end is a "
                           f"calibration (docs/methodology.md, 'Level bands'): observed/bound is "
                           f"largest at the smallest {var} (d: 0.57 → 0.11 quick, → 0.074 at "
                           f"d = 32; m: 0.43 → 0.17 quick, → 0.05 at m = 128: the risk stays "
                           f"flat while the bound grows, KAN-E36), × 1.5 → {hi}.  The bound is "
                           f"only the noise term, so ≤ 1 is not implied (the noise-free terms "
                           f"are in the risk); a tuned risk growing like the bound from the first "
                           f"point, or 1.5× above the measured there, fails"),
        Check("kan:fixed_eta_noise", "reject", tol,
              f"competitor: the quadratic noise term ηmdκ²/n² at a fixed η (slope +1 in {var}: "
              f"what an untuned step pays); the tuned risk must grow clearly more slowly",
              values=lambda pt: {**_tuned_values(pt), "eta": 1.0}),
    )


def _tuned_dm_experiment(var: str, what: str, quick: tuple, full: tuple, fixed: dict,
                         growth: str) -> Experiment:
    """The E12 sweep of the tuned-η risk against ``var`` (d or m) at ε = 1/8."""
    other = {"d": "m = 16", "m": "d = 5"}[var]
    return register(Experiment(
        id=f"kan.tuned_eta.{var}",
        paper="kan",
        title=f"Full-batch DP-GD (λ = 0, n = 1000, T = 50, ε = 1/8, {other}), η tuned per seed "
              f"over 1/8 … 4: best risk vs {what} {var} (App. D.3)",
        variable=var,
        quick_grid=quick,
        full_grid=full,
        fixed={**_TUNED_DM, **fixed},
        seeds=4,
        run=_run_tuned_eta_dm,
        metric="tuned_risk",
        bound_values=_tuned_values,
        private=False,
        problem=f"NTK teacher with margin γ₀ (G1), a new initialisation and teacher per {var}",
        algorithm="dp_sgd_correlated, λ = 0, B = n, κ from calibrate('tight') (exact Gaussian), "
                  "η ∈ {1/8, …, 4} on the same data and noise",
        description=growth + "  " + _TUNED_DM_NOTE + ".",
        checks=_tuned_dm_checks(var, 0.15,
                                f"0.15: 4 seeds of a per-seed minimum over a shared η grid on a "
                                f"4× range of {var} (CI half-width ≈ 0.05–0.1: each {var} is its "
                                f"own instance)"),
    ))


TUNED_ETA_D = _tuned_dm_experiment(
    "d", "input dimension", (2, 4, 8), (2, 4, 8, 16, 32), {"m": 16},
    "The corollaries' √d comes from tuning η against ηmdκ²/B²: the tuned noise term is "
    "≈ 2√(md)κ/(γn√T).")

TUNED_ETA_M = _tuned_dm_experiment(
    "m", "width", (8, 16, 32), (8, 16, 32, 64, 128), {"d": 5},
    "The tuned noise term ≈ 2√(md)κ/(γn√T) grows like √m at fixed γ.")
