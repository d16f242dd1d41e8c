"""Judging fitted slopes against the bounds' predictions (PEPit style: measured beside theory).

For each check the prediction is computed from ``bounds/`` at the experiment's own parameter
values over the kept grid points:

* *local* slope: the OLS slope of log(bound) against log(variable) over the same points as the
  data fit (all log factors and lower-order terms included);
* *asymptotic* exponent: ``Bound.exponent(variable, **fixed)``, only for a variable whose domain
  is unbounded above (``bounds.core.domain``).  For a bounded variable (λ ∈ [0, 1), δ ∈ (0, 1))
  "variable → ∞" is meaningless: the band is the local slope alone and the result says so.

Verdicts are equivalence tests on the slope's 95% bootstrap interval (``fit_slope``).  A check's
*acceptance interval* A is [lo − tol, hi + tol] for a two-sided check and (−∞, hi + tol] for a
one-sided one, [lo, hi] the band between the local slope and the asymptotic exponent.

* the slope **passes** when the whole CI lies inside A, **deviates** when the whole CI lies
  outside A, and is **inconclusive** otherwise;
* ``expect="hold"``: PASS, FAIL (deviates, or a level outside its band) or INCONCLUSIVE;
* ``expect="finding"`` (a claim against a paper, docs/errata.md): FINDING only when every part
  declared by ``Check.finding_on`` deviates, NOT REPRODUCED when one of them passes (the record
  is stale), INCONCLUSIVE otherwise; the part not declared must still hold (else FAIL);
* ``reject`` (a competing rate c): REJECTED only when the whole CI lies outside [c − tol, c + tol]
  at the competitor's local slope and, where the variable can go to ∞, at its asymptotic
  exponent; NOT REJECTED when the whole CI lies inside one of them (the data agree with the
  competitor); INCONCLUSIVE otherwise.  ``Check.reference``: the competitor's assumptions do
  not hold on the instance, so it is drawn and measured but shown as REFERENCE, never REJECTED;
* the expectation is per grid: ``Check.expect`` on the quick grid, ``Check.expect_full`` on
  the full grid, told apart by the rows' grid values (``Experiment.is_full``).

INCONCLUSIVE fails ``verify``; its message says what would resolve it: the CI half-width that
would decide, and the seeds (half-width ∝ 1/√seeds) or log-grid span (∝ 1/sd(log x)) that would
give it at the fit's own standard error.

Confidence policy.  A PASS is a 95% equivalence test (two one-sided tests at 2.5% each): for a
check whose true slope lies outside A, the chance of PASS is at most 2.5%.  A FINDING is a
claim against a published paper and is judged at the stricter level ``FINDING_LEVEL`` = 99%:
the whole 99% CI must lie outside A, so a check whose true slope lies inside A is reported
FINDING with probability at most 0.5%.  Over the suite (≈ 240 slope checks, ≈ 30 declared
findings) the expected number of false FINDINGs is below 0.15 and that of false PASSes below
0.025 times the number of checks whose true slope lies outside A; REJECTED uses the 95% CI
(a competitor is a claim of this suite, not against a paper).  Level bands are judged on the
aggregated points (no interval): a level outside its band is a deviation.

Power: :func:`detectable_exponent_error` gives the smallest exponent errors a check would
detect; one unable to detect ±0.25 is labelled UNDERPOWERED (``UNDERPOWERED_AT``).  The label
does not fail ``verify``: the verdict is still right at its stated level, only weak; the remedy
(more seeds, a wider grid) is one of budget.  A check resting on a band calibrated from data
(``Check.level_source`` or ``tolerance_source`` = ``"calibration"``) is labelled REGRESSION
GUARD: it pins the code's behaviour, not the theorem.

Only PASS, FINDING, REJECTED and REFERENCE let ``verify`` succeed (:attr:`CheckResult.ok`).

Beside the slopes, every analysis judges the stored rows' privacy columns (:func:`check_privacy`),
the noise measured in every release against the scale those columns were computed from
(:func:`check_noise`; a failure is a privacy failure) and the theorem's settings
(:func:`check_settings`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import sympy as sp
from scipy import stats

import bounds
from bounds.core import domain as bounds_domain
from empirical.core.experiment import PRIVACY_UNITS, Check, Experiment
from empirical.core.fitting import SlopeFit, fit_slope, ols_slope

__all__ = ["CheckResult", "Analysis", "analyse", "check_privacy", "check_settings", "check_noise",
           "NOISE_ALPHA",
           "detectable_exponent_error", "OK_VERDICTS", "NOT_REPRODUCED", "INCONCLUSIVE",
           "REFERENCE", "REFUSED", "WIDE_ACCEPTANCE", "FINDING_LEVEL", "UNDERPOWERED_AT", "acceptance_interval", "labels",
           "CONTRAST_KINDS", "INFO", "Contrast", "ContrastEstimate", "ContrastResult",
           "ComparisonExperiment", "ComparisonAnalysis", "analyse_contrasts"]

#: Renders an :class:`Analysis` as HTML for a notebook; set by the package's public face
#: (empirical/__init__.py) to the report's renderer, which the core does not import.
HTML_REPR: "Callable[[Analysis], str] | None" = None

#: The verdict of a recorded finding whose check now passes: the record is stale, verify fails.
NOT_REPRODUCED = "NOT REPRODUCED"
#: The data neither establish the claim nor contradict it: fails ``verify`` (resolve it with more
#: seeds or a wider grid, never a looser tolerance).
INCONCLUSIVE = "INCONCLUSIVE"
#: A competitor whose assumptions do not hold on the instance: measured and drawn, never rejected.
REFERENCE = "REFERENCE"
#: Verdicts that let ``verify`` succeed; everything else (FAIL, NOT REJECTED, NOT REPRODUCED,
#: INCONCLUSIVE) fails.
OK_VERDICTS = ("PASS", "REJECTED", "FINDING", REFERENCE)
#: A check whose acceptance interval reaches farther than this from the bound's local slope is
#: refused (verdict REFUSED, fails ``verify``) unless ``Check.wide_reason`` says why.
WIDE_ACCEPTANCE = 0.5
REFUSED = "REFUSED"
#: Confidence level of a FINDING (a claim against a paper): stricter than the fit's 95%.
FINDING_LEVEL = 0.99
#: A check that cannot detect an exponent error of this size (either way it judges) is
#: labelled UNDERPOWERED.
UNDERPOWERED_AT = 0.25
_GRIDS = {False: "quick", True: "full"}


@dataclass(frozen=True)
class CheckResult:
    experiment: str
    bound: str
    variable: str
    kind: str
    expect: str
    local: float            # bound's slope fitted over the kept grid
    asymptotic: float       # bound's exact exponent as variable → ∞ (NaN: bounded variable)
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
    # What the verdict rests on (shown beside it): A, the smallest detectable exponent errors
    # (down, up), labels (UNDERPOWERED, REGRESSION GUARD, REDEFINED), where the band and the
    # tolerance come from, and the check's history when it was redefined after a failure.
    acceptance: tuple[float, float] | None = None
    detectable: tuple[float, float] | None = None
    labels: tuple[str, ...] = ()
    sources: str = ""
    history: str = ""

    @property
    def ok(self) -> bool:
        """Whether this result lets ``verify`` succeed."""
        return self.verdict in OK_VERDICTS

    @property
    def shown_verdict(self) -> str:
        """The verdict with what it is a finding of and its labels, as tables show it."""
        v = self.verdict
        if self.finding_on and v in ("FINDING", NOT_REPRODUCED, INCONCLUSIVE):
            v += f" ({self.finding_on})"
        return v + "".join(f" [{x}]" for x in self.labels)


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


#: The statistics' families whose exact laws :func:`noise_interval` knows: Gaussian noise gives
#: S = Σ(e/σ)² ~ χ²_k, Laplace noise S = Σ|e|/b ~ Gamma(k, 1) (the rows' ``noise_<family>_<ch>``
#: columns, written by :mod:`algorithms.noise_meter`, whose families must be these).
FAMILIES = ("gauss", "laplace")


def _noise_channels(keys) -> list[tuple[str, str]]:
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


def _band(local: float, asym: float) -> tuple[float, float]:
    """The band between the local slope and the asymptotic exponent (the local slope alone
    when there is no asymptotic exponent: a bounded variable, or one entering through values)."""
    if math.isnan(asym):
        return local, local
    return min(local, asym), max(local, asym)


def acceptance_interval(kind: str, local: float, asym: float, tol: float
                        ) -> tuple[float, float]:
    """A check's acceptance interval A: [lo − tol, hi + tol] (two-sided) or (−∞, hi + tol]
    (one-sided: an upper bound's slope may be beaten), [lo, hi] the band of :func:`_band`."""
    lo, hi = _band(local, asym)
    return (lo - tol if kind == "two-sided" else -math.inf), hi + tol


def _state(ci: tuple[float, float], a: tuple[float, float]) -> str:
    """``pass``: the whole interval ``ci`` lies inside ``a``; ``deviates``: wholly outside;
    ``inconclusive``: it straddles an edge."""
    lo, hi = ci
    if a[0] <= lo and hi <= a[1]:
        return "pass"
    if hi < a[0] or lo > a[1]:
        return "deviates"
    return "inconclusive"


def _fmt_interval(a: tuple[float, float]) -> str:
    left = "(−∞" if a[0] == -math.inf else f"[{a[0]:+.3f}"
    return f"{left}, {a[1]:+.3f}]"


def _resolve(observed: SlopeFit, half_width: float, edges: tuple[float, ...],
             seeds: int | None) -> str:
    """What would decide an inconclusive slope: its CI must shrink below the point estimate's
    distance to the nearest edge.  The half-width scales as 1/√seeds and, at a fixed number of
    points, as 1/sd(log x), so the factor f = half-width/distance gives f² times the seeds or
    an f times wider log-grid span, if the estimate stays where it is."""
    s = observed.slope
    dist = min((abs(s - e) for e in edges if math.isfinite(e)), default=math.inf)
    if not half_width > 0 or not math.isfinite(dist):
        return ""
    if dist < 0.02 * half_width:
        return (f"; to resolve: the estimate {s:+.3f} sits on an edge of the interval "
                f"(distance {dist:.3f}), so no affordable run decides it")
    f = half_width / dist
    x = np.asarray(observed.x, dtype=float)
    decades = float(np.log10(x.max() / x.min()))
    seeds_txt = (f"{math.ceil(seeds * f * f)} seeds instead of {seeds}" if seeds
                 else f"{f * f:.1f}× the seeds")
    far = " (out of reach: it stays INCONCLUSIVE unless the estimate moves)" if f > 10 else ""
    return (f"; to resolve: CI half-width {half_width:.3f} must fall below {dist:.3f} "
            f"(the estimate's distance to the nearest edge): ≈ {seeds_txt}, or a log-grid span "
            f"of {decades * f:.2g} decades instead of {decades:.2g} at the same number of "
            f"points{far}")


def detectable_exponent_error(result: CheckResult,
                              kept: tuple[float, ...] | None = None) -> tuple[float, float] | None:
    """The smallest exponent errors e < 0 and e > 0 this check would detect on these data.

    A bug that multiplies the metric by v^e (v the swept variable) moves the fitted slope and
    both ends of its CI by exactly e and every level ratio by v^e.  The check stops passing once
    the shifted CI leaves its acceptance interval (:func:`acceptance_interval`: both ends for a
    two-sided check, only the upper one for a one-sided one) or once some ratio·v^e leaves the
    level band.  Returns ``(down, up)``: the largest undetected negative and positive e bound
    (−inf/inf: never detected in that direction); None for ``reject`` checks and for contrasts
    (no slope).
    """
    if result.kind == "reject" or result.kind in CONTRAST_KINDS:
        return None
    a = acceptance_interval(result.kind, result.local, result.asymptotic, result.tolerance)
    up = a[1] - result.observed.ci_high
    down = a[0] - result.observed.ci_low
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


def underpowered(result: CheckResult) -> bool:
    """Whether a check expected to hold cannot detect an exponent error of ±UNDERPOWERED_AT in a
    direction it judges (a one-sided check judges only the upward one)."""
    if result.kind == "reject" or result.kind in CONTRAST_KINDS or result.expect != "hold":
        return False
    det = detectable_exponent_error(result)
    if det is None:
        return False
    down, up = det
    return up >= UNDERPOWERED_AT or (result.kind == "two-sided" and down <= -UNDERPOWERED_AT)


def labels(check: Check, result: CheckResult) -> tuple[str, ...]:
    """What a verdict rests on, shown beside it: UNDERPOWERED (:func:`underpowered`),
    REGRESSION GUARD (a band or tolerance calibrated from data), REDEFINED (``Check.history``),
    REFERENCE competitor."""
    out = []
    if underpowered(result):
        out.append("UNDERPOWERED")
    if check.kind != "reject" and "calibration" in (check.level_source, check.tolerance_source):
        out.append("REGRESSION GUARD")
    if check.history:
        out.append("REDEFINED")
    return tuple(out)


def _too_wide(check: Check, local: float, asym: float) -> str:
    """Why ``check``'s acceptance interval is too wide for any plausible bug to fail it (it lets
    the slope exceed the bound's local slope, or for a two-sided check fall below it, by more
    than WIDE_ACCEPTANCE), or "" when it is not, or when ``Check.wide_reason`` says why."""
    if check.kind == "reject" or check.wide_reason:
        return ""
    a = acceptance_interval(check.kind, local, asym, check.tolerance)
    up, down = a[1] - local, local - a[0]
    if up > WIDE_ACCEPTANCE or (check.kind == "two-sided" and down > WIDE_ACCEPTANCE):
        return (f"acceptance interval {_fmt_interval(a)} lets the slope differ from the bound's "
                f"local slope {local:+.3f} by up to {max(up, down if check.kind == 'two-sided' else 0):.2f} "
                f"> {WIDE_ACCEPTANCE} with no wide_reason: no plausible bug could fail it")
    return ""


def _sources(check: Check) -> str:
    """Where the check's tolerance and level band come from, as shown beside the verdict."""
    out = f"tolerance: {check.tolerance_source}"
    if check.level is not None:
        out += f"; level band: {check.level_source}"
    return out


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
                f"{'inside' if ok else 'OUTSIDE'} band [{lo:g}, {hi:g}] ({check.level_source})")


