"""Level bands calibrated on held-out seeds (empirical/core/calibration.py,
empirical/run/calibration.py, empirical/store/calibration.py): the calibration stream is
disjoint from the judged seeds, reproducible from the seed, stored as data, refused when it is
the judged stream, and labelled a regression guard beside the verdict."""
import dataclasses

import numpy as np
import pytest

from empirical.core.calibration import HELD_OUT_KEY, JUDGED_KEY, Calibration, band_from_ratios
from empirical.core.checks import analyse
from empirical.run.calibration import calibrate, held_out_generators
from empirical.run.runner import seed_generators
from empirical.store.calibration import read_calibrations, write_calibrations

import _toy


def _draws(gens):
    return [tuple(g.integers(0, 2**62, size=3)) for g in gens]


def test_held_out_streams_are_disjoint_from_the_judged_seeds_and_their_children():
    point = _toy.TOY.point(4.0)
    judged = seed_generators(_toy.TOY.id, point, 32)
    children = [c for g in seed_generators(_toy.TOY.id, point, 32) for c in g.spawn(4)]
    held = _draws(held_out_generators(_toy.TOY.id, point, 32))
    assert not set(held) & (set(_draws(judged)) | set(_draws(children)))
    assert held == _draws(held_out_generators(_toy.TOY.id, point, 32))   # from the seed alone


def test_calibration_is_reproducible_and_brackets_the_held_out_ratio():
    first = calibrate(_toy.TOY)
    assert first == calibrate(_toy.TOY)
    (rec,) = first
    assert rec.spawn_key == HELD_OUT_KEY and rec.seeds == _toy.TOY.seeds
    lo, hi = rec.band
    assert lo < rec.observed[0] <= rec.observed[1] < hi
    assert 1.0 < rec.observed[0] and rec.observed[1] < 9.0     # c = 3 under 0.3 log-noise
    # extended to the full grid's far end (1000), where the flat trend stays near 3
    assert rec.extended_to == (1000.0,) and rec.widen >= np.log(1.5)
    # the band the judged runs are then checked against: a held-out regression guard
    check = dataclasses.replace(_toy.TOY.checks[0], level=rec.band, level_source="calibration",
                                level_reason=rec.describe(), calibration=rec)
    exp = dataclasses.replace(_toy.TOY, checks=(check,))
    rng = np.random.default_rng(5)
    rows = [{"seed": s, "p_n": v, "metric": 3.0 * v ** -1.5 * np.exp(0.3 * rng.standard_normal())}
            for v in exp.quick_grid for s in range(exp.seeds)]
    r = analyse(exp, rows).results[0]
    assert "REGRESSION GUARD" in r.labels and "held-out seeds" in r.sources
    assert r.verdict == "PASS"
    assert "regression guard (calibrated on held-out seeds" in rec.describe()


def test_a_band_fit_on_the_judged_seeds_is_refused():
    (rec,) = calibrate(_toy.TOY, seeds=3)
    judged = dataclasses.replace(rec, spawn_key=JUDGED_KEY)
    base = _toy.TOY.checks[0]
    with pytest.raises(ValueError, match="judged seeds is refused"):
        dataclasses.replace(base, level=judged.band, level_source="calibration",
                            level_reason="toy", calibration=judged)
    with pytest.raises(ValueError, match="judged seeds is refused"):
        write_calibrations("/nonexistent/never-written.json", [judged])
    with pytest.raises(ValueError, match="is not its band"):
        dataclasses.replace(base, level=(0.1, 100.0), level_source="calibration",
                            level_reason="toy", calibration=rec)
    with pytest.raises(ValueError, match="level_source='calibration'"):
        dataclasses.replace(base, level=rec.band, level_source="theorem", level_reason="toy",
                            calibration=rec)
    check = dataclasses.replace(base, level=rec.band, level_source="calibration",
                                level_reason="toy", calibration=rec)
    with pytest.raises(ValueError, match="another experiment's calibration"):
        dataclasses.replace(_toy.TOY_WRONG, checks=(dataclasses.replace(
            check, bound="kl:toy_power_law"),))


def test_records_round_trip_through_the_data_file(tmp_path):
    (rec,) = calibrate(_toy.TOY, seeds=3)
    path = tmp_path / "calibration.json"
    write_calibrations(path, [rec])
    assert read_calibrations(path) == {rec.key: rec}
    other = dataclasses.replace(rec, bound="kl:toy_wrong_rate")
    write_calibrations(path, [other])                           # merged, not replaced
    assert set(read_calibrations(path)) == {rec.key, other.key}
    assert not list(tmp_path.glob(".tmp-*"))                    # atomic: no temporary left
    assert read_calibrations(tmp_path / "absent.json") == {}


def test_band_from_ratios_widens_by_the_seed_error():
    x = (1.0, 2.0, 4.0)
    tight = [np.full(4, 2.0) * (1 + 1e-3 * np.arange(4)) for _ in x]
    band, q, m = band_from_ratios(x, tight, [1.0, 1.0, 1.0])
    assert m == pytest.approx(np.log(1.5)) and band[0] == pytest.approx(q[0] / 1.5)
    noisy = [2.0 * np.exp(np.array([-1.0, 1.0, -1.0, 1.0])) for _ in x]
    assert band_from_ratios(x, noisy, [1.0] * 3)[2] == pytest.approx(4.0 * 2 / np.sqrt(3) / 2)
    with pytest.raises(ValueError, match="positive and finite"):
        band_from_ratios(x, [np.array([1.0, -1.0])] * 3, [1.0] * 3)


def test_a_band_read_from_data_changes_the_analysis_fingerprint():
    """A band from calibration.json is in no module's source: the cached analysis must still
    be refitted when it changes."""
    from empirical.store import analysis_cache

    banded = dataclasses.replace(_toy.TOY, checks=(dataclasses.replace(
        _toy.TOY.checks[0], level=(1.0, 9.0), level_source="calibration", level_reason="toy"),))
    assert (analysis_cache.analysis_fingerprint(banded)
            != analysis_cache.analysis_fingerprint(_toy.TOY))
