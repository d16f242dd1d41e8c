"""The claimed privacy profiles δ ↦ ε(δ) of the KAN paper's audit targets
(empirical/papers/kan/audit.py ``claimed_profile``, audit_targets.py, audit_wang.py): at the
target's δ the profile is the claim, it does not increase with δ, it is the exact Gaussian ε(δ)
where the calibration is exact (cyclic batches, Algorithm 1 tight accountant), the fresh-batch
fixed-pattern targets have none for the reason they state, and Theorem 5.1's profile claims
nothing outside F.12's hypotheses."""
import math

import numpy as np
import pytest

import algorithms.kan.privacy as kan_privacy
from empirical.privacy import audit
from empirical.papers.kan import audit as ak
from _audit_profiles import LADDER, check_profile_or_reason, check_profiles

#: Targets whose claim recalibrates κ through dp-accounting's sampled-without-replacement RDP
#: (1–3 s a call): checked in the slow test only.
EXPENSIVE = ("kan.mechanism.tight_replace.fresh", "kan.mechanism.tight_replace.kappa_halved")


def _targets():
    return audit.targets(["kan"])


def test_profile_at_the_targets_delta_is_the_claim_and_non_increasing():
    assert check_profiles(_targets(), skip=EXPENSIVE) >= 8


@pytest.mark.slow
def test_profile_of_every_target_including_the_recalibrated_ones():
    check_profiles(_targets())


def test_every_target_has_a_profile_or_says_why_not():
    check_profile_or_reason(_targets())


def test_cyclic_profile_is_the_exact_gaussian_profile_of_the_worst_phase():
    """Cyclic batches: the tight accountant is one Gaussian mechanism with sensitivity ‖C1_P‖
    of phase 0, so its profile is dp-accounting's Gaussian privacy loss at μ = ‖C1_P‖/κ at every
    δ (computed here by another route: Brent on GaussianPrivacyLoss)."""
    t = audit.get_target("kan.mechanism.tight.cyclic")
    kappa = ak._privacy(ak.CYCLIC).noise_multiplier
    mu = float(np.linalg.norm(ak.whitened_shift(ak.cyclic_pattern(ak.CYCLIC), ak.LAM))) / kappa
    for d in (ak.DELTA, *LADDER):
        assert t.claimed_epsilon_at(d) == pytest.approx(ak.gaussian_epsilon_exact(mu, d),
                                                        rel=1e-7)


def test_fresh_pattern_targets_have_no_profile_because_the_routes_tau_moves_with_delta():
    """The fresh-batch fixed-pattern targets test the truncation route conditional on τ̂
    participations chosen at δ; at the ladder's δ the route's argmin τ is smaller, and the
    τ̂-block's exact ε there exceeds the route's profile: a profile point would test a pattern
    the claim does not cover (the reason their notes give)."""
    kappa = ak._privacy(ak.FRESH).noise_multiplier
    S, r = ak.FRESH["T"] - 1, ak.FRESH["B"] / ak.FRESH["n"]
    tau_hat = ak.fresh_block(kappa, ak.FRESH)[0]
    d = LADDER[0]
    # the route's candidates at d, priced by the module's Gaussian ε: its argmin is the profile
    route = {tau: kan_privacy.gaussian_epsilon(kappa / sens, dprime)
             for tau, sens, dprime in kan_privacy._fresh_tau_route(ak.LAM, S, r, d)}
    tau_p = min(route, key=route.get)
    assert ak.claimed_profile(ak.FRESH)(d) == pytest.approx(route[tau_p], rel=1e-9)
    mu = float(np.linalg.norm(ak.whitened_shift(ak.block_pattern(S, tau_hat), ak.LAM))) / kappa
    assert tau_p < tau_hat
    assert ak.gaussian_epsilon_exact(mu, d) > route[tau_p]
    for name in ("kan.mechanism.tight.fresh", "kan.mechanism.thm5.1.fresh",
                 "kan.mechanism.thm5.1.fresh.tight"):
        assert audit.get_target(name).claimed_epsilon_at is None


def test_theorem_51_profile_claims_nothing_outside_f12s_hypotheses():
    """F.12 needs rT ≥ 3 ln(2/δ) (here rT = 41: δ ≥ 2e^{−41/3} ≈ 2.3·10⁻⁶) and ε ≤ 1 (ε grows
    as δ falls): below 10⁻⁵, +∞; above, below the claim 1 at 10⁻⁵."""
    at = ak.claimed_profile(ak.PAPER51, "thm5.1", ak.EPS51)
    claim = audit.get_target("kan.mechanism.thm5.1.fresh").claimed_epsilon()
    assert at(1e-7) == math.inf
    assert at(1e-5) == pytest.approx(claim, rel=1e-12) == pytest.approx(1.0, rel=1e-9)
    assert 0 < at(1e-3) < 1


def test_profile_rejects_a_delta_outside_the_unit_interval():
    t = audit.get_target("kan.mechanism.tight.cyclic")
    for bad in (0.0, 1.0, -1e-3):
        with pytest.raises(ValueError, match="delta"):
            t.claimed_epsilon_at(bad)


def test_memoised_profile_follows_an_accountant_mutant_and_back():
    """κ and ε(δ) are memoised per the accountant's functions in use: under the mutant that
    under-reports the Gaussian ε by 2 the profile is that accountant's (κ recalibrated to it:
    the claim at δ is still the target, ε(δ_p) differs), and the honest values return after."""
    from empirical.privacy import mutants

    t = audit.get_target("kan.mechanism.tight.cyclic")
    honest = t.claimed_epsilon_at(LADDER[1])
    with mutants.applied(mutants.get_mutant("kan.accountant_off_by_2")):
        assert t.claimed_epsilon_at(ak.DELTA) == pytest.approx(t.claimed_epsilon(), rel=1e-9)
        assert t.claimed_epsilon_at(LADDER[1]) != pytest.approx(honest, rel=1e-3)
    assert t.claimed_epsilon_at(LADDER[1]) == honest
