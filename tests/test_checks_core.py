"""The verifier's own power: level bands and the privacy verdict fail when they should."""
import numpy as np
import pytest

from bounds import core as bounds_core
from empirical.core import experiment as registry
from empirical.core.checks import analyse, check_privacy
from empirical.core.experiment import Check, Experiment

import _toy  # noqa: F401  (registers the toy experiments)
import _toy as _toy_mod


def _rows(exp, *, scale=1.0, privacy=None):
    """Synthetic rows following the toy law c·n^{-3/2} exactly, times ``scale``."""
    rows = []
    rng = np.random.default_rng(1)
    for v in exp.quick_grid:
        for r in range(exp.seeds):
            row = {"experiment": exp.id, "seed": r, f"p_{exp.variable}": v,
                   exp.metric: scale * v ** -1.5 * np.exp(0.01 * rng.standard_normal())}
            if privacy is not None:
                row.update(privacy(v, r))
            rows.append(row)
    return rows


def _toy(**kw):
    base = dict(id="toy.level", paper="kl", title="level", variable="n",
                quick_grid=(1.0, 2.0, 4.0, 8.0), full_grid=(1.0, 2.0, 4.0, 8.0), fixed={},
                seeds=4, run=lambda p, g: {}, metric="m", bound_values=lambda p: {"n": p["n"]},
                checks=(Check("kl:toy_power_law", "two-sided", 0.1, "toy",
                              level=(0.5, 2.0), level_source="theorem",
                              level_reason="toy: the law's constant is 1"),),
                private=False)
    base.update(kw)
    return Experiment(**base)


def test_level_band_catches_a_constant_that_the_slope_cannot_see():
    exp = _toy()
    ok = analyse(exp, _rows(exp))
    assert ok.results[0].verdict == "PASS" and ok.ok
    off = analyse(exp, _rows(exp, scale=3.0))           # right slope, constant 3x too large
    assert off.results[0].verdict == "FAIL"
    assert "OUTSIDE" in off.results[0].message
    assert off.results[0].level_range[0] == pytest.approx(3.0, rel=0.05)


def test_level_band_is_validated():
    with pytest.raises(ValueError, match="level"):
        Check("kl:toy_power_law", "two-sided", 0.1, "r", level=(2.0, 1.0), level_reason="x")
    with pytest.raises(ValueError, match="reason"):
        Check("kl:toy_power_law", "two-sided", 0.1, "r", level=(0.5, 2.0))
    with pytest.raises(ValueError, match="reject"):
        Check("kl:toy_power_law", "reject", 0.1, "r", level=(0.5, 2.0), level_reason="x")


def _priv(target, guarantee, spent):
    return lambda v, r: {"rho_target": target, "rho_guarantee": guarantee, "rho_spent": spent}


def test_privacy_verdict_passes_honest_rows_and_fails_every_violation():
    exp = _toy(private=True)
    summary, err = check_privacy(exp, _rows(exp, privacy=_priv(0.1, 0.1, 0.095)))
    assert not err and "rho" in summary
    # a run that spends more than it guarantees (noise too small for an adaptive stop)
    _, err = check_privacy(exp, _rows(exp, privacy=_priv(0.1, 0.1, 0.9)))
    assert "spent" in err
    # a run certified at the wrong budget
    _, err = check_privacy(exp, _rows(exp, privacy=_priv(0.1, 0.9, 0.9)))
    assert "guarantee" in err
    # a private experiment that stores no privacy at all
    _, err = check_privacy(exp, _rows(exp))
    assert "no privacy columns" in err
    a = analyse(exp, _rows(exp, privacy=_priv(0.1, 0.1, 0.9)))
    assert a.results[0].verdict == "PASS" and not a.ok   # slopes fine, privacy fails


def test_paper_modules_load_lazily_and_in_isolation():
    # this project's papers are declared as entry points (pyproject.toml), the way plugins are
    assert {"kan", "linreg", "sosp", "kl", "userlevel", "real"} <= set(bounds_core.papers())
    assert all(e.paper == "kl" for e in registry.experiments("kl"))
    with pytest.raises(ValueError, match="paper"):
        registry.ids("nope")


