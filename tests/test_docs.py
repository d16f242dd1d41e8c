"""The documentation against the software: every cheap command shown in docs/ runs and prints
what is shown, generated tables are fresh, docs/cli.md names every command and option, links
resolve, Python examples run, and the documentation stays short."""
import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from empirical.report import doc_tables
from empirical.cli import _parser, main

ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").rglob("*.md"))
#: Commands that compute nothing, so the tests run them; the others (run, verify, figures,
#: audit, report) sweep or read a results tree and are exercised by their own tests.  Any
#: command with --help is cheap too.
CHEAP = {("experiments",), ("bounds", "list"), ("bounds", "show"), ("bounds", "derive"),
         ("bounds", "compare"), ("papers",), ("coverage",)}


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _shown_commands() -> list[tuple[str, list[str], list[str]]]:
    """(file, argv, the output lines shown under it) for every ``dprates ...`` line of a code
    block in docs/ (the README's are run by tests/test_readme.py): ``$ dprates ...`` followed by
    its output, or a bare ``dprates ...`` (a trailing ``# comment`` dropped) whose output is not
    shown."""
    out = []
    for doc in DOCS:
        for block in re.findall(r"```[\w-]*\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            lines = block.splitlines()
            for i, line in enumerate(lines):
                prompt = line.startswith("$ dprates ")
                if not (prompt or line.startswith("dprates ")):
                    continue
                shown = []
                for nxt in (lines[i + 1:] if prompt else []):
                    if nxt.startswith("$ "):
                        break
                    shown.append(nxt.rstrip())
                argv = shlex.split(line.removeprefix("$ "), comments=True)[1:]
                out.append((_rel(doc), argv, shown))
    return out


def _command(argv: list[str]) -> tuple[str, ...]:
    """The (sub)command words of ``argv``, global options and their values skipped."""
    words, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--module":
            skip = True
        elif not a.startswith("-"):
            words.append(a)
    return tuple(words)


def _cheap(argv: list[str]) -> bool:
    if "--module" in argv or any(re.fullmatch(r"\[.*|[A-Z_]+|\.\.\.", a) for a in argv):
        return False                # a plugin this checkout lacks, or a synopsis (PAPER, [--x])
    words = _command(argv)
    return "--help" in argv or "-h" in argv or words[:1] in CHEAP or words[:2] in CHEAP


SHOWN = _shown_commands()
CHEAP_SHOWN = [c for c in SHOWN if _cheap(c[1])]


#: Shown commands that run a sweep, with output shown: run by the slow tests (each ≈ 20 s), in a
#: temporary directory (their --results/--figures paths are replaced).
COSTLY_SHOWN = [c for c in SHOWN if not _cheap(c[1]) and any(x.strip() for x in c[2])
                and "--module" not in c[1] and _command(c[1])[:1] in (("run",), ("verify",))]


@pytest.mark.slow
@pytest.mark.parametrize("doc, argv, shown", COSTLY_SHOWN,
                         ids=[f"{d}:{' '.join(a)}" for d, a, _ in COSTLY_SHOWN])
def test_shown_sweep_prints_what_is_shown(doc, argv, shown, capsys, tmp_path):
    args, it = [], iter(argv)
    for a in it:
        if a in ("--results", "--figures"):
            args += [a, str(tmp_path / a.strip("-"))]
            next(it)
        else:
            args.append(a)
    assert main(args + ["--workers", "1"]) == 0
    actual = iter(line.rstrip() for line in capsys.readouterr().out.splitlines())
    for line in (s for s in shown if s.strip() not in ("", "...", "…")):   # "..." elides lines
        assert any(a == line for a in actual), f"{doc}: {' '.join(argv)}: not printed: {line!r}"


def test_docs_show_commands():
    assert len(CHEAP_SHOWN) >= 8
    assert any(shown for _, _, shown in CHEAP_SHOWN)
    assert not _cheap(["verify", "--paper", "kl"]) and _cheap(["verify", "--help"])
    assert COSTLY_SHOWN          # the getting-started run, checked by the slow tests


@pytest.mark.parametrize("doc, argv, shown", CHEAP_SHOWN,
                         ids=[f"{d}:{' '.join(a)}" for d, a, _ in CHEAP_SHOWN])
def test_shown_command_prints_what_is_shown(doc, argv, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)                 # paths are printed relative to the checkout
    if "--help" in argv or "-h" in argv:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
    else:
        assert main(argv) == 0
    actual = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    # The shown lines appear in the output in order (a shortened listing leaves lines out).
    it = iter(actual)
    for line in (s for s in shown if s.strip()):
        assert any(a == line for a in it), f"{doc}: {' '.join(argv)}: not printed: {line!r}"


def test_generated_blocks_are_fresh():
    # in a fresh process: registries hold the project's entries only, not other tests' toys
    # (docs/papers/ is checked by tests/test_paper_pages.py)
    with_blocks = [_rel(d) for d in DOCS if "<!-- generated: " in d.read_text(encoding="utf-8")
                   and d.parent.name != "papers" and d.name != "results.md"]
    assert "docs/privacy.md" in with_blocks
    res = subprocess.run([sys.executable, "-m", "empirical.report.doc_tables", "--check", *with_blocks],
                         cwd=ROOT, capture_output=True, text=True, env=_env())
    assert res.returncode == 0, (res.stdout + res.stderr
                                 + "\nregenerate with python -m empirical.report.doc_tables")


def test_generated_blocks_can_go_stale():
    text = "<!-- generated: audit-counts -->\n0 audit targets\n<!-- end generated -->"
    assert doc_tables.stale_blocks(text) == ["audit-counts"]
    assert doc_tables.stale_blocks(doc_tables.refresh(text)) == []
    for bad in ("bounds", "audit-counts kl", "no-such-kind"):
        with pytest.raises(ValueError, match="block"):
            doc_tables.render(*bad.split())


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,), None
                yield from _walk(sub, path + (name,))
        else:
            for opt in action.option_strings:
                if opt not in ("-h", "--help"):
                    yield path, opt


