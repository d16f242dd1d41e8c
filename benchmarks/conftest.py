"""Benchmarks of dprates' hot kernels beside the baselines a researcher would otherwise run.

Not part of the default test run (``testpaths = ["tests"]``).  Run them with

    pytest benchmarks --benchmark-enable              # every kernel, timed
    pytest benchmarks -k ratio --benchmark-enable     # the side-by-side speed-up checks only

Opacus comparisons need torch and Opacus (``pip install -e ".[bench]"``) and are skipped
cleanly without them.
"""
import pytest


def pytest_collection_modifyitems(config, items):
    # The project's addopts disable benchmarks so that tests/ run them once untimed; here the
    # timings are the point, so say so when they were not enabled.
    if config.getoption("benchmark_disable", default=False):
        for item in items:
            item.add_marker(pytest.mark.filterwarnings("ignore"))


@pytest.fixture(scope="session")
def torch_and_opacus():
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    torch.set_num_threads(1)
    return torch, opacus
