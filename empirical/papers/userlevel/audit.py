"""Privacy audits, measured noise, sensitivity brute force and mutants of the user-level SCO
paper's (Lowy, Liu, Asi) algorithms, one module per mechanism (see :mod:`empirical.privacy.audit`,
:mod:`empirical.privacy.mutants`; imported by :mod:`empirical.papers.userlevel.experiments` so
that the lazy loader registers them with the paper):

* :mod:`empirical.papers.userlevel.audit_canary` — Algorithms 1 and 3 and the item-level
  baseline (Theorems 2.1, 3.2, footnote 3) on canary users, their broken controls;
* :mod:`empirical.papers.userlevel.audit_at` — AboveThreshold (Algorithm 4, Lemma A.9);
* :mod:`empirical.papers.userlevel.audit_fkt20` — footnote 3's [FKT20] baseline through group
  privacy;
* :mod:`empirical.papers.userlevel.audit_noise` — measured noise against the theorems' σ;
* :mod:`empirical.papers.userlevel.mutants` — the mutants;
* :mod:`empirical.papers.userlevel.outlier_search` — brute force of Lemma C.2's sensitivity.
"""
from __future__ import annotations

from empirical.papers.userlevel import mutants  # noqa: F401  (registers the mutants)
from empirical.papers.userlevel.audit_at import (AT, AT_FULL, AT_QUICK, _at_label,  # noqa: F401
                                                 at_halting_index, at_queries)
from empirical.papers.userlevel.audit_fkt20 import FKT20, fkt20_exact  # noqa: F401
from empirical.papers.userlevel.audit_canary import (ALG1, ALG3, CanaryUsers, _alg3_data,  # noqa: F401
                                                     _alg3_kw, _baseline_claim, _baseline_exact,
                                                     independent_epsilon,
                                                     independent_multiplier)
from empirical.papers.userlevel.audit_noise import measure_alg1_noise, measure_alg3_noise  # noqa: F401
from empirical.papers.userlevel.outlier_search import (OLD_CONSTANT, corrected_bound_units,  # noqa: F401
                                                       coupled_moves, random_search,
                                                       three_group_points, three_group_tail)
from algorithms.userlevel import sco as ul  # noqa: F401

__all__ = ["CanaryUsers", "ALG3", "ALG1", "AT", "AT_QUICK", "AT_FULL", "at_queries",
           "at_halting_index", "independent_multiplier", "independent_epsilon",
           "measure_alg3_noise", "measure_alg1_noise",
           "three_group_tail", "corrected_bound_units", "coupled_moves", "random_search"]
