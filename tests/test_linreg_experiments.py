"""Linear-regression paper end to end: every experiment of empirical/papers/linreg/experiments.py
is swept once on its quick grid (the test run's results directory, 2 workers) and its verdicts are
asserted as declared.  No slope is typed here: predictions come from ``bounds/`` at each
experiment's own parameters (empirical.core.checks); the reasons for tolerances live with the checks.
Beyond the verdicts: every run's privacy, the theorem's parameters as actually used, the premise
of the common-random-numbers split (nothing clipped), the recorded finding LR-E15 and its
ablation, and the headline numbers (adaptive vs fixed at small σ and at σ = 0).
"""
import math

import numpy as np
import pytest

import bounds
from algorithms.linreg.adaptive_clipping import alpha_for_epsilon
from empirical.core import experiment as registry
from empirical.papers.linreg import experiments as lrx
from empirical.core.checks import ComparisonExperiment, analyse
from empirical.run.runner import sweep
from _open_verdicts import open_cases

IDS = registry.ids("linreg")
#: Judged by slope checks (the comparison experiments by their contrasts).
SLOPE_IDS = [i for i in IDS if not isinstance(registry.get(i), ComparisonExperiment)]
#: DP-AMBSSGD and its fixed-clip baselines (not DP-SSGD, SSP or objective perturbation).
AMB_IDS = [i for i in SLOPE_IDS
           if not i.startswith(("linreg.ssgd", "linreg.ssp", "linreg.objpert"))]


@pytest.fixture(scope="module")
def rows(results_root):
    return {i: sweep(registry.get(i), results=results_root, workers=2) for i in IDS}


@pytest.fixture(scope="module")
def analyses(rows):
    return {i: analyse(registry.get(i), rows[i]) for i in IDS}



def _gmean(v):
    return float(np.exp(np.mean(np.log(v))))


@pytest.mark.parametrize("exp_id", open_cases(SLOPE_IDS))
def test_experiment_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error, a.error
    assert not a.privacy_error, a.privacy_error
    got = [(r.bound, r.kind, r.verdict) for r in a.results]
    want = [(c.bound, c.kind, c.expected_verdict) for c in a.experiment.checks]
    assert got == want, [r.message for r in a.results]
    assert len(a.kept) == len(a.experiment.grid()), a.dropped   # no point is dropped


def test_comparison_verdicts_as_declared(analyses):
    """linreg.ssp.vs_amb: DP-AMBSSGD's privacy term is not below SSP's at equal (ε, δ)
    (FINDING), and both algorithms' noises are measured against their claims."""
    for exp_id in IDS:
        exp = registry.get(exp_id)
        if not isinstance(exp, ComparisonExperiment):
            continue
        a = analyses[exp_id]
        assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
        got = [(r.bound, r.verdict) for r in a.results]
        assert got == [(c.name, c.expected_verdict) for c in exp.contrasts], got


def test_every_run_is_certified_at_exactly_its_target(rows):
    """(ε, δ) from dp-accounting: guarantee = target within 1e-9 and spend ≤ guarantee in every
    stored row of DP-AMBSSGD and of the fixed-clip baselines (the same accounting).  DP-SSGD
    rows carry the ½α⁻²-zCDP of parallel composition (LR-E7)."""
    for exp_id in AMB_IDS:
        r = rows[exp_id]
        t = np.array([x["epsilon_target"] for x in r])
        g = np.array([x["epsilon_guarantee"] for x in r])
        s = np.array([x["epsilon_spent"] for x in r])
        np.testing.assert_allclose(g, t, rtol=1e-9, err_msg=exp_id)
        assert np.all(s <= g * (1 + 1e-12)), exp_id
        rho = np.array([x["rho_guarantee"] for x in r])
        a = np.array([x["alpha_used"] for x in r])
        np.testing.assert_allclose(rho, 0.5 / a**2, rtol=1e-12)
    for exp_id in ("linreg.ssgd.n", "linreg.ssgd.negctl"):
        for x in rows[exp_id]:
            assert x["rho_guarantee"] == pytest.approx(0.5 / x["alpha_used"] ** 2, rel=1e-12)
            assert x["rho_spent"] <= x["rho_guarantee"] * (1 + 1e-12)
            assert x["epsilon_amplified"] is None or math.isnan(x["epsilon_amplified"])


