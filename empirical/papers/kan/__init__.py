"""The correlated-noise paper: importing the unit registers its experiments, summaries and
audits, one module per theorem: the λ sweeps (Theorems 4.1, 5.1; :mod:`empirical.papers.kan.lam`),
the non-private sweeps (Theorem E.1 / App. E; :mod:`empirical.papers.kan.nonprivate`), Corollary
5.3 (:mod:`empirical.papers.kan.cor53`), Corollary 5.5 (:mod:`empirical.papers.kan.cor55`),
Corollary 5.6 (:mod:`empirical.papers.kan.cor56`), the margin γ against Wang et al.
(:mod:`empirical.papers.kan.gamma`), Wang et al.'s two-layer DP-GD run on its own
(Section 5.2 / 5.3 'Comparison'; :mod:`empirical.papers.kan.wang`), the
width window (Theorem 4.1; :mod:`empirical.papers.kan.width`), Theorem 4.1 / C.13 in T and B
of a private run (:mod:`empirical.papers.kan.private_tb`), a private run inside Theorem 4.1's width window
(:mod:`empirical.papers.kan.window`), full-batch DP-GD with a tuned step
(App. D.3; :mod:`empirical.papers.kan.tuned_eta`), argument stability (Theorem C.22;
:mod:`empirical.papers.kan.stability`) the privacy audits (the claim and canaries
:mod:`empirical.papers.kan.audit`, the targets :mod:`empirical.papers.kan.audit_targets`,
:mod:`empirical.papers.kan.audit_wang`; the mutants :mod:`empirical.papers.kan.mutants`) and the variables declared not swept
(:mod:`empirical.papers.kan.unswept`)."""
from empirical.papers.kan import (audit, lam, nonprivate, cor55, cor53, width,  # noqa: F401
                                  tuned_eta, stability, cor56, gamma, unswept, wang,
                                  audit_wang, private_tb, audit_targets, mutants, window)
