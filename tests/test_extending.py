"""A researcher's own paper, from their own package: docs/extending.md's walkthrough run as
written, entry-point discovery, and the checks that catch a mis-declared experiment early."""
import re
import textwrap
from pathlib import Path

import pytest

import _toy
import bounds
from bounds import core
from bounds import registry as paper_registry
from empirical.core import experiment as registry
from empirical.core.validation import validate_experiment
from empirical.cli import main
from empirical.core.experiment import Check, Experiment
from empirical.run.runner import sweep

DOC = Path(__file__).parents[1] / "docs" / "extending.md"


@pytest.fixture
def isolated_plugins(monkeypatch):
    """Paper keys registered in a test do not leak into the next one.  (Only the keys the test
    added go: a project paper first loaded during the test declared its modules for good.)"""
    before = set(core.papers())
    yield
    for key in set(core._PLUGINS) - before:
        for table in (core._PLUGINS, core._INFO, core._DECLARED_BY):
            table.pop(key, None)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_walkthrough_in_docs_runs_as_written(tmp_path, monkeypatch, capsys, isolated_plugins):
    module, snippet, dp_module = _python_blocks(DOC.read_text())
    (tmp_path / "myrates.py").write_text(module)
    (tmp_path / "myrates_dp.py").write_text(dp_module)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["--module", "myrates", "bounds", "show", "mean:gaussian"]) == 0
    assert "exponent in n: -2" in capsys.readouterr().out
    code = main(["--module", "myrates", "verify", "--experiment", "mean.gaussian.n",
                 "--results", str(tmp_path / "res"), "--figures", str(tmp_path / "figs")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS" in out and "1/1 experiments verified" in out
    assert (tmp_path / "figs" / "mean" / "mean.gaussian.n.png").exists()
    exec(snippet, {})
    assert "--module myrates" in DOC.read_text() and "dprates.papers" in DOC.read_text()
    # the (ε, δ) example: privacy columns in ε, checked like the ρ ones
    code = main(["--module", "myrates", "--module", "myrates_dp", "verify", "--experiment",
                 "mean.gaussian_dp.n", "--results", str(tmp_path / "res"), "--figures",
                 str(tmp_path / "figs")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS" in out and "1/1 experiments verified" in out
    with pytest.raises(ValueError, match="privacy"):
        bounds.compare("mean:gaussian", "mean:gaussian_dp", "n",
                       at=dict(n=1e3, d=10, rho=1, epsilon=1, delta=1e-5))


def test_entry_point_paper_loads_lazily_by_id(tmp_path, monkeypatch, isolated_plugins):
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "epdemo_rates.py").write_text(textwrap.dedent('''
        import bounds
        from empirical.core.experiment import Check, Experiment, register
        import _toy

        bounds.register(bounds.Bound(id="epdemo:rate", expr=bounds.sym("n") ** -1.5,
                                     quantity="q", source="entry-point demo"))
        register(Experiment(
            id="epdemo.rate.n", paper="epdemo", title="demo", variable="n",
            quick_grid=_toy.TOY.quick_grid, full_grid=_toy.TOY.full_grid, fixed=_toy.TOY.fixed,
            seeds=6, run=_toy.run_power_law, metric="metric",
            bound_values=lambda p: {"n": p["n"]},
            checks=(Check("epdemo:rate", "two-sided", 0.15, "toy noise"),), private=False))
    '''))
    dist = pkg / "epdemo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: epdemo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[dprates.papers]\nepdemo = epdemo_rates\n")
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setattr(paper_registry, "_ENTRY_POINTS_READ", False)
    assert "epdemo" in bounds.papers()
    assert bounds.get("epdemo:rate").exponent("n") == -1.5
    exp = registry.get("epdemo.rate.n")
    assert exp.paper == "epdemo" and "epdemo.rate.n" in registry.ids("epdemo")
    rows = sweep(exp, results=tmp_path / "res")
    assert len(rows) == 6 * 6 and (tmp_path / "res" / "epdemo").is_dir()


def test_unknown_paper_says_how_to_add_one(isolated_plugins):
    with pytest.raises(KeyError, match="register_paper"):
        registry.get("mynew.thm1.n")
    with pytest.raises(ValueError, match="register_paper"):
        bounds.Bound(id="mynew:thm1", expr=bounds.sym("n"), quantity="q", source="s")
    bounds.register_paper("mynew")
    assert bounds.Bound(id="mynew:thm1", expr=bounds.sym("n"), quantity="q", source="s")
    with pytest.raises(ValueError, match="paper key"):
        bounds.register_paper("My Paper")


def _exp(**kw) -> Experiment:
    base = dict(id="toy.badvalues", paper="kl", title="t", variable="n",
                quick_grid=_toy.TOY.quick_grid, full_grid=_toy.TOY.full_grid,
                fixed=_toy.TOY.fixed, seeds=6, run=_toy.run_power_law, metric="metric",
                bound_values=lambda p: {"n": p["n"]},
                checks=(Check("kl:thm9", "two-sided", 0.1, "why"),), private=False)
    return Experiment(**{**base, **kw})


def test_bound_values_leaving_out_a_symbol_fail_before_any_point(tmp_path, capsys):
    exp = registry.register(_exp())
    _toy.CALLS.clear()
    with pytest.raises(ValueError, match=r"leaves out \['L0', 'L1t', 'beta', 'd', 'rho'\]"):
        sweep(exp, results=tmp_path)
    assert not _toy.CALLS
    assert main(["verify", "--experiment", "toy.badvalues", "--results", str(tmp_path),
                 "--no-figures"]) == 1
    assert "ERROR: not run: toy.badvalues: check 0" in capsys.readouterr().out
    assert not _toy.CALLS


def test_slope_check_on_a_bound_without_the_swept_variable_fails_early(tmp_path):
    exp = _exp(id="toy.novar", variable="c", fixed={"n": 4.0, "slope": -1.5},
               quick_grid=(1.0, 2.0, 3.0), full_grid=(1.0, 2.0, 3.0),
               bound_values=lambda p: {"n": p["n"] * p["c"]},
               checks=(Check("kl:toy_power_law", "two-sided", 0.1, "why"),))
    with pytest.raises(ValueError, match="has no symbol 'c'"):
        validate_experiment(exp)
    with pytest.raises(ValueError, match="no bound 'kl:nope'"):
        validate_experiment(_exp(id="toy.nobound",
                                          checks=(Check("kl:nope", "two-sided", 0.1, "w"),)))


def test_quick_and_full_figures_are_kept_apart(tmp_path, capsys):
    args = ["verify", "--experiment", "toy.power_law", "--results", str(tmp_path / "r"),
            "--figures", str(tmp_path / "f")]
    assert main(args) == 0 and main(args + ["--full"]) == 0
    quick = tmp_path / "f" / "kl" / "toy.power_law.png"
    full = tmp_path / "f" / "full" / "kl" / "toy.power_law.png"
    assert quick.exists() and full.exists() and quick.read_bytes() != full.read_bytes()


def test_figures_are_byte_for_byte_reproducible(tmp_path):
    from empirical.core.checks import analyse
    from empirical.store.figures import plot_analysis

    a = analyse(_toy.TOY, sweep(_toy.TOY, results=tmp_path / "r"))
    path = plot_analysis(a, tmp_path / "f1")
    first, stamp = path.read_bytes(), path.stat().st_mtime_ns
    assert plot_analysis(a, tmp_path / "f1").stat().st_mtime_ns == stamp, "unchanged: not rewritten"
    assert plot_analysis(a, tmp_path / "f2").read_bytes() == first
    assert b"Software" not in first and b"Matplotlib" not in first and b"tIME" not in first


def test_a_broken_paper_module_does_not_stop_the_others(tmp_path, monkeypatch, capsys,
                                                        isolated_plugins):
    (tmp_path / "broken_paper_mod.py").write_text("raise RuntimeError('half-written module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    bounds.register_paper("brokenpaper", "broken_paper_mod")
    assert main(["bounds", "list"]) == 1
    out, err = capsys.readouterr()
    assert "kl:thm9" in out
    assert "paper 'brokenpaper': bounds/ module failed to import (RuntimeError: half-written" in err
    assert main(["bounds", "list", "kl"]) == 0
    capsys.readouterr()
    assert main(["run", "brokenpaper.x.n", "--no-figures"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "half-written module" in err
