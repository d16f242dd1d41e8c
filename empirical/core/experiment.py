"""Declaring an experiment: which bound it checks, on which problem and algorithm, over which
grid, with which seeds, measuring what, and how its slope is judged (:class:`Check`, declared
in :mod:`empirical.core.check_declaration`).

An experiment's ``run`` is a module-level function ``run(point, rngs) -> dict`` that gets the
full parameter point (fixed parameters plus the swept variable) and one generator per seed, and
returns a dict of equal-length arrays (one entry per seed): the metric and any diagnostics (steps
taken, privacy spent, ...).  Experiments are looked up by id, so a worker process or a Dask
worker only needs the id and the point.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

# Check has a module of its own; its names stay importable here.
from empirical.core.check_declaration import (_EXPECT, _KINDS, FINDING_ON,  # noqa: F401
                                              LOWER, PRIVACY_UNITS, SOURCES, WIDE_ACCEPTANCE,
                                              Check)
from empirical.core.modules import check_code

__all__ = ["LOWER", "PRIVACY_UNITS", "FINDING_ON", "SOURCES", "Check", "Experiment", "Summary",
           "register", "register_summary", "summaries", "get", "ids", "experiments",
           "is_validated", "mark_validated", "full_only_ids",
           "check_full_only_reason"]


@dataclass(frozen=True)
class Experiment:
    """A parameter sweep of one algorithm on one problem, checked against ``bounds``.

    ``bound_values(point)`` maps an experiment point to the values of the bound's symbols, so
    predictions always come from ``bounds/`` at the experiment's own parameters.
    ``vacuous(point, bound_value)`` returns a reason when a grid point must be dropped (the bound
    is trivial there, or the theorem's conditions fail); dropped points are reported.

    ``private``: the algorithm claims differential privacy, so every stored row must carry its
    privacy columns ``<unit>_target`` (what the experiment asked for), ``<unit>_guarantee`` (the
    data-independent guarantee dp-accounting computes from the noise and sensitivity actually
    used) and ``<unit>_spent`` (what the releases actually compose to; ex post when stops are
    data dependent), for a unit in ``PRIVACY_UNITS``.  ``verify`` fails the experiment unless
    every row has guarantee = target (relative ``privacy_rtol``) and spent <= guarantee.
    Non-private runs (baselines, controls) set ``private=False``.

    ``code``: modules (names, e.g. ``("mylib.noise",)``; a package stands for every module in
    it) whose source can change the rows although ``run``'s module does not import them, or
    lies outside what the fingerprint follows (another package than the experiment's own): their
    source is folded into every stored row's fingerprint, so editing them recomputes the rows.
    Each must be found when the experiment is declared (ValueError naming ``code`` otherwise).

    ``full_only``: the reason, with its numbers (the quick grid's CI half-width against the
    tolerance, the seeds or span that would decide it), why the quick grid cannot decide any
    check at ``verify``'s budget while the full grid does.  ``verify`` and ``run`` without
    ``--full`` then skip the experiment and say so, counting it neither verified nor failed.

    ``version`` is optional and kept for compatibility: stored results carry a fingerprint of the
    code that produced them (empirical/run/runner.py), so changed code is recomputed without a bump.
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
    private: bool = True
    privacy_rtol: float = 1e-6
    code: tuple[str, ...] = ()
    full_only: str = ""

    def __post_init__(self) -> None:
        check_id(self.id)
        check_paper_key(self.paper)
        check_full_only_reason(self.id, self.full_only, allow_empty=True)
        object.__setattr__(self, "code", check_code(self.id, self.code))
        if not 0 < self.privacy_rtol < 1:
            raise ValueError(f"{self.id}: privacy_rtol must be in (0, 1), got {self.privacy_rtol}")
        if len(self.quick_grid) < 3 or len(self.full_grid) < 3:
            raise ValueError(f"{self.id}: a slope needs at least 3 grid points")
        if self.seeds < 2:
            raise ValueError(f"{self.id}: seeds must be >= 2 for a confidence interval")
        if not self.checks:
            raise ValueError(f"{self.id}: an experiment must declare at least one check")
        if any(c.calibration is not None and c.calibration.experiment != self.id
               for c in self.checks):
            raise ValueError(f"{self.id}: a check carries another experiment's calibration")
        if self.variable in self.fixed:
            raise ValueError(f"{self.id}: swept variable {self.variable!r} is also fixed")
        if (any(c.expectation(True) != c.expectation(False) for c in self.checks)
                and not self._full_only()):
            raise ValueError(f"{self.id}: a check's expect_full differs from its expect, but "
                             "full_grid has no value outside quick_grid, so the analysis "
                             "cannot tell the grids' rows apart")

    @property
    def bound(self) -> str:
        """The primary bound: that of the first check."""
        return self.checks[0].bound

    def grid(self, full: bool = False) -> tuple[float, ...]:
        return self.full_grid if full else self.quick_grid

    def _full_only(self) -> set[float]:
        return {float(v) for v in self.full_grid} - {float(v) for v in self.quick_grid}

    def is_full(self, values: Iterable[float]) -> bool:
        """Whether grid values (e.g. the rows' ``p_<variable>``) come from the full grid:
        some value lies on the full grid only.  Stored rows are always those of one grid
        (``runner.load_rows``), so this decides which expectation of a check applies
        (``Check.expect_full``) without every caller passing the grid along."""
        full_only = self._full_only()
        return any(float(v) in full_only for v in values)

    def runs_on(self, full: bool) -> bool:
        """Whether ``verify``/``run`` on this grid run the experiment (a ``full_only`` one is
        skipped on the quick grid)."""
        return full or not self.full_only

    def declare_full_only(self, reason: str) -> "Experiment":
        """Declare this experiment full-grid-only (``full_only = reason``) where the function
        that builds its declaration does not pass the field along; the object itself is marked
        (it may already be registered), and returned."""
        object.__setattr__(self, "full_only", check_full_only_reason(self.id, reason))
        return self

    def point(self, value: float) -> dict:
        p = dict(self.fixed)
        p[self.variable] = value
        return p


def check_full_only_reason(exp_id: str, reason: str, *, allow_empty: bool = False) -> str:
    """``reason`` if it states why a quick grid cannot decide: words and the numbers behind them
    (a digit); ``""`` only with ``allow_empty`` (not full-grid-only).  Else ValueError."""
    if allow_empty and reason == "":
        return reason
    if not isinstance(reason, str) or not reason.strip() or not re.search(r"\d", reason):
        raise ValueError(f"{exp_id}: full_only needs its reason with the numbers (the quick "
                         "grid's CI half-width against the tolerance, the seeds or span that "
                         f"would decide it), got {reason!r}")
    return reason


def full_only_ids(exps: Iterable[Experiment]) -> list[str]:
    """The ids of ``exps`` judged on the full grid only, in order."""
    return [e.id for e in exps if e.full_only]


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


#: An id (experiment, summary, audit target) is a file name under the results and figures
#: directories: dot-separated words of letters, digits, ``_`` and ``-``; never ``/``, ``..``,
#: an empty or a leading-dot component.
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_][A-Za-z0-9_\-]*)*")
_ID_MAX = 160


