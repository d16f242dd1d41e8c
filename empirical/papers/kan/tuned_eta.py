"""KAN paper (Wang et al.), App. D.3 ('Recovery of full-batch DP-GD', Theorem D.14 at B = n):
full-batch DP-GD with a tuned step size against ε, d and m, the origin of the √(md)/(γnε) term.
"""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import _instance, privacy_columns, sample_rows, width_columns
from empirical.store.calibration import calibrations

#: Calibrated band ends, fit on held-out seeds (calibration.json beside this module, recomputed
#: by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str, lo: float, why: str) -> dict:
    """Level-band fields whose upper end is ``eid``'s held-out calibration and whose lower end
    ``lo`` is a design floor, not a calibration (``why``); the record states the combined band."""
    r = _HELD_OUT[(eid, bound, kind)]
    r = dataclasses.replace(r, band=(lo, r.band[1]))
    return dict(level=r.band, level_source="calibration", calibration=r,
                level_reason=f"lower end {lo:g}: {why}; upper end: {r.describe()}")


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
            "T": np.full(R, float(T)), "B": np.full(R, float(n)), **width_columns(inst, R)}


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
                "bound attributes to the noise is not what limits the tuned run."
                + "  Width (constants, polylogs 1): m·γ₀⁴ = 0.125 (row width_m_gamma4), below "
                  "m ≳ γ⁻⁴; λ = 0 has no upper end.",
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
                  "slope through its values.  Width (constants, polylogs 1): m·γ₀⁴ = 0.011–1.2 "
                  "(d sweep), 0.125–0.43 (m sweep), row width_m_gamma4; λ = 0 has no upper end")


#: Lower end of the d and m sweeps' level bands (the upper end is their held-out calibration).
#: The bound is only the noise term, so observed/bound ≤ 1 is not implied (the noise-free terms
#: are in the risk): the upper end is data, the lower end a floor.
_TUNED_DM_FLOOR = ("design floor (an upper bound with logs of A_van and constants dropped: it "
                   "only excludes a vanishing risk)")


def _tuned_dm_checks(var: str, tol: float, why: str) -> tuple[Check, ...]:
    return (
        Check("kan:tuned_eta_noise", "one-sided", tol,
              f"one-sided: an upper bound (A_van's η-terms minimised over η) growing like "
              f"√({var}) at the instance's γ₀; the tuned risk may grow more slowly in {var} but "
              f"not faster.  {why}",
              **_held(f"kan.tuned_eta.{var}", "kan:tuned_eta_noise", "one-sided", 1e-3,
                      _TUNED_DM_FLOOR)),
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
