"""KAN paper end to end: every experiment of the unit empirical/papers/kan/ is swept on its
quick grid once (the test run's results directory, 2 workers) and its verdicts are asserted as
declared.  No slope or exponent is typed here: predictions come from ``bounds/`` at each
experiment's own parameters (empirical.core.checks); every tolerance's reason lives with its check.
Beyond the verdicts: the privacy columns (three calibrations side by side), the theorem
parameters recorded in the rows, the open question per sampler, and the recorded findings."""

import numpy as np
import pytest

import bounds
from algorithms.kan import correlated_noise as K
from empirical.core import experiment as registry
from empirical.papers.kan import lam as kx
from empirical.papers.kan.cor55 import cor55_schedule
from empirical.core.checks import analyse
from empirical.run.runner import sweep
from _open_verdicts import open_cases

#: Full-grid-only experiments whose quick grids alone cost more than this module's budget
#: (35–100 CPU-s): their full-grid verdicts are pinned in _open_verdicts.FULL_ONLY and run by
#: tests/test_full_only.py (`-m slow`); their grids' conditions by tests/test_kan_window.py.
#: A set, not a list: the pre-sweep reads module-level lists of ids.
_COSTLY_FULL_ONLY = frozenset({"kan.window.n", "kan.window.n.outside", "kan.cor56.n.schedule"})
IDS = [i for i in registry.ids("kan") if i not in _COSTLY_FULL_ONLY]


@pytest.fixture(scope="module")
def rows(results_root):
    return {i: sweep(registry.get(i), results=results_root, workers=2) for i in IDS}


@pytest.fixture(scope="module")
def analyses(rows):
    return {i: analyse(registry.get(i), rows[i]) for i in IDS}



def _gmean(a, v):
    return float(np.exp(np.mean(np.log(a.per_point[v]))))


@pytest.mark.parametrize("exp_id", open_cases(IDS))
def test_experiment_verdicts_as_declared(analyses, exp_id):
    a = analyses[exp_id]
    assert not a.error, a.error
    assert not a.privacy_error, a.privacy_error
    got = [(r.bound, r.kind, r.verdict) for r in a.results]
    want = [(c.bound, c.kind, c.expected_verdict) for c in a.experiment.checks]
    assert got == want, [r.message for r in a.results]
    assert len(a.kept) == len(a.experiment.quick_grid)      # no point dropped


def test_every_check_states_its_reason_and_ids_follow_the_scheme():
    for i in IDS:
        exp = registry.get(i)
        assert i.split(".")[0] == "kan" and exp.paper == "kan"
        for c in exp.checks:
            assert c.reason.strip() and bounds.get(c.bound).id == c.bound
            if c.level is not None:
                assert c.level_reason.strip()


# ---------------------------------------------------------------------------------------------
# Privacy: three calibrations side by side
# ---------------------------------------------------------------------------------------------
def test_private_runs_are_certified_at_their_target(rows):
    for i in IDS:
        exp = registry.get(i)
        if not exp.private:
            continue
        for r in rows[i]:
            assert r["epsilon_guarantee"] == pytest.approx(r["epsilon_target"], rel=1e-6), i
            assert r["epsilon_spent"] <= r["epsilon_guarantee"] * (1 + 1e-9), i
            # Wang et al.'s two-layer DP-GD (kan.wang.*) is not DP-SGD with correlated noise:
            # Theorem 5.1's and the tight calibrations do not apply; its second route is PLD
            cols = (("epsilon_route_pld", "noise_multiplier", "delta") if i.startswith("kan.wang.")
                    else ("epsilon_paper_thm51", "epsilon_tight_accounting",
                          "epsilon_tight_replace_one", "noise_multiplier", "delta"))
            for col in cols:
                assert col in r, (i, col)


def test_thm51_calibration_is_conservative_by_the_amount_reported(rows):
    """KAN-E20/E21: F.12's κ (constant 8) certifies ε = 1, its proof's constant (2) gives 1/2,
    and dp-accounting with the exact sensitivity spends ≈ 0.27–0.29 for the same κ."""
    for r in rows["kan.lam.thm51"]:
        assert r["epsilon_paper_thm51"] == pytest.approx(1.0)
        assert r["epsilon_paper_thm51_proof"] == pytest.approx(0.5)
        assert 0.15 < r["epsilon_spent"] < 0.45
        kappa = K.noise_multiplier_thm_f12(r["p_lam"], int(r["T"]), int(r["B"]), int(r["p_n"]),
                                           r["epsilon_target"], r["delta"])
        assert r["noise_multiplier"] == pytest.approx(kappa)