def _judge_reject(observed: SlopeFit, local: float, asym: float, tol: float,
                  reference: str = "", seeds: int | None = None) -> tuple[str, str]:
    """REJECTED when the whole CI lies outside the competitor's own [c − tol, c + tol] at its
    local slope and (where the variable can go to ∞) its asymptotic exponent: a competitor bent
    by log factors or lower-order terms must not escape on either.  NOT REJECTED when the whole
    CI lies inside one of them; INCONCLUSIVE otherwise."""
    ci = (observed.ci_low, observed.ci_high)
    cands = [("local slope", local)] + ([] if math.isnan(asym) else [("asymptotic", asym)])
    states = {name: _state(ci, (c - tol, c + tol)) for name, c in cands}
    words = {"deviates": "ruled out", "pass": "NOT ruled out (CI inside its ±tol)",
             "inconclusive": "not decided (CI straddles its ±tol)"}
    where = ", ".join(f"{name} {c:+.3f} {words[states[name]]}" for name, c in cands)
    if math.isnan(asym):
        where += "; no asymptotic exponent in this variable (local only)"
    if all(st == "deviates" for st in states.values()):
        verdict, extra = "REJECTED", ""
    elif any(st == "pass" for st in states.values()):
        verdict, extra = "NOT REJECTED", ""
    else:
        verdict = INCONCLUSIVE
        edges = tuple(e for _, c in cands for e in (c - tol, c + tol))
        extra = _resolve(observed, observed.half_width, edges, seeds)
    msg = f"competing rate: {where} (95% CI {observed}, tolerance {tol}){extra}"
    if reference:
        return REFERENCE, (f"reference only, its assumptions do not hold here ({reference}); "
                           f"the data alone would give {verdict}: {msg}")
    return verdict, msg


