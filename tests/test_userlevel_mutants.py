"""The user-level paper's mutation self-test: every registered userlevel mutant is caught by a
check (slopes, levels, privacy/settings verdict), an audit or a named test.

Slow (re-runs quick grids and audits in a subprocess per mutant), so skipped unless
DPRATES_MUTATION=1:

    DPRATES_MUTATION=1 pytest tests/test_userlevel_mutants.py -s

(equivalently: ``dprates audit --mutants --mutant userlevel``).  The cheap tests always run."""
import os

import numpy as np
import pytest

from empirical.privacy import mutants


def _userlevel():
    return mutants.mutants(["userlevel"])


def test_userlevel_mutants_are_registered():
    """At least the eight mutants of the issue's bug classes (their catchers: test_mutants.py's
    test_every_mutant_names_catchers_that_exist, for every paper)."""
    ms = _userlevel()
    assert len(ms) >= 8 and all(m.paper == "userlevel" for m in ms)


def test_noise_mutants_patch_the_draw_and_restore():
    import algorithms.userlevel.accounting as acc
    import algorithms.userlevel.sco as ul

    m = mutants.get_mutant("userlevel.noise_halved")
    orig = acc.gaussian_noise
    with mutants.applied(m):
        z = ul.gaussian_noise(np.random.default_rng(0), 2.0, 3)
        # the defining module and the re-export are the same patched object
        assert acc.gaussian_noise is ul.gaussian_noise is not orig
    assert acc.gaussian_noise is orig and ul.gaussian_noise is orig
    assert np.allclose(z, 0.5 * orig(np.random.default_rng(0), 2.0, 3))


def test_every_patch_names_the_module_that_defines_the_function():
    """After the split of algorithms/userlevel/sco.py, a Patch must name where the function
    lives (the re-export module would also work through Patch.everywhere, but only by luck)."""
    import importlib

    for m in _userlevel():
        for p in m.patches:
            f = getattr(importlib.import_module(p.module), p.attribute)
            assert f.__module__ == p.module, (m.name, p.module, p.attribute, f.__module__)


def test_patches_reach_the_calls_the_algorithms_make():
    """Run the algorithms under each mutant and see the bug where the algorithm makes the call
    (algorithms/userlevel/alg1.py and user_level_alg3.py import the patched functions by name
    from user_level_outliers/accounting).  The injected noise's std over the theorem's σ_1
    (recomputed independently, empirical/papers/userlevel/audit.py) is 1 when honest (40 Algorithm 1
    runs: ±0.15; 10 Algorithm 3 runs, ≥ 50 coordinates: ±0.3) and must leave [0.6, 1.6] under
    the noise and sensitivity mutants (½ and 0; Algorithm 3's item-level 2L/(mK) ≪ its
    user-level Δ; Algorithm 1's item-level 2η_1L/C is 8.7× ABOVE its user-level Δ on the
    audit's canary, UL-E15); Γ/3 and the accountant show in the schedule and the calibration; dropping outlier
    removal shows as a kept outlier."""
    import algorithms.userlevel.sco as ul
    from empirical.papers.userlevel import audit as aul

    def a1():
        out = aul.measure_alg1_noise(runs=40, seed=5)
        return out["std"] / out["sigma"]

    def a3():
        out = aul.measure_alg3_noise(runs=10, seed=5)
        return out["std"] / out["sigma"]

    cases = {"userlevel.noise_halved": (a1, a3), "userlevel.alg3.noise_removed": (a1, a3),
             "userlevel.alg1.item_level_sensitivity": (a1,),
             "userlevel.alg3.item_level_sensitivity": (a3,)}
    honest = {f: f() for f in (a1, a3)}
    assert 0.8 <= honest[a1] <= 1.2 and 0.7 <= honest[a3] <= 1.3, honest
    for name, measures in cases.items():
        with mutants.applied(mutants.get_mutant(name)):
            for f in measures:
                r = f()
                assert not 0.6 <= r <= 1.6, (name, f.__name__, r)

    def steps():
        return ul.alg3_schedule(4096, 64, 4, 8.0, 1e-10, 1.0, 4.0, 1.0, c_K1=36.0)[1][0].T_i
    T = steps()
    with mutants.applied(mutants.get_mutant("userlevel.alg3.wrong_step_count")):
        assert steps() < T

    # a fresh target, so calibrate_gaussian's cache cannot answer for the patched accountant
    z = ul.calibrate_gaussian(0.7311, 3, 1.7e-6)
    with mutants.applied(mutants.get_mutant("userlevel.accountant_off_by_2")):
        assert ul.calibrate_gaussian(0.7312, 3, 1.7e-6) < 0.75 * z

    # one far-away user among K: honest removal drops it, the mutant keeps everybody
    from empirical.papers.userlevel.problems import QuadraticUsers
    data = QuadraticUsers(64, 16, 3, np.random.default_rng(0))
    tau = data.L * np.sqrt(np.log(64 * 3 * 16) / 16)
    far = np.zeros((64, 3)); far[0, 0] = 50 * tau
    P = np.random.default_rng(1).normal(scale=0.1 * tau, size=(64, 3)) + far
    h = ul.concentration_scores(P, 2 * tau)
    assert ul.keep_probabilities(h, 64)[0] == 0.0
    for name in ("userlevel.alg3.no_outlier_removal", "userlevel.alg1.no_outlier_removal"):
        with mutants.applied(mutants.get_mutant(name)):
            import algorithms.userlevel.alg1 as a1m
            import algorithms.userlevel.alg3 as a3m
            assert a1m.keep_probabilities(h, 64)[0] == 1.0
            assert a3m.keep_probabilities(h, 64)[0] == 1.0


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_userlevel_mutant_is_caught(tmp_path):
    reports = [mutants.run_mutant(m, results=str(tmp_path)) for m in _userlevel()]
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed
