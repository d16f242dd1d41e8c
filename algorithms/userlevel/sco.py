"""Algorithms of Lowy, Liu, Asi, "Faster Algorithms for User-Level Private SCO": Algorithm 1 (phased SGD with outlier *iterate* removal
and output perturbation), Algorithm 2 (user-level DP accelerated minibatch SGD with outlier
*gradient* removal), Algorithm 3 (accelerated phased ERM calling Algorithm 2), Algorithm 4
(AboveThreshold) and the randomized-smoothing wrapper of Appendix D.

Data model: ``UserData`` holds n users with m items each; algorithms see only its interface and
every per-item gradient is counted (a user's mean gradient costs m evaluations, however it is
computed: problems may use per-user sufficient statistics, as oracle-complexity results count
per-item gradients).

Privacy (user-level, replace-one: neighbours differ in one user's m items).  Each phase touches
only its own fresh users, so by parallel composition a run is as private as its most expensive
phase.  A phase releases

* a pure-DP test (Algorithm 1: one Laplace score, ε/10; Algorithm 2: AboveThreshold over the
  phase's steps, ε/2, Lemma A.9), charged by basic composition, and
* Gaussian releases whose ℓ2-sensitivity is a high-probability bound on the outlier-removed
  mean DERIVED for the removal rule as implemented (:func:`outlier_mean_sensitivity`; the
  paper's Lemmas B.2/C.2 state ≲ τ log(1/ζ)/K with a hidden constant that no value makes safe,
  errata UL-E13), whose failure events — unlucky keep coins and a score test whose Laplace
  noise beats its margin (UL-E14) — are charged to δ_fail = δ/2 as the proof of Lemma C.2 sums
  them, composed by dp-accounting's RDP accountant (Algorithm 2's minibatches are
  drawn WITHOUT replacement so that ``SampledWithoutReplacementDpEvent`` is exact, UL-E8)
  at δ/2.

Two modes.  ``faithful``: every constant as printed (100, 1000, 500, σ_i of Algorithms 1 and 2);
the accountant then reports what those σ_i actually buy.  ``rates``: constants are knobs that
keep every exponent (``c_*`` arguments) and the Gaussian noise multiplier is calibrated by
dp-accounting so that the guarantee equals the target ε exactly.

The code lives in one module per algorithm or layer (each names its paper, theorem or lemma):

* :mod:`algorithms.userlevel.alg1` — Algorithm 1 (Theorem 2.1/B.1) and its SGD subroutine
  (Lemma 2.3/B.4);
* :mod:`algorithms.userlevel.alg3` — Algorithms 2, 3 and 4 (Theorem 3.2/C.3, Lemma 3.5's
  minibatch gradient, AboveThreshold), the user-as-item baseline (footnote 3);
* :mod:`algorithms.userlevel.outliers` — outlier removal and the derived sensitivity of the
  outlier-removed mean (Lemmas B.2/C.2, UL-E13/UL-E14);
* :mod:`algorithms.userlevel.accounting` — Gaussian noise, dp-accounting calibration, what a
  run reports;
* :mod:`algorithms.userlevel.data` — the data interface and Appendix D's smoothing.

Import from here or from the defining module: the objects are the same.  The mutation
self-test (empirical/papers/userlevel/audit.py) patches the defining modules; ``Patch.everywhere``
reaches the copies the algorithms import by name and the re-exports below.
"""
from __future__ import annotations

# Private names too (``_scores_within``, ``_pairwise_within``, ``_check_common``): tests and the
# audit harness read them through this module.
from algorithms.userlevel.accounting import (MODES, RDP_ORDERS, Observer, PhasePrivacy,  # noqa: F401
                                              RunResult, UserLevelPrivacy, _check_common,
                                              _gaussian_event, calibrate_gaussian,
                                              gaussian_epsilon, gaussian_noise)
from algorithms.userlevel.alg1 import (Alg1Phase, alg1_schedule, phased_sgd_outlier_removal,  # noqa: F401
                                        sgd_average_iterates)
from algorithms.userlevel.alg3 import (AboveThreshold, Alg3Phase, _acsa_constants,  # noqa: F401
                                        accelerated_phased_erm, al24_phased_gd, alg3_schedule,
                                        item_level_baseline, minibatch_gradients, phase_steps)
from algorithms.userlevel.data import SmoothedUserData, UserData, uniform_ball  # noqa: F401
from algorithms.userlevel.outliers import (_ALL_WITHIN_SLACK, FLIP_SLOPE,  # noqa: F401
                                            _pairwise_within, _scores_within, alg1_score_floor,
                                            alg2_score_floor, concentration_scores, flip_quantile,
                                            keep_probabilities, kept_deficit,
                                            laplace_difference_tail, outlier_mean_sensitivity,
                                            outlier_removed_mean, release_margin,
                                            step_failure_probability, user_mean_sensitivity)

__all__ = ["UserData", "SmoothedUserData", "PhasePrivacy", "UserLevelPrivacy",
           "concentration_scores", "keep_probabilities", "outlier_removed_mean",
           "AboveThreshold", "calibrate_gaussian", "gaussian_epsilon",
           "Alg1Phase", "alg1_schedule", "phased_sgd_outlier_removal", "sgd_average_iterates",
           "Alg3Phase", "alg3_schedule", "accelerated_phased_erm", "item_level_baseline",
           "al24_phased_gd", "uniform_ball", "RunResult", "MODES", "minibatch_gradients"]
