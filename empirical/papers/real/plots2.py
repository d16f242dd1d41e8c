"""Figures of the SOSP and user-level real-data miniatures (:mod:`empirical.papers.real.sosp`,
:mod:`empirical.papers.real.userlevel`): means over seeds with 95% t-intervals and the ε dp-accounting
reports beside every curve.  Kept apart from the run modules so that a drawing change does not
change their code fingerprint (stored rows stay valid)."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from empirical.store.figures import save_figure
from empirical.papers.real.plots import drawable, mean_ci

__all__ = ["plot_sosp", "plot_userlevel"]


def _curve(cols: dict, prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    E = sorted(int(k[len(prefix):]) for k in cols if k.startswith(prefix))
    mc = np.array([mean_ci(cols[f"{prefix}{e}"]) for e in E])
    return np.array(E), mc[:, 0], mc[:, 1]


def _sosp_panel(ax, a) -> None:
    cmap = plt.get_cmap("viridis")
    grid = sorted(a.columns)
    for i, m in enumerate(grid):
        cols = a.columns[m]
        c = cmap(i / max(1, len(grid) - 1))
        E, mu, hw = _curve(cols, "acc_psgd_e")
        eps = float(np.max(cols["epsilon_psgd"]))
        ax.errorbar(E, mu, yerr=hw, color=c, marker="o", ms=3, capsize=2,
                    label=f"Gauss-PSGD m={m:g} (ε={eps:.3g})")
        if "acc_baseline_last_e1" in cols:
            E, mu, hw = _curve(cols, "acc_baseline_last_e")
            ax.plot(E, mu, color=c, ls="--", lw=1,
                    label=f"baseline iterates m={m:g} (ε/2 training)")
            sel, h = mean_ci(cols["acc_baseline"])
            eb = float(np.max(cols["epsilon_baseline"]))
            ax.errorbar([E[-1] + 0.3], [sel], yerr=[h], color=c, marker="s", ms=5, capsize=2,
                        label=f"baseline selected m={m:g} (ε={eb:.3g} total)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
    verdicts = "; ".join(f"{r.bound}: {r.verdict}" for r in a.results)
    ax.set_title(f"{a.experiment.id} (δ={a.experiment.fixed['delta']:g})\n{verdicts}",
                 fontsize=6)
    ax.legend(fontsize=6, loc="upper left")
    ax.grid(True, alpha=0.25)


def plot_sosp(analyses: list, root) -> Path | None:
    """One panel per ε (accuracy against epochs, every m of the grid, both methods) and one of
    final accuracy against ε."""
    analyses = drawable(analyses)
    if not analyses:
        return None
    curves = [a for a in analyses if a.experiment.variable == "m"]
    sweep = [a for a in analyses if a.experiment.variable == "epsilon"]
    n = len(curves) + len(sweep)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 5.0), squeeze=False)
    for ax, a in zip(axes[0], curves):
        _sosp_panel(ax, a)
    for ax, a in zip(axes[0][len(curves):], sweep):
        grid = sorted(a.columns)
        mc = [mean_ci(a.columns[v]["acc_psgd"]) for v in grid]
        ax.errorbar(grid, [m for m, _ in mc], yerr=[h for _, h in mc], marker="o", capsize=2,
                    label=f"Gauss-PSGD, m={a.experiment.fixed['m']:g}, final epoch")
        ax.set_xscale("log")
        ax.set_xlabel("ε (target = dp-accounting guarantee)")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1)
        ax.set_title(a.experiment.id + "\n" + "; ".join(f"{r.bound}: {r.verdict}"
                                                         for r in a.results), fontsize=6)
        ax.legend(fontsize=6)
        ax.grid(True, alpha=0.25)
    fig.text(0.01, 0.005, "mean over seeds ± 95% t-interval; digits, one-hidden-layer MLP; "
             "chance = 0.1", fontsize=6, color="0.35")
    fig.tight_layout()
    return save_figure(fig, Path(root) / "real" / "sosp_accuracy_epochs.png")


def _columns(a) -> dict:
    """Per-seed columns by grid value: a comparison analysis carries them; for a slope analysis
    they are read back from the stored rows (default results directory), else only the metric
    (``per_point``) is drawn."""
    if getattr(a, "columns", None):
        return a.columns
    exp = a.experiment
    try:
        from empirical.store.rows import load_rows

        full = set(a.per_point) - set(exp.quick_grid) != set()
        rows, missing = load_rows(exp, full=full, progress=lambda _msg: None)
    except Exception:   # results elsewhere (--results): draw what the analysis holds
        rows, missing = [], [0]
    if missing or not rows:
        return {v: {exp.metric: np.asarray(x)} for v, x in a.per_point.items()}
    out: dict = {}
    for r in rows:
        cols = out.setdefault(float(r[f"p_{exp.variable}"]), {})
        for k, v in r.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                cols.setdefault(k, []).append(float(v))
    return {v: {k: np.asarray(x) for k, x in c.items()} for v, c in out.items()}


def plot_userlevel(analyses: list, root) -> Path | None:
    """Excess risk against the swept variable (m or n), Algorithm 3 beside the item-level
    baseline, log-log, geometric means with 95% intervals; ε printed."""
    from empirical.papers.real.plots import gmean_ci

    analyses = [a for a in analyses if getattr(a, "per_point", None)]
    if not analyses:
        return None
    fig, axes = plt.subplots(1, len(analyses), figsize=(5.4 * len(analyses), 4.8), squeeze=False)
    series = [("excess_alg3", "Alg. 3 (user-level)", "tab:blue"),
              ("excess_baseline", "item-level baseline", "tab:orange"),
              ("excess_nonprivate", "Alg. 3 schedule, no noise (not private)", "tab:green"),
              ("excess_zero", "x = 0 (what a halt outputs)", "tab:red")]
    for ax, a in zip(axes[0], analyses):
        columns = _columns(a)
        grid = sorted(columns)
        for col, label, color in series:
            if col not in columns[grid[0]] or not np.isfinite(columns[grid[0]][col]).all():
                continue
            gc = np.array([gmean_ci(np.maximum(columns[v][col], 1e-12)) for v in grid])
            yerr = np.abs(gc[:, 1:].T - gc[:, 0])
            ax.errorbar(grid, gc[:, 0], yerr=yerr, marker="o", ms=4, capsize=2, label=label,
                        color=color)
        c0 = columns[grid[0]]
        eps = float(np.max(c0["epsilon_guarantee"])) if "epsilon_guarantee" in c0 else math.nan
        runs = [v for v in grid if "halted" in columns[v]
                and np.isfinite(columns[v]["halted"]).all()]
        halted = (f"Alg. 3 halted in {np.mean([np.mean(columns[v]['halted']) for v in runs]):.0%}"
                  " of runs" if runs else "Alg. 3 cannot run privately here")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(a.experiment.variable)
        ax.set_ylabel("excess risk F(x) − F* (full-data logistic loss)")
        ax.set_title(f"{a.experiment.id}: ε={eps:.3g}, δ={a.experiment.fixed['delta']:g}; "
                     f"{halted}\n"
                     + "; ".join(f"{r.bound}: {r.verdict}" for r in a.results), fontsize=6)
        ax.legend(fontsize=6)
        ax.grid(True, which="both", alpha=0.25)
    fig.text(0.01, 0.005, "geometric mean over seeds ± 95% t-interval", fontsize=6, color="0.35")
    fig.tight_layout()
    return save_figure(fig, Path(root) / "real" / "userlevel_excess.png")
