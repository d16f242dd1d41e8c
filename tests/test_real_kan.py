"""KAN Figure 1 on breast_cancer (empirical/papers/real/kan.py), small configuration: paired λ rows,
privacy from dp-accounting per λ, the λ → 1 drop, and the non-private control (κ = 0: λ does
nothing, so any λ effect in the experiment comes from the noise the algorithm adds)."""
import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

from empirical.core import experiment as registry  # noqa: E402
from empirical.papers.real.kan import LAMBDAS, _data, run_kan  # noqa: E402
from empirical.run.runner import seed_generators, sweep  # noqa: E402
from empirical.core.checks import analyse  # noqa: E402
from _open_verdicts import open_cases

SMALL = {"m": 16, "p": 6, "T": 80, "B": 100, "eta": 10.0, "C_clip": 1.0, "delta": 1e-5,
         "test_fraction": 0.3, "calibration": 1, "epsilon": 16.0}


def test_small_run_is_private_paired_and_shows_the_drop_at_lambda_one():
    pt = dict(SMALL)
    out = run_kan(pt, seed_generators("test.real.kan", pt, 4))
    assert np.all(out["epsilon_guarantee"] == pytest.approx(16.0, rel=1e-3))
    assert np.all(out["epsilon_spent"] <= out["epsilon_guarantee"] * (1 + 1e-9))
    kap = [out[f"kappa_lam{v:g}"][0] for v in LAMBDAS]
    assert kap == sorted(kap)          # correlated noise is charged more κ, never less
    acc0, acc99 = out["acc_lam0"], out["acc_lam0.99"]
    assert np.all((0 <= acc0) & (acc0 <= 1))
    # ε = 16: λ = 0 learns (> majority) and λ = 0.99 (κ ≈ 30× larger) does not keep up
    assert acc0.mean() > out["majority_rate"][0] + 0.1
    assert (acc0 - acc99).mean() > 0.1


def test_without_noise_lambda_changes_nothing():
    """κ = 0 for every λ: the rows are identical, so λ acts only through the noise."""
    from algorithms.kan.correlated_noise import dp_sgd_correlated

    model, H, y, Ht, yt = _data(SMALL)
    gens = [np.random.default_rng(0), np.random.default_rng(1)]
    run = dp_sgd_correlated(model, H, y, T=20, eta=10.0, B=100, C_clip=1.0,
                            lam=np.array([0.0, 0.5, 0.99]), noise_multiplier=np.zeros(3),
                            R_star=math.inf, rng=gens, sampler="cyclic", rows_per_seed=3,
                            eval_every=20)
    W = run.W.reshape(2, 3, *run.W.shape[1:])
    assert np.array_equal(W[:, 0], W[:, 1]) and np.array_equal(W[:, 0], W[:, 2])


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", open_cases(["real.kan.lambda.paper", "real.kan.lambda.tight"]))
def test_quick_grid_verdicts_are_as_declared(exp_id, results_root):
    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, results=results_root))
    assert not a.privacy_error and not a.error
    assert [r.verdict for r in a.results] == [c.expected_verdict for c in exp.contrasts]
