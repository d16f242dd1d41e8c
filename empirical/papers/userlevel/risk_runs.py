"""Run code of the user-level SCO paper's direct risk experiments (Lowy, Liu, Asi):
the paired user-level/item-level run behind the gain of Theorem 3.2/C.3
over footnote 3's baseline.  Kept apart from the declarations
(:mod:`empirical.papers.userlevel.risk`) so that editing a check does not change the rows' code
fingerprint.

Each seed draws one QuadraticUsers data set and runs on it both Algorithm 3 and the user-as-item
baseline (the same schedule computed for m = 1, sensitivity 2L/K_i, no outlier removal), each at
the full ε with its own algorithm and noise streams.  ``gain`` = excess(Algorithm 3) /
excess(baseline) on the same users: the sampling error of the data set enters both, so the
ratio is what user-level privacy buys over item-level privacy for this very draw.
"""
from __future__ import annotations

import numpy as np

from algorithms.userlevel.alg3 import accelerated_phased_erm, item_level_baseline
from empirical.papers.userlevel.alg3_runs import _alg3_theory_phase1
from empirical.papers.userlevel.common import _alg3_kw, _int, _privacy_cols
from empirical.papers.userlevel.problems import QuadraticUsers
from empirical.papers.userlevel.routes import multiplier_route_columns

__all__ = ["run_gain_pair"]


def run_gain_pair(point: dict, rngs: list) -> dict:
    """Rows of paired runs (Algorithm 3, baseline) on one data set per generator in ``rngs``.

    Privacy columns: ``epsilon_*`` are Algorithm 3's; ``baseline_epsilon_*`` the baseline's
    (each release is separately (ε, δ)-private; the pair is a measurement, not a release).
    Settings columns: each run's phase-1 multiplier against the theorem's T_1 releases composed
    exactly (:func:`empirical.papers.userlevel.routes.multiplier_route_columns`)."""
    n, m, d = _int(point, "n"), _int(point, "m"), _int(point, "d")
    eps, delta = float(point["epsilon"]), float(point["delta"])
    cols: dict[str, list] = {}
    for g in rngs:
        data_rng, alg_rng, base_rng = g.spawn(3)
        data = QuadraticUsers(n, m, d, data_rng)
        res = accelerated_phased_erm(data, eps, delta, alg_rng, **_alg3_kw(point))
        ex = float(data.excess(res.x)[0])
        base = item_level_baseline(data, eps, delta, base_rng, **_alg3_kw(point))
        ex_b = float(data.excess(base.x)[0])
        bp = _privacy_cols(base, eps, 1)
        row = {"gain": ex / ex_b, "excess": ex, "baseline_excess": ex_b,
               "halted": int(res.halted), "baseline_halted": int(base.halted),
               "phases": len(res.phases), "baseline_phases": len(base.phases),
               "sigma_1": res.phases[0]["sigma_i"], "baseline_sigma_1": base.phases[0]["sigma_i"],
               "T_1": res.phases[0]["T_i"], "K_1": res.phases[0]["K_i"],
               "sensitivity_1": res.phases[0]["sensitivity"],
               "tau": res.info["tau"], "grad_evals": res.grad_evals,
               **{k: v[0] for k, v in _privacy_cols(res, eps, 1).items()},
               **{f"baseline_{k}": v[0] for k, v in bp.items()}}
        for algorithm, tag, eps_g, dl_g, r in (("alg3", "gauss_1", eps / 2.0, delta / 2.0, res),
                                               ("baseline", "baseline_gauss_1", eps, delta, base)):
            th = _alg3_theory_phase1({**point, "algorithm": algorithm}, data.L, data.R, data.beta)
            row.update(multiplier_route_columns(tag, r.privacy.phases[0].z, th["T_1"], dl_g,
                                                eps_g, 2 * th["K_1"] <= th["n_1"]))
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.asarray(v) for k, v in cols.items()}
