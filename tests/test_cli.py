"""The dprates command."""
import subprocess
import sys

import pytest

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


def test_verify_one_experiment_prints_table_and_figure(tmp_path, capsys, results_root):
    code = main(["verify", "--experiment", "kl.thm9.rho", "--results", str(results_root),
                 "--figures", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "kl.thm9.rho" in out and "PASS" in out and "REJECTED" in out
    assert (tmp_path / "kl" / "kl.thm9.rho.png").stat().st_size > 10_000


@pytest.mark.parametrize("exp_id, code, verdict", [
    ("toy.power_law", 0, "PASS"), ("toy.wrong_rate", 1, "FAIL"), ("toy.finding", 0, "FINDING")])
def test_verify_exit_status(tmp_path, capsys, exp_id, code, verdict):
    import _toy  # noqa: F401  (registers the toy experiments)

    got = main(["verify", "--experiment", exp_id, "--results", str(tmp_path), "--no-figures"])
    out = capsys.readouterr().out
    assert got == code, out
    assert verdict in out


def test_console_script_entry_point():
    r = subprocess.run([sys.executable, "-m", "empirical.cli", "bounds", "list"],
                       capture_output=True, text=True, check=True)
    assert "kl:thm9" in r.stdout


def test_run_exits_nonzero_on_a_failed_check(tmp_path, capsys):
    import _toy  # noqa: F401

    got = main(["run", "toy.wrong_rate", "--results", str(tmp_path), "--no-figures"])
    assert got == 1, capsys.readouterr().out
