"""A researcher's paper on equal terms with this project's (tests/plugins/bst14, loaded with
``--module bst14.rates``): its registered title, citation and errata page in the CLI and the
report; ``--paper`` accepting it once ``--module`` has imported it; ``--module`` alone acting on
its papers only; and its stored rows fingerprinted over its whole package and the modules its
experiment declares."""
import dataclasses
import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import bounds
from bounds import core
from empirical.cli import main
from empirical.core import experiment as registry
from empirical.run import runner

PLUGINS = Path(__file__).parent / "plugins"
TITLE = "Private Empirical Risk Minimization: Efficient Algorithms and Tight Error Bounds"
CITATION = "Bassily, Smith, Thakurta, FOCS 2014"


def _forget(prefix: str) -> None:
    """Undo what importing the plugin package ``prefix`` registered (its paper key is the
    package's name), so that the next test imports and registers it afresh."""
    for name in [m for m in sys.modules if m == prefix or m.startswith(prefix + ".")]:
        del sys.modules[name]
    for table in (core._PLUGINS, core._INFO, core._DECLARED_BY):
        table.pop(prefix, None)
    for table, sep in ((registry._REGISTRY, "."), (core._REGISTRY, ":")):
        for key in [k for k in table if k.startswith(prefix + sep)]:
            del table[key]


@pytest.fixture
def plugin_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))
    core.papers()
    yield
    _forget("bst14")
    _forget("bst14fp")


def _dirs(tmp_path) -> list[str]:
    return ["--results", str(tmp_path / "res"), "--figures", str(tmp_path / "figs")]


def test_registered_title_citation_and_errata_reach_cli_and_report(tmp_path, capsys,
                                                                   plugin_path):
    assert main(["--module", "bst14.rates", "papers"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"bst14: {TITLE}\n"), out          # --module alone: its paper only
    assert f"citation: {CITATION}" in out and "url: https://arxiv.org/abs/1405.7085" in out
    assert "errata: " in out and out.strip().endswith("errata.md")
    assert main(["--module", "bst14.rates", "verify", "--workers", "1"] + _dirs(tmp_path)) == 0
    capsys.readouterr()
    md = tmp_path / "results.md"
    assert main(["--module", "bst14.rates", "report", "--results", str(tmp_path / "res"),
                 "--out", str(tmp_path / "rep"), "--markdown", str(md)]) == 0
    html = (tmp_path / "rep" / "index.html").read_text()
    assert f"bst14: {TITLE}</h2>" in html and CITATION in html
    assert '<h3 id="errata-bst14">Errata</h3>' in html and "PLUGIN-E1" in html
    text = md.read_text()
    assert f"## bst14: {TITLE}" in text and CITATION in text and "errata.md)" in text
    # a built-in paper registers its citation the same way; the report was asked for bst14 only
    assert bounds.paper_info("kl").citation.startswith("Michael Menart") and "## kl:" not in text


def test_paper_accepts_a_plugin_once_its_module_is_imported(tmp_path, capsys, plugin_path):
    rep = ["report", "--paper", "bst14", "--results", str(tmp_path / "res"),
           "--out", str(tmp_path / "rep"), "--markdown", ""]
    assert main(rep) == 2                                    # not imported: unknown paper
    assert "got 'bst14'" in capsys.readouterr().err
    assert main(["--module", "bst14.rates", "verify", "--paper", "bst14", "--workers", "1"]
                + _dirs(tmp_path)) == 0
    capsys.readouterr()
    assert main(["--module", "bst14.rates"] + rep) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["--module", "bst14.rates", "figures", "--paper", "bst14"] + _dirs(tmp_path)) == 0


