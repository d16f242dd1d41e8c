"""Level bands calibrated on held-out seeds, as data (docs/methodology.md, "Level bands").

Where a theorem states no constant, a check's level band can only be a calibration: the ratio
observed/bound that honest runs of this code base give, widened for seed noise.  Such a band is a
regression guard (it pins the code's behaviour, not the theorem), and it must not be fitted on
the runs it judges: a band drawn around the judged seeds' own ratios passes them by
construction.  So a calibrated band comes from a :class:`Calibration` record:

* its runs draw from a seed stream disjoint from the judged one.  Judged repetition r of point
  p of experiment e draws from ``SeedSequence([h(e), h(p), r])``; a calibration repetition from
  ``SeedSequence([h(e), h(p), r], spawn_key=HELD_OUT_KEY)``.  The spawn key is a single word
  far above any child index an algorithm reaches by spawning from its judged generator (those
  are (0,), (1,), …), so no calibration stream is ever a judged one or one of its children;
* the band is :func:`band_from_ratios` of those runs: the range of the aggregated ratio over
  the calibration grid, extended to where its log-log trend reaches at the ends of the full
  grid, widened by e^m each way with m = max(log 1.5, 4·s) (s the largest standard error of a
  point's mean log metric over seeds);
* the record (band, the ratio range, m, seeds, spawn key, grid) is stored per paper as JSON
  (``empirical.store.calibration``) and recomputed by ``python -m empirical.run.calibration``;
  declarations read it by (experiment, bound, kind).

:meth:`Calibration.validate` refuses a record of the judged stream (a band fit on the seeds the
check uses) and one whose band is not the check's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

__all__ = ["HELD_OUT_KEY", "JUDGED_KEY", "Calibration", "band_from_ratios"]

#: Spawn key of the held-out calibration stream (a word no spawned child index reaches).
HELD_OUT_KEY: tuple[int, ...] = (0xCA11B8A7,)
#: Spawn key of the judged seeds (the runner's root sequences).
JUDGED_KEY: tuple[int, ...] = ()
#: Smallest widening of a calibrated band each way (a constant off by more than this fails).
MIN_WIDEN = math.log(1.5)
#: Standard errors of the seed mean of log metric a band is widened by.
SE_WIDEN = 4.0


@dataclass(frozen=True)
class Calibration:
    """A level band calibrated on held-out runs: what it is and where it comes from."""

    experiment: str
    bound: str
    kind: str
    band: tuple[float, float]
    observed: tuple[float, float]     # range of the aggregated ratio over the calibration grid
    widen: float                      # m: the band is the (extended) range times e^(±m)
    seeds: int                        # calibration repetitions per point
    spawn_key: tuple[int, ...]        # the stream those repetitions drew from
    grid: tuple[float, ...]           # calibration grid values (kept points)
    extended_to: tuple[float, ...] = ()   # grid ends the ratio's trend was extended to

    @property
    def key(self) -> tuple[str, str, str]:
        return self.experiment, self.bound, self.kind

    def describe(self) -> str:
        """The band's reason as a declaration states it."""
        ext = (", extended to its trend at the full grid's ends "
               + ", ".join(f"{v:g}" for v in self.extended_to) if self.extended_to else "")
        return (f"regression guard (calibrated on held-out seeds: {self.seeds} per point from "
                f"spawn key {list(self.spawn_key)}, disjoint from the judged seeds, over "
                f"{len(self.grid)} grid values): observed/bound in [{self.observed[0]:.3g}, "
                f"{self.observed[1]:.3g}]{ext}, widened by e^{self.widen:.2f} each way")

    def check_fields(self) -> dict:
        """The level-band fields of the check this record calibrates (``Check(..., **fields)``)."""
        return dict(level=self.band, level_source="calibration", level_reason=self.describe(),
                    calibration=self)

    def validate(self, *, bound: str, kind: str, level: tuple[float, float] | None,
                 experiment: str | None = None) -> None:
        """ValueError unless this record is a held-out calibration of exactly this band."""
        if tuple(self.spawn_key) == JUDGED_KEY or tuple(self.spawn_key) != HELD_OUT_KEY:
            raise ValueError(
                f"calibration of {self.key}: spawn key {list(self.spawn_key)} is not the held-out "
                f"stream {list(HELD_OUT_KEY)}; a band fit on the judged seeds is refused")
        if self.seeds < 2:
            raise ValueError(f"calibration of {self.key}: seeds must be >= 2, got {self.seeds}")
        if (bound, kind) != (self.bound, self.kind) or (
                experiment is not None and experiment != self.experiment):
            raise ValueError(f"calibration of {self.key} attached to ({experiment}, {bound}, "
                             f"{kind})")
        if level is None or tuple(level) != tuple(self.band):
            raise ValueError(f"calibration of {self.key}: level {level!r} is not its band "
                             f"{self.band!r}")

    def to_json(self) -> dict:
        return {"experiment": self.experiment, "bound": self.bound, "kind": self.kind,
                "band": list(self.band), "observed": list(self.observed), "widen": self.widen,
                "seeds": self.seeds, "spawn_key": list(self.spawn_key), "grid": list(self.grid),
                "extended_to": list(self.extended_to)}

    @classmethod
    def from_json(cls, d: Mapping) -> "Calibration":
        return cls(str(d["experiment"]), str(d["bound"]), str(d["kind"]),
                   (float(d["band"][0]), float(d["band"][1])),
                   (float(d["observed"][0]), float(d["observed"][1])), float(d["widen"]),
                   int(d["seeds"]), tuple(int(k) for k in d["spawn_key"]),
                   tuple(float(v) for v in d["grid"]),
                   tuple(float(v) for v in d.get("extended_to", ())))


def band_from_ratios(values: Sequence[float], metric: Sequence[np.ndarray],
                     bound: Sequence[float], *, aggregate: str = "gmean",
                     extend_to: Sequence[float] = ()) -> tuple[tuple[float, float],
                                                              tuple[float, float], float]:
    """(band, observed range, m) from per-seed metrics at grid ``values`` and the bound there.

    The aggregated ratio's range over the grid, extended to its least-squares log-log trend at
    ``extend_to`` (the full grid's ends), widened by e^m, m = max(log 1.5, 4·s)."""
    from empirical.core.fitting import _aggregate, ols_slope

    x = np.asarray(values, dtype=float)
    if x.size < 2 or len(metric) != x.size or len(bound) != x.size:
        raise ValueError(f"a calibration needs >= 2 grid values with metric and bound at each, "
                         f"got {x.size}")
    ys = [np.asarray(m, dtype=float) for m in metric]
    if any(y.size < 2 or not np.all(np.isfinite(y)) or np.any(y <= 0) for y in ys):
        raise ValueError("calibration metric must be positive and finite with >= 2 seeds per "
                         "point")
    ratio = np.array([_aggregate(y, aggregate) for y in ys]) / np.asarray(bound, dtype=float)
    q = (float(ratio.min()), float(ratio.max()))
    lo, hi = q
    if len(extend_to):
        slope, icpt = ols_slope(x, ratio)
        for v in extend_to:
            r = math.exp(icpt + slope * math.log(v))
            lo, hi = min(lo, r), max(hi, r)
    s = max(float(np.std(np.log(y), ddof=1) / math.sqrt(y.size)) for y in ys)
    m = max(MIN_WIDEN, SE_WIDEN * s)
    return (lo * math.exp(-m), hi * math.exp(m)), q, m
