"""The adaptive-clipping linear-regression paper: importing the
unit registers its experiments and audits (:mod:`empirical.papers.linreg.experiments`,
:mod:`empirical.papers.linreg.headline`)."""
from empirical.papers.linreg import audit, experiments, headline  # noqa: F401
