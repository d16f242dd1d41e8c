"""Direct risk experiments of the user-level SCO paper (empirical/papers/userlevel/risk.py): Algorithm 1's
excess risk in n (Theorem 2.1/B.1) and the user-level vs item-level gain in m (Theorem 3.2/C.3
against footnote 3's baseline).  Verdicts are asserted as declared; the controls below check,
from the same stored rows, which part of each measurement the slope comes from."""

import numpy as np
import pytest

from _open_verdicts import open_cases

from empirical.core import experiment as registry
from empirical.core.checks import analyse
from empirical.core.fitting import ols_slope
from empirical.run.runner import sweep

NEW_IDS = ("userlevel.alg1.risk.n", "userlevel.gain.m", "userlevel.fkt20.m")


@pytest.fixture(scope="module")
def swept(results_root):
    out = {}
    for i in NEW_IDS:
        exp = registry.get(i)
        rows = sweep(exp, results=results_root, workers=1)
        out[i] = (analyse(exp, rows), rows)
    return out


def _by_point(rows: list, var: str, key: str) -> dict:
    by: dict = {}
    for r in rows:
        by.setdefault(r[f"p_{var}"], []).append(r[key])
    return {v: np.asarray(x, float) for v, x in sorted(by.items())}


def _gmean_slope(rows: list, var: str, key: str) -> float:
    by = _by_point(rows, var, key)
    x = np.array(list(by))
    return ols_slope(x, np.array([np.exp(np.mean(np.log(v))) for v in by.values()]))[0]


@pytest.mark.parametrize("exp_id", open_cases(NEW_IDS))
def test_verdicts_as_declared(swept, exp_id):
    a, _ = swept[exp_id]
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    got = [(r.bound, r.kind, r.verdict) for r in a.results]
    want = [(c.bound, c.kind, c.expected_verdict) for c in a.experiment.checks]
    assert got == want, [r.message for r in a.results]
    assert len(a.kept) == len(a.experiment.quick_grid)


def test_alg1_risk_finding_is_its_n_free_noise_and_slow_localisation(swept):
    """Control for userlevel.alg1.risk.n's FINDING (UL-E24), from the coupled rows: the private
    and noise-free runs share every draw, so the excess splits into the privacy part
    ½‖x_priv − x_np‖² and the noise-free excess.  The privacy part does not fall with n
    (σ_1 is n-free, UL-E22) and the noise-free part falls well short of n^{−1/2}'s factor; a
    run that localised (η_iT_i ≫ 1) would make the noise-free part the sampling term and pass.
    Also: the rows are what the coupling needs (no halt, same keep sets, inside 𝒳)."""
    _, rows = swept["userlevel.alg1.risk.n"]
    assert not any(r["halted"] or r["halted_np"] for r in rows)
    assert all(r["keep_agree"] == 1 for r in rows)
    assert max(r["max_norm"] for r in rows) < 2.0          # 𝒳 = B(0, R/2 = 2): no projection
    priv = _gmean_slope(rows, "n", "privacy_excess")
    free = _gmean_slope(rows, "n", "nonprivate_excess")
    assert -0.2 < priv < 0.1, priv                           # measured −0.10
    assert -0.45 < free < -0.1, free                         # measured −0.25
    # the noise-free run keeps a large share of F(0) − F* = ½‖μ0‖² = 0.5: it has not localised
    np_by = _by_point(rows, "n", "nonprivate_excess")
    assert all(v.mean() > 0.3 * 0.5 for v in np_by.values())
    # the privacy part equals the schedule's propagated noise (exact in mean on this quadratic):
    # pooled over the grid, 12·4 χ²_16-like draws put the ratio within ±15%
    ratio = (np.mean([r["privacy_excess"] for r in rows])
             / np.mean([r["predicted_privacy_excess"] for r in rows]))
    assert 0.85 < ratio < 1.15, ratio


def test_gain_exists_from_m_2_20_and_comes_from_algorithm_3(swept):
    """userlevel.gain.m: paired per seed (same users), Algorithm 3 beats the user-as-item
    baseline from m = 2^20 on (the 95% t-interval of the mean log-gain lies below 0), and the
    gain comes from Algorithm 3's excess falling with m while the baseline's stays m-free
    (the non-circular control: a ratio could also fall because the baseline got worse)."""
    a, rows = swept["userlevel.gain.m"]
    lg = {v: np.log(x) for v, x in _by_point(rows, "m", "gain").items()}
    for v, x in lg.items():
        half = 2.2 * x.std(ddof=1) / np.sqrt(x.size)          # t_{0.975, 11} = 2.20
        if v >= 2 ** 20:
            assert x.mean() + half < 0, (v, x.mean(), half)
    assert _gmean_slope(rows, "m", "baseline_excess") == pytest.approx(0.0, abs=0.08)
    assert _gmean_slope(rows, "m", "excess") < -0.5
    for r in rows:
        assert not r["halted"] and not r["baseline_halted"]
        for p in ("", "baseline_"):
            assert r[f"{p}epsilon_guarantee"] == pytest.approx(r["p_epsilon"], rel=1e-3)
            assert r[f"{p}epsilon_spent"] <= r[f"{p}epsilon_guarantee"] * (1 + 1e-12)


