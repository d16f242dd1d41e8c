import sys
from pathlib import Path

import pytest

# Toy experiments used to test the harness live next to the tests.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def results_root(tmp_path_factory):
    """One results directory per test session: paper tests share quick-grid sweeps."""
    return tmp_path_factory.mktemp("results")
