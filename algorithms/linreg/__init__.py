"""Algorithms of the adaptive-clipping linear-regression paper:
DP-AMBSSGD and its fixed-clip baseline."""
