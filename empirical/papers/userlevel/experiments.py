"""Experiments for the user-level SCO paper (Lowy, Liu, Asi): sweeps of
Algorithms 1 and 3, the item-level baseline, the non-smooth schedule and Lemmas 2.3 and 3.5,
checked against ``bounds.rates.userlevel`` at each experiment's own parameter values.

Problems (``empirical.papers.userlevel.problems``) have exact population risk.  The quadratic
f(x, z) = ½‖x − z‖² is 1-strongly convex, so its excess risk follows the *squared* rates of
Remark 3.6; checks against Theorem 3.2's convex rates are therefore one-sided, and the two-sided
checks use Remark 3.6, which is tight on this instance (the noise enters the excess as ½‖ζ‖²).

The privacy part of the error is measured directly: each seed runs the private algorithm and,
from a copy of the same generator with a separate Gaussian-noise stream, the same algorithm
without Gaussian noise (same data, minibatches, Laplace draws and removal coins).  On the
quadratic the iterates are affine in the noise, so ``privacy_excess`` = ½‖x_priv − x_np‖² has
the same mean as F(x_priv) − F(x_np) exactly (the cross term has mean 0).  This decomposition
lets the data decide the regime, whereas the nominal crossover
n* = d log(1/δ)/ε² hides polylog constants that are large here (Lemma C.2's log(1/ζ) ≈ 20).

The experiments live in one module per algorithm (the lazy loader imports this one, which
imports them in registration order):

* :mod:`empirical.papers.userlevel.alg3` — Algorithm 3 and the item-level baseline: risk in m, n, ε,
  d, logistic regression, gradient counts (Theorems 3.2/C.3, 4.1/D.3), the m-overlay figure;
  :mod:`empirical.papers.userlevel.alg3_runs` holds their run functions (risk and count runs, the
  phase-1 settings recomputed from Theorem C.3 / Lemma C.2) apart from the declarations, so
  that the rows' code fingerprint does not cover the checks (as ``kl_problems`` /
  ``kl_condition``);
* :mod:`empirical.papers.userlevel.alg1` — Algorithm 1's gradient count (Theorem 2.1/B.1), and
  :mod:`empirical.papers.userlevel.alg1_privacy` its coupled privacy-excess sweeps (full grid only,
  not registered: tests/test_userlevel_alg1_privacy.py);
* :mod:`empirical.papers.userlevel.lemmas` — Lemmas 3.5/C.6 and 2.3/B.4;
* :mod:`empirical.papers.userlevel.risk` — Algorithm 1's excess risk in n (Theorem 2.1/B.1) and the
  user-level vs item-level gain in m (:mod:`empirical.papers.userlevel.risk_runs` runs them);
* :mod:`empirical.papers.userlevel.nonsmooth` — Theorem 4.1/D.3's risk (smoothed Algorithm 3 on
  LAD) in n, m and ε with its noise-free control, full grid only
  (:mod:`empirical.papers.userlevel.nonsmooth_runs` runs them);
* :mod:`empirical.papers.userlevel.common` — shared row functions and bound values;
  :mod:`empirical.papers.userlevel.problems` the problems, :mod:`empirical.papers.userlevel.sensitivity`
  the independent recomputation of the sensitivities.

Import from here or from the defining module: the objects are the same.
"""
from __future__ import annotations

from empirical.papers.userlevel.alg3 import (ALG3_D, ALG3_EPS, ALG3_EPS_POLE, ALG3_GRADS_M,  # noqa: F401
                                       ALG3_GRADS_N, ALG3_GRADS_N_LARGE,
                                       ALG3_LOGISTIC_M, ALG3_M, ALG3_N, BASELINE_M, M_OVERLAY,
                                       NS_GRADS_EPS, NS_GRADS_N, _alg3_settings,
                                       _alg3_theory_phase1, _run_alg3_counts,
                                       _run_alg3_quadratic)
from empirical.papers.userlevel.alg1 import (ALG1_EPS_GRID, ALG1_EPS_POINT, ALG1_GRADS_N,  # noqa: F401
                                       _alg1_settings, _alg1_vacuous, _alg1_values,
                                       _alg1q_values, _run_alg1)
from empirical.papers.userlevel.lemmas import (LEM23_T, LEM35_K, LEM35_M, _run_lem23,  # noqa: F401
                                         _run_lem35)
from empirical.papers.userlevel.risk import ALG1_RISK_N, GAIN_M  # noqa: F401
from empirical.papers.userlevel.nonsmooth import (NS_RISK_EPS, NS_RISK_EPS_CONTROL,  # noqa: F401
                                                  NS_RISK_M, NS_RISK_N)
from empirical.papers.userlevel.common import (_QUAD_L, _QUAD_MU_NORM, _QUAD_R, PAPER,  # noqa: F401
                                         PRIVACY_RTOL, _int, _privacy_cols, quadratic_values)

__all__ = ["ALG3_M", "BASELINE_M", "ALG3_EPS", "ALG3_EPS_POLE", "ALG3_N", "ALG3_D", "ALG3_GRADS_M",
           "ALG3_GRADS_N", "ALG3_GRADS_N_LARGE",
           "ALG1_GRADS_N", "NS_GRADS_N", "NS_GRADS_EPS", "LEM35_K", "LEM35_M", "LEM23_T",
           "ALG1_EPS_POINT", "ALG1_EPS_GRID", "ALG3_LOGISTIC_M", "quadratic_values",
           "ALG1_RISK_N", "GAIN_M", "NS_RISK_N", "NS_RISK_M", "NS_RISK_EPS",
           "NS_RISK_EPS_CONTROL"]

# Privacy audits, measured-noise functions and mutants of this paper's algorithms register with the
# paper (the lazy loader imports this module).  Imported by name, not by an import statement: the
# audit harness is not row code, and a static import would put it into every row's code
# fingerprint (empirical/run/runner.py), so that editing an audit would recompute every sweep.
import importlib as _importlib  # noqa: E402

_importlib.import_module("empirical.papers.userlevel.audit")

# Why the variables no experiment sweeps are not swept, and why the statements no experiment
# judges are not judged: shown by `dprates coverage`.
_importlib.import_module("empirical.papers.userlevel.coverage_reasons")
