"""The adaptive-clipping linear-regression paper: importing the
unit registers its experiments and audits (:mod:`empirical.papers.linreg.experiments`)."""
from empirical.papers.linreg import audit, experiments  # noqa: F401
