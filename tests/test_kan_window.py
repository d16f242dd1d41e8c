"""KAN paper, Theorem 4.1's width window: the in-window experiment's grid is inside both ends of
the window and F.12's conditions at every point, its control is outside the upper end at every
point, and the upper-end ratio matches the printed formula."""
from __future__ import annotations

import math

import pytest

import empirical.papers.kan  # noqa: F401  (registers the experiments)
from algorithms import privacy_pairs as pairs
from algorithms.kan.privacy import f12_conditions
from empirical.core.experiment import get
from empirical.papers.kan import window
from empirical.papers.kan.problems import _instance, width_hi_ratio


def _points(eid: str) -> list[dict]:
    exp = get(eid)
    return [exp.point(v) for v in exp.full_grid]


def test_window_grid_is_inside_both_ends_and_f12():
    for point in _points("kan.window.n"):
        inst = _instance(point)
        assert inst.model.m * inst.gamma0 ** 4 >= 1.0           # m ≥ m_lo = γ⁻⁴
        vals = window._values(point)
        assert width_hi_ratio(vals) <= 1.0                      # m ≤ m_hi
        assert f12_conditions(vals["T"], vals["B"], vals["n"], vals["epsilon"],
                              vals["delta"]) is None


def test_control_is_outside_the_upper_end_with_the_same_schedule():
    for inside, outside in zip(_points("kan.window.n"), _points("kan.window.n.outside")):
        a, b = window._values(inside), window._values(outside)
        assert (a["T"], a["B"], a["eta"], a["delta"]) == (b["T"], b["B"], b["eta"], b["delta"])
        assert b["noise_multiplier"] == pytest.approx(10 * a["noise_multiplier"])
        assert width_hi_ratio(b) > 1.0


def test_width_hi_ratio_is_the_printed_window():
    vals = {"B": 500, "eta": 0.25, "noise_multiplier": 40.0, "gamma": 0.5, "d": 2, "T": 60,
            "lam": 0.5, "m": 16}
    q = 0.5 ** 2 + 0.5 ** 2 * 0.25
    m_hi = 500 ** 2 / (0.25 ** 2 * 40.0 ** 2 * 0.5 ** 2 * 2) * min(1.0, 1.0 / (60 * q))
    assert width_hi_ratio(vals) == pytest.approx(16 / m_hi, rel=1e-12)
    kappa = pairs.kappa_thm_f12(0.5, 60, 500, 1000, 1.0, 1e-4)
    assert math.isfinite(width_hi_ratio({**vals, "noise_multiplier": kappa}))


@pytest.mark.parametrize("lam, kappa", [(0.0, 5.0), (0.5, 0.0)])
def test_width_hi_ratio_refuses_runs_without_an_upper_end(lam, kappa):
    vals = {"B": 100, "eta": 1.0, "noise_multiplier": kappa, "gamma": 0.5, "d": 2, "T": 10,
            "lam": lam, "m": 16}
    with pytest.raises(ValueError, match="lam in \\(0, 1\\)"):
        width_hi_ratio(vals)
