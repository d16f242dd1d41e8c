"""SOSP paper end to end: every experiment (empirical/papers/sosp/rates.py, sosp_escape.py,
sosp_selection.py; registered by empirical/papers/sosp/experiments.py) is swept once on its quick grid
(the test run's results directory, 2 workers) and its verdicts are asserted as declared.  No
slope is typed here: predictions come from ``bounds/`` at each experiment's own parameters
(empirical.core.checks); the tolerances' reasons live with the checks.  Beyond the slopes: every
recorded parameter equals the theorem's (practical) setting, one calibrated constant is held
fixed across each sweep, every output is an α-SOSP (the one-sided check of α), the noise stays
below χ (Lemma 5), the sample budget holds, and every run's privacy is certified at its target.
"""
import math

import numpy as np
import pytest

import bounds
from algorithms.sosp.nonconvex import gaussian_multiplier, practical_gamma, selection_multiplier
from empirical.core import experiment as registry
from empirical.papers.sosp import experiments as sx
from empirical.core.checks import analyse
from empirical.run.runner import sweep
from _open_verdicts import open_cases, open_full_cases

#: Full-grid-only experiments whose quick grids alone cost 4–40 CPU-seconds (n = 1e6 records at
#: c_χ = 0.05, the saddle family on m = 4 clients, 96–200 seeds): judged on their full grids only
#: (tests/test_full_only.py, ``-m slow``); their declarations are checked here all the same.
HEAVY_FULL_ONLY = frozenset({"sosp.out.floor.n", "sosp.out.floor.eps", "sosp.out.floor.eps_frozen",
                             "sosp.out.curv.dist.eps", "sosp.out.curv.dist.eps_frozen",
                             "sosp.out.grad.n", "sosp.out.grad.m", "sosp.out.grad.dist.n"})
IDS = [i for i in registry.ids("sosp") if i not in HEAVY_FULL_ONLY]
DECLARED = frozenset(registry.ids("sosp"))
RATE_IDS = [i for i in IDS if i.startswith("sosp.ada.")]


@pytest.fixture(scope="module")
def rows(results_root):
    return {i: sweep(registry.get(i), results=results_root, workers=2) for i in IDS}


@pytest.fixture(scope="module")
def analyses(rows):
    return {i: analyse(registry.get(i), rows[i]) for i in IDS}



def test_the_paper_has_its_experiments():
    assert set(IDS) >= {"sosp.ada.n", "sosp.ada.n.frozen_plan", "sosp.ada.d", "sosp.ada.epsilon", "sosp.ada.n.nonprivate",
                        "sosp.ada.m", "sosp.ada.m.het", "sosp.escape.threshold.psi",
                        "sosp.escape.time.r", "sosp.escape.spider.n", "sosp.select.d", "sosp.select.d.tied"}


#: Checks expected to hold that carry no level band, and why (every other one must have one).
_FLOOR_NO_LEVEL = ("the design c_χ = 0.05 is outside Lemma 5's premise χ ≥ cψ: the output is "
                   "no α_design-SOSP (‖∇F(x_out)‖/α_design = 3.3–3.9), so no theorem constant "
                   "bounds its level; the rows record its level against the noise itself, "
                   "‖∇F(x_out)‖/ψ_emp")
NO_LEVEL = {("sosp.ada.epsilon", "sosp:thm2"):
            "one-sided companion of the ε check: the full bound's level depends on the free "
            "constants of its two terms; the level is checked on sosp:thm2_privacy",
            ("sosp.out.floor.n", "sosp:thm2"): _FLOOR_NO_LEVEL,
            ("sosp.out.floor.eps", "sosp:thm2"): _FLOOR_NO_LEVEL,
            ("sosp.out.floor.eps_frozen", "sosp:lem7_noise"):
            "Lemma 7 is an O(·) whose constants the paper does not state, and its sampling "
            "variance G_s²/b1 exceeds the instance's (≈ 0.6 G_s²/b1): no constant to band; the "
            "rows record ‖∇F(x_out)‖/ψ_emp"}


