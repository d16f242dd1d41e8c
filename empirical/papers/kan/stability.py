"""Argument stability of Algorithm 1 (KAN paper, Theorem C.22): coupled runs on S and S^{(i)}
with the initialisation, batches and noise shared, so the noise cancels and the distance between
the two runs is the stability the theorem bounds."""
from __future__ import annotations

import numpy as np

from algorithms.kan.correlated_noise import dp_sgd_correlated
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import _common, _instance, width_hi_ratio

STAB_NEIGHBOURS = 3


def _run_stability(point: dict, rngs: list) -> dict:
    """Per seed: S and STAB_NEIGHBOURS neighbours S^{(i)} (example i replaced by a fresh draw),
    once with noise (κ, λ) and once without; same init, batches and Z within a seed."""
    inst = _instance(point)
    n, T, k = int(point["n"]), int(point["T"]), STAB_NEIGHBOURS
    Hs, ys = [], []
    for g in rngs:
        X, y = inst.sample(n + k, g)
        H = inst.model.features(X)
        for i in range(k + 1):
            Hi, yi = H[:n].copy(), y[:n].copy()
            if i:
                Hi[i - 1], yi[i - 1] = H[n + i - 1], y[n + i - 1]
            Hs.append(Hi)
            ys.append(yi)
    H2 = np.stack(Hs).reshape(len(rngs), k + 1, n, -1)
    y2 = np.stack(ys).reshape(len(rngs), k + 1, n)
    H2 = np.concatenate([H2, H2], axis=1).reshape(len(rngs) * 2 * (k + 1), n, -1)
    y2 = np.concatenate([y2, y2], axis=1).reshape(len(rngs) * 2 * (k + 1), n)
    kap, lam = point["noise_multiplier"], point["lam"]
    run = dp_sgd_correlated(inst.model, H2, y2, T=T, eta=point["eta"], B=n, C_clip=point["C_clip"],
                            lam=[lam] * (k + 1) + [0.0] * (k + 1),
                            noise_multiplier=[kap] * (k + 1) + [0.0] * (k + 1),
                            R_star=point["R_star"], rng=rngs, rows_per_seed=2 * (k + 1),
                            eval_every=max(1, T // 50))
    R = len(rngs)
    W = run.W.reshape(R, 2, k + 1, -1)
    dist = np.linalg.norm(W[:, :, 1:] - W[:, :, :1], axis=-1).mean(axis=2)     # (R, 2)
    avg = run.avg_train_loss.reshape(R, 2, k + 1)[:, :, 0]
    # b_{δ,m}: the largest ‖∇f_W(x)‖ met, measured at the start and end of the noisy S run
    bmax = []
    for r in range(R):
        for Wc in (inst.model.W0, run.W[r * 2 * (k + 1)]):
            a = inst.model.factors(Wc[None], H2[r * 2 * (k + 1)])
            bmax.append(np.max(np.linalg.norm(a[0], axis=1) * np.linalg.norm(H2[0], axis=1)))
    b = float(max(bmax))
    return {"stab_distance": dist[:, 0], "stab_distance_nonprivate": dist[:, 1],
            "avg_loss": avg[:, 0], "avg_loss_nonprivate": avg[:, 1], "b_grad": np.full(R, b),
            "gamma0": np.full(R, inst.gamma0), "lam": np.full(R, lam),
            "noise_multiplier": np.full(R, kap), "projection_active": run.projection_active.reshape(R, -1)[:, 0],
            "width_hi_ratio": np.full(R, width_hi_ratio(
                {"B": n, "eta": point["eta"], "noise_multiplier": kap, "gamma": inst.gamma0,
                 "d": inst.d, "T": T, "lam": lam, "m": inst.model.m})),
            **_common(point, run, R)}


def _run_stability_ratio(point: dict, rngs: list) -> dict:
    """Metric: the coupled distance divided by the run's own Σ-loss and gradient scale,
    E(1/k)Σ_i‖W_T − W_T^{(i)}‖ / (b_{δ,m}·avg L_S), so that C.22 in these units is
    2eηT/n + 2R_*δ/(b·avg L_S) (bound evaluated with avg_loss = b_grad = 1; δ = 1e-9 makes the
    second term negligible, < 1e-6 of the first)."""
    out = _run_stability(point, rngs)
    out["stab_ratio"] = out["stab_distance"] / (out["b_grad"] * out["avg_loss"])
    out["stab_ratio_nonprivate"] = out["stab_distance_nonprivate"] / (
        out["b_grad"] * out["avg_loss_nonprivate"])
    return out


def _stab_values(point: dict) -> dict:
    return {"R": point["R_star"], "T": point["T"], "avg_loss": 1.0, "b_grad": 1.0,
            "delta": point["delta"], "eta": point["eta"], "n": point["n"]}


STABILITY_N = register(Experiment(
    id="kan.stability.n",
    paper="kan",
    title="Coupled runs on S and S^(i) (shared init, batches, noise): argument stability vs n "
          "(Theorem C.22), with correlated noise κ = 5, λ = 0.5",
    variable="n",
    quick_grid=(50, 100, 200, 400),
    full_grid=(50, 100, 200, 400, 800, 1600),
    fixed={"m": 16, "d": 5, "p": 6, "margin_quantile": 0.9, "T": 100, "eta": 1.0, "C_clip": 1.0,
           "noise_multiplier": 5.0, "lam": 0.5, "R_star": 50.0, "delta": 1e-9},
    seeds=6,
    run=_run_stability_ratio,
    metric="stab_ratio",
    bound_values=_stab_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1); S^(i) replaces example i by a fresh draw",
    algorithm="dp_sgd_correlated, full batch, 2×(1 + 3) coupled rows per seed (with and without noise)",
    description="Width (constants, polylogs 1): m·γ₀⁴ = 0.077, below m ≳ γ⁻⁴; m/m_hi = 2.8 → "
                "0.003, "
                "inside Theorem 4.1's upper end from n = 100 (rows width_m_gamma4, width_hi_ratio).",
    checks=(
        Check("kan:thmC.22", "one-sided", 0.35,
              "C.22 is an upper bound with explicit constants (2e, b_{δ,m}): the normalised "
              "distance may fall faster than 1/n but not slower; 0.35: the distance depends on "
              "which example is replaced, so 6 seeds × 3 replaced indices give a bootstrap CI "
              "half-width ≈ 0.3 (the level band below is the sharper test)",
              level=(1e-3, 1.0),
              level_source="theorem", level_reason="explicit constants: observed/bound ≤ 1 is the theorem itself (b is "
                           "the largest ‖∇f‖ measured at W₀ and W_T, a proxy for b_{δ,m}); the "
                           "lower end only excludes a degenerate zero distance", use_asymptotic=False, history='the band reached the asymptotic exponent (A up to +0.35, 1.35 above the local slope −1): narrowed to the local slope alone'),
    ),
))
