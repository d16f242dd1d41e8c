"""algorithms.accounting agrees with dp-accounting and with the closed forms it names."""
import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import rdp

from algorithms import accounting as acc


@pytest.mark.parametrize("z, count", [(0.5, 1), (1.3, 10), (4.0, 1000)])
def test_zcdp_of_gaussian_composition_is_count_over_2z2(z, count):
    # Bun & Steinke Prop. 1.6/1.7: a Gaussian with multiplier z is 1/(2z²)-zCDP; composition adds.
    assert acc.zcdp_rho(acc.gaussian_event(z, count)) == pytest.approx(count / (2 * z * z), rel=1e-12)


def test_zcdp_of_heterogeneous_composition():
    zs = [0.7, 1.5, 3.0, 10.0]
    ev = acc.composed([acc.gaussian_event(z) for z in zs] + [acc.zcdp_event(0.25)])
    assert acc.zcdp_rho(ev) == pytest.approx(sum(1 / (2 * z * z) for z in zs) + 0.25, rel=1e-12)
    assert acc.zcdp_rho(acc.composed([])) == 0.0


@pytest.mark.parametrize("rho", [1e-3, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_accountant_epsilon_is_below_closed_form(rho, delta):
    eps_acc = acc.zcdp_to_epsilon(rho, delta)
    eps_cf = acc.zcdp_to_epsilon_closed_form(rho, delta)
    assert eps_cf == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    assert 0 < eps_acc <= eps_cf * (1 + 1e-9)
    # and it matches a fresh RdpAccountant composing the same zCDP event
    direct = rdp.RdpAccountant().compose(dpa.ZCDpEvent(rho)).get_epsilon(delta)
    assert eps_acc == pytest.approx(direct, rel=1e-12)


def test_epsilon_to_zcdp_inverts_closed_form():
    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (8.0, 1e-9)]:
        rho = acc.epsilon_to_zcdp_closed_form(eps, delta)
        assert acc.zcdp_to_epsilon_closed_form(rho, delta) == pytest.approx(eps, rel=1e-12)


def test_pure_dp_to_zcdp():
    assert acc.pure_dp_to_zcdp(0.3) == pytest.approx(0.045)


def test_noise_multiplier_for_zcdp_round_trip():
    for rho, k in [(0.1, 1), (1.0, 50), (0.01, 10_000)]:
        z = acc.noise_multiplier_for_zcdp(rho, k)
        assert acc.zcdp_rho(acc.gaussian_event(z, k)) == pytest.approx(rho, rel=1e-12)


def test_subsampled_gaussian_and_pld_tighter_than_rdp():
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)
    e_rdp = acc.epsilon(ev, 1e-5, relation=acc.ADD_OR_REMOVE_ONE)
    e_pld = acc.epsilon(ev, 1e-5, accountant="pld", relation=acc.ADD_OR_REMOVE_ONE)
    assert e_rdp == pytest.approx(1.712, abs=0.01)
    assert e_pld < e_rdp


def test_calibration_hits_target():
    make = lambda z: dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(z)), 1000)
    z = acc.calibrate_noise_multiplier(make, 1.0, 1e-5, relation=acc.ADD_OR_REMOVE_ONE)
    eps = acc.epsilon(make(z), 1e-5, relation=acc.ADD_OR_REMOVE_ONE)
    assert eps <= 1.0 + 1e-6 and eps > 0.98
    assert acc.epsilon(make(0.95 * z), 1e-5, relation=acc.ADD_OR_REMOVE_ONE) > 1.0


def test_privacy_spent_reports_accountant_values():
    spent = acc.PrivacySpent.from_event(acc.gaussian_event(2.0, 8), target_rho=1.0)
    assert spent.rho == pytest.approx(1.0)
    assert spent.epsilon(1e-5) <= acc.zcdp_to_epsilon_closed_form(1.0, 1e-5)