def test_every_check_that_should_hold_has_a_level_band_or_a_stated_exemption():
    """A slope alone misses a wrong constant (a lost 1/√m, replace-one vs add/remove noise):
    every two- or one-sided SOSP check has a level band with its reason, unless exempted above
    (reject checks compare slopes only)."""
    missing = []
    for i in sorted(DECLARED):
        for c in registry.get(i).checks:
            if c.kind == "reject":
                continue
            if c.level is None:
                if (i, c.bound) not in NO_LEVEL:
                    missing.append((i, c.bound))
            else:
                assert c.level_reason and c.level[0] < c.level[1], (i, c.bound)
    assert not missing, missing
    assert set(NO_LEVEL) <= {(i, c.bound) for i in DECLARED for c in registry.get(i).checks}


@pytest.mark.parametrize("exp_id", open_cases(IDS))
def test_experiment_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error, a.error
    assert not a.privacy_error, a.privacy_error
    got = [(r.bound, r.kind, r.verdict) for r in a.results]
    want = [(c.bound, c.kind, c.expected_verdict) for c in a.experiment.checks]
    assert got == want, [r.message for r in a.results]
    assert len(a.kept) >= 3 and not a.dropped


@pytest.mark.parametrize("exp_id", IDS)
def test_prediction_comes_from_bounds_at_the_experiments_values(analyses, exp_id):
    a = analyses[exp_id]
    exp = a.experiment
    for r, c in zip(a.results, exp.checks):
        b = bounds.get(c.bound)
        vals = (c.values or exp.bound_values)(exp.point(a.kept[0]))
        if exp.variable in b.variables and r.kind != "reject":
            fixed = {k: v for k, v in vals.items() if k != exp.variable}
            assert r.asymptotic == pytest.approx(float(b.exponent(exp.variable, **fixed)))


def test_every_rate_run_uses_the_theorems_settings(rows):
    """Recorded parameters = Theorem 2/3's practical settings at the row's own α, κ:
    χ = α/4, η = √(ρα)/M², R = √(α/ρ), b1 = ⌈nκ/(2Uη)⌉, b2 = max{1, ⌈nηχ²/(2U)⌉},
    Γ = the practical formula at the averaged O₁ noise, noise multiplier = dp-accounting's z for
    (ε, δ), σ₁ = z·2G_s/b1; and ONE constant c_χ for the whole sweep."""
    for exp_id in RATE_IDS:
        exp = registry.get(exp_id)
        rs = rows[exp_id]
        assert {r["c_chi"] for r in rs} == {sx.C_CHI}, exp_id
        assert {r["Q"] for r in rs} == {sx.Q_RATE}
        for r in rs:
            p = exp.point(r[f"p_{exp.variable}"])
            prob = sx.problem(p)
            n, m = int(p.get("plan_n", p["n"])), int(p.get("m", 1))
            a, k = r["alpha"], r["kappa"]
            eta = math.sqrt(prob.hessian_lipschitz * a) / prob.M**2
            assert r["chi"] == pytest.approx(a / 4, rel=1e-12)
            assert r["eta"] == pytest.approx(eta, rel=1e-12)
            assert r["radius"] == pytest.approx(math.sqrt(a / prob.hessian_lipschitz), rel=1e-12)
            assert r["b1"] == min(n, math.ceil(n * k / (2 * prob.U * eta)))
            assert r["b2"] == max(1, math.ceil(n * eta * (a / 4) ** 2 / (2 * prob.U)))
            z = gaussian_multiplier(float(p["epsilon"]), float(p["delta"]))
            assert r["noise_multiplier"] == z
            assert r["sigma1"] == pytest.approx(z * 2 * prob.G_sens / r["b1"], rel=1e-12)
            assert r["Gamma"] == practical_gamma(a, prob.hessian_lipschitz, prob.M,
                                                 r["sigma1"] / math.sqrt(m))
            if m == 1:   # eq. 104's κ, from bounds/, at the row's values
                vals = sx.rate_values({**p, "n": n})
                kb = bounds.get("sosp:thm2_kappa")
                assert r["kappa_thm"] == pytest.approx(kb(**{kk: vals[kk] for kk in kb.variables}),
                                                       rel=1e-9)