def check_id(value: object, what: str = "experiment id") -> str:
    """``value`` if it is a safe path component (see :data:`_ID`), else ValueError."""
    if not isinstance(value, str) or len(value) > _ID_MAX or not _ID.fullmatch(value):
        raise ValueError(f"{what} must be dot-separated words of letters, digits, '_' and '-' "
                         f"(at most {_ID_MAX} characters; no '/', no '..'), got {value!r}")
    return value


def check_paper_key(value: object) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", value):
        raise ValueError(f"paper must match [a-z][a-z0-9_]*, got {value!r}")
    return value


def _declared_in(obj) -> str:
    fn = getattr(obj, "bound_values", None) or getattr(obj, "plot", None)
    return getattr(fn, "__module__", None) or getattr(getattr(obj, "run", None),
                                                      "__module__", "") or ""


def _check_namespace(obj, what: str) -> None:
    """An id whose first component is a paper key belongs to that paper: it must declare that
    paper, and an id of dprates' own papers can only be declared by dprates' own modules (a
    ``--module`` cannot take over, or write into, a built-in experiment's directory)."""
    from bounds.core import paper_modules, papers

    head = obj.id.split(".", 1)[0]
    known = papers()
    if head in known and head != obj.paper:
        raise ValueError(f"{what} {obj.id!r} is in paper {head!r}'s namespace but declares "
                         f"paper {obj.paper!r}; name it {obj.paper}.<...>")
    # dprates' own papers are those its own packages declare (entry points into bounds/ or
    # empirical/); a plugin's modules live in its own package.
    builtin = head in known and any(m.startswith(("bounds.rates.", "empirical.papers."))
                                    for m in paper_modules(head))
    if builtin and not _declared_in(obj).startswith("empirical."):
        raise ValueError(f"{what} {obj.id!r} is in dprates' own paper {head!r}'s namespace; "
                         "a module of yours registers ids under its own paper key "
                         "(bounds.register_paper)")


