"""Privacy audits of the linear-regression algorithms (empirical/papers/linreg/audit.py, audit_ssgd.py): the fixed-data
stream, the neighbouring pairs, the claimed ε against an independent dp-accounting computation,
the noise actually drawn, and small audits (honest targets stay below their claim, the bypassed
DP-STAT control is caught).  The full audit is ``dprates audit linreg`` (≈ 40 s CPU)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from algorithms import accounting
from algorithms.linreg import adaptive_clipping as lr
from empirical.privacy import audit
from empirical.papers.linreg import audit as al
from empirical.papers.linreg import audit_ssgd as als

NAMES = {"linreg.dp_ambssgd", "linreg.dp_stat", "linreg.fixed_clip", "linreg.dp_ssgd",
         "linreg.dp_ambssgd.dpstat_bypassed", "linreg.dp_ambssgd.noise_halved",
         "linreg.fixed_clip.add_remove_sensitivity", "linreg.dp_ssgd.noise_removed",
         "linreg.dp_ssgd.stepwise", "linreg.dp_ssgd.unshuffled", "linreg.ssp",
         "linreg.ssp.xty_noise_omitted", "linreg.objpert", "linreg.objpert.regulariser_dropped"}
BROKEN = {"linreg.ssp.xty_noise_omitted", "linreg.objpert.regulariser_dropped", "linreg.dp_ambssgd.dpstat_bypassed", "linreg.dp_ambssgd.noise_halved",
          "linreg.fixed_clip.add_remove_sensitivity", "linreg.dp_ssgd.noise_removed",
          "linreg.dp_ssgd.unshuffled"}


def test_targets_are_registered_under_the_claimed_relation():
    ts = {t.name: t for t in audit.targets(["linreg"])}
    assert NAMES <= set(ts)
    for t in ts.values():
        assert t.paper == "linreg" and t.relation == "replace-one"   # errata LR-E2
    broken = {n for n, t in ts.items() if t.expect == "broken"}
    assert broken == BROKEN


def test_fixed_stream_replays_D_in_order_and_wraps():
    X, y = np.arange(5.0)[:, None], -np.arange(5.0)
    s = al.FixedStream.of(X, y)
    gens = [np.random.default_rng(i) for i in range(3)]
    X1, y1 = s.sample(gens, 3)
    X2, y2 = s.sample(gens, 4)
    assert X1.shape == (3, 3, 1) and np.array_equal(X1[2, :, 0], [0, 1, 2])
    assert np.array_equal(y2[0], [-3, -4, 0, -1])          # wraps: a finite D is re-read
    sh = al.FixedStream.of(X, y, shuffle=True)
    Xs, ys = sh.sample(gens, 5)
    for r in range(3):                                     # each run: a permutation of D
        assert sorted(Xs[r, :, 0]) == [0, 1, 2, 3, 4] and np.array_equal(ys[r], -Xs[r, :, 0])
    assert not np.array_equal(Xs[0], Xs[1])


@pytest.mark.parametrize("canary", ["grad", "stat"])
def test_pairs_differ_in_exactly_one_record(canary):
    (X0, y0), (X1, y1) = al._amb_data(0, canary), al._amb_data(1, canary)
    diff = np.flatnonzero(np.any(X0 != X1, axis=1) | (y0 != y1))
    assert diff.size == 1
    # the gradient canary sits in the gradient batch (after the s stat points), the stat
    # canary among the stat points
    assert (diff[0] >= al._S) == (canary == "grad")
    r0, r1 = al._stat_residuals(0, 50), al._stat_residuals(1, 50)
    assert np.count_nonzero(r0 != r1) == 1


def test_claims_match_independent_accounting():
    """The module's reported guarantees equal dp-accounting's ε of ½α⁻²-zCDP (the gradient step
    and DP-STAT's L + 1 counts of std α√(L + 1) both cost ½α⁻²), and DP-SSGD's amplified ε is
    in the theorem's range and below its unamplified ε₀."""
    a = lr.alpha_for_epsilon(al.EPSILON, al.DELTA)
    rho = accounting.zcdp_rho(accounting.gaussian_event(a))
    assert rho == pytest.approx(0.5 / a**2, rel=1e-9)
    want = accounting.zcdp_to_epsilon(0.5 / a**2, al.DELTA)
    assert want == pytest.approx(al.EPSILON, rel=1e-6)
    assert al.ambssgd_claim() == pytest.approx(want, rel=1e-6)
    assert al.fixed_claim() == pytest.approx(want, rel=1e-6)
    assert al.dp_stat_claim() == pytest.approx(want, rel=1e-6)
    p = lr.dp_ssgd_privacy(als._SSGD_ALPHA, als._SSGD_N, al.DELTA)
    assert p["epsilon0"] <= math.log(als._SSGD_N / (16 * math.log(8 / al.DELTA)))
    assert 0 < als.ssgd_claim() < p["epsilon0"]
    # the δ it holds at (LR-E7): δ/2 + (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ/(2n)
    slack = (1 + math.exp(als.ssgd_claim())) * (1 + math.exp(-p["epsilon0"]) / 2)
    assert als.SSGD_DELTA == pytest.approx(al.DELTA * (1 + slack) / 2)


def test_injected_noise_matches_alpha():
    """On the zero data set (every gradient 0) w̄ = −η·α(2ζ/b)·g with T = 1, so
    −w̄/(η·2ζ/b) is N(0, α²): its sample std over 4000 runs is α within 5% (≈ 4.5 sd)."""
    X, y = np.zeros((al._N, 1)), np.zeros(al._N)
    rows = [np.random.default_rng([7, i]) for i in range(4000)]
    res = al._run_amb(al.FixedStream.of(X, y), rows, dither=True)
    info = res.info
    g = -res.w[:, 0] / (info["eta"] * 2 * info["zeta"][:, 0] / info["b"])
    assert np.std(g) == pytest.approx(info["alpha"], rel=0.05)
    assert abs(np.mean(g)) < 0.1 * info["alpha"]


def test_schedule_reads_at_most_n_records():
    """Algorithm 2 partitions its n records: T(b + s) ≤ n, and the stream is read exactly that
    far (a record read twice would enter two mechanisms and break parallel composition)."""
    for n in (110, 1000, 25_000):
        des = lr.LinearRegressionDesign.make(4)
        for T in (None, 1, 3):
            sch = lr.ambssgd_schedule(n, des, T=T)
            assert sch.T * (sch.b + sch.s) <= n
    X, y = al._amb_data(0, "grad")
    for T in (1, 3):
        s = al.FixedStream.of(X, y)
        lr.dp_ambssgd(s, al._N * T, epsilon=2.0, delta=1e-5, rng=[np.random.default_rng(0)], T=T)
        assert s._pos[0] <= al._N * T


def test_patches_restore():
    orig = lr.dp_stat, lr._streams
    with al._patched("dp_stat", al.dp_stat_bypassed), al._patched("_streams",
                                                                   al.noise_scaled(0.5)):
        r = np.array([[0.0, 3.0, 1.0]])
        assert lr.dp_stat(r, B=1.0, alpha=2.0, rng=[np.random.default_rng(0)]).gamma[0] == 3.0
        _, noise = lr._streams([np.random.default_rng(0)])
        assert isinstance(noise[0], al._ScaledNormals)
    assert (lr.dp_stat, lr._streams) == orig


def test_small_audits_private_and_control_caught():
    """Honest targets stay at or below their claim on small runs; the un-privatised clip level is
    caught.  (The noise-halving controls need ≈ 70 000 runs per side: `dprates audit linreg`.)"""
    for name, trials in (("linreg.dp_ambssgd", 4000), ("linreg.dp_stat", 4000),
                         ("linreg.fixed_clip", 4000)):
        t = audit.get_target(name)
        if name == "linreg.fixed_clip":      # its pair search at 1 000 runs per side
            t = dataclasses.replace(t, search_trials=1_000)
        r = audit.run_audit(t, trials=trials)
        assert r.verdict == "OK", (name, r.audited, r.claimed)
    r = audit.run_audit(audit.get_target("linreg.dp_ambssgd.dpstat_bypassed"), trials=2000)
    assert r.verdict == "CAUGHT" and r.audited > 2 * r.claimed


def test_stepwise_view_reads_the_canarys_release():
    """The observe hook gives the DP-SSGD audit the per-step releases: unshuffled, the canary is
    step 0 and its normalised release has mean +μ on D and −μ on D′ (μ = 1/(2α), the clipped
    gradient ±ζ over the noise std 2ζα); the scores are the releases themselves, not the diluted
    tail average (whose shift is ≈ ηζ/(n/2) against a noise std of order ηζα√n)."""
    rel = als._ssgd_step_release(False, "first")
    mu = 1.0 / (2.0 * als._SSGD_STEP_ALPHA)
    z0 = rel(0, np.random.default_rng(1), 2000)
    z1 = rel(1, np.random.default_rng(2), 2000)
    se = 1.0 / math.sqrt(2000)
    assert abs(z0.mean() - mu) < 4 * se and abs(z1.mean() + mu) < 4 * se
    assert abs(z0.std() - 1.0) < 0.05 and abs(z1.std() - 1.0) < 0.05
    # the claim it is held to: the amplified ε at the δ the module reports (LR-E7)
    p = lr.dp_ssgd_privacy(als._SSGD_STEP_ALPHA, als._SSGD_STEP_N, al.DELTA)
    assert als.ssgd_step_claim() == p["epsilon_amplified"]
    assert als.SSGD_STEP_DELTA == p["delta_amplified"] > al.DELTA


@pytest.mark.slow
def test_stepwise_audit_has_power_where_the_final_view_has_none():
    """The per-step audit catches an unshuffled DP-SSGD held to the amplified ε (one step's ε 1.69
    against the claim 0.95); the shuffled algorithm stays below its claim."""
    r = audit.run_audit(audit.get_target("linreg.dp_ssgd.unshuffled"), trials=60_000)
    assert r.verdict == "CAUGHT" and r.audited > r.claimed
    r = audit.run_audit(audit.get_target("linreg.dp_ssgd.stepwise"), trials=4_000)
    assert r.verdict == "OK"


# ---------------------------------------------------------------------------------------------
# sufficient statistics perturbation (empirical/papers/linreg/audit_ssp.py)
# ---------------------------------------------------------------------------------------------
def test_ssp_pair_moves_the_release_by_its_actual_sensitivity():
    """Each placement is a replace-one pair inside SSP's domain; its shift is the formula's
    2B_x⁴(1 − t²) + 2B_x²B_y²(1 + t), largest at t* over a fine grid of t, and below the claimed
    Δ (so the exact ε at t* is below the claim, and above the other placements')."""
    from algorithms.linreg.ssp import ssp_sensitivity
    from empirical.papers.linreg import audit_ssp as s

    shifts = {}
    for t in np.r_[np.linspace(0.0, 1.0, 201), s.worst_cosine()]:
        (X0, y0), (X1, y1) = s.ssp_pair(t)
        assert np.count_nonzero(np.any(X0 != X1, axis=1) | (y0 != y1)) == 1
        assert np.all(np.linalg.norm(X1, axis=1) <= s._BX * (1 + 1e-12))
        assert np.all(np.abs(y1) <= s._BY)
        shifts[t] = np.linalg.norm(s._clean(X1, y1) - s._clean(X0, y0))
        assert shifts[t] == pytest.approx(s.actual_sensitivity(t), rel=1e-12)
    assert max(shifts, key=shifts.get) == s.worst_cosine()
    assert max(shifts.values()) < ssp_sensitivity(s._BX, s._BY)
    assert s.ssp_claim() == pytest.approx(s.SSP_EPSILON, rel=1e-6)
    assert s.ssp_exact(0.0) < s.ssp_exact() < s.ssp_claim()


def test_ssp_weights_come_from_measured_noise():
    """The joint statistic's weights are measured: under the omitted-Xᵀy-noise mutant that
    channel's measured variance is 0 while SSP still reports σ = α·Δ."""
    from empirical.papers.linreg import audit_ssp as s
    from empirical.privacy import mutants

    t = s.worst_cosine()
    v_xx, v_xy = s.measured_variances(t)
    with mutants.applied(mutants.get_mutant("linreg.ssp.xty_noise_omitted")):
        b_xx, b_xy = s.measured_variances(t)
    assert b_xx == v_xx and b_xy == 0.0
    # 400 rows × 4 (XᵀX) or 2 (Xᵀy) coordinates: each within 20% of (α·Δ)² (> 5 sd)
    from algorithms.linreg.ssp import ssp_multiplier, ssp_sensitivity
    var = (ssp_multiplier(s.SSP_EPSILON, s.SSP_DELTA) * ssp_sensitivity(s._BX, s._BY)) ** 2
    assert v_xx == pytest.approx(var, rel=0.2) and v_xy == pytest.approx(var, rel=0.2)


def test_ssp_control_is_caught():
    # at δ = 10⁻⁶ or at the profile point (each bound at α/2)
    r = audit.run_audit(audit.get_target("linreg.ssp.xty_noise_omitted"), trials=1_000)
    assert r.verdict == "CAUGHT" and r.exceeded


@pytest.mark.slow
def test_ssp_audit_searches_and_stays_below_the_exact_epsilon():
    """The honest audit (quick search) certifies part of the exact ε at t* and never more; the
    full search adds the orthogonal and aligned placements."""
    r = audit.run_audit(audit.get_target("linreg.ssp"))
    assert r.verdict == "OK" and 0.3 * r.exact < r.audited <= r.exact < r.claimed
    assert set(r.search) == {"t*, weighted", "t*, xy", "t*, xx"}
    full = audit.run_audit(audit.get_target("linreg.ssp"), search="full", trials=4_000)
    assert len(full.search) == 8 and full.verdict == "OK"


def test_every_target_claims_its_profile():
    """Every linreg target and control claims its profile δ ↦ ε(δ) through the accountant call
    of its claim: equal to the claim at its δ and non-increasing on the ladder (NaN only where
    Theorem 3.1's range excludes a δ, which the ladder does not reach here)."""
    ts = audit.targets(["linreg"])
    assert {t.name for t in ts} >= NAMES and all(t.claimed_epsilon_at is not None for t in ts)
    claims: dict = {}
    for t in ts:
        c = claims.setdefault(id(t.claimed_epsilon), t.claimed_epsilon())
        assert t.claimed_epsilon_at(t.delta) == pytest.approx(c, rel=1e-9), t.name
        eps = [t.claimed_epsilon_at(d) for d in audit.PROFILE_DELTAS]
        assert all(math.isfinite(e) for e in eps) and all(np.diff(eps) <= 0), (t.name, eps)


def test_dp_ssgd_profile_inverts_the_amplified_delta():
    """ε at a final δ: the input δ whose δ_amplified is that δ, Theorem 3.1's ε there (checked by
    re-running the module's own dp_ssgd_privacy at the inverted input); NaN below the range."""
    for d in (1e-3, 5e-2):
        e = als.ssgd_claim_at(d)
        # ε(δ_amplified(δ_in)) for δ_in on either side brackets e
        lo = lr.dp_ssgd_privacy(4.0, 1000, d / 8.0)
        assert lo["delta_amplified"] < d and lo["epsilon_amplified"] >= e
    assert math.isnan(als.amplified_epsilon_at(4.0, 1000, 1e-7))