def _judge_slope(check: Check, observed: SlopeFit, local: float, asym: float,
                 strict: SlopeFit | None = None, seeds: int | None = None
                 ) -> tuple[str, str]:
    """The slope's state (``pass``, ``deviates``, ``inconclusive``) and its message.  With
    ``strict`` (the same fit at FINDING_LEVEL), a deviation must hold for the stricter
    interval too (a finding is a claim against a paper)."""
    a = acceptance_interval(check.kind, local, asym, check.tolerance)
    state = _state((observed.ci_low, observed.ci_high), a)
    side = "two-sided" if check.kind == "two-sided" else "one-sided, lower is allowed"
    where = {"pass": "inside", "deviates": "OUTSIDE", "inconclusive": "straddles an edge of"}
    msg = (f"95% CI {observed} {where[state]} A = {_fmt_interval(a)} ({side}; tol "
           f"{check.tolerance})")
    # A finding must deviate at the stricter level: what would decide it is that interval.
    half_width = observed.half_width if strict is None else strict.half_width
    if strict is not None and state == "deviates":
        s_state = _state((strict.ci_low, strict.ci_high), a)
        if s_state != "deviates":
            state = "inconclusive"
            msg += (f"; the {strict.level:.0%} CI {strict} a finding needs is not wholly "
                    "outside A")
        else:
            msg += f"; {strict.level:.0%} CI {strict} also outside"
    if state == "inconclusive":
        msg += _resolve(observed, half_width, a, seeds)
    return state, msg


