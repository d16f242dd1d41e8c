"""The dprates command."""
import subprocess
import sys

import pytest

from empirical.run import runner
from empirical.cli import main


def test_bounds_list_and_show(capsys):
    assert main(["bounds", "list", "kl"]) == 0
    out = capsys.readouterr().out
    assert "kl:thm9" in out
    assert main(["bounds", "show", "kl:thm9"]) == 0
    out = capsys.readouterr().out
    assert "exponent in n: -2" in out and "LaTeX" in out and "zCDP" in out


def test_unknown_bound_exits_2(capsys):
    assert main(["bounds", "show", "kl:thm99"]) == 2
    assert "closest" in capsys.readouterr().err


def test_experiments_listed(capsys):
    assert main(["experiments", "kl"]) == 0
    assert "kl.thm9.n" in capsys.readouterr().out


def test_experiments_validate_names_each_refused_declaration(capsys):
    import dataclasses

    import _toy
    from empirical.cli import _validate_all

    assert main(["experiments", "sosp", "--validate"]) == 0
    assert "every declaration matches its bounds" in capsys.readouterr().out
    # a declaration whose bound_values leave the bound's symbol out is refused on both grids
    broken = dataclasses.replace(_toy.TOY, id="toy.no_symbols", bound_values=lambda p: {})
    assert _validate_all([broken]) == 1
    captured = capsys.readouterr()
    assert "2 refused" in captured.out
    assert "toy.no_symbols (quick grid)" in captured.err and "(full grid)" in captured.err