def register(exp: Experiment) -> Experiment:
    check_id(exp.id)
    check_paper_key(exp.paper)
    _check_namespace(exp, "experiment id")
    if exp.id in _REGISTRY and _REGISTRY[exp.id] is not exp:
        raise ValueError(f"experiment id {exp.id!r} is already registered")
    _REGISTRY[exp.id] = exp
    _pin_code(exp)
    return exp


#: Called with each experiment as it is registered.  The runner adds the hook that fingerprints
#: the experiment's code now, while what is on disk is what was just imported (it pins each file
#: the first time it reads it); the core itself reads no file.
ON_REGISTER: list[Callable[[Experiment], None]] = []


def _pin_code(exp: Experiment) -> None:
    # Never fails a registration: the sweep fingerprints again and reports any problem there.
    for hook in ON_REGISTER:
        try:
            hook(exp)
        except Exception:  # pragma: no cover - e.g. a run defined in an unusual module
            pass


def register_summary(summary: Summary) -> Summary:
    check_id(summary.id, "summary id")
    check_paper_key(summary.paper)
    _check_namespace(summary, "summary id")
    if summary.id in _SUMMARIES and _SUMMARIES[summary.id] is not summary:
        raise ValueError(f"summary id {summary.id!r} is already registered")
    _SUMMARIES[summary.id] = summary
    return summary


def summaries(paper: str | None = None) -> list[Summary]:
    _load_all(paper)
    return [s for _, s in sorted(_SUMMARIES.items()) if paper is None or s.paper == paper]


def _load_all(paper: str | None = None) -> None:
    # One paper's module is imported only when its experiments are asked for, so a paper being
    # worked on never breaks another's runs.  Papers not encoded yet have no module and are
    # skipped; a researcher's papers (bounds.register_paper, entry points) load the same way.
    from bounds.core import check_paper, load_papers

    if paper is not None:
        check_paper(paper)
    load_papers("empirical", paper)


def ids(paper: str | None = None) -> list[str]:
    _load_all(paper)
    return sorted(i for i, e in _REGISTRY.items() if paper is None or e.paper == paper)


def get(exp_id: str) -> Experiment:
    from bounds.core import papers

    paper = exp_id.split(".", 1)[0] if isinstance(exp_id, str) else None
    if exp_id not in _REGISTRY:
        _load_all(paper if paper in papers() else None)
    try:
        return _REGISTRY[exp_id]
    except KeyError:
        import difflib

        _load_all()
        if exp_id in _REGISTRY:
            return _REGISTRY[exp_id]
        close = difflib.get_close_matches(str(exp_id), list(_REGISTRY), n=3, cutoff=0.3)
        hint = (f"; closest: {close}" if close else "") + (
            f"; paper {paper!r} is not known (a new paper: bounds.register_paper, or "
            "`dprates --module yourpkg.module`, see docs/extending.md)"
            if paper and paper not in papers() else "")
        raise KeyError(f"no experiment {exp_id!r}{hint}") from None


def experiments(paper: str | None = None) -> list[Experiment]:
    return [get(i) for i in ids(paper)]


_VALIDATED: dict[tuple[int, bool], Experiment] = {}


def is_validated(exp: Experiment, *, full: bool = False) -> bool:
    """Whether this process already validated ``exp`` (this very object) for this grid: then
    :func:`validate_experiment` returns at once, and a scheduler need not queue a validation
    (some build the problem at the grid's largest point, e.g. 30 s for kl.regr.n.k4_3)."""
    return _VALIDATED.get((id(exp), full)) is exp


def mark_validated(exp: Experiment, *, full: bool = False) -> bool:
    """Record that ``exp`` passed :func:`validate_experiment` elsewhere (a worker process running
    this process's code), so that a later validation here is skipped.  Only the registered
    object counts: the worker validated ``get(exp.id)``, not a copy the caller may have changed.
    Returns whether it was recorded."""
    if _REGISTRY.get(exp.id) is not exp:
        return False
    _VALIDATED[(id(exp), full)] = exp
    return True
