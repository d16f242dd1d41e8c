"""[48] = WYX17's noisy gradient descent under PL, the prior algorithm the KL paper compares with
(algorithms/kl/wyx17.py, empirical/papers/kl/prior.py): its privacy is exactly ρ from the noise it
draws, one step at a Hessian L1·I lands at w* − ξ/L1 (the level band's instance formula), and its
experiments come out as declared."""
import math

import numpy as np
import pytest

from algorithms.kl.wyx17 import wyx17_noisy_gd, wyx17_pl_steps, wyx17_stationary_steps
from empirical.core import experiment as registry
from empirical.core.checks import analyse
from empirical.papers.kl import experiments as kl_condition  # noqa: F401  (registers the paper)
from empirical.papers.kl.prior import pl_prediction, run_wyx17
from empirical.papers.kl.problems import make_problem
from empirical.run.runner import sweep
from _open_verdicts import open_cases

IDS = ["kl.wyx17.n", "kl.wyx17.epsilon", "kl.wyx17.d", "kl.wyx17.n.frozen"]


def _radial(n=1000, d=5):
    return make_problem({"problem": "radial", "p": 2.0, "c": 1.0, "B": 1.0, "n": n, "d": d})


def _gens(k, seed=0):
    return [np.random.default_rng([seed, i]) for i in range(k)]


def test_privacy_is_rho_from_the_noise_drawn():
    prob = _radial()
    res = wyx17_noisy_gd(prob, rho=0.3, w0=prob.start(), L0=prob.L0, L1=prob.L1, T=7,
                         rng=_gens(2))
    assert res.privacy.rho == pytest.approx(0.3, rel=1e-9)
    assert res.privacy.guarantee_rho == pytest.approx(0.3, rel=1e-9)
    assert res.info["sigma"] == pytest.approx((2 * prob.L0 / prob.n) * math.sqrt(7 / 0.6))
    doubled = wyx17_noisy_gd(prob, rho=0.3, w0=prob.start(), L0=prob.L0, L1=prob.L1, T=7,
                             rng=_gens(2), noise_factor=2.0)
    assert doubled.privacy.rho == pytest.approx(0.3 / 4, rel=1e-9)


def test_one_step_at_hessian_L1_lands_at_minus_noise_over_L1():
    prob = _radial(d=3)
    g = np.random.default_rng(5)
    res = wyx17_noisy_gd(prob, rho=1.0, w0=prob.start(), L0=prob.L0, L1=prob.L1, T=1,
                         rng=np.random.default_rng(5))
    xi = g.standard_normal((1, 3))[0] * res.info["sigma"]
    np.testing.assert_allclose(res.w, -xi / prob.L1, atol=1e-15)


def test_rows_are_independent_of_the_batch_and_random_output_is_an_iterate():
    prob = _radial(d=4)
    kw = dict(rho=0.5, w0=prob.start(), L0=prob.L0, L1=prob.L1, T=5)
    both = wyx17_noisy_gd(prob, rng=_gens(3), **kw).w
    alone = wyx17_noisy_gd(prob, rng=_gens(3)[1:2], **kw).w
    np.testing.assert_array_equal(both[1], alone[0])
    rand = wyx17_noisy_gd(prob, rng=_gens(3), output="random", **kw)
    assert set(rand.info["picks"]) <= set(range(1, 7))
    last = rand.info["picks"] == 6
    np.testing.assert_array_equal(rand.w[last], both[last])


def test_bad_input_names_the_parameter():
    prob = _radial()
    kw = dict(rho=0.5, w0=prob.start(), L0=prob.L0, L1=prob.L1, T=3, rng=_gens(1))
    with pytest.raises(ValueError, match="output"):
        wyx17_noisy_gd(prob, **{**kw, "output": "best"})
    with pytest.raises(ValueError, match="noise_factor"):
        wyx17_noisy_gd(prob, **{**kw, "noise_factor": -1.0})
    with pytest.raises(ValueError, match="rho"):
        wyx17_noisy_gd(prob, **{**kw, "rho": 0.0})
    with pytest.raises(ValueError, match="mu"):
        wyx17_pl_steps(100, 2, 1.0, 1.0, 0.0)


def test_step_counts():
    assert wyx17_pl_steps(1000, 10, 1.0, 8.0, 0.5) == math.ceil(2 * 16 * math.log(1e5))
    assert wyx17_stationary_steps(10000, 4, 0.25) == 2500


def test_the_instance_formula_is_the_mean_excess_on_the_quadratic():
    point = {"problem": "radial", "p": 2.0, "c": 1.0, "B": 1.0, "n": 30000, "d": 20,
             "epsilon": 1.0}
    out = run_wyx17(point, _gens(400, seed=3))
    assert out["excess"].mean() == pytest.approx(pl_prediction(point), rel=0.05)
    assert out["rho_guarantee"][0] == pytest.approx(out["rho_target"][0], rel=1e-9)


@pytest.fixture(scope="module")
def analyses(results_root):
    return {i: analyse(registry.get(i), sweep(registry.get(i), results=results_root, workers=1))
            for i in IDS}


@pytest.mark.parametrize("exp_id", open_cases(IDS))
def test_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    for r in a.results:
        want = {"reject": ("REJECTED", "REFERENCE")}.get(r.kind, ("PASS",))
        assert r.verdict in want, r.message
