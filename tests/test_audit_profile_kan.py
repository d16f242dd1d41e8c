"""The claimed privacy profiles δ ↦ ε(δ) of the KAN paper's audit targets
(empirical/papers/kan/audit.py ``claimed_profile``, audit_targets.py, audit_wang.py): at the
target's δ the profile is the claim, it does not increase with δ, it is the exact Gaussian ε(δ)
where the calibration is exact (cyclic batches, Algorithm 1 tight accountant), it stays above the
mechanism's exact ε(δ) where it is an upper bound, and Theorem 5.1's profile claims nothing
outside F.12's hypotheses."""
import math

import numpy as np
import pytest

from empirical.privacy import audit
from empirical.papers.kan import audit as ak

#: δ of the profile points the audits test (the ladder around 10⁻³…5·10⁻²).
LADDER = (1e-3, 1e-2, 5e-2)
#: Targets whose claim recalibrates κ through dp-accounting's sampled-without-replacement RDP
#: (1–3 s a call): checked in the slow test only.
EXPENSIVE = ("kan.mechanism.tight_replace.fresh", "kan.mechanism.tight_replace.kappa_halved")


def _targets():
    return audit.targets(["kan"])


def _check_profile(t) -> None:
    claim = t.claimed_epsilon()
    assert t.claimed_epsilon_at(t.delta) == pytest.approx(claim, rel=1e-9, abs=1e-12), t.name
    eps = [t.claimed_epsilon_at(d) for d in LADDER]
    assert all(math.isfinite(e) and e >= 0 for e in eps), (t.name, eps)
    assert all(a >= b for a, b in zip(eps, eps[1:])), (t.name, eps)


def test_profile_at_the_targets_delta_is_the_claim_and_non_increasing():
    checked = 0
    for t in _targets():
        if t.claimed_epsilon_at is None or t.name in EXPENSIVE:
            continue
        _check_profile(t)
        checked += 1
    assert checked >= 10


@pytest.mark.slow
def test_profile_of_every_target_including_the_recalibrated_ones():
    for t in _targets():
        if t.claimed_epsilon_at is not None:
            _check_profile(t)


def test_every_target_has_a_profile_or_says_why_not():
    for t in _targets():
        assert t.claimed_epsilon_at is not None or "no claimed profile:" in t.note, t.name


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


def test_fresh_profile_bounds_the_exact_epsilon_of_every_placement():
    """Fresh batches (truncation route): the claimed ε(δ) is at least the route's minimum over
    every τ, recomputed in the audit module (exact Gaussian ε of the τ-block at δ − the binomial
    tail, :func:`fresh_block`), and at least the conditional ε of the τ̂-block at δ itself.  One
    δ of the ladder (each τ costs a dp-accounting root)."""
    t = audit.get_target("kan.mechanism.tight.fresh")
    kappa = ak._privacy(ak.FRESH).noise_multiplier
    S = ak.FRESH["T"] - 1
    for d in LADDER[1:2]:
        tau, eps_route = ak.fresh_block(kappa, ak.FRESH, d)
        mu = float(np.linalg.norm(ak.whitened_shift(ak.block_pattern(S, tau), ak.LAM))) / kappa
        assert t.claimed_epsilon_at(d) >= eps_route * (1 - 1e-9)
        assert eps_route >= ak.gaussian_epsilon_exact(mu, d)


def test_theorem_51_profile_claims_nothing_outside_f12s_hypotheses():
    """F.12 needs rT ≥ 3 ln(2/δ) (here rT = 41: δ ≥ 2e^{−41/3} ≈ 2.3·10⁻⁶) and ε ≤ 1 (ε grows
    as δ falls): below 10⁻⁵, +∞; above, below the claim 1 at 10⁻⁵."""
    t = audit.get_target("kan.mechanism.thm5.1.fresh")
    assert t.claimed_epsilon_at(1e-7) == math.inf
    assert t.claimed_epsilon_at(1e-5) == pytest.approx(1.0, rel=1e-9)
    assert 0 < t.claimed_epsilon_at(1e-3) < 1


def test_profile_rejects_a_delta_outside_the_unit_interval():
    t = audit.get_target("kan.mechanism.tight.cyclic")
    for bad in (0.0, 1.0, -1e-3):
        with pytest.raises(ValueError, match="delta"):
            t.claimed_epsilon_at(bad)
