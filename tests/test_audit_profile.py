"""Profile-point audits (empirical/privacy/audit.py): a target claiming a privacy profile
δ ↦ ε(δ) is judged on the same scores at its δ and at a profile point δ_p chosen by reference
power alone, each at α/2; a broken mechanism the paper's δ cannot catch with few runs is caught
at δ_p; the point is stored, tabulated and validated."""
import argparse
import functools
import json
import math

import pytest
from scipy.optimize import brentq

from empirical.privacy import audit
from empirical.store import audit_store

# Claim: the Gaussian mechanism with noise multiplier 2 (shift/σ = 1/2), its exact profile:
# dp-accounting's analytic Gaussian privacy loss, inverted by Brent (milliseconds, where a PLD
# accountant takes ~0.6 s; the core targets' PLD profiles are tested in tests/test_audit.py).
_Z = 2.0


@functools.lru_cache(maxsize=None)
def _claim_at(delta: float) -> float:
    from dp_accounting.pld import privacy_loss_mechanism as plm

    loss = plm.GaussianPrivacyLoss(_Z, sensitivity=1.0)
    return brentq(lambda e: loss.get_delta_for_epsilon(e) - delta, 0.0, 50.0, xtol=1e-12)


_CLAIM = _claim_at(1e-5)


def _release(z: float):
    def release(side, rng, trials):
        return (1.0 if side else 0.0) + z * rng.standard_normal(trials)
    return release


def _target(z: float, expect: str = "private", profile: bool = True, **kw) -> audit.AuditTarget:
    kw = {"trials": 2_000, **kw}
    return audit.AuditTarget(
        name=f"core.test_profile.{expect}", paper="core", algorithm="Gaussian mechanism",
        relation="replace-one", delta=1e-5, claimed_epsilon=lambda: _CLAIM,
        claimed_epsilon_at=_claim_at if profile else None, release=_release(z),
        view="mechanism", expect=expect, **kw)


@pytest.fixture(scope="module")
def honest():
    return audit.run_audit(_target(_Z))


@pytest.fixture(scope="module")
def halved():
    return audit.run_audit(_target(_Z / 2, "broken"))


def test_reference_profile_point_is_ok_and_chosen_by_power_alone(honest):
    r = honest
    pp = r.profile
    assert r.verdict == "OK" and pp is not None
    assert pp.delta in audit.PROFILE_DELTAS and pp.delta > r.target.delta
    assert pp.claimed == pytest.approx(_claim_at(pp.delta)) and pp.audited <= pp.claimed
    # δ_p is the ladder's most powerful point, and the ladder is what profile_plan gives before
    # any run (a property of the claim and the run count, not of the scores)
    assert pp.delta == max(pp.ladder, key=pp.ladder.get)
    plan = audit.profile_plan(r.target, r.claimed, r.trials, r.alpha)
    assert plan[0] == pp.delta and plan[3] == pp.ladder
    # both points are judged at α/2 (Bonferroni) and reported with their power
    assert r.point_alpha == pytest.approx(r.alpha / 2)
    assert r.power == pytest.approx(audit.reference_power(r.target, _CLAIM, r.trials,
                                                          r.alpha / 2))
    assert pp.power > r.power and r.best_power == pp.power


def test_noise_halved_is_caught_at_the_profile_point_not_at_the_papers_delta(halved):
    """2 000 runs per side: at δ = 10⁻⁵ the bound cannot reach the claim (the best test sits in
    a tail of probability ~δ·e^ε), at δ_p it exceeds ε(δ_p) by far."""
    r = halved
    assert r.verdict == "CAUGHT" and r.exceeded
    assert r.audited < r.claimed                         # the paper's δ alone would miss it
    assert r.profile.audited > r.profile.claimed         # the profile point catches it
    # the same runs without a profile: MISSED
    alone = audit.run_audit(_target(_Z / 2, "broken", profile=False))
    assert alone.profile is None and alone.verdict == "MISSED"
    assert alone.point_alpha == alone.alpha              # no Bonferroni split without a profile


