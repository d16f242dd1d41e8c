"""The user-level SCO paper: importing the unit registers its experiments,
summaries and audits (:mod:`empirical.papers.userlevel.experiments`)."""
from empirical.papers.userlevel import audit, experiments  # noqa: F401
