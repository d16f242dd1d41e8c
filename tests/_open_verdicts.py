"""Quick-grid experiments whose verdicts, under the three-way rules of empirical/core/checks.py, are
not the declared ones, and which more seeds within the verify budget do not decide.  Their
verdict tests are strict xfails: a run that decides one makes its test fail, so the entry (and
the note beside it in the errata) must then go."""
import pytest

OPEN = {
    "kan.nonpriv.B": "INCONCLUSIVE: CI ±0.18 straddles local −0.85 + 0.2; 16 seeds did not decide",
    "linreg.amb.epsilon.privacy_quantile": "INCONCLUSIVE: estimate within 0.03 of the edge of A; "
                                           "36 seeds did not decide",
    "linreg.amb.n.privacy": "INCONCLUSIVE finding: ≈ 167 seeds needed",
    "linreg.amb.n.transition": "INCONCLUSIVE competitor thm37_nonprivate: CI straddles its ±0.15 "
                               "(the full grid rejects it)",
    "linreg.kappa.nonprivate": "INCONCLUSIVE: ≈ 62 seeds needed",
    "linreg.sigma0.fixed": "INCONCLUSIVE: 32 seeds did not decide (≈ 57 needed)",
    "linreg.ssgd.thm31.n": "INCONCLUSIVE: χ²_2 spread over 4×, ≈ 150 seeds needed (the full "
                           "grid's 32× is inconclusive too)",
    "linreg.ssgd.thm31.epsilon": "INCONCLUSIVE: estimate −2.007 on the exponent, CI half-width "
                                 "0.157 just above the tolerance (full grid: PASS)",
    "linreg.objpert.d": "INCONCLUSIVE: χ²_d spread at d = 4–32 gives CI ±0.16 against a "
                        "distance 0.09 to the edge of A (≈ 99 seeds; full grid d = 4–96: PASS, "
                        "+1.863 [+1.783, +1.947] against A ≤ +1.958)",
    "linreg.ssp.d": "INCONCLUSIVE: estimate within 0.03 of the edge of A (≈ 370 seeds; full "
                    "grid: PASS)",
    "real.kan.lambda.paper": "INCONCLUSIVE findings: the 99% intervals contain the margin",
    "real.kan.lambda.tight": "INCONCLUSIVE findings: the 99% intervals contain the margin",
    "real.kl.regr.n.k2_white": "INCONCLUSIVE finding: the 99% CI straddles A",
    "real.sosp.eps0_5": "INCONCLUSIVE finding: the 99% interval contains the margin",
    "real.sosp.eps1": "INCONCLUSIVE finding: the 99% interval contains the margin",
    "kl.wyx17.epsilon": "INCONCLUSIVE: −1.854 [−1.956, −1.748] against A = [−2.25, −1.75]; the "
                        "expected slope (the conversion's ρ(ε) ∝ ε^{1.86…1.99}, T's log) is "
                        "≈ −1.8, at the edge; the full grid decides (PASS, −1.845 [−1.908, −1.783])",
    "sosp.ada.n.nonprivate": "INCONCLUSIVE: estimate within 0.013 of the edge of A; 24 seeds did "
                             "not decide",
    "userlevel.alg3.logistic.m": "INCONCLUSIVE finding (UL-E21) and competitor at 99%/95%",
    "sosp.liu.best.n": "INCONCLUSIVE competitor sosp:thm2: at the tolerance 0.08 set before any "
                       "run the CI straddles its ±tol; 240 seeds on the full grid (301 CPU-s) "
                       "give −0.453 [−0.458, −0.448], inside it: NOT REJECTED (SOSP-E16)",
    "sosp.out.grad.n": "INCONCLUSIVE finding: the 99% CI straddles the edge of A (SOSP-E14 open)",
    "sosp.ada.d.dist": "INCONCLUSIVE: the quick grid (d = 4–16, 6 seeds, inside the verify "
                       "budget) gives CI ±0.08; the full grid decides (PASS, +0.199 ± 0.025)",
    "sosp.ada.epsilon.dist": "INCONCLUSIVE: the quick grid (ε = 0.2–0.8, 6 seeds) gives CI ±0.05; "
                             "the full grid decides (PASS, −0.372 ± 0.023)",
    "sosp.out.grad.d_frozen": "INCONCLUSIVE competitor sosp:thm2: CI ±0.3 on the quick grid, "
                              "±0.09 on the full (+0.021; ≈ 34 seeds needed); the noise reading "
                              "√d is rejected on both",
    "sosp.out.grad.m": "INCONCLUSIVE: CI ±0.47 on the quick grid (m = 1–4, 6 seeds), ±0.13 on "
                       "the full (−0.046 against A = (−∞, −0.10]; ≈ 37 seeds needed)",
    "sosp.out.grad.dist.n": "INCONCLUSIVE: CI ±0.2 on the quick grid (n = 1e4–1e5 per client, "
                            "m = 4, 10 seeds); on the full grid the estimate −0.234 "
                            "[−0.314, −0.161] sits on the edge of A = (−∞, −0.233], so no "
                            "affordable run decides it (the stop threshold sets the gradient "
                            "norm, SOSP-E14)",
    "sosp.out.grad.m_frozen": "INCONCLUSIVE competitor sosp:thm3 on the quick grid (CI ±0.46); "
                              "the full grid decides (REJECTED, +0.093 ± 0.15)",
    "userlevel.gain.m": "INCONCLUSIVE competitor m^-1: the CI straddles its ±0.15; ≈ 35 seeds",
    "userlevel.alg3.logistic.n": "INCONCLUSIVE: the quick grid (n = 4096–16384, 12 seeds) gives "
                                 "CI ±0.55; the full grid decides (PASS, −1.004 ± 0.19; "
                                 "Algorithm 1's −1/2 REJECTED)",
    "userlevel.alg3.logistic.eps": "INCONCLUSIVE: CI ±0.68 on the quick grid (ε = 2.83–10, 6 "
                                   "seeds), ±0.41 on the full (−0.635 against A = (−∞, −0.75]; "
                                   "≈ 74 seeds needed; ε ≤ 10 caps the span at 0.7 decades)",
    "userlevel.al24.m": "INCONCLUSIVE: the quick grid (m = 2¹⁴–2¹⁸, 4 seeds, ≈ 4.7 CPU-s: the "
                        "verify budget) gives CI ±0.53; the full grid decides (PASS, −0.636 "
                        "[−0.875, −0.386]; the m-free competitor REJECTED)",
    "kan.wang.gamma": "INCONCLUSIVE finding and competitor: the quick grid (γ = 0.5–0.6, "
                      "0.08 decades, inside the verify budget) gives CI ±3; the full grid decides "
                      "(FINDING γ^{−1.23} ± 0.4, γ⁻³ REJECTED)",
    "kan.wang.n": "INCONCLUSIVE finding: the quick grid (n = 25–100, 4 seeds, inside the verify "
                  "budget) gives CI ±0.25 (≈ 11 seeds needed); the full grid decides (FINDING, "
                  "n^{−0.42} ± 0.07)",
}


def open_cases(ids) -> list:
    """``ids`` for a parametrized verdict test, the open ones as strict xfails."""
    return [pytest.param(i, marks=pytest.mark.xfail(strict=True, reason=OPEN[i]))
            if i in OPEN else i for i in ids]
