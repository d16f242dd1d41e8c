"""Measured noise against claimed noise, second routes for calibrations, exact-constant bands.

Each planted bug below is applied to a copy of the code path (the function's source with one
line changed, compiled into a copy of its module's namespace and monkeypatched wherever the
original is bound) and run at the smallest grid point of an experiment that exercises it; the
check that must catch it is asserted to fail, and the honest code at the same point to pass.
"""
from __future__ import annotations

import __future__
import inspect
import math
import sys
import textwrap

import numpy as np
import pytest

from empirical.core import experiment as registry
from empirical.core.checks import analyse, check_noise, check_settings, noise_interval
from algorithms.noise_meter import LAPLACE, NoiseMeter
from algorithms.privacy_pairs import gaussian_epsilon_exact, pair_epsilon_lower

registry._load_all()


# ---------------------------------------------------------------------------------------------
# planting a bug
# ---------------------------------------------------------------------------------------------
def mutate(monkeypatch, owner, name: str, old: str, new: str) -> None:
    """Replace ``owner.name`` by a copy of its source with ``old`` → ``new`` (exactly one
    occurrence), compiled in a copy of its module's globals; every module global bound to the
    original (``from m import f`` copies) is patched too."""
    orig = getattr(owner, name)
    src = textwrap.dedent(inspect.getsource(orig))
    assert src.count(old) == 1, f"{name}: {old!r} occurs {src.count(old)} times"
    mod = sys.modules[orig.__module__]
    ns = dict(vars(mod))
    code = compile(src.replace(old, new), mod.__file__, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, ns)
    monkeypatch.setattr(owner, name, ns[name])
    if inspect.isfunction(orig) and not inspect.isclass(owner):
        for m in list(sys.modules.values()):
            d = getattr(m, "__dict__", None)
            if d is not None and m is not owner and d.get(name) is orig:
                monkeypatch.setattr(m, name, ns[name])


def rows_at(eid: str, seeds: int | None = None, index: int = 0) -> tuple:
    """(experiment, rows) of one grid point (the ``index``-th smallest of the quick grid)."""
    exp = registry.get(eid)
    v = sorted(exp.quick_grid)[index]
    R = exp.seeds if seeds is None else seeds
    rngs = [np.random.default_rng([17, i]) for i in range(R)]
    out = exp.run(exp.point(v), rngs)
    rows = []
    for i in range(R):
        row = {k: (np.asarray(a)[i].item() if np.asarray(a).dtype.kind in "fiub" else
                   np.asarray(a)[i]) for k, a in out.items()}
        row.update({f"p_{exp.variable}": float(v), "seed": i})
        rows.append(row)
    return exp, rows


# ---------------------------------------------------------------------------------------------
# the statistic and its interval
# ---------------------------------------------------------------------------------------------
class _Exp:
    variable = "n"


