"""The symbols every paper's bounds are written in, one sympy Symbol per name shared by all
papers, and the interval (:class:`Domain`) each parameter lives in."""
from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

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

