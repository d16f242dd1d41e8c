"""Comparing two bounds and deriving a corollary from its theorem.

:func:`compare` says which of two bounds (under the same privacy notion) is larger at a point and
how their local slopes and exponents differ; :func:`crossover` finds where they cross in one
variable; :func:`follows_from` checks that a corollary is its theorem under stated
substitutions (the steps :mod:`bounds.explain` prints).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import mpmath
import sympy as sp

from bounds.core import (Bound, OutsideConditionsWarning, asymptotic_exponent, get,  # noqa: F401
                         privacy_notion, sym)

__all__ = ["Comparison", "compare", "crossover", "Derivation", "follows_from"]


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
    privacy_note: str = ""       # set when the bounds are under different privacy notions


def _values_for(b: Bound, at: Mapping[str, float], what: str) -> dict:
    missing = sorted(set(b.variables) - set(at))
    if missing:
        raise ValueError(f"{what}: {b.id} needs values for {missing} (given {sorted(at)})")
    return {k: at[k] for k in b.variables}


def _check_notions(first: Bound, second: Bound, allow_mixed_privacy: bool) -> str:
    a, b = first.privacy_notion, second.privacy_notion
    if a and b and a != b:
        note = (f"{first.id} is under {a} but {second.id} under {b}: convert one first "
                "(e.g. the paper's zCDP <-> (ε, δ) conversion bounds)")
        if not allow_mixed_privacy:
            raise ValueError(f"compare: different privacy notions: {note}, or pass "
                             "allow_mixed_privacy=True to compare the raw rates anyway")
        return note
    return ""


def compare(first: Bound | str, second: Bound | str, var: str, at: Mapping[str, float], *,
            allow_mixed_privacy: bool = False) -> Comparison:
    """Compare two bounds (objects or ids) at ``at`` and asymptotically in ``var``.

    ``at`` must give every symbol of both bounds a value (ValueError naming what is missing).
    Bounds under different privacy notions (:attr:`Bound.privacy_notion`, e.g. ρ-zCDP against
    (ε, δ)-DP) are refused unless ``allow_mixed_privacy=True``; the result then says so in
    ``privacy_note``.
    """
    first, second = get(first), get(second)
    note = _check_notions(first, second, allow_mixed_privacy)
    if var not in first.variables and var not in second.variables:
        raise ValueError(f"compare: var {var!r} is a symbol of neither {first.id} "
                         f"{list(first.variables)} nor {second.id} {list(second.variables)}")
    at = dict(at)
    if var not in at and (var in first.variables or var in second.variables):
        raise ValueError(f"compare: needs a value for {var!r} in at (given {sorted(at)})")
    r = (first(**_values_for(first, at, "compare"))
         / second(**_values_for(second, at, "compare")))
    fixed = {k: v for k, v in at.items() if k != var}
    gap = sp.simplify(first.exponent(var, **fixed) - second.exponent(var, **fixed))
    if gap.is_positive:
        ev = first.id
    elif gap.is_negative:
        ev = second.id
    else:
        ev = None
    return Comparison(first.id, second.id, var, r, first.id if r >= 1 else second.id, gap, ev,
                      note)


def crossover(first: Bound | str, second: Bound | str, var: str, at: Mapping[str, float],
              lo: float, hi: float, *, allow_mixed_privacy: bool = False) -> float | None:
    """The value of ``var`` in ``[lo, hi]`` where the two bounds are equal (None if no sign change).

    Bounds may be given as ids.  Solved by Brent's method on ``log(first/second)`` in ``log var``.
    """
    from scipy.optimize import brentq

    first, second = get(first), get(second)
    _check_notions(first, second, allow_mixed_privacy)
    if not (0 < lo < hi):
        raise ValueError(f"need 0 < lo < hi, got lo={lo}, hi={hi}")
    probe = dict(at, **{var: lo})
    _values_for(first, probe, "crossover")
    _values_for(second, probe, "crossover")

    def g(logx: float) -> float:
        # Brent's iterates wander over [lo, hi]; conditions are the caller's business here.
        pt = dict(at, **{var: math.exp(logx)})
        return math.log(first(check_conditions=False, **{k: pt[k] for k in first.variables})
                        ) - math.log(second(check_conditions=False,
                                            **{k: pt[k] for k in second.variables}))

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
