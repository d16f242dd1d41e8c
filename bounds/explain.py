"""The symbolic side explained: how a corollary follows from its theorem, and where one bound
dominates another (``dprates bounds derive ID`` and ``dprates bounds compare ID ID``).

* :func:`derive` walks a registered derivation step by step: the theorem's bound, the
  corollary's parameter choices substituted into it, the result simplified, and, in every
  variable, the substituted theorem's asymptotic exponent beside the corollary's; the verdict is
  :func:`bounds.compare.follows_from`'s, so the page and the tests cannot disagree.
* :func:`compare_bounds` says, in each swept variable, which bound is larger where: the
  crossover(s) as an expression in the other parameters (when sympy can solve
  first = second for the variable; otherwise it says why not), their numerical values at the
  stated parameters, the ratio at the stated point, and which bound dominates asymptotically
  (:func:`bounds.compare.compare` and :func:`bounds.compare.crossover`).

Derivations are data: :data:`DERIVATIONS` holds, for a paper's corollaries, the theorem, the
substitutions and the variables, copied from the statements the paper tests check.  Each
paper's bounds module registers its own with :func:`register_derivation` (KL: Cor 1, the
simplified forms, Thm 4's κ = 1, 2 cases, Thm 5's best/worst cases, Cor 1 (DP) from Thm 6;
linreg: Cor 3.3 and 3.8; KAN: Cor 5.6 from A_non and Thm E.1; SOSP: Thm 2 from the balance of
eq. 103-104); :func:`derivations` loads every paper and lists them.

This module knows nothing of experiments or numerical runs.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import sympy as sp

from bounds.compare import Comparison, compare, crossover, follows_from
from bounds.core import Bound, OutsideConditionsWarning, get, sym

__all__ = ["DerivationSpec", "DERIVATIONS", "register_derivation", "derivations", "derivations_of",
           "DerivationStep", "DerivationReport", "derive", "Region", "VariableComparison",
           "BoundComparison", "compare_bounds"]


# =============================================================================================
# Derivations: registry
# =============================================================================================
@dataclass(frozen=True)
class DerivationSpec:
    """``corollary`` follows from ``theorem`` when ``substitutions`` (theorem symbol name ->
    expression, or a function returning them, evaluated lazily because some choices are
    computed by the paper module) are made; exponents compared in ``variables`` with shape
    parameters ``fixed``."""

    corollary: str
    theorem: str
    substitutions: Mapping[str, object] | Callable[[], Mapping[str, object]]
    variables: tuple[str, ...]
    fixed: Mapping[str, object] = field(default_factory=dict)
    note: str = ""
    label: str = ""          # tells apart several derivations of one corollary (e.g. readings)

    def subs(self) -> dict[str, sp.Expr]:
        s = self.substitutions() if callable(self.substitutions) else self.substitutions
        return {k: sp.sympify(v) for k, v in dict(s).items()}


DERIVATIONS: list[DerivationSpec] = []


def register_derivation(spec: DerivationSpec) -> DerivationSpec:
    """Add ``spec`` (idempotent on (corollary, theorem, label))."""
    key = (spec.corollary, spec.theorem, spec.label)
    DERIVATIONS[:] = [d for d in DERIVATIONS if (d.corollary, d.theorem, d.label) != key]
    DERIVATIONS.append(spec)
    return spec


def derivations_of(bound_id: str) -> list[DerivationSpec]:
    """Registered derivations whose corollary is ``bound_id`` (KeyError naming the known ones
    when there is none)."""
    get(bound_id)                      # an unknown id is a KeyError with its closest matches
    found = [d for d in DERIVATIONS if d.corollary == bound_id]
    if not found:
        known = sorted({d.corollary for d in DERIVATIONS})
        children = sorted({d.corollary for d in DERIVATIONS if d.theorem == bound_id})
        hint = f"; corollaries derived from it: {children}" if children else ""
        raise KeyError(f"no derivation registered for {bound_id!r}{hint}; derivable: {known}")
    return found


def derivations() -> list[DerivationSpec]:
    """Every registered derivation: each paper's bounds module registers its own, so every
    paper's bounds are loaded first."""
    from bounds.core import load_papers

    load_papers("bounds")
    return list(DERIVATIONS)


# =============================================================================================
# Derivations: the steps
# =============================================================================================
@dataclass(frozen=True)
class DerivationStep:
    title: str
    text: str                  # plain text (sympy's str form)
    latex: str = ""