def _judge_finding(finding_on: str | None, slope_state: str, level_ok: bool | None
                   ) -> tuple[str, str]:
    """The verdict of a check expected to be a finding, from its two parts.  A part the finding
    is declared on that passes makes the record stale (NOT REPRODUCED); a part it is not
    declared on that deviates is a FAIL (something else broke); FINDING needs every declared
    part to deviate and every other part to pass; anything else is INCONCLUSIVE."""
    # (finding_on is None only without a level band: Check refuses it otherwise)
    on = (finding_on or "slope").split("+")
    what = " and ".join(on)
    parts = {"slope": slope_state,
             "level": None if level_ok is None else ("pass" if level_ok else "deviates")}
    stale = [k for k in on if parts[k] == "pass"]
    broken = [k for k, st in parts.items() if k not in on and st == "deviates"]
    open_ = [k for k, st in parts.items() if st == "inconclusive"]
    if stale:
        return NOT_REPRODUCED, (f"; the recorded finding (of the {what}) is NOT reproduced: the "
                                f"{' and '.join(stale)} now passes")
    if broken:
        return "FAIL", (f"; finding of the {what} reproduced, but the {' and '.join(broken)}, "
                        "which must hold for this finding, does not")
    if open_:
        return INCONCLUSIVE, (f"; finding of the {what} neither reproduced nor refuted: the "
                              f"{' and '.join(open_)} is inconclusive")
    return "FINDING", f"; finding of the {what}"


