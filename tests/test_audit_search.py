"""Worst-case searches in the privacy audits and the power they report (empirical/privacy/audit.py and
the paper audit modules): AboveThreshold's query sequences (user-level Algorithm 4), KL Spider's
difference channel (Algorithm 1, a curvature canary), Algorithm 4 of the SOSP paper with one
canary per channel and measured-noise weights, the KAN tight replace-one calibration for fresh
batches; each audit's power against a reference mechanism at the claimed ε.  Heavy runs are
marked ``slow``."""
import dataclasses
import json
import logging
import math

import numpy as np
import pytest

from empirical.privacy import audit
from empirical.store import audit_store
from empirical.privacy import mutants

logging.getLogger("absl").setLevel(logging.ERROR)


# ---------------------------------------------------------------------------------------------
# power
# ---------------------------------------------------------------------------------------------
def test_reference_mechanisms_are_calibrated_to_the_claim():
    # the reference's exact ε(δ) is the claim, by dp-accounting's privacy losses
    from dp_accounting.pld import privacy_loss_mechanism as plm

    mu = audit.gaussian_mu_for_epsilon(1.0, 1e-5)
    assert plm.GaussianPrivacyLoss(1.0, sensitivity=mu).get_delta_for_epsilon(1.0) == \
        pytest.approx(1e-5, rel=1e-6)
    s = audit.laplace_shift_for_epsilon(1.0, 1e-3)
    assert s > 1.0                                   # pure ε = s, ε(δ) < s for δ > 0
    assert plm.LaplacePrivacyLoss(1.0, sensitivity=s).get_delta_for_epsilon(1.0) == \
        pytest.approx(1e-3, rel=1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        audit.gaussian_mu_for_epsilon(0.0, 1e-5)


def test_power_grows_with_runs_and_is_flagged_when_low():
    t = audit.get_target("core.gaussian")
    few = audit.reference_power(t, 1.0, 2_000)
    many = audit.reference_power(t, 1.0, 400_000)
    # 2 000 runs at δ = 1e-5 certify a small part of ε; 4·10⁵ most of it (a Gaussian's optimal
    # test sits in a tail of probability ~δ·e^ε: more runs reach further into it)
    assert 0.0 <= few < 0.3 < 0.55 < many <= 1.0
    assert audit.reference_power(t, math.inf, 100) is None


def test_audit_reports_power_in_table_and_store(tmp_path):
    r = audit.run_audit(audit.get_target("core.gaussian"), trials=2_000)
    assert r.power is not None and r.power < audit.POWER_FLAG and r.low_power
    table = audit.format_audit_table([r])
    # LOW stands beside the better of the two points' powers (the profile point's here)
    assert "power" in table and f"{r.best_power:.2f} LOW" in table
    path = audit.store_result(r, str(tmp_path))
    rec = json.loads(open(path).read())
    assert rec["power"] == pytest.approx(r.power) and rec["low_power"] is True
    assert rec["power_reference"] == "gaussian" and rec["search_setting"] == "quick"
    stored = audit_store.load(str(tmp_path))["core.gaussian"]
    assert stored.low_power and "LOW POWER" in str(stored)


def test_full_search_adds_candidates_and_runs():
    def shifted(mu):
        return lambda side, rng, n: rng.standard_normal(n) + side * mu

    t = audit.AuditTarget(name="toy.search", paper="core", algorithm="toy", relation="replace-one",
                          delta=1e-3, claimed_epsilon=lambda: 1.0,
                          candidates={"small": shifted(0.1)},
                          full_candidates={"large": shifted(3.0)}, trials=2_000, full_trials=4_000,
                          search_trials=1_000)
    quick = audit.run_audit(t)
    full = audit.run_audit(t, search="full")
    assert list(quick.search) == ["small"] and quick.trials == 2_000 and quick.verdict == "OK"
    assert set(full.search) == {"small", "large"} and full.pair == "large"
    assert full.trials == 4_000 and full.verdict == "VIOLATION" and full.setting == "full"
    with pytest.raises(ValueError, match="search"):
        audit.run_audit(t, search="exhaustive")
    with pytest.raises(ValueError, match="full_candidates"):
        audit.AuditTarget(name="toy.bad", paper="core", algorithm="toy", relation="replace-one",
                          delta=1e-3, claimed_epsilon=lambda: 1.0, release=shifted(1.0),
                          full_candidates={"x": shifted(1.0)})


# ---------------------------------------------------------------------------------------------
# AboveThreshold: query sequences
# ---------------------------------------------------------------------------------------------
def test_above_threshold_search_catches_the_query_noise_slip():
    from empirical.papers.userlevel import audit as au

    t = audit.get_target("userlevel.above_threshold")
    honest = audit.run_audit(t, trials=200_000)
    assert honest.verdict == "OK" and len(honest.search) == len(au.AT_QUICK)
    assert honest.power is not None and not honest.low_power      # Laplace reference
    with mutants.applied(mutants.get_mutant("userlevel.above_threshold.query_noise_slip")):
        bug = audit.run_audit(t, trials=200_000)
        # the former fixed sequence (20 queries 10 below, then one at the threshold) does not
        # show it: the bug's exact ε there is ≈ 1.0, the claim
        fixed = au._at_label(20, 10.0, 19)
        alone = audit.run_audit(dataclasses.replace(t, name="x.fixed", candidates={
            fixed: t.candidates[fixed]}), trials=200_000)
    assert bug.audited > bug.claimed, (bug.audited, bug.search)
    assert alone.audited <= alone.claimed < bug.audited


def test_above_threshold_runs_the_unmodified_class_vectorized():
    from empirical.papers.userlevel import audit as au

    # the batch stand-in runs n independent instances: one instance's halting-index law by
    # its own draws, scalar, agrees with the batch's (chi-square-free check: frequencies)
    q = au.at_queries(5, 0.0, 4, 0)
    idx = au.at_halting_index(q, np.random.default_rng(1), 40_000)
    rng = np.random.default_rng(2)
    scalar = []
    for _ in range(4_000):
        at = au.ul.AboveThreshold(0.0, 1.0, 2.0, rng)
        scalar.append(next((t for t, x in enumerate(q) if at.fires(x)), q.size))
    f_batch = np.bincount(idx, minlength=6) / idx.size
    f_scalar = np.bincount(scalar, minlength=6) / len(scalar)
    # 4 000 scalar runs: binomial std ≤ 0.008 per cell; 0.03 is ~4 std
    assert np.max(np.abs(f_batch - f_scalar)) < 0.03


# ---------------------------------------------------------------------------------------------
# KL Spider: the difference channel
# ---------------------------------------------------------------------------------------------
def test_curvature_canary_moves_differences_by_their_sensitivity():
    from empirical.papers.kl import audit as ak

    p = ak._spider_plan()
    step = p.phi_hat ** (1.0 / ak._SP["kappa"]) / (4.0 * ak._SP["gamma"] * ak._SP["L1"])
    D, D2 = ak.curved_pair(ak._SP["n"], ak._SP["d"], L1=ak._SP["L1"])
    # the difference query's replace-one move ‖(c̄′ − c̄)Δw‖ at ‖Δw‖ = step is the plan's
    # difference sensitivity Φ̂^{1/κ}/(2γn)
    assert np.allclose((D2.cbar - D.cbar) * step, p.sens_diff, rtol=1e-12)
    W = np.random.default_rng(0).standard_normal((3, 2))
    g = D.per_sample_gradients(W, np.arange(D.n)).mean(axis=1)
    assert np.allclose(g, D.gradient(W))


def test_spider_difference_noise_removed_is_caught_only_through_the_difference_channel():
    t = audit.get_target("kl.spider.stepwise")
    name = "kl.spider.difference_noise_removed"
    bug = audit.run_audit(audit.get_target(name))
    assert bug.verdict == "CAUGHT", bug.audited
    with mutants.applied(mutants.get_mutant(name)):
        old = audit.run_audit(dataclasses.replace(t, name="x.old", candidates={
            k: t.candidates[k] for k in ("full releases", "all releases")}), trials=600)
    # the linear canary's gradient differences are 0 on both sides: blind to this bug
    assert old.audited <= old.claimed


# ---------------------------------------------------------------------------------------------
# SOSP Algorithm 4: one canary per channel, measured weights
# ---------------------------------------------------------------------------------------------
def test_selection_weights_come_from_measured_noise():
    from empirical.papers.sosp import audit as sa

    honest = sa.selection_measured_variances()
    with mutants.applied(mutants.get_mutant("sosp.selection.hessian_noise_sigma_g")):
        bug = sa.selection_measured_variances()
    # at d = 4, G_s = M_s: σ_h = √d·σ_g, so the Hessian variance falls by d = 4 although the
    # algorithm still reports σ_h (300 rows × 2 candidates × 4 diagonal entries: ±10%)
    assert bug["gradient"] == pytest.approx(honest["gradient"], rel=1e-12)
    assert bug["hessian"] / honest["hessian"] == pytest.approx(1 / 4, rel=0.15)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sosp.selection.hessian_noise_sigma_g",
                                  "sosp.selection.multiplier_for_T"])
