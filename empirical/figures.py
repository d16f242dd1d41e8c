"""Log-log figures, one per experiment: per-seed points (spread), aggregated points, the fitted
line, the bound's local slope and its asymptotic slope drawn through the data, dropped points
marked.  Saved as ``figures/<paper>/<experiment>.png`` (``dprates`` puts full-grid figures under
``figures/full/`` so they never overwrite the quick ones).

Rendering is deterministic: a fixed style and font (DejaVu Sans, shipped with matplotlib), no
timestamp or version string in the PNG, and a file whose bytes would not change is not
rewritten, so redrawing from the same data leaves a git checkout clean.
"""
from __future__ import annotations

import contextlib
import io
import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from empirical.checks import Analysis  # noqa: E402

__all__ = ["plot_analysis", "figure_path", "save_figure", "figure_style"]

#: rc settings every figure is drawn under, whatever the user's matplotlibrc says.
_STYLE = {"font.family": "DejaVu Sans", "font.size": 10.0, "figure.dpi": 110,
          "savefig.dpi": 110, "text.usetex": False,
          "svg.hashsalt": "dprates", "path.simplify": True}
#: PNG text chunks: matplotlib writes its version as "Software" unless told not to.
_PNG_METADATA = {"Software": None}


@contextlib.contextmanager
def figure_style():
    """matplotlib's defaults plus :data:`_STYLE`, for figures whose bytes do not depend on the
    machine's configuration (wrap summary plots in it too)."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(_STYLE)
        yield


def figure_path(analysis: Analysis, root: str | os.PathLike = "figures") -> Path:
    exp = analysis.experiment
    return Path(root) / exp.paper / f"{exp.id}.png"


def plot_analysis(analysis: Analysis, root: str | os.PathLike = "figures") -> Path:
    with figure_style():
        return _plot_analysis(analysis, root)


def _plot_analysis(analysis: Analysis, root: str | os.PathLike) -> Path:
    exp = analysis.experiment
    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=110)
    kept = set(analysis.kept)
    for v, metric in analysis.per_point.items():
        good = metric[np.isfinite(metric) & (metric > 0)]
        color = "tab:blue" if v in kept else "0.6"
        ax.scatter(np.full(good.size, v), good, s=9, alpha=0.35, color=color, linewidths=0)
    if analysis.dropped:
        dv = [v for v, _ in analysis.dropped]
        dy = [np.exp(np.nanmean(np.log(np.clip(analysis.per_point[v], 1e-300, None)))) for v in dv]
        # Reasons can be long; the full text is in `dprates verify`'s notes, the legend stays short.
        ax.scatter(dv, dy, marker="x", color="0.4",
                   label=f"dropped ({len(dv)}): vacuous/outside theorem; see verify notes")
    fit = analysis.fit
    if fit is not None:
        x = fit.x
        ax.scatter(x, fit.y, color="tab:blue", zorder=3, label=f"{exp.aggregate} over {exp.seeds} seeds")
        xx = np.geomspace(x.min(), x.max(), 50)
        cx, cy = np.exp(np.log(x).mean()), np.exp(np.log(fit.y).mean())
        ax.plot(xx, cy * (xx / cx) ** fit.slope, color="tab:blue",
                label=f"fit: slope {fit.slope:+.3f} [{fit.ci_low:+.3f}, {fit.ci_high:+.3f}]")
        styles = ["--", ":", "-.", (0, (5, 1))]
        for i, r in enumerate(analysis.results):
            col = "tab:red" if r.kind == "reject" else "tab:orange"
            ax.plot(xx, cy * (xx / cx) ** r.local, color=col, ls=styles[i % 4],
                    label=f"{r.bound} local {r.local:+.3f} ({r.verdict})")
            if r.kind != "reject":
                ax.plot(xx, cy * (xx / cx) ** r.asymptotic, color="tab:green", ls=styles[i % 4],
                        alpha=0.8, label=f"{r.bound} asymptotic {r.asymptotic_expr}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(exp.variable)
    ax.set_ylabel(exp.metric)
    # long titles are wrapped rather than clipped at the figure edge
    ax.set_title(exp.id + "\n" + "\n".join(textwrap.wrap(exp.title, 80)), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.25)
    fixed = ", ".join(f"{k}={v:g}" for k, v in exp.fixed.items() if isinstance(v, (int, float)))
    fig.text(0.01, 0.005, fixed, fontsize=6, color="0.35")
    fig.tight_layout()
    return save_figure(fig, figure_path(analysis, root))


def save_figure(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` atomically (temporary file, then rename) and close it.

    No metadata that changes between runs; an existing file with the same bytes is left alone.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=_PNG_METADATA)
    plt.close(fig)
    data = buf.getvalue()
    if path.exists() and path.read_bytes() == data:
        return path
    tmp = path.with_suffix(".tmp.png")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path
