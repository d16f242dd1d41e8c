"""KL paper, Theorem 4 on real features: adaptive noisy GD
(Algorithm 3) on realizable p-th-power regression whose design rows are the (standardised,
unit-ball) features of scikit-learn's ``diabetes``, labels from a planted w* = 0.3·1/√d, against
n by subsampling (the first n rows of one fixed random permutation: nested data sets).

The same problem class as the synthetic ``kl.regr.n.*`` (``PowerRegression``, constants from the
domain ‖a‖ ≤ 1, γ from λ_min(Σ̂) by Jensen), so the checks are those of the KL paper's
experiments: Theorem 4's d-free term two-sided (at d = 10 it is the smaller term), its other term
rejected, the full bound one-sided; predictions from ``bounds/`` at each subsample's own κ, γ, L0,
L1, F0.  The level band of the two-sided check is a band of the synthetic instance (calibrated on
its judged runs; the synthetic checks now use held-out bands, empirical/papers/kl/calibration.json),
so the check asks whether the synthetic level carries over to real features.

Privacy: at ρ = 1 Theorem 4's bound exceeds F0 at every n ≤ 442 (vacuous; the run stops at the
noise floor within 0–4 steps), so the rate can only be seen at a very large ρ (1e8 here, i.e.
ε ≈ 1e8 at δ = 1e-5: no meaningful privacy).  Stated plainly: on data sets of this size the
theorem says nothing at a useful ρ, and this experiment tests the *rate* claim, not privacy.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from functools import lru_cache

import numpy as np

import bounds
from algorithms.kl.adaptive import adaptive_noisy_gd
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kl import problems as kl_problems
from empirical.papers.kl.problems import PowerRegression, adaptive_hook
from algorithms.noise_meter import NoiseMeter
from empirical.papers.real.data import PAPER, key_seed, load, standardize_unit_ball
from empirical.store.calibration import calibrations

__all__ = ["problem", "real_kl_values", "run_real_kl", "EXPERIMENTS"]

_DATASETS = {0: "diabetes", 1: "wine"}

#: The synthetic KL instances' level bands, fit on their held-out seeds (the KL paper's
#: calibration.json; docs/methodology.md, "Level bands").
_SYNTH_HELD_OUT = calibrations(kl_problems.__file__)


def _held(synth: str, bound: str, kind: str, eid: str) -> dict:
    """Check (bound, kind) of real experiment ``eid`` with the band of the synthetic ``synth``."""
    r = dataclasses.replace(_SYNTH_HELD_OUT[(synth, bound, kind)], experiment=eid)
    return dict(level=r.band, level_source="calibration", calibration=r,
                level_reason=f"the band of the synthetic instance {synth} (same problem class and "
                             f"constants, a_i uniform in the ball of R^4): does the level carry "
                             f"over to real features?  There: {r.describe()}")


def whiten_unit_ball(X: np.ndarray) -> np.ndarray:
    """Rows rotated onto the principal axes and scaled to unit variance on each (whitened),
    divided by √d, projected onto the unit ball: the same features, condition number ≈ 1."""
    Xc = np.asarray(X, dtype=float) - np.mean(X, axis=0)
    ev, V = np.linalg.eigh(np.cov(Xc.T))
    Z = Xc @ V / np.sqrt(ev) / math.sqrt(X.shape[1])
    return Z / np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]


@lru_cache(maxsize=64)
def _rows(dataset: int, whiten: bool = False) -> np.ndarray:
    X, _ = load(_DATASETS[dataset])
    Z = whiten_unit_ball(X) if whiten else standardize_unit_ball(X)[0]
    return Z[key_seed(f"real.kl.{_DATASETS[dataset]}").permutation(len(Z))]


@lru_cache(maxsize=64)
def problem(dataset: int, n: int, p: float, whiten: bool = False) -> PowerRegression:
    """Realizable p-th-power regression on the first n rows (fixed permutation) of a data set
    (standardised, or whitened: :func:`whiten_unit_ball`)."""
    Z = _rows(dataset, whiten)
    if not 2 <= n <= len(Z):
        raise ValueError(f"n must be in [2, {len(Z)}] for {_DATASETS[dataset]}, got {n}")
    d = Z.shape[1]
    return PowerRegression(Z[:n], np.full(d, 0.3 / math.sqrt(d)), p, B=1.0)


def _problem(point: dict) -> PowerRegression:
    return problem(int(point["dataset"]), int(round(point["n"])), float(point["p"]),
                   bool(point.get("whiten", 0)))


def real_kl_values(point: dict) -> dict:
    """The KL bounds' symbols at this subsample (κ, γ, L0, L1 of the instance; F0 the start's
    exact excess, which is what the algorithm is given)."""
    prob = _problem(point)
    F0 = float(prob.excess(prob.start())[0])
    return {"n": float(prob.n), "d": float(prob.d), "rho": point["rho"], "beta": point["beta"],
            "kappa": prob.kappa, "gamma": prob.gamma, "L0": prob.L0, "L1": prob.L1, "F0": F0}


def _vacuous(point: dict, bound_value: float) -> str | None:
    vals = real_kl_values(point)
    thm4 = bounds.get("kl:thm4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if thm4.conditions and not thm4.applies(**vals):
            return "Theorem 4's condition L0²log(n√ρ/β)/(L1 n) ≤ √ρ fails"
    if bound_value >= vals["F0"]:
        return f"bound {bound_value:.3g} ≥ F0 = {vals['F0']:.3g} (vacuous: w0 already meets it)"
    return None


def run_real_kl(point: dict, rngs: list) -> dict:
    """Algorithm 3 from the same start as the synthetic experiments; exact excess per seed."""
    prob = _problem(point)
    w0 = prob.start()
    R = len(rngs)
    meter = NoiseMeter(R)
    res = adaptive_noisy_gd(prob, rho=point["rho"], w0=w0, L0=prob.L0, L1=prob.L1,
                            beta=point["beta"], rng=rngs,
                            observe=adaptive_hook(meter, prob, point["rho"]))
    priv = res.privacy if isinstance(res.privacy, list) else [res.privacy] * R
    return {"excess": prob.excess(res.w), **meter.columns(),
            "rho_spent": np.array([q.rho for q in priv], dtype=float),
            "rho_guarantee": np.array([q.guarantee_rho for q in priv], dtype=float),
            "rho_target": np.full(R, float(point["rho"])),
            "steps": np.asarray(res.info["T"], dtype=float).reshape(-1) * np.ones(R),
            "F0": np.full(R, float(prob.excess(w0)[0])),
            "gamma": np.full(R, prob.gamma),
            "in_kl_region": prob.in_kl_region(res.w).astype(float)}


_FLOOR_WHY = ("two-sided, as for the synthetic kl.regr.n.*: at d = 10 and n√ρ ≥ 5e5 the d-free "
              "term is the smaller one and the run stops at the noise floor of N_t; 0.1 covers the "
              "seed noise of the random stopping time (CI half-width 0.09 with 16 seeds; 0.10 with "
              "48 on the whitened twin, whose stops vary more) and the bend of γ between "
              "subsamples is in the local slope")
_FULL_WHY = "one-sided: the full three-term bound is only claimed as an upper bound; 0.1 as above"
#: Level bands of the synthetic regression instances, as calibrated on their judged runs (their
#: held-out bands in empirical/papers/kl/calibration.json differ: 0.0175–0.248 and 0.111–0.295):
#: the question is whether they carry over to real features.
_SYNTH_BAND = {2.0: ((0.0267, 0.219), "kl.regr.n.k2"), 4.0: ((0.11, 0.303), "kl.regr.n.k4_3")}


def _checks(p: float, expect: dict[str, str], eid: str) -> tuple[Check, ...]:
    band, synth = _SYNTH_BAND[p]
    # What each finding is a finding of (docs/extending.md): the k2 floor check's synthetic
    # level does not carry over (slope and level both deviate); every other finding is of the
    # slope, its level band enforced.
    on = {"floor": expect.get("floor_on", "slope"), "full": "slope"}
    return (
        Check("kl:thm4_floor", "two-sided", 0.1, _FLOOR_WHY, expect=expect["floor"],
              finding_on=on["floor"] if expect["floor"] == "finding" else None,
              **_held(synth, "kl:thm4_floor", "two-sided", eid)),
        Check("kl:thm4_main", "reject", 0.1,
              "the other term of Theorem 4 (exponent 2κ/(4−κ) in n): the data must rule it out; "
              "0.1 as for the floor check"),
        Check("kl:thm4", "one-sided", 0.1, _FULL_WHY, expect=expect["full"], level=(1e-4, 1.0),
              finding_on=on["full"] if expect["full"] == "finding" else None,
              level_source="theorem", level_reason="the upper bound with its hidden constant taken as 1 (observed/bound "
                           "must not exceed 1); the lower edge 1e-4 is a regression guard (a "
                           "run that stopped improving would sit higher, a broken excess lower)"),
    )


def _declare(tag: str, p: float, expect: dict[str, str], whiten: int = 0,
             seeds: int = 16) -> Experiment:
    feats = "whitened diabetes features (condition ≈ 1)" if whiten else "diabetes features"
    return register(Experiment(
        id=f"real.kl.regr.n.{tag}", paper=PAPER,
        title=f"Adaptive noisy GD, realizable |⟨a,w⟩−y|^{p:g} regression on {feats} "
              "(d = 10), planted w*, ρ = 1e8: excess vs n by subsampling (Theorem 4)",
        variable="n", quick_grid=(55.0, 110.0, 220.0, 442.0),
        full_grid=(40.0, 63.0, 100.0, 160.0, 250.0, 442.0),
        # "whiten" only where set: a point's seeds derive from its parameters
        fixed={"dataset": 0, "p": p, "rho": 1e8, "beta": 0.1, **({"whiten": 1} if whiten else {})},
        seeds=seeds, run=run_real_kl,
        metric="excess", bound_values=real_kl_values, checks=_checks(p, expect, f"real.kl.regr.n.{tag}"),
        vacuous=_vacuous, problem="PowerRegression on diabetes features (first n rows)",
        algorithm="algorithms.kl.condition.adaptive_noisy_gd (Algorithm 3)",
        description=__doc__.split("\n\n")[-1]))


# Expectations are what the runs showed (docs/papers/real.md).
# p = 4 (κ = 4/3) is not registered: at ρ = 1e8 its bound exceeds F0 at every n ≤ 442
# (vacuous), and at ρ = 1e12 a run takes 1000-2500 steps per seed (too slow for a quick grid).
# The whitened twin isolates the cause of the finding: the same rows with condition number ≈ 1
# (whitening uses the whole data set's covariance, public preprocessing like the scaling).
EXPERIMENTS = {"k2": _declare("k2", 2.0, {"floor": "finding", "floor_on": "slope+level",
                                          "full": "finding"}),
               # 48 seeds: its stopping times vary more (CI half-width 0.14 at 16 seeds)
               "k2_white": _declare("k2_white", 2.0, {"floor": "finding", "full": "hold"}, 1,
                                    seeds=48)}
