"""Algorithms of Tao et al., "Second-Order Convergence in Private Stochastic Non-Convex
Optimization": the public names in one place.  In this paper ρ
is the Hessian-Lipschitz constant (``hessian_lipschitz`` here) and m the number of clients.

The code lives in one module per algorithm (each names its theorem):

* :mod:`algorithms.sosp.psgd` — Algorithm 1 (Gauss-PSGD, Theorem 1): :func:`gauss_psgd` over
  any :class:`Oracle`, with the model-drift escape certificate ‖x_t − x̃‖ ≥ R, and §5.1's
  :class:`GaussianOracle` (∇F(x) + ζ + ξ).
* :mod:`algorithms.sosp.spider` — Algorithm 2 (Ada-DP-SPIDER, Theorem 2) and with ``m > 1``
  clients Algorithm 3 (Theorem 3): :class:`AdaDPSpider` over :class:`ClientData`, and
  :func:`spider_psgd`, Gauss-PSGD over it with every parameter from a plan (the theorems'
  algorithm in one call).
* :mod:`algorithms.sosp.plan` — Theorem 2/3's parameters (:func:`spider_plan`), Remark 2's design
  of α (:func:`spider_design`, :func:`design_noise`), Lemma 1's Γ (:func:`practical_gamma`),
  Lemma 2's Q (:func:`escape_rounds`): the *practical parametrization*.
* :mod:`algorithms.sosp.selection` — Algorithm 4 (Theorem 4): :func:`private_model_selection`.
* :mod:`algorithms.sosp.privacy` — the privacy of Algorithms 2–4 (errata SOSP-E2): multipliers
  from dp-accounting, replace-one sensitivities, the noise draws (the mutation self-test's
  targets).

Import from here or from the defining module: the objects are the same.
"""
from __future__ import annotations

from algorithms.sosp.plan import (Design, SpiderPlan, design_noise, escape_rounds,
                                  practical_gamma, spider_design, spider_plan)
# (_spider_noise, _selection_noise, _o2_estimate: the mutation self-test's targets, re-exported
# so that a Patch naming this module still works; Patch.everywhere reaches the callers' copies)
from algorithms.sosp.privacy import (_selection_noise, _spider_noise, client_noise_std,  # noqa: F401
                                     gaussian_multiplier, o1_sensitivity, o2_sensitivity,
                                     selection_multiplier, selection_sensitivities)
from algorithms.sosp.psgd import GaussianOracle, Oracle, PSGDResult, gauss_psgd
from algorithms.sosp.selection import SelectionResult, private_model_selection
from algorithms.sosp.spider import AdaDPSpider, ClientData, _o2_estimate, spider_psgd  # noqa: F401

__all__ = ["gaussian_multiplier", "SpiderPlan", "spider_plan", "Design", "spider_design",
           "design_noise", "practical_gamma", "escape_rounds",
           "Oracle", "GaussianOracle", "ClientData", "AdaDPSpider", "PSGDResult", "gauss_psgd",
           "spider_psgd",
           "SelectionResult", "private_model_selection", "selection_multiplier",
           "o1_sensitivity", "o2_sensitivity", "selection_sensitivities", "client_noise_std"]

