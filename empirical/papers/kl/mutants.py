"""Mutants of the KL-condition paper's algorithms: Algorithm 4 (noisy
GD, Theorem 9), Algorithm 1 (Spider) and the zCDP accountant, each broken the way a plausible bug
would break it; the rate checks and audits named with each must catch it
(:mod:`empirical.privacy.mutants`)."""
from empirical.privacy.mutants import Mutant, Patch, _const, _scaled, register_mutant, scaled_result

_COMMON = "algorithms.kl.common"
_NOISY_GD = "algorithms.kl.noisy_gd"
#: every KL algorithm module that binds a shared primitive itself (a confined patch must reach each)
_ALGS = ("algorithms.kl.noisy_gd", "algorithms.kl.spider", "algorithms.kl.adaptive")
_THM9 = ("kl.thm9.n", "kl.thm9.d", "kl.thm9.rho", "kl.thm9.n.kink")
_SPIDER = ("kl.spider.n.k4_3", "kl.spider.rho.k4_3")


class _CountHalved:
    """The accounting module as KL sees it, with noise_multiplier_for_zcdp calibrating for half
    the releases (every other attribute passed through)."""

    def __init__(self, orig):
        self._orig = orig

    def __getattr__(self, name):
        return getattr(self._orig, name)

    def noise_multiplier_for_zcdp(self, rho, count, *a, **k):
        return self._orig.noise_multiplier_for_zcdp(rho, max(1, count // 2), *a, **k)


register_mutant(Mutant(
    "kl.noisy_gd.noise_halved", "kl", "Algorithm 4 draws half the noise it reports",
    (Patch(_COMMON, "_noise_block", _scaled(lambda z: 0.5)),),
    experiments=_THM9, audits=("kl.noisy_gd.stepwise",),
    tests=("tests/test_audit_kl.py::test_injected_noise_matches_the_theorem",)))
register_mutant(Mutant(
    "kl.noisy_gd.noise_d^-0.1", "kl", "Algorithm 4's noise scaled by d^(−0.1)",
    (Patch(_COMMON, "_noise_block", _scaled(lambda z: z.shape[-1] ** -0.1)),),
    experiments=("kl.thm9.d",)))
register_mutant(Mutant(
    "kl.noisy_gd.add_remove_sensitivity", "kl",
    "KL algorithms use the add/remove sensitivity L0/n for their replace-one claim",
    tuple(Patch(m, "mean_gradient_sensitivity",
                lambda orig: (lambda L, n, relation=None: orig(L, n) / 2.0), everywhere=False)
          for m in _ALGS),
    experiments=_THM9, audits=("kl.noisy_gd.stepwise",),
    bug_class="relation factor slipped"))
register_mutant(Mutant(
    "kl.noisy_gd.wrong_step_count", "kl", "Algorithm 4 runs 20 steps instead of Theorem 9's T",
    (Patch(_NOISY_GD, "noisy_gd_steps", _const(20)),),
    experiments=_THM9))
register_mutant(Mutant(
    "kl.noisy_gd.noise_removed", "kl", "Algorithm 4 adds no noise (accounting unchanged)",
    (Patch(_COMMON, "_noise_block", _scaled(lambda z: 0.0)),),
    experiments=("kl.thm9.n",), audits=("kl.noisy_gd.stepwise",),
    bug_class="noise omitted"))
register_mutant(Mutant(
    "kl.noisy_gd.projection_removed", "kl", "Algorithm 4 never projects onto its ball",
    (Patch(_COMMON, "project_ball", lambda orig: (lambda w, c, r: w), everywhere=False),),
    experiments=_THM9))
register_mutant(Mutant(
    "kl.spider.no_correction", "kl",
    "Spider queries a fresh gradient instead of the gradient difference (same σ_k)",
    (Patch(_COMMON, "_spider_update", lambda orig: (lambda est, G_new, G_old, noise: G_new + noise)),),
    experiments=_SPIDER, audits=("kl.spider.stepwise",)))
register_mutant(Mutant(
    "kl.spider.noise_removed", "kl", "Spider adds no noise (accounting unchanged)",
    (Patch(_COMMON, "_draw", _scaled(lambda z: 0.0)),),
    experiments=_SPIDER, audits=("kl.spider.stepwise",),
    tests=("tests/test_audit_kl.py::test_injected_noise_matches_the_theorem",),
    bug_class="noise omitted"))
register_mutant(Mutant(
    "kl.spider.difference_noise_removed", "kl",
    "Spider adds no noise to its difference releases (accounting unchanged)",
    (Patch(_COMMON, "_spider_update",
           lambda orig: (lambda est, G_new, G_old, noise: orig(est, G_new, G_old, 0.0 * noise))),),
    audits=("kl.spider.stepwise",), bug_class="noise omitted"))
register_mutant(Mutant(
    "kl.noisy_gd.count_halved", "kl",
    "Algorithm 4 calibrates its noise for (T − 1)/2 releases instead of T − 1",
    tuple(Patch(m, "accounting", lambda orig: _CountHalved(orig), everywhere=False)
          for m in (*_ALGS, "algorithms.kl.proximal")),
    experiments=("kl.thm9.n",), audits=("kl.noisy_gd.stepwise",), audit_trials=400_000,
    bug_class="composition count halved",
    verify_note="also verify: the rows' spent ρ is dp-accounting's of the noise actually drawn, "
                "twice the target here, so the privacy columns fail"))
register_mutant(Mutant(
    "kl.spider.noise_doubled", "kl", "Spider draws twice the noise it reports",
    (Patch(_COMMON, "_draw", _scaled(lambda z: 2.0)),),
    experiments=_SPIDER,
    tests=("tests/test_audit_kl.py::test_injected_noise_matches_the_theorem",)))
register_mutant(Mutant(
    "kl.accountant_off_by_2", "kl", "the zCDP accountant under-reports ρ by a factor 2",
    (Patch("algorithms.accounting", "zcdp_rho", scaled_result(0.5)),),
    experiments=("kl.thm9.n", "kl.spider.n.k4_3"), audits=("kl.spider.stepwise",),
    tests=("tests/test_accounting.py",)))