def _meter_rows(scale_true: float, scale_claimed: float, k: int, family: str = "gauss",
                sides: int = 2, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    m = NoiseMeter(3)
    e = (rng.standard_normal((3, k)) if family == "gauss" else rng.laplace(size=(3, k)))
    m.add("ch", np.arange(3), scale_true * e, scale_claimed, family=family, sides=sides)
    cols = m.columns()
    return [{**{c: float(v[i]) for c, v in cols.items()}, "p_n": 1.0, "seed": i}
            for i in range(3)]


@pytest.mark.parametrize("family", ["gauss", LAPLACE])
def test_noise_check_passes_the_claimed_scale_and_fails_a_wrong_one(family):
    assert check_noise(_Exp, _meter_rows(1.0, 1.0, 400, family))[1] == ""
    for wrong in (0.0, 0.5, 0.8, 1.25):
        err = check_noise(_Exp, _meter_rows(wrong, 1.0, 400, family))[1]
        assert "ch noise measured/claimed" in err, wrong
    # one-sided: more noise than claimed is not a privacy failure
    assert check_noise(_Exp, _meter_rows(1.25, 1.0, 400, family, sides=1))[1] == ""
    assert check_noise(_Exp, _meter_rows(0.8, 1.0, 400, family, sides=1))[1] != ""


def test_noise_interval_is_the_exact_law_and_false_alarms_are_rare():
    # Gaussian: S ~ χ²_k; over 2000 honest replicates at α = 1e-6 none may fail
    lo, hi = noise_interval(1200, "gauss", 2)
    assert 0.85 < lo < 1 < hi < 1.15
    fails = sum(check_noise(_Exp, _meter_rows(1.0, 1.0, 400, seed=s))[1] != ""
                for s in range(300))
    assert fails == 0
    # the interval narrows like 1/√k: a 2% error is caught at k = 10⁶ (SOSP / linreg sizes)
    lo, hi = noise_interval(1e6, "gauss", 2)
    assert hi - lo < 0.02


def test_zero_scale_coordinates_are_left_out():
    m = NoiseMeter(2)
    m.add("o2", np.arange(2), np.zeros((2, 5)), np.array([0.0, 0.0]))
    cols = m.columns()
    assert np.all(cols["noise_count_o2"] == 0) and np.all(cols["noise_gauss_o2"] == 0)
    with pytest.raises(ValueError, match="scale"):
        m.add("o2", np.arange(2), np.zeros((2, 5)), np.ones(3))
    with pytest.raises(ValueError, match="family"):
        m.channel("x", "cauchy")


# ---------------------------------------------------------------------------------------------
# planted bugs, each caught; the honest code passes at the same point
# ---------------------------------------------------------------------------------------------
def test_spider_without_difference_noise_is_caught(monkeypatch):
    """KL Algorithm 1 with its difference noise removed: the releases are not private, the
    rows still report ρ as spent; the difference channel measures no noise at all."""
    import algorithms.kl.condition as kl

    exp, rows = rows_at("kl.spider.n.nc_k4_3", seeds=2)
    assert check_noise(exp, rows)[1] == ""
    assert sum(r["noise_count_difference"] for r in rows) > 50      # the channel is exercised
    mutate(monkeypatch, kl, "_spider_update", "return est + (G_new - G_old) + noise",
           "return est + (G_new - G_old)")
    exp, rows = rows_at("kl.spider.n.nc_k4_3", seeds=2)
    err = check_noise(exp, rows)[1]
    assert "difference noise measured/claimed 0 " in err


def test_tight_replace_one_kappa_halved_is_caught(monkeypatch):
    """KAN's tight replace-one accountant for fresh batches without replace-one's ×2: κ is
    calibrated half as large; the exact ε of an achievable pair (dp-accounting PLD) then
    exceeds the certified ε, which the settings verdict fails."""
    import algorithms.kan.privacy as kp

    exp, rows = rows_at("kan.cor55.n.tight", seeds=1)
    assert check_settings(exp, rows)[1] == ""
    assert rows[0]["epsilon_pair_lower"] <= rows[0]["epsilon_guarantee"]
    mutate(monkeypatch, kp, "_wor_event", "dpa.GaussianDpEvent(kappa / 2.0)",
           "dpa.GaussianDpEvent(kappa)")
    exp, rows = rows_at("kan.cor55.n.tight", seeds=1)
    err = check_settings(exp, rows)[1]
    assert "epsilon_pair_lower reached" in err
    assert rows[0]["epsilon_pair_lower"] > 1.5 * rows[0]["epsilon_target"]


def test_dp_stat_count_noise_without_sqrt_levels_is_caught(monkeypatch):
    """DP-STAT's count noise drawn with std α instead of α√(L+1) (Lemma 3.10)."""
    import algorithms.linreg.adaptive_clipping as lac

    exp, rows = rows_at("linreg.amb.n.privacy", seeds=2)
    assert check_noise(exp, rows)[1] == ""
    mutate(monkeypatch, lac, "dp_stat", "std = alpha * math.sqrt(L + 1)", "std = alpha")
    exp, rows = rows_at("linreg.amb.n.privacy", seeds=2)
    assert "stat noise measured/claimed" in check_noise(exp, rows)[1]


def test_sosp_o2_calibrated_with_b1_is_caught(monkeypatch):
    """SOSP's O₂ noise calibrated with b1 instead of b2 (16–100× too little): the O₂ channel
    measures it against the theorem's σ₂ = z·2M_s‖Δx‖/b2, and o2_sigma_max against its
    theorem counterpart."""
    from algorithms.sosp.spider import AdaDPSpider

    exp, rows = rows_at("sosp.ada.n", seeds=2)
    assert check_noise(exp, rows)[1] == "" and check_settings(exp, rows)[1] == ""
    mutate(monkeypatch, AdaDPSpider, "_serve", "o2_sensitivity(p.M_sens, step, p.b2)",
           "o2_sensitivity(p.M_sens, step, p.b1)")
    exp, rows = rows_at("sosp.ada.n", seeds=2)
    assert "o2 noise measured/claimed" in check_noise(exp, rows)[1]
    assert "o2_sigma_max" in check_settings(exp, rows)[1]


def test_sosp_hessian_noise_at_sigma_g_is_caught(monkeypatch):
    """Algorithm 4's Hessian noise drawn with σ_g (the algorithm still reports σ_H): measured
    against z·2M_s√d/n, recomputed from the accountant's z.  The second grid point (d = 24):
    at d = 16, G_s = M_s√d on this instance, so σ_g = σ_H and the slip changes nothing."""
    import algorithms.sosp.selection as sel

    exp, rows = rows_at("sosp.select.d", seeds=2, index=1)
    assert check_noise(exp, rows)[1] == ""
    mutate(monkeypatch, sel, "_selection_releases", "upper = sigma_h * _selection_noise",
           "upper = sigma_g * _selection_noise")
    exp, rows = rows_at("sosp.select.d", seeds=2, index=1)
    assert "hessian noise measured/claimed" in check_noise(exp, rows)[1]


def test_selection_calibrated_for_T_releases_is_caught(monkeypatch):
    """Algorithm 4's multiplier calibrated for T releases instead of 2T: the used z differs
    from the one recomputed for 2T releases (settings verdict)."""
    import algorithms.sosp.selection as sel

    mutate(monkeypatch, sel, "private_model_selection",
           "selection_multiplier(epsilon, delta, 2 * T)", "selection_multiplier(epsilon, delta, T)")
    exp, rows = rows_at("sosp.select.d", seeds=1)
    assert "noise_multiplier used" in check_settings(exp, rows)[1]


def test_above_threshold_query_noise_halved_is_caught(monkeypatch):
    """AboveThreshold's query noise Lap(2Δ/ε) instead of Lap(4Δ/ε), measured against
    Algorithm 2's 16/ε (recomputed in the experiment)."""
    from algorithms.userlevel.alg3 import AboveThreshold

    exp, rows = rows_at("userlevel.alg3.n")
    assert check_noise(exp, rows)[1] == ""
    src = "noisy = float(query) + self.rng.laplace(0.0, 4.0 * self.sensitivity / self.epsilon)"
    mutate(monkeypatch, AboveThreshold, "fires", src, src.replace("4.0 *", "2.0 *"))
    exp, rows = rows_at("userlevel.alg3.n")
    assert "query noise measured/claimed" in check_noise(exp, rows)[1]


def test_alg1_sgd_last_iterate_is_caught_by_the_instance_band(monkeypatch):
    """Algorithm 1's SGD returning its last iterate instead of the average: √3 larger, inside
    the lemma's wide band, outside the instance's exact constant η√((T+1)(2T+1)/(3T))."""
    import algorithms.userlevel.alg1 as a1

    def levels():
        # the level part of each verdict (three smallest points, two seeds: the slope's CI is
        # then too wide to judge, the level band is not)
        exp = registry.get("userlevel.lem23.T")
        rows = []
        for i in range(3):
            rows += rows_at("userlevel.lem23.T", seeds=2, index=i)[1]
        return {r.bound: r.message.split("; level")[-1] for r in analyse(exp, rows).results}

    honest = levels()
    assert "inside band [0.9, 1.1]" in honest["userlevel:lem2.3_instance"]
    mutate(monkeypatch, a1, "sgd_average_iterates", "return S / T", "return X")
    bugged = levels()
    assert "inside band [0.07, 0.3]" in bugged["userlevel:lem2.3"]    # the wide band: through
    assert "OUTSIDE band [0.9, 1.1]" in bugged["userlevel:lem2.3_instance"]


# ---------------------------------------------------------------------------------------------
# the pair lower bound (second route of KAN's fresh-batch calibrations; KAN-E25)
# ---------------------------------------------------------------------------------------------
def test_pair_lower_bound_is_the_exact_gaussian_at_full_batch():
    z = 1.7
    exact = gaussian_epsilon_exact(z, 1e-5)
    assert pair_epsilon_lower(2 * z, 1.0, 1, 1e-5, "replace-one") == pytest.approx(exact, abs=2e-3)
    assert pair_epsilon_lower(2 * z, 1.0, 1, 1e-5, "replace-one") <= exact + 1e-9
    assert pair_epsilon_lower(z, 1.0, 1, 1e-5, "zero-out") == pytest.approx(exact, abs=2e-3)
    from algorithms.kan.privacy import gaussian_epsilon

    assert exact == pytest.approx(gaussian_epsilon(z, 1e-5), rel=1e-9)


def test_kan_e25_violation_is_shown_by_a_lower_bound():
    """Theorem D.9's κ in Corollary 5.5's regime: the exact ε of an achievable pair exceeds the
    target ε = 1 from n = 2000 on (a violation, shown by a lower bound); at n = 500 and 1000 it
    does not (no violation can be claimed there).  The accountant's RDP upper bounds are above
    the lower bounds at every n."""
    from algorithms.kan.privacy import calibrate
    from empirical.papers.kan.cor55 import _COR55_FIXED, _instance, cor55_schedule

    inst = _instance(_COR55_FIXED)
    for n, violated in ((500, False), (1000, False), (2000, True), (4000, True)):
        sch = cor55_schedule(n, inst.gamma0, 1.0, inst.d)
        pr = calibrate(1.0, 1e-6, lam=0.0, T=sch["T"], n=n, B=sch["B"], sampler="fresh",
                       calibration="thm5.4")
        lower = pair_epsilon_lower(pr.noise_multiplier, sch["B"] / n, sch["T"] - 1, 1e-6,
                                   value_discretization=1e-4)
        assert (lower > 1.0) == violated, (n, lower)
        assert lower <= pr.epsilon_spent


def test_kan_correlated_noise_without_its_correlation_is_caught(monkeypatch):
    """KAN's correlated noise drawn as κZ_t (the −λZ_{t−1} term dropped): decorrelating the
    measured noise with the λ the run states gives a fresh noise of std κ/√(1 − λ²), not κ;
    the calibrated κ and the exact cyclic route are untouched, so only the noise check sees it.
    Also the cyclic tight calibration's second route passes on the honest code."""
    import algorithms.kan.correlated_noise as kcn

    exp, rows = rows_at("kan.lam.tight.cyclic", seeds=1)
    assert check_noise(exp, rows)[1] == "" and check_settings(exp, rows)[1] == ""
    assert "epsilon_route_gap" in check_settings(exp, rows)[0]
    mutate(monkeypatch, kcn, "dp_sgd_correlated", "noise = scale_r * (z - lam_r * z_prev)",
           "noise = scale_r * z")
    exp, rows = rows_at("kan.lam.tight.cyclic", seeds=1)
    assert "correlated noise measured/claimed" in check_noise(exp, rows)[1]


def test_the_check_knows_every_family_the_meter_writes():
    from algorithms import noise_meter
    from empirical.core import checks

    assert set(noise_meter.FAMILIES) == set(checks.FAMILIES)
