"""The user-level SCO paper (Lowy, Liu, Asi) on real data, in miniature:
users formed from scikit-learn's ``digits`` rows, logistic regression for digit parity, excess
risk of Algorithm 3 (:func:`algorithms.userlevel.sco.accelerated_phased_erm`, rates mode)
against the number of items per user m and the number of users n, beside the item-level
baseline that treats a user's items as one record
(:func:`algorithms.userlevel.sco.item_level_baseline`), checked against
``userlevel:thm3.2`` (Theorem 3.2 / C.3) at the experiment's own values.

Problem.  All 1797 digits rows are the population: features standardised and put in the unit
ball (:func:`empirical.papers.real.data.standardize_unit_ball`), a bias coordinate appended and the row
divided by √2, so ‖a‖ ≤ 1; label y = digit mod 2; f(x; a, y) = log(1 + e^{a·x}) − y·a·x, convex,
L = 1-Lipschitz and β = 1/4-smooth; 𝒳 = ball of radius 4 (diameter R = 8).  F is the mean loss
over all rows, F* its minimum over 𝒳 (projected gradient descent to 1e-12,
:func:`population_optimum`).  Users: :func:`empirical.papers.real.data.assign_users` draws n·m rows
without replacement (deterministic in the seed index), so users are i.i.d. draws of m items from
the population up to the without-replacement correction.

Settings.  ε = 10 (the paper's largest admissible ε), δ = 1e-5 < 1/(nm), rates mode, c_T = 1;
c_K1 puts Algorithm 2's minibatch floor ⌈c_K1 log(1/δ)/ε⌉ at 40 users (AboveThreshold's margin
K/5 = 8 is five times its query noise scale 16/ε = 1.6).  Under the corrected sensitivity of the
outlier-removed mean (errata UL-E13/UL-E14) a phase runs privately only with ≳ 200 users per
minibatch at ε = 10, and phase 1 gets ≈ 21% of the users, so on 1797 rows Algorithm 3 runs only
for m ≤ 2 (n ≥ 898): the m- and n-sweeps at n = 200–440 users run the item-level baseline (the
algorithm refuses to run Algorithm 3 there; ``alg3_runnable`` = 0), and Algorithm 3 is compared
with the baseline on all rows at m = 1, 2 (``real.userlevel.vs_baseline``).

What is recorded per seed: ``excess_alg3``, ``excess_baseline``, ``excess_nonprivate`` (Algorithm
3's schedule without noise or halting: not private, the optimisation error alone),
``excess_zero`` (F(0) − F*: what a halted run outputs), ``halted``, ``alg3_runnable``, the noise
σ_1 of each method and the ε dp-accounting reports (``epsilon_baseline``,
``alg3_epsilon_guarantee``; the row's ``epsilon_guarantee`` is the larger).
"""
from __future__ import annotations

import copy
import importlib
import math
from functools import lru_cache

import numpy as np

from algorithms.userlevel.sco import UserData, accelerated_phased_erm, item_level_baseline
from empirical.core.checks import ComparisonExperiment, Contrast
from empirical.core.experiment import Check, Experiment, Summary, register, register_summary
from algorithms.noise_meter import NoiseMeter, user_level_hook
from empirical.papers.real.data import assign_users, load, standardize_unit_ball

__all__ = ["LogisticUsers", "population", "population_optimum", "population_loss",
           "run_userlevel", "USERLEVEL_M", "USERLEVEL_N", "USERLEVEL_VS_BASELINE"]

PAPER = "real"
RADIUS = 4.0
L_LIP, BETA = 1.0, 0.25


@lru_cache(maxsize=1)
def population() -> tuple[np.ndarray, np.ndarray]:
    """(A, y): every digits row in the unit ball with a bias coordinate, parity labels."""
    X, t = load("digits")
    Z, _ = standardize_unit_ball(X)
    A = np.hstack([Z, np.ones((len(Z), 1))]) / math.sqrt(2.0)
    A.setflags(write=False)
    y = (t.astype(int) % 2).astype(float)
    y.setflags(write=False)
    return A, y


