"""Shared core of ``bounds``: the ``Bound`` record, its registry, asymptotic exponents,
local log-log slopes, comparison of two bounds and corollary-from-theorem checks.

Every rate in the five papers is a positive expression in positive parameters (n, d, ρ, ...),
so a bound is a sympy expression over positive symbols.  Two derived quantities are what the
empirical layer compares against:

* the *asymptotic exponent* ``lim_{x→∞} d log b / d log x`` (logs contribute 0), computed exactly
  by structural recursion over sums, products, powers, logs, ``Min`` and ``Max``;
* the *local slope* ``d log b / d log x`` at a point, which keeps every log factor and every
  lower-order term of the bound, evaluated numerically in high precision.

This module knows nothing of numpy runs or experiments.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import mpmath
import sympy as sp

__all__ = [
    "Bound",
    "sym",
    "register",
    "get",
    "ids",
    "PAPERS",
    "asymptotic_exponent",
    "Comparison",
    "compare",
    "crossover",
    "Derivation",
    "follows_from",
]

#: Paper keys, as used in bound ids ``<paper>:<label>``.
PAPERS: tuple[str, ...] = ("kan", "linreg", "sosp", "kl", "userlevel")

# Shared symbol table.  All parameters of the papers are positive reals, except the noise
# correlation λ which may be 0 (independent noise).  One Symbol object per name, so that bounds
# from different papers can be compared and substituted into each other.
_NONNEGATIVE = {"lam"}
_SYMBOLS: dict[str, sp.Symbol] = {}


def sym(name: str) -> sp.Symbol:
    """The shared sympy Symbol called ``name`` (positive, or nonnegative for ``lam``)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"symbol name must be a Python identifier, got {name!r}")
    s = _SYMBOLS.get(name)
    if s is None:
        if name in _NONNEGATIVE:
            s = sp.Symbol(name, nonnegative=True, real=True)
        else:
            s = sp.Symbol(name, positive=True)
        _SYMBOLS[name] = s
    return s


# --------------------------------------------------------------------------------------------
# Asymptotic exponent
# --------------------------------------------------------------------------------------------

