"""The adaptive-clipping linear-regression paper: importing the
unit registers its experiments and audits (:mod:`empirical.papers.linreg.experiments`,
:mod:`empirical.papers.linreg.headline`, :mod:`empirical.papers.linreg.audit`,
:mod:`empirical.papers.linreg.audit_ssgd`, :mod:`empirical.papers.linreg.audit_ssp`, :mod:`empirical.papers.linreg.audit_objpert`) and the coverage reasons
(:mod:`empirical.papers.linreg.coverage_reasons`)."""
from empirical.papers.linreg import (audit, audit_objpert, audit_ssgd, audit_ssp,  # noqa: F401
                                     experiments, headline)
from empirical.papers.linreg import coverage_reasons  # noqa: F401,E402  (after the experiments)
