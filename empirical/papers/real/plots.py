"""Figures of the real-data experiments: accuracy or error with seed-to-seed 95%
intervals, and the ε dp-accounting reports printed beside every curve, so no accuracy is read
without its privacy cost.  Written under ``<root>/real/<summary id>.png`` by ``dprates``."""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from empirical.store.figures import save_figure

__all__ = ["mean_ci", "gmean_ci", "drawable", "plot_kan_lambda", "plot_lines"]


def gmean_ci(x: np.ndarray) -> tuple[float, float, float]:
    """Geometric mean and its 95% interval (Student-t on the logs) over seeds."""
    m, h = mean_ci(np.log(np.asarray(x, dtype=float)))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    """Mean and 95% Student-t half-width over seeds."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        return float(x.mean()), math.nan
    hw = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(hw)


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


def plot_lines(a, root, name: str,
               panels: list[tuple[list[tuple[str, str]], str, tuple[float, float] | None]], *,
               xlabel: str, logy: bool = True, logx: bool = True, note: str = "") -> Path | None:
    """Columns of one comparison analysis against its grid variable (mean ± 95% CI per point),
    one panel per ``(series, ylabel, ylim)``; ``series`` is [(column, label), ...]; columns
    absent from the rows (an optional baseline not installed) are skipped.  On a log axis the
    points are geometric means with their interval (errors spanning decades)."""
    if not drawable([a]):
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 5.0), squeeze=False)
    grid = sorted(a.columns)
    absent: list[str] = []
    for ax, (series, ylabel, ylim) in zip(axes[0], panels):
        for col, label in series:
            if col not in a.columns[grid[0]]:
                if label not in absent:
                    absent.append(label)
                continue
            if logy:
                gc = np.array([gmean_ci(a.columns[v][col]) for v in grid])
                yerr = np.abs(gc[:, 1:].T - gc[:, 0])
                ax.errorbar(grid, gc[:, 0], yerr=yerr, marker="o", ms=4, capsize=2, label=label)
            else:
                mc = [mean_ci(a.columns[v][col]) for v in grid]
                ax.errorbar(grid, [m for m, _ in mc], yerr=[h for _, h in mc], marker="o",
                            ms=4, capsize=2, label=label)
        if ylim is not None:
            ax.set_ylim(*ylim)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7, loc="best")
        ax.grid(True, which="both", alpha=0.25)
    fig.suptitle(a.experiment.id + "\n" + _verdicts(a, 150), fontsize=6)
    agg = "geometric mean" if logy else "mean"
    missing = "; ".join(f"{label}: not drawn, {_why_absent(label)}" for label in absent)
    fig.text(0.01, 0.005, f"{agg} over seeds ± 95% t-interval. {note}"
             + (f"\n{missing}" if missing else ""), fontsize=6, color="0.35")
    # a second footer line needs room below the axis labels
    fig.tight_layout(rect=(0, 0.03, 1, 1) if missing else None)
    return save_figure(fig, Path(root) / "real" / f"{name}.png")


#: Optional extras whose baselines a figure may lack, by the word its series label starts with.
_EXTRAS = {"diffprivlib": "the optional extra [real] (pip install -e '.[real]') is not installed"}


def _why_absent(label: str) -> str:
    for word, why in _EXTRAS.items():
        if label.startswith(word):
            return why
    return "its column is not in the stored rows"