def test_selection_bugs_escaping_the_old_audit_are_caught(name):
    r = audit.run_audit(audit.get_target(name))
    assert r.verdict == "CAUGHT", r.audited


# ---------------------------------------------------------------------------------------------
# KAN: the tight replace-one calibration for fresh batches
# ---------------------------------------------------------------------------------------------
def test_kan_replace_factor_mutant_halves_kappa():
    from empirical.papers.kan import audit as ak

    k = ak._privacy(ak.TIGHT_REPLACE, "tight", ak.EPS, tight_relation="replace-one")
    with mutants.applied(mutants.get_mutant("kan.tight_replace_factor_dropped")):
        kb = ak._privacy(ak.TIGHT_REPLACE, "tight", ak.EPS, tight_relation="replace-one")
    assert kb.noise_multiplier == pytest.approx(k.noise_multiplier / 2, rel=1e-6)
    assert kb.epsilon_guarantee == pytest.approx(ak.EPS, rel=1e-6)     # the bug is silent


@pytest.mark.slow
def test_kan_tight_replace_audit_catches_the_dropped_factor():
    honest = audit.run_audit(audit.get_target("kan.mechanism.tight_replace.fresh"))
    assert honest.verdict == "OK"
    r = mutants.audit_catches(mutants.get_mutant("kan.tight_replace_factor_dropped"))
    assert r["caught"], r