def test_cli_doc_names_every_command_and_option():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for path, opt in _walk(_parser()):
        if opt is None:
            if f"dprates {' '.join(path)}" not in text:
                missing.append(" ".join(path))
        elif f"`{opt}" not in text:
            missing.append(f"{' '.join(path)} {opt}")
    assert not missing, f"docs/cli.md does not describe: {missing}"


def test_cli_doc_names_every_environment_variable():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    used = set()
    for f in list((ROOT / "empirical").glob("*.py")) + [ROOT / "tests" / "conftest.py"]:
        used |= set(re.findall(r"""environ(?:\.get)?\(\s*["'](DPRATES_\w+)""",
                               f.read_text(encoding="utf-8")))
    assert used and all(v in text for v in used), sorted(v for v in used if v not in text)


@pytest.mark.parametrize("doc", DOCS, ids=[_rel(d) for d in DOCS])
def test_relative_links_resolve(doc):
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target) or not re.search(r"[./]", target):
            continue                        # a URL, or not a path (a formula in brackets)
        assert (doc.parent / target).exists(), f"{_rel(doc)}: broken link {target}"


def test_getting_started_python_runs():
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    exec(code, {})


def test_readme_and_performance_are_short():
    for name, limit in (("README.md", 150), ("docs/performance.md", 150)):
        lines = len((ROOT / name).read_text(encoding="utf-8").splitlines())
        assert lines <= limit, f"{name}: {lines} lines > {limit}"


def test_documentation_is_short():
    # Everything a reader is given to read, the tables generated from the registries included
    # (they are the bulk of each paper's page); docs/results.md is the report's verdict table.
    # The errata have a limit of their own (tests/test_errata.py).
    docs = [d for d in DOCS if d.name != "results.md"] + [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    sizes = {_rel(d): len(d.read_bytes()) for d in docs}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
    assert total <= 250_000, (f"documentation is {total / 1000:.0f} KB without docs/results.md; "
                              f"largest: {largest}")


def test_results_headings_are_the_generators():
    """docs/results.md's paper headings are what the report writes now: the papers' citations,
    with nothing left over from a stripped file name."""
    from empirical.report.format import _paper_title
    from empirical.report.summary import _md

    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    heads = re.findall(r"^## (\w+): (.*)$", text, re.M)
    assert heads
    for key, head in heads:
        assert head == _md(_paper_title(key)), key
        assert not re.search(r"\(\s*[,;]|[,;]\s*\)", head), head
