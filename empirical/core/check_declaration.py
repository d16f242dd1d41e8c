"""How one fitted slope is judged against one bound: the :class:`Check` an experiment declares
(its kind, tolerance, level band, expectation and where each comes from), checked when
declared.  Re-exported by :mod:`empirical.core.experiment` and :mod:`empirical`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from empirical.core.calibration import Calibration

#: The mirror of ``one-sided``: the bound is a lower bound (the slope may not fall faster).
LOWER = "one-sided-lower"
_KINDS = ("two-sided", "one-sided", LOWER, "reject")
_EXPECT = ("hold", "finding")
#: What a finding check is a finding of (``Check.finding_on``).
FINDING_ON = ("slope", "level", "slope+level")
#: Where a tolerance or a level band comes from (``Check.tolerance_source``, ``level_source``):
#: a theorem's constant or its log factors, the instance's exact constant, or a calibration
#: run (then verdicts resting on it are regression guards, not checks of the theorem).
SOURCES = ("theorem", "instance", "calibration")
#: A check whose acceptance interval reaches farther than this from the bound's local slope, in
#: a direction it judges, is refused unless ``Check.wide_reason`` says why: at construction when
#: the tolerance alone reaches that far, at validation (the bound's slope over the grid) else.
WIDE_ACCEPTANCE = 0.5
#: Units a private experiment may state its privacy in: ρ-zCDP, or ε at the run's δ.
PRIVACY_UNITS = ("rho", "epsilon")


@dataclass(frozen=True)
class Check:
    """How one fitted slope is judged against one bound.

    kind
        ``two-sided``: the bound is tight on this instance (an upper bound matched by a lower
        bound, or an instance where the analysis is exact), so the observed slope must lie within
        ``tolerance`` of the band between the bound's local slope over the grid and its
        asymptotic exponent.  ``one-sided``: only an upper bound is claimed; the instance may be
        easier, so the observed slope must not exceed the band's upper end by more than
        ``tolerance``.  ``one-sided-lower`` (:data:`LOWER`): only a lower bound is claimed (the
        quantity falls at most as fast as the bound, or stays at least as large): the observed
        slope must not fall below the band's lower end by more than ``tolerance``; a flatter
        decay or a steeper growth is allowed.  ``reject``: a competing rate (prior work, the
        other term, the other reading of an erratum) that the same data must rule out: its
        slope must lie outside the confidence interval and more than ``tolerance`` from the
        observed slope.
    tolerance, reason
        The allowed deviation and *why* it is that large (log factors, seeds, grid).
    expect
        ``hold`` for a claim that should check out; ``finding`` when careful experiments showed
        it does not (then a failed check is reported as FINDING, documented in docs/errata.md,
        and does not fail ``dprates verify``).  This is the expectation on the quick grid.
    expect_full
        The expectation on the full grid (same values; None: as ``expect``), for a claim that
        holds in the quick grid's range and is contradicted past it (e.g. LR-E18:
        ``linreg.amb.d.privacy`` passes for d ≤ 64 and is a finding with d = 128, 256).  The
        analysis tells the grids apart by the rows' grid values (:meth:`Experiment.is_full`),
        so an experiment whose expectations differ must have a full-grid value outside its
        quick grid.
    finding_on
        What a finding is a finding *of* (only for a check expected to be a finding on some
        grid): ``"slope"`` (the slope deviates; a level band, if given, is still enforced: a
        level outside it FAILS), ``"level"`` (the slope must pass and the level must leave its
        band, e.g. a hidden constant that blows up) or ``"slope+level"`` (both must deviate).
        A finding that does not reproduce in every part declared is NOT REPRODUCED.  None: the
        slope, allowed only on a check without a level band (with one, ValueError: the band
        could otherwise never fail the check).
    values
        Optional map from the experiment's point to the bound's symbol values, when the bound
        needs different ones than the experiment's primary bound (e.g. a competitor's ``D``).
    level, level_reason
        Optional band ``(lo, hi)`` for the *level*: at every kept grid point the aggregated
        metric divided by the bound's value there must lie in ``[lo, hi]``.  A slope alone misses
        a wrong constant or a small exponent error over a short grid; the level does not.  The
        reason states where the band comes from (the bound's hidden constant, a calibration
        run, the instance's exact constant).  Not allowed on ``reject`` checks.
    level_source, tolerance_source
        Where the band and the tolerance come from, as data (one of ``SOURCES``): ``theorem``
        (a constant or log factor of the statement), ``instance`` (the instance's exact
        constant) or ``calibration`` (measured on runs: the verdict is a REGRESSION GUARD).
        ``level_source`` is required with a level band.
    history
        For a check redefined after it failed (a grid moved, a range split, a band changed):
        what it was, what failed and the erratum; shown beside its verdict.
    reference
        For a ``reject`` check whose competitor's assumptions do not hold on the instance (a
        convex lower bound on a strongly convex instance, a reading of a theorem that is not
        the theorem): why.  It is measured and drawn but shown as REFERENCE, never REJECTED.
    wide_reason
        Why an acceptance interval is allowed to be wide (``validate_experiment`` refuses a
        check that would pass a slope more than ``WIDE_ACCEPTANCE`` above the bound's local
        slope, or below it, in a direction the check judges, unless this states why).
    calibration
        For a level band calibrated from runs: the :class:`~empirical.core.calibration.Calibration`
        record it comes from (held-out seeds, stored as data per paper); ValueError when the
        record is of the judged seeds or its band is not ``level``.  A calibrated band without
        one was calibrated on the judged runs, and its sources say so.
    use_asymptotic
        False: the grid is far from the regime where the asymptotic exponent describes the
        bound, so the band is the local slope alone (a narrower acceptance interval; the
        result shows the exponent, unused).
    """

    bound: str
    kind: str
    tolerance: float
    reason: str
    expect: str = "hold"
    note: str = ""
    values: Callable[[Mapping[str, float]], dict] | None = None
    level: tuple[float, float] | None = None
    level_reason: str = ""
    expect_full: str | None = None
    finding_on: str | None = None
    level_source: str = ""
    tolerance_source: str = "theorem"
    history: str = ""
    reference: str = ""
    wide_reason: str = ""
    use_asymptotic: bool = True
    calibration: Calibration | None = None

    def expectation(self, full: bool = False) -> str:
        """``hold`` or ``finding`` on the quick (``full=False``) or the full grid."""
        return (self.expect_full or self.expect) if full else self.expect

    def expected_verdict_for(self, full: bool) -> str:
        """The verdict this check declares on that grid: REJECTED for a competitor (REFERENCE
        for one whose assumptions do not hold on the instance), FINDING
        for a recorded finding, PASS otherwise.  ``verify`` treats any other outcome as a
        regression."""
        if self.kind == "reject":
            return "REFERENCE" if self.reference else "REJECTED"
        return "FINDING" if self.expectation(full) == "finding" else "PASS"

    @property
    def expected_verdict(self) -> str:
        """The verdict declared on the quick grid (:meth:`expected_verdict_for`)."""
        return self.expected_verdict_for(False)

    def __post_init__(self) -> None:
        if self.level is not None:
            lo, hi = self.level
            if not (0 < lo < hi < float("inf")):
                raise ValueError(f"level must be a band (lo, hi) with 0 < lo < hi < inf, "
                                 f"got {self.level!r}")
            if self.kind == "reject":
                raise ValueError("a reject check has no level band (it is a competitor's rate)")
            if not self.level_reason.strip():
                raise ValueError("a level band must state its reason (level_reason)")
            if self.level_source not in SOURCES:
                raise ValueError(f"a level band must state its source (level_source, one of "
                                 f"{SOURCES}), got {self.level_source!r}")
        if self.calibration is not None:
            if self.level_source != "calibration":
                raise ValueError("a calibration record needs level_source='calibration'")
            self.calibration.validate(bound=self.bound, kind=self.kind, level=self.level)
        if self.tolerance_source not in SOURCES:
            raise ValueError(f"tolerance_source must be one of {SOURCES}, "
                             f"got {self.tolerance_source!r}")
        if self.reference and self.kind != "reject":
            raise ValueError("reference is for a reject check (a competitor shown as reference)")
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if not self.tolerance > 0:
            raise ValueError(f"tolerance must be in (0, inf), got {self.tolerance!r}")
        if self.kind != "reject" and self.tolerance > WIDE_ACCEPTANCE and not self.wide_reason:
            raise ValueError(f"tolerance {self.tolerance:g} > {WIDE_ACCEPTANCE}: an acceptance "
                             "interval that wide lets any plausible bug pass; state why "
                             "(wide_reason) or narrow it")
        if self.expect not in _EXPECT:
            raise ValueError(f"expect must be 'hold' or 'finding', got {self.expect!r}")
        if self.expect_full is not None and self.expect_full not in _EXPECT:
            raise ValueError(f"expect_full must be None, 'hold' or 'finding', "
                             f"got {self.expect_full!r}")
        self._check_finding_on()
        if not self.reason.strip():
            raise ValueError("every check must state the reason for its tolerance")

    def _check_finding_on(self) -> None:
        if self.finding_on is None:
            if (self.level is not None and self.kind != "reject"
                    and "finding" in (self.expect, self.expect_full)):
                # Else the band could never fail the check: say which part carries the finding
                # and the other part is enforced.
                raise ValueError(f"finding_on must be one of {FINDING_ON} for a finding with a "
                                 "level band (what the finding is a finding of)")
            return
        if self.finding_on not in FINDING_ON:
            raise ValueError(f"finding_on must be None or one of {FINDING_ON}, "
                             f"got {self.finding_on!r}")
        if self.kind == "reject" or "finding" not in (self.expect, self.expect_full):
            raise ValueError("finding_on is only for a check expected to be a finding on some "
                             "grid (expect or expect_full 'finding', kind not 'reject')")
        if "level" in self.finding_on and self.level is None:
            raise ValueError(f"finding_on={self.finding_on!r} needs a level band (level)")