# ---------------------------------------------------------------------------------------------
# the mutation self-test's coverage of the bug classes
# ---------------------------------------------------------------------------------------------
_AUDIT_CLASSES = mutants.CLASSES[:4]


def test_every_bug_class_has_mutants_in_several_papers():
    ms = mutants.mutants()
    for cls in mutants.CLASSES:
        hit = [m for m in ms if m.bug_class == cls]
        assert hit, cls
        if cls in _AUDIT_CLASSES[:3]:
            assert len({m.paper for m in hit}) >= 3, (cls, [m.name for m in hit])
    for m in ms:
        if m.bug_class in _AUDIT_CLASSES:
            assert m.audits, f"{m.name}: a privacy/accounting bug must name an audit"
            for a in m.audits:
                assert audit.get_target(a).expect == "private"
        if m.bug_class == "averaging skipped":
            assert m.verify_note and m.experiments


# (mutant, runs per side): a release without noise separates the sides completely, so a few
# hundred runs certify far more than the claim; the slip needs the target's own count
_FAST = {"userlevel.above_threshold.query_noise_slip": None,
         "userlevel.above_threshold.query_noise_removed": 2_000,
         "userlevel.above_threshold.threshold_noise_removed": None,
         "sosp.spider.o2_noise_removed": 1_000, "kan.noise_removed": 1_000}


@pytest.mark.parametrize("name,trials", _FAST.items())
def test_privacy_mutant_is_caught_by_its_audit(name, trials):
    r = mutants.audit_catches(mutants.get_mutant(name), trials=trials)
    assert r["caught"], r


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.name for m in mutants.mutants()
                                  if m.bug_class in _AUDIT_CLASSES and m.name not in _FAST])
# (kl.spider.difference_noise_removed runs in the default set above, with its canary check)
def test_privacy_mutant_is_caught_by_its_audit_slow(name):
    r = mutants.audit_catches(mutants.get_mutant(name))
    assert r["caught"], r


# ---------------------------------------------------------------------------------------------
# KL, KAN and linreg targets: canary placements and statistics searched
# ---------------------------------------------------------------------------------------------
def test_kl_kan_linreg_claims_search_their_inputs():
    for t in audit.targets(["kl", "kan", "linreg"]):
        if t.expect == "private":
            assert t.candidates is not None and len(t.candidates) >= 2, t.name
            assert t.search_trials <= t.trials, t.name


