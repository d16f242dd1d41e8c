"""Algorithms of the user-level SCO paper: Algorithm 1 (phased SGD with
outlier removal), Algorithms 2-4 (accelerated phased ERM, AboveThreshold), their accounting."""
