"""Mutants of the KAN paper's algorithms for the mutation self-test
(:mod:`empirical.privacy.mutants`): Algorithm 1's noise, correlation, sensitivity and accountants
(audited by :mod:`empirical.papers.kan.audit_targets`), and Wang et al.'s two-layer DP-GD
(audited by :mod:`empirical.papers.kan.audit_wang`)."""
from __future__ import annotations

import tempfile

import numpy as np

from empirical.privacy.mutants import (Mutant, Patch, get_mutant, register_mutant, run_mutant,
                                       scaled_result)

__all__ = ["KAN_MUTANTS", "run_kan_mutant"]

_ALG = "algorithms.kan.correlated_noise"
_PRIM = "algorithms.primitives"
_PRIV = "algorithms.kan.privacy"      # the calibrations and accountants (split from _ALG)
_TESTS = "tests/test_kan_algorithms.py"
_STREAM = "tests/test_audit_kan.py::test_e2e_releases_are_the_claimed_noise_stream"


def _wrap_run(noise_factor: float = 1.0, drop_lam: bool = False):
    """make(orig) for dp_sgd_correlated: draw noise at noise_factor·κ and/or with λ = 0 in the
    noise stream, while ``params`` report what was asked (the bug is invisible in the rows)."""
    def make(orig):
        def run(*a, **kw):
            lam, kap = kw.get("lam"), kw.get("noise_multiplier")
            kw2 = dict(kw)
            if drop_lam:
                kw2["lam"] = np.zeros_like(np.asarray(lam, dtype=float))
            kw2["noise_multiplier"] = noise_factor * np.asarray(kap, dtype=float)
            res = orig(*a, **kw2)
            k = int(kw.get("rows_per_seed", 1))
            reps = len(res.params["lam"]) // k
            res.params["lam"] = np.tile(np.broadcast_to(np.asarray(lam, float), (k,)), reps)
            kr = np.tile(np.broadcast_to(np.asarray(kap, float), (k,)), reps)
            res.params["noise_std"] = kw["C_clip"] * kr / kw["B"]
            res.params["noise_multiplier"] = kr
            return res
        return run
    return make


_MECH = ("kan.mechanism.tight.cyclic", "kan.mechanism.tight.fresh", "kan.e2e.tight.stepwise")
KAN_MUTANTS = ("kan.sensitivity_ignores_lambda", "kan.noise_halved", "kan.lambda_dropped",
               "kan.accountant_off_by_2", "kan.tight_replace_factor_dropped",
               "kan.tight_steps_halved", "kan.noise_removed",
               "kan.two_layer.relation_factor_dropped")

register_mutant(Mutant(
    "kan.sensitivity_ignores_lambda", "kan",
    "correlated_sensitivity returns the λ = 0 value √k (every calibration under-noises)",
    (Patch(_PRIM, "correlated_sensitivity",
           lambda orig: (lambda lam, T, participations=1, min_separation=None:
                         orig(0.0, T, participations, min_separation))),),
    experiments=("kan.lam.tight.cyclic",), audits=_MECH,
    tests=(f"{_TESTS}::test_contiguous_block_is_the_worst_participation_set",)))
register_mutant(Mutant(
    "kan.noise_halved", "kan", "dp_sgd_correlated draws its noise at κ/2 (reports κ)",
    (Patch(_ALG, "dp_sgd_correlated", _wrap_run(noise_factor=0.5)),),
    # 10⁵ runs: at 4·10⁴ the end-to-end audit's ε_lo (4.5) cleared the claim (4) by little
    experiments=("kan.lam.fixed_kappa",), audits=("kan.e2e.tight.stepwise",), audit_trials=100_000,
    tests=(f"{_TESTS}::test_noise_cancellation_identity_and_drift_closed_form", _STREAM)))
register_mutant(Mutant(
    "kan.lambda_dropped", "kan",
    "dp_sgd_correlated's noise stream ignores λ (ξ_t = κZ_t; reports λ)",
    (Patch(_ALG, "dp_sgd_correlated", _wrap_run(drop_lam=True)),),
    # more private, not less (sensitivity √k ≤ ‖C1_P‖): no audit can catch it; the λ sweeps can
    experiments=("kan.lam.fixed_kappa",),
    tests=(f"{_TESTS}::test_noise_cancellation_identity_and_drift_closed_form", _STREAM)))