def test_deterministic_counts_are_labelled_schedule_checks():
    """Every gradient-count sweep of the paper (metric ``grad_evals``: fixed by the schedule, CI
    width 0) declares itself a schedule check, in ``extra`` and in the description the report
    shows; the risk sweeps do not."""
    for exp in registry.experiments("userlevel"):
        is_count = exp.metric == "grad_evals"
        assert (exp.extra.get("check_type") == "schedule") == is_count, exp.id
        assert exp.description.startswith("Schedule check") == is_count, exp.id


def test_fkt20_group_privacy_budget_and_accounting():
    """Group privacy over m items: (ε/m, δ') item-level with δ' = δ/(m e^{(m−1)ε/m}) gives
    user-level (ε, δ); m = 1 is the identity.  The calibrated noise reaches the item-level
    target from below (dp-accounting PLD), so the reported user-level ε is the target to 1e-3
    and never above it; bad input raises ValueError naming the parameter."""
    from algorithms.userlevel.fkt20 import (calibrate_item_gaussian, fkt20_group_privacy_erm,
                                             group_item_budget, item_epsilon)
    from empirical.papers.userlevel.problems import QuadraticUsers

    assert group_item_budget(2.0, 1e-6, 1) == (2.0, 1e-6)
    e, dl = group_item_budget(8.0, 1e-10, 256)
    assert e == pytest.approx(8.0 / 256)
    assert 256 * np.exp(255 * e) * dl == pytest.approx(1e-10)
    z = calibrate_item_gaussian(e, dl)
    assert item_epsilon(z, dl) <= e and item_epsilon(z * 0.999, dl) > item_epsilon(z, dl)
    # the bisection starts at the exact multiplier (Balle–Wang): the PLD's pessimistic ε is
    # above the exact one there, and its calibrated z lies within 0.2% above it
    from algorithms.userlevel.fkt20 import exact_item_multiplier
    z_star = exact_item_multiplier(e, dl)
    assert item_epsilon(z_star, dl) >= e * (1 - 1e-4) and z_star <= z <= z_star * 1.002
    rng = np.random.default_rng(np.random.SeedSequence(3))
    data = QuadraticUsers(256, 64, 4, rng)
    res = fkt20_group_privacy_erm(data, 4.0, 1e-8, rng)
    p = res.privacy
    assert p.guarantee_epsilon <= 4.0 and p.guarantee_epsilon == pytest.approx(4.0, rel=1e-3)
    assert p.spent_epsilon == p.guarantee_epsilon and p.guarantee_delta == pytest.approx(1e-8)
    # each phase uses disjoint users and evaluates all their items once (one ERM step)
    assert res.grad_evals == sum(ph["n_i"] for ph in res.phases) * 64
    assert fkt20_group_privacy_erm(data, 4.0, 1e-8, rng, noise=False).privacy.spent_epsilon == 0
    with pytest.raises(ValueError, match="epsilon"):
        fkt20_group_privacy_erm(data, 0.0, 1e-8, rng)
    with pytest.raises(ValueError, match="delta"):
        fkt20_group_privacy_erm(data, 1.0, 1.5, rng)


def test_fkt20_excess_is_its_noise_and_does_not_gain_from_m(swept):
    """Control for userlevel.fkt20.m: the excess is the output noise (the coupled noise-free run
    of the same data keeps < 1% of it), so its flat m-slope is the m-free noise of group
    privacy, not an optimisation floor; and Algorithm 3 on the same instance (the rows of
    userlevel.gain.m, m up to 2^24) does better than this baseline from m = 2^22 on.  (At 2^20
    it does not: 0.0086 against the baseline's m-free 0.0078 since the baseline's PLD prices
    its replace-one sensitivity, UL-E28; the crossover interpolates to m ≈ 1.2·10⁶.)"""
    _, rows = swept["userlevel.fkt20.m"]
    for r in rows:
        assert r["nonprivate_excess"] < 0.01 * r["excess"], r
        assert r["epsilon_guarantee"] <= r["p_epsilon"]
        assert r["delta_guarantee"] == pytest.approx(r["p_delta"])
    fkt = np.exp(np.mean(np.log([r["excess"] for r in rows])))
    _, gain_rows = swept["userlevel.gain.m"]
    alg3 = _by_point(gain_rows, "m", "excess")
    for v, x in alg3.items():
        if v >= 2 ** 22:
            assert np.exp(np.mean(np.log(x))) < fkt, (v, fkt)
