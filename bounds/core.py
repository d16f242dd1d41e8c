"""Shared core of ``bounds``: the ``Bound`` record, the paper and bound registries, symbols and
their domains, asymptotic exponents and local log-log slopes (comparing two bounds and deriving a
corollary from its theorem: :mod:`bounds.compare`).

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
import importlib
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import mpmath
import sympy as sp

# The paper registry lives apart (bounds.registry); its names stay importable from here.
from bounds.registry import (_DECLARED_BY, _INFO, _PLUGINS, ENTRY_POINT_GROUP,  # noqa: F401
                             LOAD_ERRORS, OptionalExtraMissing, PaperInfo, PaperLoadWarning,
                             check_paper, load_paper, load_papers, paper_info, paper_modules,
                             papers, register_paper)

__all__ = [
    "Bound",
    "Domain",
    "domain",
    "sym",
    "POSITIVE",
    "UNIT_HALF_OPEN",
    "UNIT_OPEN",
    "UNIT_LEFT_OPEN",
    "register",
    "get",
    "ids",
    "ENTRY_POINT_GROUP",
    "PaperInfo",
    "papers",
    "paper_info",
    "paper_modules",
    "register_paper",
    "load_paper",
    "load_papers",
    "LOAD_ERRORS",
    "OptionalExtraMissing",
    "PaperLoadWarning",
    "OutsideConditionsWarning",
    "privacy_notion",
    "asymptotic_exponent",
]

class OutsideConditionsWarning(UserWarning):
    """A bound was evaluated where its theorem's ``conditions`` do not hold.

    Evaluation outside the conditions *warns* (the number is still returned: exploring a rate
    beyond its theorem is legitimate); make it an error with
    ``warnings.simplefilter("error", OutsideConditionsWarning)``, or skip the check with
    ``check_conditions=False`` where the caller handles conditions itself.
    """


_NOTIONS = (("zCDP", re.compile(r"zCDP", re.I)),
            ("(ε, δ)-DP", re.compile(r"\(\s*(ε|eps|epsilon)\s*,\s*(δ|delta)\s*\)", re.I)),
            ("ε-DP", re.compile(r"(^|[^(,\w])(ε|eps|epsilon)-DP|pure DP", re.I)),
            ("non-private", re.compile(r"non-?private", re.I)))


def privacy_notion(text: str) -> str:
    """The privacy notion a ``Bound.privacy`` text states first (``zCDP``, ``(ε, δ)-DP``,
    ``ε-DP``, ``non-private``), with `` (user-level)`` when it says so; "" when it names none."""
    hits = [(m.start(), name) for name, rx in _NOTIONS if (m := rx.search(text or ""))]
    if not hits:
        return ""
    notion = min(hits)[1]
    return notion + (" (user-level)" if re.search(r"user[- ]level", text, re.I) else "")

# Shared symbol table.  All parameters of the papers are positive reals, except the noise
# correlation λ which may be 0 (independent noise).  One Symbol object per name, so that bounds
# from different papers can be compared and substituted into each other.
_NONNEGATIVE = {"lam"}
_SYMBOLS: dict[str, sp.Symbol] = {}


@dataclass(frozen=True)
class Domain:
    """The interval a parameter lives in.  A variable bounded above (λ ∈ [0, 1), δ ∈ (0, 1))
    cannot go to ∞, so it has no asymptotic log-log exponent (:meth:`Bound.exponent` refuses
    it); with a lower edge 0 it has one as it tends to 0 (:meth:`Bound.edge_exponent`)."""

    lo: float = 0.0
    hi: float = math.inf
    lo_closed: bool = False
    hi_closed: bool = False

    def __post_init__(self) -> None:
        if not (self.lo >= 0 and self.hi > self.lo):
            raise ValueError(f"a domain needs 0 <= lo < hi, got lo={self.lo!r}, hi={self.hi!r}")

    @property
    def unbounded_above(self) -> bool:
        return self.hi == math.inf

    def contains(self, v: float) -> bool:
        above = v >= self.lo if self.lo_closed else v > self.lo
        below = v <= self.hi if self.hi_closed else v < self.hi
        return bool(above and below)

    def __str__(self) -> str:
        hi = "∞" if self.hi == math.inf else f"{self.hi:g}"
        return (f"{'[' if self.lo_closed else '('}{self.lo:g}, {hi}"
                f"{']' if self.hi_closed and self.hi != math.inf else ')'}")


#: Domains every paper module may name: positive reals (the default), [0, 1), (0, 1), (0, 1].
POSITIVE = Domain()
UNIT_HALF_OPEN = Domain(0.0, 1.0, lo_closed=True)
UNIT_OPEN = Domain(0.0, 1.0)
UNIT_LEFT_OPEN = Domain(0.0, 1.0, hi_closed=True)
_DOMAINS: dict[str, Domain] = {"lam": UNIT_HALF_OPEN}


def sym(name: str, domain: Domain | None = None) -> sp.Symbol:
    """The shared sympy Symbol called ``name`` (positive, or nonnegative for ``lam``).

    ``domain``: the interval the parameter lives in (default: the positive reals).  A paper
    module declares each bounded parameter where it makes the symbol; declaring another
    domain for a name already declared is a ValueError (the symbol is shared by all papers)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"symbol name must be a Python identifier, got {name!r}")
    if domain is not None:
        known = _DOMAINS.get(name)
        if known is not None and known != domain:
            raise ValueError(f"symbol {name!r} is declared on {known}, not {domain}")
        _DOMAINS[name] = domain
    s = _SYMBOLS.get(name)
    if s is None:
        if name in _NONNEGATIVE:
            s = sp.Symbol(name, nonnegative=True, real=True)
        else:
            s = sp.Symbol(name, positive=True)
        _SYMBOLS[name] = s
    return s