def test_theorem_parameters_as_used(rows):
    """T = ⌈c₁κ ln n⌉ (c₁ = 1) or the swept T, b = ⌊10n/(11T)⌋, s = ⌊n/(11T)⌋ (b = ⌊n/T⌋, s = 0
    for fixed clipping), η = b/(R_x² + b − 1), R_x² = d + 2, α calibrated to (ε, δ),
    B = R_x(‖w*‖ + σ)log^{2a} n (a = ½ Gaussian, 1 Laplace)."""
    for exp_id in AMB_IDS:
        exp = registry.get(exp_id)
        for x in rows[exp_id]:
            p = {k[2:]: v for k, v in x.items() if k.startswith("p_")}
            n, d = int(p["n"]), int(p["d"])
            T = int(p["T"]) if "T" in p else math.ceil(p.get("condition_number", 1.0) * math.log(n))
            fixed_clip = int(p.get("clip", 0)) > 0
            b, s = (n // T, 0) if fixed_clip else (10 * n // (11 * T), n // (11 * T))
            assert (x["T_used"], x["b_used"], x["s_used"]) == (T, b, s), exp_id
            des = lrx.design_for(p)
            assert x["rx2_used"] == pytest.approx(des.rx2)
            assert des.rx2 <= d + (2 if des.design == "gaussian" else 5) + 1e-12
            assert x["eta_used"] == pytest.approx(b / (des.rx2 + b - 1), rel=1e-12)
            eps = p["epsilon"] if "epsilon" in p else lrx.epsilon_for_alpha(p["alpha"])
            assert x["epsilon_target"] == eps
            assert x["alpha_used"] == alpha_for_epsilon(eps, lrx.DELTA)
            if "alpha" in p:
                assert x["alpha_used"] == pytest.approx(p["alpha"], rel=1e-12)
            assert x["B_used"] == pytest.approx(math.sqrt(des.rx2) * (p["w_norm"] + p["sigma"])
                                                * math.log(n) ** (2 * des.tail_a), rel=1e-12)
            assert x["stat_rounds_max"] <= (0 if fixed_clip else 41)
        assert exp.private
    for x in rows["linreg.ssgd.n"]:
        n, d = int(x["p_n"]), int(x["p_d"])
        assert x["alpha_used"] == pytest.approx(math.log(n / 1e-6) / (x["p_epsilon"] * math.sqrt(n)))
        assert x["eta_used"] == pytest.approx(1 / (4 * d))
        assert x["zeta_used"] == pytest.approx(math.sqrt(d) * math.sqrt(2.0) * math.log(n))


def test_nothing_is_clipped_where_the_lemmas_are_checked(rows):
    """The privacy/non-private split (common random numbers) is exact only without clipping,
    and Lemmas 3.5/3.11 assume it: DP-AMBSSGD and the baselines clip nothing in most runs and at
    most 5·10⁻⁴ of the examples in any run (where DP-STAT's slack Γ_p is ≥ 8% of s — n = 2.5·10⁴,
    ε = 0.5, κ = 8 — the estimated quantile is lower).  That is ≤ 1 example per step at b ≈ 2000,
    changing the step by ≤ ζ_t against privacy noise of norm 2αζ_t√d ≈ 10ζ_t: the split is off
    by ≤ 10% in amplitude at the worst point, below one seed's spread; DP-SSGD at ε = 4 clips < 0.5%; the negative control
    clips ≥ 10% (that is why it breaks)."""
    for exp_id in AMB_IDS:
        clip = np.array([x["clip_fraction"] for x in rows[exp_id]])
        assert clip.max() <= 5e-4 and np.median(clip) == 0.0, exp_id
    assert max(x["clip_fraction"] for x in rows["linreg.ssgd.n"]) < 5e-3
    assert min(x["clip_fraction"] for x in rows["linreg.ssgd.negctl"]) > 0.1


def test_privacy_term_is_the_noise_response_predicted_from_the_logged_clips(rows):
    """The measured privacy term matches (1/T)·4α²η²Tr(H⁻¹)·mean ζ_t²/b² (tail iterates nearly
    independent) computed from each run's own ζ_t — within seed noise on the geometric mean.
    This ties the privacy term to the noise the algorithm actually added."""
    for exp_id in ("linreg.amb.n.privacy", "linreg.amb.d.privacy", "linreg.amb.alpha.privacy",
                   "linreg.amb.d.feedback"):
        by = {}
        for x in rows[exp_id]:
            by.setdefault(x[f"p_{registry.get(exp_id).variable}"], []).append(
                x["privacy"] / x["privacy_plugin"])
        for v, r in by.items():
            assert 0.5 < _gmean(r) < 1.5, (exp_id, v, _gmean(r))


def test_finding_lr_e15_and_its_ablation(analyses):
    """LR-E15: the paper's DP-STAT rule (threshold s − Γ, Γ ∝ α) flattens the privacy term's
    α-slope to ≈ 1.7 (α² expected) and its n-slope to ≈ −1.56; at a fixed quantile level (same
    privacy) the slopes are the bound's.  Pinned both ways, so a change in either shows up; the
    mechanism is pinned too: the logged clip ζ_t falls as α grows under the paper's rule only."""
    al, al_q = analyses["linreg.amb.alpha.privacy"], analyses["linreg.amb.alpha.privacy_quantile"]
    n, n_q = analyses["linreg.amb.n.privacy"], analyses["linreg.amb.n.privacy_quantile"]
    # predicted exponents from bounds/ at the experiments' own parameters (α², n⁻²)
    p_alpha = al_q.results[0].asymptotic
    p_n = n_q.results[0].asymptotic
    # margins: 0.15 is the checks' tolerance; 0.7 and 0.35 say "flattened, not absent"
    assert al.fit.slope < p_alpha - 0.15 and al.fit.ci_low > p_alpha - 0.7
    assert abs(al_q.fit.slope - p_alpha) < 0.15 and al_q.fit.slope > al.fit.ci_high
    assert n.fit.slope > p_n + 0.35 and n_q.fit.slope < n.fit.slope - 0.2
    # the level of the upper bound with explicit constants (Lemma 3.11) holds on the paper's rule
    lem = bounds.get("linreg:lem311_privacy")
    exp = registry.get("linreg.amb.n.privacy")
    for v, y in zip(n.fit.x, n.fit.y):
        assert y <= lem(**exp.bound_values(exp.point(v)))


def test_lr_e15_mechanism_is_the_clip_level(rows):
    def zeta(exp_id, a):
        return np.mean([x["zeta_tail_rms"] for x in rows[exp_id] if x["p_alpha"] == a])
    paper = zeta("linreg.amb.alpha.privacy", 0.75) / zeta("linreg.amb.alpha.privacy", 6.0)
    ablation = zeta("linreg.amb.alpha.privacy_quantile", 0.75) / zeta(
        "linreg.amb.alpha.privacy_quantile", 6.0)
    assert paper > 1.3 and abs(ablation - 1) < 0.1

    def zeta_n(exp_id, n):   # ζ_t/(R_x√ln n): the quantile DP-STAT estimates, in units of σ_r
        return np.mean([x["zeta_tail_rms"] / math.sqrt(x["rx2_used"] * math.log(n))
                        for x in rows[exp_id] if x["p_n"] == n])
    assert zeta_n("linreg.amb.n.privacy", 400_000) / zeta_n("linreg.amb.n.privacy", 50_000) > 1.2
    q = zeta_n("linreg.amb.n.privacy_quantile", 400_000) / zeta_n("linreg.amb.n.privacy_quantile",
                                                                  50_000)
    assert abs(q - 1) < 0.1


def _feedback_gain(row: dict, q: float) -> float:
    """LR-E18's per-phase gain c = 4α²η²d·R_x²q²ln n/b², from a row's logged parameters: the
    fraction of an iterate's error that the next phase's privacy noise returns through the clip
    ζ_t = R_xq√ln n·σ_r, σ_r² = σ² + ‖w_t − w*‖² (σ = 1 here; η ≈ 1 forgets the rest)."""
    return (4 * row["alpha_used"] ** 2 * row["eta_used"] ** 2 * row["p_d"] * row["rx2_used"]
            * math.log(row["p_n"]) * q**2 / row["b_used"] ** 2)


def _clip_quantile_by_d(rows) -> dict:
    """ζ_t/(R_x√ln n) averaged over seeds and tail phases: the quantile DP-STAT lands on, in
    units of σ_r (σ_r = σ = 1 while the feedback is negligible)."""
    by = {}
    for x in rows:
        by.setdefault(x["p_d"], []).append(x)
    return {d: (np.mean([x["zeta_tail_rms"] for x in r])
                / math.sqrt(r[0]["rx2_used"] * math.log(r[0]["p_n"])), r[0])
            for d, r in sorted(by.items())}


def _feedback_prediction(rows) -> list[tuple[float, float, float, float]]:
    """(d, c, observed ζ-quantile, predicted (1 − c)^{−1/2}·q₀) per d.  q₀, the only quantity
    taken from the data, is the mean quantile over the points whose own gain is < 0.03 (each
    corrected by its √(1 − c)): one point's χ²_d spread (±3% at d = 4) would otherwise move the
    prediction by c/(1 − c) times as much where c → 1."""
    z = _clip_quantile_by_d(rows)
    stable = [q * math.sqrt(1 - _feedback_gain(r, q)) for q, r in z.values()
              if _feedback_gain(r, q) < 0.03]
    q0 = float(np.mean(stable))
    return [(d, _feedback_gain(r, q0), q, q0 / math.sqrt(1 - _feedback_gain(r, q0)))
            for d, (q, r) in z.items()]


def test_lr_e18_the_clip_feedback_explains_the_d_finding(rows, analyses):
    """LR-E18: past d ≈ 32 at n = 2.5·10⁴ the privacy term outgrows d² (FINDING, slope ≈ 2.4)
    because the clip ζ_t tracks the iterate's own privacy error.  The gain c computed from each
    row's logged α, η, b, R_x² and the stable quantile q₀ predicts the logged ζ_t to within
    −7%/+10% at every d (ζ_t lives on DP-STAT's dithered doubling grid; the model drops the
    (1 − η) carry-over and the non-private σ²d/b part of σ_r, both ≤ 5% here), while the
    no-feedback reading (ζ_t flat in d) is off by > 1.5× at d = 96.  linreg.amb.d.privacy is
    declared to hold inside the stable regime: c ≤ 0.06 on its quick grid, Lemma 3.11's explicit
    premise (from bounds/) holds at every d ≤ 64 and fails at d = 128, 256 (where its full grid
    records the finding) and at the feedback finding's top points.  The feedback finding's level
    band is enforced by its verdict (a 4× privacy term FAILS)."""
    pred = _feedback_prediction(rows["linreg.amb.d.feedback"])
    for d, c, obs, p in pred:
        assert 0.93 < obs / p < 1.10, (d, c, obs, p)
    d_top, c_top, obs_top, _ = pred[-1]
    assert c_top > 0.5 and obs_top / pred[0][2] > 1.5          # the competing reading fails
    stable = _feedback_prediction(rows["linreg.amb.d.privacy"])
    assert max(c for _, c, _, _ in stable) <= 0.06
    for d, c, obs, p in stable:
        assert 0.93 < obs / p < 1.10, (d, c, obs, p)
    lem = bounds.get("linreg:lem311")
    ad, fb = registry.get("linreg.amb.d.privacy"), registry.get("linreg.amb.d.feedback")
    # the premise holds where d.privacy expects d² to hold (d ≤ 64) and fails where its full
    # grid records the finding (d = 128, 256) and at the feedback finding's top points
    assert all(lem.applies(**ad.bound_values(ad.point(v))) for v in ad.grid(full=True) if v <= 64)
    assert not any(lem.applies(**ad.bound_values(ad.point(v))) for v in (128, 256))
    assert not any(lem.applies(**fb.bound_values(fb.point(v))) for v in (64, 96))
    # Theorem 3.7's own condition (Ω̃-constant 1) holds everywhere: it does not see the regime
    thm = bounds.get("linreg:thm37_privacy")
    assert all(thm.applies(**fb.bound_values(fb.point(v))) for v in fb.grid(full=True))
    # the finding is a slope well past the tolerance, not a CI artefact
    f = analyses["linreg.amb.d.feedback"]
    assert f.fit.ci_low > f.results[0].local + 0.15
    # a finding of the slope whose level band is enforced by the verdict: the privacy term ×4
    # or ×¼ (noise drawn at twice or half its std) keeps the slope and FAILS on the level
    assert (f.results[0].verdict, f.results[0].finding_on) == ("FINDING", "slope")
    for scale in (4.0, 0.25):
        off = [{**x, "privacy": x["privacy"] * scale} for x in rows["linreg.amb.d.feedback"]]
        assert analyse(f.experiment, off).results[0].verdict == "FAIL", scale


def test_headline_adaptive_vs_fixed(analyses):
    """σ = 10⁻⁴: adaptive clipping's excess is ≥ 10⁵ times smaller than fixed clipping's (whose
    privacy term stays on its ‖w*‖ floor); σ = 0: adaptive clipping reaches ≤ 10⁻¹⁵ after 10
    phases while fixed clipping stays above 10⁻⁴ at every T."""
    ad, fx = analyses["linreg.sigma.adaptive"], analyses["linreg.sigma.fixed"]
    assert _gmean(fx.per_point[1e-4]) / _gmean(ad.per_point[1e-4]) > 1e5
    assert _gmean(fx.per_point[1.0]) / _gmean(ad.per_point[1.0]) > 3   # even at σ = ‖w*‖
    a0, f0 = analyses["linreg.sigma0.adaptive"], analyses["linreg.sigma0.fixed"]
    assert _gmean(a0.per_point[10]) < 1e-15
    assert min(_gmean(v) for v in f0.per_point.values()) > 1e-4
    # the ‖w*‖ sweep: the roles swap (fixed grows ≈ ‖w*‖², adaptive flat)
    wa, wf = analyses["linreg.wnorm.adaptive"], analyses["linreg.wnorm.fixed"]
    # predicted: ‖w*‖⁰ (Theorem 3.7) and ‖w*‖² (fixed clip), from bounds/; 0.1 is the checks'
    # tolerance, 0.4 allows the fixed clip's local slope (+1.81 over this grid) below its limit
    assert abs(wa.fit.slope - wa.results[0].asymptotic) < 0.1
    assert wf.fit.slope > bounds.get("linreg:fixed_clip").exponent("w_norm") - 0.4


def test_d3_against_d2(analyses):
    lip, ad = analyses["linreg.d3.lipschitz"], analyses["linreg.amb.d.privacy"]
    assert lip.fit.slope - ad.fit.slope > 0.6
    assert lip.fit.ci_low > ad.fit.ci_high


def test_bound_predictions_come_from_the_bounds_module(analyses):
    """The declared predictions are the bounds' own numbers at the experiment's parameters."""
    a = analyses["linreg.amb.d.privacy"]
    r = a.results[0]
    exp = a.experiment
    vals = exp.bound_values(exp.point(a.kept[0]))
    b = bounds.get(r.bound)
    assert r.asymptotic == float(b.exponent("d", **{k: v for k, v in vals.items() if k != "d"}))
    ys = [b(**exp.bound_values(exp.point(v))) for v in a.kept]
    assert r.local == pytest.approx(np.polyfit(np.log(a.kept), np.log(ys), 1)[0], abs=1e-9)


@pytest.fixture(scope="module")
def full_root(tmp_path_factory):
    """One results directory for this module's full-grid sweeps (each point computed once)."""
    return tmp_path_factory.mktemp("linreg-full")


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", IDS)
def test_full_grid_verdicts_as_declared(full_root, exp_id):
    """Every linreg experiment on its full grid: the same verdicts as declared, no point dropped,
    privacy and settings verdicts clean (minutes; `pytest -m slow`)."""
    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, full=True, results=full_root, workers=2))
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert a.grid == "full"
    want = [(c.bound, c.expected_verdict_for(True)) for c in exp.checks]
    assert [(r.bound, r.verdict) for r in a.results] == want, [r.message for r in a.results]
    assert len(a.kept) == len(exp.grid(full=True)), a.dropped


