"""Speed of hot kernels, measured by pytest-benchmark (disabled in the default run by
``--benchmark-disable``, which still executes each once; time them with
``pytest tests/test_benchmarks.py --benchmark-enable``)."""
import numpy as np
import pytest

from algorithms.kl.condition import noisy_gd
from algorithms.primitives import clip_per_sample, correlated_noise
from empirical.core.fitting import fit_slope
from empirical.papers.kl.experiments import LinearLoss


@pytest.mark.benchmark(group="kernels")
def test_bench_noisy_gd_1000_steps_16_seeds(benchmark):
    p = LinearLoss.sample(1000, 100, 1.0)
    gens = lambda: [np.random.default_rng(s) for s in range(16)]  # noqa: E731
    r = benchmark(lambda: noisy_gd(p, rho=0.1, w0=np.zeros(100), L0=1.0, L1t=1.0, T=1000, rng=gens()))
    assert r.w.shape == (16, 100)


@pytest.mark.benchmark(group="kernels")
def test_bench_clip_per_sample(benchmark):
    g = np.random.default_rng(0).standard_normal((100_000, 50))
    out = benchmark(clip_per_sample, g, 1.0)
    assert out.shape == g.shape


@pytest.mark.benchmark(group="kernels")
def test_bench_correlated_noise(benchmark):
    out = benchmark(lambda: correlated_noise(np.random.default_rng(0), 10_000, 100, 0.9, 1.0))
    assert out.shape == (10_000, 100)


@pytest.mark.benchmark(group="kernels")
def test_bench_bootstrap_fit(benchmark):
    rng = np.random.default_rng(0)
    x = np.geomspace(1, 1e3, 9)
    vals = [x_ ** -1 * np.exp(rng.standard_normal(16)) for x_ in x]
    f = benchmark(fit_slope, x, vals)
    assert f.ci_low < f.slope < f.ci_high
