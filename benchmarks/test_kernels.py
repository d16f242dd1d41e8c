"""Shared kernels: the correlated-noise generator, an accountant call, and batched seeds.

Each is timed beside the straightforward alternative a researcher would write first.
"""
import numpy as np
import pytest
from _timing import cpu_side_by_side, load_average

from algorithms.accounting import epsilon, gaussian_event
from algorithms.kl.condition import noisy_gd
from algorithms.primitives import CorrelatedNoiseStream, correlated_noise, correlated_noise_matrix
from empirical.papers.kl.experiments import LinearLoss


@pytest.mark.benchmark(group="correlated-noise")
@pytest.mark.parametrize("T, d", [(1000, 100), (1000, 1000)])
def test_bench_correlated_noise_blocked(benchmark, T, d):
    out = benchmark(lambda: correlated_noise(np.random.default_rng(0), T, d, 0.9, 1.0))
    assert out.shape == (T, d)


@pytest.mark.benchmark(group="correlated-noise")
@pytest.mark.parametrize("T, d", [(1000, 100)])
def test_bench_correlated_noise_streamed(benchmark, T, d):
    def run():
        s = CorrelatedNoiseStream(np.random.default_rng(0), d, 0.9, 1.0)
        return [s.next() for _ in range(T)]
    benchmark(run)


@pytest.mark.benchmark(group="correlated-noise")
@pytest.mark.parametrize("T, d", [(1000, 100)])
def test_bench_correlated_noise_dense_inverse(benchmark, T, d):
    """The textbook matrix-mechanism form C⁻¹Z with a dense T×T inverse."""
    C = correlated_noise_matrix(0.9, T)

    def run():
        Z = np.random.default_rng(0).standard_normal((T, d))
        return np.linalg.solve(C, Z)
    out = benchmark(run)
    np.testing.assert_allclose(out, correlated_noise(np.random.default_rng(0), T, d, 0.9, 1.0),
                               atol=1e-8)


@pytest.mark.benchmark(group="accountant")
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_bench_accountant_call(benchmark, accountant):
    ev = gaussian_event(1.1, 1000)
    # PLD takes from tens of seconds to minutes for 1000 compositions: a few rounds say enough.
    eps = benchmark.pedantic(lambda: epsilon(ev, 1e-5, accountant=accountant), rounds=3,
                             iterations=1)
    assert eps > 0


def _noisy_gd(R: int):
    p = LinearLoss.sample(500, 20, 1.0)
    return lambda: noisy_gd(p, rho=0.1, w0=np.zeros(20), L0=1.0, L1t=1.0, T=300,
                            rng=[np.random.default_rng(s) for s in range(R)])


@pytest.mark.benchmark(group="seeds")
def test_bench_seeds_batched(benchmark):
    benchmark(_noisy_gd(16))


@pytest.mark.benchmark(group="seeds")
def test_bench_seeds_looped(benchmark):
    one = _noisy_gd(1)
    benchmark(lambda: [one() for _ in range(16)])


def test_ratio_batched_vs_looped_seeds(benchmark):
    """The target: 16 seeds as one (16, d) computation ≥ 3× faster than 16 runs (CPU
    times side by side, interleaved; the rows are the same either way, tests/test_kl_algorithms)."""
    batched, one = _noisy_gd(16), _noisy_gd(1)
    t = cpu_side_by_side({"batched": batched, "looped": lambda: [one() for _ in range(16)]},
                         blocks=3, calls=3)
    ratio = t["looped"][1] / t["batched"][1]        # minima, as in test_dpsgd_step._ratio
    benchmark.extra_info.update(batched_min_s=t["batched"][1], looped_min_s=t["looped"][1],
                                ratio=ratio, ratio_of_medians=t["looped"][0] / t["batched"][0],
                                load_average=load_average())
    benchmark.pedantic(batched, rounds=1, iterations=1)
    print(f"\nseeds: batched {t['batched'][1] * 1e3:.1f} ms, looped {t['looped'][1] * 1e3:.1f} ms "
          f"(CPU minima): {ratio:.1f}x; medians {t['looped'][0] / t['batched'][0]:.1f}x; "
          f"load {load_average():.1f}")
    assert ratio >= 3.0, f"batched seeds only {ratio:.1f}x looped seeds"