def _rows_at(exp, point: dict) -> list[dict]:
    """One point's rows in the runner's long format, seeded as the runner seeds ``exp`` (same
    SeedSequence from the experiment id and point), for grids that are not registered."""
    from empirical.run.runner import seed_generators
    out = exp.run(dict(point), seed_generators(exp.id, point, exp.seeds))
    return [{"experiment": exp.id, "seed": r, **{f"p_{k}": v for k, v in point.items()},
             **{k: float(np.asarray(v)[r]) for k, v in out.items()}} for r in range(exp.seeds)]


@pytest.mark.slow
def test_lr_e18_full_grid_is_a_finding(full_root):
    """LR-E18: linreg.amb.d.privacy's full grid, d = 4…256 at n = 10⁵, is declared
    PASS on its quick grid (d ≤ 64) and FINDING of the slope and the level on its full grid
    (expect_full, finding_on="slope+level").  There the privacy term grows as d^{2.24}
    [2.17, 2.31]: Theorem 3.7's d² fails (two-sided, 0.15) and the level leaves the calibrated
    band at d = 256, while d³ is still rejected; the clip's feedback gain (1 − c)^{−1/2},
    c = 0.2 and 0.8 at d = 128 and 256, predicts the logged ζ_t (the model is least accurate as
    c → 1, hence +15%)."""
    exp = registry.get("linreg.amb.d.privacy")
    rows = list(sweep(exp, full=True, results=full_root, workers=2))
    a = analyse(exp, rows)
    assert a.grid == "full" and {128, 256} <= set(a.kept)
    assert [r.verdict for r in a.results] == ["FINDING", "REJECTED", "REJECTED"], \
        [r.message for r in a.results]
    assert "finding of the slope and level" in a.results[0].message
    assert a.fit.ci_low > a.results[0].local + 0.15
    assert a.results[0].level_range[1] > a.experiment.checks[0].level[1]
    # the points d ≤ 64 of the same run are in the band: the level finding is d = 128, 256's
    inside = [x for v, x in zip(a.kept, a.results[0].ratios) if v <= 64]
    lo, hi = a.experiment.checks[0].level
    assert all(lo <= x <= hi for x in inside), inside
    pred = _feedback_prediction(rows)
    assert pred[-1][1] > 0.6
    for d, c, obs, p in pred:
        assert 0.93 < obs / p < 1.15, (d, c, obs, p)
    assert max(x["clip_fraction"] for x in rows) == 0.0   # growth without clipping bias