def test_cor55_as_stated_is_not_private_kan_e25(rows):
    """KAN-E25: Theorem 5.4/D.9's κ in Corollary 5.5's regime is far below what (ε, δ) needs:
    dp-accounting (sampling without replacement, replace-one — D.9's own setting) puts the
    spend above the target at every n, increasingly so as κ² ∝ γ/(√n ε²) shrinks."""
    by_n = {}
    for r in rows["kan.cor55.n"]:
        by_n.setdefault(r["p_n"], r)
    ns = sorted(by_n)
    spent = [by_n[n]["epsilon_spent"] / by_n[n]["epsilon_target"] for n in ns]
    assert all(s > 1.1 for s in spent) and spent[-1] > 3 * spent[0] > 3
    kap = [by_n[n]["noise_multiplier"] for n in ns]
    assert all(a > b for a, b in zip(kap, kap[1:]))
    # the honest counterpart spends exactly its target with a larger κ at every n
    tight = {r["p_n"]: r for r in rows["kan.cor55.n.tight"]}
    for n in ns:
        assert tight[n]["epsilon_spent"] == pytest.approx(tight[n]["epsilon_target"], rel=1e-6)
        assert tight[n]["noise_multiplier"] > by_n[n]["noise_multiplier"]


def test_recorded_parameters_are_the_theorems(rows):
    for r in rows["kan.cor55.n"] + rows["kan.cor55.n.tight"]:
        sch = cor55_schedule(int(r["p_n"]), r["gamma0"], r["p_epsilon"], int(r["p_d"]))
        assert (r["B"], r["T"]) == (sch["B"], sch["T"]) and r["eta"] == pytest.approx(sch["eta"])
        assert r["sampler_cyclic"] == 0.0
    for r in rows["kan.lam.tight.cyclic"]:
        assert r["sampler_cyclic"] == 1.0 and r["B"] == r["p_B"] and r["T"] == r["p_T"]
    for r in rows["kan.nonpriv.T"]:
        assert r["noise_multiplier"] == 0.0 and r["B"] == r["p_n"]
        assert r["gamma_hat_lower"] >= r["gamma0"]          # Assumption 3.3 holds on the sample


# ---------------------------------------------------------------------------------------------
# λ: fixed κ, Theorem 5.1 calibration, tight calibration per sampler (the open question)
# ---------------------------------------------------------------------------------------------
def test_drift_identity_at_fixed_kappa(rows):
    """‖W_T − W₀‖² of the noisy run ≈ signal drift + η²c²mdp(1 + (1−λ)²(T−2)) (cancellation
    identity): within 20% per point, the cross term signal×noise being the only gap."""
    for r in rows["kan.lam.fixed_kappa"]:
        pred = r["drift_sq_noise_pred"] + r["drift_sq_signal"]
        assert r["drift_sq_noise"] == pytest.approx(pred, rel=0.2)


def test_fixed_kappa_excess_is_monotone_and_lam_star_is_not_interior(analyses):
    """Remark 4.2 / KAN-E22: at η = 1 the printed quadratic factor (1−λ)² + ηλ² is minimised at
    λ* = 1/(1+η) = 0.5 (``kan:lam_star``); the measured excess keeps falling to λ = 0.9."""
    a = analyses["kan.lam.fixed_kappa"]
    vals = [_gmean(a, v) for v in a.kept]
    assert all(x > y for x, y in zip(vals, vals[1:]))
    lam_star = float(bounds.get("kan:lam_star")(eta=a.experiment.fixed["eta"]))
    assert lam_star == pytest.approx(0.5) and max(a.kept) > lam_star + 0.3


def test_fixed_kappa_level_readings(analyses):
    """KAN-E37: on the quick grid the old (1−λ)-only level (E(λ)/E(0) ÷ (1−λ) ≤ 1.2) still holds
    (λ ≤ 0.9, its limit), while near λ → 1 the same ratio leaves it (the floor), and the full
    factor's level holds at both ends.  KAN-E38: the run is outside η ≤ 1/(12β̂)."""
    a, f = analyses["kan.lam.fixed_kappa"], analyses["kan.lam.fixed_kappa.floor"]
    by = {r.bound: r for r in a.results}
    assert max(by["kan:lam_linear"].ratios) <= 1.2
    floor = {r.bound: r for r in f.results}
    assert max(floor["kan:lam_linear_gap"].ratios) > 1.2       # (1−λ) alone: fails there
    lo, hi = floor["kan:lam_fixed_kappa_ratio_gap"].level_band
    assert lo <= min(floor["kan:lam_fixed_kappa_ratio_gap"].ratios)
    assert max(floor["kan:lam_fixed_kappa_ratio_gap"].ratios) <= hi
    fx = a.experiment.fixed
    b = kx.beta_hat(fx["m"], fx["d"], fx["p"], fx["margin_quantile"])
    assert 12 * b * fx["eta"] > 1


