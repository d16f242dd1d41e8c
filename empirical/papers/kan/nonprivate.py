"""KAN paper (Wang et al.), Theorem E.1 and App. E (κ = 0): the non-private sweeps of
Algorithm 1: full-batch GD's optimisation risk in T and the ηT collapse, the batch-size effect at
fixed (η, T), and full-batch GD's population risk in n.

Every check states whether it is one- or two-sided and why; each experiment has a competing rate
that the same data must reject.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.kan.correlated_noise import dp_sgd_correlated
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import (PLAIN_GD, _instance, estimate_margin, held_out,
                                           nonprivate_columns, sample_rows)
from empirical.store.calibration import calibrations

#: Calibrated bands, fit on held-out seeds (calibration.json beside this module, recomputed by
#: python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str) -> dict:
    """The level-band fields of check (bound, kind) of experiment ``eid`` from its record."""
    return _HELD_OUT[(eid, bound, kind)].check_fields()


# =============================================================================================
# Non-private full-batch GD: optimisation risk ∝ 1/(γ²ηT) (Theorem E.1, App. E)
# =============================================================================================
def _run_nonprivate(point: dict, rngs: list) -> dict:
    inst = _instance(point)
    n, T = int(point["n"]), int(point["T"])
    H, y, X = sample_rows(inst, n, rngs, with_x=True)
    run = dp_sgd_correlated(inst.model, H, y, T=T, eta=point["eta"], B=n, rng=rngs,
                            eval_every=max(1, T // 50), **PLAIN_GD)
    R = len(rngs)
    # certified lower bound on this sample's margin (≥ γ₀ by construction)
    lo = np.array([estimate_margin(inst.model, X[r], y[r])[0] for r in range(R)])
    return {"avg_train_loss": run.avg_train_loss, "last_train_loss": run.train_curve[:, -1],
            "gamma_hat_lower": lo, "max_drift": run.max_drift, "clip_fraction": run.clip_fraction,
            **nonprivate_columns(point, run, inst, R)}


def _nonpriv_values(point: dict) -> dict:
    return {"T": point["T"], "eta": point["eta"], "gamma": _instance(point).gamma0,
            "B": point["n"]}


NONPRIV_T = register(Experiment(
    id="kan.nonpriv.T",
    paper="kan",
    title="Full-batch GD (Alg. 1, κ = 0, B = n): optimisation risk vs T (Thm E.1 / App. E)",
    variable="T",
    # quick grid stops at 800 (T = 1600 was a third of the sweep); the full grid keeps 1600–6400
    quick_grid=(100, 200, 400, 800),
    full_grid=(100, 200, 400, 800, 1600, 3200, 6400),
    fixed={"n": 100, "m": 64, "d": 5, "p": 6, "margin_quantile": 0.95, "eta": 2.0},
    seeds=4,
    run=_run_nonprivate,
    metric="avg_train_loss",
    bound_values=_nonpriv_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1)",
    algorithm="dp_sgd_correlated with κ = 0, B = n, no clipping, no projection (full-batch GD)",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.43 (row width_m_gamma4), below m ≳ "
                "γ⁻⁴; κ = 0 has no upper end.",
    checks=(
        Check("kan:A_non", "one-sided", 0.15,
              "Theorem E.1's A_non = 1/(γ²ηT) + 1/(γ√(BT)) + η/B at B = n (upper bound: the risk "
              "may fall faster); 0.15 covers 4 seeds (CI half-width ≈ 0.03) and the log T that "
              "averaging a 1/t curve adds",
              level=(0.3, 3.0),
              level_source="theorem", level_reason="≲ with constant 1 and γ = γ₀ (guaranteed): a factor 3 either way is "
                           "the hidden constant C_σ,b allowed before the level contradicts the "
                           "bound; the lower end flags a bound off by more than that", use_asymptotic=False, history='the band reached the asymptotic exponent 0 (A up to +0.15, 0.66 above the local slope): narrowed to the local slope alone'),
        Check("kan:fullbatch_gd_opt", "one-sided", 0.15,
              "App. E's full-batch rate 1/(γ²ηT) alone (the 1/(γ√(BT)) and η/B terms are "
              "mini-batch terms that vanish at B = n in the proof): slope −1; same tolerance",
              expect="finding",
              note="KAN-E27: pre-asymptotic on a 16× T range; observed ≈ −0.45 and the ratio to "
                   "1/(γ²ηT) grows from 3 to 13 (m γ₀⁴ = 0.43: the width condition holds only "
                   "up to a constant)"),
    ),
))


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
                "grow like η here."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.35 (row width_m_gamma4), below m "
                  "≳ γ⁻⁴; κ = 0 has no upper end.",
    checks=(
        Check("kan:fullbatch_gd_etaT", "two-sided", 0.1,
              "two-sided because the claim here is an equality, not only a bound: GD with step η "
              "follows the gradient flow to time ηT up to O(η·curvature) per unit time, so at "
              "equal ηT the averaged risk is the same (slope 0 in η).  0.1 allows the "
              "discretisation drift (on fixed data the risk moves by < 1% over η ∈ [1/4, 4]) and "
              "8 seeds whose data sets differ between grid points (CI half-width ≈ 0.05); the "
              "competitor's slope +1 is 10 tolerances away",
              **_held("kan.nonpriv.etaT", "kan:fullbatch_gd_etaT", "two-sided")),
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
                "that sampling without replacement is close to the bound's i.i.d. reading."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.35 (row width_m_gamma4), below m "
                  "≳ γ⁻⁴; κ = 0 has no upper end.",
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
# Non-private full-batch GD with T = ⌈n/γ²⌉: population risk vs n (App. E, 1/(γ²n))
# =============================================================================================
def _run_nonprivate_pop(point: dict, rngs: list) -> dict:
    inst = _instance(point)
    n = int(point["n"])
    T = math.ceil(n / inst.gamma0 ** 2)          # App. E: B = n, η ≍ 1, T ≍ n/γ²
    H, y = sample_rows(inst, n, rngs)
    Ht, yt = held_out(inst, point)
    run = dp_sgd_correlated(inst.model, H, y, T=T, eta=point["eta"], B=n, rng=rngs, H_test=Ht,
                            y_test=yt, eval_every=max(1, T // 20), **PLAIN_GD)
    return {"pop_risk": run.avg_test_loss, "opt_risk": run.avg_train_loss,
            "gen_gap": run.avg_test_loss - run.avg_train_loss,
            **nonprivate_columns(point, run, inst, len(rngs))}


def _nonpriv_pop_values(point: dict) -> dict:
    return {"n": point["n"], "gamma": _instance(point).gamma0, "delta": 0.1 / point["n"]}


NONPRIV_N = register(Experiment(
    id="kan.nonpriv.n",
    paper="kan",
    title="Full-batch GD (κ = 0, B = n, η = 1, T = ⌈n/γ₀²⌉): population risk vs n (App. E)",
    variable="n",
    # quick grid stops at 128: T = ⌈n/γ₀²⌉ makes a point cost ∝ n², and n = 256 was half of the
    # sweep; the finding (slope ≈ −0.2 against −1) is 5 tolerances from the bound on 32–128 too
    quick_grid=(32, 64, 128),
    full_grid=(32, 64, 128, 256, 512, 1024),
    fixed={"m": 16, "d": 5, "p": 6, "margin_quantile": 0.95, "eta": 1.0},
    seeds=4,
    run=_run_nonprivate_pop,
    metric="pop_risk",
    bound_values=_nonpriv_pop_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1); held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated with κ = 0, B = n, no clipping, no projection (full-batch GD)",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.125 (row width_m_gamma4), below m ≳ "
                "γ⁻⁴; κ = 0 has no upper end.",
    checks=(
        Check("kan:fullbatch_gd", "one-sided", 0.15,
              "App. E's 1/(γ²n) is an upper bound (T ≍ n/γ² makes opt ≲ 1/n and gen ≲ 1/(γ²n)); "
              "the averaged population risk may fall faster; 0.15 covers 4 seeds and the "
              "iterate average's start at log 2", expect="finding",
              note="KAN-E29: slope ≈ −0.2 against −1 on n ∈ [32, 256]; the generalisation gap is "
                   "< 0.04 throughout, so the averaged optimisation risk (pre-asymptotic, as in "
                   "KAN-E27) is what decays slowly"),
    ),
))
