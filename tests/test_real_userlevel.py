"""The user-level paper on real data (empirical/papers/real/userlevel.py): the logistic users problem
(gradients against finite differences, the population optimum), the privacy columns, and the
recorded findings on a small configuration."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

from algorithms.userlevel.sco import alg3_schedule  # noqa: E402
from empirical.papers.real import userlevel as ru  # noqa: E402
from empirical.core.checks import analyse  # noqa: E402
from empirical.run.runner import seed_generators  # noqa: E402


def test_population_in_unit_ball_and_optimum():
    A, y = ru.population()
    assert np.linalg.norm(A, axis=1).max() <= 1 + 1e-12
    assert set(np.unique(y)) == {0.0, 1.0}
    F_star, x_star = ru.population_optimum()
    assert np.linalg.norm(x_star) <= ru.RADIUS * (1 + 1e-12)
    # first-order optimality on the ball: no feasible descent direction
    z = A @ x_star
    g = A.T @ (1 / (1 + np.exp(-z)) - y) / len(y)
    x_try = x_star - 0.5 * g
    x_try *= min(1.0, ru.RADIUS / np.linalg.norm(x_try))
    assert ru.population_loss(x_try) >= F_star - 1e-10


def test_user_gradients_match_finite_differences():
    data = ru.LogisticUsers(np.arange(12).reshape(4, 3))
    rng = np.random.default_rng(0)
    x = 0.3 * rng.standard_normal(data.d)
    A, y = ru.population()

    def user_loss(x, u):
        a = A[data.rows[u]]
        z = a @ x
        return np.mean(np.logaddexp(0, z) - y[data.rows[u]] * z)

    g = data.user_mean_gradients(x, np.array([2]))[0]
    h = 1e-6
    fd = np.array([(user_loss(x + h * e, 2) - user_loss(x - h * e, 2)) / (2 * h)
                   for e in np.eye(data.d)])
    assert np.max(np.abs(g - fd)) < 1e-8
    gi = data.item_gradients(np.tile(x, (3, 1)), np.array([2, 2, 2]), np.arange(3))
    assert np.allclose(gi.mean(axis=0), g)
    assert np.linalg.norm(gi, axis=1).max() <= ru.L_LIP


def _rows(exp, grid, seeds):
    rows = []
    for v in grid:
        p = exp.point(v)
        out = ru.run_userlevel(p, seed_generators(exp.id, p, seeds))
        for r in range(seeds):
            rows.append({"seed": r, **{f"p_{k}": val for k, val in p.items()},
                         **{k: float(c[r]) for k, c in out.items()}})
    return rows


def test_baseline_excess_is_flat_in_n_finding():
    """The recorded finding of real.userlevel.n on a small grid: the baseline's excess stays
    near F(0) − F*, and the noise-free schedule is as flat (optimisation, not privacy)."""
    exp = ru.USERLEVEL_N
    rows = _rows(exp, exp.quick_grid, 4)
    zero = rows[0]["excess_zero"]
    for r in rows:
        assert r["epsilon_guarantee"] == pytest.approx(r["epsilon_target"], rel=1e-3)
        assert r["epsilon_spent"] <= r["epsilon_guarantee"] * (1 + 1e-9)
        assert 0.8 * zero < r["excess_baseline"] <= 1.2 * zero
        assert r["excess_nonprivate"] > 0.8 * zero
        assert r["alg3_runnable"] == 0.0          # K_1 < the floor with a finite sensitivity
    a = analyse(exp, rows)
    assert not a.privacy_error, a.privacy_error
    assert exp.checks[0].expected_verdict == a.results[0].verdict == "FINDING"


def test_alg3_cannot_run_privately_for_m_at_least_3():
    """Under the corrected sensitivity (UL-E13/E14) no (n, m ≥ 3) with n·m ≤ 1797 gives
    Algorithm 3 a phase at ε = 10 (what limits real.userlevel.vs_baseline to m ≤ 2)."""
    A, _ = ru.population()
    for m in (3, 4, 8):
        n = len(A) // m
        _, phases = alg3_schedule(n, m, A.shape[1], 10.0, 1e-5, ru.L_LIP, 2 * ru.RADIUS, ru.BETA,
                                  c_K1=ru._FIXED["c_K1"])
        assert not phases, (m, phases)


def test_declarations():
    for exp in (ru.USERLEVEL_M, ru.USERLEVEL_N, ru.USERLEVEL_VS_BASELINE):
        assert exp.paper == "real" and exp.id.startswith("real.userlevel.")
        assert exp.fixed["epsilon"] <= 10 and exp.fixed["delta"] < 1 / 1797
    assert math.ceil(ru._FIXED["c_K1"] * math.log(1e5) / 10.0) == 40
