"""The asymptotic log-log exponent ``lim_{x→∞} d log b / d log x`` of a bound, computed exactly by
structural recursion over sums, products, powers, logs, ``Min`` and ``Max`` (logs contribute
0), with sympy's limit as the fallback."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Mapping

import sympy as sp


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



# ---------------------------------------------------------------------------------------------
# Memo of exponents at given parameter values
# ---------------------------------------------------------------------------------------------
#: Exponents of bounds at given values (Bound.exponent / edge_exponent), shipped with the code
#: and refreshed by ``python -m empirical.report.cache``: substituting the values and taking the
#: limit costs ~0.1 s each, and every ``verify`` asks the same ones (validation and analysis).
#: A key holds the bound's expression (srepr), the variable, the values, which limit, the
#: source of this module and of ``bounds/core.py``, and sympy's version, so an entry of other
#: code or another expression is simply not used: a stale file costs time, never a wrong exponent.
SHIPPED_EXPONENTS = Path(__file__).with_name("exponent_cache.json")
_SHIPPED: dict[str, str] | None = None
_CODE: list[str] = []


def _code() -> str:
    # Read once per process: the code that is running, not a file edited under it.
    if not _CODE:
        here = Path(__file__).parent
        blob = b"".join((here / f).read_bytes() for f in ("exponents.py", "core.py"))
        _CODE.append(hashlib.sha256(blob).hexdigest()[:16] + sp.__version__)
    return _CODE[0]


def exponent_key(expr_srepr: str, how: str, var: str, fixed: Mapping[str, object]) -> str:
    """Key of the exponent of the expression ``expr_srepr`` in ``var`` (``how``: "oo" for
    var → ∞, "0" for var → 0⁺) at the values ``fixed`` (reprs, so 0.1 and 0.1000001 differ)."""
    blob = json.dumps({"expr": expr_srepr, "how": how, "var": var, "code": _code(),
                       "fixed": sorted((k, repr(v)) for k, v in fixed.items())})
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def shipped_exponent(key: str) -> sp.Expr | None:
    """The shipped exponent under ``key``, or None.  The file is part of the code (it is never
    read from a results directory), so its sympy text is trusted to parse."""
    global _SHIPPED
    if _SHIPPED is None:
        try:
            rec = json.loads(SHIPPED_EXPONENTS.read_text())
            _SHIPPED = rec["entries"] if rec.get("code") == _code() else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            _SHIPPED = {}
    entry = _SHIPPED.get(key)
    text = entry.get("exponent") if isinstance(entry, dict) else None
    return sp.sympify(text) if isinstance(text, str) else None


def write_shipped(entries: Mapping[str, tuple[str, str, str, Mapping, sp.Expr]]) -> None:
    """Write :data:`SHIPPED_EXPONENTS` atomically (a temporary file, then a rename): by key,
    (bound id, "oo" or "0", variable, values, exponent), so each entry can be recomputed."""
    global _SHIPPED
    out = {k: {"bound": b, "how": how, "var": var, "fixed": dict(f),
               "exponent": sp.srepr(e)}
           for k, (b, how, var, f, e) in sorted(entries.items())}
    tmp = SHIPPED_EXPONENTS.with_suffix(".tmp")
    tmp.write_text(json.dumps({"code": _code(), "entries": out}, indent=0, sort_keys=True) + "\n")
    os.replace(tmp, SHIPPED_EXPONENTS)
    _SHIPPED = dict(out)
