"""Algorithms of the adaptive-clipping linear-regression paper (linreg_adaptive_clipping.txt):
DP-AMBSSGD and its fixed-clip baseline."""
