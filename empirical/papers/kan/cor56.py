"""KAN paper (Wang et al.), Corollary 5.6 (κ = 0, Section 5.3; proof App. E): mini-batch SGD
with B ≍ γ√n, η ≍ B/n and T ≍ n²/(γ²B) has averaged population risk ≲ 1/(γ²n).

The schedule is the corollary's (constants stated in :func:`cor56_schedule`), run on the
NTK-teacher problem of :mod:`empirical.papers.kan.problems` at a width inside the width condition
m ≳ γ⁻⁴ (constant and polylog 1: m·γ₀⁴ ≈ 1.7, row ``width_m_gamma4``).  The control
(``kan.cor56.n.frozen``) runs the same schedule on a training set frozen at n₀ distinct examples
(tiled to n), so a slope that came from the schedule alone would show there too.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.kan.correlated_noise import dp_sgd_correlated
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.problems import (PLAIN_GD, _instance, held_out, nonprivate_columns,
                                           sample_rows)

#: The constant of T ≍ n²/(γ²B): the corollary's ≍ leaves it free; 1/4 keeps the quick grid
#: inside the verify budget (T = n²/(4γ²B) still makes every term of A_non ≍ 1/n).
T_CONST = 0.25


def cor56_schedule(n: int, gamma: float) -> dict:
    """Corollary 5.6's choices: B = ⌈γ√n⌉, η = B/n, T = ⌈T_CONST·n²/(γ²B)⌉."""
    B = max(1, math.ceil(gamma * math.sqrt(n)))
    return {"B": B, "eta": B / n, "T": max(2, math.ceil(T_CONST * n * n / (gamma * gamma * B)))}


