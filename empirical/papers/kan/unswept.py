"""KAN paper (Wang et al.): the variables of Theorems 4.1 and 5.2 / C.23 that no experiment
sweeps, each with the reason, for the coverage table (:mod:`empirical.core.coverage`)."""
from __future__ import annotations

from empirical.core.coverage import declare_unswept

_KAPPA = ("κ is not a free knob of a private run: each calibration (Theorem 5.1 / F.12, 5.4 / "
          "D.9, tight) fixes it from (ε, δ, T, B, n, λ), so the ε sweeps (kan.cor53.eps, "
          "kan.tuned_eta.eps) move it as 1/ε; at a fixed κ its quadratic term is checked "
          "exactly through the noise drift ∝ κ²m (kan.width.m) and the λ factors "
          "(kan.lam.fixed_kappa)")
_DELTA = ("δ enters through (√m + R_*)δ, below 1/n at the corollaries' δ ≤ min{1/(n√m), γ/n}, "
          "and through logs (R_* and the calibration's log(1/δ)): a δ sweep moves the risk by "
          "less than the seed spread, so the level is checked instead (kan.cor53.n's Theorem "
          "5.2 / C.23 level bands at the corollary's δ)")

for _bound in ("kan:thm5.2", "kan:thmC.23"):
    declare_unswept(_bound, "noise_multiplier", _KAPPA)
    declare_unswept(_bound, "delta", _DELTA)
for _bound in ("kan:thm4.1", "kan:A_corr"):
    declare_unswept(_bound, "noise_multiplier", _KAPPA)

_D = ("every d needs its own initialisation and teacher, whose margin γ₀ moves with d (0.32 at "
      "d = 5 and 0.48 at d = 2, m = 32, margin quantile 0.95), and a Corollary 5.3 / 5.5 run of three d values "
      "costs more than the suite's quick-grid budget for the paper; the d-dependence of the "
      "tuned noise term √(md)/(γnε) behind both is swept at B = n (kan.tuned_eta.d)")
for _bound in ("kan:cor5.3", "kan:cor5.5"):
    declare_unswept(_bound, "d", _D)
