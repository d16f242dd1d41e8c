"""Algorithm 1's batch samplers and the participation patterns they allow one example (Wang et
al., paper id ``kan``; Algorithm 1 line 4 and the open question of
Section 5 on sharper accounting): shared by the algorithm (:mod:`algorithms.kan.correlated_noise`)
and its privacy calibrations (:mod:`algorithms.kan.privacy`), whose sensitivity follows the
sampler actually used."""
from __future__ import annotations

import math

import numpy as np

from algorithms.validation import check_int, check_interval

__all__ = ["check_lam", "SAMPLERS", "batch_schedule", "participation_pattern"]


def check_lam(lam) -> float:
    """λ ∈ [0, 1) (Algorithm 1's input range)."""
    return check_interval("lam", lam, 0.0, 1.0)


# =============================================================================================
# Batch samplers and their participation patterns
# =============================================================================================
SAMPLERS = ("fresh", "cyclic")


def batch_schedule(sampler: str, n: int, B: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of the mini-batches B_1..B_steps, shape (steps, B), drawn from ``rng`` only.

    * ``fresh`` (Algorithm 1, line 4): each B_t uniform of size B without replacement,
      independently over t (a fixed example is in B_t with probability B/n, i.i.d. over t).
    * ``cyclic``: one uniformly random permutation π (data independent), batches
      π[(t mod ⌊n/B⌋)B : +B]; the n mod B examples at the end of π never take part.  Any example
      takes part at most ⌈steps/⌊n/B⌋⌉ times, exactly ⌊n/B⌋ steps apart.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    n, B, steps = check_int("n", n), check_int("B", B), check_int("steps", steps, minimum=0)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    if sampler == "fresh":
        if B == n:
            return np.broadcast_to(np.arange(n), (steps, n)).copy()
        # argpartition of uniforms: one vectorised draw per step block, uniform B-subsets
        keys = rng.random((steps, n))
        return np.argpartition(keys, B - 1, axis=1)[:, :B]
    nb = n // B
    perm = rng.permutation(n)[: nb * B].reshape(nb, B)
    return perm[np.arange(steps) % nb]


def participation_pattern(sampler: str, n: int, B: int, steps: int) -> dict:
    """What the sampler allows one example: for ``cyclic``, at most ``participations`` steps with
    ``min_separation`` ⌊n/B⌋ between them (deterministic); for ``fresh``, a Binomial(steps, B/n)
    number of participations at arbitrary (possibly adjacent) steps, ``min_separation`` 1."""
    n, B, steps = check_int("n", n), check_int("B", B), check_int("steps", steps)
    if B > n:
        raise ValueError(f"B must be in [1, n={n}], got {B}")
    if sampler == "cyclic":
        nb = n // B
        return {"participations": math.ceil(steps / nb), "min_separation": nb,
                "sampling_rate": B / n}
    if sampler == "fresh":
        return {"participations": steps, "min_separation": 1, "sampling_rate": B / n}
    raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
