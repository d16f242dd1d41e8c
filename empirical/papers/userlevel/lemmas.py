"""Lemma experiments for the user-level SCO paper (Lowy, Liu, Asi): Lemma 3.5/C.6 (variance of
Algorithm 2's outlier-removed minibatch gradient, against K and m) and Lemma 2.3/B.4 (distance
of independent SGD average iterates, against T).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.userlevel.alg1 import sgd_average_iterates
from algorithms.userlevel.alg3 import minibatch_gradients
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.userlevel.common import _QUAD_L, _QUAD_MU_NORM, PAPER, _int
from empirical.papers.userlevel.problems import LinearStream, QuadraticUsers

def _run_lem35(point: dict, rngs: list) -> dict:
    """E‖g − ∇F̃_i(x)‖² of Algorithm 2's minibatch gradient at a fixed x (Lemma 3.5)."""
    n_i, m, d, K = _int(point, "n_i"), _int(point, "m"), _int(point, "d"), _int(point, "K")
    draws = _int(point, "draws")
    cols: dict[str, list] = {}
    for g in rngs:
        data = QuadraticUsers(n_i, m, d, g)
        tau = data.L * math.sqrt(math.log(n_i * d * m) / m)      # rates-mode τ (c_τ = 1)
        x = np.zeros(d)                                            # fixed, data-independent
        full = data.user_mean_gradients(x, np.arange(n_i)).mean(axis=0)
        gs, kept = minibatch_gradients(data, x, np.arange(n_i), K, tau, g, draws)
        err = np.einsum("rd,rd->r", gs - full, gs - full)
        # exact WOR identity: E = (1/K)(n_i − K)/(n_i − 1) · (1/n_i)Σ‖q(Z) − q̄‖²
        q = data.user_mean_gradients(x, np.arange(n_i))
        spread = float(np.mean(np.sum((q - full) ** 2, axis=1)))
        row = {"variance": float(err.mean()), "kept_fraction": float(kept.mean()),
               "exact_variance": spread * (n_i - K) / ((n_i - 1) * K), "tau": tau}
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}


def _run_lem23(point: dict, rngs: list) -> dict:
    """‖x̃ − ỹ‖ for independent SGD runs on the linear stream (Lemma 2.3): RMS over pairs."""
    T, d, pairs = _int(point, "T"), _int(point, "d"), _int(point, "pairs")
    eta = float(point["eta"])
    cols: dict[str, list] = {}
    for g in rngs:
        data = LinearStream(2 * pairs, T, d, g)
        groups = np.arange(2 * pairs).reshape(2 * pairs, 1)       # one user of T items per chain
        X = sgd_average_iterates(data, groups, eta, np.zeros(d), g)
        dist = np.linalg.norm(X[:pairs] - X[pairs:], axis=1)
        row = {"rms_distance": float(np.sqrt(np.mean(dist**2))),
               "q99_distance": float(np.quantile(dist, 0.99)), "grad_evals": data.grad_evals}
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}


def _lem35_values(point: dict) -> dict:
    return {"n": point["n_i"], "m": point["m"], "d": point["d"], "K": point["K"], "L": _QUAD_L}


def _lem23_values(point: dict) -> dict:
    return {"eta": point["eta"], "L": _QUAD_MU_NORM + 1.0, "T": point["T"], "d": point["d"],
            "zeta": point["zeta"]}


# --- Lemmas 3.5 and 2.3 ----------------------------------------------------------------------
_LEM35_TOL = ("two-sided: on clean data outlier removal keeps every user (kept fraction 1 is "
              "recorded), and without-replacement sampling gives E‖g − ∇F̃‖² = (1/K)(n_i − K)/"
              "(n_i − 1)·tr Cov(q) exactly; the lemma's log(ndm) adds a slope of ≤ 0.08 in m, "
              "inside the band; 0.06 for 400-draw Monte Carlo and the (n_i − K) factor")


def _lem35_level_reason() -> str:
    return ("observed/bound = tr Cov(∇f)/(L² log(ndm))·(n_i − K)/(n_i − 1) with tr Cov = 1 for "
            "the quadratic: ≈ 1/(16 log(ndm)) ∈ [0.0035, 0.0065] on these grids; band "
            "[0.002, 0.01] allows Monte Carlo and the finite-population factor")


