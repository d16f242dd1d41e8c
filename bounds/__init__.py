"""Symbolic rates of the five papers (sympy).

>>> import bounds
>>> b = bounds.get("kl:thm9")
>>> b.exponent("n")
-2

Each paper has a module (``bounds.rates.kl`` for the KL paper, ...) that registers its
bounds under ids ``<paper>:<label>``; ``bounds.core`` holds the shared machinery.  A researcher's
own paper registers its key with ``bounds.register_paper`` (or the ``dprates.papers`` entry-point
group) and lives in their own package: see docs/extending.md.  This layer
knows nothing of numpy runs or experiments.
"""
from bounds.compare import Comparison, Derivation, compare, crossover, follows_from
from bounds.core import (ENTRY_POINT_GROUP, Bound, Domain, OutsideConditionsWarning, PaperInfo,
                         asymptotic_exponent, domain, get, ids, paper_info, papers,
                         privacy_notion, register, register_paper, sym)

__all__ = ["ENTRY_POINT_GROUP", "Bound", "Comparison", "Derivation",
           "OutsideConditionsWarning", "PaperInfo", "Domain", "domain", "asymptotic_exponent", "compare", "crossover",
           "follows_from", "get", "ids", "paper_info", "papers", "privacy_notion", "register",
           "register_paper", "sym"]
