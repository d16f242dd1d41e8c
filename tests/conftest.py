"""Test-run-wide set-up: the shared results directory, pre-swept in one queue, and a guard
that no test leaves the process's SIGINT handler changed.

Pre-sweep: the experiment tests sweep quick grids into the test run's
``results_root`` from module fixtures, one experiment after another, each with its own pool,
so a slow point idles the other worker.  Instead, the first test that asks for
``results_root`` triggers one :func:`empirical.run.scheduling.sweep_all` over every experiment
those selected modules will sweep (longest point first, validations on the workers too); the
modules' own ``sweep(...)`` calls then only read the stored rows (the runner is resumable, and
a point is recomputed only if its code changed since, which cannot happen within a test run).

Which experiments: those a selected test module *that uses* ``results_root`` names in a
module-level list or tuple of experiment ids (``IDS``, ``NEW_IDS``, ...).  A test run that
selects no such module (``pytest tests/test_bounds_kl.py``) sweeps nothing.  A pre-sweep that
fails (a point raising, an invalid declaration) is not an error here: the module's own
``sweep`` call then raises it inside the test that needs it.
"""
import os
import signal
import sys
import time
from pathlib import Path

import pytest

# Toy experiments used to test the harness live next to the tests.
sys.path.insert(0, str(Path(__file__).parent))

_PRESWEEP = pytest.StashKey[list]()
_SIGINT = pytest.StashKey[object]()


def _experiment_ids_named(module, known: set) -> list:
    out = []
    for value in vars(module).values():
        if (isinstance(value, (list, tuple)) and value
                and all(isinstance(v, str) for v in value) and set(value) <= known):
            out += [v for v in value if v not in out]
    return out


def experiments_to_presweep(items) -> list:
    """Ids of the experiments the selected modules using ``results_root`` name (see module
    docstring), in a stable order."""
    modules = {id(it.module): it.module for it in items
               if "results_root" in getattr(it, "fixturenames", ())
               and getattr(it, "module", None) is not None}
    if not modules:
        return []
    from empirical.core import experiment as registry

    known = set(registry.ids())
    out = []
    for mod in sorted(modules.values(), key=lambda m: m.__name__):
        out += [i for i in _experiment_ids_named(mod, known) if i not in out]
    return out


def pytest_collection_modifyitems(session, config, items):
    # DPRATES_NO_PRESWEEP=1: each module sweeps its own experiments (to measure the difference)
    config.stash[_PRESWEEP] = ([] if os.environ.get("DPRATES_NO_PRESWEEP") == "1"
                               else experiments_to_presweep(items))


def _presweep(ids: list, root: Path) -> None:
    from empirical.core import experiment as registry
    from empirical.run.runner import SweepError
    from empirical.run.scheduling import sweep_all

    t0 = time.perf_counter()
    try:
        outcomes = sweep_all([registry.get(i) for i in ids], results=root, workers=2)
    except SweepError as exc:      # the modules' own sweeps raise it where it matters
        print(f"\n[pre-sweep] stopped: {exc}", file=sys.stderr)
        return
    computed = sum(o.stats.fresh + o.stats.recomputed for o in outcomes.values())
    failed = [i for i, o in outcomes.items() if o.error or o.invalid]
    print(f"\n[pre-sweep] {len(ids)} experiments, {computed} points computed in "
          f"{time.perf_counter() - t0:.0f}s" + (f"; not complete: {failed}" if failed else ""),
          file=sys.stderr)


@pytest.fixture(scope="session")
def results_root(tmp_path_factory, request):
    """One results directory per test run: paper tests share quick-grid sweeps, computed
    once for all selected modules in one queue (module docstring)."""
    root = tmp_path_factory.mktemp("results")
    ids = request.config.stash.get(_PRESWEEP, [])
    if ids:
        _presweep(ids, root)
    return root


# ------------------------------------------------------------------------------------ SIGINT guard
# A test that leaves SIGINT ignored (or replaced) makes every later child process inherit it: a
# CLI started later would ignore Ctrl-C and the Ctrl-C test would pass or fail by test order.
def pytest_sessionstart(session):
    session.config.stash[_SIGINT] = signal.getsignal(signal.SIGINT)


def pytest_report_header(config):
    # A shell starts a background command (`pytest &` in a script, nohup) with SIGINT ignored;
    # Python then installs no KeyboardInterrupt handler and every child inherits SIG_IGN.  No
    # test changes it (the guard below); say so when the test run itself started that way.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return ("SIGINT: ignored, inherited from whatever started pytest (a background job?); "
                "subprocesses inherit it too")
    return None


@pytest.fixture(autouse=True)
def _sigint_unchanged(request):
    """Fails (an error at teardown, naming the test) if the test left SIGINT changed."""
    yield
    expected = request.config.stash.get(_SIGINT, None)
    now = signal.getsignal(signal.SIGINT)
    if expected is not None and now is not expected:
        signal.signal(signal.SIGINT, expected)      # one leak must not fail every later test
        pytest.fail(f"{request.node.nodeid} left the SIGINT handler changed ({now!r}, was "
                    f"{expected!r}); restore it where it was set", pytrace=False)


@pytest.fixture(scope="session")
def coverage_gaps() -> dict:
    """Per paper, the (bound, variable, status) pairs that are merely held or unjudged, computed
    in a fresh interpreter: other tests register throw-away bounds under real paper ids
    (tests/_toy.py, tests/test_bounds_core.py), which are not the project's statements."""
    import json
    import subprocess

    root = Path(__file__).resolve().parent.parent
    code = ("import json; import empirical.papers; from empirical.core import coverage; "
            "print(json.dumps({p: [(c.bound, c.variable, c.status) for c in coverage.cells(p) "
            "if c.status in ('held', 'none')] for p in ('kl', 'kan', 'linreg', 'sosp', "
            "'userlevel')}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {p: [tuple(g) for g in gaps] for p, gaps in json.loads(proc.stdout).items()}
