"""Algorithms of Menart, Ullah, Arora, Bassily, Guzmán, "Differentially Private Non-Convex
Optimization under the KL Condition with Optimal Rates" under one import path.

All are full-batch and ρ-zCDP under replace-one neighbours (the paper's Definition 2), so the
mean gradient of L0-Lipschitz losses has sensitivity 2L0/n
(:func:`algorithms.primitives.mean_gradient_sensitivity`).  Every function spends exactly the
target ρ as computed by dp-accounting; where the paper's printed noise spends a different amount
the correction is documented (docs/errata.md).

* :func:`kl_spider` — Algorithm 1 (KL Spider, κ ∈ [1, 2], Theorem 1, Lemma 8):
  :mod:`algorithms.kl.spider`.
* :func:`proximal_point` — Algorithm 2 (private proximal point, κ ≥ 2, Theorem 2) with
  :func:`noisy_gd` as its inner solver: :mod:`algorithms.kl.proximal`.
* :func:`adaptive_noisy_gd` — Algorithm 3 (adaptive noisy GD, Theorems 3–5) with a zCDP privacy
  filter (fully adaptive composition) and optional exponential-mechanism selection (Theorem 5):
  :mod:`algorithms.kl.adaptive`.
* :func:`noisy_gd` — Algorithm 4 (Appendix E, Theorem 9): :mod:`algorithms.kl.noisy_gd`.
* the shared noise draws and Spider's update: :mod:`algorithms.kl.common`.

Seed rows: ``rng`` is one Generator (output ``(d,)``) or a sequence of them (output ``(R, d)``,
``privacy`` a list with one :class:`~algorithms.accounting.PrivacySpent` per row for Algorithms
1–3).  Every row draws its noise from its own generator in an order fixed by its own trajectory,
so row r's numbers are the same alone or in any batch.
"""
from algorithms.kl.adaptive import SELECT_SHARE, adaptive_noisy_gd
# the shared noise draws and Spider's update, re-exported for the mutation self-test's patches
from algorithms.kl.common import Observer, _draw, _noise_block, _spider_update  # noqa: F401
from algorithms.kl.noisy_gd import noisy_gd, noisy_gd_steps
from algorithms.kl.proximal import proximal_point, proximal_point_rounds
from algorithms.kl.spider import SpiderPlan, kl_spider, kl_spider_plan

__all__ = ["Observer", "noisy_gd", "noisy_gd_steps", "kl_spider", "kl_spider_plan", "SpiderPlan",
           "proximal_point", "proximal_point_rounds", "adaptive_noisy_gd", "SELECT_SHARE"]
