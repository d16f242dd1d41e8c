"""The plugin's private release (a module its experiment reaches through ``rates``): the
mean of n points in the unit ball plus Gaussian noise calibrated to ρ-zCDP (ℓ2 sensitivity 2/n
under replace-one)."""
import numpy as np


def noise_std(n: int, rho: float) -> float:
    """σ of the Gaussian mechanism: sensitivity 2/n, ρ = Δ²/(2σ²)."""
    return 2.0 / (n * np.sqrt(2.0 * rho))


def noisy_mean(x: np.ndarray, rho: float, rngs: list) -> np.ndarray:
    """One release per generator (rows: seeds)."""
    s = noise_std(x.shape[0], rho)
    return np.stack([x.mean(axis=0) + s * g.standard_normal(x.shape[1]) for g in rngs])
