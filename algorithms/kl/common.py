"""Shared numerics of the KL paper's algorithms (Menart, Ullah, Arora, Bassily, Guzmán,
"Differentially Private Non-Convex Optimization under the KL Condition with Optimal Rates"):
the observer protocol of every release, the noise draws (module-level so that the mutation
self-test can replace them), Spider's recursive update (Algorithm 1), the projection's fast
exit, and the log factor shared by Algorithms 1 and 2.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from algorithms.base import Problem
from algorithms.primitives import project_ball
from algorithms.validation import check_finite_array


#: ``observe(kind, rows, released, sigma)``: called at each release with the row indices, the
#: released noisy values (one per listed row) and the noise std used (scalar or per row).  An
#: observer with a true attribute ``measures_noise`` is also passed ``clean=``: the release's
#: noise-free value on the same draws (:mod:`algorithms.noise_meter`); one whose ``listening`` is
#: false is not called any more (a meter that has measured enough).
Observer = Callable[[str, np.ndarray, np.ndarray, "float | np.ndarray"], None]


def _ceil(x: float) -> int:
    """⌈x⌉, not bumping values that are integers up to rounding (e.g. (F0/Φ̂)^e = 4 + 1e-15)."""
    return math.ceil(x - 1e-12 * max(1.0, abs(x)))


def _check_w0(problem: Problem, w0) -> np.ndarray:
    w0 = check_finite_array("w0", w0, ndim=1)
    if w0.shape[0] != problem.d:
        raise ValueError(f"w0 must have shape ({problem.d},), got {w0.shape}")
    return w0


# Squared row norms in one gufunc call (numpy ≥ 2), einsum before: any summation order will do,
# the threshold below has room for it.
_sq_norms = getattr(np, "vecdot", None) or (lambda a, b: np.einsum("...i,...i->...", a, b))


#: x.max() and x.all() without the ndarray methods' Python-level wrappers (same reductions).
_max = np.maximum.reduce
_all = np.logical_and.reduce


def _counted_gradient(problem: Problem, rows: int) -> tuple[Callable, int]:
    """(gradient oracle, evaluations per call still to be counted).  The oracle is the
    problem's ``_gradient`` when its class keeps Problem.gradient (whose shape checks are ~10%
    of a d = 1 step), the caller then adding n·rows per call to ``grad_evals``; otherwise (a
    subclass or a wrapper with its own ``gradient``) the public, self-counting method."""
    if isinstance(problem, Problem) and type(problem).gradient is Problem.gradient:
        return problem._gradient, problem.n * rows
    return problem.gradient, 0


def _inside_threshold(radius: float, d: int) -> float:
    """project_ball's fast-exit threshold r²(1 − 4d·u) (rows whose squared offset is at most it
    are inside the ball whatever the summation order); −inf when it overflows, so that the
    exact test of project_ball decides."""
    thr = radius * radius * (1.0 - 4.0 * d * np.finfo(float).eps)
    return thr if thr < math.inf else -math.inf


def _project_offset(w: np.ndarray, center: np.ndarray, radius: float, inside: float,
                    track: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(Π(w), Π(w) − center, ‖Π(w) − center‖² per row or None), Π the projection onto
    B(center, radius): project_ball's own fast exit (every row's squared offset ≤ ``inside``:
    w unchanged) done here, so that the offset the caller needs next is not computed twice;
    otherwise project_ball decides (and a mutant that replaces it still takes effect).

    ``track``: also return the squared offsets as ``add.reduce(diff·diff)`` (the distance the
    caller records); they then serve the fast exit too, which holds for any summation order,
    and are recomputed from the projected offset when the projection moves a row."""
    diff = w - center
    sq = _squared_offsets(diff, track)
    if _max(sq) <= inside:
        return w, diff, sq if track else None
    w = project_ball(w, center, radius)
    diff = w - center
    return w, diff, _squared_offsets(diff, track) if track else None


def _squared_offsets(diff: np.ndarray, track: bool) -> np.ndarray:
    """‖diff‖² per row: ``add.reduce(diff·diff)`` when tracked (the recorded distance), else
    any summation order.  At d = 1 both are the one product itself (a reduction over one term
    returns it), taken without the reduction's or the gufunc's per-call cost."""
    if diff.shape[-1] == 1:
        return (diff * diff)[:, 0]
    return np.add.reduce(diff * diff, axis=-1) if track else _sq_norms(diff, diff)


def _noise_block(gens: Sequence[np.random.Generator], m: int, d: int) -> np.ndarray:
    """Standard normals of shape (m, R, d): m steps of noise for every row, row r from gens[r].
    (A module-level function so that the mutation self-test can replace the noise draw.)"""
    # Each row's m×d normals are drawn straight into its own contiguous slab (the numbers of
    # g.standard_normal((m, d))); the (m, R, d) result is a transposed view, not a stacked copy.
    out = np.empty((len(gens), m, d))
    for g, slab in zip(gens, out):
        g.standard_normal(out=slab)
    return out.transpose(1, 0, 2)


def _spider_update(est: np.ndarray, G_new: np.ndarray, G_old: np.ndarray,
                   noise: np.ndarray) -> np.ndarray:
    """Spider's recursive estimate ∇_{k,t+1} = ∇_{k,t} + [∇F(w_{k,t+1}) − ∇F(w_{k,t})] + noise.

    Privacy rests on the bracket: only the gradient *difference* is queried, whose sensitivity
    Φ̂_k^{1/κ}/(2γn) the noise σ_k is calibrated to (a fresh ∇F(w_{k,t+1}) would have 2L0/n)."""
    return est + (G_new - G_old) + noise


def _emit(observe: Observer, kind: str, rows: np.ndarray, released: np.ndarray, sigma,
          clean: Callable[[], np.ndarray]) -> None:
    """One release to ``observe``: a copy of it, or, for an observer that measures the noise
    (``measures_noise``: it reads the arrays at once and keeps none), the array itself and
    ``clean=`` its noise-free value on the same draws."""
    if getattr(observe, "measures_noise", False):
        observe(kind, rows, released, sigma, clean=clean())
    else:
        observe(kind, rows, released.copy(), sigma)


def _draw(gens: Sequence[np.random.Generator], rows: np.ndarray, d: int) -> np.ndarray:
    """One N(0, I_d) vector per listed row, each from that row's own generator (drawn in place:
    the same numbers as ``standard_normal(d)``, without a stacking copy)."""
    out = np.empty((len(rows), d))
    for i, r in enumerate(rows):
        gens[r].standard_normal(out=out[i])
    return out


def _privacy_bracket(n: int, d: int, rho: float, kappa: float, gamma: float, L0: float,
                     F0: float) -> float:
    """log(F0) + κ log(n√ρ/(γ L0 √d)) — the log factor shared by K (Alg. 1) and T (Alg. 2)."""
    return math.log(F0) + kappa * math.log(n * math.sqrt(rho) / (gamma * L0 * math.sqrt(d)))

