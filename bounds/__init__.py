"""Symbolic rates of the five papers (sympy).

>>> import bounds
>>> b = bounds.get("kl:thm9")
>>> b.exponent("n")
-2

Each paper has a module (``bounds.kl_condition`` for the KL paper, ...) that registers its
bounds under ids ``<paper>:<label>``; ``bounds.core`` holds the shared machinery.  This layer
knows nothing of numpy runs or experiments.
"""
from bounds.core import (PAPERS, Bound, Comparison, Derivation, asymptotic_exponent, compare,
                         crossover, follows_from, get, ids, register, sym)

__all__ = ["PAPERS", "Bound", "Comparison", "Derivation", "asymptotic_exponent", "compare",
           "crossover", "follows_from", "get", "ids", "register", "sym"]
