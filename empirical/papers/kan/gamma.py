"""KAN paper (Wang et al.), the margin γ: App. D.3's full-batch DP-GD rate √d/(γ³nε) (Section
5.2, 'Comparison') against Wang et al.'s √d/(γ⁴nε), the paper's stated improvement.

Each rate holds at its own width: the paper's at m ≍ γ⁻⁴ (the γ⁻³ is γ⁻¹ from A_van's tuned
noise term times √m = γ⁻²), Wang et al.'s at m ≍ γ⁻⁶.  The sweep therefore runs the paper's
recipe as printed at each γ: m = ⌈γ⁻⁴⌉, B = n, λ = 0, T = n, η = min{1, ε/(γ√(md))}, κ from the
tight replace-one calibration at (ε, δ = γ/n), on NTK-teacher data whose margin is exactly γ.
Both exponents are read off the same population risks.  The control runs the same schedule
without noise (κ = 0) on the same instance at each γ, with training sets drawn independently of
the private run's (a run's seeds follow its experiment id, so the two experiments draw different
samples of the same distribution): at m = γ⁻⁴ the schedule's η ∝ γ makes the noise-free rate
1/(γ²ηT) a γ⁻³ too, so the control shows what the schedule alone gives.
"""
from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from algorithms.kan.correlated_noise import calibrate, dp_sgd_correlated
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.lam import calibration_routes
from empirical.papers.kan.problems import (NTKTeacher, make_instance, privacy_columns,
                                           sample_rows)

#: Candidates drawn to estimate an instance's acceptance at margin γ, and the least acceptance
#: accepted (rejection sampling draws ≈ n/acceptance candidates).
_REF = 5000
MIN_ACCEPTANCE = 0.01


@lru_cache(maxsize=16)
def instance_at_margin(m: int, d: int, p: int, gamma: float, seeds: int = 32) -> NTKTeacher:
    """The teacher of the first initialisation seed whose tangent scores reach margin γ with
    acceptance ≥ :data:`MIN_ACCEPTANCE` (a deterministic search; the score scale varies with the
    initialisation), with its guaranteed margin set to γ exactly."""
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    for seed in range(seeds):
        inst = make_instance(m, d, p, 0.5, seed)
        ref = np.abs(inst.score(inst._candidates(np.random.default_rng([seed, m, d, p, 11]), _REF)))
        acc = float(np.mean(ref >= gamma))
        if acc >= MIN_ACCEPTANCE:
            return dataclasses.replace(inst, gamma0=float(gamma), acceptance=acc)
    raise ValueError(f"gamma={gamma} is above every margin with acceptance ≥ {MIN_ACCEPTANCE} "
                     f"over {seeds} initialisations at m={m}, d={d}")


def width_for(gamma: float) -> int:
    """The paper's width m = ⌈γ⁻⁴⌉ (constant and polylog 1)."""
    return math.ceil(gamma ** -4 - 1e-9)


#: Held-out draws per γ: rejection at acceptance ≈ 1% makes each draw cost ≈ 100 candidates, so
#: the held-out sample is the evaluation subsample's size (the loss's standard error ≈ 0.02).
N_HELD_OUT = 500


