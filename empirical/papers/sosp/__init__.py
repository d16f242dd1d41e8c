"""The second-order stationary point paper (sosp_nonconvex.txt): importing the unit registers its
experiments and audits (:mod:`empirical.papers.sosp.experiments`)."""
from empirical.papers.sosp import audit, experiments  # noqa: F401