def test_profile_point_in_table_cli_line_and_store(honest, halved, tmp_path, capsys,
                                                   monkeypatch):
    txt = audit.format_audit_table([honest, halved])
    assert "δ_p" in txt and "ε_lo(δ_p)" in txt and "Bonferroni" in txt
    assert f"{halved.profile.audited:.3f}" in txt and f"{halved.profile.delta:g}" in txt
    path = audit.store_result(halved, str(tmp_path))
    rec = json.loads(open(path).read())
    assert rec["profile"]["delta"] == halved.profile.delta
    assert rec["profile"]["epsilon_lo"] == pytest.approx(halved.profile.audited)
    assert rec["alpha_per_point"] == pytest.approx(0.025)
    s = audit_store.load(str(tmp_path))[halved.target.name]
    assert s.profile_delta == halved.profile.delta and s.profile_power == pytest.approx(
        halved.profile.power)
    assert "δ_p" in str(s)
    from empirical.report.privacy import audit_power, audit_profile

    assert "δ_p" in audit_profile(s) and "at δ_p" in audit_power(s)
    # a registered target's CLI line names its profile point
    monkeypatch.setattr(audit, "targets", lambda sel: [halved.target])
    p = argparse.ArgumentParser()
    audit.add_arguments(p)
    assert audit.run_cli(p.parse_args([halved.target.name, "--trials", "2000",
                                       "--no-store"])) == 0
    assert "at δ_p" in capsys.readouterr().err


def test_low_power_flags_only_when_the_better_point_is_low(honest):
    r = honest
    assert r.low_power == (max(r.power, r.profile.power) < audit.POWER_FLAG)
    few = audit.run_audit(_target(_Z, trials=200))
    assert few.low_power and few.best_power < audit.POWER_FLAG


def test_bad_profile_input_is_refused():
    with pytest.raises(ValueError, match="claimed_epsilon_at"):
        audit.AuditTarget(name="x", paper="core", algorithm="a", relation="replace-one",
                          delta=1e-5, claimed_epsilon=lambda: 1.0, claimed_epsilon_at=1.0,
                          release=_release(1.0))
    t = _target(_Z)
    for bad in ((), (0.0, 0.1), (1e-3, 1.5), "x", (math.nan,)):
        with pytest.raises(ValueError, match="profile_deltas"):
            audit.profile_plan(t, _CLAIM, 100, 0.05, bad)
    # a profile that disagrees with claimed_epsilon() at the target's δ
    wrong = audit.AuditTarget(name="x", paper="core", algorithm="a", relation="replace-one",
                              delta=1e-5, claimed_epsilon=lambda: _CLAIM,
                              claimed_epsilon_at=lambda d: 2 * _claim_at(d),
                              release=_release(1.0))
    with pytest.raises(ValueError, match="claimed_epsilon_at"):
        audit.run_audit(wrong, trials=100)
    negative = audit.AuditTarget(name="x", paper="core", algorithm="a", relation="replace-one",
                                 delta=1e-5, claimed_epsilon=lambda: _CLAIM,
                                 claimed_epsilon_at=lambda d: _CLAIM if d == 1e-5 else -1.0,
                                 release=_release(1.0))
    with pytest.raises(ValueError, match="claimed_epsilon_at"):
        audit.run_audit(negative, trials=100)


def test_ladder_points_without_a_claim_or_below_the_targets_delta_are_skipped():
    # NaN (no claim there, e.g. outside a theorem's range) and δ ≤ the target's δ are not eligible
    t = audit.AuditTarget(name="x", paper="core", algorithm="a", relation="replace-one",
                          delta=2e-3, claimed_epsilon=lambda: _claim_at(2e-3),
                          claimed_epsilon_at=lambda d: math.nan if d > 0.02 else _claim_at(d),
                          release=_release(1.0))
    plan = audit.profile_plan(t, _claim_at(2e-3), 2_000)
    assert plan is not None and set(plan[3]) == {1e-2}
    none = audit.profile_plan(t, _claim_at(2e-3), 2_000, deltas=(1e-3, 0.03))
    assert none is None
