"""Theorem 4.1/D.3's risk for the user-level SCO paper (Lowy, Liu, Asi): smoothed Algorithm 3 on
a non-smooth loss, swept in n, m and ε, judged against Theorem 4.1's full bound
LR(1/√(nm) + √(d log(1/δ))/(εn√m)) at each run's own parameters (``userlevel:thm4.1``).

Instance: LadUsers (f(x, (a, b)) = |⟨a, x⟩ − b|, L = 1, R = 4, d = 2, Laplace(0.1) residuals,
exact F by quadrature).  Algorithm: Theorem D.3's smoothing radius r = R√d/(εn√m) and its
schedule T_i = 1 + c_T n_i^{3/4}m^{1/2}ε^{1/2}, K_i = ⌈n_iε/√T_i + c_K1 log(1/δ)/ε⌉ at the
schedule constant c_T = 0.3 (recorded in every row with c_K1 and c_K2): at c_T = 1 the first
phase's noise stays above the domain's radius below 10¹⁰ item gradients per run, and at
c_T ≤ 0.1 even the noise-free run stays near F(0) − F* (UL-E25).  The runs are costly (4–26
CPU-s per seed and grid point with the control), so every sweep is on the full grid only.

Regime.  At these sizes the *bound's* statistical term LR/√(nm) exceeds its privacy term
240–340-fold (ε = 10, m = 4, n = 2¹⁴…2¹⁵), so the bound's local slopes are the statistical ones
(n, m: −1/2; ε: ≈ 0).  The *measured* excess is nevertheless almost all privacy: every seed runs
a coupled noise-free control (:mod:`empirical.papers.userlevel.nonsmooth_runs`), whose excess is
≈ 10⁻⁵ from n = 2¹⁵ (LAD's statistical error is ~1/(nm) on this instance), and the rows'
``privacy_share`` = 1 − excess(noise-free)/excess(private) (≥ 0.95 from n = 2¹⁵ or m = 8;
0.71–0.88 at n = 2¹⁴, m = 4) says which part the slopes come from.  All checks against Theorem
4.1 are one-sided (an upper bound over convex Lipschitz losses; this LAD instance grows
quadratically near its minimiser, so the noise's part of the excess may fall faster than the
bound), and each sweep rejects an item-level or m-free competitor on the same data.
``userlevel.ns.risk.eps.control`` is the noise-free control as a paired contrast: at every ε the
private excess must exceed the noise-free one by 25% (privacy share ≥ 20%), or the ε sweep
measures the schedule, not the noise.
"""
from __future__ import annotations

import math

from empirical.core.contrasts import ComparisonExperiment, Contrast
from empirical.core.experiment import Check, Experiment, register
from empirical.papers.userlevel.common import PAPER, PRIVACY_RTOL
from empirical.papers.userlevel.nonsmooth_runs import LAD_L, LAD_R, lad_values, run_ns_risk
from empirical.store.calibration import calibrations

__all__ = ["NS_RISK_N", "NS_RISK_M", "NS_RISK_EPS", "NS_RISK_EPS_CONTROL"]

_HELD_OUT = calibrations(__file__)


def _held(eid: str, bound: str, kind: str) -> dict:
    """The level-band fields of check (bound, kind) of experiment ``eid`` from its held-out
    record (calibration.json beside this module); KeyError without one."""
    return _HELD_OUT[(eid, bound, kind)].check_fields()


def _vacuous(point: dict, bound_value: float) -> str | None:
    # F − F* ≤ L·diam(𝒳) = LR always: a bound above it says nothing.
    if bound_value >= LAD_L * LAD_R:
        return f"bound {bound_value:.3g} ≥ LR = {LAD_L * LAD_R:g} (vacuous)"
    return None


_FIXED = {"delta": 1e-6, "d": 2, "c_T": 0.3, "c_K1": 0.05, "c_K2": 1.0}
_PROBLEM = ("LadUsers: f(x, (a, b)) = |⟨a, x⟩ − b|, a ~ Unif(S¹), b = ⟨a, w*⟩ + Lap(0.1) "
            "(L = 1, R = 4, d = 2, exact F), with a coupled noise-free run on the same draws")
_ALGORITHM = ("accelerated_phased_erm on SmoothedUserData(r = R√d/(εn√m)) with Theorem D.3's "
              "T_i, K_i (nonsmooth_T), rates mode, c_T = 0.3, c_K1 = 0.05, c_K2 = 1")
_ONE_SIDED = ("one-sided: Theorem 4.1/D.3 is an upper bound over convex L-Lipschitz losses; "
              "LAD with Laplace residuals grows quadratically near w* (F − F* ≈ ‖x − w*‖²/(4s)), "
              "so the noise's share of the excess (the rows' privacy_share) may fall faster "
              "than the bound, whose local slope here is its statistical term's.  ")
