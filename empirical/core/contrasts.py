"""Contrast checks: claims about levels at grid points, not slopes (the real-data experiments).

A :class:`Contrast` states that one measured column beats another, judged on paired per-seed
gains with the same three outcomes as a slope (:mod:`empirical.core.results`); a
:class:`ComparisonExperiment` is an experiment judged by its contrasts
(:func:`analyse_contrasts`; :func:`empirical.core.checks.analyse` dispatches to it).
"""
from __future__ import annotations

import dataclasses  # noqa: F401
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from empirical.core.experiment import Check, Experiment  # noqa: F401
from empirical.core.results import (CONTRAST_KINDS, FINDING_LEVEL, INCONCLUSIVE, INFO,  # noqa: F401
                                    NOT_REPRODUCED, OK_VERDICTS, Analysis, CheckResult)
from empirical.core.rowchecks import _with_noise, check_privacy, check_settings

@dataclass(frozen=True)
class Contrast:
    """A claim that one measured column beats another, judged with seed-to-seed confidence.

    API (the columns are keys of the run's per-seed rows; ``hi`` and ``lo`` of one row come from
    the same seed, so the runs may share batches and noise: a *paired* comparison)::

        Contrast(name="acc(λ*) > acc(0)", kind="greater", hi=("acc_l25", "acc_l50"), lo="acc_l0",
                 reason="...", at=(1.0, 2.0), sign=+1, log=False, margin=0.0, expect="hold")

    Per seed s the gain is D_s = sign·(hi_s − lo_s) (``log=True``: sign·(log hi_s − log lo_s),
    for errors spanning decades; ``sign=-1`` when smaller is better).

    kind
        ``greater`` (one-sided: the claim is "better"; a larger gain only strengthens it): at
        every grid value in ``at`` (all when None) the lower end of the 95% Student-t interval
        of the mean of D over seeds must exceed ``margin``.
        ``increasing`` (one-sided: "the gain grows along the grid"): mean D at the largest value
        of ``at`` minus mean D at the smallest must have the lower end of its 95% Welch interval
        above ``margin`` (seeds of different grid points are independent draws).
        ``report``: no claim; D and its interval at every point are printed (verdict INFO).
    hi
        A column, or a tuple of candidate columns (e.g. every moderate λ): then at each point the
        candidate with the best mean gain on the *even* seeds is chosen and D is judged on the
        *odd* seeds only, so choosing the best λ cannot manufacture a gain from seed noise.
    reason
        Why the claim is stated this way and why a 95% interval is the right yardstick.
    expect
        ``hold`` (FAIL when not met, fails ``verify``) or ``finding`` (a claim that careful runs
        contradict: FINDING when not met, NOT REPRODUCED when met, as for :class:`Check`).

    Use it through :class:`ComparisonExperiment` (an :class:`Experiment` whose judgement is its
    contrasts; ``analyse`` dispatches on the type).  Results are :class:`ContrastResult` rows in
    the same table as the slope checks: ``bound`` shows the name, ``observed`` the worst
    point's gain with its interval, ``tolerance`` the margin.
    """

    name: str
    kind: str
    hi: str | tuple[str, ...]
    lo: str
    reason: str
    at: tuple[float, ...] | None = None
    sign: int = 1
    log: bool = False
    margin: float = 0.0
    expect: str = "hold"

    def __post_init__(self) -> None:
        if self.kind not in CONTRAST_KINDS:
            raise ValueError(f"kind must be one of {CONTRAST_KINDS}, got {self.kind!r}")
        if self.sign not in (1, -1):
            raise ValueError(f"sign must be +1 or -1, got {self.sign!r}")
        if self.expect not in ("hold", "finding"):
            raise ValueError(f"expect must be 'hold' or 'finding', got {self.expect!r}")
        if not self.reason.strip():
            raise ValueError("every contrast must state its reason")
        if not (isinstance(self.margin, (int, float)) and math.isfinite(self.margin)):
            raise ValueError(f"margin must be a finite number, got {self.margin!r}")
        if self.kind == "increasing" and self.at is not None and len(self.at) < 2:
            raise ValueError("an 'increasing' contrast needs at least 2 grid values in at")

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.hi if isinstance(self.hi, tuple) else (self.hi,)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.candidates, self.lo)

    @property
    def expected_verdict(self) -> str:
        if self.kind == "report":
            return INFO
        return "FINDING" if self.expect == "finding" else "PASS"


