"""The SOSP part of the mutation self-test (mutants registered in empirical/sosp_audit.py): every
broken variant of the SOSP algorithms is caught by a SOSP check, the privacy/settings verdict,
a SOSP unit test or an audit.  Slow (each mutant re-runs its quick grids, audits and tests in a
fresh subprocess), so skipped unless DPRATES_MUTATION=1, as tests/test_mutants.py:

    DPRATES_MUTATION=1 pytest tests/test_sosp_mutants.py -s

(equivalently: ``dprates audit --mutants --mutant sosp``).  The cheap tests below always run.
"""
import os
from pathlib import Path

import numpy as np
import pytest

import algorithms.sosp_nonconvex as alg
from empirical import audit, mutants
from empirical import experiment as registry

REQUIRED = {"noise scaled": "sosp.spider.noise_halved",
            "gradient-difference sensitivity": "sosp.spider.o2_step_squared",
            "dropped SPIDER correction": "sosp.spider.no_correction",
            "wrong step count": "sosp.psgd.wrong_step_count",
            "noise removed": "sosp.spider.noise_removed",
            "accountant off by a factor": "sosp.accountant_off_by_2"}


def test_sosp_mutants_are_registered_with_existing_catchers():
    root = Path(__file__).resolve().parents[1]
    ms = {m.name: m for m in mutants.mutants(["sosp"])}
    assert set(REQUIRED.values()) <= set(ms)
    names = {t.name for t in audit.targets(["sosp"])}
    for m in ms.values():
        assert m.paper == "sosp"
        for e in m.experiments:
            assert registry.get(e).paper == "sosp"
        for a in m.audits:
            assert a in names, (m.name, a)
        for t in m.tests:
            assert (root / t.split("::")[0]).exists(), (m.name, t)


def test_sosp_patches_apply_and_restore():
    m = mutants.get_mutant("sosp.spider.o2_step_squared")
    orig = alg.o2_sensitivity
    with mutants.applied(m):
        assert alg.o2_sensitivity(1.0, 0.1, 1) == pytest.approx(0.02)
    assert alg.o2_sensitivity is orig and alg.o2_sensitivity(1.0, 0.1, 1) == pytest.approx(0.2)
    m = mutants.get_mutant("sosp.spider.noise_removed")
    with mutants.applied(m):
        assert not alg._spider_noise(np.random.default_rng(0), (3,)).any()
    assert alg._spider_noise(np.random.default_rng(0), (3,)).any()


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_sosp_mutant_is_caught(tmp_path):
    reports = mutants.run_all(["sosp"], results=str(tmp_path))
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed
