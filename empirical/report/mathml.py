"""Mathematics for the report (empirical/report/__init__.py): sympy's presentation MathML, which browsers
render natively (no CDN), with two local fixes; and the notebook LaTeX of a ``Bound``.

Kept apart from the rest of the formatting because the exponents' cache
(:mod:`empirical.report.cache`) is keyed on this file's source: what is printed here is what is
cached.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

import bounds
from empirical.report.markdown import _e

__all__ = ["mathml", "bound_repr_latex", "exponents_html"]


class _Printer(MathMLPresentationPrinter):
    """Presentation MathML with Piecewise as a brace (sympy prints ``piecewise((…))``) and the
    weak-convexity constant ``L1t`` as L̃₁ (sympy would split it into ``L1t``)."""

    def _node(self, tag: str, text: str | None = None, *children):
        el = self.dom.createElement(tag)
        if text is not None:
            el.appendChild(self.dom.createTextNode(text))
        for c in children:
            el.appendChild(c)
        return el

    def _print_Piecewise(self, e):
        table = self._node("mtable")
        for expr, cond in e.args:
            if cond == sp.true:
                where = self._node("mtd", None, self._node("mtext", "\u2003otherwise"))
            else:
                # no-break spaces: MathML trims ordinary ones at the ends of <mtext>
                where = self._node("mtd", None, self._node("mtext", "\u2003if\u00a0"),
                                   self._print(cond))
            table.appendChild(self._node("mtr", None, self._node("mtd", None, self._print(expr)),
                                         where))
        brace = self._node("mo", "{")
        for k, v in (("fence", "true"), ("stretchy", "true"), ("symmetric", "true")):
            brace.setAttribute(k, v)
        return self._node("mrow", None, brace, table)

    def _print_Symbol(self, s, style="plain"):
        if s.name == "L1t":
            tilde = self._node("mover", None, self._node("mi", "L"), self._node("mo", "~"))
            return self._node("msub", None, tilde, self._node("mn", "1"))
        return super()._print_Symbol(s, style)


def mathml(expr, display: bool = False) -> str:
    """``expr`` as a ``<math>`` element (presentation MathML, rendered natively by browsers)."""
    body = _Printer().doprint(sp.sympify(expr))
    # sympy's writer does not escape the text of <mo> for strict inequalities.
    body = body.replace("<mo><</mo>", "<mo>&lt;</mo>").replace("<mo>></mo>", "<mo>&gt;</mo>")
    body = body.replace("<mo>-</mo>", "<mo>&#x2212;</mo>")    # a minus sign, not a hyphen
    mode = ' display="block"' if display else ""
    return f"<math{mode}>{body}</math>"


def _relation(bound: bounds.Bound) -> str:
    return {"upper": "≤", "lower": "≥"}.get(bound.kind, "=")


def bound_repr_latex(bound: bounds.Bound) -> str:
    """A ``Bound`` as LaTeX for notebooks (``_repr_latex_``): ``id: quantity ≤ expr``."""
    rel = {"upper": r"\le", "lower": r"\ge"}.get(bound.kind, "=")
    return rf"$\displaystyle \texttt{{{bound.id}}}:\quad (\cdot) {rel} {bound.latex()}$"


def exponents_html(b: bounds.Bound) -> str:
    """The bound's exact asymptotic exponent in each scale variable, as a MathML list (an
    exponent that cannot be computed is shown with the reason, not hidden)."""
    parts = []
    for v in b.scale_variables:
        try:
            parts.append(f"<li><b>{_e(v)}</b>: {mathml(b.exponent(v))}</li>")
        except Exception as exc:  # shown, not hidden
            parts.append(f"<li><b>{_e(v)}</b>: could not be computed ({_e(exc)})</li>")
    return "<ul>" + "".join(parts) + "</ul>" if parts else ""
