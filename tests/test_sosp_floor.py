"""SOSP paper, the returned point where the noise sets its gradient (empirical/papers/sosp/floor.py)
and Theorem 3's curvature on m clients (empirical/papers/sosp/output.py): data-free checks of the
declarations — Lemma 7's bound in ``bounds/`` against the algorithm's own noise formula, the
floor design's threshold below its noise, the frozen control's batches — and one small run of
the m-client saddle family.  The full grids run with ``-m slow`` (tests/test_full_only.py)."""
import math

import numpy as np
import pytest

import bounds
from algorithms.sosp.plan import design_noise
from empirical.core import experiment as registry
from empirical.papers.sosp import experiments  # noqa: F401  (registers the paper)
from empirical.papers.sosp.common import problem, rate_values
from empirical.papers.sosp.floor import C_CHI_FLOOR, lem7_values
from empirical.papers.sosp.output import run_output_family
from empirical.papers.sosp.rates import rate_design


def test_lem7_bound_is_the_design_noise_at_the_classical_multiplier():
    """``sosp:lem7_noise`` at the frozen plan's b1, b2, κ and
    :func:`algorithms.sosp.plan.design_noise` (the plan's own Lemma 7) are two writings of ψ:
    equal at the classical multiplier z = √(log_delta)/(2ε) that log_delta encodes, up to the
    rounding of b1 to an integer (≤ 1/b1 ≈ 0.2%)."""
    exp = registry.get("sosp.out.floor.eps_frozen")
    pt = exp.point(2.0)
    prob = problem(pt)
    des, plan = rate_design(pt, prob, int(pt["n"]))
    for eps in (1.0, 2.82843, 8.0):
        vals = lem7_values(exp.point(eps))
        assert (vals["b1"], vals["b2"], vals["kappa_drift"]) == (plan.b1, plan.b2, plan.kappa)
        z = math.sqrt(vals["log_delta"]) / (2.0 * vals["epsilon"])
        psi = design_noise(des.alpha, des.kappa, n=int(pt["n"]), d=16, m=1, z=z,
                           G_sens=prob.G_sens, M_sens=prob.M_sens, M=prob.M, U=prob.U,
                           hessian_lipschitz=prob.hessian_lipschitz)
        assert bounds.get("sosp:lem7_noise")(**vals) == pytest.approx(psi, rel=5e-3)


@pytest.mark.parametrize("exp_id", ["sosp.out.floor.n", "sosp.out.floor.eps",
                                    "sosp.out.floor.eps_frozen"])
def test_floor_threshold_is_below_the_noise(exp_id):
    """The floor design asks for an accuracy the noise does not allow: 3χ = 3c_χψ_design with
    c_χ = 0.05, so 3χ/ψ_design = 0.15 at both ends of every full grid (the rate design's
    is 4.5)."""
    exp = registry.get(exp_id)
    assert exp.full_only and exp.fixed["c_chi"] == C_CHI_FLOOR
    for v in (exp.full_grid[0], exp.full_grid[-1]):
        pt = exp.point(v)
        pt = {**pt, "epsilon": pt.get("plan_epsilon", pt["epsilon"])}
        des, plan = rate_design(pt, problem(pt), int(pt["n"]))
        assert 3 * plan.chi / des.psi == pytest.approx(3 * C_CHI_FLOOR, rel=1e-9)


def test_frozen_control_holds_the_plan_and_moves_only_the_noise():
    exp = registry.get("sosp.out.floor.eps_frozen")
    vals = [lem7_values(exp.point(e)) for e in exp.full_grid]
    assert len({(v["b1"], v["b2"], v["kappa_drift"]) for v in vals}) == 1
    eps = [v["epsilon"] for v in vals]
    assert eps == sorted(eps) and eps[0] < eps[-1]
    assert rate_values(exp.point(1.0))["n"] == 1e6


def test_family_runs_on_m_clients_with_the_plan_of_its_m():
    """The saddle family at m = 2: each client draws its own records and noise (Algorithm 3),
    the plan is Theorem 3's at m = 2 (or the frozen one's m), the settings verdict's pairs agree."""
    pt = {**registry.get("sosp.out.curv.dist.eps").point(4.0), "n": 3000, "m": 2,
          "gamma_points": 3}
    rngs = [np.random.default_rng(np.random.SeedSequence([11, i])) for i in range(2)]
    out = run_output_family(pt, rngs)
    assert np.all(out["plan_m"] == 2)
    assert np.array_equal(out["used_b1"], out["theory_b1"])
    assert np.array_equal(out["used_Gamma"], out["theory_Gamma"])
    frozen = run_output_family({**pt, "plan_m": 1}, rngs)
    assert np.all(frozen["plan_m"] == 1) and frozen["b1"][0] != out["b1"][0]