def _limit_exponent(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """Fallback: lim_{t→∞} d log expr(e^t) / dt via sympy's limit."""
    t = sp.Dummy("t", positive=True)
    g = sp.expand_log(sp.log(expr.subs(x, sp.exp(t))), force=True)
    return sp.simplify(sp.limit(sp.diff(g, t), t, sp.oo))


def asymptotic_exponent(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """Exact exponent ``a`` such that ``expr = x**a`` up to log factors as ``x → ∞``.

    Rules (all terms of a bound are positive): a sum has the largest exponent of its terms, a
    product the sum, ``g**c`` (c free of x) ``c`` times that of g, ``log g`` exponent 0 unless g
    tends to 1, ``Min``/``Max`` the ``Min``/``Max`` of the exponents.  Symbolic exponents (κ) stay
    symbolic; a ``Max`` that sympy cannot decide is returned unevaluated.  Anything else falls
    back to sympy's ``limit`` of the logarithmic derivative.
    """
    expr = sp.sympify(expr)
    if not expr.has(x):
        return sp.Integer(0)
    if expr == x:
        return sp.Integer(1)
    if isinstance(expr, sp.Add):
        return _simplify_minmax(sp.Max(*[asymptotic_exponent(a, x) for a in expr.args]))
    if isinstance(expr, sp.Mul):
        return sp.simplify(sp.Add(*[asymptotic_exponent(a, x) for a in expr.args]))
    if isinstance(expr, sp.Pow):
        base, p = expr.args
        if not p.has(x):
            return sp.simplify(p * asymptotic_exponent(base, x))
        return _limit_exponent(expr, x)
    if isinstance(expr, sp.log):
        (g,) = expr.args
        eg = asymptotic_exponent(g, x)
        if eg.is_zero is False:
            return sp.Integer(0)
        if eg.is_zero:
            lim = sp.limit(g, x, sp.oo)
            if lim == 1:  # log(1 + u) ~ u with u → 0
                return asymptotic_exponent(sp.simplify(g - 1), x)
            return sp.Integer(0)
        return sp.Integer(0)  # symbolic exponent of g: log of a power is a log factor
    if isinstance(expr, sp.Piecewise):
        # Branch conditions on other parameters (e.g. κ < 2) stay symbolic; a branch that is
        # identically 0 contributes nothing to a sum, i.e. exponent −∞.
        if any(c.has(x) for _, c in expr.args):
            return _limit_exponent(expr, x)
        return sp.Piecewise(*[(-sp.oo if e == 0 else asymptotic_exponent(e, x), c)
                              for e, c in expr.args])
    if isinstance(expr, sp.Min):
        return _simplify_minmax(sp.Min(*[asymptotic_exponent(a, x) for a in expr.args]))
    if isinstance(expr, sp.Max):
        return _simplify_minmax(sp.Max(*[asymptotic_exponent(a, x) for a in expr.args]))
    return _limit_exponent(expr, x)


def _simplify_minmax(e: sp.Expr) -> sp.Expr:
    try:
        return sp.simplify(e)
    except Exception:  # pragma: no cover - sympy occasionally gives up on Max of rationals
        return e


# --------------------------------------------------------------------------------------------
# Bound
# --------------------------------------------------------------------------------------------

_KINDS = ("upper", "lower", "conversion", "identity")


@dataclass(frozen=True)
class Bound:
    """One rate from one paper: ``quantity ≤ expr`` (kind ``upper``) or ``≥`` (``lower``).

    Fields
    ------
    id:          ``<paper>:<label>``, e.g. ``kl:thm9``.
    expr:        sympy expression over the shared symbols (:func:`sym`), constants and log factors
                 kept where the paper states them (Õ/O constants the paper hides are 1).
    quantity:    what is bounded (e.g. "excess empirical risk F̃(w̄;S) − F̃(w*;S)").
    source:      paper, theorem label and section.
    assumptions: the theorem's hypotheses, in words.
    privacy:     privacy notion and neighbouring relation (e.g. "ρ-zCDP, replace-one").
    kind:        ``upper`` (achievability), ``lower`` (any private algorithm), ``conversion``
                 (a privacy-parameter map) or ``identity``.
    conditions:  sympy relationals that must hold for the bound to apply (checked by
                 :meth:`applies`), e.g. Theorem 4's ``L0² log(n√ρ/β)/(L1 n) ≤ √ρ``.
    notes:       readings chosen where the paper is ambiguous (see docs/errata.md).
    """

    id: str
    expr: sp.Expr
    quantity: str
    source: str
    assumptions: tuple[str, ...] = ()
    privacy: str = ""
    kind: str = "upper"
    conditions: tuple[sp.Basic, ...] = ()
    notes: str = ""
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        paper, _, label = self.id.partition(":")
        if paper not in PAPERS or not label:
            raise ValueError(f"bound id must be '<paper>:<label>' with paper in {PAPERS}, got {self.id!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "expr", sp.sympify(self.expr))
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        object.__setattr__(self, "conditions", tuple(self.conditions))

    # -- identity -----------------------------------------------------------------------------
    @property
    def paper(self) -> str:
        return self.id.partition(":")[0]

    @property
    def label(self) -> str:
        return self.id.partition(":")[2]

    @property
    def variables(self) -> tuple[str, ...]:
        """Names of the free symbols, sorted."""
        return tuple(sorted(s.name for s in self.expr.free_symbols))

    @property
    def shape_parameters(self) -> tuple[str, ...]:
        """Symbols that occur in an exponent (κ, τ): they shape the rate rather than scale it."""
        names = set()
        for p in self.expr.atoms(sp.Pow):
            names |= {s.name for s in p.exp.free_symbols}
        return tuple(sorted(names))

    @property
    def scale_variables(self) -> tuple[str, ...]:
        """Free symbols that are not shape parameters: those with a log-log exponent."""
        return tuple(v for v in self.variables if v not in self.shape_parameters)

    def symbol(self, name: str) -> sp.Symbol:
        """The Symbol called ``name`` in this bound; KeyError naming the available ones."""
        for s in self.expr.free_symbols:
            if s.name == name:
                return s
        raise KeyError(f"{self.id} has no symbol {name!r}; its symbols are {list(self.variables)}")

    def latex(self) -> str:
        return sp.latex(self.expr)

    # -- analysis -----------------------------------------------------------------------------
    def exponent(self, var: str, **fixed: float) -> sp.Expr:
        """Exact asymptotic log-log exponent of the bound as ``var → ∞``, other symbols held.

        ``fixed`` substitutes values first (e.g. ``kappa=sp.Rational(4, 3)``); unspecified
        symbols stay symbolic, so the result may be an expression such as ``-2*kappa/(4-kappa)``.
        A variable the bound does not depend on has exponent 0.
        """
        try:
            x = self.symbol(var)
        except KeyError:
            if var not in _SYMBOLS and not var.isidentifier():
                raise
            return sp.Integer(0)
        if var in self.shape_parameters:
            raise ValueError(f"{self.id}: {var} appears in an exponent of the rate (a shape "
                             "parameter, like κ), so it has no log-log exponent; fix it instead")
        e = self.expr.subs(self._subs(fixed, allow_partial=True, exclude=var))
        return sp.simplify(asymptotic_exponent(e, x))

    def local_slope(self, var: str, at: Mapping[str, float]) -> float:
        """``d log b / d log var`` at the point ``at`` (which must give every symbol a value).

        Central difference in log space at 50 significant digits, so the result is accurate to
        ~1e-15 even across ``Min``/``Max`` (away from their kinks) and deep log factors.
        """
        self.symbol(var)  # KeyError for a variable the bound lacks
        vals = self._values(at)
        f = self._log_lambda()
        names = self._ordered_names()
        with mpmath.workdps(50):
            h = mpmath.mpf("1e-12")
            x0 = mpmath.mpf(vals[var])
            args_p = [mpmath.mpf(vals[k]) for k in names]
            args_m = list(args_p)
            i = names.index(var)
            args_p[i] = x0 * mpmath.exp(h)
            args_m[i] = x0 * mpmath.exp(-h)
            try:
                lp, lm = f(*args_p), f(*args_m)
            except ZeroDivisionError:
                raise ValueError(f"{self.id}: undefined at {dict(at)} (division by zero)") from None
            if not (_is_finite_real(lp) and _is_finite_real(lm)):
                raise ValueError(f"{self.id}: log-slope in {var} is not finite at {dict(at)} "
                                 "(bound non-positive or undefined there)")
            slope = (lp - lm) / (2 * h)
            if not _is_finite_real(slope):
                raise ValueError(f"{self.id}: log-slope in {var} is not finite at {dict(at)} "
                                 "(bound non-positive or undefined there)")
            return float(mpmath.re(slope))

    def __call__(self, **values: float) -> float:
        """Numeric value of the bound; every symbol must be given a value in its domain."""
        vals = self._values(values)
        with mpmath.workdps(30):
            try:
                v = self._lambda()(*[mpmath.mpf(vals[k]) for k in self._ordered_names()])
            except ZeroDivisionError:
                raise ValueError(f"{self.id} is undefined at {values} (division by zero)") from None
            if not _is_finite_real(v):
                raise ValueError(f"{self.id} is not a finite real number at {values}")
            return float(mpmath.re(v))

    def applies(self, **values: float) -> bool:
        """Whether every condition of the theorem holds at ``values``."""
        subs = self._subs(values, allow_partial=True)
        for c in self.conditions:
            r = c.subs(subs)
            if r.free_symbols:
                raise ValueError(f"{self.id}: condition {c} needs values for "
                                 f"{sorted(s.name for s in r.free_symbols)}")
            if not bool(r):
                return False
        return True

    def describe(self, variables: Iterable[str] | None = None) -> str:
        """A multi-line human description: expression, exponents, assumptions, source."""
        lines = [f"{self.id}  [{self.kind} bound]", f"  bounds:      {self.quantity}",
                 f"  expression:  {sp.sstr(self.expr)}", f"  LaTeX:       {self.latex()}",
                 f"  source:      {self.source}"]
        if self.privacy:
            lines.append(f"  privacy:     {self.privacy}")
        for a in self.assumptions:
            lines.append(f"  assumes:     {a}")
        for c in self.conditions:
            lines.append(f"  condition:   {sp.sstr(c)}")
        for v in (variables or self.scale_variables):
            try:
                lines.append(f"  exponent in {v}: {sp.sstr(self.exponent(v))}")
            except Exception as exc:  # pragma: no cover - shown, not hidden
                lines.append(f"  exponent in {v}: could not be computed ({exc})")
        if self.notes:
            lines.append(f"  notes:       {self.notes}")
        return "\n".join(lines)

    # -- internals ----------------------------------------------------------------------------
    def _ordered_names(self) -> list[str]:
        return list(self.variables)

    def _lambda(self):
        if "f" not in self._cache:
            syms = [self.symbol(k) for k in self._ordered_names()]
            self._cache["f"] = sp.lambdify(syms, self.expr, modules="mpmath")
        return self._cache["f"]

    def _log_lambda(self):
        if "logf" not in self._cache:
            syms = [self.symbol(k) for k in self._ordered_names()]
            self._cache["logf"] = sp.lambdify(syms, sp.log(self.expr), modules="mpmath")
        return self._cache["logf"]

    def _values(self, values: Mapping[str, float]) -> dict[str, float]:
        names = set(self.variables)
        missing = names - set(values)
        if missing:
            raise ValueError(f"{self.id} needs values for {sorted(missing)}")
        out = {}
        for k in names:
            v = values[k]
            v = v if isinstance(v, sp.Basic) else float(v)
            fv = float(v)
            s = self.symbol(k)
            if not math.isfinite(fv) or (s.is_positive and fv <= 0) or fv < 0:
                rng = "[0, ∞)" if k in _NONNEGATIVE else "(0, ∞)"
                raise ValueError(f"{k} must be a finite number in {rng}, got {values[k]!r}")
            out[k] = v
        return out

    def _subs(self, values: Mapping[str, float], allow_partial: bool = False,
              exclude: str | None = None) -> dict:
        subs = {}
        for k, v in values.items():
            if k == exclude:
                continue
            try:
                s = self.symbol(k)
            except KeyError:
                if allow_partial:
                    continue
                raise
            subs[s] = sp.nsimplify(v) if isinstance(v, float) else v
        return subs


def _is_finite_real(v) -> bool:
    try:
        c = mpmath.mpc(v)
    except TypeError:
        return False
    if not mpmath.isfinite(c.real):
        return False
    return abs(c.imag) <= 1e-30 * max(1.0, abs(c.real))


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

_REGISTRY: dict[str, Bound] = {}


def register(bound: Bound) -> Bound:
    """Add ``bound`` to the registry; a second bound under the same id is an error."""
    if bound.id in _REGISTRY and _REGISTRY[bound.id] is not bound:
        raise ValueError(f"bound id {bound.id!r} is already registered")
    _REGISTRY[bound.id] = bound
    return bound


def ids(paper: str | None = None) -> list[str]:
    """All registered ids, sorted; with ``paper``, only that paper's."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    _load_all(paper)
    return sorted(i for i in _REGISTRY if paper is None or i.startswith(paper + ":"))


def get(bound_id: str) -> Bound:
    """The bound registered under ``bound_id``; KeyError naming the closest ids otherwise."""
    paper = bound_id.split(":", 1)[0] if isinstance(bound_id, str) and ":" in bound_id else None
    _load_all(paper if paper in PAPERS else None)
    try:
        return _REGISTRY[bound_id]
    except KeyError:
        _load_all()
        if bound_id in _REGISTRY:
            return _REGISTRY[bound_id]
        close = difflib.get_close_matches(bound_id, list(_REGISTRY), n=5, cutoff=0.4)
        raise KeyError(f"no bound {bound_id!r}; closest: {close or sorted(_REGISTRY)[:5]}") from None


#: bounds/<module>.py of each paper.  A paper's module is imported only when one of its ids is
#: asked for (or all ids are), so one paper's module never stands in the way of another's.
PAPER_MODULES: dict[str, str] = {
    "kan": "kan_correlated_noise",
    "linreg": "linreg_adaptive_clipping",
    "sosp": "sosp_nonconvex",
    "kl": "kl_condition",
    "userlevel": "user_level_sco",
}


def _load_all(paper: str | None = None) -> None:
    # Paper modules register their bounds on import; importing here keeps `bounds.get` usable
    # without the caller knowing which module defines which id.  A paper not encoded yet has no
    # module file and is skipped.
    import importlib
    import importlib.util

    for key in ([paper] if paper else PAPERS):
        name = f"bounds.{PAPER_MODULES[key]}"
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


# --------------------------------------------------------------------------------------------
# Comparing bounds
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """Which of two bounds is larger at a point, and how they scale against each other."""

    first: str
    second: str
    var: str
    ratio: float                 # first / second at the point
    larger: str                  # id of the larger bound at the point
    exponent_gap: sp.Expr        # exponent(first) − exponent(second) as var → ∞
    eventually_larger: str | None  # id that dominates as var → ∞ (None if undecided or equal)


def compare(first: Bound, second: Bound, var: str, at: Mapping[str, float]) -> Comparison:
    """Compare two bounds at ``at`` and asymptotically in ``var``."""
    r = first(**{k: at[k] for k in first.variables}) / second(**{k: at[k] for k in second.variables})
    fixed = {k: v for k, v in at.items() if k != var}
    gap = sp.simplify(first.exponent(var, **fixed) - second.exponent(var, **fixed))
    if gap.is_positive:
        ev = first.id
    elif gap.is_negative:
        ev = second.id
    else:
        ev = None
    return Comparison(first.id, second.id, var, r, first.id if r >= 1 else second.id, gap, ev)


def crossover(first: Bound, second: Bound, var: str, at: Mapping[str, float],
              lo: float, hi: float) -> float | None:
    """The value of ``var`` in ``[lo, hi]`` where the two bounds are equal (None if no sign change).

    Solved by Brent's method on ``log(first/second)`` in ``log var``.
    """
    from scipy.optimize import brentq

    if not (0 < lo < hi):
        raise ValueError(f"need 0 < lo < hi, got lo={lo}, hi={hi}")

    def g(logx: float) -> float:
        pt = dict(at, **{var: math.exp(logx)})
        return math.log(first(**{k: pt[k] for k in first.variables})) - math.log(
            second(**{k: pt[k] for k in second.variables}))

    a, b = math.log(lo), math.log(hi)
    ga, gb = g(a), g(b)
    if ga == 0:
        return lo
    if ga * gb > 0:
        return None
    return math.exp(brentq(g, a, b, xtol=1e-12))


@dataclass(frozen=True)
class Derivation:
    """Result of checking that ``corollary`` follows from ``theorem`` under substitutions."""

    theorem: str
    corollary: str
    exponents: dict          # var -> (theorem exponent after substitution, corollary exponent)
    holds: bool

    def __bool__(self) -> bool:
        return self.holds


def follows_from(corollary: Bound, theorem: Bound, substitutions: Mapping[str, sp.Expr],
                 variables: Iterable[str], **fixed: float) -> Derivation:
    """Substitute the corollary's parameter choices into the theorem and compare exponents.

    ``substitutions`` maps theorem symbol names to expressions (e.g. ``{"T": n**2*rho/d}``).
    The corollary holds (up to log factors, which exponents ignore) when, in every variable, the
    substituted theorem's exponent equals the corollary's (upper bounds: is at most).
    """
    subs = {theorem.symbol(k) if k in theorem.variables else sym(k): sp.sympify(v)
            for k, v in substitutions.items()}
    derived = Bound(id=theorem.id + "_substituted", expr=theorem.expr.subs(subs),
                    quantity=theorem.quantity, source=theorem.source, kind=theorem.kind)
    exps = {}
    ok = True
    for v in variables:
        et = sp.simplify(derived.exponent(v, **fixed))
        ec = sp.simplify(corollary.exponent(v, **fixed))
        exps[v] = (et, ec)
        diff = sp.simplify(et - ec)
        if corollary.kind == "upper":
            ok &= bool(diff.is_nonpositive) or diff == 0
        else:
            ok &= diff == 0
    return Derivation(theorem.id, corollary.id, exps, bool(ok))
