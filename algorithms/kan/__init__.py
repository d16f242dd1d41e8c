"""Algorithms of the correlated-noise paper (kan_correlated_noise.txt): DP-SGD with
lambda-correlated noise, its privacy calibration and batch samplers."""
