"""Real data, in miniature (pseudo-paper ``real``): importing the unit registers every real-data
experiment (:mod:`empirical.papers.real.data`)."""
from empirical.papers.real import data  # noqa: F401