def _judge(check: Check, observed: SlopeFit, local: float, asym: float,
           ratios: np.ndarray | None = None, full: bool = False,
           strict: SlopeFit | None = None, seeds: int | None = None) -> tuple[str, str]:
    if check.kind == "reject":
        return _judge_reject(observed, local, asym, check.tolerance, check.reference, seeds)
    finding = check.expectation(full) == "finding"
    declared = (check.finding_on or "slope").split("+") if finding else []
    # The strict level applies where a deviation is claimed against the paper.
    state, msg = _judge_slope(check, observed, local, asym,
                              strict if "slope" in declared else None, seeds)
    level_ok = None
    if check.level is not None and ratios is not None:
        level_ok, level_msg = _judge_level(check, ratios)
        msg += level_msg
    if finding:
        verdict, why = _judge_finding(check.finding_on, state, level_ok)
        return verdict, msg + why
    if state == "deviates" or level_ok is False:
        return "FAIL", msg
    return ("PASS" if state == "pass" else INCONCLUSIVE), msg


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
    # A finding is judged at the stricter FINDING_LEVEL: the same bootstrap at that level.
    strict = (fit_slope(kept, [per_point[v] for v in kept], aggregate=exp.aggregate,
                        level=FINDING_LEVEL, rng=np.random.default_rng(0))
              if any(c.expectation(full) == "finding" for c in exp.checks) else None)
    seeds = min(int(per_point[v].size) for v in kept)
    results = []
    for check in exp.checks:
        b = bounds.get(check.bound)
        bvals = [b(**_bound_values(exp, check, exp.point(v))) for v in kept]
        local, _ = ols_slope(np.array(kept), np.array(bvals))
        fixed = {k: val for k, val in _bound_values(exp, check, exp.point(kept[0])).items()
                 if k != exp.variable}
        dom = bounds_domain(exp.variable)
        if (exp.variable in b.variables and not dom.unbounded_above and dom.lo == 0
                and max(kept) <= 0.1 * dom.hi):
            # A grid a decade or more below the upper edge heads for the lower edge 0: the
            # band reaches the exact limit there (e.g. lam_gap = 1 − λ → 0).
            edge = b.edge_exponent(exp.variable, **fixed)
            asym = float(sp.N(edge))
            asym_expr = f"{sp.sstr(edge)} (limit {exp.variable} → 0; {exp.variable} ∈ {dom})"
        elif exp.variable in b.variables and not dom.unbounded_above:
            # "variable → ∞" is outside the domain: the band is the local slope alone.
            asym_expr, asym = f"n/a: {exp.variable} ∈ {dom} is bounded (local slope only)", math.nan
        elif exp.variable in b.variables:
            asym_expr = b.exponent(exp.variable, **fixed)
            asym = float(sp.N(asym_expr))
        elif np.ptp(np.log(bvals)) == 0.0:   # the bound does not depend on the variable at all
            asym_expr, asym = sp.Integer(0), 0.0
        else:  # the variable enters only through check.values (e.g. ε as a function of ρ)
            asym_expr, asym = "n/a", math.nan
            if check.kind != "reject":
                raise ValueError(f"{exp.id}: bound {b.id} has no symbol {exp.variable!r}")
        if not check.use_asymptotic and check.kind != "reject" and not math.isnan(asym):
            asym_expr = f"{sp.sstr(asym_expr)} (not used: band on the local slope alone)"
            asym = math.nan
        ratios = fit.y / np.asarray(bvals, dtype=float)
        verdict, msg = _judge(check, fit, local, asym, ratios, full, strict, seeds)
        wide = _too_wide(check, local, asym)
        if wide:
            verdict, msg = REFUSED, wide + "; " + msg
        expect = check.expectation(full)
        res = CheckResult(exp.id, b.id, exp.variable, check.kind, expect, local,
                          asym, str(sp.sstr(asym_expr)) if not isinstance(asym_expr, str)
                          else asym_expr, fit, check.tolerance, check.reason,
                          verdict, msg, check.level,
                          (float(ratios.min()), float(ratios.max())),
                          tuple(float(x) for x in ratios),
                          (check.finding_on or "slope") if expect == "finding" else "",
                          acceptance=(None if check.kind == "reject" else
                                      acceptance_interval(check.kind, local, asym,
                                                          check.tolerance)),
                          sources=_sources(check), history=check.history)
        res = dataclasses.replace(res, detectable=detectable_exponent_error(res))
        results.append(dataclasses.replace(res, labels=labels(check, res)))
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
