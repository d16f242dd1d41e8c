"""User-level SCO paper end to end: every experiment of empirical/papers/userlevel/experiments.py is swept once
on its quick grid (the test run's results directory, 2 workers) and its verdicts are asserted as
declared.  Predictions come from ``bounds/`` at each experiment's own parameters; tolerance
reasons live with the checks.  Rows record the parameters the algorithm actually used, and
tests compare them with the theorems' settings."""

import numpy as np
import pytest

import bounds
from algorithms.userlevel import sco as ul
from empirical.core import experiment as registry
from empirical.papers.userlevel import experiments as ulx
from empirical.core.checks import analyse
from empirical.run.runner import sweep
from _open_verdicts import open_cases

#: Theorem 4.1's risk sweeps (empirical/papers/userlevel/nonsmooth.py) are judged on their full
#: grids only and their quick grids cost ≈ 630 CPU-s: their rows are tested in
#: tests/test_userlevel_nonsmooth.py and their verdicts by tests/test_full_only.py (-m slow).
#: A frozenset, so that the pre-sweep (tests/conftest.py) does not read it as ids to sweep.
_FULL_GRID_ONLY = frozenset(e.id for e in (ulx.NS_RISK_N, ulx.NS_RISK_M, ulx.NS_RISK_EPS,
                                           ulx.NS_RISK_EPS_CONTROL))
IDS = [i for i in registry.ids("userlevel") if i not in _FULL_GRID_ONLY]


@pytest.fixture(scope="module")
def analyses(results_root):
    return {i: analyse(registry.get(i), sweep(registry.get(i), results=results_root, workers=2))
            for i in IDS}


@pytest.fixture(scope="module")
def rows(results_root, analyses):
    return {i: sweep(registry.get(i), results=results_root) for i in IDS}



def test_all_ids_share_the_prefix_and_paper():
    assert IDS and all(i.startswith("userlevel.") for i in IDS)
    assert all(registry.get(i).paper == "userlevel" for i in IDS)


def test_algorithm3_rows_do_not_depend_on_the_declarations():
    """Algorithm 3's run code lives in empirical/papers/userlevel/alg3_runs.py, apart from its
    declarations (user_level_alg3.py) and the paper module (user_level_sco.py): a row's code
    fingerprint must not cover them, or editing a check, band or reason would recompute every
    stored point of those sweeps.  Fails if the run module (or anything it imports) imports a
    declaring module."""
    from empirical.run.runner import code_fingerprint

    runs = {i: registry.get(i).run.__module__ for i in IDS}
    alg3 = [i for i, mod in runs.items() if mod == "empirical.papers.userlevel.alg3_runs"]
    assert {"userlevel.alg3.m", "userlevel.baseline.m", "userlevel.ns.grads.n"} <= set(alg3)
    code = code_fingerprint("empirical.papers.userlevel.alg3_runs")["code"]
    assert "empirical.papers.userlevel.alg3_runs" in code
    assert not {"empirical.papers.userlevel.alg3", "empirical.papers.userlevel.experiments"} & set(code)


@pytest.mark.parametrize("exp_id", open_cases(IDS))
def test_experiment_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error, a.error
    assert not a.privacy_error, a.privacy_error
    got = [(r.bound, r.kind, r.verdict) for r in a.results]
    want = [(c.bound, c.kind, c.expected_verdict) for c in a.experiment.checks]
    assert got == want, [r.message for r in a.results]
    assert len(a.kept) >= 3


@pytest.mark.parametrize("exp_id", [i for i in IDS if registry.get(i).private])
def test_private_rows_carry_dp_accounting_at_target(rows, exp_id):
    exp = registry.get(exp_id)
    for r in rows[exp_id]:
        assert r["epsilon_guarantee"] == pytest.approx(r["epsilon_target"], rel=exp.privacy_rtol)
        assert r["epsilon_guarantee"] <= r["epsilon_target"] * (1 + 1e-12)
        assert r["epsilon_spent"] <= r["epsilon_guarantee"] * (1 + 1e-12)
        assert r["delta_guarantee"] == pytest.approx(r["p_delta"])