@pytest.mark.parametrize("call, name", [
    (lambda: acc.zcdp_to_epsilon_closed_form(0.0, 1e-5), "rho"),
    (lambda: acc.zcdp_to_epsilon_closed_form(1.0, 0.0), "delta"),
    (lambda: acc.zcdp_to_epsilon_closed_form(1.0, 1.0), "delta"),
    (lambda: acc.epsilon_to_zcdp_closed_form(-1.0, 1e-5), "epsilon"),
    (lambda: acc.epsilon_to_zcdp_closed_form(1.0, 1.5), "delta"),
    (lambda: acc.gaussian_event(0.0), "noise_multiplier"),
    (lambda: acc.gaussian_event(1.0, -1), "count"),
    (lambda: acc.noise_multiplier_for_zcdp(float("inf")), "rho"),
    (lambda: acc.calibrate_noise_multiplier(lambda z: dpa.GaussianDpEvent(z), 0.0, 1e-5), "target_epsilon"),
    (lambda: acc.epsilon(acc.gaussian_event(1.0), 1e-5, accountant="magic"), "accountant"),
])
def test_bad_parameters_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- privacy filter
def test_zcdp_filter_admits_until_budget_and_matches_accountant():
    f = acc.ZcdpFilter(1.0)
    zs = [3.0, 1.5, 2.0, 1.0, 0.8, 5.0]
    admitted = [z for z in zs if f.try_spend(acc.gaussian_event(z))]
    # 1/18 + 2/9 + 1/8 = 0.4028, then 1/2 → 0.9028; 1/(2·0.64) = 0.78 refused; 1/50 admitted
    assert admitted == [3.0, 1.5, 2.0, 1.0, 5.0]
    expected = sum(1 / (2 * z * z) for z in admitted)
    assert f.spent == pytest.approx(expected, rel=1e-12)
    assert f.spent == pytest.approx(acc.zcdp_rho(f.event), rel=1e-12)
    assert f.spent <= f.budget and f.remaining == pytest.approx(1.0 - expected)
    assert not f.can_afford(acc.gaussian_event(0.8))
    with pytest.raises(ValueError, match="budget"):
        f.spend(acc.gaussian_event(0.5))
    spent = f.privacy_spent(target_rho=1.0, note="x")
    assert spent.rho == f.spent and spent.details["note"] == "x"


def test_zcdp_filter_total_is_dp_accountings_bit_for_bit():
    """The filter sums dp-accounting's leaf curves itself (each new σ priced once, not again when
    composed); its total must be an RdpAccountant's after the same events, bit for bit, through
    repeated, self-composed and nested composed events under both relations."""
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp

    rng = np.random.default_rng(7)
    for relation in (acc.REPLACE_ONE, acc.ADD_OR_REMOVE_ONE):
        f = acc.ZcdpFilter(1e9, relation)
        ref = dpa_rdp.RdpAccountant(orders=acc.ZcdpFilter.ORDERS, neighboring_relation=relation)
        norm = acc.gaussian_event(3.7)
        for step in range(300):
            kind = step % 5
            if kind == 0:
                ev = norm                                    # the recurring (memoised) event
            elif kind == 1:
                ev = acc.gaussian_event(float(rng.uniform(0.3, 40.0)))
            elif kind == 2:
                ev = dpa.SelfComposedDpEvent(acc.gaussian_event(float(rng.uniform(1, 9))),
                                             int(rng.integers(2, 6)))
            elif kind == 3:
                ev = dpa.ComposedDpEvent([acc.zcdp_event(float(rng.uniform(1e-4, 0.1))), norm,
                                          dpa.SelfComposedDpEvent(norm, 3)])
            else:
                ev = acc.zcdp_event(float(rng.uniform(1e-5, 1e-2)))
            assert f.try_spend(ev)
            ref.compose(ev)
            assert np.array_equal(f.rdp, np.asarray(ref.rdp, dtype=float)), step
        assert f.spent == acc._rho_of_accountant(ref)