@pytest.mark.slow
def test_lr_e18_d_squared_returns_at_larger_n():
    """The positive control of LR-E18: the same d = 4…256 sweep at n = 4·10⁵ (16 seeds, ~70 CPU-s)
    keeps the gain c ≤ 0.12, and there Theorem 3.7's d² PASSES (two-sided, 0.15, the declared
    check) and d³ is rejected: the exponent is the theorem's once n is past the feedback
    regime.  The level band is left out here: it is a calibration at n = 10⁵, and LR-E15 moves
    DP-STAT's quantile (ζ_t/(R_x√ln n) ≈ 3.1 → 4.0) between the two n."""
    exp = _d_twin(400_000, 0, 16)
    rows = [r for d in exp.full_grid for r in _rows_at(exp, exp.point(d))]
    pred = _feedback_prediction(rows)
    assert max(c for _, c, _, _ in pred) <= 0.12
    a = analyse(exp, rows)
    assert [r.verdict for r in a.results] == ["PASS", "REJECTED", "REJECTED"], \
        [r.message for r in a.results]


def _d_twin(n: int, stat_rule: int, seeds: int):
    """linreg.amb.d.privacy at another n or DP-STAT rule over d = 4…256, unregistered (its own
    seeds from its own id); the level band is left out: it is a calibration at n = 10⁵ under the
    paper's rule, and LR-E15 moves DP-STAT's quantile with n and with the rule."""
    import dataclasses
    base = registry.get("linreg.amb.d.privacy")
    # expected to hold on every grid: the twins test whether d² returns, not LR-E18's record
    checks = tuple(dataclasses.replace(c, level=None, level_reason="", expect_full=None,
                                       finding_on=None, calibration=None) for c in base.checks)
    return dataclasses.replace(base, id=f"linreg.amb.d.privacy_n{n}_rule{stat_rule}", seeds=seeds,
                               checks=checks, fixed={**base.fixed, "n": n, "stat_rule": stat_rule},
                               full_grid=(4, 8, 16, 32, 64, 128, 256))


