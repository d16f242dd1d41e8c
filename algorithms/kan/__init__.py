"""Algorithms of the correlated-noise paper: DP-SGD with
lambda-correlated noise, its privacy calibration and batch samplers."""
