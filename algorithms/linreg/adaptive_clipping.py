"""Algorithms 1–3 of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression via
Adaptive Clipping" under one import path: the design and accounting
(:mod:`algorithms.linreg.design`), DP-STAT (:mod:`algorithms.linreg.dp_stat`, Algorithm 3),
DP-AMBSSGD and the fixed-clip baseline (:mod:`algorithms.linreg.ambssgd`, Algorithm 2) and DP-SSGD
(:mod:`algorithms.linreg.ssgd`, Algorithm 1)."""
from __future__ import annotations

from algorithms.linreg.ambssgd import (AmbssgdSchedule, _clipped_mean_gradient, _clipped_sums,
                                       _residuals, ambssgd_schedule, dp_ambssgd)
from algorithms.linreg.design import (CHUNK, DESIGNS, GAMMA_SLACK, QUANTILE_SLACK,
                                      LinearRegressionDesign, Observer, _check_observer,
                                      _gaussian_rho, _measures, _streams, _zcdp_to_epsilon,
                                      alpha_for_epsilon, clip_limits, gaussian_noise)
from algorithms.linreg.dp_stat import DpStatResult, count_sensitivity, dp_stat, residual_count
from algorithms.linreg.ssgd import dp_ssgd, dp_ssgd_privacy

__all__ = ["LinearRegressionDesign", "alpha_for_epsilon", "dp_stat", "DpStatResult", "dp_ambssgd",
           "ambssgd_schedule", "AmbssgdSchedule", "dp_ssgd", "dp_ssgd_privacy", "count_sensitivity",
           "residual_count", "DESIGNS", "GAMMA_SLACK", "Observer", "gaussian_noise", "clip_limits"]
# The private functions are re-exported too: audits and mutants reach them through this path.
_PRIVATE = (CHUNK, QUANTILE_SLACK, _check_observer, _gaussian_rho, _measures, _streams,
            _zcdp_to_epsilon, _clipped_mean_gradient, _clipped_sums, _residuals)
