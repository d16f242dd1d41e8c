"""Footnote 3's baseline of the user-level SCO paper (Lowy, Liu, Asi) as a
full algorithm: [FKT20]'s Phased ERM on all nm items, user-level private by group privacy
(:mod:`algorithms.userlevel.fkt20`), run against its own claimed rate (footnote 3: privacy error
√d/(εn), m-free) on the instance of ``userlevel.gain.m``.

Run code lives here, apart from the declaration in :mod:`empirical.papers.userlevel.risk`, so that
editing a check does not change the rows' code fingerprint.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.userlevel.fkt20 import fkt20_group_privacy_erm
from empirical.papers.userlevel.common import PRIVACY_RTOL, _int, _privacy_cols
from empirical.papers.userlevel.problems import QuadraticUsers
from empirical.papers.userlevel.routes import pld_route_columns

__all__ = ["run_fkt20_group"]


def _fkt20_routes(res, eps: float, delta: float, m: int) -> dict:
    """Second routes of the calibration (:mod:`empirical.papers.userlevel.routes`): the item-level
    ε' the PLD accountant reports at the multiplier its search found, against the exact ε of one
    Gaussian release at that multiplier and δ' (relative :data:`EXACT_SLACK`); the item budget
    (ε/m, δ/(m e^{(m−1)ε/m})) of group privacy recomputed here, and ε_user = m·ε' within the
    target."""
    p = res.privacy
    dl_i = delta / (m * math.exp((m - 1) * eps / m))
    cols = pld_route_columns("item", p.z, dl_i, p.item_epsilon)
    cols.update({"used_item_delta": p.delta_item, "theory_item_delta": dl_i,
                 "max_item_epsilon_route": m * cols["item_epsilon_exact"],
                 "limit_item_epsilon_route": eps * (1 + PRIVACY_RTOL)})
    return cols


def run_fkt20_group(point: dict, rngs: list) -> dict:
    """Rows of [FKT20] Phased ERM through group privacy on QuadraticUsers, with a coupled
    noise-free run of the same data (``nonprivate_excess``: what privacy did not add)."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    cols: dict[str, list] = {}
    for g in rngs:
        data_rng, alg_rng = g.spawn(2)
        data = QuadraticUsers(n, m, d, data_rng)
        res = fkt20_group_privacy_erm(data, eps, delta, alg_rng)
        ref = fkt20_group_privacy_erm(data, eps, delta, alg_rng, noise=False)
        row = {"excess": float(data.excess(res.x)[0]),
               "nonprivate_excess": float(data.excess(ref.x)[0]),
               "grad_evals": res.grad_evals, "phases": len(res.phases),
               "eta": res.info["eta"], "item_epsilon": res.info["item_epsilon"],
               "item_delta": res.info["item_delta"], "sigma_1": res.phases[0]["sigma_i"],
               "sigma_last": res.phases[-1]["sigma_i"], "z": res.phases[0]["z"],
               **_fkt20_routes(res, eps, delta, m),
               **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()}}
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}
