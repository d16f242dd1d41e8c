"""KAN paper (Wang et al.), Section 5.2 and 5.3 'Comparison': the prior algorithm the paper
improves on, run on its own — Wang, Zhou, Liznerski, Kloft's full-batch DP-GD on the two-layer
KAN with both layers trained (:func:`algorithms.kan.two_layer_dpgd.dp_gd_two_layer`), judged
against its own claimed rates √d/(γ⁴nε) (private, ``kan:wang_dpgd``) and 1/(γ⁴n) (noise-free,
``kan:wang_gd``), both at the width m ≍ γ⁻⁶ the paper cites for it.

Schedule.  The KAN paper gives Wang et al.'s width, not their step size or step count, so the
runs use App. D.3's full-batch recipe ('Recovery of full-batch DP-GD'): B = T = n, λ = 0,
η = min{1, ε/(γ√(md))}, δ = γ/n, at Wang et al.'s width m = ⌈γ⁻⁶/4⌉.  App. D.3's proof balances
1/(γ²ηT) against ηmdκ²/n² (κ² ≍ T/ε²) at that η, giving √(md)/(γnε): √d/(γ³nε) at m ≍ γ⁻⁴ (the
paper's claim) and √d/(γ⁴nε) at m ≍ γ⁻⁶, Wang et al.'s rate — so the two claims differ by the
width, and this run is where Wang et al.'s γ⁻⁴ must show.  κ is calibrated for the T − 1
full-batch Gaussian releases (replace-one, dp-accounting).  Data: the same NTK-teacher
instances with margin exactly γ as :mod:`empirical.papers.kan.gamma` (built at the run's
width; the teacher u lies in the first layer's tangent space, so (u, 0) certifies margin γ for
the joint tangent features of both layers too).

Experiments: ``kan.wang.gamma`` (γ, private), its noise-free control ``kan.wang.gamma.nonprivate``
(the same instances, teacher and held-out sample at each γ: what the schedule alone gives), and ``kan.wang.n`` (n at γ = 1/2,
private; the two claims agree in n, so it is the n-dependence of Wang et al.'s rate that is
checked, on its own algorithm).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.kan.two_layer_dpgd import (dp_gd_two_layer, two_layer_epsilon,
                                           two_layer_epsilon_pld, two_layer_noise_multiplier)
from algorithms.noise_meter import NoiseMeter, correlated_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.kan.gamma import _test_set, instance_at_margin
from empirical.papers.kan.problems import sample_rows

#: The neighbouring relation of the calibration (Theorem 5.4's, and the tight γ sweep's).
RELATION = "replace-one"
#: Relative gap allowed between the closed-form Gaussian ε and dp-accounting's PLD accountant
#: (discretisation 1e-4 on ε values ≤ 4: ≤ 1e-3 relative).
ROUTE_GAP = 1e-3


#: The constant of Wang et al.'s width m ≍ γ⁻⁶ (the ≍ leaves it free, with the polylog(n/δ)):
#: 1/4 keeps the largest width of the full grid at 1024 (γ = 1/4) and the quick grid's at 16.
WIDTH_CONSTANT = 0.25


def wang_width(gamma: float) -> int:
    """Wang et al.'s width m = ⌈γ⁻⁶/4⌉ (m ≍ γ⁻⁶ as the KAN paper cites it, constant 1/4,
    polylog dropped)."""
    return math.ceil(WIDTH_CONSTANT * gamma ** -6 - 1e-9)


def wang_schedule(n: int, gamma: float, epsilon: float, d: int) -> dict:
    """App. D.3's full-batch choices at Wang et al.'s width: m = ⌈γ⁻⁶/4⌉, B = T = n,
    η = min{1, ε/(γ√(md))}, δ = γ/n."""
    m = wang_width(gamma)
    return {"m": m, "T": n, "eta": min(1.0, epsilon / (gamma * math.sqrt(m * d))),
            "delta": gamma / n}


def _run_wang(point: dict, rngs: list, private: bool = True) -> dict:
    g, n, d, p = float(point["gamma"]), int(point["n"]), int(point["d"]), int(point["p"])
    eps, C = float(point["epsilon"]), float(point["C_clip"])
    sch = wang_schedule(n, g, eps, d)
    inst = instance_at_margin(sch["m"], d, p, g)
    H, y = sample_rows(inst, n, rngs)
    Ht, yt = _test_set(sch["m"], d, p, g)
    R = len(rngs)
    full = lambda v: np.full(R, float(v))  # noqa: E731
    kappa = two_layer_noise_multiplier(eps, sch["T"] - 1, sch["delta"], RELATION) if private else 0.0
    meter = NoiseMeter(R)
    run = dp_gd_two_layer(inst.model, H, y, T=sch["T"], eta=sch["eta"], C_clip=C,
                          noise_multiplier=kappa, rng=rngs, H_test=Ht, y_test=yt,
                          eval_every=max(1, sch["T"] // 8),
                          observe=correlated_hook(meter, np.zeros(R)) if private else None)
    out = {"pop_risk": run.avg_test_loss, "opt_risk": run.avg_train_loss,
           "gamma0": full(g), "m": full(sch["m"]), "width_m_gamma4": full(sch["m"] * g ** 4),
           "width_m_gamma6": full(sch["m"] * g ** 6),
           "instance_acceptance": full(inst.acceptance), "eta": full(sch["eta"]),
           "T": full(sch["T"]), "B": full(n), "lam": np.zeros(R), "C_clip": full(C),
           "clip_fraction": run.clip_fraction, "c_drift": run.c_drift,
           "noise_multiplier": full(kappa),
           # the settings the run used against App. D.3's, recomputed here
           "used_eta": full(run.params["eta"]), "theory_eta": full(sch["eta"]),
           "used_releases": full(run.params["releases"]), "theory_releases": full(n - 1)}
    if not private:
        return out
    meter.claim("correlated", C * kappa / n)
    spent = two_layer_epsilon(kappa, sch["T"] - 1, sch["delta"], RELATION)
    pld = two_layer_epsilon_pld(kappa, sch["T"] - 1, sch["delta"], RELATION)
    return {**out, **meter.columns(),
            "epsilon_target": full(eps), "epsilon_guarantee": full(spent),
            "epsilon_spent": full(spent), "delta": full(sch["delta"]),
            "epsilon_route_pld": full(pld),
            "max_epsilon_route_gap": full(abs(pld - spent) / spent),
            "limit_epsilon_route_gap": full(ROUTE_GAP)}


def _run_wang_control(point: dict, rngs: list) -> dict:
    return _run_wang(point, rngs, private=False)


def _values(point: dict) -> dict:
    g = float(point["gamma"])
    sch = wang_schedule(int(point["n"]), g, point["epsilon"], int(point["d"]))
    return {"gamma": g, "n": point["n"], "d": point["d"], "epsilon": point["epsilon"],
            "T": sch["T"], "eta": sch["eta"], "m": sch["m"]}


_FIXED = {"n": 100, "d": 2, "p": 6, "epsilon": 0.5, "C_clip": 1.0}
_GAMMA_QUICK = (0.5, 0.55, 0.6)
_GAMMA_FULL = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
_WIDTH = ("Width: m = ⌈γ⁻⁶/4⌉ at every γ (row width_m_gamma6 ≥ 1/4): Wang et al.'s condition "
          "m ≍ γ⁻⁶ at constant 1/4 with its polylog(n/δ) dropped (m·γ⁴ ≥ 1 on the full grid: "
          "inside the paper's own m ≍ γ⁻⁴ too).")
_TWO_SIDED = ("two-sided: the paper reads γ⁻⁴ as Wang et al.'s rate and γ⁻³ as its own, so only "
              "the exponent the risk actually follows can decide between them; a flatter slope "
              "is looseness of the claim, a steeper one a violation.  0.5: half the one power of "
              "γ between the two readings; the full grid's 0.3 decades of γ with 4 seeds give a "
              "CI half-width ≈ 0.3 (as on kan.gamma.fullbatch_dpgd's 0.22 decades)")
_WIDE = ("0.5 is half the one power of γ that separates the two readings: a slipped power of γ "
         "(in η, in m or in the data's margin) moves the slope by ≥ 1 and fails it")
_LEVEL_REASON = ("≲ with constant 1 and the polylog(n/δ) the rate drops (log(n/δ)·log(1/δ) ≈ 75 "
                 "at n = 100, δ = γ/n) above; an upper bound says nothing from below, so the lower "
                 "end only excludes a risk that vanishes (a broken evaluation): the bound exceeds "
                 "the trivial risk log 2 at small γ, where observed/bound falls to ≈ 0.2")

WANG_GAMMA = register(Experiment(
    id="kan.wang.gamma", full_only="quick grid (γ = 0.5–0.6, 0.08 decades, 4 seeds): 99% CI ±5.1 against tol 0.5 (a 3-decade span would be needed); full grid (γ = 0.25–0.5): FINDING γ^−1.23 [−1.62, −0.81], γ⁻³ REJECTED",
    paper="kan",
    title="Wang et al.'s full-batch DP-GD, both layers trained, at their width m = ⌈γ⁻⁶/4⌉: "
          "population risk vs γ, their γ⁻⁴ against the paper's γ⁻³",
    variable="gamma",
    quick_grid=_GAMMA_QUICK,
    full_grid=_GAMMA_FULL,
    fixed=_FIXED,
    seeds=4,
    run=_run_wang,
    metric="pop_risk",
    bound_values=_values,
    problem="NTK teacher with margin exactly γ (G1) at width ⌈γ⁻⁶/4⌉; held-out sample of 500",
    algorithm="dp_gd_two_layer: full-batch DP-GD on (W, c), λ = 0, B = T = n, "
              "η = min{1, ε/(γ√(md))}, κ for the T − 1 Gaussian releases at (ε, δ = γ/n), "
              "replace-one",
    description="The competitor of Section 5.2 'Comparison' run as an algorithm.  " + _WIDTH +
                "  The noise-free control kan.wang.gamma.nonprivate (the same instances) "
                "shows what the schedule alone gives; kan.gamma.fullbatch_dpgd runs the paper's "
                "own algorithm (c fixed, m = ⌈γ⁻⁴⌉) on the same kind of instance.  Each γ has "
                "its own width and so its own initialisation and teacher: the seeds' CI does not "
                "cover that spread, which dominates the quick grid's 0.08 decades (it pins the "
                "code); the full grid's 0.3 decades carry the verdict.",
    checks=(
        Check("kan:wang_dpgd", "two-sided", 0.5, _TWO_SIDED, wide_reason=_WIDE,
              use_asymptotic=False, level=(0.01, 80.0), level_source="theorem",
              level_reason=_LEVEL_REASON, expect="finding", finding_on="slope",
              note="Wang et al.'s own algorithm at their width: γ^{−1.23} [−1.62, −0.81] on "
                   "γ = 0.25–0.5 (full grid), flatter than their γ⁻⁴ and the paper's γ⁻³ alike; "
                   "the noise-free control falls as γ^{−1.43}.  The quick grid's 0.08 decades "
                   "are the three instances' spread, not a rate"),
        Check("kan:fullbatch_dpgd", "reject", 0.5,
              "the paper's own γ⁻³ (App. D.3), on the same data with the same tolerance: on "
              "Wang et al.'s algorithm at their width it is the rate the paper does not claim"),
    ),
))

WANG_GAMMA_CONTROL = register(Experiment(
    id="kan.wang.gamma.nonprivate",
    paper="kan",
    title="Control of kan.wang.gamma: Wang et al.'s two-layer GD on the same schedule and data "
          "without noise (κ = 0)",
    variable="gamma",
    quick_grid=_GAMMA_QUICK,
    full_grid=_GAMMA_FULL,
    fixed=_FIXED,
    seeds=3,
    run=_run_wang_control,
    metric="pop_risk",
    bound_values=_values,
    private=False,
    problem="as kan.wang.gamma",
    algorithm="as kan.wang.gamma with κ = 0 (the same instance and held-out sample at each γ; "
              "training sets from this experiment's own seeds)",
    description="Non-circular control: m and η depend on γ, so part of a γ-slope could come from "
                "the schedule alone; without noise Wang et al.'s non-private rate 1/(γ⁴n) "
                "(Section 5.3 'Comparison') is the claim.  " + _WIDTH,
    checks=(
        Check("kan:wang_gd", "two-sided", 0.5,
              "Wang et al.'s non-private 1/(γ⁴n) on their own algorithm: " + _TWO_SIDED,
              wide_reason=_WIDE, use_asymptotic=False, level=(0.01, 80.0),
              level_source="theorem", level_reason=_LEVEL_REASON, expect="finding",
              finding_on="slope",
              note="γ^{−1.43} [−1.44, −1.42] on γ = 0.25–0.5 (full grid) against γ⁻⁴: the "
                   "noise-free two-layer GD at Wang et al.'s width is far flatter than their "
                   "rate, and steeper than the paper's own algorithm's (flat, KAN-E40)"),
        Check("kan:fullbatch_gd", "reject", 0.5,
              "the paper's non-private 1/(γ²n) (App. E), on the same data; same tolerance"),
    ),
))


_N_FIXED = {"gamma": 0.5, "d": 2, "p": 6, "epsilon": 0.5, "C_clip": 1.0}
_N_QUICK = (25.0, 50.0, 100.0)
_N_FULL = (25.0, 50.0, 100.0, 200.0, 400.0, 800.0)


def _n_level() -> tuple[float, float]:
    # the dropped polylog(n/δ) = log(n/δ)·log(1/δ) at the full grid's largest n, δ = γ/n
    n, g = max(_N_FULL), _N_FIXED["gamma"]
    return 0.01, math.ceil(math.log(n * n / g) * math.log(n / g))


WANG_N = register(Experiment(
    id="kan.wang.n", full_only="quick grid (n = 25–100, 4 seeds): 99% CI ±0.45 against tol 0.3, ≈ 34 seeds needed; full grid (n = 25–800): FINDING n^−0.42 [−0.49, −0.35]",
    paper="kan",
    title="Wang et al.'s full-batch DP-GD, both layers trained, at γ = 1/2 (m = 16): "
          "population risk vs n against their √d/(γ⁴nε)",
    variable="n",
    quick_grid=_N_QUICK,
    full_grid=_N_FULL,
    fixed=_N_FIXED,
    seeds=4,
    run=_run_wang,
    metric="pop_risk",
    bound_values=_values,
    problem="NTK teacher with margin exactly γ = 1/2 (G1) at width ⌈γ⁻⁶/4⌉ = 16 (the "
            "instance of kan.wang.gamma at γ = 1/2); held-out sample of 500",
    algorithm="as kan.wang.gamma: B = T = n, η = min{1, ε/(γ√(md))} (fixed in n), κ at "
              "(ε, δ = γ/n)",
    description="Wang et al.'s rate in n, on their own algorithm.  The paper's γ⁻³ claim has the "
                "same n⁻¹, so no competing rate differs in n; the γ-sweep kan.wang.gamma is "
                "where the two are told apart.  " + _WIDTH + "  The quick grid (0.6 decades) "
                "does not decide; the full grid's 1.5 decades do.",
    checks=(
        Check("kan:wang_dpgd", "one-sided", 0.3,
              "one-sided: an upper bound, and a fixed instance may be easier (the risk may fall "
              "faster than n⁻¹, not slower).  0.3: the full grid's 1.5 decades of n with 4 seeds "
              "give a CI half-width ≈ 0.1 (the quick grid's 0.6 decades ≈ 0.15)",
              level=_n_level(), level_source="theorem",
              level_reason="≲ with constant 1 and the dropped polylog(n/δ) = log(n/δ)·log(1/δ) at "
                           "the largest n of the full grid (δ = γ/n) above; the lower end only "
                           "excludes a risk that vanishes",
              expect="finding", finding_on="slope",
              note="n^{−0.42} [−0.49, −0.35] on n = 25–800 (full grid) against n⁻¹: Wang et "
                   "al.'s rate in n does not show on their own algorithm; level 0.43–3.1 of "
                   "the rate (inside its dropped polylog)"),
    ),
))
