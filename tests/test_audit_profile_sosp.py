"""The claimed privacy profiles δ ↦ ε(δ) of the SOSP paper's audit targets
(empirical/papers/sosp/audit.py, audit_liu.py): at the target's δ the profile is the claim, it
does not increase with δ, it stays above the exact ε(δ) of the Gaussian releases the canary
moves (the RDP conversion is an upper bound), and the pure-ε AboveThreshold targets say why they
have none."""
import math

from scipy import optimize, stats

from algorithms.sosp.privacy import selection_multiplier
from empirical.privacy import audit
from empirical.papers.sosp import audit as asosp
from _audit_profiles import LADDER, check_profile_or_reason, check_profiles



def _exact_gaussian_epsilon(z: float, k: int, delta: float) -> float:
    """Exact ε(δ) of k Gaussian releases of multiplier z (N(0, 1) vs N(μ, 1), μ = √k/z): the
    root of Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ (Balle & Wang 2018)."""
    mu = math.sqrt(k) / z
    f = lambda e: (stats.norm.cdf(-e / mu + mu / 2)                     # noqa: E731
                   - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta)
    return 0.0 if f(0.0) <= 0 else optimize.brentq(f, 0.0, 50.0, xtol=1e-12)


def _targets():
    return audit.targets(["sosp"])


def test_profile_at_the_targets_delta_is_the_claim_and_non_increasing():
    assert check_profiles(_targets()) >= 10


def test_every_target_has_a_profile_or_says_why_not():
    check_profile_or_reason(_targets())


def test_profiles_bound_the_exact_epsilon_of_the_released_gaussians():
    """Ada-DP-SPIDER: one Gaussian of the plan's z per record; Algorithm 4: 2T Gaussians of the
    multiplier calibrated for them.  The claimed profile (RDP) is at least their exact ε(δ)
    (closed form) at every δ of the ladder: a profile below it would be a false claim.  (The RDP
    conversion's slack grows with δ: for one Gaussian at the plan's z the claim is 1.09× the
    exact ε at 10⁻⁵ and 1.8× at 5·10⁻².)"""
    spider = audit.get_target("sosp.spider.stepwise")
    selection = audit.get_target("sosp.selection.stepwise")
    z1 = asosp.audit_plan().z
    T2 = 2 * asosp._SELA["T"]
    z2 = selection_multiplier(asosp._SELA["epsilon"], asosp._SELA["delta"], T2)
    for d in LADDER:
        for t, z, k in ((spider, z1, 1), (selection, z2, T2)):
            exact = _exact_gaussian_epsilon(z, k, d)
            assert exact <= t.claimed_epsilon_at(d), (t.name, d)
