"""The claimed privacy profiles δ ↦ ε(δ) of the user-level SCO paper's audit targets
(empirical/papers/userlevel/audit_canary.py ``profile_epsilon``, audit_fkt20.py): at the
target's δ the profile is the claim, it does not increase with δ, it keeps each phase's pure-DP
part and failure probability δ_fail fixed (no claim at δ ≤ δ_fail), it stays above the exact
ε(δ) of the baseline's Gaussian releases, and the pure-ε AboveThreshold targets say why they
have none."""
import math

import pytest

from empirical.privacy import audit
from empirical.papers.userlevel import audit_canary as ac
from empirical.papers.userlevel import audit_fkt20 as af
from empirical.papers.userlevel.routes import exact_gaussian_epsilon
from _audit_profiles import LADDER, check_profile_or_reason, check_profiles

#: [FKT20]'s claim calibrates its item-level z through dp-accounting's PLD at δ' ~ 10⁻⁴
#: (≈ 40 s): checked in the slow test only.
EXPENSIVE = ("userlevel.fkt20.final", "userlevel.fkt20.add_remove_sensitivity")


def _targets():
    return audit.targets(["userlevel"])


def test_profile_at_the_targets_delta_is_the_claim_and_non_increasing():
    assert check_profiles(_targets(), skip=EXPENSIVE) >= 8


@pytest.mark.slow
def test_profile_of_every_target_including_fkt20():
    check_profiles(_targets())
    # below the design δ group privacy is taken at the item ε itself: still a finite claim,
    # above the one at the design δ
    t = audit.get_target("userlevel.fkt20.final")
    assert t.claimed_epsilon() < t.claimed_epsilon_at(af.FKT20["delta"] / 10) < math.inf


def test_every_target_has_a_profile_or_says_why_not():
    check_profile_or_reason(_targets())


def test_profile_keeps_the_pure_part_and_the_failure_probability():
    """Algorithm 3's phase 1: ε_pure = ε/2 (AboveThreshold) at every δ, δ_fail = δ/2 fixed: the
    profile exceeds ε/2 at every δ, is +∞ at δ ≤ δ_fail, and at δ it is ε/2 + the Gaussian
    part at δ − δ_fail."""
    priv = ac._alg3_privacy()
    eps, dl = ac.ALG3["epsilon"], ac.ALG3["delta"]
    assert ac.profile_epsilon(priv, dl / 2) == math.inf
    assert ac.profile_epsilon(priv, 0.9 * dl / 2) == math.inf
    for d in LADDER:
        assert ac.profile_epsilon(priv, d) > eps / 2
    p = priv.phases[0]
    assert p.eps_pure == eps / 2 and p.delta_fail == pytest.approx(dl / 2)


def test_baseline_profile_bounds_the_exact_epsilon_of_its_releases():
    """The item-level baseline: T_1 Gaussian releases of multiplier z (no pure part, no
    failure): the claimed profile (RDP) is at least their exact ε(δ) (PLD), else it would be a
    false claim."""
    t = audit.get_target("userlevel.item_level_baseline.stepwise")
    p = ac._baseline_privacy().phases[0]
    assert p.eps_pure == 0 and p.delta_fail == 0
    for d in LADDER:
        exact = exact_gaussian_epsilon(p.z, p.count, d)
        assert exact <= t.claimed_epsilon_at(d), d
