"""Bounds of the correlated-noise paper (kan_correlated_noise.txt): the theorems' rates
(:mod:`bounds.rates.kan.correlated_noise`) and the calibrations, corollaries and prior rates
(:mod:`bounds.rates.kan.calibration_corollaries`); importing the package registers both."""
from bounds.rates.kan import calibration_corollaries, correlated_noise  # noqa: F401