def test_m_sweep_user_level_beats_item_level_slope(analyses):
    """The point of user-level DP on one problem and one schedule: Algorithm 3's privacy error
    falls with m, the user-as-item baseline's does not."""
    a, b = analyses["userlevel.alg3.m"], analyses["userlevel.baseline.m"]
    assert a.experiment.grid() == b.experiment.grid()
    assert a.fit.slope < b.fit.slope - 0.3
    # where the user-level algorithm catches up with the baseline (UL-E11): at ε = 8 with the
    # corrected Lemma C.2 sensitivity (UL-E13) the baseline is ≈ 10× better at m = 4096, the two
    # meet near the end of the grid (m ≈ 2·10^5)
    ya, yb = a.fit.y, b.fit.y
    assert ya[0] > 3 * yb[0] and ya[-1] < 1.3 * yb[-1]


def test_alg3_rows_record_the_theorem_settings(rows):
    """T_1, K_1, n_1, λ_1, τ and the gradient count equal alg3_schedule's (the theorem's
    formulas with the rates-mode constants recorded in the point)."""
    for eid in ("userlevel.alg3.m", "userlevel.alg3.n", "userlevel.alg3.eps",
                "userlevel.alg3.d", "userlevel.baseline.m"):
        for r in rows[eid][:: max(1, len(rows[eid]) // 4)]:
            removal = r["p_algorithm"] == "alg3"
            m_sched = int(r["p_m"]) if removal else 1
            tau, ph = ul.alg3_schedule(int(r["p_n"]), m_sched, int(r["p_d"]), r["p_epsilon"],
                                       r["p_delta"], ulx._QUAD_L, ulx._QUAD_R, 1.0,
                                       c_K1=r["p_c_K1"], c_T=r["p_c_T"], c_K2=r["p_c_K2"],
                                       removal=removal, calibrate=False)
            assert (r["T_1"], r["K_1"], r["n_1"]) == (ph[0].T_i, ph[0].K_i, ph[0].n_i)
            assert r["lambda_1"] == pytest.approx(ph[0].lambda_i)
            assert r["sensitivity_1"] == pytest.approx(ph[0].sensitivity)
            if removal:
                assert r["tau"] == pytest.approx(tau)
            assert r["grad_evals"] == r["schedule_grads"]          # no halts: full schedule
            assert r["halted"] == 0


@pytest.mark.parametrize("exp_id", ["userlevel.alg3.grads.m", "userlevel.alg3.grads.n",
                                    "userlevel.alg3.grads.n.large", "userlevel.ns.grads.n",
                                    "userlevel.ns.grads.eps",
                                    "userlevel.alg1.grads.n"])
def test_counted_gradients_equal_the_schedule(rows, exp_id):
    for r in rows[exp_id]:
        assert r["grad_evals"] == r["schedule_grads"]


def test_alg1_rows_record_the_theorem_settings(rows):
    for r in rows["userlevel.alg1.grads.n"]:
        C, ph = ul.alg1_schedule(int(r["p_n"]), int(r["p_m"]), int(r["p_d"]), r["p_epsilon"],
                                 r["p_delta"], 3.5, 4.0, c_C=r["p_c_C"], c_eta=r["p_c_eta"],
                                 c_tau=r["p_c_tau"], max_phases=int(r["p_max_phases"]),
                                 calibrate=False)
        assert (r["C"], r["N_1"], r["T_1"]) == (C, ph[0].N_i, ph[0].T_i)
        assert r["eta_1"] == pytest.approx(ph[0].eta_i) and r["tau_1"] == pytest.approx(ph[0].tau_i)
        assert r["grad_evals"] <= r["p_n"] * r["p_m"]


def _log_slope(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def test_alg1_count_superlinearity_is_the_group_floor():
    """UL-E23.  Schedule only (no run): Algorithm 1's count Σ_i C⌊n_i/C⌋m against the paper's
    Σ_i n_im (Appendix B, which assumes C | n_i) at the experiment's own settings.  Over
    n = 2^16 … 2^20 the floored count's slope is +1.056 (the former full grid's FAIL) while the
    floor-free one is 1.0000: the super-linearity is the discarded remainders n_i − C⌊n_i/C⌋,
    up to 27% of phase 4 at 2^16 (N_4 = 2).  From 2^17 (N_i ≥ 5) the floor moves the slope by
    < 0.025, the margin the two-sided tolerance 0.05 is stated against."""
    fx = ulx.ALG1_GRADS_N.fixed
    def counts(n):
        C, ph = ul.alg1_schedule(n, fx["m"], fx["d"], fx["epsilon"], fx["delta"], 3.5, 4.0,
                                 c_C=fx["c_C"], c_eta=fx["c_eta"], c_tau=fx["c_tau"],
                                 max_phases=fx["max_phases"], calibrate=False)
        assert len(ph) == fx["max_phases"]          # the phase cap, not the phase count, binds
        return (sum(C * p.N_i for p in ph) * fx["m"], sum(p.n_i for p in ph) * fx["m"],
                min(p.N_i for p in ph))
    old = [2 ** k for k in range(16, 21)]
    floored, free, _ = zip(*map(counts, old))
    assert _log_slope(old, floored) == pytest.approx(1.056, abs=0.002)
    assert _log_slope(old, free) == pytest.approx(1.0, abs=1e-3)
    for grid in (ulx.ALG1_GRADS_N.quick_grid, ulx.ALG1_GRADS_N.full_grid):
        floored, free, n_min = zip(*map(counts, grid))
        assert min(n_min) >= 5
        assert 0 <= _log_slope(grid, floored) - _log_slope(grid, free) < 0.025


def test_alg3_eps_pole_is_a_finding_of_the_level_alone(analyses, rows):
    """UL-E23.  userlevel.alg3.eps.pole is a finding of the level (finding_on="level"): FINDING
    because the level observed/bound leaves the band of userlevel.alg3.eps near the phases'
    certification threshold, not because its slope fails or is inconclusive (the analysis
    enforces that the slope passes; the same check without the band passes on the same rows),
    and NOT REPRODUCED if the level comes back into the band.  The point
    out of band is a real run (no halt) whose excess is privacy noise (a coupled noise-free run
    of two seeds at that ε), and below ε ≈ 1.75 no phase is admitted at all."""
    from dataclasses import replace

    from empirical.run.runner import seed_generators
    a = analyses["userlevel.alg3.eps.pole"]
    main = a.results[0]
    assert main.verdict == "FINDING" and main.level_range[1] > main.level_band[1], main.message
    assert main.finding_on == "level" and "finding of the level" in main.message
    slope_only = replace(a.experiment, checks=(replace(a.experiment.checks[0], level=None,
                                                       level_reason="", expect="hold",
                                                       finding_on=None, calibration=None),))
    assert analyse(slope_only, rows["userlevel.alg3.eps.pole"]).results[0].verdict == "PASS"
    # the verdict can fail: with the band widened over the pole's level the finding is stale
    wide = replace(a.experiment, checks=(replace(a.experiment.checks[0],
                                                 level=(1.0, 10 * main.level_range[1]),
                                                 calibration=None),))
    assert analyse(wide, rows["userlevel.alg3.eps.pole"]).results[0].verdict == "NOT REPRODUCED"
    assert not any(r["halted"] for r in rows["userlevel.alg3.eps.pole"])
    worst = a.kept[int(np.argmax(main.ratios))]
    exp = ulx.ALG3_EPS_POLE
    point = dict(exp.point(worst), coupled=1)
    out = ulx._run_alg3_quadratic(point, seed_generators(f"{exp.id}.coupled", point, 2))
    assert np.all(out["nonprivate_excess"] < 0.01 * out["excess"]), out
    with pytest.raises(ValueError, match="no phase"):
        ulx._run_alg3_quadratic(exp.point(1.7), seed_generators(exp.id, exp.point(1.7), 1))


def test_lemma35_exact_identity_and_no_removal(rows):
    for eid in ("userlevel.lem35.K", "userlevel.lem35.m"):
        for r in rows[eid]:
            assert r["kept_fraction"] == 1.0
            # 400-draw Monte Carlo of a χ²-like variable: within 20% of the exact WOR identity
            assert r["variance"] == pytest.approx(r["exact_variance"], rel=0.2)


@pytest.mark.parametrize("exp_id, index", [("userlevel.alg3.m", 2), ("userlevel.alg3.d", 0)])
def test_alg3_excess_is_all_privacy_on_one_coupled_point(exp_id, index):
    """The m- and d-sweeps' metric is the total excess; on a coupled run (same data, minibatches,
    coins; no Gaussian noise) the non-private excess is < 1% of it, so the slope is the privacy
    term's (for d at the smallest d, where the statistical part is largest relative to it)."""
    exp = registry.get(exp_id)
    point = dict(exp.point(exp.quick_grid[index]), coupled=1)
    from empirical.run.runner import seed_generators
    out = ulx._run_alg3_quadratic(point, seed_generators(f"{exp_id}.coupled", point, 2))
    assert np.all(out["nonprivate_excess"] < 0.01 * out["excess"])
    assert np.mean(out["privacy_excess"]) == pytest.approx(np.mean(out["excess"]), rel=0.5)


def test_logistic_excess_is_privacy_not_optimisation():
    """On the logistic problem the m-flat excess (UL-E21) is not optimisation or regularisation
    bias: coupled noise-free runs at the grid's smallest m have < 10% of it (measured ≈ 3%)."""
    exp = registry.get("userlevel.alg3.logistic.m")
    point = dict(exp.point(exp.quick_grid[0]), coupled=1)
    from empirical.run.runner import seed_generators
    out = ulx._run_alg3_quadratic(point, seed_generators(f"{exp.id}.coupled", point, 3))
    assert np.all(out["nonprivate_excess"] < 0.1 * out["excess"])


def test_logistic_finding_level_is_enforced_by_its_verdict(analyses, rows):
    """UL-E21 is a finding of the slope (finding_on="slope"); its level against Theorem 3.2's
    privacy term is a claim that holds (band reason in empirical/papers/userlevel/alg3.py), and the
    analysis enforces it: the same rows with the excess ×4 or ×¼ (a 2× noise error) keep the
    slope part but leave the band, and the verdict turns FAIL."""
    a = analyses["userlevel.alg3.logistic.m"]
    r = a.results[0]
    assert r.bound == "userlevel:thm3.2_privacy" and r.level_band is not None
    # at the 99% level a finding needs, the slope finding is not decided on the quick grid
    assert (r.verdict, r.finding_on) == ("INCONCLUSIVE", "slope") and "inside band" in r.message
    for scale in (4.0, 0.25):
        off = [{**x, "excess": x["excess"] * scale} for x in rows["userlevel.alg3.logistic.m"]]
        got = analyse(a.experiment, off).results[0]
        assert got.verdict == "FAIL" and "OUTSIDE" in got.message, (scale, got.message)


def test_predictions_come_from_bounds(analyses):
    a = analyses["userlevel.ns.grads.eps"]
    b = bounds.get("userlevel:thm4.1-gradients_derived")
    vals = a.experiment.bound_values(a.experiment.point(a.kept[0]))
    assert a.results[0].asymptotic == pytest.approx(
        float(b.exponent("epsilon", **{k: v for k, v in vals.items() if k != "epsilon"})))


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", IDS)
def test_full_grid_verdicts(tmp_path, exp_id):
    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, full=True, results=tmp_path, workers=2))
    assert not a.error and not a.privacy_error
    assert [r.verdict for r in a.results] == [c.expected_verdict_for(True) for c in exp.checks]


@pytest.mark.slow
@pytest.mark.xfail(raises=ValueError, strict=True, reason="UL-E14/UL-E16: the former setting (c_C = 15, n = 8192) certifies no "
                         "finite Lemma B.2 sensitivity under the corrected accounting and refuses "
                         "to run.  Re-run at n = 2^18, C ≈ 2000 with the coupled metric "
                         "(UL-E22, tests/test_userlevel_alg1_privacy.py): the privacy excess is "
                         "nearly ε-free there; UL-E1 is decided where the later phases "
                         "localise, by userlevel.alg1.privacy.eps.localised "
                         "(tests/test_userlevel_alg1_privacy.py), and this former setting "
                         "stays xfail (its total-excess ε^{-1/2} came from the schedule's "
                         "non-private part)")
def test_alg1_epsilon_exponent_decides_ul_e1():
    """UL-E1 decided (40 seeds, ~1 min): Algorithm 1's excess on the streamed quadratic falls as
    ε^{−0.50} [−0.66, −0.39] (median over seeds; 6/160 runs halt spuriously and output 0, hence
    the median).  The stated reading's local slope (≈ −0.91 here, from bounds/) is outside the CI;
    the proof reading's −1/2 is inside.  Too costly for the quick grid (CI ±0.4 at 6 seeds)."""
    from empirical.core.fitting import fit_slope, ols_slope
    from empirical.run.runner import seed_generators

    vals = []
    for e in ulx.ALG1_EPS_GRID:
        p = dict(ulx.ALG1_EPS_POINT, epsilon=e)
        out = ulx._run_alg1(p, seed_generators("userlevel.alg1.eps", p, 40))
        assert np.all(out["epsilon_guarantee"] <= e) and np.all(out["epsilon_spent"] <= e)
        vals.append(out["excess"])
    fit = fit_slope(ulx.ALG1_EPS_GRID, vals, aggregate="median", rng=np.random.default_rng(0))
    slopes = {}
    for bid in ("userlevel:thm2.1", "userlevel:thm2.1_proof"):
        b = bounds.get(bid)
        bv = [b(**{k: v for k, v in ulx._alg1q_values(dict(ulx.ALG1_EPS_POINT, epsilon=e)).items()
                   if k in b.variables}) for e in ulx.ALG1_EPS_GRID]
        slopes[bid] = ols_slope(np.array(ulx.ALG1_EPS_GRID), np.array(bv))[0]
    assert not fit.covers(slopes["userlevel:thm2.1"])
    assert abs(fit.slope - slopes["userlevel:thm2.1"]) > 0.15
    assert fit.covers(slopes["userlevel:thm2.1_proof"])


@pytest.mark.slow
def test_alg1_risk_is_half_localisation_at_affordable_n():
    """UL-E19 (finding): Algorithm 1's risk in n cannot be read off at affordable sizes.  On the
    streamed quadratic (m = 16, d = 5, ε = 1, c_C = 60 so that C ≈ 2000 certifies a finite
    sensitivity, c_η = 200, c_τ = 0.02, ≤ 6 phases: the setting of
    empirical.papers.userlevel.alg1_privacy), the noise-free run keeps ≥ 25% of the private excess
    at n = 2^17 and 2^19 (incomplete localisation, η_1T_1 = 1.6–3), so a slope fitted to the
    total would mix optimisation and privacy.

    Coupled (``run_alg1_coupled``): the private run draws its output noise from a third stream
    (``noise_rng``), the noise-free run replays copies of the same data and algorithm
    generators, so both see the same items, permutations, Laplace score noise and keep coins
    and differ only by the output noise (asserted: no halt, identical keep sets).  The
    noise-free excess is then the part of this very run that privacy did not add.  Measured on
    these seeds: share 62% at 2^17 and 38% at 2^19; the noise-free excess (0.097,
    0.030) varies < 1% across seeds (it is the starting offset the phases have not yet
    contracted) and is ≈ 4·10^5 times the sampling term.  ≈ 14 CPU-s, ~1 min loaded.
    """
    from empirical.papers.userlevel import alg1_privacy as u
    from empirical.run.runner import seed_generators

    for n in (131072, 524288):
        p = u.ALG1_PRIV_N.point(n)
        out = u.run_alg1_coupled(p, seed_generators("userlevel.alg1.risk.ul_e19", {"n": n}, 4))
        assert not out["halted"].any() and not out["halted_np"].any()
        assert np.all(out["keep_agree"] == 1)
        assert np.all(out["epsilon_guarantee"] <= p["epsilon"])
        assert np.all(out["epsilon_spent"] <= out["epsilon_guarantee"])
        priv, free = np.mean(out["excess"]), np.mean(out["nonprivate_excess"])
        # 0.25: UL-E19's recorded claim (one-sided: the finding is that the optimisation part is
        # NOT negligible); a run that localised (η_iT_i ≫ 1) leaves only a sampling term
        sampling = 0.5 / (n * p["m"])    # E½‖z̄ − μ0‖² over all nm items (E‖z − μ0‖² = 1)
        assert free >= 0.25 * priv, (n, out["excess"], out["nonprivate_excess"])
        # that remainder is optimisation, not sampling: 100× leaves room for SGD's averaging
        # constant (a localised run is within a small factor of the sampling term)
        assert free >= 100 * sampling, (n, free, sampling)
        # and privacy does add to it on the same draws (the coupled ½‖x_priv − x_np‖² > 0)
        assert priv > free and np.all(out["privacy_excess"] > 0)


def test_logistic_n_and_eps_sweeps_share_the_m_sweeps_instance():
    """Theorem 3.2's n and ε on logistic regression are swept on the m-sweep's instance
    (problem, d, δ, schedule constants, bound values), at its smallest m = 32; the ε grid starts
    where phases certify at n = 8192 (UL-E14) and ends at the algorithm's ε ≤ 10."""
    base = registry.get("userlevel.alg3.logistic.m")
    for eid, var in (("userlevel.alg3.logistic.n", "n"), ("userlevel.alg3.logistic.eps", "epsilon")):
        exp = registry.get(eid)
        assert exp.variable == var and exp.fixed["m"] == 32 and exp.problem == base.problem
        for k in ("problem", "d", "delta", "c_K1", "c_T", "c_K2", "algorithm"):
            assert exp.fixed[k] == base.fixed[k], (eid, k)
        p = exp.point(exp.quick_grid[0])
        assert exp.bound_values(p) == base.bound_values({**p, "m": 32})
    eps = registry.get("userlevel.alg3.logistic.eps")
    assert max(eps.full_grid) <= 10.0 and min(eps.full_grid) >= 2.0
