"""The plugin paper's bound and experiment: E‖μ̂ − x̄‖² = 2d/(n²ρ) for the Gaussian mechanism
of :mod:`.sgd`, swept in n."""
from pathlib import Path

import numpy as np

import bounds
from empirical import Check, Experiment, register

from . import sgd

KEY = __package__
bounds.register_paper(
    KEY, title="Private Empirical Risk Minimization: Efficient Algorithms and Tight Error Bounds",
    citation="Bassily, Smith, Thakurta, FOCS 2014", url="https://arxiv.org/abs/1405.7085",
    errata=str(Path(__file__).with_name("errata.md")))
n, d, rho = bounds.sym("n"), bounds.sym("d"), bounds.sym("rho")
bounds.register(bounds.Bound(
    id=f"{KEY}:mean", expr=2 * d / (n**2 * rho), quantity="E‖μ̂ − x̄‖²",
    source="Gaussian mechanism, sensitivity 2/n", privacy="ρ-zCDP, replace-one"))


def run(point: dict, rngs: list) -> dict:
    x = np.zeros((int(point["n"]), int(point["d"])))
    released = sgd.noisy_mean(x, point["rho"], rngs)
    return {"sq_error": np.sum(released**2, axis=1)}


register(Experiment(
    id=f"{KEY}.mean.n", paper=KEY, title="Gaussian mean: squared error against n", variable="n",
    quick_grid=(100.0, 300.0, 1000.0, 3000.0), full_grid=(100.0, 300.0, 1000.0, 3000.0),
    fixed={"d": 50.0, "rho": 0.5}, seeds=8, run=run, metric="sq_error",
    bound_values=lambda p: {"n": p["n"], "d": p["d"], "rho": p["rho"]},
    checks=(Check(f"{KEY}:mean", "two-sided", 0.1,
                  "exact rate; 8 seeds of a χ²_50 spread the log-mean by ~0.07",
                  level=(0.7, 1.4), level_source="instance", level_reason="E‖noise‖² equals the bound exactly"),),
    private=False))
