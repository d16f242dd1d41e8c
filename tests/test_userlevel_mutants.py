"""The user-level paper's mutation self-test: every registered userlevel mutant is caught by a
check (slopes, levels, privacy/settings verdict), an audit or a named test.

Slow (re-runs quick grids and audits in a subprocess per mutant), so skipped unless
DPRATES_MUTATION=1:

    DPRATES_MUTATION=1 pytest tests/test_userlevel_mutants.py -s

(equivalently: ``dprates audit --mutants --mutant userlevel``).  The cheap tests always run."""
import os
from pathlib import Path

import numpy as np
import pytest

from empirical import audit, mutants
from empirical import experiment as registry


def _userlevel():
    return mutants.mutants(["userlevel"])


def test_userlevel_mutants_name_catchers_that_exist():
    root = Path(__file__).resolve().parents[1]
    names = {t.name for t in audit.targets(["userlevel"])}
    ms = _userlevel()
    assert len(ms) >= 8
    for m in ms:
        for e in m.experiments:
            registry.get(e)
        for a in m.audits:
            assert a in names, (m.name, a)
        for t in m.tests:
            assert (root / t.split("::")[0]).exists(), (m.name, t)


def test_noise_mutants_patch_the_draw_and_restore():
    import algorithms.user_level_sco as ul

    m = mutants.get_mutant("userlevel.noise_halved")
    orig = ul.gaussian_noise
    with mutants.applied(m):
        z = ul.gaussian_noise(np.random.default_rng(0), 2.0, 3)
    assert ul.gaussian_noise is orig
    assert np.allclose(z, 0.5 * orig(np.random.default_rng(0), 2.0, 3))


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_userlevel_mutant_is_caught(tmp_path):
    reports = [mutants.run_mutant(m, results=str(tmp_path)) for m in _userlevel()]
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed
