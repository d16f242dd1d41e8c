"""Algorithms of the KL-condition paper (kl_condition_zcdp.txt): noisy GD, SPIDER, adaptive
noisy GD and the proximal-point method."""
