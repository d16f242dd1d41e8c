"""Figure of linreg.ssp.vs_amb (Varshney, Thakurta, Jain: Theorem 3.7 Remark v against sufficient
statistics perturbation): both privacy terms against d, geometric mean over seeds with its 95%
interval, the contrasts' verdicts in the title.  Written under ``<root>/linreg/<id>.png``."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from empirical.store.figures import save_figure

__all__ = ["plot_vs_amb"]


def _gmean_ci(x) -> tuple[float, float, float]:
    lx = np.log(np.asarray(x, dtype=float))
    h = stats.t.ppf(0.975, lx.size - 1) * lx.std(ddof=1) / math.sqrt(lx.size)
    return math.exp(lx.mean()), math.exp(lx.mean() - h), math.exp(lx.mean() + h)


def plot_vs_amb(analyses: list, root) -> Path | None:
    a = analyses[0]
    if not getattr(a, "columns", None):
        return None
    grid = sorted(a.columns)
    fig, ax = plt.subplots(figsize=(6.2, 5.0))
    for col, label in (("privacy_amb", "DP-AMBSSGD (Algorithms 2 + 3)"),
                       ("privacy_ssp", "sufficient statistics perturbation")):
        g = np.array([_gmean_ci(a.columns[v][col]) for v in grid])
        ax.errorbar(grid, g[:, 0], yerr=np.abs(g[:, 1:].T - g[:, 0]), marker="o", ms=4,
                    capsize=2, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d (n = 2.5·10⁴, ε = 4, δ = 10⁻⁶, σ = ‖w*‖ = 1)")
    ax.set_ylabel("privacy term ½‖w − w_ref‖²_H")
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.25)
    fig.suptitle(a.experiment.id + "\n" + "; ".join(f"{r.bound}: {r.verdict}" for r in a.results),
                 fontsize=6)
    fig.text(0.01, 0.005, "geometric mean over seeds ± 95% t-interval; both runs spend ε = 4 "
             "(dp-accounting)", fontsize=6, color="0.35")
    return save_figure(fig, Path(root) / "linreg" / f"{a.experiment.id}.png")
