"""KL paper (Menart et al.; Theorems 1, 2, 4, 5, 9): every experiment of
empirical/papers/kl/experiments.py on its **full** grid gives the verdicts it declares (`pytest -m slow`;
the whole module: ≈ 13 CPU-min of sweeps, about 11 min wall with 2 workers).

Predictions come from ``bounds/`` at each experiment's own parameters (empirical.core.checks); every
tolerance's reason lives with its check in empirical/papers/kl/experiments.py.  Points dropped on a full
grid must be dropped because the bound is vacuous there (a property of the bound at the point, not
of the data), never for a data reason, and at least 3 points must remain.

``kl.negctl.n.spread`` (errata KL-E32): when its two-sided check is on
Theorem 4's first term alone, it fails on the full grid because Theorem 4's d-free term catches
up with the first term there.  While that declaration stands, the verdict test is a strict xfail
naming KL-E32 (it must keep failing; if it passes, the record is stale); once the check is on the
whole bound (``kl:thm4``) it must pass like every other one.  ``test_kl_e32_*`` pins the evidence
whichever declaration is registered.

``DPRATES_KL_FULL_RESULTS=DIR`` reuses a results directory (stale or corrupt points are recomputed,
so only rows of the current code are read); by default a fresh temporary directory is used.
"""
from __future__ import annotations

import dataclasses
import math
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import bounds
from empirical.core import experiment as registry
from empirical.papers.kl import experiments as kl_condition  # noqa: F401  (registers the KL experiments)
from empirical.core.checks import Analysis, ComparisonExperiment, analyse
from empirical.core.experiment import Check
from empirical.run.runner import sweep
from empirical.core.checks import Analysis, analyse

# slope experiments (the comparison experiments' contrasts are pinned in tests/test_kl_lower.py)
IDS = [i for i in registry.ids("kl") if i.startswith("kl.")
       and not isinstance(registry.get(i), ComparisonExperiment)]
NEGCTL = "kl.negctl.n.spread"
# A grid point may only be dropped for these reasons (empirical/papers/kl/experiments.py's vacuity rules:
# the bound at or above the start point's excess, or Spider's Φ̂ floor above it).
_VACUOUS = ("vacuous", "Spider trivial")


def _negctl_on_first_term_alone() -> bool:
    """The declaration KL-E32 is about: a two-sided check on Theorem 4's first term."""
    return any(c.bound == "kl:thm4_main" and c.kind == "two-sided"
               for c in registry.get(NEGCTL).checks)


def _params():
    for i in IDS:
        if i == NEGCTL and _negctl_on_first_term_alone():
            yield pytest.param(i, marks=pytest.mark.xfail(
                raises=AssertionError, strict=True,
                reason="KL-E32: on the full grid (n to 8e7) Theorem 4's d-free term reaches "
                "its first term, so the first term alone is not tight there (slope −1.71 vs band "
                "[−2.00, −1.87], level leaves its band); the fix is a check on the whole of "
                "Theorem 4 (kl:thm4; docs/errata.md, KL-E32)"))
        else:
            yield i


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    root = os.environ.get("DPRATES_KL_FULL_RESULTS") or tmp_path_factory.mktemp("kl-full")

    @lru_cache(maxsize=None)
    def rows_and_analysis(exp_id: str) -> tuple[list, Analysis]:
        exp = registry.get(exp_id)
        rows = list(sweep(exp, full=True, results=Path(root), workers=2))
        return rows, analyse(exp, rows)
    return rows_and_analysis


@pytest.mark.slow
@pytest.mark.parametrize("exp_id", list(_params()))
def test_full_grid_verdicts_as_declared(full, exp_id):
    """Each check's verdict on the full grid is the one declared (PASS, REJECTED, FINDING), with
    clean privacy and settings verdicts, only vacuous points dropped and ≥ 3 points kept."""
    exp = registry.get(exp_id)
    _, a = full(exp_id)
    assert not a.error and not a.privacy_error, (a.error, a.privacy_error)
    assert [(r.bound, r.kind, r.verdict) for r in a.results] == \
        [(c.bound, c.kind, c.expected_verdict) for c in exp.checks], [r.message for r in a.results]
    assert all(any(w in why for w in _VACUOUS) for _, why in a.dropped), a.dropped
    assert len(a.kept) >= 3 and len(a.kept) + len(a.dropped) == len(exp.grid(full=True))