@dataclass(frozen=True)
class DerivationReport:
    """A derivation, step by step, and its verdict (:func:`bounds.compare.follows_from`'s)."""

    spec: DerivationSpec
    steps: tuple[DerivationStep, ...]
    exponents: dict            # var -> (substituted theorem's exponent, corollary's exponent)
    holds: bool
    tight: bool                # every exponent equal (not only ≤)

    def __bool__(self) -> bool:
        return self.holds

    def format(self) -> str:
        s = self.spec
        out = [f"{s.corollary} from {s.theorem}" + (f" [{s.label}]" if s.label else "")]
        if s.note:
            out.append(f"  ({s.note})")
        for i, st in enumerate(self.steps, 1):
            out.append(f"{i}. {st.title}")
            out += ["     " + ln for ln in st.text.splitlines()]
        verdict = ("HOLDS (exponents equal: tight)" if self.tight else
                   "HOLDS (the substituted theorem is at most the corollary)" if self.holds
                   else "DOES NOT FOLLOW")
        out.append(f"=> {verdict}")
        return "\n".join(out)


def _tidy(expr: sp.Expr) -> sp.Expr:
    # Cheap, predictable simplification: full sp.simplify can take minutes on the KL bounds.
    e = sp.powdenest(sp.powsimp(expr, force=True), force=True)
    return e if sp.count_ops(e) <= sp.count_ops(expr) else expr


def _short(v: sp.Expr) -> str:
    return f"{float(v):g}" if v.is_Float else str(v)


def _sym_of(theorem: Bound, name: str) -> sp.Symbol:
    return theorem.symbol(name) if name in theorem.variables else sym(name)


def _relation(et: sp.Expr, ec: sp.Expr, kind: str) -> str:
    diff = sp.simplify(et - ec)
    if diff == 0:
        return "="
    if kind == "upper" and diff.is_nonpositive:
        return "<"
    return "≠ (steeper)" if diff.is_positive else "≠"


def derive(bound_id: str, theorem: str | None = None, label: str | None = None
           ) -> list[DerivationReport]:
    """Every registered derivation of ``bound_id`` (from ``theorem`` / with ``label`` only,
    when given), each step by step."""
    specs = [s for s in derivations_of(bound_id)
             if (theorem is None or s.theorem == theorem) and (label is None or s.label == label)]
    if not specs:
        raise KeyError(f"no derivation of {bound_id!r} from {theorem!r} (label {label!r}); "
                       f"registered: {[(s.theorem, s.label) for s in derivations_of(bound_id)]}")
    return [_derive_one(s) for s in specs]


def _derive_one(spec: DerivationSpec) -> DerivationReport:
    cor, thm = get(spec.corollary), get(spec.theorem)
    subs = spec.subs()
    fixed = {k: sp.sympify(v) for k, v in spec.fixed.items()}
    steps = [DerivationStep(f"Theorem {thm.id} ({thm.source}):", f"{thm.quantity} ≤ {thm.expr}",
                            sp.latex(thm.expr))]
    if subs:
        lines = "\n".join(f"{k} := {v}" for k, v in subs.items())
        steps.append(DerivationStep(f"Corollary {cor.id}'s parameter choices:", lines))
    else:
        steps.append(DerivationStep(f"Corollary {cor.id} makes no parameter choice:",
                                    "the theorem's own rate, log factors and constants dropped"))
    substituted = thm.expr.subs({_sym_of(thm, k): v for k, v in subs.items()})
    tidy = _tidy(substituted)
    steps.append(DerivationStep("Substituted and simplified:", str(tidy), sp.latex(tidy)))
    if fixed:
        steps.append(DerivationStep("Exponents at shape parameters:",
                                    ", ".join(f"{k} = {_short(v)}" for k, v in fixed.items())))
    der = follows_from(cor, thm, subs, spec.variables, **fixed)
    rows = []
    for v, (et, ec) in der.exponents.items():
        rows.append(f"{v}: substituted theorem {et}  {_relation(et, ec, cor.kind)}  "
                    f"corollary {ec}")
    steps.append(DerivationStep(f"Asymptotic exponents (d log b / d log x as x → ∞; logs count "
                                f"0) against corollary {cor.id} = {cor.expr}:", "\n".join(rows)))
    tight = der.holds and all(sp.simplify(a - b) == 0 for a, b in der.exponents.values())
    return DerivationReport(spec, tuple(steps), dict(der.exponents), der.holds, tight)


# =============================================================================================
# Comparing two bounds: which dominates where
# =============================================================================================
@dataclass(frozen=True)
class Region:
    lo: float
    hi: float
    larger: str                # id of the larger bound on (lo, hi)


