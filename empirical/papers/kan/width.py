"""KAN paper (Wang et al.), Theorem 4.1's width window γ⁻⁴ ≲ m ≲ B²/(η²κ²γ²d)·min{1,
1/(T((1−λ)² + λ²η))}: the noise drift and the projection's activity as the width m grows.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from algorithms.kan.correlated_noise import dp_sgd_correlated
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import _common, _instance, sample_rows


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
            "width_hi_ratio": np.full(R, point["m"] / ends["m_hi"]),
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
