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
  recorded finding no longer describes the code, so either the code or the record is wrong);
* ``reject`` (a competing rate): REJECTED when the data rule out the competitor at its local
  slope over the grid **and** at its asymptotic exponent (a competitor whose local slope is bent
  by log factors or lower-order terms must not escape on its asymptotic one, nor the reverse),
  NOT REJECTED otherwise (fails ``verify``).  When the competitor has no asymptotic exponent in
  the swept variable (it enters only through ``Check.values``), only the local slope is judged
  and the message says so.

Only PASS, FINDING and REJECTED let ``verify`` succeed (:attr:`CheckResult.ok`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

import bounds
from empirical.experiment import PRIVACY_UNITS, Check, Experiment
from empirical.fitting import SlopeFit, fit_slope, ols_slope

__all__ = ["CheckResult", "Analysis", "analyse", "check_privacy", "check_settings",
           "detectable_exponent_error", "OK_VERDICTS", "NOT_REPRODUCED"]

#: The verdict of a recorded finding whose check now passes: the record is stale, verify fails.
NOT_REPRODUCED = "NOT REPRODUCED"
#: Verdicts that let ``verify`` succeed; everything else (FAIL, NOT REJECTED, NOT REPRODUCED) fails.
OK_VERDICTS = ("PASS", "REJECTED", "FINDING")


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

    def _repr_html_(self) -> str:
        """Jupyter display: the checks as a table (rendered by empirical.report)."""
        from empirical.report import analysis_repr_html

        return analysis_repr_html(self)

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


def detectable_exponent_error(result: CheckResult,
                              kept: tuple[float, ...] | None = None) -> tuple[float, float] | None:
    """The smallest exponent errors e < 0 and e > 0 this check would detect on these data.

    A bug that multiplies the metric by v^e (v the swept variable) moves the fitted slope by
    exactly e and every level ratio by v^e.  The check then fails once s + e leaves its
    acceptance interval (two-sided: [lo_band − tol, hi_band + tol]; one-sided: only the upper
    end) or once some ratio·v^e leaves the level band.  Returns ``(down, up)``: the largest
    undetected negative and positive e bound (−inf/inf: never detected in that direction);
    None for ``reject`` checks.
    """
    if result.kind == "reject":
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


def _judge(check: Check, observed: SlopeFit, local: float, asym: float,
           ratios: np.ndarray | None = None) -> tuple[str, str]:
    lo_band, hi_band = min(local, asym), max(local, asym)
    s, tol, hw = observed.slope, check.tolerance, observed.half_width
    if check.kind == "reject":
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
    if hw > tol:
        ok, msg = False, f"inconclusive: CI half-width {hw:.3f} exceeds tolerance {tol}"
    elif check.kind == "two-sided":
        dist = max(lo_band - s, s - hi_band, 0.0)
        ok = dist <= tol
        msg = f"distance {dist:.3f} from band [{lo_band:+.3f}, {hi_band:+.3f}] (tol {tol})"
    else:  # one-sided: an upper bound's slope may be beaten, not exceeded
        excess = s - hi_band
        ok = excess <= tol
        msg = f"observed − upper end of band = {excess:+.3f} (tol {tol}; lower is allowed)"
    if check.level is not None and ratios is not None:
        level_ok, level_msg = _judge_level(check, ratios)
        ok, msg = ok and level_ok, msg + level_msg
    if check.expect == "finding":
        # A finding is a regression test too: if the check now passes, the record is stale.
        return ((NOT_REPRODUCED, msg + "; the recorded finding is NOT reproduced (check passes)")
                if ok else ("FINDING", msg))
    return ("PASS" if ok else "FAIL"), msg


def analyse(exp: Experiment, rows: list[dict]) -> Analysis:
    """Fit the experiment's stored rows and evaluate every check."""
    per_point = _group(exp, rows)
    privacy, privacy_error = check_privacy(exp, rows)
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
                        privacy=privacy, privacy_error=privacy_error)
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
        verdict, msg = _judge(check, fit, local, asym, ratios)
        results.append(CheckResult(exp.id, b.id, exp.variable, check.kind, check.expect, local,
                                   asym, str(sp.sstr(asym_expr)), fit, check.tolerance, check.reason,
                                   verdict, msg, check.level,
                                   (float(ratios.min()), float(ratios.max())),
                                   tuple(float(x) for x in ratios)))
    # A theorem setting not exercised as stated is an error of the run, whatever the slopes say.
    return Analysis(exp, fit, tuple(results), tuple(kept), tuple(dropped), per_point,
                    error=settings_error, privacy=privacy, privacy_error=privacy_error)
