"""Mutants of sufficient statistics perturbation and objective perturbation (Varshney, Thakurta,
Jain §1: the prior methods, ``algorithms.linreg.ssp``, ``algorithms.linreg.objpert``), built from
the bugs injected in :mod:`empirical.papers.linreg.audit_ssp` and
:mod:`empirical.papers.linreg.audit_objpert`; the other linreg mutants are registered beside their
audits in :mod:`empirical.papers.linreg.audit`.  Every patch is confined to its algorithm's
module (``everywhere=False``): ``gaussian_noise`` is shared by every linreg algorithm, and the
experiments recompute the claimed α·Δ with their own binding of ``ssp_sensitivity``."""
from __future__ import annotations

from empirical.papers.linreg import audit_objpert, audit_ssp
from empirical.privacy.mutants import Mutant, Patch, register_mutant

_SSP = "algorithms.linreg.ssp"
register_mutant(Mutant(
    "linreg.ssp.xty_noise_omitted", "linreg",
    "SSP adds no noise to Xᵀy (XᵀX noised, the accounting unchanged)",
    (Patch(_SSP, "gaussian_noise", audit_ssp.xty_noise_omitted, everywhere=False),),
    experiments=("linreg.ssp.d",), audits=("linreg.ssp",), bug_class="noise omitted",
    audit_trials=4_000))
register_mutant(Mutant(
    "linreg.ssp.add_remove_sensitivity", "linreg",
    "SSP calibrates its noise to the add/remove sensitivity √(B_x⁴ + B_x²B_y²) for its "
    "replace-one claim",
    (Patch(_SSP, "ssp_sensitivity", audit_ssp.add_remove_sensitivity, everywhere=False),),
    experiments=("linreg.ssp.d",), bug_class="",
    verify_note="the measured noise (0.59 of the α·Δ recomputed in the experiment) and the "
                "settings verdict used_sensitivity = theory_sensitivity; the audit at this ε "
                "has too little power (exact ε 5.8 against the claimed 4)"))

_OP = "algorithms.linreg.objpert"
register_mutant(Mutant(
    "linreg.objpert.regulariser_dropped", "linreg",
    "objective perturbation without its regulariser Λ (the Jacobian term still reported as "
    "log(1 + ε/2))",
    (Patch(_OP, "objpert_parameters", audit_objpert.regulariser_dropped,
           everywhere=False),),
    audits=("linreg.objpert",), audit_trials=20_000))
register_mutant(Mutant(
    "linreg.objpert.noise_halved", "linreg",
    "objective perturbation draws half the noise its accountant sees",
    (Patch(_OP, "gaussian_noise", audit_objpert.noise_scaled(0.5),
           everywhere=False),),
    experiments=("linreg.objpert.n",),
    verify_note="the measured noise of the perturbed linear term (0.5 of the 2ζz recomputed in "
                "the experiment); no audit can see it: the claim is loose (exact ε ≤ 2.1 on the "
                "searched pairs with the noise halved, against the claimed 4)"))