def _run(point: dict, rngs: list, frozen: int | None) -> dict:
    inst = _instance(point)
    n = int(point["n"])
    # the schedule is that of n, or of a fixed schedule_n (the sample grows, the schedule not)
    sch = cor56_schedule(int(point.get("schedule_n", n)), inst.gamma0)
    if frozen is None:
        H, y = sample_rows(inst, n, rngs)
    else:
        # n₀ distinct examples tiled to n: the schedule (B, η, T, batches) is that of n, the
        # information is that of n₀
        H0, y0 = sample_rows(inst, frozen, rngs)
        reps = -(-n // frozen)
        H, y = np.tile(H0, (1, reps, 1))[:, :n], np.tile(y0, (1, reps))[:, :n]
    Ht, yt = held_out(inst, point)
    run = dp_sgd_correlated(inst.model, H, y, T=sch["T"], eta=sch["eta"], B=sch["B"], rng=rngs,
                            H_test=Ht, y_test=yt, eval_every=max(1, sch["T"] // 8),
                            eval_subsample=500, **PLAIN_GD)
    R = len(rngs)
    return {"pop_risk": run.avg_test_loss, "opt_risk": run.avg_train_loss,
            "sampling_ratio": np.full(R, sch["B"] * sch["T"] / n),
            "gen_gap": run.avg_test_loss - run.avg_train_loss,
            "n_distinct": np.full(R, float(n if frozen is None else frozen)),
            **nonprivate_columns(point, run, inst, R)}


def _run_cor56(point: dict, rngs: list) -> dict:
    return _run(point, rngs, None)


def _run_cor56_frozen(point: dict, rngs: list) -> dict:
    return _run(point, rngs, int(point["n_frozen"]))


def _cor56_values(point: dict) -> dict:
    return {"n": point["n"], "gamma": _instance(point).gamma0}


def _frozen_values(point: dict) -> dict:
    """Theorem E.1's population bound at what the control really runs: n₀ examples, the
    schedule of n (B, η, T) and δ = 1/n₀."""
    g = _instance(point).gamma0
    sch = cor56_schedule(int(point["n"]), g)
    n0 = float(point["n_frozen"])
    return {"n": n0, "gamma": g, "B": sch["B"], "eta": sch["eta"], "T": sch["T"],
            "delta": 1.0 / n0}


#: d = 2, m = 32 at the 0.95 margin quantile: γ₀ ≈ 0.48, m·γ₀⁴ ≈ 1.7 (inside m ≳ γ⁻⁴ at
#: constant 1 with the polylog dropped).
_COR56_FIXED = {"m": 32, "d": 2, "p": 6, "margin_quantile": 0.95}
_WIDTH_NOTE = ("Width: m = 32 with γ₀ ≈ 0.48 gives m·γ₀⁴ ≈ 1.7 (row width_m_gamma4), inside the "
               "condition m ≳ γ⁻⁴ read with constant 1 and its polylog(n/δ) dropped; with the "
               "polylog log(m/δ)(log⁴T + log²(n/δ)) kept no affordable width is inside.")

COR56_N = register(Experiment(
    id="kan.cor56.n",
    paper="kan",
    title="Cor. 5.6's schedule (κ = 0, B = ⌈γ√n⌉, η = B/n, T = n²/(4γ²B)): population risk vs n",
    variable="n",
    quick_grid=(16, 32, 64),
    full_grid=(16, 32, 64, 128, 256, 512, 1024),
    fixed=_COR56_FIXED,
    seeds=3,
    run=_run_cor56,
    metric="pop_risk",
    bound_values=_cor56_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1), d = 2, m = 32; held-out sample of 2000 for L(W_t)",
    algorithm="dp_sgd_correlated with κ = 0, fresh batches, no clipping, no projection "
              "(mini-batch SGD)",
    description="Corollary 5.6 run with its own schedule.  " + _WIDTH_NOTE + "  The control "
                "kan.cor56.n.frozen runs the same schedule on n₀ = 16 distinct examples.",
    checks=(
        Check("kan:cor5.6", "one-sided", 0.15,
              "upper bound 1/(γ²n) (constants and polylogs dropped): the averaged population "
              "risk may fall faster, so one-sided; 0.15 covers 3 seeds (CI half-width ≈ 0.01 on "
              "a 4× range) and the iterate average's start at log 2, as for kan.nonpriv.n",
              expect="finding", finding_on="slope",
              note="KAN-E41: slope ≈ −0.32 against −1 on n ∈ [16, 64]; the frozen-data control "
                   "kan.cor56.n.frozen has the same slope (its n₀ = 16 examples fixed), so the "
                   "decay is the schedule's (ηT = n/(4γ²) grows with n), not the sample size's",
              level=(0.3, 30.0), level_source="theorem",
              level_reason="≲ with constant 1 at γ = γ₀ (guaranteed): the level may sit below "
                           "the bound by the hidden constant (0.3), and up to the polylog(n/δ) "
                           "the corollary drops (log(n/δ)·log(1/δ) ≈ 30 at n = 32, δ = 1/n)"),
    ),
))

COR56_FROZEN = register(Experiment(
    id="kan.cor56.n.frozen",
    paper="kan",
    title="Control of Cor. 5.6: the schedule of n on n₀ = 16 distinct examples (tiled to n)",
    variable="n",
    quick_grid=(16, 32, 64),
    full_grid=(16, 32, 64, 128, 256, 512, 1024),
    fixed={**_COR56_FIXED, "n_frozen": 16},
    seeds=3,
    run=_run_cor56_frozen,
    metric="pop_risk",
    bound_values=_frozen_values,
    private=False,
    problem="as kan.cor56.n, training set of n₀ = 16 examples repeated to size n",
    algorithm="as kan.cor56.n (same B, η, T, batches)",
    description="The non-circular control of kan.cor56.n: with the information frozen at n₀, "
                "the population risk must not follow 1/(γ²n); if it did, the schedule, not the "
                "sample size, would be what the corollary's slope measures.  " + _WIDTH_NOTE,
    checks=(
        Check("kan:thmE.1_pop", "one-sided", 0.15,
              "Theorem E.1's population bound at what the control really is (n₀ = 16 examples, "
              "the schedule of n): (1 + ηT/n₀)(A_non + δ) + δ/γ, nearly flat in the schedule's "
              "n; one-sided (upper bound); 0.15 as for kan.cor56.n",
              values=_frozen_values, use_asymptotic=False),
        Check("kan:cor5.6", "reject", 0.15,
              "the corollary's slope −1 in n must NOT describe a run whose data are frozen: "
              "the same tolerance as the claim"),
    ),
))


def _schedule_values(point: dict) -> dict:
    """Theorem E.1's population bound at what the run really is: n examples, the schedule of
    schedule_n (B, η, T) and δ = 1/n."""
    g = _instance(point).gamma0
    sch = cor56_schedule(int(point["schedule_n"]), g)
    n = float(point["n"])
    return {"n": n, "gamma": g, "B": sch["B"], "eta": sch["eta"], "T": sch["T"], "delta": 1.0 / n}


COR56_SCHEDULE = register(Experiment(
    id="kan.cor56.n.schedule",
    paper="kan",
    title="Cor. 5.6 with the schedule frozen at n = 256 (B, η, T fixed): population risk vs the "
          "sample size n",
    variable="n",
    quick_grid=(16, 64, 256),
    full_grid=(16, 32, 64, 128, 256),
    full_only="T = 8881 steps of SGD at every n (the schedule of n = 256): ≈ 2 CPU-s per size "
              "(3 seeds), ≈ 6 for the quick grid's 3 sizes, above the 3 CPU-s allowance; full "
              "grid: n^−0.003 [−0.008, +0.003], FINDING against Theorem E.1 (KAN-E41)",
    fixed={**_COR56_FIXED, "schedule_n": 256},
    seeds=3,
    run=_run_cor56,
    metric="pop_risk",
    bound_values=_schedule_values,
    private=False,
    problem="NTK teacher with margin γ₀ (G1), d = 2, m = 32; n fresh i.i.d. draws; held-out "
            "sample of 2000 for L(W_t)",
    algorithm="as kan.cor56.n, with B, η, T those of n = 256 at every n",
    description="The converse of kan.cor56.n.frozen: the schedule is fixed and only the sample "
                "grows, so the n-slope is the sample size's.  " + _WIDTH_NOTE + "  Theorem "
                "E.1's population width condition (constant 1) asks m ≈ 650–3900 here.",
    checks=(
        Check("kan:thmE.1_pop", "one-sided", 0.15,
              "Theorem E.1's population bound (1 + ηT/n)(A_non + δ) + δ/γ at the run's own "
              "n, B, η, T and δ = 1/n (it holds for any schedule): falls like 1/n once ηT ≫ n; "
              "one-sided (upper bound); 0.15 as for kan.cor56.n (3 seeds, CI half-width ≈ 0.01 "
              "on a 16× range)", use_asymptotic=False, expect="finding",
              note="KAN-E41: the bound falls like n^−1.15 at the fixed schedule (ηT/n from 17 "
                   "to 1.1); the risk is flat, n^−0.003 [−0.008, +0.003] (0.136 at every n)"),
        Check("kan:cor5.6", "reject", 0.15,
              "the corollary's 1/(γ²n), drawn for comparison",
              values=_cor56_values,
              reference="its B ≲ γ√n and η ≍ B/n hold (constant 1) only at n = 256: at n = 16 "
                        "the fixed B = 8 is 4× γ√n and η = 1/32 is B/n/16"),
        Check("kan:wang_gd", "reject", 0.15,
              "prior work (Wang et al. 2026, GD: 1/(γ⁴n)): slope −1 in n, ruled out by the same "
              "data"),
    ),
))