def _negctl_with(checks: tuple) -> "registry.Experiment":
    return dataclasses.replace(registry.get(NEGCTL), checks=checks)


def _levels(a: Analysis, bound_id: str) -> np.ndarray:
    """Geometric-mean metric over seeds divided by ``bound_id`` at each kept point (ascending n)."""
    b = bounds.get(bound_id)
    exp = a.experiment
    return np.array([math.exp(np.mean(np.log(a.per_point[v])))
                     / b(check_conditions=False, **exp.bound_values(exp.point(v))) for v in a.kept])


@pytest.mark.slow
def test_kl_e32_full_grid_follows_both_terms_of_theorem4(full):
    """KL-E32, whichever declaration is registered.  On the negative control's full grid:

    * the first term alone (the former two-sided check) FAILS: the observed slope is flatter
      than its band by more than the tolerance 0.1;
    * the whole of Theorem 4 at κ = 2 PASSES two-sided, its local slope over the same points
      inside the observed 95% CI, while the d-free term alone is REJECTED (the first term still
      matters);
    * levels: observed/(whole bound) stays within the 1.5× that the KL level bands allow for
      seed noise (the held-out bands of empirical/papers/kl/declare.py), while observed/(first term) grows by more
      than that factor from the bottom to the top of the grid;
    * the cause is in the bounds at the experiment's own parameters: the d-free term reaches the
      first term at the top of the grid; and in the runs: the stop at the noise of N_t
      (stopped_by = floor, the d-free term's mechanism) appears only in the upper part of the grid;
      every final iterate is in the inner region, where the loss is the exact polynomial (the
      Huberization plays no part).
    """
    rows, _ = full(NEGCTL)
    tol = registry.get(NEGCTL).checks[0].tolerance     # the two-sided check's, as declared
    first = analyse(_negctl_with((Check("kl:thm4_main", "two-sided", tol,
                                         "former check (KL-E32)"),)), rows)
    both = analyse(_negctl_with((Check("kl:thm4", "two-sided", tol, "whole bound (KL-E32)"),
                                 Check("kl:thm4_floor", "reject", tol, "d-free term alone"))), rows)
    r_first = first.results[0]
    assert r_first.verdict == "FAIL", r_first.message
    assert first.fit.slope - max(r_first.local, r_first.asymptotic) > tol
    assert [r.verdict for r in both.results] == ["PASS", "REJECTED"], \
        [r.message for r in both.results]
    assert both.fit.ci_low <= both.results[0].local <= both.fit.ci_high

    lv_both, lv_first = _levels(both, "kl:thm4"), _levels(both, "kl:thm4_main")
    assert lv_both.max() / lv_both.min() < 1.5, lv_both
    assert lv_first[-1] / lv_first[0] > 1.5, lv_first

    exp = both.experiment
    top = exp.bound_values(exp.point(both.kept[-1]))
    assert bounds.get("kl:thm4_floor")(check_conditions=False, **top) >= \
        bounds.get("kl:thm4_main")(check_conditions=False, **top)
    n = np.array([r["p_n"] for r in rows])
    floor_stop = np.array([r["stopped_by"] == "floor" for r in rows])
    kept = np.isin(n, both.kept)
    lower, upper = kept & (n <= np.median(both.kept)), kept & (n > np.median(both.kept))
    assert not floor_stop[n <= both.kept[1]].any()
    assert floor_stop[upper].mean() >= 0.5 > floor_stop[lower].mean(), (floor_stop[lower].mean(),
                                                                        floor_stop[upper].mean())
    assert all(r["in_kl_region"] == 1.0 for r in rows)
