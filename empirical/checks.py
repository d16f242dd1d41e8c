"""Judging fitted slopes against the bounds' predictions (PEPit style: measured beside theory).

For each check the prediction is computed from ``bounds/`` at the experiment's own parameter
values over the kept grid points:

* *local* slope: the OLS slope of log(bound) against log(variable) over the same points as the
  data fit (all log factors and lower-order terms included);
* *asymptotic* exponent: ``Bound.exponent(variable, **fixed)``.

Verdicts: PASS / FAIL for checks expected to hold; FINDING when a check recorded as a finding
(a claim that careful experiments contradict) deviates as documented; REJECTED / NOT REJECTED
for competing rates.  Only FAIL and NOT REJECTED on ``expect="hold"`` checks fail ``verify``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

import bounds
from empirical.experiment import Check, Experiment
from empirical.fitting import SlopeFit, fit_slope, ols_slope

__all__ = ["CheckResult", "Analysis", "analyse"]


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

    @property
    def ok(self) -> bool:
        """Whether this result lets ``verify`` succeed."""
        return self.verdict in ("PASS", "REJECTED", "FINDING")


@dataclass(frozen=True)
class Analysis:
    experiment: Experiment
    fit: SlopeFit | None
    results: tuple[CheckResult, ...]
    kept: tuple[float, ...]
    dropped: tuple[tuple[float, str], ...]
    per_point: dict = field(default_factory=dict)   # grid value -> per-seed metric array
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and all(r.ok for r in self.results)


def _group(exp: Experiment, rows: list[dict]) -> dict[float, np.ndarray]:
    by = {}
    for r in rows:
        by.setdefault(float(r[f"p_{exp.variable}"]), []).append(
            math.nan if r[exp.metric] is None else float(r[exp.metric]))
    return {k: np.asarray(v) for k, v in sorted(by.items())}


def _bound_values(exp: Experiment, check: Check, point: dict) -> dict:
    return (check.values or exp.bound_values)(point)


def _judge(check: Check, observed: SlopeFit, local: float, asym: float) -> tuple[str, str]:
    lo_band, hi_band = min(local, asym), max(local, asym)
    s, tol, hw = observed.slope, check.tolerance, observed.half_width
    if check.kind == "reject":
        competitor = local
        far = abs(s - competitor) > tol and not observed.covers(competitor)
        verdict = "REJECTED" if far else "NOT REJECTED"
        msg = (f"competing slope {competitor:+.3f} is {'outside' if far else 'not ruled out by'} "
               f"the data ({observed}, tolerance {tol})")
        return verdict, msg
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
    if check.expect == "finding":
        return ("PASS" if ok else "FINDING"), msg + ("" if not ok else "; finding NOT reproduced")
    return ("PASS" if ok else "FAIL"), msg


def analyse(exp: Experiment, rows: list[dict]) -> Analysis:
    """Fit the experiment's stored rows and evaluate every check."""
    per_point = _group(exp, rows)
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
                        error=f"only {len(kept)} usable grid points (need 3)")
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
        verdict, msg = _judge(check, fit, local, asym)
        results.append(CheckResult(exp.id, b.id, exp.variable, check.kind, check.expect, local,
                                   asym, str(sp.sstr(asym_expr)), fit, check.tolerance, check.reason,
                                   verdict, msg))
    return Analysis(exp, fit, tuple(results), tuple(kept), tuple(dropped), per_point)
