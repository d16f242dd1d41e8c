"""README's facts and commands, checked against the project: the papers it cites and their
counts, the extras, the set-up commands and their expected output, and every command it shows
(run as a new user would, on a small experiment selection to stay fast)."""
import functools
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from empirical.cli import main

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _blocks(text: str, lang: str = "") -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _table(text: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]
    return [r for r in rows[2:]]                       # header and separator dropped


_COUNT_SCRIPT = """
import json
import bounds
from empirical.core import experiment as registry
exps = registry.experiments()
print(json.dumps({
    "experiments": {p: sum(e.paper == p for e in exps) for p in {e.paper for e in exps}},
    "bounds": {p: len(bounds.ids(p)) for p in bounds.papers()},
    "points": sum(len(e.grid()) for e in exps),
    "full_only": [e.id for e in exps if e.full_only],
    "quick_points": sum(len(e.grid()) for e in exps if not e.full_only)}))
"""


@functools.cache
def _COUNTS() -> dict:
    """What the registries hold in a fresh process (as `dprates experiments` and `dprates bounds
    list` would count): other tests register toy experiments and bounds in this one."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", _COUNT_SCRIPT], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def test_readme_is_short():
    assert len(README.splitlines()) <= 150


def test_setup_commands_match_the_project():
    setup = _section("Set-up")
    install, output, test = _blocks(setup)[:3]
    assert install.strip() == 'pip install -e ".[test]" && dprates verify'
    assert "test" in PYPROJECT["optional-dependencies"]
    assert PYPROJECT["scripts"]["dprates"] == "empirical.cli:main"
    assert shutil.which("dprates"), "the console script README uses is installed"
    # CI runs exactly README's test command
    assert test.strip() == "pytest"
    assert test.strip() in (ROOT / ".ci" / "run").read_text().splitlines()
    # the expected output's counts are the registry's
    c = _COUNTS()
    exps = sum(c["experiments"].values())
    # the experiments whose quick-grid verdicts are open (INCONCLUSIVE or FAIL under the
    # three-way rules) are the ones tests/_open_verdicts.py lists; the full-grid-only ones are
    # not run, and named on a line of their own
    from _open_verdicts import OPEN

    lines = output.strip().splitlines()
    run = exps - len(c["full_only"])
    assert lines[:2] == [f"points: {c['quick_points']} fresh, 0 cached, 0 recomputed",
                         f"analyses: {run} fitted, 0 read from the cache"]
    assert lines[2].startswith(f"{run - len(OPEN)}/{run} experiments verified; failed: ")
    assert lines[3].startswith(f"full grid only: {len(c['full_only'])} not run (")


def test_python_version_and_extras_table_match_pyproject():
    install = _section("Install")
    want = re.fullmatch(r">=\s*([\d.]+)", PYPROJECT["requires-python"]).group(1)
    assert f"Python ≥ {want}" in install
    extras = PYPROJECT["optional-dependencies"]
    rows = {r[0].strip("`"): r[1] for r in _table(install)}
    assert set(rows) == set(extras)
    for extra, deps in extras.items():
        names = [re.split(r"[<>=!~;\s]", d, maxsplit=1)[0] for d in deps]
        assert [n.strip() for n in rows[extra].split(",")] == names, extra


def test_papers_table_cites_each_paper_and_counts_from_the_registry():
    from bounds.core import paper_info, papers

    rows = {r[0].strip("`"): r for r in _table(_section("Papers"))}
    cited = {k: paper_info(k).citation for k in papers() if paper_info(k).citation}
    assert set(rows) == set(cited) | {"real"}
    c = _COUNTS()
    for key, cite in cited.items():
        _, paper, n_bounds, n_exps = rows[key]
        assert cite == paper, key
        assert int(n_bounds) == c["bounds"][key], key
        assert int(n_exps) == c["experiments"][key], key
    assert int(rows["real"][3]) == c["experiments"]["real"]


def test_verdict_legend_names_every_verdict():
    setup = _section("Set-up")
    for verdict in ("PASS", "FAIL", "INCONCLUSIVE", "FINDING", "REJECTED", "NOT REPRODUCED", "INFO",
                    "ERROR"):
        assert f"`{verdict}`" in setup, verdict


def test_documentation_links_resolve():
    for target in re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]*)\)", README):
        assert (ROOT / target).exists(), target


def _commands() -> list[list[str]]:
    block = _blocks(_section("Using it"))[0]
    out = []
    for line in block.splitlines():
        line = line.split("#")[0]
        line = re.sub(r"\[[^\]]*\]", "", line).strip()       # drop optional arguments
        if line.startswith("dprates"):
            out.append(shlex.split(line)[1:])
    return out


def test_every_subcommand_is_documented():
    from empirical.cli import _parser

    sub = next(a for a in _parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {c[0] for c in _commands()} == set(sub.choices)


def test_quick_start_commands_run(tmp_path, results_root, capsys):
    # kl.thm9.rho's stored rows (computed once per test run) in a results tree of its own, so
    # that `figures` and `report` see only what this test ran.
    results, figures = tmp_path / "results", tmp_path / "figures"
    src = results_root / "kl" / "kl.thm9.rho"
    if src.exists():
        shutil.copytree(src, results / "kl" / "kl.thm9.rho")
    small = {"run": ["--results", str(results), "--figures", str(figures)],
             "verify": ["--experiment", "kl.thm9.rho", "--results", str(results),
                        "--figures", str(figures)],
             "figures": ["--paper", "kl", "--results", str(results), "--figures", str(figures)],
             "report": ["--experiment", "kl.thm9.rho", "--results", str(results),
                        "--out", str(tmp_path / "report"), "--markdown", str(tmp_path / "r.md"),
                        "--figures", str(figures)]}
    ran = []
    for argv in _commands():
        if argv[0] == "audit":
            if importlib.util.find_spec("empirical.privacy.audit") is None:
                continue
            argv = ["audit", "--help"]
        argv = [a for a in argv if a != "..."] + small.get(argv[0], [])
        assert main(argv) == 0, (argv, capsys.readouterr())
        ran.append(argv[0])
    out = capsys.readouterr().out
    assert "kl:thm9" in out and "kl.thm9.rho" in out and "1/1 experiments verified" in out
    assert (figures / "kl" / "kl.thm9.rho.png").exists()
    assert (tmp_path / "report" / "index.html").exists()
    assert {"bounds", "experiments", "run", "verify", "figures", "audit", "report"} <= set(ran)


def test_python_example_runs():
    (code,) = _blocks(_section("Using it"), "python")
    exec(code, {})
