"""A researcher's paper in its own package, as ``dprates --module bst14.rates`` loads it: the
Gaussian mechanism for a mean (Bassily, Smith, Thakurta, FOCS 2014, Section 3's building block),
kept tiny for the plugin tests.  The paper key is the package's name."""
