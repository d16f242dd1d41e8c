"""Algorithms of the KL-condition paper: noisy GD, SPIDER, adaptive
noisy GD and the proximal-point method."""