# --- verdicts are regressions ------------------------------------------------------
def test_a_finding_that_no_longer_reproduces_fails_verify():
    """A check recorded as a finding that now passes is NOT REPRODUCED, and fails verify."""
    exp = _toy(checks=(Check("kl:toy_power_law", "two-sided", 0.1, "toy", expect="finding"),))
    a = analyse(exp, _rows(exp))                       # data follow the 'finding' bound exactly
    assert a.results[0].verdict == "NOT REPRODUCED" and not a.results[0].ok and not a.ok
    wrong = _toy(checks=(Check("kl:toy_wrong_rate", "two-sided", 0.1, "toy", expect="finding"),))
    b = analyse(wrong, _rows(wrong))                   # the finding still reproduces
    assert b.results[0].verdict == "FINDING" and b.ok


def test_verify_cli_fails_on_a_stale_finding(tmp_path, capsys):
    """`dprates verify` exits 1 when a recorded finding passes (test_cli's toy.finding is a
    reproduced finding and keeps exit 0)."""
    from empirical.cli import main

    stale = registry.register(Experiment(
        id="toy.stale_finding", paper="kl", title="toy, stale finding", variable="n",
        quick_grid=_toy_mod.TOY.quick_grid, full_grid=_toy_mod.TOY.full_grid,
        fixed=_toy_mod.TOY.fixed, seeds=6, run=_toy_mod.run_power_law, metric="metric",
        bound_values=lambda p: {"n": p["n"]},
        checks=(Check("kl:toy_power_law", "two-sided", 0.15, "toy", expect="finding"),),
        private=False))
    got = main(["verify", "--experiment", stale.id, "--results", str(tmp_path), "--no-figures"])
    out = capsys.readouterr().out
    assert got == 1 and "NOT REPRODUCED" in out


def test_competitor_must_be_ruled_out_at_its_asymptotic_exponent_too():
    """Data with slope −1.5; a competitor whose local slope over the grid is far (−1.0) but whose
    asymptotic exponent is −1.5 is NOT REJECTED."""
    import sympy as sp

    import bounds

    n = bounds.sym("n")
    # n^{-3/2}·(1 + 30/n)^{...}: local slope over n ∈ [1, 8] is much flatter than −1.5
    bounds.register(bounds.Bound(id="kl:toy_bent", expr=n ** sp.Rational(-3, 2) * (1 + 30 / n) ** 2,
                                 quantity="toy metric", source="tests/test_checks_core.py"))
    exp = _toy(checks=(Check("kl:toy_power_law", "two-sided", 0.1, "toy"),
                       Check("kl:toy_bent", "reject", 0.1, "toy competitor")))
    a = analyse(exp, _rows(exp))
    r = a.results[1]
    assert abs(r.local - (-1.5)) > 0.3 and r.asymptotic == pytest.approx(-1.5)
    assert r.verdict == "NOT REJECTED" and "asymptotic" in r.message and not a.ok
    far = _toy(checks=(Check("kl:toy_power_law", "two-sided", 0.1, "toy"),
                       Check("kl:toy_wrong_rate", "reject", 0.1, "toy competitor")))
    assert analyse(far, _rows(far)).results[1].verdict == "REJECTED"


def test_privacy_verdict_checks_delta_where_rows_state_it():
    exp = _toy(private=True)
    ok = lambda v, r: {"epsilon_target": 1.0, "epsilon_guarantee": 1.0, "epsilon_spent": 1.0,  # noqa: E731
                       "delta_target": 1e-5, "delta_guarantee": 1e-5}
    bad = lambda v, r: {**ok(v, r), "delta_guarantee": 1e-3}  # noqa: E731
    assert not check_privacy(exp, _rows(exp, privacy=ok))[1]
    assert "delta" in check_privacy(exp, _rows(exp, privacy=bad))[1]


def test_expected_verdict_of_each_kind():
    assert Check("kl:toy_power_law", "reject", 0.1, "r").expected_verdict == "REJECTED"
    assert Check("kl:toy_power_law", "two-sided", 0.1, "r").expected_verdict == "PASS"
    assert Check("kl:toy_power_law", "one-sided", 0.1, "r",
                 expect="finding").expected_verdict == "FINDING"