def test_zcdp_rho_is_the_accountants_bit_for_bit():
    """zcdp_rho sums memoised leaf curves itself for linear-RDP events; it must equal the
    RdpAccountant's max RDP(α)/α after composing the same event, bit for bit, through repeated,
    self-composed and nested composed events (Spider's shape) under both relations; events the
    fast path does not take (Laplace, sampled) still go to the accountant."""
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp

    rng = np.random.default_rng(11)
    for relation in (acc.REPLACE_ONE, acc.ADD_OR_REMOVE_ONE):
        for trial in range(60):
            leaves = [acc.gaussian_event(float(rng.uniform(0.2, 50.0)), int(rng.integers(1, 400)))
                      for _ in range(int(rng.integers(1, 6)))]
            leaves.append(acc.zcdp_event(float(rng.uniform(1e-6, 0.3))))
            nested = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.ComposedDpEvent(leaves), 3),
                                          leaves[0], dpa.NoOpDpEvent()])
            for ev in (leaves[0], dpa.ComposedDpEvent(leaves), nested):
                ref = dpa_rdp.RdpAccountant(neighboring_relation=relation).compose(ev)
                assert acc.zcdp_rho(ev, relation) == acc._rho_of_accountant(ref), (trial, ev)
                assert acc.zcdp_rho(ev, relation) == acc.zcdp_rho(ev, relation)   # memo hit
    sampled = dpa.PoissonSampledDpEvent(0.1, acc.gaussian_event(2.0))
    assert not acc._has_linear_rdp(sampled)
    ref = dpa_rdp.RdpAccountant(neighboring_relation=acc.ADD_OR_REMOVE_ONE).compose(sampled)
    assert acc.zcdp_rho(sampled, acc.ADD_OR_REMOVE_ONE) == acc._rho_of_accountant(ref)


def test_zcdp_filter_reserve_is_always_affordable():
    f = acc.ZcdpFilter(1.0)
    reserve = acc.zcdp_event(0.3)
    n = 0
    while f.try_spend(acc.gaussian_event(3.0), reserve):
        n += 1
    assert n == 12                                     # 12/18 + 0.3 ≤ 1 < 13/18 + 0.3
    f.spend(reserve)
    assert f.spent <= 1.0


def test_zcdp_filter_rejects_nonlinear_events_and_bad_budget():
    f = acc.ZcdpFilter(1.0)
    with pytest.raises(ValueError, match="event"):
        f.try_spend(dpa.LaplaceDpEvent(1.0))
    with pytest.raises(ValueError, match="budget"):
        acc.ZcdpFilter(0.0)


def test_guarantee_defaults_to_the_released_rho_and_bounds_it():
    fixed = acc.PrivacySpent.from_event(acc.gaussian_event(2.0, 8), target_rho=1.0)
    assert fixed.guarantee_rho == fixed.rho
    early = acc.PrivacySpent.from_event(acc.gaussian_event(2.0, 4), target_rho=1.0, guarantee_rho=1.0)
    assert early.rho == pytest.approx(0.5) and early.guarantee_rho == 1.0
    with pytest.raises(ValueError, match="guarantee_rho"):
        acc.PrivacySpent.from_event(acc.gaussian_event(2.0, 8), guarantee_rho=0.5)


def test_filter_reports_its_budget_as_the_guarantee():
    f = acc.ZcdpFilter(1.0, acc.REPLACE_ONE)
    f.spend(acc.gaussian_event(2.0, 2))
    spent = f.privacy_spent(target_rho=1.0)
    assert spent.rho == pytest.approx(0.25) and spent.guarantee_rho == 1.0
    assert spent.epsilon(1e-5) < spent.guarantee_epsilon(1e-5) == acc.zcdp_to_epsilon(1.0, 1e-5)


def test_pld_reads_the_noise_multiplier_under_the_claimed_relation():
    """A Gaussian event's multiplier is relative to the claimed relation's sensitivity: PLD
    (tight) must not exceed RDP under REPLACE_ONE, and both relations give the same ε."""
    from algorithms.accounting import ADD_OR_REMOVE_ONE, REPLACE_ONE, epsilon, gaussian_event
    ev = gaussian_event(7.67, 1)
    pld_rep = epsilon(ev, 1e-5, accountant="pld", relation=REPLACE_ONE)
    pld_add = epsilon(ev, 1e-5, accountant="pld", relation=ADD_OR_REMOVE_ONE)
    rdp_rep = epsilon(ev, 1e-5, accountant="rdp", relation=REPLACE_ONE)
    assert pld_rep == pytest.approx(pld_add, rel=1e-9)
    assert pld_rep <= rdp_rep
    import dp_accounting as dpa
    assert pld_rep == pytest.approx(dpa.get_epsilon_gaussian(7.67, 1e-5), rel=1e-3)
