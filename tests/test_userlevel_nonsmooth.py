"""Theorem 4.1/D.3's risk runs (user-level SCO paper): smoothed Algorithm 3 on LAD with its
coupled noise-free control (empirical.papers.userlevel.nonsmooth_runs), on points small enough
for the default suite; the sweeps themselves are full-grid only (tests/_open_verdicts.py)."""
import math

import numpy as np
import pytest

from algorithms.userlevel.alg3 import accelerated_phased_erm
from algorithms.userlevel.data import SmoothedUserData
from empirical.core import experiment as registry
from empirical.papers.userlevel.nonsmooth_runs import (lad_values, ns_theory_phase1, run_ns_risk,
                                                       smoothing_radius)
from empirical.papers.userlevel.problems import LadUsers

_POINT = dict(n=2048, m=2, d=2, epsilon=10.0, delta=1e-6, c_T=0.05, c_K1=0.05, c_K2=1.0)


def _rngs(k: int) -> list:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(k)]


def test_rows_record_the_schedule_and_match_theorem_d3():
    out = run_ns_risk(_POINT, _rngs(2))
    r = smoothing_radius(2048, 2, 2, 10.0)
    assert r == pytest.approx(4.0 * math.sqrt(2) / (10.0 * 2048 * math.sqrt(2)))
    assert np.allclose(out["r"], r) and np.allclose(out["beta_r"], math.sqrt(2) / r)
    assert np.all(out["c_T"] == 0.05) and np.all(out["c_K1"] == 0.05)
    th = ns_theory_phase1(_POINT)
    # T_1 = ⌈1 + c_T n_1^{3/4}√(mε)⌉ from Theorem D.3, recomputed here by hand
    n1 = int((1 - 2 ** -0.5) * 2048 / 2 ** 0.5)
    assert th["n_1"] == n1 and th["T_1"] == math.ceil(1 + 0.05 * n1 ** 0.75 * math.sqrt(20.0))
    for k in ("n_1", "T_1", "K_1"):
        assert np.all(out[f"used_{k}"] == out[f"theory_{k}"])
    assert np.all(out["max_epsilon_1"] <= out["limit_epsilon_1"])
    assert np.all(out["epsilon_spent"] <= 10.0 * (1 + 1e-3))
    # the excess is of the unsmoothed F, at most its trivial value L·diam
    assert np.all((out["excess"] >= 0) & (out["excess"] <= 4.0))
    assert np.allclose(out["privacy_share"], 1 - out["nonprivate_excess"] / out["excess"])
    assert lad_values(_POINT) == {"n": 2048, "m": 2, "d": 2, "epsilon": 10.0, "delta": 1e-6,
                                  "L": 1.0, "R": 4.0}


def test_control_differs_from_the_private_run_only_by_the_noise():
    """The control is the same algorithm without Gaussian noise on the same draws: re-running
    the private run with noise=False from the same generators reproduces the control's excess."""
    g = _rngs(1)[0]
    out = run_ns_risk(_POINT, [g])
    data_rng, alg_rng, _noise, smooth_rng = _rngs(1)[0].spawn(4)
    base = LadUsers(2048, 2, 2, data_rng)
    r = smoothing_radius(2048, 2, 2, 10.0)
    ref = accelerated_phased_erm(SmoothedUserData(base, r, smooth_rng), 10.0, 1e-6, alg_rng,
                                 noise=False, nonsmooth_T=True, mode="rates", c_T=0.05,
                                 c_K1=0.05, c_K2=1.0, max_phases=int(out["phases"][0]))
    assert float(base.excess(ref.x)[0]) == pytest.approx(float(out["nonprivate_excess"][0]))


def test_max_phases_truncates_the_schedule_and_is_validated():
    data = LadUsers(2048, 2, 2, np.random.default_rng(0))
    sm = SmoothedUserData(data, 0.01, np.random.default_rng(1))
    full = accelerated_phased_erm(sm, 10.0, 1e-6, np.random.default_rng(2), noise=False,
                                  nonsmooth_T=True, c_T=0.05, c_K1=0.05)
    assert len(full.info["schedule"]) >= 2
    one = accelerated_phased_erm(sm, 10.0, 1e-6, np.random.default_rng(2), noise=False,
                                 nonsmooth_T=True, c_T=0.05, c_K1=0.05, max_phases=1)
    assert len(one.info["schedule"]) == 1 and len(one.phases) == 1
    with pytest.raises(ValueError, match="max_phases"):
        accelerated_phased_erm(sm, 10.0, 1e-6, np.random.default_rng(2), noise=False,
                               nonsmooth_T=True, max_phases=0)


def test_sweeps_are_full_grid_only_and_record_their_schedule_constant():
    for eid in ("userlevel.ns.risk.n", "userlevel.ns.risk.m", "userlevel.ns.risk.eps",
                "userlevel.ns.risk.eps.control"):
        exp = registry.get(eid)
        assert exp.full_only and exp.fixed["c_T"] == 0.3 and exp.fixed["d"] == 2
