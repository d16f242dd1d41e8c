"""Figures of the real-data experiments (issue 16): accuracy or error with seed-to-seed 95%
intervals, and the ε dp-accounting reports printed beside every curve, so no accuracy is read
without its privacy cost.  Written under ``<root>/real/<summary id>.png`` by ``dprates``."""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from empirical.figures import save_figure

__all__ = ["mean_ci", "drawable", "plot_kan_lambda", "plot_lines"]


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    """Mean and 95% Student-t half-width over seeds."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        return float(x.mean()), math.nan
    return float(x.mean()), float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))


def _verdicts(a, width: int = 95) -> str:
    return "\n".join(textwrap.wrap("; ".join(f"{r.bound}: {r.verdict}" for r in a.results),
                                   width))


def drawable(analyses: list) -> list:
    """The analyses that carry data (an experiment whose run failed has none: no panel)."""
    return [a for a in analyses if getattr(a, "columns", None)]


def plot_kan_lambda(analyses: list, root, lambdas: tuple[float, ...]) -> Path | None:
    """One panel per calibration: test accuracy against λ, one curve per ε (mean ± 95% CI)."""
    analyses = drawable(analyses)
    if not analyses:
        return None
    fig, axes = plt.subplots(1, len(analyses), figsize=(6.4 * len(analyses), 5.6), squeeze=False)
    for ax, a in zip(axes[0], analyses):
        cmap = plt.get_cmap("viridis")
        grid = sorted(a.columns)
        for i, eps in enumerate(grid):
            cols = a.columns[eps]
            mc = [mean_ci(cols[f"acc_lam{lam:g}"]) for lam in lambdas]
            spent = float(np.max(cols["epsilon_spent"]))
            ax.errorbar(lambdas, [m for m, _ in mc], yerr=[h for _, h in mc], marker="o", ms=4,
                        capsize=2, color=cmap(i / max(1, len(grid) - 1)),
                        label=f"ε target {eps:g} (dp-accounting spent ≤ {spent:.3g})")
        maj = float(np.mean(a.columns[grid[0]]["majority_rate"]))
        ax.axhline(maj, color="0.5", ls=":", label=f"majority class {maj:.3f}")
        ax.set_xlabel("λ (noise correlation)")
        ax.set_ylabel("test accuracy (last iterate)")
        ax.set_title(a.experiment.id + "\n" + _verdicts(a), fontsize=6)
        ax.legend(fontsize=7, loc="lower left")
        ax.grid(True, alpha=0.25)
    fig.text(0.01, 0.005, "mean over seeds ± 95% t-interval; δ = "
             f"{analyses[0].experiment.fixed['delta']:g}", fontsize=6, color="0.35")
    fig.tight_layout()
    return save_figure(fig, Path(root) / "real" / "real.kan.lambda.png")


def plot_lines(a, root, name: str, series: list[tuple[str, str]], *, ylabel: str,
               xlabel: str, logy: bool = True, logx: bool = True, note: str = "") -> Path | None:
    """Columns of one comparison analysis against its grid variable (mean ± 95% CI per point);
    ``series`` is [(column, label), ...]; columns absent from the rows are skipped."""
    if not drawable([a]):
        return None
    fig, ax = plt.subplots(figsize=(6.6, 4.8))
    grid = sorted(a.columns)
    for col, label in series:
        if col not in a.columns[grid[0]]:
            continue
        mc = [mean_ci(a.columns[v][col]) for v in grid]
        ax.errorbar(grid, [m for m, _ in mc], yerr=[h for _, h in mc], marker="o", ms=4,
                    capsize=2, label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(a.experiment.id + "\n" + _verdicts(a), fontsize=6)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.25)
    fig.text(0.01, 0.005, "mean over seeds ± 95% t-interval. " + note, fontsize=6, color="0.35")
    fig.tight_layout()
    return save_figure(fig, Path(root) / "real" / f"{name}.png")
