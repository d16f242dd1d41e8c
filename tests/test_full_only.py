"""Full-grid-only experiments (``Experiment.full_only``): their quick grids cannot decide within
verify's budget, so ``verify`` and ``run`` without ``--full`` skip them and name them, counting
them neither verified nor failed; ``--full`` runs them; ``experiments`` marks them; the report
and the coverage table say "full grid only" instead of "not run".  The paper units' marks are
held to the list of full-grid verdicts in tests/_open_verdicts.py."""
import dataclasses

import pytest

import _toy
from _open_verdicts import FULL_ONLY, OPEN, open_full_cases
from empirical.cli import FULL_ONLY_MARK, main
from empirical.core import experiment as registry
from empirical.core.experiment import Experiment, register

_REASON = "quick grid (n = 1–32, 6 seeds): CI ±0.4 against tol 0.15; full grid decides"

TOY_FULL_ONLY = register(dataclasses.replace(_toy.TOY, id="toy.full_only",
                                             title="toy, full grid only", full_only=_REASON))


def test_a_full_only_experiment_needs_its_reason_with_numbers():
    for bad in ("   ", "the quick grid is too short"):
        with pytest.raises(ValueError, match="full_only needs its reason"):
            dataclasses.replace(_toy.TOY, id="toy.bad_reason", full_only=bad)
    with pytest.raises(ValueError, match="full_only needs its reason"):
        dataclasses.replace(_toy.TOY, id="toy.bad_reason").declare_full_only("")
    exp = dataclasses.replace(_toy.TOY, id="toy.marked")
    assert not exp.full_only and exp.runs_on(False) and exp.runs_on(True)
    assert exp.declare_full_only(_REASON) is exp
    assert exp.full_only == _REASON and not exp.runs_on(False) and exp.runs_on(True)
    assert registry.full_only_ids([_toy.TOY, exp]) == ["toy.marked"]


def test_verify_without_full_skips_it_and_says_so(tmp_path, capsys):
    args = ["--results", str(tmp_path), "--no-figures"]
    assert main(["verify", "--experiment", "toy.power_law", "--experiment", "toy.full_only",
                 *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "1/1 experiments verified" in out
    assert out[-1] == ("full grid only: 1 not run (toy.full_only) "
                       "(dprates verify --full --experiment ID)")
    assert not (tmp_path / "kl" / "toy.full_only").exists()
    # alone: nothing runs, nothing fails
    assert main(["run", "toy.full_only", *args]) == 0
    assert "full grid only: 1 not run (toy.full_only)" in capsys.readouterr().out
    assert not (tmp_path / "kl" / "toy.full_only").exists()


def test_verify_full_runs_it_as_usual(tmp_path, capsys):
    assert main(["verify", "--full", "--experiment", "toy.full_only", "--results", str(tmp_path),
                 "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "1/1 experiments verified" in out and "full grid only" not in out
    assert (tmp_path / "kl" / "toy.full_only").is_dir()


def test_experiments_lists_it_with_a_marker(capsys):
    assert main(["experiments", "kl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("toy.full_only") and line.endswith(FULL_ONLY_MARK)
               for line in lines)
    assert not any(line.startswith("toy.power_law ") and FULL_ONLY_MARK in line
                   for line in lines)


def test_report_and_coverage_say_full_grid_only(tmp_path, capsys):
    from empirical.core.coverage import _verdict
    from empirical.report.data import collect
    from empirical.report.summary import _md_not_run

    (st,) = collect(experiment_ids=["toy.full_only"], results=tmp_path)
    assert st.full_only_skipped and st.unrun_label == "FULL GRID ONLY"
    assert "full grid only" in _md_not_run(st) and "CI ±0.4" in _md_not_run(st)
    (full,) = collect(experiment_ids=["toy.full_only"], results=tmp_path, full=True)
    assert not full.full_only_skipped and full.unrun_label == "NOT RUN"
    assert main(["report", "--experiment", "toy.full_only", "--results", str(tmp_path),
                 "--out", str(tmp_path / "r")]) == 1
    assert "verify --full --experiment toy.full_only" in capsys.readouterr().err
    assert _verdict({}, TOY_FULL_ONLY, "kl:toy_power_law") == "full grid only"
    assert _verdict(None, TOY_FULL_ONLY, "kl:toy_power_law") == ""
    assert _verdict({}, _toy.TOY, "kl:toy_power_law") == ""


def test_the_report_page_shows_it_as_full_grid_only(tmp_path, capsys):
    args = ["--results", str(tmp_path), "--no-figures"]
    assert main(["verify", "--experiment", "toy.power_law", "--experiment", "toy.full_only",
                 *args]) == 0
    assert main(["report", "--experiment", "toy.power_law", "--experiment", "toy.full_only",
                 "--results", str(tmp_path), "--out", str(tmp_path / "r")]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert "FULL GRID ONLY" in page and "1 not run (1 full grid only)" in page
    assert "full grid only (`dprates verify --full --experiment toy.full_only`)" in (
        tmp_path / "r" / "results.md").read_text()


def test_calibration_of_a_full_only_band_reaches_the_full_grid():
    from empirical.run.calibration import calibrate

    with pytest.raises(ValueError, match="judged on its full grid only"):
        calibrate(TOY_FULL_ONLY, extend=False)
    (rec,) = calibrate(TOY_FULL_ONLY, seeds=3)
    assert max(TOY_FULL_ONLY.full_grid) in rec.extended_to


def _paper_full_only() -> dict[str, Experiment]:
    return {e.id: e for e in registry.experiments() if e.full_only
            and not e.id.startswith("toy.")}


def test_the_paper_units_marks_are_the_pinned_list():
    """Each mark has its full-grid verdicts pinned, and each pin its mark: the declarations'
    expected full-grid verdicts are the pinned ones; none is also an open quick-grid case."""
    marked = _paper_full_only()
    assert set(marked) == set(FULL_ONLY)
    for i, exp in marked.items():
        # a comparison experiment is judged by its contrasts, one verdict each
        expected = (tuple(c.expected_verdict for c in getattr(exp, "contrasts", ()))
                    or tuple(c.expected_verdict_for(True) for c in exp.checks))
        assert expected == FULL_ONLY[i], i
        assert i not in OPEN, i


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", open_full_cases(sorted(FULL_ONLY)))
def test_full_grid_verdicts_are_the_pinned_ones(tmp_path, exp_id):
    """Each full-grid-only experiment on its full grid (minutes each; `pytest -m slow`); one
    undecided on its full grid too (OPEN_FULL) is a strict xfail."""
    from empirical.core.checks import analyse
    from empirical.run.runner import sweep

    exp = registry.get(exp_id)
    a = analyse(exp, sweep(exp, full=True, results=tmp_path, workers=1))
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert tuple(r.verdict for r in a.results) == FULL_ONLY[exp_id], [r.message for r in a.results]
