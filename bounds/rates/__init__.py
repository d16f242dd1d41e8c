"""Each paper's bounds: one module per paper (the correlated-noise paper is a package)."""