def test_every_output_is_an_alpha_sosp(rows):
    """The one-sided check of α (Theorems 1–3 certify α_emp ≤ α; α_emp itself is not fitted:
    the output is the first point where ‖ĝ‖ ≤ 3χ, so α_emp/α lands anywhere in (0, 1]):
    in every run of every rate sweep the output is an α-SOSP, it escaped the saddle
    (|x₁| > π/2: the frozen Ada-DP-SPIDER noise of E2(g) does not prevent escape), no run hit
    the step cap or ran out of records, and the estimation noise stayed below χ (Lemma 5) in
    each run with probability ≥ 1 − ω (ω = 0.05).  Lemma 5's probability is per run, so the
    exceedances over all rate runs are judged by a one-sided binomial test at level 10⁻³ against
    ω: a noise scale too small for χ gives far more exceedances than Binomial(N, ω), while a
    per-sweep "≥ 95%" would fail an 18-run sweep on one exceedance, which ω makes 60% likely
    (observed: one run in all the rate sweeps)."""
    from scipy import stats

    below = []
    for exp_id in RATE_IDS:
        rs = rows[exp_id]
        assert all(r["is_sosp"] == 1.0 for r in rs), exp_id
        assert all(r["alpha_emp"] <= r["alpha"] for r in rs)
        assert all(r["escaped"] == 1.0 for r in rs)
        assert all(r["capped"] == 0.0 and r["out_of_data"] == 0.0 for r in rs)
        below += [r["err_max_over_chi"] <= 1.0 for r in rs]
    over = len(below) - int(np.sum(below))
    p_value = stats.binom.sf(over - 1, len(below), 0.05)
    assert p_value >= 1e-3, (over, len(below), p_value)


def test_sample_budget_and_lemma8(rows):
    for exp_id in RATE_IDS:
        exp = registry.get(exp_id)
        for r in rows[exp_id]:
            p = exp.point(r[f"p_{exp.variable}"])
            n = int(p["n"])
            assert r["samples_per_client"] == r["o1_calls"] * r["b1"] + r["o2_calls"] * r["b2"]
            assert r["samples_per_client"] <= n
            U = sx.problem(p).U
            lemma8 = 6 * r["eta"] * (U + 5 * r["steps"] * r["eta"] * r["chi"] ** 2) / r["kappa"]
            assert r["o1_calls"] <= lemma8


def test_every_private_run_is_certified_at_its_target(rows):
    """ε guarantee (dp-accounting, one Gaussian per record by parallel composition for
    Ada-DP-SPIDER; 2T composed Gaussians per client for Algorithm 4) = target within 1e-9, and
    spent ≤ guarantee."""
    for exp_id in IDS:
        exp = registry.get(exp_id)
        if not exp.private:
            continue
        for r in rows[exp_id]:
            assert r["epsilon_guarantee"] == pytest.approx(r["epsilon_target"], rel=1e-9)
            assert r["epsilon_guarantee"] <= r["epsilon_target"] * (1 + 1e-12)
            assert r["epsilon_spent"] <= r["epsilon_guarantee"] * (1 + 1e-12)
        if exp_id.startswith("sosp.select."):
            for r in rows[exp_id]:
                z = selection_multiplier(float(r["epsilon_target"]), sx.DELTA, int(2 * r["T"]))
                assert r["noise_multiplier"] == z


