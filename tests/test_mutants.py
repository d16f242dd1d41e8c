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

from empirical.privacy import audit
from empirical.privacy import mutants
from empirical.core import experiment as registry


def test_applied_patches_every_binding_and_restores():
    import algorithms.kl.condition as alg

    m = mutants.get_mutant("kl.noisy_gd.noise_halved")
    orig = alg._noise_block
    gens = [np.random.default_rng(0)]
    with mutants.applied(m):
        assert alg._noise_block is not orig
        z = alg._noise_block([np.random.default_rng(0)], 3, 2)
    assert alg._noise_block is orig
    assert np.allclose(z, 0.5 * orig(gens, 3, 2))


def test_confined_patch_leaves_other_modules_alone():
    import algorithms.kl.noisy_gd as alg
    import algorithms.primitives as prim

    m = mutants.get_mutant("kl.noisy_gd.add_remove_sensitivity")
    with mutants.applied(m):
        assert alg.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.1)
        assert prim.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.2)
    assert alg.mean_gradient_sensitivity(1.0, 10) == pytest.approx(0.2)


def test_every_mutant_names_catchers_that_exist():
    """Every mutant of every paper: its experiments and audits exist and are its own paper's
    (a catcher of another paper would run under a patch it never reaches), its tests' files
    exist.  (The per-paper copies of this loop in tests/test_*_mutants.py are covered here.)"""
    root = Path(__file__).resolve().parents[1]
    papers = {t.name: t.paper for t in audit.targets()}
    for m in mutants.mutants():
        for e in m.experiments:
            assert registry.get(e).paper == m.paper, (m.name, e)
        for a in m.audits:
            assert papers.get(a) == m.paper, (m.name, a)
        for t in m.tests:
            assert (root / t.split("::")[0]).exists(), (m.name, t)
    assert len(mutants.mutants()) >= 8


def test_load_imports_every_module_that_registers_mutants(monkeypatch):
    """Every module of empirical/ that registers mutants is an audit module (by name) and
    ``_load`` imports each, whatever its paper's module imports."""
    import importlib
    import sys

    pkg = Path(mutants.__file__).parents[1]
    registering = {".".join(p.relative_to(pkg.parent).with_suffix("").parts)
                   for p in pkg.rglob("*.py")
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


# runpy warns that the module it runs as __main__ is imported already: it is, by design here
@pytest.mark.filterwarnings("ignore:'empirical.privacy.mutants' found in sys.modules:RuntimeWarning")
def test_python_m_mutants_knows_every_audit_modules_mutants_once(monkeypatch, capsys):
    """``python -m empirical.privacy.mutants`` (run_mutant's subprocess) runs this file as ``__main__``;
    without its hand-over to the importable module it would keep a registry of its own, holding
    only the mutants defined in it (the KL ones), and the subprocess could not apply any other
    paper's mutant.  Run in-process as ``__main__`` (runpy), ``--list`` must name every
    registered mutant exactly once."""
    import runpy

    expected = sorted(m.name for m in mutants.mutants())
    monkeypatch.setattr("sys.argv", ["python -m empirical.privacy.mutants", "--list"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module("empirical.privacy.mutants", run_name="__main__")
    assert exit_.value.code == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert sorted(listed) == expected and len(set(listed)) == len(listed)
    assert {"kl", "kan", "linreg", "sosp", "userlevel"} <= {m.paper for m in mutants.mutants()}


def test_register_mutant_refuses_a_second_mutant_under_a_taken_name():
    m = mutants.get_mutant("kl.noisy_gd.noise_halved")
    assert mutants.register_mutant(m) is m        # the same mutant again (module re-imported)
    other = mutants.Mutant(m.name, m.paper, "something else", m.patches, experiments=("x",))
    with pytest.raises(ValueError, match="kl.noisy_gd.noise_halved"):
        mutants.register_mutant(other)
    assert mutants.get_mutant(m.name) is m


def test_broken_controls_stay_fingerprinted_by_their_audit_module():
    """with_mutant keeps the wrapped release's module: the audit store fingerprints the module
    defining a target's release, which must be the audit module (it imports the algorithm),
    not empirical.privacy.mutants (which imports none)."""
    from empirical.store import audit_store

    controls = [t for t in audit.targets() if t.expect == "broken"]
    assert controls
    for t in controls:
        module = audit_store._target_module(t)
        assert module != "empirical.privacy.mutants" and module.startswith("empirical."), (t.name, module)
    wrapped = mutants.with_mutant("kl.noisy_gd.noise_halved", _release_for_test)
    assert wrapped.__module__ == __name__ and wrapped.__wrapped__ is _release_for_test


def _release_for_test(side, rng, trials):
    return np.zeros(trials)


def test_with_mutant_applies_the_mutant_only_inside_the_release():
    import algorithms.kl.condition as alg

    orig = alg._noise_block
    seen = []

    def release(side, rng, trials):
        seen.append(alg._noise_block is not orig)
        return np.zeros(trials)

    mutants.with_mutant("kl.noisy_gd.noise_halved", release)(0, np.random.default_rng(0), 3)
    assert seen == [True] and alg._noise_block is orig


def test_scaled_result_multiplies_what_the_original_returns():
    make = mutants.scaled_result(0.5)
    assert make(lambda a, b=1.0: a * b)(4.0, b=3.0) == 6.0


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
def test_every_mutant_is_caught(tmp_path):
    reports = mutants.run_all(results=str(tmp_path))
    print("\n" + mutants.format_mutant_table(reports))
    missed = [r["mutant"] for r in reports if not r["caught"]]
    assert not missed, missed


def test_mutants_list_lists_and_runs_nothing(capsys):
    from empirical.cli import main

    assert main(["audit", "--mutants", "--list", "--mutant", "kl.spider"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names and all(n.startswith("kl.spider.") for n in names)
    assert main(["audit", "--mutants", "--list", "--mutant", "no_such_mutant"]) == 2
    assert "--mutant" in capsys.readouterr().err