@dataclass(frozen=True)
class ContrastEstimate:
    """Mean gain over ``seeds`` seeds with its 95% interval (printed as the observed value)."""

    mean: float
    ci_low: float
    ci_high: float
    seeds: int
    chosen: str = ""        # the hi column judged (chosen on held-out seeds when several)
    level: float = 0.95

    @property
    def half_width(self) -> float:
        return 0.5 * (self.ci_high - self.ci_low)

    def __str__(self) -> str:
        return f"{self.mean:+.4g} [{self.ci_low:+.4g}, {self.ci_high:+.4g}]"


@dataclass(frozen=True)
class ContrastResult:
    """One contrast's verdict, shaped like :class:`CheckResult` for the tables (no slopes:
    ``local`` and ``asymptotic`` are NaN; ``observed`` is the deciding estimate)."""

    experiment: str
    bound: str                  # the contrast's name
    variable: str
    kind: str
    expect: str
    observed: ContrastEstimate
    tolerance: float            # the margin
    reason: str
    verdict: str
    message: str
    per_point: tuple[tuple[float, ContrastEstimate], ...] = ()
    local: float = math.nan
    asymptotic: float = math.nan
    asymptotic_expr: str = "n/a"
    level_band: tuple[float, float] | None = None
    level_range: tuple[float, float] | None = None
    ratios: tuple[float, ...] | None = None
    finding_on: str = ""        # as CheckResult's; a contrast has no level part

    @property
    def ok(self) -> bool:
        return self.verdict in OK_VERDICTS or self.verdict == INFO


@dataclass(frozen=True)
class ComparisonExperiment(Experiment):
    """An experiment judged by :class:`Contrast` claims instead of slopes (``checks`` may be
    empty; when given, they are ignored by the analysis, so declare none).  Grid values need
    not be positive (λ = 0 is a point).  ``bound`` (shown in tables) is the first contrast's
    name; every other field means what it means for :class:`Experiment`."""

    contrasts: tuple[Contrast, ...] = ()

    def __post_init__(self) -> None:
        if not self.contrasts:
            raise ValueError(f"{self.id}: a comparison experiment needs at least one contrast")
        if self.checks:
            raise ValueError(f"{self.id}: a comparison experiment is judged by its contrasts; "
                             "declare no slope checks")
        if len(self.quick_grid) < 1 or len(self.full_grid) < 1:
            raise ValueError(f"{self.id}: grids must not be empty")
        if self.seeds < 4:
            raise ValueError(f"{self.id}: seeds must be >= 4 (contrasts split seeds in halves)")
        if self.variable in self.fixed:
            raise ValueError(f"{self.id}: swept variable {self.variable!r} is also fixed")
        if not 0 < self.privacy_rtol < 1:
            raise ValueError(f"{self.id}: privacy_rtol must be in (0, 1), got {self.privacy_rtol}")

    @property
    def bound(self) -> str:
        return self.contrasts[0].name


