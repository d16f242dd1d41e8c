"""Second routes of the user-level calibrations (empirical/papers/userlevel/routes.py) and the
[FKT20] group-privacy baseline's audit (empirical/papers/userlevel/audit_fkt20.py)."""
import math

import numpy as np
import pytest

from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE
from algorithms.userlevel import accounting as acc
from empirical.papers.userlevel import routes


@pytest.mark.parametrize("z,count,delta", [(0.8, 1, 1e-5), (3.0, 4, 1e-3), (12.0, 1, 1e-12)])
def test_exact_route_matches_a_tight_pld_and_stays_below_rdp(z, count, delta):
    """The closed form (Balle–Wang, log space) against dp-accounting's PLD of the same pair
    (tight up to its 1e-4 grid), and below the RDP bound the algorithms' accountant reports."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    d = pld.from_gaussian_mechanism(z / math.sqrt(count), value_discretization_interval=1e-4,
                                    neighboring_relation=ADD_OR_REMOVE_ONE)
    exact = routes.exact_gaussian_epsilon(z, count, delta)
    assert abs(exact - d.get_epsilon_for_delta(delta)) < 5e-4
    assert exact < acc.gaussian_epsilon(z, count, delta)


@pytest.mark.parametrize("z,count,delta", [(0.9, 1, 5e-4), (4.0, 3, 5e-4), (30.0, 40, 1e-6)])
def test_rdp_route_reproduces_the_accountant(z, count, delta):
    assert routes.rdp_gaussian_epsilon(z, count, delta) == pytest.approx(
        acc.gaussian_epsilon(z, count, delta), rel=routes.ROUTE_RTOL)


def test_route_columns_fail_an_accountant_that_under_reports():
    """The settings verdict reads max_ ≤ limit_: an ε reported at half its value (the
    accountant mutants' bug) breaks both the RDP-route gap and the exact-over-RDP bound."""
    z, T, dl = 2.0, 3, 5e-4
    ok = routes.gaussian_route_columns("g", z, T, dl, acc.gaussian_epsilon(z, T, dl))
    bad = routes.gaussian_route_columns("g", z, T, dl, 0.5 * acc.gaussian_epsilon(z, T, dl))
    for cols, want in ((ok, True), (bad, False)):
        holds = all(cols[f"max_{x}"] <= cols[f"limit_{x}"] * (1 + 1e-9)
                    for x in ("g_rdp_route_gap", "g_exact_over_rdp"))
        assert holds is want


@pytest.mark.parametrize("T,eps_g,dl_g", [(15, 4.0, 5e-11), (3, 8.0, 1e-10), (2, 0.5, 1e-6)])
def test_multiplier_route_holds_the_calibration_and_catches_a_halved_count(T, eps_g, dl_g):
    """The algorithms' calibration search (unsampled: the two-sided case) is within the route's
    limit of √T·z₁; under the mutant whose accountant composes ⌊T/2⌋ releases the multiplier it
    finds is √(T/⌊T/2⌋) off, far outside (the settings verdict reads max_ ≤ limit_)."""
    from empirical.papers.userlevel import mutants as ul_mutants  # noqa: F401  (registers)
    from empirical.privacy import mutants

    def holds(z):
        cols = routes.multiplier_route_columns("g", z, T, dl_g, eps_g, amplified=False)
        return cols["max_g_multiplier_route_gap"] <= cols["limit_g_multiplier_route_gap"] * (
            1 + 1e-9)

    assert holds(acc.calibrate_gaussian.__wrapped__(eps_g, T, dl_g))
    with mutants.applied(mutants.get_mutant("userlevel.accountant_count_halved")):
        z_bad = acc.calibrate_gaussian.__wrapped__(eps_g, T, dl_g)
    assert not holds(z_bad)
    # amplified (one-sided): a smaller multiplier is allowed, a larger one is not
    z1 = routes.composed_gaussian_multiplier(eps_g, T, dl_g)
    one_sided = routes.multiplier_route_columns("g", 0.5 * z1, T, dl_g, eps_g, amplified=True)
    assert one_sided["max_g_multiplier_route_gap"] < 0
    with pytest.raises(ValueError, match="count"):
        routes.composed_gaussian_multiplier(eps_g, 0, dl_g)


def test_pld_route_catches_the_replace_one_doubling():
    """UL-E28: dp-accounting's Gaussian PLD under REPLACE_ONE shifts by twice the sensitivity
    given; priced that way, [FKT20]'s ε' is 2–3× the exact one and the route fails, while the
    accounting in use (ADD_OR_REMOVE_ONE at the replace-one Δ) is within its grid."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    from algorithms.userlevel.fkt20 import item_epsilon

    z, dl = 6.0, 1e-6
    doubled = pld.from_gaussian_mechanism(z, value_discretization_interval=1e-4,
                                          neighboring_relation=REPLACE_ONE
                                          ).get_epsilon_for_delta(dl)
    bad = routes.pld_route_columns("item", z, dl, doubled)
    assert bad["max_item_pld_over_exact"] > 100 * bad["limit_item_pld_over_exact"]
    good = routes.pld_route_columns("item", z, dl, item_epsilon(z, dl))
    assert good["max_item_pld_over_exact"] <= good["limit_item_pld_over_exact"]
    assert good["max_item_pld_under_exact"] <= good["limit_item_pld_under_exact"]


def test_above_threshold_route():
    eps = 2.0
    cols = routes.above_threshold_columns(2.0, 8.0 / eps, 16.0 / eps, eps / 2.0)
    assert cols["max_at_route_gap"] <= cols["limit_at_route_gap"]
    # the query-noise slip Lap(2Δ/ε) (scale 8/ε at budget ε/2) buys 1.5× the budget
    assert routes.above_threshold_columns(2.0, 8.0 / eps, 8.0 / eps, eps / 2.0)[
        "at_epsilon_route"] == pytest.approx(1.5 * eps / 2.0)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="z must be"):
        routes.exact_gaussian_epsilon(0.0, 1, 1e-5)


def test_fkt20_mutants_and_audits_are_registered():
    from empirical.papers.userlevel import audit  # noqa: F401  (registers)
    from empirical.privacy import mutants
    from empirical.privacy.audit import get_target

    m = mutants.get_mutant("userlevel.fkt20.add_remove_sensitivity")
    assert m.bug_class == "relation factor slipped"
    assert get_target(m.audits[0]).expect == "private"
    assert get_target(m.name).expect == "broken"
    t = get_target("userlevel.fkt20.final")
    assert t.expect == "private" and len(t.candidates) >= 4


def test_fkt20_batched_release_moves_by_the_group_sensitivity():
    """The batched release runs the unmodified algorithm on n rows at once: on the phase-1
    extreme pair the score's mean gap (D′ − D: the canary's gradient flips from +L·e1 to −L·e1) is the whole user's move m·Lη_1 (m items, each Lη_1), and
    its std is σ_1·√(1 + Σ 16^{−(i−1)}) — checked at a cheap multiplier by patching the
    calibration (the law, not the calibration, is under test)."""
    from algorithms.userlevel import fkt20
    from empirical.papers.userlevel import audit_fkt20 as af

    orig = fkt20.calibrate_item_gaussian
    fkt20.calibrate_item_gaussian = lambda e, d: 3.0
    try:
        rel = af._release(*af.FKT20_CANDIDATES["phase1.extreme"])
        rng = np.random.default_rng(5)
        s0, s1 = rel(0, rng, 40_000), rel(1, rng, 40_000)
        res = fkt20.fkt20_group_privacy_erm(af._data(0, 1.0, np.array([1.0, 0.0]), 0),
                                            af.FKT20["epsilon"], af.FKT20["delta"],
                                            np.random.default_rng(0))
    finally:
        fkt20.calibrate_item_gaussian = orig
    p1 = res.phases[0]
    spread = math.sqrt(1 + sum(16.0 ** -(i - 1) for i in range(2, len(res.phases) + 1)))
    shift = af.FKT20["m"] * af.FKT20["L"] * p1["eta_i"]
    sd = p1["sigma_i"] * spread
    assert abs((s1.mean() - s0.mean()) - shift) < 5 * sd * math.sqrt(2 / 40_000)
    assert s0.std() == pytest.approx(sd, rel=0.03)


@pytest.mark.slow
def test_fkt20_audit_and_its_control():
    """The honest target stays below its claim, with the exact ε recomputed independently; the
    add/remove control is caught (≈ 25 s CPU: the item-level PLD calibration)."""
    from empirical.papers.userlevel import audit  # noqa: F401
    from empirical.privacy.audit import get_target, run_audit

    honest = run_audit(get_target("userlevel.fkt20.final"), trials=20_000)
    assert honest.verdict == "OK" and honest.exact < honest.claimed
    assert run_audit(get_target("userlevel.fkt20.add_remove_sensitivity")).verdict == "CAUGHT"
