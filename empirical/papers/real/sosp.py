"""The SOSP paper's Appendix E in miniature on scikit-learn's ``digits`` (Tao et al., Appendix E:
MNIST/CIFAR-10, one-hidden-layer MLP, m ∈ {1, 2, 5, 10}
clients, ε ∈ {0.5, 1, 2}, δ = 1e-5, Gauss-PSGD against "the baseline with private model
selection"; test accuracy against epochs).

What runs
---------
* Model: :mod:`algorithms.real_models` (one hidden ReLU layer, Kaiming init, zero biases,
  cross-entropy), per-example gradients clipped to G = ``clip`` and per-example SPIDER
  corrections clipped to M_s·‖x_{t−1} − x_{t−2}‖: these clips are the sensitivities G_s, M_s the
  oracle's noise is calibrated to (:class:`DigitsClients`).
* Gauss-PSGD: :func:`algorithms.sosp.nonconvex.gauss_psgd` over the distributed Ada-DP-SPIDER
  oracle (:class:`~algorithms.sosp.nonconvex.AdaDPSpider`, Algorithm 3 for m > 1) with the
  appendix's χ = 0.01, drift threshold κ = 0.1, Γ = 10, Q = 3.  An *epoch* is one pass of every
  client over its shard: a fresh oracle whose batches are disjoint (each record in one release
  per epoch), started from the previous epoch's output.  Over E epochs each record is in E
  Gaussian releases of multiplier z, so z is calibrated with dp-accounting for E adaptively
  composed Gaussian mechanisms at (ε, δ) (the paper's per-query argument, composed over passes).
* Baseline ("[29] + private model selection", §7): the same learner on 95% of every client's
  shard at (ε/2, δ/2), then Algorithm 4 (:func:`~algorithms.sosp.nonconvex.private_model_selection`)
  at (ε/2, δ/2) over the iterates of ``n_candidates`` evenly spaced epochs (5 and 10), with gradients and Hessians of the
  held-out 5% (Hessian columns clipped per example, :func:`~algorithms.real_models.clipped_hessian_columns`).
  Basic composition: ε/2 + ε/2 = ε, δ/2 + δ/2 = δ.  Algorithm 4 returns the *first* candidate
  passing both tests; when none passes the last iterate is used (``selected_epoch`` = −1).
  The learner is the same for both, so the contrast isolates what the paper attributes the gap
  to: the selection's budget, its held-out data and its noisy high-dimensional tests.
* Data: digits (1797 × 64, 10 classes) through :func:`empirical.papers.real.data.prepared` (fixed
  split, 503 test rows, standardised, rows in the unit ball); training rows sorted by label and
  cut into m contiguous shards (label-skewed clients: the paper's heterogeneous setting).

What is judged (contrasts, :class:`empirical.core.checks.Contrast`)
--------------------------------------------------------------
``real.sosp.eps{0_5,1,2}`` (swept over m): Gauss-PSGD's final test accuracy exceeds the
baseline's at every m (one-sided: the paper's "consistently outperforms"); at ε = 1 also the
paired gap at m = 10 exceeds the gap at m = 1 (one-sided: "the gap widens in distributed
settings").  ``real.sosp.epsilon`` (m = 1, swept over ε, no baseline): Gauss-PSGD's accuracy
rises from ε = 0.5 to ε = 2.  Hyperparameters (lr, batch sizes, clips, width) were set by hand
on one seed, identically for both methods, not privately (as in the paper); ε from dp-accounting
is stored beside every accuracy (``epsilon_psgd``, ``epsilon_baseline``); per-epoch accuracies
are the columns ``acc_psgd_e<k>`` and ``acc_baseline_last_e<k>``.  Verdicts and numbers:
docs/papers/real.md (findings REAL-E10, REAL-E14).
"""
from __future__ import annotations

import importlib

from empirical.core.checks import ComparisonExperiment, Contrast
from empirical.core.experiment import Summary, register, register_summary
# re-exported: the tests and readers reach the data and run functions through this module
from empirical.papers.real.sosp_runs import (DigitsClients, _candidate_epochs,  # noqa: F401
                                      client_shards, load_digits_split, run_sosp,
                                      selection_multiplier)

__all__ = ["DigitsClients", "load_digits_split", "client_shards", "run_sosp", "SOSP_EXPERIMENTS"]

PAPER = "real"


# =============================================================================================
# Experiments
# =============================================================================================
#: Hand-set on one seed at ε = 1, m = 1, identically for both methods (not privately, as the
#: appendix's were): width 8 keeps Algorithm 4's P×P Hessians (P = 610) affordable; 3 batches
#: per client per pass (b1 = 431 at m = 1, 43 at m = 10) and step 2 trade DP noise per step
#: against steps (Appendix E gives no batch size).
#: Algorithm 4's cost (finite-difference Hessians of every candidate on every held-out record)
#: sets the baseline's 2 candidates (epochs 5 and 10) and 5% held-out records.
_FIXED = {"delta": 1e-5, "epochs": 10, "hidden": 8, "lr": 2.0, "batches": 3,
          "clip": 1.0, "M_sens": 1.0, "M_hess": 1.0, "n_candidates": 2, "holdout": 0.05}
