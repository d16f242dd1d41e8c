"""The SOSP part of the mutation self-test (mutants registered in empirical/papers/sosp/audit.py): every
broken variant of the SOSP algorithms is caught by a SOSP check, the privacy/settings verdict,
a SOSP unit test or an audit.  Slow (each mutant re-runs its quick grids, audits and tests in a
fresh subprocess), so skipped unless DPRATES_MUTATION=1, as tests/test_mutants.py:

    DPRATES_MUTATION=1 pytest tests/test_sosp_mutants.py -s

(equivalently: ``dprates audit --mutants --mutant sosp``).  The cheap tests below always run.
"""
import os

import numpy as np
import pytest

import algorithms.sosp.nonconvex as alg
import algorithms.sosp.privacy as priv
from empirical.privacy import mutants
from empirical.papers.sosp import audit as sa

REQUIRED = {"noise scaled": "sosp.spider.noise_halved",
            "gradient-difference sensitivity": "sosp.spider.o2_step_squared",
            "dropped SPIDER correction": "sosp.spider.no_correction",
            "wrong step count": "sosp.psgd.wrong_step_count",
            "noise removed": "sosp.spider.noise_removed",
            "accountant off by a factor": "sosp.accountant_off_by_2"}


def test_sosp_mutants_are_registered():
    """The issue's bug classes each have a mutant (their catchers: test_mutants.py's
    test_every_mutant_names_catchers_that_exist, for every paper)."""
    ms = {m.name: m for m in mutants.mutants(["sosp"])}
    assert set(REQUIRED.values()) <= set(ms)
    assert all(m.paper == "sosp" for m in ms.values())


def test_sosp_patches_apply_and_restore():
    # the defining module (what the patch names) and the re-export are both patched, and restored
    m = mutants.get_mutant("sosp.spider.o2_step_squared")
    orig = priv.o2_sensitivity
    with mutants.applied(m):
        assert priv.o2_sensitivity(1.0, 0.1, 1) == pytest.approx(0.02)
        assert alg.o2_sensitivity is priv.o2_sensitivity
    assert priv.o2_sensitivity is orig and alg.o2_sensitivity is orig
    assert orig(1.0, 0.1, 1) == pytest.approx(0.2)
    m = mutants.get_mutant("sosp.spider.noise_removed")
    with mutants.applied(m):
        assert not priv._spider_noise(np.random.default_rng(0), (3,)).any()
    assert priv._spider_noise(np.random.default_rng(0), (3,)).any()


def test_sosp_patches_reach_the_calls_the_algorithms_make():
    """The algorithms call the patched functions from other modules (algorithms/sosp/spider.py,
    sosp_plan.py and sosp_selection.py import them by name from sosp_privacy.py): run them under
    the mutant and see the bug.  The measure is the injected noise's rms over the theorem's σ:
    ≈ 1 when honest (tests/test_sosp_audit.py checks that, with more rows); here, with ≥ 36
    draws (relative s.e. ≤ 0.12), it must fall below 0.5 under the mutant (≥ 4 s.e. below 1):
    removed noise gives 0, the O₂ step squared ≈ 0.09 (steps ≈ 0.1), σ/√m at m = 16 gives 1/4,
    the operator-norm Hessian sensitivity 1/√d = 1/4.  Γ/3 shows in the plan."""
    def spider(kind, m=1):
        return lambda: sa.measure_spider_noise(rows=20, seed=1, m=m)[kind]["ratio"]
    cases = [("sosp.spider.noise_removed", spider("o1")),
             ("sosp.spider.o2_step_squared", spider("o2")),
             ("sosp.spider_dist.noise_split", spider("o1", m=16)),
             ("sosp.selection.hessian_operator_sensitivity",
              lambda: sa.measure_selection_noise(rows=2)["diag"]["ratio"])]
    for name, measure in cases:
        with mutants.applied(mutants.get_mutant(name)):
            assert measure() < 0.5, name
    gamma = sa.audit_plan().Gamma
    with mutants.applied(mutants.get_mutant("sosp.psgd.wrong_step_count")):
        assert sa.audit_plan().Gamma == max(1, gamma // 3) < gamma


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_sosp_mutant_is_caught(tmp_path):
    reports = mutants.run_all(["sosp"], results=str(tmp_path))
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed
