"""Toy experiments with a known power law, for testing the harness itself (not a paper)."""
import numpy as np

import sympy as sp

import bounds
from empirical.experiment import Check, Experiment, register

TOY_BOUND = bounds.register(bounds.Bound(id="kl:toy_power_law", expr=bounds.sym("n") ** sp.Rational(-3, 2),
                                         quantity="toy metric", source="tests/_toy.py"))

CALLS = []          # grid values run in this process (resume test counts them)


def run_power_law(point, rngs):
    CALLS.append(point["n"])
    noise = np.array([g.standard_normal() for g in rngs])
    return {"metric": point["c"] * point["n"] ** point["slope"] * np.exp(0.3 * noise),
            "raw_noise": noise}


TOY = register(Experiment(
    id="toy.power_law", paper="kl", title="toy power law", variable="n",
    quick_grid=(1.0, 2.0, 4.0, 8.0, 16.0, 32.0), full_grid=(1.0, 10.0, 100.0, 1000.0),
    fixed={"c": 3.0, "slope": -1.5}, seeds=6, run=run_power_law, metric="metric",
    bound_values=lambda p: {"n": p["n"]},
    checks=(Check("kl:toy_power_law", "two-sided", 0.15, "toy: 6 seeds, 0.3 log-noise"),),
    private=False,
))

WRONG_BOUND = bounds.register(bounds.Bound(id="kl:toy_wrong_rate", expr=1 / bounds.sym("n"),
                                           quantity="toy metric", source="tests/_toy.py"))

#: Same data, checked against a wrong rate (slope −1): verify must fail.
TOY_WRONG = register(Experiment(
    id="toy.wrong_rate", paper="kl", title="toy, wrong rate", variable="n",
    quick_grid=TOY.quick_grid, full_grid=TOY.full_grid, fixed=TOY.fixed, seeds=6,
    run=run_power_law, metric="metric", bound_values=lambda p: {"n": p["n"]},
    checks=(Check("kl:toy_wrong_rate", "two-sided", 0.15, "toy"),),
    private=False,
))

#: The same wrong rate recorded as a finding: reported, and verify does not fail.
TOY_FINDING = register(Experiment(
    id="toy.finding", paper="kl", title="toy, recorded finding", variable="n",
    quick_grid=TOY.quick_grid, full_grid=TOY.full_grid, fixed=TOY.fixed, seeds=6,
    run=run_power_law, metric="metric", bound_values=lambda p: {"n": p["n"]},
    checks=(Check("kl:toy_wrong_rate", "two-sided", 0.15, "toy", expect="finding"),),
    private=False,
))
