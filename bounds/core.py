"""Shared core of ``bounds``: the ``Bound`` record, the bound registry and local log-log slopes
(comparing two bounds and deriving a corollary from its theorem: :mod:`bounds.compare`).  The
symbols and their domains (:mod:`bounds.symbols`), asymptotic exponents
(:mod:`bounds.exponents`) and the paper registry (:mod:`bounds.registry`) have modules of their
own; their names are importable from here too.

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

# The symbols and the asymptotic exponent live apart (bounds.symbols, bounds.exponents), as
# does the paper registry (bounds.registry); their names stay importable from here.
from bounds.exponents import asymptotic_exponent, exponent_key, shipped_exponent
from bounds.symbols import (_DOMAINS, _NONNEGATIVE, _SYMBOLS, POSITIVE,  # noqa: F401
                            UNIT_HALF_OPEN, UNIT_LEFT_OPEN, UNIT_OPEN, Domain, domain, sym)
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
        return self._memo("oo", var, fixed, lambda: sp.simplify(asymptotic_exponent(
            self.expr.subs(self._subs(fixed, allow_partial=True, exclude=var)), x)))

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
        return self._memo("0", var, fixed, lambda: sp.simplify(-asymptotic_exponent(
            self.expr.subs(self._subs(fixed, allow_partial=True, exclude=var)).subs(x, 1 / x),
            x)))

    def _memo(self, how: str, var: str, fixed: Mapping[str, object], compute) -> sp.Expr:
        """``compute()``, remembered per process and looked up first in the shipped exponents
        (:func:`bounds.exponents.shipped_exponent`): validation and analysis ask for the same
        exponents, and each costs a substitution and a limit."""
        memo = self._cache.setdefault("exponents", {})
        if "srepr" not in self._cache:
            self._cache["srepr"] = sp.srepr(self.expr)
        key = exponent_key(self._cache["srepr"], how, var, fixed)
        if key not in memo:
            hit = shipped_exponent(key)
            memo[key] = compute() if hit is None else hit
            self._cache.setdefault("exponent_specs", {})[key] = (how, var, dict(fixed))
        return memo[key]

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
