"""The project's files speak of the software only: no words of how it was developed and no
references to text its users do not have.  Every tracked text file is searched (code, tests,
docs, README), each pattern with the reason it is banned."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

#: (pattern, why).  Case-insensitive unless the pattern sets its own flags.
BANNED: list[tuple[str, str]] = [
    (r"\bsessions?\b", "development sessions"),
    (r"\bhelpers?\b", "development helpers"),
    (r"\blead's\b|\b(?:the|a|by) lead\b(?!ing| term| coefficient| factor| order| constant)",
     "the lead as a role"),
    (r"\bissues?\s*#?\d+", "issue numbers"),
    (r"(?-i:\bTODO\b|\bFIXME\b|\bXXX\b)|\bto-?do list", "to-do lists"),
    (r"drafts/", "draft files outside the project"),
    (r"\bnotes'? (?:E\d|§)|\bthe notes\b|\bnotes,? pitfall|\(notes[,)]|shared/(?:papers|notes)"
     r"|\b(?:kan_correlated_noise|kl_condition_zcdp|linreg_adaptive_clipping"
     r"|sosp_private_nonconvex|user_level_sco)\.txt\b",
     "the reading notes and paper files users do not have"),
    (r"\bidle runs?\b|\bother developers\b|\b\d+ developers\b",
     "the load of the development machine"),
]

#: Idioms that contain a banned word but speak of the software: pytest's session scope and
#: hooks.
ALLOWED = re.compile(r"""scope=["']session["']|pytest_session\w*|\bsession\.(?:config|items)\b|"""
                     r"""\(session,|def \w+\(session\b""")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    files = [ROOT / p for p in out.stdout.decode().split("\0") if p]
    return [f for f in files if f.is_file() and f.suffix in
            {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ""}
            and f.name != Path(__file__).name]


def _hits(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        line = ALLOWED.sub("", line)
        for pattern, why in BANNED:
            m = re.search(pattern, line, flags=re.I)
            if m:
                out.append(f"{path.relative_to(ROOT)}:{no}: {m.group(0)!r} ({why})")
    return out


FILES = _tracked()


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROOT)) for f in FILES])
def test_no_development_process_words(path):
    hits = _hits(path)
    assert not hits, "\n".join(hits)


def test_the_search_covers_code_tests_and_docs():
    names = {str(f.relative_to(ROOT)) for f in FILES}
    assert {"README.md", "empirical/cli/__init__.py", "bounds/core.py", "tests/conftest.py"} <= names
    assert any(n.startswith("docs/") for n in names)


@pytest.mark.parametrize("text", [
    "as measured in session 6", "the lead's full-grid run", "see issue 14", "(issue #3)",
    "# TODO: refit", "docs/drafts/x.md", "notes E12", "(notes, pitfall 11)",
    "(``user_level_sco.txt``)", "the notes' §3.6",
    "in six idle runs", "2 cores shared by 8 developers"])
def test_each_pattern_can_fail(text, tmp_path):
    f = tmp_path / "x.md"
    f.write_text(text)
    assert any(re.search(p, ALLOWED.sub("", text), flags=re.I) for p, _ in BANNED), text


@pytest.mark.parametrize("text", [
    '@pytest.fixture(scope="session")', "lead = shape[:-2]", "the lead term of the bound",
    "todo = [module]", "a misleading slope"])
def test_ordinary_code_passes(text):
    assert not any(re.search(p, ALLOWED.sub("", text), flags=re.I) for p, _ in BANNED), text