@pytest.mark.slow
def test_lr_e18_fixed_quantile_twin():
    """LR-E18 is not LR-E15's drift: DP-STAT's quantile level does not move with d (s and α are
    fixed).  At a fixed quantile (rule 1, same n = 10⁵, 24 seeds, ~30 CPU-s) DP-STAT lands on a
    lower q (≈ 2.4 against 3.1), so the gain is smaller (≈ 0.46 at d = 256 against 0.79); the
    logged clip still rises past d = 64 exactly as the gain predicts, and the slope stays within
    the tolerance of d² (PASS): the same feedback, weaker through q²."""
    exp = _d_twin(100_000, 1, 24)
    rows = [r for d in exp.full_grid for r in _rows_at(exp, exp.point(d))]
    pred = _feedback_prediction(rows)
    for d, c, obs, p in pred:
        assert 0.93 < obs / p < 1.15, (d, c, obs, p)
    assert 0.3 < pred[-1][1] < 0.6 and pred[-1][2] / pred[0][2] > 1.3
    a = analyse(exp, rows)
    assert [r.verdict for r in a.results] == ["PASS", "REJECTED", "REJECTED"], \
        [r.message for r in a.results]


@pytest.mark.slow
def test_full_grid_lr_e15_persists_to_n_1_6e6(full_root):
    """Full grids (n up to 1.6·10⁶): the paper's rule stays at ≈ n^{−1.57} (CI [−1.64, −1.51] in
    our run; still FINDING against the band [−2, −1.75]) while the fixed-quantile ablation gives
    ≈ −1.85 and passes — the flattening is not a small-n transient of the quick grid."""
    root = full_root
    paper = analyse(registry.get("linreg.amb.n.privacy"),
                    sweep(registry.get("linreg.amb.n.privacy"), full=True, results=root, workers=2))
    ablation = analyse(registry.get("linreg.amb.n.privacy_quantile"),
                       sweep(registry.get("linreg.amb.n.privacy_quantile"), full=True, results=root,
                             workers=2))
    assert [r.verdict for r in paper.results] == ["FINDING", "REJECTED"]
    assert [r.verdict for r in ablation.results] == ["PASS", "PASS", "REJECTED"]
    assert ablation.fit.slope < paper.fit.ci_low
