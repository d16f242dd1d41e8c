"""Algorithm 1's experiments for the user-level SCO paper (Lowy, Liu, Asi): its gradient count
(Theorem 2.1/B.1: nm, linear time) and the settings of the ε-sweep that decided UL-E1 before the
corrected sensitivity (UL-E13/UL-E14).  Its coupled privacy-excess sweeps (n, m, ε; full grid
only) are in :mod:`empirical.papers.userlevel.alg1_privacy`.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.userlevel.alg1 import phased_sgd_outlier_removal
from algorithms.noise_meter import NoiseMeter, user_level_hook
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.userlevel import sensitivity as uls
from empirical.papers.userlevel.common import (_QUAD_L, _QUAD_R, PAPER, PRIVACY_RTOL, _int,
                                               _phase_epsilon, _privacy_cols,
                                               _sensitivity_limits)
from empirical.papers.userlevel.routes import gaussian_route_columns
from empirical.papers.userlevel.problems import StreamingLeastSquares, StreamingQuadratic

def _alg1_settings(point: dict, res, L: float, R: float) -> dict:
    """Algorithm 1's phase 1 as Theorem B.1 and Lemma B.2 set it (rates mode, q = ¼), recomputed
    here: C = ⌈c_C log(20nme^ε/δ)/ε⌉, N_1 = ⌊n_1/C⌋, T_1 = N_1m, η_1 = c_ηR/(L√(dmnε))/2^p with
    p = J + 3/2 (J = max(1, log m/log n)), τ_1 = c_τη_1L√T_1 log(ndm), Δ_1 the corrected
    Lemma B.2 bound (UL-E13, empirical.papers.userlevel.sensitivity); ``used_``/``theory_`` pairs and ``max_epsilon_1`` = ε/10 + dp-accounting's
    ε(Gaussian(σ_1/Δ_1), δ/2) against the target (settings verdict)."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, dl = float(point["epsilon"]), float(point["delta"])
    C = max(1, int(math.ceil(point["c_C"] * math.log(20 * n * m * math.exp(eps) / dl) / eps)))
    n1 = int(math.floor((1 - 2 ** -0.25) * n / 2 ** 0.25))
    T1 = (n1 // C) * m
    p = max(1.0, math.log(m) / math.log(n)) + 1.5
    eta1 = point["c_eta"] * R / (L * math.sqrt(d * m * n * eps)) / 2 ** p
    tau1 = point["c_tau"] * eta1 * L * math.sqrt(T1) * math.log(n * d * m)
    sens = uls.alg1_phase_sensitivity(tau1, C, eps, dl)
    ph = res.phases[0]
    e1 = eps / 10.0 + _phase_epsilon(round(ph["sigma_i"] / sens, 12), 1, dl / 2.0, 1, 1)
    return {"used_C": float(res.info["C"]), "theory_C": float(C),
            "used_T_1": float(ph["T_i"]), "theory_T_1": float(T1),
            "used_eta_1": float(ph["eta_i"]), "theory_eta_1": eta1,
            **_sensitivity_limits(float(ph["sensitivity"]), sens),
            "max_epsilon_1": e1, "limit_epsilon_1": eps * (1 + PRIVACY_RTOL),
            **_alg1_routes(res)}


def _alg1_routes(res) -> dict:
    """Second routes of the output noise's calibration (:mod:`empirical.papers.userlevel.routes`):
    the Gaussian part of the ε charged to phase 1 (one release at the multiplier the search
    found, δ/2), recomputed by the Gaussian's RDP written out and bounded by the exact ε; the
    Laplace score's ε/10 is a closed form (its scale 20/ε is measured by the noise meter)."""
    p1 = res.privacy.phases[0]
    return gaussian_route_columns("gauss_1", p1.z, p1.count, p1.delta_gauss,
                                  p1.guarantee - p1.eps_pure)


def _run_alg1(point: dict, rngs: list) -> dict:
    """Algorithm 1 on streamed least squares (rates mode), with a coupled noise-free run."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    kw = dict(mode="rates", c_C=point["c_C"], c_eta=point["c_eta"], c_tau=point["c_tau"],
              max_phases=_int(point, "max_phases"))
    cols: dict[str, list] = {}
    problem = StreamingQuadratic if point.get("problem") == "quadratic" else StreamingLeastSquares
    meter = NoiseMeter(len(rngs))
    for row_i, g in enumerate(rngs):
        data_rng, alg_rng = g.spawn(2)
        data = problem(n, m, d, data_rng)
        # the score test's Laplace scale 20/ε (Algorithm 1, budget ε/10), recomputed here
        res = phased_sgd_outlier_removal(
            data, eps, delta, alg_rng, **kw,
            observe=user_level_hook(meter, row_i, ("output",), {"score": 20.0 / eps}))
        C = res.info["C"]
        row = {"excess": float(data.excess(res.x)[0]), "grad_evals": res.grad_evals,
               "halted": int(res.halted), "C": C, "phases": len(res.phases),
               "N_1": res.phases[0]["N_i"], "T_1": res.phases[0]["T_i"],
               "eta_1": res.phases[0]["eta_i"], "tau_1": res.phases[0]["tau_i"],
               "sigma_1": res.phases[0]["sigma_i"],
               "sigma_last": res.phases[-1]["sigma_i"],
               "kept_1": res.phases[0]["kept"],
               "schedule_grads": sum(C * p["N_i"] for p in res.phases) * m,
               **_alg1_settings(point, res, data.L, data.R),
               **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()}}
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {**{k: np.asarray(v) for k, v in cols.items()}, **meter.columns()}


def _alg1_values(point: dict) -> dict:
    return {"n": point["n"], "m": point["m"], "d": point["d"], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": 4.0 / 2 + 1.5, "R": 4.0, "beta": 1.0}


def _alg1_vacuous(point: dict, bound_value: float) -> str | None:
    """Theorem 2.1's hypothesis β ≤ (L/R)√(dmnε) (β = 1 for least squares on the sphere)."""
    v = _alg1_values(point)
    cap = v["L"] / v["R"] * math.sqrt(v["d"] * v["m"] * v["n"] * v["epsilon"])
    if v["beta"] > cap:
        return f"β = {v['beta']} > (L/R)√(dmnε) = {cap:.3g}: Theorem 2.1 does not apply"
    return None


ALG1_GRADS_N = register(Experiment(
    id="userlevel.alg1.grads.n",
    paper=PAPER,
    title="Alg. 1 gradient evaluations vs n (linear time, Theorem 2.1)",
    variable="n",
    # n = 2^20 only on the full grid (half this sweep's cost): the count is deterministic, and
    # on the three quick points the slope is +1.023 (2^20 included: +1.021), Algorithm 3's
    # local +1.109 still 0.086 away (tolerance 0.05).  The full grid spans 16x from 2^17: at
    # n = 2^16 phase 4 has N_4 = 2 groups (n_4/C = 2.74), so the floor discards 27% of its users
    # and the count's local slope 2^16 -> 2^17 is +1.20 (UL-E23, pinned by
    # test_alg1_count_superlinearity_is_the_group_floor); from 2^17 every N_i >= 5
    quick_grid=(131072, 262144, 524288),
    full_grid=(131072, 262144, 524288, 1048576, 2097152),
    fixed={"delta": 1e-6, "epsilon": 1.0, "m": 16, "d": 5, "c_C": 60.0, "c_eta": 1.0,
           "c_tau": 1.0, "max_phases": 4},
    seeds=2,
    run=_run_alg1,
    metric="grad_evals",
    bound_values=_alg1_values,
    vacuous=_alg1_vacuous,
    problem="StreamingLeastSquares (features on the sphere, exact F)",
    algorithm="algorithms.userlevel.sco.phased_sgd_outlier_removal (Algorithm 1), rates mode",
    privacy_rtol=PRIVACY_RTOL,
    # the count is fixed by the schedule: a schedule check (Algorithm 1's risk is
    # userlevel.alg1.risk.n)
    extra={"check_type": "schedule"},
    description="Schedule check, not a rate measurement: the gradient count is fixed by the "
                "schedule (deterministic, CI width 0), so this checks the schedule's arithmetic "
                "against Theorem 2.1's nm.  The risk itself: userlevel.alg1.risk.n.",
    checks=(
        Check("userlevel:thm2.1-gradients", "two-sided", 0.05,
              "two-sided: the count is exactly Σ_i C⌊n_i/C⌋m (each item used once; the "
              "paper's Σ_i n_im assumes C | n_i); the floor moves the slope by +0.023 over the "
              "4× quick range and +0.019 over the 16× full range (every N_i ≥ 5; the floor-free "
              "Σ_i n_im has slope 1.0000), the phase cap (4 phases at every n) by 0; a count "
              "off by n^{0.05} or more fails.  Below n = 2^17 (N_i ≤ 4) the floor alone makes "
              "the local slope +1.20 (UL-E23)",
              level=(0.1, 1.0),
              level_source="theorem", level_reason="≤ nm is the theorem; the lower end is phase 1 alone, "
                           "(1 − 2^{−q})2^{−q} ≈ 0.134 at q = 1/4, minus the ⌊n_i/C⌋ rounding"),
        Check("userlevel:thm3.2-gradients", "reject", 0.05,
              "competitor: Algorithm 3's super-linear count"),
    ),
))


# --- Algorithm 1 against ε: Theorem 2.1's ε exponent (UL-E1) ---------------------------------
def _alg1q_values(point: dict) -> dict:
    return {"n": point["n"], "m": point["m"], "d": point["d"], "epsilon": point["epsilon"],
            "delta": point["delta"], "L": _QUAD_L, "R": _QUAD_R, "beta": 1.0}


#: Algorithm 1's ε-sweep (UL-E1).  Not a registered experiment: at 6 seeds its 95% CI is ±0.4
#: (per-seed excess varies ×3 and spurious halts force a median), so it cannot decide between
#: −1 and −1/2 on a quick grid; ``tests/test_userlevel_experiments.py`` runs it with 40 seeds
#: under ``@pytest.mark.slow``.
ALG1_EPS_POINT = {"delta": 1e-6, "n": 8192, "m": 256, "d": 5, "c_C": 15.0, "c_eta": 200.0,
                  "c_tau": 0.02, "max_phases": 64, "problem": "quadratic"}
ALG1_EPS_GRID = (1.0, 2.0, 4.0, 8.0)