def test_heterogeneity_does_not_change_the_rate(analyses):
    """Theorem 3 allows arbitrary heterogeneity: h = 2 gives the same m-slope as h = 0 (within
    the two CIs) and the same level.  Two-sided (no difference is claimed).  rtol 0.15 on the
    per-point noise: the two sweeps draw different records, so their 10-seed means differ by
    seed noise only (s.e. of the difference ≤ 0.03 on this grid: 0.15 is ≥ 5 s.e.), while shifts
    that survived the server average (|μ_j| ~ h = 2 against ψ ≈ 0.05) would multiply it."""
    a, b = analyses["sosp.ada.m"], analyses["sosp.ada.m.het"]
    assert abs(a.fit.slope - b.fit.slope) <= a.fit.half_width + b.fit.half_width
    np.testing.assert_allclose(a.fit.y, b.fit.y, rtol=0.15)


def test_distributed_rate_discriminates_the_two_readings(analyses):
    """SOSP-E1 decided: the observed m-slope is nearer Theorem 3's −1/5 than the
    introduction's privacy exponent −2/5 by more than the CI."""
    a = analyses["sosp.ada.m"]
    thm3 = bounds.get("sosp:thm3_privacy").exponent("m")
    intro = bounds.get("sosp:thm3_intro_privacy").exponent("m")
    assert abs(a.fit.slope - float(thm3)) + a.fit.half_width < abs(a.fit.slope - float(intro))


def test_escape_threshold_is_below_the_lemma1_curvature(rows):
    """Lemma 1 one-sided (escape is guaranteed above √(ρα); below it nothing is claimed): at
    γ = √(ρα) (and above) every seed escapes, so γ* ≤ √(ρα) up to one step of the γ grid
    (20 per decade: the factor 10^{1/20})."""
    for r in rows["sosp.escape.threshold.psi"]:
        assert r["escaped_at_threshold"] == 1.0
        assert r["gamma_star"] <= r["curvature_threshold"] * 10 ** (1 / 20)


def test_figures_exist_for_every_experiment():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "figures" / "sosp"
    missing = [i for i in sorted(DECLARED) if not (root / f"{i}.png").exists()]
    assert not missing, missing


def test_private_selection_breaks_down_beyond_a_dimension(rows):
    """Remark 4 / SOSP-E6: at a fixed T, the noise part of Algorithm 4's Hessian threshold grows
    as d, so beyond some dimension it exceeds the planted saddles' curvature and a strict saddle
    is selected (α'_emp ≫ α).  On the quick grid (N = √m nε = 283) every run selects the SOSP at
    the smallest d and a saddle at the largest, and the threshold grows monotonically in d."""
    by = {}
    for r in rows["sosp.select.d"]:
        by.setdefault(r["p_d"], []).append(r)
    ds = sorted(by)
    assert all(r["selected_is_sosp"] == 1.0 for r in by[ds[0]])
    assert all(r["selected_is_sosp"] == 0.0 and r["alpha_selected"] > 5 * r["p_alpha"]
               for r in by[ds[-1]])
    thr = [by[d][0]["hess_threshold"] for d in ds]
    assert all(a < b for a, b in zip(thr, thr[1:]))


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", open_full_cases(IDS))
def test_full_grid_verdicts_as_declared(tmp_path_factory, exp_id):
    """The full grids' declared verdicts (``expect_full`` where it differs; minutes; `pytest -m
    slow`); the ones undecided there too are strict xfails (tests/_open_verdicts.py)."""
    root = tmp_path_factory.mktemp("sosp_full")
    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, full=True, results=root, workers=2))
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert [(r.bound, r.verdict) for r in a.results] == \
        [(c.bound, c.expected_verdict_for(True)) for c in exp.checks], \
        [r.message for r in a.results]


