"""Algorithm 1 (DP-SSGD) of Varshney, Thakurta, Jain, "(Nearly) Optimal Private Linear Regression
via Adaptive Clipping": shuffled one-pass SGD with batch 1 and a tail average, and what it is
certified at (:func:`dp_ssgd_privacy`).  Design, streams, noise and accounting are
:mod:`algorithms.linreg.design`'s."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.base import Result
from algorithms.linreg.design import (CHUNK, LinearRegressionDesign, Observer, _check_observer,
                                      _measures, _streams, clip_limits, gaussian_noise)
from algorithms.primitives import as_generators
from algorithms.validation import check_delta, check_int, check_nonnegative, check_positive

__all__ = ["dp_ssgd", "dp_ssgd_privacy"]


def dp_ssgd_privacy(alpha: float, n: int, delta: float) -> dict:
    """What DP-SSGD with multiplier α on n records is certified at.

    * ``rho``: parallel composition only (each record is in one step, Gaussian with multiplier α
      on its replace-one sensitivity 2ζ): ½α⁻²-zCDP by dp-accounting — always valid.
    * ``epsilon_amplified`` at ``delta_amplified``: Theorem 3.1's route, the paper's Theorem A.3
      (Feldman, McMillan, Talwar 2021, Thm 3.8: (ε₀, δ₀)-DP adaptive local randomizers on a
      random permutation).  We split δ̂ = δ/2, δ₀ = δ/(2n) (ε₀ from dp-accounting at δ₀) and take,
      where the two readings we could not settle differ (errata LR-E7), the weaker guarantee:
      ε from the FMT authors' closed-form code (``closedformanalysis``: factor
      (1 − e^{−ε₀})/(1 + e^{−ε₀−ε̃}), ε̃ = log(1 + bracket), bracket = 8√(e^ε₀ log(4/δ̂))/√n +
      8e^ε₀/n; ≥ their Thm 3.1's (e^ε₀ − 1)/(e^ε₀ + 1) form), valid for ε₀ ≤ log(n/(16 log(4/δ̂)))
      (the code's range; the paper prints log(2/δ̂), a typo by an open report on the authors'
      repository), and δ = δ̂ + (e^ε + 1)(1 + e^{−ε₀}/2)·n·δ₀, which is ≥ the e^ε·n·δ₀ of
      Theorem A.3's O(·) read with constant 1.  So the amplified ε holds at ``delta_amplified``
      (≈ δ(1 + e^ε), not δ).  NaN where ε₀ is out of range — which is the case at Corollary
      3.3's α unless ε ≲ √(log(n/δ)/n) (LR-E7).
    """
    alpha = check_positive("alpha", alpha)
    n = check_int("n", n)
    delta = check_delta(delta)
    ev = accounting.gaussian_event(alpha)
    rho = accounting.zcdp_rho(ev)
    delta0 = delta / (2.0 * n)
    delta_hat = delta / 2.0
    eps0 = accounting.epsilon(ev, delta0)
    eps_amp = delta_amp = math.nan
    if 0 < eps0 <= math.log(n / (16.0 * math.log(4.0 / delta_hat))):
        e0 = math.exp(eps0)
        bracket = 8.0 * math.sqrt(e0 * math.log(4.0 / delta_hat)) / math.sqrt(n) + 8.0 * e0 / n
        factor = -math.expm1(-eps0) / (1.0 + math.exp(-eps0) / (1.0 + bracket))
        eps_amp = math.log1p(factor * bracket)
        delta_amp = delta_hat + (math.exp(eps_amp) + 1.0) * (1.0 + 0.5 / e0) * n * delta0
    return {"rho": rho, "epsilon0": eps0, "epsilon_amplified": eps_amp,
            "delta_amplified": delta_amp}


def dp_ssgd(design: LinearRegressionDesign, n: int, *, zeta: float, alpha: float, eta: float,
            rng: np.random.Generator | Sequence[np.random.Generator],
            delta: float = 1e-6, observe: Observer | None = None) -> Result:
    """Algorithm 1 (DP-SSGD) on n streamed samples per row, with a noise-free reference.

    w_0 = 0; for t = 0..n−1: w_{t+1} = w_t − η(clip_ζ(x_t(⟨x_t, w_t⟩ − y_t)) + 2ζα g_t);
    output w̄ = (2/n) Σ_{t=n/2+1}^{n} w_t.  Vectorised over seed rows (the loop over t is in
    Python, each step O(R·d)); data and noise are generated CHUNK steps at a time.
    ``alpha = 0`` is allowed (the non-private control).  ``delta`` is the δ at which the
    amplified ε of :func:`dp_ssgd_privacy` is reported.  ``observe`` (:data:`Observer`) sees
    every step's release, the noisy clipped gradient (kind ``"grad"``, index t, std 2ζα): the
    local randomizer's output in Theorem 3.1's proof.
    """
    n = check_int("n", n, minimum=2)
    zeta = check_positive("zeta", zeta)
    alpha = check_nonnegative("alpha", alpha)
    eta = check_positive("eta", eta)
    delta = check_delta(delta)
    gens = as_generators(rng)
    observe = _check_observer(observe)
    R, dim = len(gens), design.d
    data, noise = _streams(gens)
    V = np.zeros((R, 2, dim))               # the private and the reference iterate
    acc = np.zeros((R, 2, dim))
    clipped = np.zeros(R)
    half = n // 2
    rows = np.arange(R)
    step_std = np.full(R, 2.0 * zeta * alpha)
    for start in range(0, n, CHUNK):
        k = min(CHUNK, n - start)
        X, y = design.sample(data, k)
        # Everything that does not depend on the iterate is computed per chunk, vectorised: the
        # clip limits ζ/‖x‖ and one block of noise per row (the same numbers as one draw per
        # step), so a step is a handful of small array operations.
        lim = clip_limits(np.sqrt(np.einsum("rkd,rkd->rk", X, X)), zeta)[:, :, None]
        nlim = -lim
        G = gaussian_noise(noise, (k, dim)) * (2.0 * zeta * alpha)
        res = np.empty((R, k, 2))
        measure = _measures(observe)
        if measure:
            blk_clean, blk_rel = np.empty((R, k, dim)), np.empty((R, k, dim))
        for j in range(k):
            x = X[:, j]
            r = res[:, j]
            np.einsum("rvd,rd->rv", V, x, out=r)
            r -= y[:, j, None]
            step = np.minimum(np.maximum(r, nlim[:, j]), lim[:, j])[:, :, None] * x[:, None]
            if measure:
                blk_clean[:, j] = step[:, 0]
            step[:, 0] += G[:, j]
            if measure:
                blk_rel[:, j] = step[:, 0]
            elif observe is not None:
                observe("grad", start + j, rows, step[:, 0], step_std)
            V -= eta * step
            if start + j >= half:
                acc += V
        if measure:
            observe("grad", start, rows, blk_rel, step_std, clean=blk_clean)
        clipped += np.count_nonzero(np.abs(res[:, :, 0]) > lim[:, :, 0], axis=1)
    m = n - half
    info = dict(w_reference=acc[:, 1] / m, clip_fraction=clipped / n, zeta=zeta, alpha=alpha,
                eta=eta, tail_iterates=m, steps=n)
    if alpha > 0:
        priv = dp_ssgd_privacy(alpha, n, delta)
        privacy = accounting.PrivacySpent.from_event(accounting.gaussian_event(alpha),
                                                     target_rho=priv["rho"])
        info.update(priv)
    else:
        privacy = accounting.PrivacySpent(accounting.composed([]), accounting.REPLACE_ONE, 0.0)
    return Result(w=acc[:, 0] / m, privacy=privacy, grad_evals=n, info=info)
