"""Judging fitted slopes against the bounds' predictions (PEPit style: measured beside theory).

For each check the prediction is computed from ``bounds/`` at the experiment's own parameter
values over the kept grid points:

* *local* slope: the OLS slope of log(bound) against log(variable) over the same points as the
  data fit (all log factors and lower-order terms included);
* *asymptotic* exponent: ``Bound.exponent(variable, **fixed)``.

Verdicts are regressions: a check must come out as declared.

* ``expect="hold"``: PASS, or FAIL (fails ``verify``);
* ``expect="finding"`` (a claim that careful experiments contradict, docs/errata.md): FINDING
  when the check still fails as documented, NOT REPRODUCED when it passes (fails ``verify``: the
  recorded finding no longer describes the code, so either the code or the record is wrong).
  ``Check.finding_on`` says what fails: the slope (a level band is still enforced: a level out
  of band is FAIL), the level (the slope must pass: else FAIL) or both; every part declared
  must still deviate, else NOT REPRODUCED;
* the expectation is per grid: ``Check.expect`` on the quick grid, ``Check.expect_full`` on
  the full grid, told apart by the rows' grid values (``Experiment.is_full``);
* ``reject`` (a competing rate): REJECTED when the data rule out the competitor at its local
  slope over the grid **and** at its asymptotic exponent (a competitor whose local slope is bent
  by log factors or lower-order terms must not escape on its asymptotic one, nor the reverse),
  NOT REJECTED otherwise (fails ``verify``).  When the competitor has no asymptotic exponent in
  the swept variable (it enters only through ``Check.values``), only the local slope is judged
  and the message says so.

Only PASS, FINDING and REJECTED let ``verify`` succeed (:attr:`CheckResult.ok`).

Beside the slopes, every analysis judges the stored rows' privacy columns (:func:`check_privacy`),
the noise measured in every release against the scale those columns were computed from
(:func:`check_noise`; a failure is a privacy failure) and the theorem's settings
(:func:`check_settings`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import sympy as sp
from scipy import stats

import bounds
from empirical.core.experiment import PRIVACY_UNITS, Check, Experiment
from empirical.core.fitting import SlopeFit, fit_slope, ols_slope

__all__ = ["CheckResult", "Analysis", "analyse", "check_privacy", "check_settings", "check_noise",
           "NOISE_ALPHA",
           "detectable_exponent_error", "OK_VERDICTS", "NOT_REPRODUCED",
           "CONTRAST_KINDS", "INFO", "Contrast", "ContrastEstimate", "ContrastResult",
           "ComparisonExperiment", "ComparisonAnalysis", "analyse_contrasts"]

#: Renders an :class:`Analysis` as HTML for a notebook; set by the package's public face
#: (empirical/__init__.py) to the report's renderer, which the core does not import.
HTML_REPR: "Callable[[Analysis], str] | None" = None

#: The verdict of a recorded finding whose check now passes: the record is stale, verify fails.
NOT_REPRODUCED = "NOT REPRODUCED"
#: Verdicts that let ``verify`` succeed; everything else (FAIL, NOT REJECTED, NOT REPRODUCED) fails.
OK_VERDICTS = ("PASS", "REJECTED", "FINDING")
_GRIDS = {False: "quick", True: "full"}


@dataclass(frozen=True)
class CheckResult:
    experiment: str
    bound: str
    variable: str
    kind: str
    expect: str
    local: float            # bound's slope fitted over the kept grid
    asymptotic: float       # bound's exact exponent as variable → ∞
    asymptotic_expr: str
    observed: SlopeFit
    tolerance: float
    reason: str
    verdict: str
    message: str
    level_band: tuple[float, float] | None = None
    level_range: tuple[float, float] | None = None   # min, max of observed / bound over the grid
    ratios: tuple[float, ...] | None = None          # observed / bound at each kept point
    finding_on: str = ""     # what an expected finding is a finding of ("" when expect is hold)

    @property
    def ok(self) -> bool:
        """Whether this result lets ``verify`` succeed."""
        return self.verdict in OK_VERDICTS


@dataclass(frozen=True)
class Analysis:
    experiment: Experiment
    fit: SlopeFit | None
    results: tuple[CheckResult, ...]
    kept: tuple[float, ...]
    dropped: tuple[tuple[float, str], ...]
    per_point: dict = field(default_factory=dict)   # grid value -> per-seed metric array
    error: str = ""
    privacy: str = ""          # what the privacy verdict checked
    privacy_error: str = ""    # non-empty: a stored run broke its privacy claim
    # Whose expectations were applied: "full" when the rows hold a value only the full grid has
    # (Experiment.is_full); a full grid inside the quick grid (real.userlevel.*) reads "quick".
    grid: str = "quick"

    def _repr_html_(self) -> str | None:
        """Jupyter display: the checks as a table (rendered by empirical.report, through
        :data:`HTML_REPR`; None, i.e. the plain repr, without it)."""
        return HTML_REPR(self) if HTML_REPR is not None else None

    @property
    def ok(self) -> bool:
        return not self.error and not self.privacy_error and all(r.ok for r in self.results)


def check_privacy(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """The privacy verdict of a private experiment's stored rows: ``(summary, error)``.

    Every row must carry ``<unit>_target``, ``<unit>_guarantee`` and ``<unit>_spent`` for one
    unit of ``PRIVACY_UNITS``; the guarantee (data independent, from dp-accounting) must equal
    the target within ``exp.privacy_rtol`` and the spend must not exceed the guarantee (relative
    1e-9, the accountant's rounding).  Where rows also carry ``delta_target`` and
    ``delta_guarantee`` (ε stated at a δ), the δ guaranteed must not exceed the δ targeted.
    Whatever the slopes say, a violation fails the experiment.
    """
    if not exp.private:
        return "not private (baseline or control)", ""
    if not rows:
        return "", "no rows"
    unit = next((u for u in PRIVACY_UNITS
                 if all(f"{u}_{c}" in rows[0] for c in ("target", "guarantee", "spent"))), None)
    if unit is None:
        return "", ("private experiment stores no privacy columns (<unit>_target, "
                    f"<unit>_guarantee, <unit>_spent for a unit in {PRIVACY_UNITS})")
    bad = []
    for r in rows:
        t, g, s = (r.get(f"{unit}_{c}") for c in ("target", "guarantee", "spent"))
        if any(v is None or not math.isfinite(v) for v in (t, g, s)):
            bad.append(f"seed {r['seed']}: non-finite privacy value")
        elif abs(g - t) > exp.privacy_rtol * t:
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"guarantee {unit}={g:.6g} != target {t:.6g}")
        elif s > g * (1 + 1e-9):
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"spent {unit}={s:.6g} > guarantee {g:.6g}")
        elif ("delta_target" in r and "delta_guarantee" in r
              and not (r["delta_guarantee"] is not None and r["delta_target"] is not None
                       and r["delta_guarantee"] <= r["delta_target"] * (1 + 1e-9))):
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"guarantee delta={r['delta_guarantee']} > target {r['delta_target']}")
    if bad:
        return "", f"privacy violated in {len(bad)}/{len(rows)} rows; first: {bad[0]}"
    return (f"{unit}: guarantee = target (rtol {exp.privacy_rtol:g}) and spent <= guarantee "
            f"in all {len(rows)} rows"), ""


def check_settings(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """Every parameter of a theorem is exercised as the theorem sets it: ``(summary, error)``.

    For each pair of row columns ``used_<x>`` / ``theory_<x>`` the value the algorithm actually
    used (step count, noise std, clip, batch) must equal the theorem's setting, which the
    experiment computes *independently* of the algorithm (relative 1e-9); for each pair
    ``max_<x>`` / ``limit_<x>`` the measured value must not exceed the limit (an invariant such
    as ‖w_t − w0‖ ≤ the projection radius).  Rows without such columns pass trivially.
    """
    if not rows:
        return "", ""
    keys = rows[0].keys()
    eq = sorted(k[5:] for k in keys if k.startswith("used_") and f"theory_{k[5:]}" in keys)
    le = sorted(k[4:] for k in keys if k.startswith("max_") and f"limit_{k[4:]}" in keys)
    bad = []
    for r in rows:
        for x in eq:
            u, t = float(r[f"used_{x}"]), float(r[f"theory_{x}"])
            if not abs(u - t) <= 1e-9 * max(abs(t), 1e-300):
                bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g}: {x} used {u:.6g} "
                           f"!= theorem's {t:.6g}")
        for x in le:
            m, lim = float(r[f"max_{x}"]), float(r[f"limit_{x}"])
            if not m <= lim * (1 + 1e-9):
                bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g}: {x} reached {m:.6g} "
                           f"> limit {lim:.6g}")
    if bad:
        return "", f"settings violated in {len(bad)} row values; first: {bad[0]}"
    if not (eq or le):
        return "", ""
    return f"settings as the theorem sets them: {', '.join(eq + le)}", ""


#: False-alarm probability of one noise test (one channel at one grid point, both tails
#: together): the statistic's law is exact under a correct implementation, so this is the exact
#: rate; a verify runs about 10³ such tests (expected false failures ≈ 10⁻³).
NOISE_ALPHA = 1e-6


def _noise_channels(keys) -> list[tuple[str, str]]:
    from algorithms.noise_meter import FAMILIES

    out = []
    for k in keys:
        for fam in FAMILIES:
            pre = f"noise_{fam}_"
            if k.startswith(pre) and f"noise_count_{k[len(pre):]}" in keys:
                out.append((k[len(pre):], fam))
    return sorted(out)


def noise_interval(k: float, family: str, sides: int,
                   alpha: float = NOISE_ALPHA) -> tuple[float, float]:
    """Acceptance interval of the measured/claimed scale ratio for k coordinates: the
    (α/sides, 1 − α/2) quantiles of S's exact law (Gaussian: χ²_k = Gamma(k/2, 2), ratio
    √(S/k); Laplace: Gamma(k, 1), ratio S/k), upper end ∞ for a one-sided channel."""
    if family == "gauss":
        law, to_ratio = stats.gamma(k / 2.0, scale=2.0), lambda q: math.sqrt(q / k)
    else:
        law, to_ratio = stats.gamma(k, scale=1.0), lambda q: q / k
    lo = to_ratio(float(law.ppf(alpha / sides)))
    hi = to_ratio(float(law.isf(alpha / 2.0))) if sides == 2 else math.inf
    return lo, hi


def check_noise(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """The noise measured in every release against the scale the privacy columns were computed
    from: ``(summary, error)``.

    Rows carry, per channel, ``noise_gauss_<ch>`` or ``noise_laplace_<ch>`` (the statistic S of
    :mod:`algorithms.noise_meter`), ``noise_count_<ch>`` (its k) and ``noise_sides_<ch>``.  Per
    grid point the seeds' S and k are summed (independent draws) and S must lie inside the
    central 1 − :data:`NOISE_ALPHA` interval of its exact law (two-sided channels: too much
    noise means the accountant priced a σ the run did not use, and the rate checks test another
    algorithm than the theorem's; one-sided: only the lower tail, too little noise).  Written as
    the ratio measured/claimed scale, the interval is about 1 ± 4.9/√(2k) (Gaussian): a dropped
    noise (ratio 0), a σ of another channel or a factor √(L+1) slipped is far outside it as soon
    as k ≥ 50.  Rows without such columns pass trivially."""
    if not rows:
        return "", ""
    chans = _noise_channels(rows[0].keys())
    if not chans:
        return "", ""
    by: dict[tuple[str, float], list[float]] = {}
    bad, worst = [], {}
    for r in rows:
        v = float(r[f"p_{exp.variable}"])
        for ch, fam in chans:
            acc = by.setdefault((ch, v), [0.0, 0.0, 2.0])
            acc[0] += float(r[f"noise_{fam}_{ch}"])
            acc[1] += float(r[f"noise_count_{ch}"])
            acc[2] = min(acc[2], float(r.get(f"noise_sides_{ch}", 2.0)))
    fams = dict(chans)
    for (ch, v), (S, k, sides) in sorted(by.items()):
        if k <= 0:
            continue
        fam = fams[ch]
        ratio = math.sqrt(S / k) if fam == "gauss" else S / k
        lo, hi = noise_interval(k, fam, int(sides))
        w = worst.setdefault(ch, [math.inf, -math.inf, math.inf, 0])
        w[0], w[1], w[2], w[3] = min(w[0], ratio), max(w[1], ratio), min(w[2], k), w[3] + 1
        if not lo <= ratio <= hi:
            bad.append(f"{exp.variable}={v:g}: {ch} noise measured/claimed "
                       f"{ratio:.4g} outside [{lo:.4g}, {hi:.4g}] ({int(k)} coordinates)")
    if bad:
        return "", f"noise differs from its claim in {len(bad)} channel-points; first: {bad[0]}"
    if not worst:
        return "", ""
    parts = [f"{ch} {lo_:.3g}-{hi_:.3g} (k >= {int(kmin)})"
             for ch, (lo_, hi_, kmin, _) in sorted(worst.items())]
    return ("noise measured/claimed inside the exact " f"{1 - NOISE_ALPHA:.6g} interval: "
            + ", ".join(parts)), ""


def _with_noise(exp: Experiment, rows: list[dict], privacy: str,
                privacy_error: str) -> tuple[str, str]:
    noise, noise_error = check_noise(exp, rows)
    return ("; ".join(x for x in (privacy, noise) if x),
            "; ".join(x for x in (privacy_error, noise_error) if x))


def detectable_exponent_error(result: CheckResult,
                              kept: tuple[float, ...] | None = None) -> tuple[float, float] | None:
    """The smallest exponent errors e < 0 and e > 0 this check would detect on these data.

    A bug that multiplies the metric by v^e (v the swept variable) moves the fitted slope by
    exactly e and every level ratio by v^e.  The check then fails once s + e leaves its
    acceptance interval (two-sided: [lo_band − tol, hi_band + tol]; one-sided: only the upper
    end) or once some ratio·v^e leaves the level band.  Returns ``(down, up)``: the largest
    undetected negative and positive e bound (−inf/inf: never detected in that direction);
    None for ``reject`` checks and for contrasts (no slope).
    """
    if result.kind == "reject" or result.kind in CONTRAST_KINDS:
        return None
    s, tol = result.observed.slope, result.tolerance
    lo_band = min(result.local, result.asymptotic)
    hi_band = max(result.local, result.asymptotic)
    up = hi_band + tol - s
    down = (lo_band - tol - s) if result.kind == "two-sided" else -math.inf
    if result.level_band is not None and result.ratios is not None:
        x = np.log(np.asarray(result.observed.x, dtype=float))
        lr = np.log(np.asarray(result.ratios, dtype=float))
        llo, lhi = math.log(result.level_band[0]), math.log(result.level_band[1])
        # need llo <= lr_i + e x_i <= lhi for all i: intersect the intervals over i
        e_hi, e_lo = math.inf, -math.inf
        for xi, li in zip(x, lr):
            if xi > 0:
                e_hi, e_lo = min(e_hi, (lhi - li) / xi), max(e_lo, (llo - li) / xi)
            elif xi < 0:
                e_hi, e_lo = min(e_hi, (llo - li) / xi), max(e_lo, (lhi - li) / xi)
        up, down = min(up, e_hi), max(down, e_lo)
    return float(down), float(up)


def _group(exp: Experiment, rows: list[dict]) -> dict[float, np.ndarray]:
    by = {}
    for r in rows:
        by.setdefault(float(r[f"p_{exp.variable}"]), []).append(
            math.nan if r[exp.metric] is None else float(r[exp.metric]))
    return {k: np.asarray(v) for k, v in sorted(by.items())}


def _bound_values(exp: Experiment, check: Check, point: dict) -> dict:
    return (check.values or exp.bound_values)(point)


def _judge_level(check: Check, ratios: np.ndarray) -> tuple[bool, str]:
    lo, hi = check.level
    r_lo, r_hi = float(np.min(ratios)), float(np.max(ratios))
    ok = lo <= r_lo and r_hi <= hi
    return ok, (f"; level observed/bound in [{r_lo:.3g}, {r_hi:.3g}] "
                f"{'inside' if ok else 'OUTSIDE'} band [{lo:g}, {hi:g}]")


def _judge_reject(observed: SlopeFit, local: float, asym: float, tol: float) -> tuple[str, str]:
    s = observed.slope

    # Both the local slope and the asymptotic exponent must be ruled out: each must lie
    # outside the CI and more than the tolerance from the observed slope.
    def ruled_out(c: float) -> bool:
        return abs(s - c) > tol and not observed.covers(c)

    far_local = ruled_out(local)
    if math.isnan(asym):
        far, where = far_local, (f"local slope {local:+.3f} "
                                 f"{'outside' if far_local else 'not ruled out by'} the data; "
                                 "no asymptotic exponent in this variable (local only)")
    else:
        far_asym = ruled_out(asym)
        far = far_local and far_asym
        where = (f"local slope {local:+.3f} {'outside' if far_local else 'NOT ruled out'}, "
                 f"asymptotic {asym:+.3f} {'outside' if far_asym else 'NOT ruled out'}")
    verdict = "REJECTED" if far else "NOT REJECTED"
    return verdict, f"competing rate: {where} ({observed}, tolerance {tol})"


def _judge_slope(check: Check, observed: SlopeFit, local: float, asym: float
                 ) -> tuple[bool, str]:
    lo_band, hi_band = min(local, asym), max(local, asym)
    s, tol, hw = observed.slope, check.tolerance, observed.half_width
    if hw > tol:
        return False, f"inconclusive: CI half-width {hw:.3f} exceeds tolerance {tol}"
    if check.kind == "two-sided":
        dist = max(lo_band - s, s - hi_band, 0.0)
        return dist <= tol, (f"distance {dist:.3f} from band [{lo_band:+.3f}, {hi_band:+.3f}] "
                             f"(tol {tol})")
    # one-sided: an upper bound's slope may be beaten, not exceeded
    excess = s - hi_band
    return excess <= tol, (f"observed − upper end of band = {excess:+.3f} "
                           f"(tol {tol}; lower is allowed)")


def _judge_finding(finding_on: str | None, slope_ok: bool, level_ok: bool | None
                   ) -> tuple[str, str]:
    """The verdict of a check expected to be a finding, from its two parts.  Every part the
    finding is declared on must still deviate (else the record is stale: NOT REPRODUCED); every
    part it is not declared on must still hold (else FAIL: something else broke)."""
    # (finding_on is None only without a level band: Check refuses it otherwise)
    on = finding_on or "slope"
    what = on.replace("+", " and ")
    parts = {"slope": slope_ok, "level": level_ok}
    stale = [k for k in parts if k in on.split("+") and parts[k]]
    broken = [k for k in parts if k not in on.split("+") and parts[k] is False]
    if stale:
        return NOT_REPRODUCED, (f"; the recorded finding (of the {what}) is NOT reproduced: the "
                                f"{' and '.join(stale)} now passes")
    if broken:
        return "FAIL", (f"; finding of the {what} reproduced, but the {' and '.join(broken)}, "
                        "which must hold for this finding, does not")
    return "FINDING", f"; finding of the {what}"


def _judge(check: Check, observed: SlopeFit, local: float, asym: float,
           ratios: np.ndarray | None = None, full: bool = False) -> tuple[str, str]:
    if check.kind == "reject":
        return _judge_reject(observed, local, asym, check.tolerance)
    slope_ok, msg = _judge_slope(check, observed, local, asym)
    level_ok = None
    if check.level is not None and ratios is not None:
        level_ok, level_msg = _judge_level(check, ratios)
        msg += level_msg
    if check.expectation(full) == "finding":
        # A finding is a regression test too: if the check now passes, the record is stale.
        verdict, why = _judge_finding(check.finding_on, slope_ok, level_ok)
        return verdict, msg + why
    return ("PASS" if slope_ok and level_ok is not False else "FAIL"), msg


def analyse(exp: Experiment, rows: list[dict]) -> Analysis:
    """Fit the experiment's stored rows and evaluate every check (a
    :class:`ComparisonExperiment` is judged by its contrasts instead).  Whether the rows are
    the full grid's (which decides ``Check.expect_full``) is read from their grid values
    (:meth:`Experiment.is_full`) and recorded in ``Analysis.grid``."""
    if isinstance(exp, ComparisonExperiment):
        return analyse_contrasts(exp, rows)
    per_point = _group(exp, rows)
    full = exp.is_full(per_point)
    privacy, privacy_error = _with_noise(exp, rows, *check_privacy(exp, rows))
    _, settings_error = check_settings(exp, rows)
    primary = bounds.get(exp.bound)
    kept, dropped = [], []
    for v, metric in per_point.items():
        point = exp.point(v)
        vals = exp.bound_values(point)
        reason = None
        if np.any(~np.isfinite(metric)) or np.any(metric <= 0):
            reason = "metric not positive and finite for some seed"
        elif primary.conditions and not primary.applies(**vals):
            reason = f"conditions of {primary.id} fail"
        else:
            try:
                bval = primary(**vals)
            except ValueError as exc:
                bval, reason = None, f"bound undefined ({exc})"
            if reason is None and bval <= 0:
                reason = "bound non-positive (vacuous)"
            if reason is None and exp.vacuous is not None:
                reason = exp.vacuous(point, bval)
        if reason:
            dropped.append((v, reason))
        else:
            kept.append(v)
    if len(kept) < 3:
        return Analysis(exp, None, (), tuple(kept), tuple(dropped), per_point,
                        error="; ".join(x for x in (f"only {len(kept)} usable grid points (need 3)",
                                                    settings_error) if x),
                        privacy=privacy, privacy_error=privacy_error, grid=_GRIDS[full])
    fit = fit_slope(kept, [per_point[v] for v in kept], aggregate=exp.aggregate,
                    rng=np.random.default_rng(0))
    results = []
    for check in exp.checks:
        b = bounds.get(check.bound)
        bvals = [b(**_bound_values(exp, check, exp.point(v))) for v in kept]
        local, _ = ols_slope(np.array(kept), np.array(bvals))
        fixed = {k: val for k, val in _bound_values(exp, check, exp.point(kept[0])).items()
                 if k != exp.variable}
        if exp.variable in b.variables:
            asym_expr = b.exponent(exp.variable, **fixed)
            asym = float(sp.N(asym_expr))
        elif np.ptp(np.log(bvals)) == 0.0:   # the bound does not depend on the variable at all
            asym_expr, asym = sp.Integer(0), 0.0
        else:  # the variable enters only through check.values (e.g. ε as a function of ρ)
            asym_expr, asym = "n/a", math.nan
        if check.kind != "reject" and math.isnan(asym):
            raise ValueError(f"{exp.id}: bound {b.id} has no symbol {exp.variable!r}")
        ratios = fit.y / np.asarray(bvals, dtype=float)
        verdict, msg = _judge(check, fit, local, asym, ratios, full)
        expect = check.expectation(full)
        results.append(CheckResult(exp.id, b.id, exp.variable, check.kind, expect, local,
                                   asym, str(sp.sstr(asym_expr)), fit, check.tolerance, check.reason,
                                   verdict, msg, check.level,
                                   (float(ratios.min()), float(ratios.max())),
                                   tuple(float(x) for x in ratios),
                                   (check.finding_on or "slope") if expect == "finding" else ""))
    # A theorem setting not exercised as stated is an error of the run, whatever the slopes say.
    return Analysis(exp, fit, tuple(results), tuple(kept), tuple(dropped), per_point,
                    error=settings_error, privacy=privacy, privacy_error=privacy_error,
                    grid=_GRIDS[full])


# ==============================================================================================
# Contrast checks: claims about levels at grid points, not slopes (real-data experiments, #16)
# ==============================================================================================
#: Kinds of :class:`Contrast`.  ``greater`` and ``increasing`` are one-sided claims and can fail;
#: ``report`` states a comparison nobody claims (a peer library) and never fails.
CONTRAST_KINDS = ("greater", "increasing", "report")
#: Verdict of a ``report`` contrast: printed with its numbers, lets ``verify`` succeed.
INFO = "INFO"


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


def _t_interval(d: np.ndarray) -> ContrastEstimate:
    d = np.asarray(d, dtype=float)
    m = float(d.mean())
    if d.size < 2:
        return ContrastEstimate(m, -math.inf, math.inf, int(d.size))
    hw = float(stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
    return ContrastEstimate(m, m - hw, m + hw, int(d.size))


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


def _point_gain(c: Contrast, cols: dict[str, np.ndarray]) -> ContrastEstimate:
    # Several candidates for hi: choose on even seeds, judge on odd seeds (held out).
    if len(c.candidates) == 1:
        only = c.candidates[0]
        return _with_chosen(_t_interval(_gain(c, cols[only], cols[c.lo])), only)
    sel, test = slice(0, None, 2), slice(1, None, 2)
    means = [float(np.mean(_gain(c, cols[h][sel], cols[c.lo][sel]))) for h in c.candidates]
    best = c.candidates[int(np.nanargmax(means))]
    return _with_chosen(_t_interval(_gain(c, cols[best][test], cols[c.lo][test])), best)


def _with_chosen(est: ContrastEstimate, chosen: str) -> ContrastEstimate:
    return ContrastEstimate(est.mean, est.ci_low, est.ci_high, est.seeds, chosen)


def _spent(cols: dict[str, np.ndarray]) -> str:
    # No accuracy without its privacy cost: the largest spend the rows report at this point.
    for unit, sym in (("epsilon", "ε"), ("rho", "ρ")):
        v = cols.get(f"{unit}_spent")
        if v is not None and np.isfinite(v).any():
            return f" [{sym} spent ≤ {np.nanmax(v):.4g}]"
    return ""


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
    if c.kind == "increasing":
        (v0, e0), (v1, e1) = per[0], per[-1]
        diff = e1.mean - e0.mean
        se0, se1 = ((e.half_width / stats.t.ppf(0.975, e.seeds - 1)) for e in (e0, e1))
        se = math.hypot(se0, se1)
        # Welch–Satterthwaite degrees of freedom for the difference of two independent means
        dof = se ** 4 / (se0 ** 4 / (e0.seeds - 1) + se1 ** 4 / (e1.seeds - 1)) if se > 0 else 1
        hw = float(stats.t.ppf(0.975, dof)) * se
        est = ContrastEstimate(diff, diff - hw, diff + hw, e0.seeds + e1.seeds)
        ok = est.ci_low > c.margin
        msg = (f"gain at {exp.variable}={v1:g} minus gain at {exp.variable}={v0:g} = {est} "
               f"(95% Welch; must exceed {c.margin:g}); gains: {pts}")
    else:
        est = min((e for _, e in per), key=lambda e: e.ci_low)
        ok = all(e.ci_low > c.margin for _, e in per)
        msg = (f"gain {'>' if c.kind == 'greater' else 'vs'} {c.margin:g} at every point "
               f"(95% t-interval over seeds): {pts}")
    if c.kind == "report":
        verdict = INFO
    elif c.expect == "finding":
        verdict = NOT_REPRODUCED if ok else "FINDING"
    else:
        verdict = "PASS" if ok else "FAIL"
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