@lru_cache(maxsize=8)
def _test_set(m: int, d: int, p: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    inst = instance_at_margin(m, d, p, gamma)
    X, y = inst.sample(N_HELD_OUT, np.random.default_rng([m, d, p, 99]))
    return inst.model.features(X), y


def gamma_schedule(n: int, gamma: float, epsilon: float, d: int) -> dict:
    """App. D.3's full-batch DP-GD choices at margin γ: m = ⌈γ⁻⁴⌉, B = T = n,
    η = min{1, ε/(γ√(md))}, δ = γ/n."""
    m = width_for(gamma)
    return {"m": m, "B": n, "T": n, "eta": min(1.0, epsilon / (gamma * math.sqrt(m * d))),
            "delta": gamma / n}


def _run_gamma(point: dict, rngs: list, private: bool = True) -> dict:
    g, n, d, p = float(point["gamma"]), int(point["n"]), int(point["d"]), int(point["p"])
    sch = gamma_schedule(n, g, point["epsilon"], d)
    inst = instance_at_margin(sch["m"], d, p, g)
    H, y = sample_rows(inst, n, rngs)
    Ht, yt = _test_set(sch["m"], d, p, g)
    R = len(rngs)
    meter = NoiseMeter(R)
    priv = (calibrate(point["epsilon"], sch["delta"], lam=0.0, T=sch["T"], n=n, B=n,
                      sampler="fresh", calibration="tight", tight_relation="replace-one")
            if private else None)
    run = dp_sgd_correlated(inst.model, H, y, T=sch["T"], eta=sch["eta"], B=n,
                            C_clip=point["C_clip"], lam=0.0,
                            noise_multiplier=priv.noise_multiplier if private else 0.0,
                            R_star=math.inf, rng=rngs, H_test=Ht, y_test=yt,
                            eval_every=max(1, sch["T"] // 8), eval_subsample=500,
                            observe=correlated_hook(meter, np.zeros(R)) if private else None)
    out = {"pop_risk": run.avg_test_loss, "opt_risk": run.avg_train_loss,
           "gamma0": np.full(R, g), "m": np.full(R, float(sch["m"])),
           "width_m_gamma4": np.full(R, sch["m"] * g ** 4),
           "instance_acceptance": np.full(R, inst.acceptance),
           "eta": np.full(R, sch["eta"]), "T": np.full(R, float(sch["T"])),
           "B": np.full(R, float(n)), "lam": np.zeros(R), "clip_fraction": run.clip_fraction}
    if not private:
        return {**out, "noise_multiplier": np.zeros(R)}
    meter.claim("correlated", point["C_clip"] * priv.noise_multiplier / n)
    return {**out, **meter.columns(), **privacy_columns(priv, R),
            # the calibration's second route: the truncation argument recomputed (B = n: the
            # accountant's only route, so the two must agree)
            **calibration_routes(priv, "tight", 0.0, sch["T"], n, n, "fresh",
                                 float(point["epsilon"]), sch["delta"], R)}


def _run_gamma_control(point: dict, rngs: list) -> dict:
    return _run_gamma(point, rngs, private=False)


def _gamma_values(point: dict) -> dict:
    g = float(point["gamma"])
    sch = gamma_schedule(int(point["n"]), g, point["epsilon"], int(point["d"]))
    return {"gamma": g, "n": point["n"], "d": point["d"], "epsilon": point["epsilon"],
            "T": sch["T"], "eta": sch["eta"]}


_GAMMA_FIXED = {"n": 100, "d": 2, "p": 6, "epsilon": 0.5, "C_clip": 1.0}
_GAMMA_QUICK = (0.3, 0.4, 0.5)
_GAMMA_FULL = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
_WIDTH = ("Width: m = ⌈γ⁻⁴⌉ at every γ, so m·γ⁴ ≥ 1 (row width_m_gamma4): inside the condition "
          "m ≍ γ⁻⁴ at constant 1 with its polylog(n/δ) dropped.")
_TWO_SIDED = ("two-sided: both rates are upper bounds, and any risk flatter in γ than γ⁻³ "
              "satisfies both, so only the exponent the risk actually follows can decide between "
              "them; a flatter slope is recorded as looseness of the claim, a steeper one as a "
              "violation.  0.5: 4 seeds of a population risk over a 1.7× range of γ (CI "
              "half-width ≈ 0.3 on the quick grid) and one power of γ between the two readings")

_WIDE = ("0.5 is half the one power of γ that separates the two readings: a slipped power of γ "
         "(in η, in m or in the data's margin) moves the slope by ≥ 1 and fails it")

GAMMA_FULLBATCH = register(Experiment(
    id="kan.gamma.fullbatch_dpgd",
    paper="kan",
    title="Margin γ: full-batch DP-GD at App. D.3's choices (m = ⌈γ⁻⁴⌉, B = T = n, "
          "η = min{1, ε/(γ√(md))}), population risk vs γ: γ⁻³ (paper) against γ⁻⁴ (Wang et al.)",
    variable="gamma",
    quick_grid=_GAMMA_QUICK,
    full_grid=_GAMMA_FULL,
    fixed=_GAMMA_FIXED,
    seeds=4,
    run=_run_gamma,
    metric="pop_risk",
    bound_values=_gamma_values,
    problem="NTK teacher with margin exactly γ (G1) at width ⌈γ⁻⁴⌉; held-out sample of 500",
    algorithm="dp_sgd_correlated, λ = 0, B = n (full batch), κ tight (replace-one) at "
              "(ε, δ = γ/n)",
    description="The paper's claimed improvement over Wang et al. is one power of γ in the "
                "privacy term.  " + _WIDTH + "  The privacy term √d/(γ³nε) is ≈ 2.8/γ times "
                "the non-private 1/(γ²n) at ε = 1/2, d = 2; the noise-free control "
                "kan.gamma.fullbatch_dpgd.nonprivate shows what the schedule alone gives.",
    checks=(
        Check("kan:fullbatch_dpgd", "two-sided", 0.5, _TWO_SIDED,
              wide_reason=_WIDE, use_asymptotic=False, expect="finding", finding_on="slope",
              note="KAN-E40: the risk is flat to rising in γ (slope ≈ +0.3) on γ ∈ [0.3, 0.5] at "
                   "n = 100, as is the noise-free control's: neither γ⁻³ nor γ⁻⁴ describes it, "
                   "so the data cannot prefer the paper's exponent to Wang et al.'s",
              level=(0.3, 80.0), level_source="theorem",
              level_reason="≲ with constant 1: a factor 3 below for the hidden constant, and up "
                           "to the polylog(n/δ) the rate drops (log(n/δ)·log(1/δ) ≈ 75 at "
                           "n = 100, δ = γ/n)"),
        Check("kan:wang_dpgd", "reject", 0.5,
              "Wang et al.'s γ⁻⁴ (the competitor the paper improves on), on the same data with "
              "the same tolerance"),
    ),
))

GAMMA_CONTROL = register(Experiment(
    id="kan.gamma.fullbatch_dpgd.nonprivate",
    paper="kan",
    title="Control of the γ sweep: the same schedule and data without noise (κ = 0)",
    variable="gamma",
    quick_grid=_GAMMA_QUICK,
    full_grid=_GAMMA_FULL,
    fixed=_GAMMA_FIXED,
    seeds=3,
    run=_run_gamma_control,
    metric="pop_risk",
    bound_values=_gamma_values,
    private=False,
    problem="as kan.gamma.fullbatch_dpgd",
    algorithm="as kan.gamma.fullbatch_dpgd with κ = 0 (same instance and schedule; its own "
              "training sets, drawn from its own seeds)",
    description="Non-circular control: the schedule (m, η) depends on γ, so part of a γ-slope "
                "could come from the schedule alone.  Without noise, App. E's full-batch rate "
                "1/(γ²ηT) at this η applies instead.  " + _WIDTH,
    checks=(
        Check("kan:fullbatch_gd_opt", "two-sided", 0.5,
              "App. E's noise-free rate 1/(γ²ηT) at the schedule's η and T (γ⁻³ too: η ∝ γ at "
              "m = γ⁻⁴, so the paper's exponent is the schedule's, and the noise-free run is "
              "where it must show first): " + _TWO_SIDED,
              wide_reason=_WIDE, use_asymptotic=False, expect="finding", finding_on="slope",
              note="KAN-E40: slope ≈ +0.4 against −3: the flat γ-dependence is the noise-free "
                   "schedule's already",
              level=(0.3, 80.0), level_source="theorem",
              level_reason="as for kan.gamma.fullbatch_dpgd: a factor 3 below for the hidden "
                           "constant, the dropped polylog(n/δ) above"),
        Check("kan:wang_gd", "reject", 0.5,
              "Wang et al.'s non-private γ⁻⁴ (1/(γ⁴n)), on the same data; same tolerance"),
    ),
))
