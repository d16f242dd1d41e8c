"""The vocabulary of a verdict and the records an analysis returns.

The verdict words (PASS, FAIL, INCONCLUSIVE, FINDING, NOT REPRODUCED, REJECTED, REFERENCE,
REFUSED, INFO) and their confidence levels, :class:`CheckResult` (one slope check) and
:class:`Analysis` (one experiment), and the one decision every judge shares: whether an interval
lies wholly inside, wholly outside or across an acceptance interval (:func:`_state`), with what
would decide it when it lies across (:func:`_resolve`).  The rules themselves are
:mod:`empirical.core.checks` (slopes and levels) and :mod:`empirical.core.contrasts` (paired
gains).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from empirical.core.experiment import WIDE_ACCEPTANCE, Check, Experiment  # noqa: F401
from empirical.core.fitting import SlopeFit

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
#: A check whose acceptance interval reaches farther than WIDE_ACCEPTANCE (declared beside
#: ``Check``) from the bound's local slope is refused (verdict REFUSED at analysis, ValueError at
#: declaration) unless ``Check.wide_reason`` says why.
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


#: Kinds of :class:`Contrast`.  ``greater`` and ``increasing`` are one-sided claims and can fail;
#: ``report`` states a comparison nobody claims (a peer library) and never fails.
CONTRAST_KINDS = ("greater", "increasing", "report")
#: Verdict of a ``report`` contrast: printed with its numbers, lets ``verify`` succeed.
INFO = "INFO"


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
    right = "+∞)" if a[1] == math.inf else f"{a[1]:+.3f}]"
    return f"{left}, {right}"


def format_detectable(det: tuple[float, float] | None) -> str:
    """A check's detectable exponent errors as tables show them: ``down / up``, ∓∞ where no
    error in that direction would stop a PASS (the direction a one-sided check does not judge),
    "—" for a check without a slope (a competitor, a contrast)."""
    if det is None:
        return "—"
    down = "−∞" if det[0] == -math.inf else f"{det[0]:+.2f}"
    up = "+∞" if det[1] == math.inf else f"{det[1]:+.2f}"
    return f"{down} / {up}"


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