_COMMON = dict(paper=PAPER, run=run_ns_risk, metric="excess", bound_values=lad_values,
               vacuous=_vacuous, problem=_PROBLEM, algorithm=_ALGORITHM,
               privacy_rtol=PRIVACY_RTOL)

NS_RISK_N = register(Experiment(
    id="userlevel.ns.risk.n",
    full_only="each seed costs 6–14 CPU-s per point with its noise-free control: the grid "
              "(n = 2¹⁴–2¹⁵, 6 seeds) is 183 CPU-s, 60× the verify budget of a paper's new "
              "experiments; full grid: PASS [UNDERPOWERED] −3.12 [−6.11, −0.91], the item-level "
              "rate REJECTED",
    title="Smoothed Alg. 3 (Theorem 4.1/D.3) on LAD: excess risk vs n",
    variable="n",
    quick_grid=(16384, 23170, 32768),
    full_grid=(16384, 23170, 32768),
    fixed={**_FIXED, "epsilon": 10.0, "m": 4},
    seeds=6,
    description="The risk Theorem 4.1 bounds, on the unsmoothed F.  The bound's statistical "
                "term dominates its privacy term 240–340-fold here, so it predicts n^{−1/2}; the "
                "rows' privacy_share shows the measured excess is the noise's.",
    checks=(
        Check("userlevel:thm4.1", "one-sided", 0.25,
              _ONE_SIDED + "0.25 covers the phase count changing along the grid (more phases "
              "certify as n grows) and 6-seed noise of an excess whose log has sd ≈ 1 over 0.3 "
              "decades (bootstrap half-width ≈ 1 expected; decisive only if the slope is well "
              "below the edge)",
              **_held("userlevel.ns.risk.n", "userlevel:thm4.1", "one-sided")),
        Check("userlevel:trivial", "reject", 0.25,
              "competitor: footnote 3's item-level rate LR(1/√(nm) + √(d log(1/δ))/(εn)), local "
              "slope ≈ −0.50 in n here; it must be ruled out at its local slope and its "
              "exponent; tolerance as the main check's"),
    ),
    **_COMMON,
))

NS_RISK_M = register(Experiment(
    id="userlevel.ns.risk.m",
    full_only="each seed costs 4–26 CPU-s per point with its noise-free control (the schedule's "
              "Σ T_iK_im grows ≈ m^{5/4}): the grid (m = 4–16, 4 seeds) is 179 CPU-s, 60× the "
              "verify budget of a paper's new experiments; full grid: INCONCLUSIVE −1.35 "
              "[−4.61, +1.65] (CI ±3 against A = (−∞, −0.25]; ≈ 30 seeds, ≈ 1300 CPU-s, needed)",
    title="Smoothed Alg. 3 (Theorem 4.1/D.3) on LAD: excess risk vs items per user m",
    variable="m",
    quick_grid=(4, 8, 16),
    full_grid=(4, 8, 16),
    fixed={**_FIXED, "epsilon": 10.0, "n": 16384},
    seeds=4,
    description="The user-level point in the non-smooth case: τ ∝ 1/√m shrinks the noise.  "
                "The bound's local m-slope is −1/2 (both terms); the rows' privacy_share shows "
                "which part the measured slope is.",
    checks=(
        Check("userlevel:thm4.1", "one-sided", 0.25,
              _ONE_SIDED + "0.25 covers the ceil() of T_i, K_i and the phase count (6–8) "
              "changing with m; 4 seeds of an excess whose log has sd ≈ 1 over 0.6 decades give "
              "a CI half-width ≈ 1: decisive only for a slope far from the edge",
              **_held("userlevel.ns.risk.m", "userlevel:thm4.1", "one-sided")),
        Check("userlevel:trivial_privacy", "reject", 0.25,
              "competitor: the item-level privacy term √(d log(1/δ))/(εn), m-free (slope 0): "
              "what the noise would do if a user's m items did not shrink it; tolerance as "
              "the main check's"),
    ),
    **_COMMON,
))

_EPS_GRID = (5.0, 7.07, 10.0)