def _t_interval(d: np.ndarray, level: float = 0.95) -> ContrastEstimate:
    d = np.asarray(d, dtype=float)
    m = float(d.mean())
    if d.size < 2:
        return ContrastEstimate(m, -math.inf, math.inf, int(d.size))
    hw = float(stats.t.ppf(0.5 + level / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
    return ContrastEstimate(m, m - hw, m + hw, int(d.size), level=level)


def _columns_by_point(exp: Experiment, rows: list[dict], names: tuple[str, ...]
                      ) -> dict[float, dict[str, np.ndarray]]:
    by: dict[float, dict[str, list]] = {}
    for r in sorted(rows, key=lambda r: r["seed"]):
        cols = by.setdefault(float(r[f"p_{exp.variable}"]), {c: [] for c in names})
        for c in names:
            v = r.get(c)
            cols[c].append(math.nan if v is None else float(v))
    return {v: {c: np.asarray(x) for c, x in cols.items()} for v, cols in sorted(by.items())}


def _gain(c: Contrast, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    if c.log:
        return c.sign * (np.log(hi) - np.log(lo))
    return c.sign * (hi - lo)


def _point_gain(c: Contrast, cols: dict[str, np.ndarray], level: float = 0.95
                ) -> ContrastEstimate:
    # Several candidates for hi: choose on even seeds, judge on odd seeds (held out).
    if len(c.candidates) == 1:
        only = c.candidates[0]
        return _with_chosen(_t_interval(_gain(c, cols[only], cols[c.lo]), level), only)
    sel, test = slice(0, None, 2), slice(1, None, 2)
    means = [float(np.mean(_gain(c, cols[h][sel], cols[c.lo][sel]))) for h in c.candidates]
    best = c.candidates[int(np.nanargmax(means))]
    return _with_chosen(_t_interval(_gain(c, cols[best][test], cols[c.lo][test]), level), best)


def _with_chosen(est: ContrastEstimate, chosen: str) -> ContrastEstimate:
    return dataclasses.replace(est, chosen=chosen)


def _spent(cols: dict[str, np.ndarray]) -> str:
    # No accuracy without its privacy cost: the largest spend the rows report at this point.
    for unit, sym in (("epsilon", "ε"), ("rho", "ρ")):
        v = cols.get(f"{unit}_spent")
        if v is not None and np.isfinite(v).any():
            return f" [{sym} spent ≤ {np.nanmax(v):.4g}]"
    return ""


def _welch_difference(e0: ContrastEstimate, e1: ContrastEstimate) -> ContrastEstimate:
    """Mean of e1 minus mean of e0 with the Welch interval at the level the two estimates carry
    (seeds of different grid points are independent draws)."""
    diff = e1.mean - e0.mean
    q = [stats.t.ppf(0.5 + _level_of(e) / 2, e.seeds - 1) for e in (e0, e1)]
    se0, se1 = e0.half_width / q[0], e1.half_width / q[1]
    se = math.hypot(se0, se1)
    # Welch–Satterthwaite degrees of freedom for the difference of two independent means
    dof = se ** 4 / (se0 ** 4 / (e0.seeds - 1) + se1 ** 4 / (e1.seeds - 1)) if se > 0 else 1
    hw = float(stats.t.ppf(0.5 + _level_of(e0) / 2, dof)) * se
    return ContrastEstimate(diff, diff - hw, diff + hw, e0.seeds + e1.seeds, level=_level_of(e0))


def _level_of(e: ContrastEstimate) -> float:
    return getattr(e, "level", 0.95)


def _contrast_state(ests: list[ContrastEstimate], stricts: list[ContrastEstimate],
                    margin: float) -> str:
    """``pass``: every 95% interval lies above the margin; ``deviates``: some interval at the
    judging level (``stricts``: 99% for a finding) lies wholly at or below it; else
    ``inconclusive``."""
    if all(e.ci_low > margin for e in ests):
        return "pass"
    if any(e.ci_high <= margin for e in stricts):
        return "deviates"
    return "inconclusive"


def _contrast_resolve(ests: list[ContrastEstimate], margin: float) -> str:
    """Seeds that would decide: each interval containing the margin must shrink below the
    gain's distance to it; the half-width scales as 1/√seeds (the estimate staying put)."""
    need = [(e.half_width / abs(e.mean - margin), e.seeds) for e in ests
            if e.ci_low <= margin <= e.ci_high and e.mean != margin and e.half_width > 0]
    if not need:
        return ""
    f, seeds = max(need)
    far = " (out of reach unless the gain moves)" if f > 10 else ""
    return (f"; to resolve: ≈ {math.ceil(seeds * f * f)} seeds instead of {seeds} where it is "
            f"closest{far}")


def _judge_contrast(exp: Experiment, c: Contrast,
                    by: dict[float, dict[str, np.ndarray]]) -> ContrastResult:
    at = [v for v in (c.at if c.at is not None else tuple(by)) if v in by]
    missing = [v for v in (c.at or ()) if v not in by]
    per = tuple((v, _point_gain(c, by[v])) for v in at)
    pts = "; ".join(f"{exp.variable}={v:g}: {e}" + (f" ({e.chosen})" if len(c.candidates) > 1
                                                   else "") + _spent(by[v]) for v, e in per)
    if missing or not per or (c.kind == "increasing" and len(per) < 2):
        est = per[0][1] if per else ContrastEstimate(math.nan, math.nan, math.nan, 0)
        return ContrastResult(exp.id, c.name, exp.variable, c.kind, c.expect, est, c.margin,
                              c.reason, "FAIL", f"grid values missing: {missing or 'all'}", per)
    # A finding (a claim against a paper) must deviate at FINDING_LEVEL; a claim held at 95%.
    level = FINDING_LEVEL if c.expect == "finding" else 0.95
    if c.kind == "increasing":
        (v0, e0), (v1, e1) = per[0], per[-1]
        est = _welch_difference(e0, e1)
        strict = _welch_difference(*(_point_gain(c, by[v], level) for v in (v0, v1)))
        state = _contrast_state([est], [strict], c.margin)
        msg = (f"gain at {exp.variable}={v1:g} minus gain at {exp.variable}={v0:g} = {est} "
               f"(95% Welch; must exceed {c.margin:g}); gains: {pts}")
    else:
        est = min((e for _, e in per), key=lambda e: e.ci_low)
        stricts = [_point_gain(c, by[v], level) for v, _ in per]
        state = _contrast_state([e for _, e in per], stricts, c.margin)
        msg = (f"gain {'>' if c.kind == 'greater' else 'vs'} {c.margin:g} at every point "
               f"(95% t-interval over seeds): {pts}")
    if c.kind == "report":
        verdict = INFO
    elif c.expect == "finding":
        verdict = {"pass": NOT_REPRODUCED, "deviates": "FINDING"}.get(state, INCONCLUSIVE)
    else:
        verdict = {"pass": "PASS", "deviates": "FAIL"}.get(state, INCONCLUSIVE)
    if verdict == INCONCLUSIVE:
        ests = [strict] if c.kind == "increasing" else stricts
        msg += (("; INCONCLUSIVE: no interval lies wholly on one side of the margin "
                 f"(a finding needs the {FINDING_LEVEL:.0%} interval below it)"
                 if c.expect == "finding" else
                 "; INCONCLUSIVE: some interval contains the margin")
                + _contrast_resolve(ests, c.margin))
    return ContrastResult(exp.id, c.name, exp.variable, c.kind, c.expect, est, c.margin,
                          c.reason, verdict, msg, per)


@dataclass(frozen=True)
class ComparisonAnalysis(Analysis):
    """An :class:`Analysis` of a :class:`ComparisonExperiment`; ``columns`` holds every numeric
    column of the rows per grid value (per seed, seeds in order), for figures and tables."""

    columns: dict = field(default_factory=dict)   # grid value -> column -> per-seed array


def _numeric_columns(rows: list[dict]) -> tuple[str, ...]:
    if not rows:
        return ()
    return tuple(k for k, v in rows[0].items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool))


def analyse_contrasts(exp: ComparisonExperiment, rows: list[dict]) -> ComparisonAnalysis:
    """Judge every contrast of ``exp`` on its stored rows (privacy and settings verdicts as for
    slope experiments).  ``per_point`` holds the experiment's ``metric`` per seed."""
    names = tuple(dict.fromkeys([c for k in exp.contrasts for c in k.columns] + [exp.metric]
                                + list(_numeric_columns(rows))))
    by = _columns_by_point(exp, rows, names)
    privacy, privacy_error = _with_noise(exp, rows, *check_privacy(exp, rows))
    _, settings_error = check_settings(exp, rows)
    results = tuple(_judge_contrast(exp, c, by) for c in exp.contrasts)
    per_point = {v: cols[exp.metric] for v, cols in by.items()}
    return ComparisonAnalysis(exp, None, results, tuple(by), (), per_point, error=settings_error,
                              privacy=privacy, privacy_error=privacy_error, columns=by)
