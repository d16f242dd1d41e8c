"""The asymptotic log-log exponent ``lim_{x→∞} d log b / d log x`` of a bound, computed exactly by
structural recursion over sums, products, powers, logs, ``Min`` and ``Max`` (logs contribute
0), with sympy's limit as the fallback."""
from __future__ import annotations

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