@pytest.mark.parametrize("others", ["e2", "zero"])
def test_kl_placements_are_replace_one_pairs_with_equal_gradient_norms(others):
    from empirical.papers.kl import audit as ak

    D, D2 = ak.canary_pair(10, 2, others=others)
    assert np.count_nonzero(np.any(D.X != D2.X, axis=1)) == 1
    assert np.linalg.norm(D2.mean - D.mean) == pytest.approx(2 * ak.L0 / 10)
    assert np.linalg.norm(D.mean) == pytest.approx(np.linalg.norm(D2.mean))
    with pytest.raises(ValueError, match="others"):
        ak.canary_pair(10, 2, others="ones")


def test_kl_measured_weights_follow_the_noise_drawn():
    """Algorithm 4's measured weights are 1/σ² of the σ the theorem sets (per release 200 rows
    × 2 coordinates: relative s.e. √(2/400) = 0.07, so within 35%; pooled over the T − 1
    releases within 5%), and quadruple when the noise is halved (the same draws) although the
    algorithm still reports σ."""
    from empirical.papers.kl import audit as ak

    def weights():
        D = ak.canary_pair(ak._GD["n"], ak._GD["d"])[0]
        cal = ak._MeasuredScore(ak._MEASURE_ROWS, ("gradient",), D.mean, None)
        gens = [np.random.default_rng([5, i]) for i in range(ak._MEASURE_ROWS)]
        ak._run_gd(D, gens, cal)
        return cal.measured_weights()

    sigma = ak.measure_noisy_gd_noise(rows=20)["sigma"]
    honest = weights()
    assert np.allclose(honest * sigma**2, 1.0, rtol=0.35)
    assert honest[-1] * sigma**2 == pytest.approx(1.0, rel=0.05)
    with mutants.applied(mutants.get_mutant("kl.noisy_gd.noise_halved")):
        bug = weights()
    assert np.allclose(bug / honest, 4.0, rtol=1e-9)


def test_kan_placements_and_their_exact_epsilon():
    """Cyclic phases hold the canary at steps o, o + b, …; phase 0 has the most participations
    and the largest whitened shift (so the searched exact ε is phase 0's).  Fresh placements hold
    τ̂ participations (at most, spread); a block at the end is truncated (smaller exact ε) and
    the exact ε stated is the largest of the placements'."""
    from empirical.papers.kan import audit as ak

    S, b = ak._steps(ak.CYCLIC), ak.CYCLIC["n"] // ak.CYCLIC["B"]
    norms = {}
    for o in range(b):
        p = ak._offset_pattern(ak.CYCLIC, o)(1.0)
        assert np.flatnonzero(p).tolist() == list(range(o, S, b))
        norms[o] = np.linalg.norm(ak.whitened_shift(p, ak.LAM))
    assert max(norms, key=norms.get) == 0
    assert np.array_equal(ak._offset_pattern(ak.CYCLIC, 0)(1.0), ak.cyclic_pattern(ak.CYCLIC))
    k = ak._privacy(ak.FRESH).noise_multiplier
    tau = ak.fresh_block(k, ak.FRESH)[0]
    q, f = ak._fresh_searches(ak.FRESH)
    for label, pat in {**q, **f}.items():
        p = pat(k)
        assert p.size == S and 0 < p.sum() <= tau, label
    assert q["block at start"](k).tolist() == ak.block_pattern(S, tau).tolist()
    two = {"start": q["block at start"], "end": f["block at end"]}
    ex = [ak._exact_fixed(lambda: k, pat, ak.LAM)() for pat in two.values()]
    assert ex[1] < ex[0] and ak._exact_max(lambda: k, two, ak.LAM)() == max(ex)


def test_linreg_searched_pairs_differ_in_one_record():
    from empirical.papers.linreg import audit as al
    from empirical.papers.linreg import audit_ssgd as als

    (X0, y0), (X1, y1) = al._amb_data(0, "grad-zero"), al._amb_data(1, "grad-zero")
    assert np.count_nonzero(np.any(X0 != X1, axis=1) | (y0 != y1)) == 1
    assert X1[-1, 0] == 0.0 and y1[-1] == 0.0 and X0[-1, 0] == 1.0
    obs = als._StepScores(2, "extremes", 0.5)
    for z in ([1.0, -2.0], [3.0, 0.5], [-1.0, 0.0]):
        obs("grad", 0, np.arange(2), np.array(z)[:, None], np.ones(2))
    assert obs.score().tolist() == [3.0 - 1.0, 0.5 - 2.0]