@dataclass(frozen=True)
class VariableComparison:
    var: str
    comparison: Comparison               # ratio at the point, exponent gap, asymptotic winner
    crossover_exprs: tuple[sp.Expr, ...]  # solutions of first = second for var (may be empty)
    crossover_note: str                   # why there is no expression, when there is none
    crossovers: tuple[float, ...]         # numerical crossovers in [lo, hi] at the stated values
    regions: tuple[Region, ...]
    lo: float
    hi: float
    crossover_values: tuple[float, ...] = ()   # each expression at the stated values


@dataclass(frozen=True)
class BoundComparison:
    first: str
    second: str
    at: dict
    variables: tuple[VariableComparison, ...]
    privacy_note: str = ""

    def format(self) -> str:
        f, s = self.first, self.second
        out = [f"{f}  vs  {s}", "at " + ", ".join(f"{k} = {v:g}" for k, v in sorted(self.at.items()))]
        if self.privacy_note:
            out.append(f"note: {self.privacy_note}")
        for vc in self.variables:
            c = vc.comparison
            out.append(f"\nin {vc.var}:")
            out.append(f"  at the point: {f}/{s} = {c.ratio:.4g}  ({c.larger} is larger)")
            out.append(f"  asymptotic exponent gap (first − second) = {c.exponent_gap}: "
                       + (f"{c.eventually_larger} is the larger as {vc.var} → ∞"
                          if c.eventually_larger else "same exponent (decided by constants/logs)"
                          if c.exponent_gap == 0 else "undecided (depends on shape parameters)"))
            if vc.crossover_exprs:
                out.append("  crossover(s) as expressions (value at the point):")
                out += [f"    {vc.var} = {e}   (= {v:.6g})"
                        for e, v in zip(vc.crossover_exprs, vc.crossover_values)]
            else:
                out.append(f"  crossover as an expression: {vc.crossover_note}")
            xs = ", ".join(f"{vc.var} = {x:.6g}" for x in vc.crossovers) or "none"
            out.append(f"  crossover(s) in [{vc.lo:g}, {vc.hi:g}] at the values above: {xs}")
            for r in vc.regions:
                what = r.larger if r.larger in (_UNDEFINED, "equal") else f"{r.larger} larger"
                out.append(f"    {vc.var} ∈ [{r.lo:.4g}, {r.hi:.4g}]: {what}")
        return "\n".join(out)


_NO_CLOSED_FORM = (sp.log, sp.Min, sp.Max, sp.Piecewise, sp.exp)


_SOLVED: dict[tuple, tuple[tuple[sp.Expr, ...], str]] = {}


def _crossover_exprs(first: Bound, second: Bound, var: str, timeout_ops: int = 400
                     ) -> tuple[tuple[sp.Expr, ...], str]:
    """Positive solutions of first = second for ``var``, in the other symbols (cached: a
    bound's expression does not change, and sympy's solve takes seconds)."""
    key = (first.id, sp.srepr(first.expr), second.id, sp.srepr(second.expr), var, timeout_ops)
    if key not in _SOLVED:
        _SOLVED[key] = _solve_crossover(first, second, var, timeout_ops)
    return _SOLVED[key]


def _solve_crossover(first: Bound, second: Bound, var: str, timeout_ops: int
                     ) -> tuple[tuple[sp.Expr, ...], str]:
    x = sym(var)
    a, b = first.expr.subs(first.symbol(var), x) if var in first.variables else first.expr, \
        second.expr.subs(second.symbol(var), x) if var in second.variables else second.expr
    for e in (a, b):
        for f in _NO_CLOSED_FORM:
            if any(x in node.free_symbols for node in e.atoms(f)):
                return (), f"none attempted: {f.__name__} in {var} (numerical crossovers below)"
    if sp.count_ops(a) + sp.count_ops(b) > timeout_ops:
        return (), "none attempted: expressions too large for a closed form"
    try:
        sols = sp.solve(sp.Eq(a, b), x, dict=False)
    except (NotImplementedError, ValueError, TypeError) as exc:
        return (), f"sympy could not solve it ({type(exc).__name__})"
    sols = [s for s in sols if s.is_positive is not False and not s.has(sp.I)]
    if not sols:
        return (), f"no positive solution for {var}"
    return tuple(sols), ""