@pytest.mark.parametrize("exp_id", ["sosp.ada.n", "sosp.ada.d", "sosp.ada.epsilon"])
def test_eq104_kappa_has_the_exponents_of_the_explicit_balance(rows, exp_id):
    """SOSP-E7: Remark 2's explicit design picks κ ≈ 11 × eq. 104's κ — a constant: the log-log
    slope of the design's κ along the sweep matches the local slope of ``sosp:thm2_kappa`` (from
    bounds/) within 0.06 (the design's κ minimises a flat function: its slope is noisier than α's)."""
    exp = registry.get(exp_id)
    by = {}
    for r in rows[exp_id]:
        by[r[f"p_{exp.variable}"]] = r["kappa"]
    xs = np.array(sorted(by))
    kb = bounds.get("sosp:thm2_kappa")
    pred = [kb(**{k: v for k, v in sx.rate_values(exp.point(x)).items() if k in kb.variables})
            for x in xs]
    s_design = np.polyfit(np.log(xs), np.log([by[x] for x in xs]), 1)[0]
    s_bound = np.polyfit(np.log(xs), np.log(pred), 1)[0]
    if exp_id == "sosp.ada.epsilon":
        # eq. 104 takes max(κ₁, κ₂), which sits on κ₂ (slope −4/5) over the whole ε grid; the
        # explicit balance moves smoothly toward the ε-free κ₁ as the sampling share grows
        # (1% → 12%, SOSP-E9): its slope is flatter, by 0.10 here (pinned, errata SOSP-E7)
        assert 0.03 < s_design - s_bound < 0.15, (s_design, s_bound)
    else:
        assert abs(s_design - s_bound) <= 0.06, (s_design, s_bound)
    ratio = np.array([by[x] for x in xs]) / np.array(pred)
    assert 5 < ratio.min() and ratio.max() < 20


def test_rate_runs_escape_once_and_certify_once(rows):
    """From the exact saddle of a one-saddle landscape: one escape procedure escapes (the saddle)
    and the last one certifies the minimum after Q failed rounds — the output is x̃."""
    for exp_id in RATE_IDS:
        for r in rows[exp_id]:
            assert r["certified"] == 1.0
            assert r["escape_rounds_escaped"] >= 1
            assert r["escape_procedures"] == r["escape_rounds_escaped"] + 1


def test_rows_carry_independent_settings_and_measured_noise(rows, analyses):
    """Every rate row carries the used/theory pairs (recomputed in the experiment, not through
    the algorithm's plan) and the measured noise against its limit; the escape and selection rows
    carry theirs; the settings verdict found nothing (errata SOSP-E13)."""
    need_rate = {"b1", "b2", "sigma1", "noise_multiplier", "Gamma", "Q", "eta", "radius",
                 "max_steps"}
    for exp_id in IDS:
        rs = rows[exp_id]
        keys = set(rs[0])
        pairs = {k[5:] for k in keys if k.startswith("used_") and f"theory_{k[5:]}" in keys}
        if exp_id in RATE_IDS:
            assert need_rate <= pairs, exp_id
            assert {"max_noise_rel_dev", "limit_noise_rel_dev"} <= keys
            assert all(r["max_noise_rel_dev"] <= r["limit_noise_rel_dev"] for r in rs)
        elif exp_id.startswith("sosp.escape.") and not exp_id.startswith("sosp.escape.time."):
            # the escape-time runs set Γ at 3× the practical formula on purpose (a round must
            # not time out before the escape it measures), so they have no theory Γ to match
            assert "Gamma" in pairs, exp_id
        elif exp_id.startswith("sosp.select."):
            assert {"noise_multiplier", "sigma_grad", "sigma_hess"} <= pairs, exp_id
        assert not analyses[exp_id].error, analyses[exp_id].error


def test_coverage_leaves_no_variable_without_a_sweep_or_a_reason(coverage_gaps):
    """Every (rate statement, variable) pair of the paper is swept, log-only, or carries its
    declared reason (empirical.core.coverage): none is merely held, no statement unjudged."""
    assert coverage_gaps["sosp"] == []
