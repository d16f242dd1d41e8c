"""The mutation self-test: every registered broken variant is caught by some check or audit.

The full self-test re-runs quick grids and audits under each mutant (several minutes), so it is
skipped unless DPRATES_MUTATION=1:

    DPRATES_MUTATION=1 pytest tests/test_mutants.py -s

(equivalently: ``dprates audit --mutants``).  The cheap tests below always run.
"""
import os
from pathlib import Path

import numpy as np
import pytest

from empirical import audit, mutants
from empirical import experiment as registry


def test_applied_patches_every_binding_and_restores():
    import algorithms.kl_condition as alg

    m = mutants.get_mutant("kl.noisy_gd.noise_halved")
    orig = alg._noise_block
    gens = [np.random.default_rng(0)]
    with mutants.applied(m):
        assert alg._noise_block is not orig
        z = alg._noise_block([np.random.default_rng(0)], 3, 2)
    assert alg._noise_block is orig
    assert np.allclose(z, 0.5 * orig(gens, 3, 2))


def test_confined_patch_leaves_other_modules_alone():
    import algorithms.kl_condition as alg
    import algorithms.primitives as prim

    m = mutants.get_mutant("kl.noisy_gd.add_remove_sensitivity")
    with mutants.applied(m):
        assert alg.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.1)
        assert prim.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.2)
    assert alg.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.2)


def test_every_mutant_names_catchers_that_exist():
    root = Path(__file__).resolve().parents[1]
    names = {t.name for t in audit.targets()}
    for m in mutants.mutants():
        for e in m.experiments:
            registry.get(e)
        for a in m.audits:
            assert a in names, (m.name, a)
        for t in m.tests:
            assert (root / t.split("::")[0]).exists(), (m.name, t)
    assert len(mutants.mutants()) >= 8


def test_load_imports_every_module_that_registers_mutants(monkeypatch):
    """Every module of empirical/ that registers mutants is an audit module (by name) and
    ``_load`` imports each, whatever its paper's module imports."""
    import importlib
    import sys

    pkg = Path(mutants.__file__).parent
    registering = {f"empirical.{p.stem}" for p in pkg.glob("*.py")
                   if p.stem != "mutants" and "register_mutant(Mutant(" in p.read_text()}
    assert registering and registering <= set(mutants.audit_modules()), \
        sorted(registering - set(mutants.audit_modules()))
    imported = []
    real = importlib.import_module

    def spy(name, *a, **k):
        imported.append(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", spy)
    mutants._load()
    assert registering <= set(imported) and all(m in sys.modules for m in registering)
    papers = {m.paper for m in mutants.mutants()}
    assert {"kl", "kan", "linreg", "sosp", "userlevel"} <= papers, papers


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_mutant_is_caught(tmp_path):
    reports = mutants.run_all(results=str(tmp_path))
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed
