"""KAN paper, Theorem 4.1 / C.13 (and D.14 at λ = 0) in T and B of a private run (empirical.papers.kan.private_tb):
the grids stay inside Theorem F.12's conditions, the bound is evaluated at the κ the run used,
and the run's paired κ = 0 row shares its data and batches."""
from __future__ import annotations

import numpy as np
import pytest

import empirical.papers.kan  # noqa: F401  (registers the experiments)
from algorithms.kan.correlated_noise import calibrate, f12_conditions
from empirical.core import experiment as registry
from empirical.papers.kan import private_tb

F12_IDS = ("kan.private.T", "kan.private.B")
IDS = F12_IDS + ("kan.private.d9.T", "kan.private.d9.B")


@pytest.mark.parametrize("eid", F12_IDS)
def test_every_grid_point_is_inside_f12s_conditions(eid):
    e = registry.get(eid)
    for v in set(e.quick_grid) | set(e.full_grid):
        p = e.point(v)
        vals = e.bound_values(p)
        assert f12_conditions(vals["T"], vals["B"], vals["n"], p["epsilon"], vals["delta"]) is None


@pytest.mark.parametrize("eid", IDS)
def test_the_bound_carries_the_kappa_the_calibration_sets(eid):
    e = registry.get(eid)
    for v in e.quick_grid:
        p = e.point(v)
        vals = e.bound_values(p)
        priv = calibrate(p["epsilon"], vals["delta"], lam=p["lam"], T=vals["T"], n=vals["n"],
                         B=vals["B"], sampler="fresh",
                         calibration=private_tb._calibration(p["lam"]))
        assert vals["noise_multiplier"] == pytest.approx(priv.noise_multiplier, rel=1e-9)
    kappas = [e.bound_values(e.point(v))["noise_multiplier"] for v in e.quick_grid]
    assert np.all(np.diff(kappas) > 0)      # κ is recalibrated along the sweep, growing with T, B


def test_a_point_outside_f12_is_refused():
    e = registry.get("kan.private.B")
    with pytest.raises(ValueError, match="F.12"):
        private_tb._run_private(e.point(20), [np.random.default_rng(0)] * 2)


def test_the_private_row_is_noisier_than_its_paired_noise_free_row():
    e = registry.get("kan.private.T")
    rows = e.run(e.point(64), [np.random.default_rng([3, r]) for r in range(2)])
    assert np.all(rows["noise_excess"] == rows["opt_risk"] - rows["opt_risk_nonprivate"])
    assert np.all(rows["opt_risk"] > rows["opt_risk_nonprivate"])
    assert np.allclose(rows["used_noise_multiplier"], rows["theory_noise_multiplier"], rtol=1e-9)
    assert np.all(rows["epsilon_spent"] <= rows["epsilon_guarantee"] * (1 + 1e-9))