def test_open_question_per_sampler(analyses):
    """Sharper accounting gives λ gains only when participations are separated: cyclic batches
    (separation 20) cut the noise-induced excess below the λ = 0 level at every λ; fresh batches
    (adjacent participations possible), like F.12, never do."""
    cyc, fresh, paper = (analyses[i] for i in ("kan.lam.tight.cyclic", "kan.lam.tight.fresh",
                                               "kan.lam.thm51"))
    assert all(_gmean(cyc, v) < 1.0 for v in cyc.kept)
    assert all(_gmean(fresh, v) > 0.95 for v in fresh.kept)
    assert all(_gmean(paper, v) > 0.95 for v in paper.kept)
    assert _gmean(paper, max(paper.kept)) > _gmean(paper, min(paper.kept))


def test_fresh_lambda_zero_amplification_discontinuity(rows):
    """At λ = 0 dp-accounting amplifies by subsampling; no accountant here does for λ > 0, so
    the tight κ jumps at λ = 0⁺ (reported, not hidden)."""
    r = rows["kan.lam.tight.fresh"][0]
    assert r["noise_multiplier_lam0_amplified"] < 0.5 * r["noise_multiplier_lam0"]


def test_stability_noise_cancels(rows):
    """C.22's coupling shares the noise, so it cancels: the normalised distance with κ = 5,
    λ = 0.5 stays within a factor 3 of the noise-free one at every n (only the training losses
    along the two trajectories differ)."""
    for r in rows["kan.stability.n"]:
        assert 1 / 3 < r["stab_ratio"] / r["stab_ratio_nonprivate"] < 3


# ---------------------------------------------------------------------------------------------
# Rate experiments of empirical/papers/kan/ (nonprivate, cor53, width): ηT collapse, batch size, Cor 5.3, width window
# ---------------------------------------------------------------------------------------------
def test_etaT_runs_hold_the_product_and_use_full_batches(rows):
    for r in rows["kan.nonpriv.etaT"]:
        assert r["T"] * r["eta"] == pytest.approx(r["p_etaT"]) and r["B"] == r["p_n"]
        assert r["noise_multiplier"] == 0.0


def test_batch_effect_has_both_signs(rows):
    """On separable data SGD's gradient noise barely moves the averaged
    risk and in either direction, so the check uses the effect's magnitude."""
    signed = np.array([r["signed_batch_effect"] for r in rows["kan.nonpriv.B"]])
    mag = np.array([r["batch_effect"] for r in rows["kan.nonpriv.B"]])
    assert (signed > 0).any() and (signed < 0).any()
    assert abs(signed.mean()) < mag.mean()


def test_cor53_rows_are_inside_f12_with_the_corollarys_choices(rows):
    """Every Cor 5.3 row uses B = ρn, T = ⌈c_T·min{√n/γ, nεγ²/√d}⌉ (the privacy branch here),
    δ = min{1/(n√m), γ/n}, κ from F.12 with rT ≥ 3 ln(2/δ) (F.12 certifies), spends at most its
    guarantee, and runs at a width below the corollary's m ≍ γ⁻⁶ (recorded, KAN-E30)."""
    from empirical.papers.kan import cor53 as kr
    for i in ("kan.cor53.n", "kan.cor53.ratio.n", "kan.cor53.eps"):
        for r in rows[i]:
            n, g = int(r["p_n"]), r["gamma0"]
            sch = kr.cor53_schedule(n, g, r["p_epsilon"], int(r["p_d"]), int(r["p_m"]),
                                    r["p_sample_frac"], r["p_T_const"])
            assert (r["B"], r["T"]) == (sch["B"], sch["T"]) and r["delta"] == pytest.approx(sch["delta"])
            assert n * r["p_epsilon"] * g * g / np.sqrt(r["p_d"]) < np.sqrt(n) / g   # privacy branch
            assert r["f12_rT"] >= r["f12_rT_needed"]
            assert K.f12_conditions(int(r["T"]), int(r["B"]), n, r["p_epsilon"], r["delta"]) is None
            assert r["epsilon_paper_thm51"] == pytest.approx(r["epsilon_target"])
            assert r["epsilon_spent"] < r["epsilon_guarantee"]
            assert r["p_m"] < r["width_cor53"]


