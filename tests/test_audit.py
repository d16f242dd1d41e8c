"""The audit harness: its statistics are valid, it has power, and it catches broken mechanisms."""
import json
import math

import numpy as np
import pytest
from scipy import stats

from empirical.privacy import audit


def test_clopper_pearson_matches_the_beta_quantiles_and_edges():
    lo, hi = audit.clopper_pearson(np.array([0, 3, 10]), 10, 0.025)
    assert lo[0] == 0.0 and hi[2] == 1.0
    assert lo[1] == pytest.approx(stats.beta.ppf(0.025, 3, 8))
    assert hi[1] == pytest.approx(stats.beta.ppf(0.975, 4, 7))
    with pytest.raises(ValueError, match="k must be"):
        audit.clopper_pearson(11, 10, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        audit.clopper_pearson(1, 10, 1.5)


def test_lower_bound_never_exceeds_the_true_epsilon_over_repeats():
    """Validity: on the Gaussian mechanism (exact ε known) ε_lo stays below ε over 40 repeats
    at α = 0.05 (a violation in more than ~5 would be a miscalibrated harness; we allow 5)."""
    mu, delta = 1.0, 1e-5
    true = audit.exact_gaussian_epsilon(1 / mu, 1, delta)
    rng = np.random.default_rng(np.random.SeedSequence(7))
    over = 0
    for _ in range(40):
        e = audit.epsilon_lower_bound(rng.standard_normal(20000), mu + rng.standard_normal(20000),
                                      delta).epsilon
        over += e > true
    assert over <= 5


def test_identical_distributions_give_a_small_bound():
    rng = np.random.default_rng(3)
    b = audit.epsilon_lower_bound(rng.standard_normal(100000), rng.standard_normal(100000), 1e-5)
    assert b.epsilon < 0.1


@pytest.fixture(scope="module")
def core_results():
    return {t.name: audit.run_audit(t) for t in audit.targets(["core"])}


def test_power_on_the_gaussian_mechanism_and_dp_gd(core_results):
    """The audited bound reaches POWER (0.6) of the exact ε(δ) on the Gaussian mechanism and on
    full-batch DP-GD with a gradient canary, stepwise and on the final iterate."""
    for name in ("core.gaussian", "core.dp_gd.stepwise", "core.dp_gd.final"):
        r = core_results[name]
        assert r.verdict == "POWER OK", (name, r.audited, r.exact)
        assert audit.POWER * r.exact <= r.audited <= r.claimed


@pytest.mark.parametrize("name", ["core.gaussian.noise_halved", "core.dp_gd.clipping_skipped",
                                  "core.dp_gd.add_remove_sensitivity"])
def test_broken_controls_are_caught(core_results, name):
    r = core_results[name]
    assert r.verdict == "CAUGHT" and r.audited > r.claimed, (r.audited, r.claimed)


def test_core_targets_claim_their_profile(core_results):
    """Every core target and control claims its profile (the PLD of its Gaussian event at each
    δ): at its δ the profile is its claim, ε(δ) does not increase along the ladder, and the
    exact ε of the analytic Gaussian privacy loss agrees at a ladder point."""
    from dp_accounting.pld import privacy_loss_mechanism as plm

    assert len(core_results) == 6
    for r in core_results.values():
        t = r.target
        assert t.claimed_epsilon_at is not None, t.name
        assert t.claimed_epsilon_at(t.delta) == pytest.approx(r.claimed, rel=1e-9), t.name
        eps = [t.claimed_epsilon_at(d) for d in audit.PROFILE_DELTAS]
        assert all(np.diff(eps) <= 0), (t.name, eps)
        assert r.profile is not None and r.profile.claimed == pytest.approx(
            t.claimed_epsilon_at(r.profile.delta))
    from scipy.optimize import brentq

    loss = plm.GaussianPrivacyLoss(audit.GAUSS_Z, sensitivity=1.0)
    exact = brentq(lambda x: loss.get_delta_for_epsilon(x) - 1e-2, 0.0, 50.0, xtol=1e-12)
    # the PLD is pessimistic by its discretisation (10⁻⁴ in the loss): ε at or just above exact
    assert 0 <= core_results["core.gaussian"].target.claimed_epsilon_at(1e-2) - exact < 1e-3


def test_table_and_cli_functions(core_results, capsys, tmp_path):
    import argparse

    txt = audit.format_audit_table(list(core_results.values()))
    assert "claimed ε" in txt and "CAUGHT" in txt and "POWER OK" in txt
    p = argparse.ArgumentParser()
    audit.add_arguments(p)
    assert audit.run_cli(p.parse_args(["core.gaussian.noise_halved", "--trials", "40000",
                                       "--results", str(tmp_path)])) == 0
    stored = audit.load_audits(tmp_path)
    assert list(stored) == ["core.gaussian.noise_halved"]
    assert stored["core.gaussian.noise_halved"].verdict == "CAUGHT"
    assert audit.run_cli(p.parse_args(["nope.nothing"])) == 2
    assert audit.run_cli(p.parse_args(["--list"])) == 0
    assert "core.gaussian" in capsys.readouterr().out


def test_target_validation():
    with pytest.raises(ValueError, match="relation"):
        audit.AuditTarget(name="x", paper="core", algorithm="a", relation="swap", delta=1e-5,
                          claimed_epsilon=lambda: 1.0, release=lambda s, r, t: np.zeros(t))
    with pytest.raises(ValueError, match="exactly one"):
        audit.AuditTarget(name="x", paper="core", algorithm="a", relation="replace-one",
                          delta=1e-5, claimed_epsilon=lambda: 1.0)


# ---------------------------------------------------------------------------------------------
# Stored audit results (the report's "audited lower bound" column reads these)
# ---------------------------------------------------------------------------------------------
def test_stored_result_round_trips_with_seeding_and_fingerprint(core_results, tmp_path):
    from empirical.store import audit_store

    r = core_results["core.dp_gd.stepwise"]
    path = audit_store.store(r, tmp_path)
    assert path == tmp_path / "audits" / "core.dp_gd.stepwise.json"
    rec = json.loads(path.read_text())
    assert rec["epsilon_lo"] == pytest.approx(r.audited) and rec["claimed"] == pytest.approx(r.claimed)
    assert rec["confidence"] == pytest.approx(0.95) and rec["verdict"] == "POWER OK"
    assert rec["trials"] == r.trials and rec["seeding"]["h_target"] == audit._h(r.target.name)
    # the fingerprint covers the harness and the numerical core the release uses
    assert {"empirical.privacy.audit", "algorithms.primitives"} <= set(rec["code"])
    s = audit_store.load(tmp_path)["core.dp_gd.stepwise"]
    assert s.status == "ok" and s.epsilon_lo == pytest.approx(r.audited) and s.ok
    assert "ε_lo" in str(s) and "POWER OK" in str(s)
    assert not list((tmp_path / "audits").glob(".tmp-*"))      # atomic write left no temp file


def test_edited_or_corrupt_audit_files_are_named_and_skipped(core_results, tmp_path):
    from empirical.store import audit_store

    path = audit_store.store(core_results["core.gaussian"], tmp_path)
    rec = json.loads(path.read_text())
    rec["epsilon_lo"] = 0.0                                        # a hand edit
    path.write_text(json.dumps(rec))
    (tmp_path / "audits" / "core.dp_gd.final.json").write_text("{trunc")
    problems: list[str] = []
    assert audit_store.load(tmp_path, problems) == {}
    assert len(problems) == 2 and any("checksum" in p for p in problems)
    assert any("not JSON" in p for p in problems)


def test_audit_stored_by_other_code_is_stale(core_results, tmp_path, monkeypatch):
    from empirical.store import audit_store

    audit_store.store(core_results["core.gaussian"], tmp_path)
    real = audit_store.audit_fingerprint

    def changed(module):
        fp = real(module)
        return dict(fp, digest="0" * 16, code=dict(fp["code"], **{"algorithms.primitives": "x"}))

    monkeypatch.setattr(audit_store, "audit_fingerprint", changed)
    s = audit_store.load(tmp_path)["core.gaussian"]
    assert s.status == "stale" and "algorithms.primitives" in s.reason and "stale" in str(s)


def test_unwritable_results_fail_before_the_first_audit(tmp_path, capsys):
    import argparse

    blocker = tmp_path / "file"
    blocker.write_text("")
    p = argparse.ArgumentParser()
    audit.add_arguments(p)
    assert audit.run_cli(p.parse_args(["core.gaussian", "--results", str(blocker / "x")])) == 2
    assert "--results" in capsys.readouterr().err
    with pytest.raises(ValueError, match="target name"):
        from empirical.store import audit_store
        audit_store.audit_path("../evil", tmp_path)
