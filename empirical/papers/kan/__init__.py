"""The correlated-noise paper: importing the unit registers its
experiments, summaries and audits (:mod:`empirical.papers.kan.experiments`) and the rate
experiments beyond the λ sweeps (ηT collapse, batch size, Corollary 5.3;
  :mod:`empirical.papers.kan.rates`; argument stability, :mod:`empirical.papers.kan.stability`)."""
from empirical.papers.kan import audit, experiments, rates, stability  # noqa: F401