NS_RISK_EPS = register(Experiment(
    id="userlevel.ns.risk.eps",
    full_only="each seed costs 8–11 CPU-s per point with its noise-free control: the grid "
              "(ε = 5–10, n = 2¹⁵, 6 seeds) is 175 CPU-s, 58× the verify budget of a paper's new "
              "experiments; full grid: PASS [UNDERPOWERED] −3.18 [−5.73, −0.51], the ε-free "
              "statistical term REJECTED",
    title="Smoothed Alg. 3 (Theorem 4.1/D.3) on LAD: excess risk vs ε",
    variable="epsilon",
    quick_grid=_EPS_GRID,
    full_grid=_EPS_GRID,
    fixed={**_FIXED, "n": 32768, "m": 4},
    seeds=6,
    description="The bound's statistical term dominates (170–340-fold at n = 2¹⁵), so it is "
                "nearly ε-free (local slope ≈ −0.005); the measured excess is the noise's "
                "(privacy_share in the rows, userlevel.ns.risk.eps.control), so it falls with "
                "ε as the privacy term does, which the one-sided check allows.  ε ≤ 10 is the "
                "theorem's range; below ε = 5 the first phase's σ_1 saturates the run.",
    checks=(
        Check("userlevel:thm4.1", "one-sided", 0.3,
              _ONE_SIDED + "0.3 covers the phases that certify changing with ε and 6-seed "
              "noise of an excess whose log has sd ≈ 1 over 0.3 decades (ε ≤ 10 caps the span)",
              **_held("userlevel.ns.risk.eps", "userlevel:thm4.1", "one-sided")),
        Check("userlevel:thm4.1_statistical", "reject", 0.3,
              "competitor: an ε-free excess (the statistical term LR/√(nm) alone, i.e. an "
              "excess the noise does not reach, as the bound's dominant term would have it); "
              "tolerance as the main check's"),
    ),
    **_COMMON,
))

NS_RISK_EPS_CONTROL = register(ComparisonExperiment(
    id="userlevel.ns.risk.eps.control",
    full_only="each seed costs 8–15 CPU-s per point (private and noise-free runs): the grid "
              "(ε = 5 and 10, n = 2¹⁵, 4 seeds) is 94 CPU-s, 30× the verify budget of a paper's "
              "new experiments; full grid: PASS, mean log ratio +8.73 [+6.13, +11.33] against "
              "log 1.25",
    title="Control: smoothed Alg. 3's excess with and without its Gaussian noise, vs ε",
    variable="epsilon",
    quick_grid=(_EPS_GRID[0], _EPS_GRID[-1]),
    full_grid=(_EPS_GRID[0], _EPS_GRID[-1]),
    fixed=NS_RISK_EPS.fixed,
    seeds=4,
    checks=(),
    contrasts=(Contrast(
        name="private excess > 1.25 × the noise-free run's", kind="greater",
        hi="excess", lo="nonprivate_excess", log=True, margin=math.log(1.25),
        reason="the ε sweep says something about Theorem 4.1's privacy term only if removing "
               "the noise lowers the excess: paired per seed (same data, minibatches, Laplace "
               "draws and smoothing directions), the private excess must exceed the noise-free "
               "run's by 25% (privacy share ≥ 20%; 95% t-interval of the mean log ratio over 4 "
               "seeds above log 1.25) at both ends of the ε grid"),),
    aggregate="mean",
    **{k: v for k, v in _COMMON.items() if k not in ("metric", "vacuous")},
    metric="excess",
))


def _plot_control(analyses: list, root):
    """The control's figure: the private and the noise-free excess of each seed against ε (the
    paired runs of userlevel.ns.risk.eps.control), geometric means joined."""
    from pathlib import Path

    import numpy as np

    from empirical.store.figures import save_figure      # imported first: it selects the Agg backend

    import matplotlib.pyplot as plt  # noqa: E402

    a = analyses[0]
    if not getattr(a, "columns", None):
        return None
    grid = sorted(a.columns)
    fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    for col, colour, label in (("excess", "tab:blue", "smoothed Algorithm 3, (ε, 10⁻⁶)-DP"),
                               ("nonprivate_excess", "tab:green",
                                "same draws, no Gaussian noise (control)")):
        gm = []
        for v in grid:
            y = np.maximum(np.asarray(a.columns[v][col], dtype=float), 1e-12)
            ax.scatter(np.full(y.size, v), y, s=10, alpha=0.4, color=colour, linewidths=0)
            gm.append(float(np.exp(np.mean(np.log(y)))))
        ax.plot(grid, gm, "o-", color=colour, label=label + " (geometric mean)")
    bound = [LAD_L * LAD_R / math.sqrt(a.experiment.fixed["n"] * a.experiment.fixed["m"])] * 2
    ax.plot([grid[0], grid[-1]], bound, "k:", label="Theorem 4.1's statistical term LR/√(nm)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε (LAD, n = 2¹⁵, m = 4, d = 2, c_T = 0.3)")
    ax.set_ylabel("excess risk F(x) − F* (unsmoothed F)")
    ax.set_title(a.experiment.id + ": the measured excess is the noise's", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    ax.grid(True, which="both", alpha=0.25)
    fig.tight_layout()
    return save_figure(fig, Path(root) / "userlevel" / f"{a.experiment.id}.png")


from empirical.core.experiment import Summary, register_summary  # noqa: E402

NS_CONTROL_FIGURE = register_summary(Summary(
    id="userlevel.ns.risk.eps.control", paper=PAPER,
    experiments=(NS_RISK_EPS_CONTROL.id,), plot=_plot_control))
