"""[AL24] as the user-level SCO paper (Lowy, Liu, Asi, §1 and §3) describes it: full-batch outlier
removal with Gaussian noise on the inliers' mean, gradient descent inside Algorithm 3's phases
(algorithms.userlevel.alg3.al24_phased_gd, experiment userlevel.al24.m)."""
import copy
import math

import numpy as np
import pytest

from algorithms.userlevel import sco as ul
from empirical.core import experiment as registry
from empirical.papers.userlevel.problems import QuadraticUsers

N, M, D, EPS, DL = 4096, 16384, 16, 8.0, 1e-10


def _rngs(seed: int):
    return np.random.default_rng([seed, 24]).spawn(3)


def test_schedule_uses_every_user_and_the_condition_number():
    """K_i = n_i (no minibatches) and T_i = ⌈1 + β/λ_i⌉ (GD), against Algorithm 3's
    ⌈1 + √(β/λ_i)⌉ on minibatches; the count Σ T_i n_i m is [AL24]'s β(nm)^{3/2}·R/L up to the
    first phase's share n_1/n and its 2^p."""
    L, R, beta = 4.0, 4.0, 1.0
    tau, gd = ul.alg3_schedule(N, M, D, EPS, DL, L, R, beta, c_K1=36.0, solver="gd")
    _, acsa = ul.alg3_schedule(N, M, D, EPS, DL, L, R, beta, c_K1=36.0)
    assert gd and all(p.K_i == p.n_i for p in gd)
    for p in gd:
        assert p.T_i == math.ceil(1 + beta / p.lambda_i)
    assert gd[0].T_i > 10 * acsa[0].T_i
    count = sum(p.T_i * p.K_i for p in gd) * M
    claim = beta * (N * M) ** 1.5 * R / L
    # λ_1 = λ2^p (p = 4 + log_n √m) and n_1 ≈ 0.21n: the first phase carries the count, so
    # count/claim ≈ (n_1/n)/2^p (λ's √d/(εn√m) term and the later phases add < 10%)
    p = 4.0 + math.log(math.sqrt(M)) / math.log(N)
    assert count / claim == pytest.approx(gd[0].n_i / N / 2 ** p, rel=0.1)
    with pytest.raises(ValueError, match="solver"):
        ul.alg3_schedule(N, M, D, EPS, DL, L, R, beta, solver="sgd")


def test_privacy_and_noise_drive_the_excess():
    """The guarantee is the target, the spend within it; the noise-free run on the same draws
    (the control) is ≥ 1000 times closer to x*, so the swept excess is the privacy noise's."""
    data_rng, alg_rng, noise_rng = _rngs(1)
    data = QuadraticUsers(N, M, D, data_rng)
    ref_rng = copy.deepcopy(alg_rng)
    res = ul.al24_phased_gd(data, EPS, DL, alg_rng, noise_rng=noise_rng, c_K1=36.0)
    ref = ul.al24_phased_gd(data, EPS, DL, ref_rng, noise=False, c_K1=36.0)
    assert not res.halted and res.privacy is not None
    assert res.privacy.guarantee_epsilon == pytest.approx(EPS, rel=1e-3)
    assert res.privacy.spent_epsilon <= res.privacy.guarantee_epsilon * (1 + 1e-9)
    ex, ex0 = float(data.excess(res.x)[0]), float(data.excess(ref.x)[0])
    assert ex > 1000 * ex0
    assert ex < 0.5 * float(data.excess(np.zeros(D))[0])       # not saturated at F(0) − F*


def test_experiment_is_declared_against_its_own_claim():
    exp = registry.get("userlevel.al24.m")
    assert exp.fixed["algorithm"] == "al24"
    kinds = {(c.bound, c.kind) for c in exp.checks}
    assert ("userlevel:thm3.2_privacy", "one-sided") in kinds
    assert ("userlevel:trivial_sc_privacy", "reject") in kinds


def _audit(name: str, trials: int):
    from empirical.privacy import audit
    target = {t.name: t for t in audit.targets(["userlevel"])}[name]
    return audit.run_audit(target, trials=trials)


def test_audit_catches_al24_without_outlier_removal():
    """The broken control: every user kept, noise still calibrated to Lemma C.2's concentrated
    sensitivity; the canary at ±L·e1 moves each release far beyond it (ε_lo ≈ 3.6 > 2 at 300
    runs per side)."""
    r = _audit("userlevel.al24.no_outlier_removal", 300)
    assert r.verdict == "CAUGHT" and r.audited > r.claimed


@pytest.mark.slow
def test_al24_audit_is_private_at_its_own_trials():
    r = _audit("userlevel.al24.stepwise", 2_000)
    assert r.ok and r.audited <= r.claimed
    assert r.claimed == pytest.approx(EPS / 4, rel=1e-3)        # ALG3's ε = 2