LEM35_K = register(Experiment(
    id="userlevel.lem35.K",
    paper=PAPER,
    title="Lemma 3.5: variance of Alg. 2's outlier-removed minibatch gradient vs K",
    variable="K",
    quick_grid=(8, 16, 32, 64, 128),
    full_grid=(4, 8, 16, 32, 64, 128, 256, 512),
    fixed={"n_i": 4096, "m": 64, "d": 10, "draws": 400},
    seeds=4,
    run=_run_lem35,
    metric="variance",
    bound_values=_lem35_values,
    problem="QuadraticUsers at fixed x = 0",
    algorithm="algorithms.userlevel.sco.minibatch_gradients (Alg. 2 lines 5-12)",
    private=False,
    checks=(
        Check("userlevel:lem3.5", "two-sided", 0.06, _LEM35_TOL, level=(0.002, 0.01),
              level_source="instance", level_reason=_lem35_level_reason()),
    ),
))

LEM35_M = register(Experiment(
    id="userlevel.lem35.m",
    paper=PAPER,
    title="Lemma 3.5: variance of Alg. 2's outlier-removed minibatch gradient vs m",
    variable="m",
    quick_grid=(4, 16, 64, 256, 1024),
    full_grid=(4, 16, 64, 256, 1024, 4096, 16384),
    fixed={"n_i": 4096, "K": 32, "d": 10, "draws": 400},
    seeds=4,
    run=_run_lem35,
    metric="variance",
    bound_values=_lem35_values,
    problem=LEM35_K.problem,
    algorithm=LEM35_K.algorithm,
    private=False,
    checks=(
        Check("userlevel:lem3.5", "two-sided", 0.06, _LEM35_TOL, level=(0.002, 0.01),
              level_source="instance", level_reason=_lem35_level_reason()),
        Check("userlevel:lem3.5_itemlevel", "reject", 0.1,
              "competitor: the variance bound without the 1/m of averaging (slope 0 in m)"),
    ),
))

LEM23_T = register(Experiment(
    id="userlevel.lem23.T",
    paper=PAPER,
    title="Lemma 2.3: distance between independent SGD average iterates vs T",
    variable="T",
    quick_grid=(64, 256, 1024, 4096),
    full_grid=(64, 256, 1024, 4096, 16384),
    fixed={"d": 10, "eta": 1e-2, "pairs": 64, "zeta": 0.01},
    seeds=4,
    run=_run_lem23,
    metric="rms_distance",
    bound_values=_lem23_values,
    problem="LinearStream: f = ⟨z, x⟩, z = μ0 + Rademacher/√d (no projection)",
    algorithm="algorithms.userlevel.sco.sgd_average_iterates (Alg. 1's SGD subroutine)",
    private=False,
    checks=(
        Check("userlevel:lem2.3", "two-sided", 0.05,
              "two-sided: on the linear loss the average iterates differ by a sum of "
              "independent noise terms with RMS η√(2T/3) exactly (no projection), so the "
              "lemma is tight up to its √log(dT/ζ); that log adds ≤ 0.05 to the local slope, "
              "inside the band; 0.05 for 64-pair Monte Carlo",
              level=(0.07, 0.3),
              level_source="instance", level_reason="theorem's bound with the instance's constants (a wide guard; the "
                           "exact constant is userlevel:lem2.3_instance's check): "
                           "observed/bound = √(2/3)/(L√log(dT/ζ)) with L = ‖μ0‖ + 1 = 2: "
                           "≈ 0.105–0.125 on this grid; [0.07, 0.3] allows 64-pair Monte Carlo "
                           "and fails if the SGD step or the averaging were off by 2×"),
        Check("userlevel:lem2.3_instance", "two-sided", 0.05,
              "two-sided: the instance's exact RMS η√((T+1)(2T+1)/(3T)) (local slope ≈ 0.5); "
              "0.05 for 64-pair Monte Carlo over a 64× T range (CI half-width ≈ 0.01)",
              level=(0.9, 1.1),
              level_source="instance", level_reason="instance's exact constant (bounds userlevel:lem2.3_instance, "
                           "derived on the linear stream): observed/bound = 1 in expectation; "
                           "the per-seed RMS over 64 pairs of d = 10 coordinates has relative "
                           "SE ≈ √(2/(64·10))/2 ≈ 0.028, ≈ 0.014 over 4 seeds, so ±10% is ≈ 7 "
                           "SE; the last iterate instead of the average (√3 = 1.73×) or a 2× "
                           "step is far outside"),
        Check("userlevel:lem2.3_naive", "reject", 0.1,
              "competitor: the triangle-inequality bound 2ηLT (slope 1 in T) that Lemma 2.3 "
              "improves on"),
    ),
))