def test_cor53_noise_stays_subdominant(rows):
    """The private risk stays within a bounded factor of the same run without noise."""
    ratios = [r["private_over_nonprivate"] for r in rows["kan.cor53.ratio.n"]]
    assert 0.95 < min(ratios) and max(ratios) < 1.5


def test_width_projection_binds_where_the_drift_reaches_R_star(rows):
    """The projection onto B(W₀, R_*) is idle while the exact expected noise drift stays below
    R_* (m ≤ 0.6·m_drift) and binds once it exceeds it (m ≥ 1.25·m_drift); Theorem 4.1's window
    at constant 1 is empty at every width (m_lo = γ⁻⁴ > m_hi), and its upper end sits ≥ 10×
    below where the projection really starts binding."""
    for r in rows["kan.width.m"]:
        m, md = r["p_m"], r["m_drift"]
        if m <= 0.6 * md:
            assert r["projection_active"] == 0.0, r
        if m >= 1.25 * md:
            assert r["projection_active"] > 0.05, r
        assert r["m_lo"] > m > r["m_hi"]
        assert md > 10 * r["m_hi"]
        assert r["max_drift"] <= r["projection_radius"] * (1 + 1e-9)


def test_tuned_eta_grows_with_epsilon_and_each_run_is_certified(rows):
    """App. D.3: the best η rises with ε (less noise allows longer steps) and reaches the top of
    the grid at ε = 1 (recorded in the rows, KAN-E34); every run spends exactly its target ε
    (tight calibration) even though the oracle choice of η is not a private release."""
    by = {}
    for r in rows["kan.tuned_eta.eps"]:
        by.setdefault(r["p_epsilon"], []).append(r)
        assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
    med = [np.median([r["tuned_eta"] for r in by[e]]) for e in sorted(by)]
    assert all(a <= b for a, b in zip(med, med[1:])) and med[-1] > med[0]
    assert all(r["tuned_eta_at_grid_edge"] == 1.0 for r in by[max(by)])
    assert all(r["tuned_eta_at_grid_edge"] == 0.0 for r in by[min(by)])


def test_tuned_eta_d_and_m_runs_are_certified_and_eta_stays_inside_the_grid(rows):
    """App. D.3's d and m sweeps (ε = 1/8): every run spends exactly its target ε, and the best η
    is never at either end of its grid (so the tuned risk is a real minimum over η, not a grid artefact)."""
    for i in ("kan.tuned_eta.d", "kan.tuned_eta.m"):
        for r in rows[i]:
            assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
            assert r["tuned_eta_at_grid_edge"] == 0.0 and r["tuned_eta_at_grid_bottom"] == 0.0, r


#: Full grids whose verdicts differ from the quick grid's, each an open finding pinned here as a
#: strict xfail (it fails the moment the full grid comes out as declared, prompting a look).
#: Full grids whose verdicts differ from their quick grids (recorded findings).  Empty since
#: KAN-E37 was decided: kan.lam.fixed_kappa's level is judged against A_corr's whole noise factor
#: (the old (1−λ)-only level failed at λ = 0.95, the limit of that reading; the (1−λ)-alone
#: competitor is rejected near λ → 1 by kan.lam.fixed_kappa.floor).
FULL_GRID_FINDINGS: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", [
    pytest.param(i, marks=pytest.mark.xfail(reason=FULL_GRID_FINDINGS[i], strict=True,
                                            raises=AssertionError))
    if i in FULL_GRID_FINDINGS else i for i in IDS])
def test_full_grids(tmp_path, exp_id):
    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, full=True, results=tmp_path, workers=2))
    assert [r.verdict for r in a.results] == [c.expected_verdict for c in exp.checks]