def test_verify_one_experiment_prints_table_and_figure(tmp_path, capsys, results_root):
    code = main(["verify", "--experiment", "kl.thm9.rho", "--results", str(results_root),
                 "--figures", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "kl.thm9.rho" in out and "PASS" in out and "REJECTED" in out
    assert (tmp_path / "kl" / "kl.thm9.rho.png").stat().st_size > 10_000


@pytest.mark.parametrize("exp_id, code, verdict", [
    ("toy.power_law", 0, "PASS"), ("toy.wrong_rate", 1, "FAIL"),
    ("toy.finding", 0, "FINDING (slope)")])       # the table says what a finding is of
def test_verify_exit_status(tmp_path, capsys, exp_id, code, verdict):
    import _toy  # noqa: F401  (registers the toy experiments)

    got = main(["verify", "--experiment", exp_id, "--results", str(tmp_path), "--no-figures"])
    out = capsys.readouterr().out
    assert got == code, out
    assert verdict in out


def test_console_script_entry_point():
    # One paper: the entry point is what is tested here; loading all five papers' bounds in a
    # fresh interpreter cost 1.3 CPU-s more.
    r = subprocess.run([sys.executable, "-m", "empirical.cli", "bounds", "list", "kl"],
                       capture_output=True, text=True, check=True)
    assert "kl:thm9" in r.stdout


def test_run_exits_nonzero_on_a_failed_check(tmp_path, capsys):
    import _toy  # noqa: F401

    got = main(["run", "toy.wrong_rate", "--results", str(tmp_path), "--no-figures"])
    assert got == 1, capsys.readouterr().out


def _one_line_error(capsys, argv, *needles):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0 and err.startswith("dprates: error: "), err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("argv, needles", [
    (["run", "toy.power_law", "--workers", "0"], ["--workers", "[1, 1024]", "'0'"]),
    (["verify", "--workers", "two"], ["--workers", "'two'"]),
    (["verify", "--experiment", "kl.thm9.nn"], ["--experiment", "kl.thm9.n"]),
    (["verify", "--paper", "klx"], ["--paper", "did you mean 'kl'", "userlevel"]),
    (["experiments", "kll"], ["PAPER", "did you mean 'kl'"]),
    (["bounds", "show", "kl:thm99"], ["ID", "closest"]),
    (["run", "kl.thm9.nn"], ["EXPERIMENT", "kl.thm9.n"]),
    (["--module", "no_such_module_xyz", "experiments"], ["--module", "no_such_module_xyz"]),
    (["verify", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["frobnicate"], ["invalid choice", "verify"]),
])
def test_bad_arguments_are_one_line_errors_before_any_work(capsys, tmp_path, argv, needles):
    import _toy  # noqa: F401

    _toy.CALLS.clear()
    _one_line_error(capsys, argv + ["--results", str(tmp_path)] if argv[0] in ("run", "verify")
                    and "--bogus" not in argv else argv, *needles)
    assert not _toy.CALLS and not list(tmp_path.rglob("*.json"))


def test_paper_without_bounds_says_so(capsys, monkeypatch):
    from bounds import registry as core

    monkeypatch.setattr(core, "_PLUGINS", {**core._PLUGINS, "emptypaper": []})
    assert main(["bounds", "list", "emptypaper"]) == 1
    assert "no bounds registered for paper 'emptypaper'" in capsys.readouterr().err
    assert main(["experiments", "emptypaper"]) == 1
    assert "no experiments registered" in capsys.readouterr().err
    _one_line_error(capsys, ["verify", "--paper", "emptypaper"], "has no experiments")


def test_audit_subcommand_forwards_or_explains(capsys):
    import importlib.util

    if importlib.util.find_spec("empirical.privacy.audit") is not None:
        assert main(["audit", "--help"]) == 0
    else:
        assert main(["audit"]) == 2
        assert "empirical/privacy/audit.py" in capsys.readouterr().err


def test_verify_reports_fresh_cached_and_recomputed_points(tmp_path, capsys):
    import _toy  # noqa: F401

    args = ["verify", "--experiment", "toy.power_law", "--results", str(tmp_path), "--no-figures"]
    assert main(args) == 0
    assert "points: 6 fresh, 0 cached, 0 recomputed" in capsys.readouterr().out
    next(tmp_path.rglob("*.json")).write_text("{}")
    assert main(args) == 0
    out = capsys.readouterr()
    assert "points: 0 fresh, 5 cached, 1 recomputed" in out.out and "corrupt" in out.err


def test_unwritable_figures_directory_is_a_usage_error(tmp_path, capsys):
    import _toy  # noqa: F401

    blocker = tmp_path / "file"
    blocker.write_text("")
    _toy.CALLS.clear()
    err = _one_line_error(capsys, ["run", "toy.power_law", "--results", str(tmp_path / "r"),
                                   "--figures", str(blocker / "f")],
                          "argument --figures: figures directory", "not writable")
    assert not _toy.CALLS and str(blocker) in err
    _one_line_error(capsys, ["figures", "--figures", str(blocker / "f")], "argument --figures")


def test_report_command_is_wired(tmp_path, capsys):
    import _toy  # noqa: F401

    assert main(["run", "toy.power_law", "--results", str(tmp_path), "--no-figures"]) == 0
    code = main(["report", "--experiment", "toy.power_law", "--results", str(tmp_path),
                 "--out", str(tmp_path / "rep"), "--markdown", str(tmp_path / "r.md")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "rep" / "index.html").stat().st_size > 1000
    assert "toy.power_law" in (tmp_path / "r.md").read_text()


def test_notebook_reprs():
    import bounds
    from empirical.core import experiment as registry
    from empirical.core.checks import analyse
    import _toy

    assert bounds.get("kl:thm9")._repr_latex_().startswith("$")
    rows = [{"experiment": "toy.power_law", "seed": r, "p_n": v, "metric": v ** -1.5}
            for v in _toy.TOY.quick_grid for r in range(_toy.TOY.seeds)]
    html = analyse(registry.get("toy.power_law"), rows)._repr_html_()
    assert "<table" in html and "toy.power_law" in html


def test_verify_shows_progress_and_reuses_cached_analyses(tmp_path, capsys):
    import _toy  # noqa: F401

    args = ["verify", "--experiment", "toy.power_law", "--experiment", "toy.wrong_rate",
            "--results", str(tmp_path), "--no-figures"]
    assert main(args) == 1
    out = capsys.readouterr()
    # Not a TTY (captured): plain progress lines, across both experiments, ending complete.
    assert "\r" not in out.err
    assert "points 12/12 (100%)" in out.err.splitlines()[-1]
    assert "analyses: 2 fitted, 0 read from the cache" in out.out
    assert main(args) == 1
    again = capsys.readouterr()
    assert "analyses: 0 fitted, 2 read from the cache" in again.out
    assert again.out.split("points:")[0] == out.out.split("points:")[0], "same verdict table"
    assert "12 cached" in again.err


def test_workers_default_to_the_cores():
    from empirical.cli import _parser

    assert _parser().parse_args(["verify"]).workers is None      # -> scheduling.default_workers
    assert _parser().parse_args(["run", "x", "--workers", "3"]).workers == 3


def test_bounds_compare_and_derive_are_wired(capsys):
    pytest.importorskip("empirical.cli.bounds_command")
    assert main(["bounds", "compare", "kl:thm5_best", "kl:thm5_worst"]) == 0
    out = capsys.readouterr().out
    assert "kl:thm5_best" in out and "crossover" in out
    assert main(["bounds", "derive", "kl:cor1"]) == 0
    assert "kl:cor1 from kl:thm1" in capsys.readouterr().out
    _one_line_error(capsys, ["bounds", "derive", "kl:thm99"], "kl:thm9")
    assert main(["bounds", "list", "kl"]) == 0 and "kl:thm9" in capsys.readouterr().out


def test_a_missing_optional_extra_is_a_note_not_a_failure(monkeypatch, capsys):
    """A paper whose optional extra is absent (the real-data experiments without scikit-learn)
    is skipped with a note; a paper whose module is broken is still a failure."""
    import bounds.registry as core
    from empirical import cli

    monkeypatch.setattr(core, "LOAD_ERRORS", {}, raising=True)
    monkeypatch.setattr(cli, "LOAD_ERRORS", core.LOAD_ERRORS)
    core.LOAD_ERRORS[("real", "empirical")] = (
        f"{core.OptionalExtraMissing.__name__}: needs scikit-learn: pip install -e \".[real]\"")
    assert cli._load_failures() == []
    assert "note: paper 'real' skipped: needs scikit-learn" in capsys.readouterr().err
    core.LOAD_ERRORS[("broken", "empirical")] = "SyntaxError: invalid syntax"
    assert cli._load_failures() == [
        "paper 'broken': empirical/ module failed to import (SyntaxError: invalid syntax); skipped"]


def test_verify_draws_summaries_as_analyses_arrive_and_hands_figures_to_the_report(
        tmp_path, capsys, monkeypatch):
    """`verify` draws a summary figure as soon as all its experiments are analysed (not after
    the last point of the run), and leaves every figure it drew in the report's figure cache:
    a report built on the same results then draws nothing (empirical/cli/__init__.py::_Drawer)."""
    from pathlib import Path

    import _toy  # noqa: F401
    from empirical.core import experiment as registry
    from empirical.store import figures
    from empirical.report import data as report_data
    from empirical.core.experiment import Summary

    drawn, report_time = [], []

    def plot(analyses, root):
        assert not report_time, "the report redrew a summary verify drew"
        drawn.append([a.experiment.id for a in analyses])
        path = Path(root) / "kl" / "toy.summary.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"summary of " + analyses[0].experiment.id.encode())
        return path

    summary = Summary("toy.summary", "kl", ("toy.power_law",), plot)
    real_summaries = registry.summaries
    monkeypatch.setattr(registry, "summaries",
                        lambda paper=None: real_summaries(paper) + [summary])
    order = []
    import empirical.run.scheduling as scheduling
    real_sweep = scheduling.sweep_all

    def sweep_all(*a, on_analysis=None, **k):
        def seen(o):
            order.append(o.experiment.id)
            on_analysis(o)
            order.append(f"after {o.experiment.id}: {len(drawn)} summaries")
        return real_sweep(*a, on_analysis=seen, **k)

    monkeypatch.setattr(scheduling, "sweep_all", sweep_all)
    res, fig = tmp_path / "res", tmp_path / "fig"
    assert main(["verify", "--experiment", "toy.power_law",
                 "--results", str(res), "--figures", str(fig), "--workers", "1"]) == 0, \
        capsys.readouterr().out
    assert drawn == [["toy.power_law"]]
    assert "after toy.power_law: 1 summaries" in order      # drawn from the callback itself
    png = (fig / "kl" / "toy.power_law.png").read_bytes()
    states = report_data.collect("kl", results=res, experiment_ids=["toy.power_law"])

    def no_drawing(*a, **k):
        raise AssertionError("the report redrew a figure verify drew")

    monkeypatch.setattr(figures, "plot_analysis", no_drawing)
    report_time.append(True)
    summaries = report_data._draw_figures(states, results=res)
    assert states[0].figure == png and not states[0].figure_error
    assert summaries["toy.summary"] == b"summary of toy.power_law"


def test_verify_figures_are_drawn_by_the_workers_and_read_back_when_cached(
        tmp_path, capsys, monkeypatch):
    """With a pool, each experiment's figure is drawn by the worker that analysed it, not by
    the parent (at the end of a run the parent drawing every figure alone was verify's tail);
    the bytes are those the figure of a fresh analysis of the stored rows has; a repeated
    verify (analyses cached) draws nothing and leaves the PNG as it was."""
    import os

    import _toy  # noqa: F401
    from empirical.core import experiment as registry
    from empirical.store import figures
    from empirical.core.checks import analyse

    calls = tmp_path / "render-calls"
    real = figures.render_analysis

    def render(a):
        with open(calls, "a") as f:     # forked workers inherit the patch: log to a file
            f.write(f"{os.getpid()}\n")
        return real(a)

    monkeypatch.setattr(figures, "render_analysis", render)
    res, fig = tmp_path / "res", tmp_path / "fig"
    args = ["verify", "--experiment", "toy.power_law", "--results", str(res),
            "--figures", str(fig), "--workers", "2"]
    assert main(args) == 0, capsys.readouterr().out
    pids = calls.read_text().split()
    assert pids and str(os.getpid()) not in pids, pids
    png = (fig / "kl" / "toy.power_law.png").read_bytes()
    exp = registry.get("toy.power_law")
    rows, _ = runner.load_rows(exp, results=res)
    assert png == real(analyse(exp, rows))
    calls.unlink()
    assert main(args) == 0, capsys.readouterr().out
    assert not calls.exists(), "a cached analysis's figure was drawn again"
    assert (fig / "kl" / "toy.power_law.png").read_bytes() == png
    (fig / "kl" / "toy.power_law.png").unlink()
    assert main(["figures", "--paper", "kl", "--results", str(res), "--figures", str(fig)]) == 0
    assert not calls.exists(), "dprates figures redrew a figure verify drew"
    assert (fig / "kl" / "toy.power_law.png").read_bytes() == png


def test_figure_png_skips_the_redundant_draw_and_keeps_the_bytes(tmp_path):
    """figure_png drops the placeholder layout engine tight_layout leaves behind (with it,
    savefig draws the figure twice); the PNG is byte for byte what savefig writes with it."""
    import io

    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    from empirical.store import figures

    def drawn():
        with figures.figure_style():
            f, ax = plt.subplots(figsize=(4, 3))
            ax.loglog([1, 10, 100], [3, 2, 1], label="a line")
            ax.set_title("title\nsecond line")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
            f.tight_layout()
            return f

    f = drawn()
    assert isinstance(f.get_layout_engine(), PlaceHolderLayoutEngine)
    with figures.figure_style():
        buf = io.BytesIO()
        f.savefig(buf, format="png", metadata={"Software": None})
        plt.close(f)
        assert figures.figure_png(drawn()) == buf.getvalue()