def test_module_without_paper_acts_on_its_papers_only(tmp_path, capsys, plugin_path):
    assert main(["--module", "bst14.rates", "experiments"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["bst14.mean.n"]
    assert main(["--module", "bst14.rates", "bounds", "list"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["bst14:mean"]
    assert main(["--module", "bst14.rates", "verify", "--workers", "1"] + _dirs(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "1/1 experiments verified" in out and "kl." not in out
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == ["bst14"]
    # with --paper, any paper, this project's included
    assert main(["--module", "bst14.rates", "experiments", "linreg"]) == 0
    # every experiment line is linreg's; the closing count of full-grid-only ones names no id
    assert all(line.startswith(("linreg.", "[full grid only]"))
               for line in capsys.readouterr().out.splitlines())


def test_fingerprint_covers_every_module_of_the_plugin_package(tmp_path, monkeypatch,
                                                               plugin_path):
    """A 10× noise fault in the plugin's second module (not the module defining ``run``) makes
    its stored rows stale: recomputed, not served from the store."""
    pkg = tmp_path / "site" / "bst14fp"
    shutil.copytree(PLUGINS / "bst14", pkg)
    monkeypatch.syspath_prepend(str(pkg.parent))
    importlib.import_module("bst14fp.rates")
    exp = registry.get("bst14fp.mean.n")
    fp = runner.code_fingerprint(exp.run.__module__)
    assert {"bst14fp", "bst14fp.sgd", "bst14fp.extra", "bst14fp.rates"} <= set(fp["code"])
    first = runner.sweep(exp, results=tmp_path / "res")
    src = pkg / "sgd.py"
    src.write_text(src.read_text().replace("return 2.0 / (n", "return 20.0 / (n"))
    importlib.reload(sys.modules["bst14fp.sgd"])
    runner.forget_fingerprints()
    try:
        assert runner.code_fingerprint(exp.run.__module__)["digest"] != fp["digest"]
        again = runner.sweep(exp, results=tmp_path / "res")
    finally:
        runner.forget_fingerprints()
    ratio = (np.mean([r["sq_error"] for r in again if r["p_n"] == 100.0])
             / np.mean([r["sq_error"] for r in first if r["p_n"] == 100.0]))
    assert 50 < ratio < 200, ratio                            # 10× the noise: 100× the error
    # a file of the package the experiment never imports counts too
    (pkg / "extra.py").write_text("SCALE = 2.0\n")
    runner.forget_fingerprints()
    try:
        changed = runner.code_fingerprint(exp.run.__module__)
    finally:
        runner.forget_fingerprints()
    assert changed["code"]["bst14fp.extra"] != fp["code"]["bst14fp.extra"]


def test_fingerprint_covers_the_modules_an_experiment_declares(tmp_path, monkeypatch,
                                                               plugin_path):
    """A module outside the plugin's package, which the fingerprint does not follow, declared in
    ``Experiment.code``: a 10× noise fault planted there makes the stored rows stale
    (recomputed, not served from the store).  Undeclared, the same module is not in the
    fingerprint (the declaration is what covers it); a declared module that cannot be found, or
    a bare string, is a ValueError naming ``code``."""
    site = tmp_path / "site"
    pkg = site / "bst14code"
    shutil.copytree(PLUGINS / "bst14", pkg)
    (site / "bst14noise.py").write_text("SCALE = 1.0\n")
    sgd = pkg / "sgd.py"
    sgd.write_text(sgd.read_text()
                   .replace("import numpy as np\n", "import numpy as np\n\nimport bst14noise\n")
                   .replace("s = noise_std(x.shape[0], rho)",
                            "s = noise_std(x.shape[0], rho) * bst14noise.SCALE"))
    rates = pkg / "rates.py"
    rates.write_text(rates.read_text().replace("    private=False))",
                                               '    private=False, code=("bst14noise",)))'))
    monkeypatch.syspath_prepend(str(site))
    try:
        importlib.import_module("bst14code.rates")
        exp = registry.get("bst14code.mean.n")
        assert exp.code == ("bst14noise",)
        assert "bst14noise" in runner.experiment_fingerprint(exp)["code"]
        assert "bst14noise" not in runner.code_fingerprint(exp.run.__module__)["code"]
        first = runner.sweep(exp, results=tmp_path / "res")
        (site / "bst14noise.py").write_text("SCALE = 10.0\n")
        importlib.reload(sys.modules["bst14noise"])
        runner.forget_fingerprints()
        again = runner.sweep(exp, results=tmp_path / "res")
        assert (again.stats.recomputed, again.stats.cached) == (len(exp.quick_grid), 0)
        ratio = (np.mean([r["sq_error"] for r in again if r["p_n"] == 100.0])
                 / np.mean([r["sq_error"] for r in first if r["p_n"] == 100.0]))
        assert 50 < ratio < 200, ratio                        # 10× the noise: 100× the error
        with pytest.raises(ValueError, match=r"code names module 'bst14_absent', which cannot"):
            dataclasses.replace(exp, code=("bst14_absent",))
        with pytest.raises(ValueError, match=r"code must be a tuple of module names"):
            dataclasses.replace(exp, code="bst14noise")
    finally:
        runner.forget_fingerprints()
        _forget("bst14code")
        sys.modules.pop("bst14noise", None)
