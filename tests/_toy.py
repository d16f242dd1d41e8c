"""Toy experiments with a known power law, for testing the harness itself (not a paper)."""
import numpy as np

import sympy as sp

import bounds
from empirical.core.experiment import Check, Experiment, register

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


def run_slow(point, rngs):
    """The toy law, slowly, recording this process's pid (pool and Ctrl-C tests find workers)."""
    import os
    import time

    pid_dir = os.environ.get("DPRATES_TOY_PIDS")
    if pid_dir:
        open(os.path.join(pid_dir, str(os.getpid())), "w").close()
    time.sleep(point["sleep"])
    return run_power_law(point, rngs)


#: Points that take ``sleep`` seconds: long enough to interrupt a sweep in the middle.
TOY_SLOW = register(Experiment(
    id="toy.slow", paper="kl", title="toy power law, slowly", variable="n",
    quick_grid=TOY.quick_grid, full_grid=TOY.full_grid, fixed={**TOY.fixed, "sleep": 0.6},
    seeds=6, run=run_slow, metric="metric", bound_values=lambda p: {"n": p["n"]},
    checks=TOY.checks, private=False,
))


def run_fails_at_4(point, rngs):
    if point["n"] == 4.0:
        raise ValueError("boom at n=4")
    return run_power_law(point, rngs)


#: Point n = 4 raises: the sweep must name it and keep the points computed before.
TOY_FAILS = register(Experiment(
    id="toy.fails", paper="kl", title="toy, one point raises", variable="n",
    quick_grid=TOY.quick_grid, full_grid=TOY.full_grid, fixed=TOY.fixed, seeds=6,
    run=run_fails_at_4, metric="metric", bound_values=lambda p: {"n": p["n"]},
    checks=TOY.checks, private=False,
))


def run_dies_once(point, rngs):
    """Point n = 4 kills its own worker process the first time (marker file in
    $DPRATES_TOY_MARKER), as an out-of-memory kill would; only ever run it in a pool."""
    import os
    import signal

    marker = os.environ["DPRATES_TOY_MARKER"]
    if point["n"] == 4.0 and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return run_power_law(point, rngs)


TOY_DIES = register(Experiment(
    id="toy.dies_once", paper="kl", title="toy, a worker dies once", variable="n",
    quick_grid=TOY.quick_grid, full_grid=TOY.full_grid, fixed=TOY.fixed, seeds=6,
    run=run_dies_once, metric="metric", bound_values=lambda p: {"n": p["n"]},
    checks=TOY.checks, private=False,
))
