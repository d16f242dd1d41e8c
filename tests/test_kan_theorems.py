"""KAN paper: the pieces behind Corollary 5.6's schedule, the γ sweep (App. D.3 against Wang et
al.), the width columns, the declared unswept variables and the second route of the fresh-batch
tight calibration (Theorems F.8–F.12's truncation argument recomputed)."""
import math

import numpy as np
import pytest

from algorithms import privacy_pairs as pairs
from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE
from algorithms.kan import privacy as kp
from empirical.core.coverage import declared_reasons
from empirical.papers.kan import cor56, gamma, lam, problems, unswept  # noqa: F401


@pytest.mark.parametrize("lam_, n, B, steps, relation", [
    (0.5, 4000, 200, 199, "zero-out"), (0.7, 4000, 200, 199, "replace-one"),
    (0.0, 1000, 1000, 99, "replace-one"), (0.3, 2000, 100, 150, "replace-one")])
def test_fresh_truncation_route_agrees_with_the_accountant(lam_, n, B, steps, relation):
    rel = REPLACE_ONE if relation == "replace-one" else ADD_OR_REMOVE_ONE
    acc = kp.tight_epsilon(1.7, lam=lam_, steps=steps, n=n, B=B, sampler="fresh", delta=1e-5,
                           relation=rel, amplification=False)
    route = pairs.fresh_truncation_epsilon(1.7, lam_, steps, n, B, 1e-5, relation)
    assert abs(acc - route) / route < 1e-6


def test_route_catches_a_dropped_replace_one_factor():
    """κ calibrated for replace-one, then priced as zero-out (the ×2 dropped): the accountant's
    ε is far from the route's, so calibration_routes reports a gap far above its 1e-6 limit."""
    priv = kp.calibrate(1.0, 1e-5, lam=0.5, T=100, n=2000, B=100, sampler="fresh",
                        calibration="tight", tight_relation="replace-one")
    ok = lam.calibration_routes(priv, "tight", 0.5, 100, 2000, 100, "fresh", 1.0, 1e-5, 2)
    assert ok["max_epsilon_route_gap"][0] < ok["limit_epsilon_route_gap"][0]
    slipped = kp.calibrate(1.0, 1e-5, lam=0.5, T=100, n=2000, B=100, sampler="fresh",
                           calibration="tight", tight_relation="zero-out")
    # a zero-out κ under a replace-one label: what a dropped ×2 in the accountant would produce
    bad = lam.calibration_routes(
        type(priv)(**{**priv.__dict__, "noise_multiplier": slipped.noise_multiplier}),
        "tight", 0.5, 100, 2000, 100, "fresh", 1.0, 1e-5, 2)
    assert bad["max_epsilon_route_gap"][0] > 0.3


def test_block_sensitivity_is_the_first_block_and_checks_input():
    assert pairs.block_sensitivity_exact(0.6, 30, 5) == pytest.approx(
        kp.contiguous_block_sensitivity(0.6, 30, 5), rel=1e-12)
    with pytest.raises(ValueError, match="relation"):
        pairs.fresh_truncation_epsilon(1.0, 0.5, 10, 100, 10, 1e-5, "add")
    with pytest.raises(ValueError, match="lam"):
        pairs.fresh_truncation_epsilon(1.0, 1.0, 10, 100, 10, 1e-5)


def test_cor56_schedule_is_the_corollarys():
    s = cor56.cor56_schedule(400, 0.5)
    assert s["B"] == 10 and s["eta"] == pytest.approx(10 / 400)
    assert s["T"] == math.ceil(cor56.T_CONST * 400 ** 2 / (0.25 * 10))


def test_gamma_instance_has_margin_gamma_and_the_papers_width():
    g = 0.5
    sch = gamma.gamma_schedule(120, g, 0.5, 2)
    assert sch["m"] == 16 and sch["B"] == sch["T"] == 120 and sch["delta"] == pytest.approx(g / 120)
    assert sch["eta"] == pytest.approx(min(1.0, 0.5 / (g * math.sqrt(16 * 2))))
    inst = gamma.instance_at_margin(sch["m"], 2, 6, g)
    X, _ = inst.sample(200, np.random.default_rng(0))
    assert inst.gamma0 == g and np.abs(inst.score(X)).min() >= g
    with pytest.raises(ValueError, match="gamma"):
        gamma.instance_at_margin(16, 2, 6, 1.5)


def test_width_columns_and_unswept_declarations():
    inst = problems.make_instance(16, 5, 6, 0.95)
    w = problems.width_columns(inst, 3)
    assert w["width_m_gamma4"][0] == pytest.approx(16 * inst.gamma0 ** 4)
    assert w["width_m_gamma6"][0] == pytest.approx(16 * inst.gamma0 ** 6)
    reasons = declared_reasons()
    for key in (("kan:thm5.2", "noise_multiplier"), ("kan:thm5.2", "delta"),
                ("kan:thm4.1", "noise_multiplier")):
        assert reasons[key]
