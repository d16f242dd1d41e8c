"""Mutants of [29]'s algorithm (the SOSP paper's reference [29], Liu, Ganesh, Oh, Thakurta;
:mod:`algorithms.sosp.liu`), registered with the paper: its AboveThreshold without threshold
noise, with its query noise halved, and its DP-SPIDER without O₁ noise.  Each is defined beside
the audit that must catch it (:mod:`empirical.papers.sosp.audit_liu`); the mutants of the
paper's own algorithms are registered by :mod:`empirical.papers.sosp.audit`."""
from empirical.papers.sosp.audit_liu import LIU_MUTANTS
from empirical.privacy.mutants import register_mutant

for _m in LIU_MUTANTS:
    register_mutant(_m)