def _value_at(expr: sp.Expr, at: Mapping[str, float]) -> float | None:
    """``expr`` at the stated values, when that is a positive real number."""
    try:
        v = complex(expr.subs({s: at[s.name] for s in expr.free_symbols if s.name in at}).evalf())
    except (TypeError, ValueError):
        return None
    return v.real if abs(v.imag) <= 1e-12 * max(1.0, abs(v.real)) and v.real > 0 else None


_UNDEFINED = "undefined (a bound is ≤ 0, not finite or not real there)"


def _scan(first: Bound, second: Bound, var: str, at: Mapping[str, float], lo: float, hi: float,
          points: int) -> tuple[list[float], list[Region]]:
    """Sign changes of log(first/second) on a log grid, each refined by core's crossover.
    Stretches where either bound is not a positive real (outside its theorem's range, e.g. a
    log factor below 1) are their own regions, bounded to the grid's resolution."""
    xs = [math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (points - 1))
          for i in range(points)]

    def logratio(v: float) -> float | None:
        pt = dict(at, **{var: v})
        try:
            fa = first(check_conditions=False, **{k: pt[k] for k in first.variables})
            fb = second(check_conditions=False, **{k: pt[k] for k in second.variables})
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            return None
        ok = all(isinstance(f, (int, float)) and math.isfinite(f) and f > 0 for f in (fa, fb))
        return math.log(fa) - math.log(fb) if ok else None

    def label(gv: float | None) -> str:
        if gv is None:
            return _UNDEFINED
        return first.id if gv > 0 else second.id if gv < 0 else "equal"

    g = [logratio(v) for v in xs]
    roots, regions, start = [], [], lo
    for i in range(points - 1):
        a, b = label(g[i]), label(g[i + 1])
        if a == b:
            continue
        edge = xs[i + 1]
        if g[i] is not None and g[i + 1] is not None and g[i] * g[i + 1] <= 0:
            r = crossover(first, second, var, at, xs[i], xs[i + 1], allow_mixed_privacy=True)
            if r is not None:
                roots.append(r)
                edge = r
        regions.append(Region(start, edge, a))
        start = edge
    regions.append(Region(start, hi, label(g[-1])))
    return roots, regions


def compare_bounds(first: str | Bound, second: str | Bound, at: Mapping[str, float],
                   variables: Sequence[str] | None = None, *, span: float = 1e6,
                   ranges: Mapping[str, tuple[float, float]] | None = None, points: int = 241,
                   allow_mixed_privacy: bool = False) -> BoundComparison:
    """Compare two bounds at ``at`` and along each variable of ``variables`` (default: the
    scale variables they share, else all they share): the ratio and asymptotic winner
    (:func:`bounds.compare.compare`), crossovers as expressions, numerical crossovers in
    ``ranges[var]`` (default [at[var]/span, at[var]·span]) and the regions between them."""
    a, b = get(first), get(second)
    if not (isinstance(span, (int, float)) and span > 1):
        raise ValueError(f"span must be a number > 1, got {span!r}")
    if not (isinstance(points, int) and points >= 3):
        raise ValueError(f"points must be an integer >= 3, got {points!r}")
    shared = [v for v in a.variables if v in b.variables]
    if variables is None:
        scale = [v for v in shared if v in a.scale_variables or v in b.scale_variables]
        variables = scale or shared
    if not variables:
        raise ValueError(f"{a.id} and {b.id} share no variable to compare along; name one "
                         f"(symbols: {list(a.variables)} / {list(b.variables)})")
    out, note = [], ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OutsideConditionsWarning)
        for var in variables:
            c = compare(a, b, var, at, allow_mixed_privacy=allow_mixed_privacy)
            note = note or c.privacy_note
            lo, hi = (ranges or {}).get(var, (at[var] / span, at[var] * span))
            if not 0 < lo < hi:
                raise ValueError(f"range of {var} must satisfy 0 < lo < hi, got ({lo}, {hi})")
            exprs, why = _crossover_exprs(a, b, var)
            # a root that is negative or complex at the stated values is not a crossover there
            vals = [(e, _value_at(e, at)) for e in exprs]
            if exprs and not any(v is not None for _, v in vals):
                why = f"the solutions of {a.id} = {b.id} are not positive reals at these values"
            exprs = tuple(e for e, v in vals if v is not None)
            values = tuple(v for _, v in vals if v is not None)
            roots, regions = _scan(a, b, var, at, lo, hi, points)
            out.append(VariableComparison(var, c, exprs, why, tuple(roots), tuple(regions),
                                          lo, hi, values))
    return BoundComparison(a.id, b.id, dict(at), tuple(out), note)