def population_loss(x: np.ndarray) -> np.ndarray:
    """F(x) for x of shape (d,) or (k, d): mean logistic loss over all rows."""
    A, y = population()
    z = np.asarray(x, dtype=float) @ A.T
    return np.mean(np.logaddexp(0.0, z) - y * z, axis=-1)


def _project(x: np.ndarray) -> np.ndarray:
    nr = np.linalg.norm(x)
    return x if nr <= RADIUS else x * (RADIUS / nr)


@lru_cache(maxsize=1)
def population_optimum() -> tuple[float, np.ndarray]:
    """(F*, x*) over the ball: accelerated projected gradient descent with step 1/β_F, run until
    the objective moves by < 1e-13 (F is smooth with β_F ≤ 1/4·max‖a‖² ≤ 1/4)."""
    A, y = population()
    x = np.zeros(A.shape[1])
    v, f_old, t = x.copy(), math.inf, 1.0
    for _ in range(200000):
        z = A @ v
        g = A.T @ (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
        x_new = _project(v - g / BETA)
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        v = x_new + (t - 1) / t_new * (x_new - x)
        x, t = x_new, t_new
        f = float(population_loss(x))
        if abs(f_old - f) < 1e-13:
            break
        f_old = f
    return float(population_loss(x)), x


class LogisticUsers(UserData):
    """n users × m items (rows of :func:`population`), logistic loss on the ball of radius 4."""

    def __init__(self, rows: np.ndarray):
        n, m = rows.shape
        A, _ = population()
        super().__init__(n, m, A.shape[1], L_LIP, 2 * RADIUS, BETA)
        self.rows = rows

    def _user_mean_gradients(self, x, users):
        A, y = population()
        r = self.rows[users]                                   # (K, m)
        a = A[r]
        s = 1.0 / (1.0 + np.exp(-(a @ x)))
        return np.einsum("km,kmd->kd", s - y[r], a) / self.m

    def _item_gradients(self, X, users, items):
        A, y = population()
        r = self.rows[users, items]
        a = A[r]
        s = 1.0 / (1.0 + np.exp(-np.einsum("kd,kd->k", X, a)))
        return (s - y[r])[:, None] * a


def _kw(point: dict) -> dict:
    return dict(mode="rates", c_K1=float(point["c_K1"]), c_T=float(point["c_T"]))


def run_userlevel(point: dict, rngs: list) -> dict:
    """Algorithm 3, the item-level baseline and Algorithm 3 without noise, on the same users."""
    m = int(round(point["m"]))
    # n users, or as many users of m items as the rows allow ("rows_total")
    n = int(round(point["n"])) if "n" in point else int(point["rows_total"]) // m
    eps, delta = float(point["epsilon"]), float(point["delta"])
    A, _ = population()
    F_star, _ = population_optimum()
    cols: dict[str, list] = {}
    meter = NoiseMeter(len(rngs))
    for r, g in enumerate(rngs):
        data = LogisticUsers(assign_users(len(A), n, m, "real.userlevel", r))
        alg_rng, noise_rng, base_rng = g.spawn(3)
        ref_rng = copy.deepcopy(alg_rng)
        base = item_level_baseline(data, eps, delta, base_rng, **_kw(point))
        ref = accelerated_phased_erm(data, eps, delta, ref_rng, noise=False, halt=False,
                                     **_kw(point))
        row = {"excess_baseline": float(population_loss(base.x)) - F_star,
               "excess_nonprivate": float(population_loss(ref.x)) - F_star,
               "excess_zero": float(population_loss(np.zeros(data.d))) - F_star,
               "sigma1_baseline": base.phases[0]["sigma_i"],
               "epsilon_baseline": base.privacy.guarantee_epsilon,
               "epsilon_target": eps, "delta_target": delta,
               "epsilon_guarantee": base.privacy.guarantee_epsilon,
               "epsilon_spent": base.privacy.spent_epsilon,
               "delta_guarantee": base.privacy.guarantee_delta}
        # Algorithm 3's Gaussian releases and AboveThreshold's Laplace draws (8/ε, 16/ε)
        row.update(_alg3(data, eps, delta, alg_rng, noise_rng, point, F_star,
                         observe=user_level_hook(meter, r, ("gradient",),
                                                 {"threshold": 8.0 / eps, "query": 16.0 / eps})))
        if row["alg3_runnable"]:
            # the row's claim covers both private methods
            for c in ("epsilon_guarantee", "epsilon_spent", "delta_guarantee"):
                row[c] = max(row[c], row[c.replace("epsilon", "alg3_epsilon")
                                      .replace("delta_", "alg3_delta_")])
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {**{k: np.asarray(v, dtype=float) for k, v in cols.items()}, **meter.columns()}


def _alg3(data: LogisticUsers, eps: float, delta: float, alg_rng, noise_rng, point: dict,
          F_star: float, observe=None) -> dict:
    """Algorithm 3's columns; NaN excess and ``alg3_runnable`` = 0 when no phase can run
    privately at these sizes (the algorithm refuses: UL-E13/UL-E14's sensitivity is infinite
    below a minibatch of ~200 users at ε = 10)."""
    try:
        res = accelerated_phased_erm(data, eps, delta, alg_rng, noise_rng=noise_rng,
                                     observe=observe, **_kw(point))
    except ValueError as exc:
        if "privately" not in str(exc):
            raise
        return {"alg3_runnable": 0.0, "excess_alg3": math.nan, "halted": math.nan,
                "sigma1_alg3": math.nan}
    p = res.privacy
    return {"alg3_runnable": 1.0, "excess_alg3": float(population_loss(res.x)) - F_star,
            "halted": float(res.halted), "sigma1_alg3": res.phases[0]["sigma_i"],
            "alg3_epsilon_guarantee": p.guarantee_epsilon, "alg3_epsilon_spent": p.spent_epsilon,
            "alg3_delta_guarantee": p.guarantee_delta}


# =============================================================================================
# Experiments
# =============================================================================================
_FIXED = {"epsilon": 10.0, "delta": 1e-5, "c_T": 1.0,
          # minibatch floor ⌈c_K1·log(1/δ)/ε⌉ = 40 users (module docstring)
          "c_K1": 40.0 * 10.0 / math.log(1e5)}
#: dp-accounting's WOR-sampled Gaussian RDP is numerically noisy at ~1e-4 relative (UL-E8).
_PRIVACY_RTOL = 1e-3


def _values(point: dict) -> dict:
    A, _ = population()
    return {"n": point["n"], "m": point["m"], "d": A.shape[1], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": L_LIP, "R": 2 * RADIUS}


_ONE_SIDED = ("one-sided: footnote 3's rate is an upper bound (a finite population can be easier "
              "than the worst case, so the excess may fall faster, not slower); 0.15 covers "
              "12-seed noise over a grid of ≤ 1 decade.  Declared a finding: the excess stays "
              "within 10% of F(0) − F* at every point, and the noise-free run of the same "
              "schedule (excess_nonprivate) is as flat, so the schedule's optimisation error "
              "(λ_i-regularised phases of ⌈1 + √(β/λ_i)⌉ steps) hides both the 1/√(mn) and the "
              "privacy term at digits' scale")

USERLEVEL_M = register(Experiment(
    id="real.userlevel.m", paper=PAPER,
    title="Item-level baseline (user = one record) on digits parity: excess risk vs items per user m",
    variable="m", quick_grid=(1.0, 2.0, 4.0, 8.0), full_grid=(1.0, 2.0, 4.0, 8.0),
    fixed={**_FIXED, "n": 200.0}, seeds=12, run=run_userlevel, metric="excess_baseline",
    bound_values=_values, privacy_rtol=_PRIVACY_RTOL,
    problem="digits rows as users (n = 200 users × m items), parity, logistic loss, ball r = 4",
    algorithm="item_level_baseline (Algorithm 3's schedule at m = 1, Δ = 2L/K_i); Algorithm 3 "
              "beside it where it can run privately (not at n = 200: alg3_runnable = 0)",
    checks=(Check("userlevel:trivial", "one-sided", 0.15,
                  "one-sided, and weak: footnote 3's m-slope runs from the statistical term's "
                  "local −0.375 to the privacy term's asymptotic 0, so only an excess that GROWS "
                  "with m (slope > +0.15) fails it; it holds here (slope ≈ −0.01) but says "
                  "nothing about the m-dependence, which is not visible on this data (see "
                  "real.userlevel.n and excess_nonprivate: the schedule's optimisation error "
                  "dominates); 0.15 covers 12-seed noise over < 1 decade", wide_reason="declared weak: footnote 3's m-slope runs from −0.375 (statistical term) to 0 (privacy term) and this data set cannot tell where on that range the instance sits; the check only excludes an excess growing with m"),),
))

USERLEVEL_N = register(Experiment(
    id="real.userlevel.n", paper=PAPER,
    title="Item-level baseline on digits parity: excess risk vs number of users n (m = 4)",
    variable="n", quick_grid=(200.0, 300.0, 440.0), full_grid=(200.0, 300.0, 440.0),
    fixed={**_FIXED, "m": 4.0}, seeds=12, run=run_userlevel, metric="excess_baseline",
    bound_values=_values, privacy_rtol=_PRIVACY_RTOL, problem=USERLEVEL_M.problem,
    algorithm=USERLEVEL_M.algorithm,
    checks=(Check("userlevel:trivial", "one-sided", 0.15, _ONE_SIDED, expect="finding"),),
))

USERLEVEL_VS_BASELINE = register(ComparisonExperiment(
    id="real.userlevel.vs_baseline", paper=PAPER,
    title="User-level Alg. 3 vs the item-level baseline on digits parity, all rows (n = 1796/m)",
    variable="m", quick_grid=(1.0, 2.0), full_grid=(1.0, 2.0),
    fixed={**_FIXED, "rows_total": 1796.0}, seeds=8, run=run_userlevel, metric="excess_alg3",
    bound_values=lambda p: {}, checks=(), privacy_rtol=_PRIVACY_RTOL,
    problem="all digits rows as users of m items (the only sizes at which Algorithm 3 can run "
            "privately here: m ≤ 2)",
    algorithm="accelerated_phased_erm (Algorithms 2+3, rates mode) vs item_level_baseline",
    contrasts=(
        Contrast("Alg. 3 excess < item-level baseline excess", "greater",
                 hi="excess_alg3", lo="excess_baseline", sign=-1, log=True, expect="finding",
                 reason="one-sided: the paper's point is that user-level algorithms beat the "
                        "user-as-item baseline (footnote 3); paired per seed (same users), log "
                        "ratio because excesses span decades; 95% t-interval over 8 seeds.  "
                        "Declared a finding: Algorithm 3's noise σ_1 is ~900–1700× the "
                        "baseline's here (the UL-E13 sensitivity at K ≈ 200 users against 2L/K)"),
    ),
))


def _plot(analyses: list, root) -> object:
    # Imported by name: drawing code stays out of this module's code fingerprint.
    return importlib.import_module("empirical.papers.real.plots2").plot_userlevel(analyses, root)


register_summary(Summary("real.userlevel.excess", PAPER,
                         (USERLEVEL_M.id, USERLEVEL_N.id, USERLEVEL_VS_BASELINE.id), _plot))