def test_lambda_summary_figure(analyses, tmp_path):
    s = kx.LAMBDA_SUMMARY
    assert s in registry.summaries("kan")
    path = s.plot([analyses[i] for i in s.experiments], tmp_path)
    assert path == tmp_path / "kan" / "kan.summary.lambda.png"
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_new_theorem_runs_record_their_schedules_and_width(rows):
    """Cor 5.6 and the γ sweep store the schedule they ran and the width they sit at; every rate
    row records m·γ₀⁴; every tight fresh run's second calibration route agrees."""
    from empirical.papers.kan import cor56, gamma
    for r in rows["kan.cor56.n"] + rows["kan.cor56.n.frozen"]:
        sch = cor56.cor56_schedule(int(r["p_n"]), r["gamma0"])
        assert (r["B"], r["T"]) == (sch["B"], sch["T"]) and r["eta"] == pytest.approx(sch["eta"])
        assert r["width_m_gamma4"] >= 1.0
    assert all(r["n_distinct"] == r["p_n_frozen"] for r in rows["kan.cor56.n.frozen"])
    for r in rows["kan.gamma.fullbatch_dpgd"]:
        assert r["m"] == gamma.width_for(r["p_gamma"]) and r["width_m_gamma4"] >= 1.0
    for i in ("kan.gamma.fullbatch_dpgd", "kan.lam.tight.fresh", "kan.cor55.n.tight"):
        for r in rows[i]:
            assert r["max_epsilon_route_gap"] <= r["limit_epsilon_route_gap"]
    for i in IDS:
        assert all("width_m_gamma4" in r for r in rows[i]), i


def test_wang_runs_are_the_two_layer_algorithm_at_its_width_and_certified(rows):
    """Wang et al.'s DP-GD rows (kan.wang.*): the width m = ⌈γ⁻⁶/4⌉ and App. D.3's schedule were
    run; the second layer moved (both layers trained); every private row spent its target by
    both accounting routes; the noise-free control released no noise."""
    from empirical.papers.kan import wang
    for i in ("kan.wang.gamma", "kan.wang.gamma.nonprivate", "kan.wang.n"):
        for r in rows[i]:
            sch = wang.wang_schedule(int(r["p_n"]), r["p_gamma"], r["p_epsilon"], int(r["p_d"]))
            assert r["m"] == sch["m"] and r["T"] == r["B"] == r["p_n"]
            assert r["eta"] == pytest.approx(sch["eta"]) and r["c_drift"] > 0
            assert r["width_m_gamma6"] >= wang.WIDTH_CONSTANT * (1 - 1e-9)
    for i in ("kan.wang.gamma", "kan.wang.n"):
        for r in rows[i]:
            assert r["epsilon_spent"] <= r["epsilon_target"] * (1 + 1e-9)
            assert r["max_epsilon_route_gap"] <= r["limit_epsilon_route_gap"]
            assert r["delta"] == pytest.approx(r["p_gamma"] / r["p_n"])
    assert all(r["noise_multiplier"] == 0 for r in rows["kan.wang.gamma.nonprivate"])


def test_wang_noise_free_control_differs_from_the_private_run(rows):
    """The control must differ: at every γ of the quick grid the private run's risk (geometric
    mean over seeds) is above the noise-free run's on the same instance, and its clip almost never
    binds (C_clip = 1, ≤ 10⁻³ of the per-example gradients: the run is Wang et al.'s DP-GD as
    unclipped, up to that fraction)."""
    def gm(i):
        out = {}
        for r in rows[i]:
            out.setdefault(r["p_gamma"], []).append(np.log(r["pop_risk"]))
        return {g: float(np.exp(np.mean(v))) for g, v in out.items()}
    priv, free = gm("kan.wang.gamma"), gm("kan.wang.gamma.nonprivate")
    assert priv.keys() == free.keys()
    assert all(priv[g] > free[g] for g in priv), (priv, free)
    assert all(r["clip_fraction"] <= 1e-3 for r in rows["kan.wang.gamma"])


def test_theorem41_runs_store_their_distance_from_the_width_window(rows):
    """Every run with λ ∈ (0, 1) and κ > 0 stores m/m_hi (Theorem 4.1's upper width end, polylogs
    and constants 1) beside m·γ₀⁴; kan.width.m's equals its own m/m_hi column, and the runs the
    descriptions call outside the window are outside it."""
    with_hi = [i for i in IDS if i.startswith(("kan.private.", "kan.cor53.", "kan.lam.",
                                               "kan.stability.", "kan.width."))
               and ".d9." not in i]
    for i in with_hi:
        assert all(r["width_hi_ratio"] > 0 for r in rows[i]), i
    for r in rows["kan.width.m"]:
        assert r["width_hi_ratio"] == pytest.approx(r["p_m"] / r["m_hi"])
    for i in ("kan.private.T", "kan.private.B", "kan.cor53.n", "kan.lam.thm51"):
        assert all(r["width_hi_ratio"] > 1 and r["width_m_gamma4"] < 1 for r in rows[i]), i
