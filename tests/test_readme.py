"""README's commands, run as a new user would (on a small experiment selection, to stay fast)."""
import re
import shlex
import shutil
import tomllib
from pathlib import Path

from empirical.cli import main

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end]


def _blocks(text: str, lang: str = "") -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_setup_commands_match_the_project():
    setup = _section("Set-up")
    install, test = _blocks(setup)[:2]
    assert install.strip() == 'pip install -e ".[test]" && dprates verify'
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "test" in extras["optional-dependencies"]
    assert any(d.startswith("dask[distributed]") for d in extras["optional-dependencies"]["test"])
    assert extras["scripts"]["dprates"] == "empirical.cli:main"
    assert shutil.which("dprates"), "the console script README uses is installed"
    # CI runs exactly README's test command
    assert test.strip() == "pytest"
    assert test.strip() in (ROOT / ".ci" / "run").read_text().splitlines()
    assert ".[distributed]" in setup


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
    documented = {c[0] for c in _commands()}
    assert documented == {"bounds", "experiments", "run", "verify", "figures", "audit"}


def test_quick_start_commands_run(tmp_path, results_root, capsys):
    import importlib.util

    # kl.thm9.rho's stored rows (computed once per session) in a results tree of its own, so
    # that `figures` draws only what this test ran.
    results, figures = tmp_path / "results", tmp_path / "figures"
    src = results_root / "kl" / "kl.thm9.rho"
    if src.exists():
        shutil.copytree(src, results / "kl" / "kl.thm9.rho")
    small = {"run": ["--results", str(results), "--figures", str(figures)],
             "verify": ["--experiment", "kl.thm9.rho", "--results", str(results),
                        "--figures", str(figures)],
             "figures": ["--paper", "kl", "--results", str(results), "--figures", str(figures)]}
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
    assert {"bounds", "experiments", "run", "verify", "figures"} <= set(ran)


def test_python_example_runs():
    (code,) = _blocks(_section("Using it"), "python")
    exec(code, {})