def domain(name: str) -> Domain:
    """The declared domain of parameter ``name`` (the positive reals unless declared)."""
    return _DOMAINS.get(name, POSITIVE)


# --------------------------------------------------------------------------------------------
# Asymptotic exponent
# --------------------------------------------------------------------------------------------

def _limit_exponent(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """Fallback: lim_{t→∞} d log expr(e^t) / dt via sympy's limit."""
    t = sp.Dummy("t", positive=True)
    g = sp.expand_log(sp.log(expr.subs(x, sp.exp(t))), force=True)
    return sp.simplify(sp.limit(sp.diff(g, t), t, sp.oo))


def _limit_at_infinity(g: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """lim_{x→∞} g; for ``Min``/``Max`` (where sympy's series code can fail, e.g. on
    ``Min(√n, nε)`` in ε) the Min/Max of the arguments' limits."""
    if isinstance(g, (sp.Min, sp.Max)):
        return type(g)(*[_limit_at_infinity(a, x) for a in g.args])
    return sp.limit(g, x, sp.oo)


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
            lim = _limit_at_infinity(g, x)
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
    notion:      the privacy notion, when ``privacy`` does not name it plainly (one of
                 ``zCDP``, ``(ε, δ)-DP``, ``ε-DP``, ``non-private``, optionally followed by
                 `` (user-level)``); otherwise read from ``privacy`` (:func:`privacy_notion`).
                 :func:`compare` refuses bounds under different notions.
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
    notion: str = ""
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        paper, _, label = self.id.partition(":")
        if paper not in papers() or not label:
            raise ValueError(f"bound id must be '<paper>:<label>' with paper in {papers()} "
                             f"(a new paper: bounds.register_paper), got {self.id!r}")
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
    def privacy_notion(self) -> str:
        """``notion`` if given, else the notion ``privacy`` names (see :func:`privacy_notion`)."""
        return self.notion or privacy_notion(self.privacy)

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
        A known parameter (a symbol some bound uses) the bound does not depend on has exponent 0;
        a name no bound uses is a typo and raises ``KeyError``.
        """
        try:
            x = self.symbol(var)
        except KeyError:
            if var not in _SYMBOLS:
                close = difflib.get_close_matches(str(var), list(self.variables) + list(_SYMBOLS),
                                                  n=1, cutoff=0.5)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise KeyError(f"{self.id}: unknown symbol {var!r}: no bound uses it; this "
                               f"bound's symbols are {list(self.variables)}{hint}") from None
            return sp.Integer(0)
        if var in self.shape_parameters:
            raise ValueError(f"{self.id}: {var} appears in an exponent of the rate (a shape "
                             "parameter, like κ), so it has no log-log exponent; fix it instead")
        if not domain(var).unbounded_above:
            raise ValueError(f"{self.id}: {var} ∈ {domain(var)} cannot go to ∞, so it has no "
                             "asymptotic exponent; use local_slope, or edge_exponent for the "
                             f"limit {var} → {domain(var).lo:g}")
        e = self.expr.subs(self._subs(fixed, allow_partial=True, exclude=var))
        return sp.simplify(asymptotic_exponent(e, x))

    def edge_exponent(self, var: str, **fixed: float) -> sp.Expr:
        """Exact log-log exponent of the bound as ``var → 0⁺`` (the lower edge of a positive
        domain, e.g. lam_gap = 1 − λ → 0), other symbols held: ``a`` with bound ≈ var**a up to
        log factors.  ValueError for a domain whose lower edge is not 0."""
        x = self.symbol(var)
        if domain(var).lo != 0:
            raise ValueError(f"{self.id}: {var} ∈ {domain(var)} has no log-log limit at its "
                             "lower edge (not 0)")
        if var in self.shape_parameters:
            raise ValueError(f"{self.id}: {var} appears in an exponent of the rate (a shape "
                             "parameter, like κ), so it has no log-log exponent; fix it instead")
        e = self.expr.subs(self._subs(fixed, allow_partial=True, exclude=var))
        return sp.simplify(-asymptotic_exponent(e.subs(x, 1 / x), x))

    def local_slope(self, var: str, at: Mapping[str, float], *,
                    check_conditions: bool = True) -> float:
        """``d log b / d log var`` at the point ``at`` (which must give every symbol a value).

        Central difference in log space at 50 significant digits, so the result is accurate to
        ~1e-15 even across ``Min``/``Max`` (away from their kinks) and deep log factors.
        Outside ``conditions`` it warns (:class:`OutsideConditionsWarning`) unless
        ``check_conditions=False``.
        """
        self.symbol(var)  # KeyError for a variable the bound lacks
        vals = self._values(at)
        if check_conditions:
            self._warn_outside(at)
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

    def __call__(self, *, check_conditions: bool = True, **values: float) -> float:
        """Numeric value of the bound; every symbol must be given a value in its domain.

        Where the theorem's ``conditions`` fail the value is still returned, with an
        :class:`OutsideConditionsWarning`; ``check_conditions=False`` skips the test (for callers
        that decide on conditions themselves, like the harness dropping such grid points).
        Extra values (symbols the bound lacks) are ignored.
        """
        vals = self._values(values)
        if check_conditions:
            self._warn_outside(values)
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

    def _failed_conditions(self, values: Mapping[str, float]) -> list[str]:
        """Conditions that evaluate to False at ``values`` (ones needing absent values: skipped).

        Each condition is compiled once (mpmath at 30 digits, as ``__call__`` evaluates the
        bound): the harness tests conditions at every grid point, and symbolic substitution
        cost ~30 ms a call.  A condition the compiled form cannot decide (e.g. a complex
        intermediate) falls back to exact substitution.
        """
        if not self.conditions:
            return []
        failed = []
        for c, names, fn in _compiled_conditions(self):
            if not all(k in values for k in names):
                continue
            try:
                with mpmath.workdps(30):
                    ok = bool(fn(*[mpmath.mpf(float(values[k])) for k in names]))
            except (TypeError, ValueError, ZeroDivisionError):
                subs = {sym(k): (_rational(values[k]) if isinstance(values[k], float)
                                 else values[k]) for k in names}
                ok = c.subs(subs) not in (sp.false, False)
            if not ok:
                failed.append(sp.sstr(c))
        return failed

    def _warn_outside(self, values: Mapping[str, float]) -> None:
        failed = self._failed_conditions(values)
        if failed:
            warnings.warn(f"{self.id} evaluated outside its conditions: {'; '.join(failed)} "
                          f"fails at {dict(values)}", OutsideConditionsWarning, stacklevel=3)

    def _repr_latex_(self) -> str:
        """Jupyter display: the bound as mathematics, ``id: quantity ≤ expression``."""
        rel = {"upper": r"\le", "lower": r"\ge"}.get(self.kind, "=")
        return rf"$\displaystyle \texttt{{{self.id}}}:\quad \text{{bound}} {rel} {self.latex()}$"

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
            subs[s] = _rational(v) if isinstance(v, float) else v
        return subs


#: nsimplify of each float substituted so far.  ``nsimplify(float)`` is a pure function of the
#: float (a PSLQ search, ~ms) and the same values recur at every grid point of an experiment:
#: 37 % of the analyses' CPU without this memo.  NaN never hits
#: (NaN != NaN) and is recomputed, as before; 0.0 and -0.0 share an entry, both give 0.
_NSIMPLIFIED: dict[float, sp.Expr] = {}


def _rational(v: float) -> sp.Expr:
    hit = _NSIMPLIFIED.get(v)
    if hit is None:
        hit = _NSIMPLIFIED[v] = sp.nsimplify(v)
    return hit


_CONDITION_CACHE: dict[int, tuple] = {}


def _compiled_conditions(bound: "Bound") -> tuple:
    """``(condition, symbol names, numeric predicate)`` for each of ``bound``'s conditions."""
    hit = _CONDITION_CACHE.get(id(bound))
    if hit is not None and hit[0] is bound:
        return hit[1]
    out = []
    for c in bound.conditions:
        names = sorted(s.name for s in c.free_symbols)
        fn = sp.lambdify([sym(k) for k in names], c, modules="mpmath")
        out.append((c, tuple(names), fn))
    _CONDITION_CACHE[id(bound)] = (bound, tuple(out))
    return tuple(out)


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
    if paper is not None:
        check_paper(paper)
    _load_all(paper)
    return sorted(i for i in _REGISTRY if paper is None or i.startswith(paper + ":"))


def get(bound_id: str) -> Bound:
    """The bound registered under ``bound_id``; KeyError naming the closest ids otherwise."""
    if isinstance(bound_id, Bound):
        return bound_id
    paper = bound_id.split(":", 1)[0] if isinstance(bound_id, str) and ":" in bound_id else None
    if bound_id not in _REGISTRY:
        _load_all(paper if paper in papers() else None)
    try:
        return _REGISTRY[bound_id]
    except KeyError:
        _load_all()
        if bound_id in _REGISTRY:
            return _REGISTRY[bound_id]
        close = difflib.get_close_matches(bound_id, list(_REGISTRY), n=5, cutoff=0.4)
        raise KeyError(f"no bound {bound_id!r}; closest: {close or sorted(_REGISTRY)[:5]}") from None


def _load_all(paper: str | None = None) -> None:
    # Paper modules register their bounds on import; importing here keeps `bounds.get` usable
    # without the caller knowing which module defines which id.
    load_papers("bounds", paper)