_SEEDS = 10
_CI = ("95% Student-t interval of the paired per-seed difference (same seed, same test rows; "
       "t with 9 d.o.f.), because seed-to-seed spread of DP training is the noise in question")


def _no_bound(point: dict) -> dict:
    return {}


#: Expectations of the "beats the baseline at every m" claim, from the full-grid runs (errata
#: REAL-E14): it holds at ε = 2; at ε ≤ 1 it fails where both methods are at
#: chance (m ≥ 5), so there it is declared a finding, never dropped.
_BEATS = {0.5: ("finding", "  Declared a finding: at m = 5, 10 both methods are at chance "
                           "(Gauss-PSGD 0.12, 0.10) and the gain is −0.012 [−0.054, +0.029]"),
          1.0: ("finding", "  Declared a finding: at m = 5, 10 the gain's interval reaches 0 "
                           "(+0.069 [−0.000, +0.139], +0.048 [−0.013, +0.109]); Gauss-PSGD "
                           "0.20, 0.18 against chance 0.10"),
          2.0: ("hold", "")}


def _sosp_m(eps: float, tag: str, quick: tuple[float, ...]) -> ComparisonExperiment:
    gap = (Contrast("gap grows from m=1 to m=10", "increasing", hi="acc_psgd",
                    lo="acc_baseline", at=(1.0, 10.0), expect="finding",
                    reason="one-sided: Appendix E claims 'the accuracy gap ... widens in "
                           "distributed settings (m > 1)'; 95% Welch interval (the two m "
                           "values are independent seeds).  Declared a finding: on digits the "
                           "gap shrinks from m = 1 to m = 10, −0.179 [−0.252, −0.107] (every "
                           "client adds its own noise, SOSP-E1, on batches of n_c/3, so both "
                           "methods fall towards chance; REAL-E10)"),) if 1.0 in quick else ()
    return register(ComparisonExperiment(
        id=f"real.sosp.eps{tag}", paper=PAPER,
        title=f"SOSP App. E on digits: Gauss-PSGD vs baseline + private selection, ε = {eps:g}",
        variable="m", quick_grid=quick, full_grid=(1.0, 2.0, 5.0, 10.0),
        fixed={**_FIXED, "epsilon": eps}, seeds=_SEEDS, run=run_sosp, metric="acc_psgd",
        bound_values=_no_bound, checks=(), privacy_rtol=1e-6,
        problem="digits (sklearn), 10 classes, label-sorted client shards; one-hidden-layer MLP",
        algorithm="gauss_psgd + AdaDPSpider (per-example clipping) vs the same learner at ε/2 "
                  "+ private_model_selection (Algorithm 4) at ε/2",
        contrasts=(
            Contrast("Gauss-PSGD acc > baseline acc", "greater", hi="acc_psgd",
                     lo="acc_baseline", expect=_BEATS[eps][0],
                     reason="one-sided: Appendix E claims Gauss-PSGD 'consistently outperforms "
                            "the baseline across all configurations'; " + _CI + _BEATS[eps][1]),
            *gap,
        ),
    ))


# Quick grids: m = 1 and 10 at ε = 1 (both claims), the distributed end m = 10 at ε = 0.5, 2
# (the gap-in-m claim is judged at ε = 1, where the grid has both ends).
SOSP_EPS_05 = _sosp_m(0.5, "0_5", (10.0,))
SOSP_EPS_1 = _sosp_m(1.0, "1", (1.0, 10.0))
SOSP_EPS_2 = _sosp_m(2.0, "2", (10.0,))

SOSP_EPSILON = register(ComparisonExperiment(
    id="real.sosp.epsilon", paper=PAPER,
    title="SOSP App. E on digits: Gauss-PSGD test accuracy vs ε (m = 1, no baseline)",
    variable="epsilon", quick_grid=(0.5, 2.0), full_grid=(0.5, 1.0, 2.0),
    fixed={**_FIXED, "m": 1.0, "baseline": 0.0}, seeds=_SEEDS, run=run_sosp, metric="acc_psgd",
    bound_values=_no_bound, checks=(), privacy_rtol=1e-6,
    problem=SOSP_EPS_1.problem, algorithm="gauss_psgd + AdaDPSpider (per-example clipping)",
    contrasts=(
        Contrast("Gauss-PSGD acc rises from ε=0.5 to ε=2", "increasing", hi="acc_psgd",
                 lo="zero", at=(0.5, 2.0),
                 reason="one-sided: Appendix E: 'accuracy improving as ε increases'; 95% Welch "
                        "interval of the difference of mean accuracies (independent seeds)"),
    ),
))

SOSP_EXPERIMENTS = (SOSP_EPS_05, SOSP_EPS_1, SOSP_EPS_2, SOSP_EPSILON)


def _plot(analyses: list, root) -> object:
    # Imported by name: drawing code stays out of this module's code fingerprint.
    return importlib.import_module("empirical.papers.real.plots2").plot_sosp(analyses, root)


register_summary(Summary("real.sosp.curves", PAPER, tuple(e.id for e in SOSP_EXPERIMENTS), _plot))