register_mutant(Mutant(
    "kan.accountant_off_by_2", "kan",
    "the KAN accountant under-reports ε by a factor 2 (gaussian_epsilon and the RDP route)",
    (Patch(_PRIV, "gaussian_epsilon", scaled_result(0.5)),
     Patch(_PRIV, "_rdp_epsilon", scaled_result(0.5))),
    experiments=("kan.lam.tight.cyclic",), audits=_MECH, audit_trials=400_000,
    tests=(f"{_TESTS}::test_gaussian_epsilon_inverts_dp_accounting",)))


def run_kan_mutant(name: str, results: str | None = None, audit_trials: int | None = None,
                   timeout: float = 1800) -> dict:
    """:func:`empirical.privacy.mutants.run_mutant` for the KAN mutant ``name`` (kept for
    tests/test_kan_mutants.py).  The subprocess's loader imports every audit module, this one
    included (``mutants._load``), so it knows the KAN mutants."""
    root = results or tempfile.mkdtemp(prefix="dprates-kan-mutants-")
    return run_mutant(get_mutant(name), results=root, audit_trials=audit_trials, timeout=timeout)
def _replace_factor_dropped(orig):
    """make(orig) for tight_epsilon: under replace-one, both of its routes (the sampled-without-
    replacement RDP event at κ/2 and the truncation route's 2·sens) lose the ×2, i.e. it prices
    κ as if it were 2κ; calibrate then picks κ/2 and reports the target ε."""
    from algorithms.accounting import REPLACE_ONE

    def tight(noise_multiplier, **kw):
        f = 2.0 if kw.get("relation") == REPLACE_ONE else 1.0
        return orig(f * noise_multiplier, **kw)
    return tight


register_mutant(Mutant(
    "kan.tight_replace_factor_dropped", "kan",
    "the tight replace-one accountant for fresh batches drops replace-one's ×2 (κ halved)",
    (Patch(_PRIV, "tight_epsilon", _replace_factor_dropped),),
    audits=("kan.mechanism.tight_replace.fresh",), bug_class="relation factor slipped"))
register_mutant(Mutant(
    "kan.tight_steps_halved", "kan",
    "the tight accountant prices half the releases (κ calibrated for them)",
    (Patch(_PRIV, "tight_epsilon",
           lambda orig: (lambda noise_multiplier, **kw: orig(
               noise_multiplier, **dict(kw, steps=max(1, kw["steps"] // 2))))),),
    # 10⁶ runs: at the target's 2·10⁵ the audit's ε_lo (3.9) stayed just below the claim (4)
    audits=("kan.mechanism.tight.cyclic",), audit_trials=1_000_000,
    bug_class="composition count halved"))
register_mutant(Mutant(
    "kan.noise_removed", "kan", "dp_sgd_correlated adds no noise (reports κ)",
    (Patch(_ALG, "dp_sgd_correlated", _wrap_run(noise_factor=1e-12)),),
    audits=("kan.e2e.tight.stepwise",), bug_class="noise omitted"))


# Wang et al.'s two-layer DP-GD (algorithms/kan/two_layer_dpgd.py, audited in audit_wang.py):
# its accountant prices replace-one as zero-out (the ×2 of the sensitivity slipped): κ is
# calibrated half as large and the claimed ε stays the target
register_mutant(Mutant(
    "kan.two_layer.relation_factor_dropped", "kan",
    "two_layer_dpgd's accountant drops replace-one's ×2 (κ calibrated half as large)",
    (Patch("algorithms.kan.two_layer_dpgd", "_relation_factor",
           lambda orig: (lambda relation: min(orig(relation), 1.0))),),
    audits=("kan.e2e.two_layer_dpgd",),
    tests=("tests/test_kan_two_layer.py::"
           "test_privacy_accounting_matches_dp_accounting_composition",),
    bug_class="relation factor slipped"))
