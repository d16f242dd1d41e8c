"""The KL-condition paper: importing the unit registers its experiments,
summaries and audits (:mod:`empirical.papers.kl.experiments`)."""
from empirical.papers.kl import audit, experiments, mutants  # noqa: F401
