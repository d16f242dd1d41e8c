"""Declaring an experiment: which bound it checks, on which problem and algorithm, over which
grid, with which seeds, measuring what, and how its slope is judged.

An experiment's ``run`` is a module-level function ``run(point, rngs) -> dict`` that gets the
full parameter point (fixed parameters plus the swept variable) and one generator per seed, and
returns a dict of equal-length arrays (one entry per seed): the metric and any diagnostics (steps
taken, privacy spent, ...).  Experiments are looked up by id, so a worker process or a Dask
worker only needs the id and the point.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Mapping

__all__ = ["Check", "Experiment", "Summary", "register", "register_summary", "summaries", "get",
           "ids", "experiments"]

_KINDS = ("two-sided", "one-sided", "reject")


@dataclass(frozen=True)
class Check:
    """How one fitted slope is judged against one bound.

    kind
        ``two-sided``: the bound is tight on this instance (an upper bound matched by a lower
        bound, or an instance where the analysis is exact), so the observed slope must lie within
        ``tolerance`` of the band between the bound's local slope over the grid and its
        asymptotic exponent.  ``one-sided``: only an upper bound is claimed; the instance may be
        easier, so the observed slope must not exceed the band's upper end by more than
        ``tolerance``.  ``reject``: a competing rate (prior work, the other term, the other
        reading of an erratum) that the same data must rule out: its slope must lie outside the
        confidence interval and more than ``tolerance`` from the observed slope.
    tolerance, reason
        The allowed deviation and *why* it is that large (log factors, seeds, grid).
    expect
        ``hold`` for a claim that should check out; ``finding`` when careful experiments showed
        it does not (then a failed check is reported as FINDING, documented in docs/errata.md,
        and does not fail ``dprates verify``).
    values
        Optional map from the experiment's point to the bound's symbol values, when the bound
        needs different ones than the experiment's primary bound (e.g. a competitor's ``D``).
    """

    bound: str
    kind: str
    tolerance: float
    reason: str
    expect: str = "hold"
    note: str = ""
    values: Callable[[Mapping[str, float]], dict] | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if not self.tolerance > 0:
            raise ValueError(f"tolerance must be in (0, inf), got {self.tolerance!r}")
        if self.expect not in ("hold", "finding"):
            raise ValueError(f"expect must be 'hold' or 'finding', got {self.expect!r}")
        if not self.reason.strip():
            raise ValueError("every check must state the reason for its tolerance")


@dataclass(frozen=True)
class Experiment:
    """A parameter sweep of one algorithm on one problem, checked against ``bounds``.

    ``bound_values(point)`` maps an experiment point to the values of the bound's symbols, so
    predictions always come from ``bounds/`` at the experiment's own parameters.
    ``vacuous(point, bound_value)`` returns a reason when a grid point must be dropped (the bound
    is trivial there, or the theorem's conditions fail); dropped points are reported.
    """

    id: str
    paper: str
    title: str
    variable: str
    quick_grid: tuple[float, ...]
    full_grid: tuple[float, ...]
    fixed: Mapping[str, float]
    seeds: int
    run: Callable[[dict, list], dict]
    metric: str
    bound_values: Callable[[Mapping[str, float]], dict]
    checks: tuple[Check, ...]
    problem: str = ""
    algorithm: str = ""
    vacuous: Callable[[Mapping[str, float], float], str | None] | None = None
    version: str = "1"
    aggregate: str = "gmean"
    description: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.quick_grid) < 3 or len(self.full_grid) < 3:
            raise ValueError(f"{self.id}: a slope needs at least 3 grid points")
        if self.seeds < 2:
            raise ValueError(f"{self.id}: seeds must be >= 2 for a confidence interval")
        if not self.checks:
            raise ValueError(f"{self.id}: an experiment must declare at least one check")
        if self.variable in self.fixed:
            raise ValueError(f"{self.id}: swept variable {self.variable!r} is also fixed")

    @property
    def bound(self) -> str:
        """The primary bound: that of the first check."""
        return self.checks[0].bound

    def grid(self, full: bool = False) -> tuple[float, ...]:
        return self.full_grid if full else self.quick_grid

    def point(self, value: float) -> dict:
        p = dict(self.fixed)
        p[self.variable] = value
        return p


@dataclass(frozen=True)
class Summary:
    """A figure drawn across several experiments (e.g. observed n-slope against κ).

    ``plot(analyses, root)`` receives the analyses of ``experiments`` (in that order) and the
    figures root, writes ``<root>/<paper>/<id>.png`` and returns its path.
    """

    id: str
    paper: str
    experiments: tuple[str, ...]
    plot: Callable


_REGISTRY: dict[str, Experiment] = {}
_SUMMARIES: dict[str, Summary] = {}
#: empirical/<module>.py for each paper whose experiments are encoded.
_PAPER_MODULES = ["kl_condition"]


def register(exp: Experiment) -> Experiment:
    if exp.id in _REGISTRY and _REGISTRY[exp.id] is not exp:
        raise ValueError(f"experiment id {exp.id!r} is already registered")
    _REGISTRY[exp.id] = exp
    return exp


def register_summary(summary: Summary) -> Summary:
    if summary.id in _SUMMARIES and _SUMMARIES[summary.id] is not summary:
        raise ValueError(f"summary id {summary.id!r} is already registered")
    _SUMMARIES[summary.id] = summary
    return summary


def summaries(paper: str | None = None) -> list[Summary]:
    _load_all()
    return [s for _, s in sorted(_SUMMARIES.items()) if paper is None or s.paper == paper]


def _load_all() -> None:
    for mod in _PAPER_MODULES:
        importlib.import_module(f"empirical.{mod}")


def ids(paper: str | None = None) -> list[str]:
    _load_all()
    return sorted(i for i, e in _REGISTRY.items() if paper is None or e.paper == paper)


def get(exp_id: str) -> Experiment:
    _load_all()
    try:
        return _REGISTRY[exp_id]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(exp_id, list(_REGISTRY), n=5, cutoff=0.3)
        raise KeyError(f"no experiment {exp_id!r}; closest: {close}") from None


def experiments(paper: str | None = None) -> list[Experiment]:
    return [get(i) for i in ids(paper)]
