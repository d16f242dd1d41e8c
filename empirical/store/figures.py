"""Log-log figures, one per experiment: every seed's value and
the spread over seeds, the aggregated points, the fitted line with the band of its slope's
confidence interval, each checked bound's own curve over the grid scaled to the data (its
constant is not the claim; the shape is) with its asymptotic exponent as a reference line, and
each rejected competitor's curve, scaled the same way, in a legend outside the axes that names
each line and its verdict; dropped points marked.  Saved as ``figures/<paper>/<experiment>.png`` (``dprates`` puts full-grid figures under
``figures/full/`` so they never overwrite the quick ones).

Rendering is deterministic: a fixed style and font (DejaVu Sans, shipped with matplotlib), no
timestamp or version string in the PNG, and a file whose bytes would not change is not
rewritten, so redrawing from the same data leaves a git checkout clean.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogFormatterSciNotation  # noqa: E402
import numpy as np  # noqa: E402

from empirical.core.checks import Analysis  # noqa: E402

__all__ = ["plot_analysis", "render_analysis", "figure_path", "save_figure", "figure_png",
           "write_png", "figure_style"]

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
    """Draw ``analysis``'s figure and write it to :func:`figure_path` (see :func:`write_png`)."""
    return write_png(render_analysis(analysis), figure_path(analysis, root))


def render_analysis(analysis: Analysis) -> bytes:
    """The PNG bytes :func:`plot_analysis` writes, without writing them (``verify``'s workers
    draw figures and hand the bytes to the parent, which writes them)."""
    with figure_style():
        return figure_png(_figure(analysis))


def _figure(analysis: Analysis):
    exp = analysis.experiment
    # wide figure, legend outside the axes: the legend says which line is which and must not
    # hide the data
    fig, ax = plt.subplots(figsize=(9.6, 4.8), dpi=110)
    _plot_seeds(ax, analysis)
    fit = analysis.fit
    if fit is not None:
        _plot_fit(ax, analysis)
        for i, r in enumerate(analysis.results):
            _plot_bound(ax, fit, r, _STYLES[i % len(_STYLES)])
    ax.set_xscale("log")
    ax.set_yscale("log")
    _no_crowded_minor_labels(ax)
    ax.set_xlabel(exp.variable)
    ax.set_ylabel(exp.metric)
    # long titles are wrapped rather than clipped at the figure edge
    title = [exp.id, *textwrap.wrap(exp.title, 80)]
    # y given: matplotlib then does not lay out the tick labels to see whether they would reach
    # the title (they are below the axes here), ≈ 10 % of a figure's cost
    ax.set_title("\n".join(title), fontsize=9, y=1.0)
    legend = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       borderaxespad=0.0, frameon=False)
    ax.grid(True, which="both", alpha=0.25)
    fixed = ", ".join(f"{k}={v:g}" for k, v in exp.fixed.items() if isinstance(v, (int, float)))
    fig.text(0.01, 0.005, fixed, fontsize=6, color="0.35")
    _margins(fig, legend, len(title))
    return fig


def _margins(fig, legend, title_lines: int) -> None:
    """Margins in inches: fixed for the tick labels and axis labels (plain text of known size,
    :class:`_PowerOfTen`), the title's from its line count, the right one from the legend's
    own width.  ``tight_layout`` would find the same margins by laying out every tick label of
    the figure once more before the figure is drawn: ≈ 20 % of a figure's cost."""
    w, h = fig.get_size_inches()
    width = legend.get_window_extent(fig.canvas.get_renderer()).width / fig.dpi
    right = max(0.45, 1.0 - (width + 0.2) / w)      # a very long legend still leaves axes
    fig.subplots_adjust(left=0.95 / w, right=right, bottom=0.62 / h,
                        top=1.0 - (0.14 + 0.155 * title_lines) / h)


_STYLES = ("-", "--", "-.", (0, (5, 1)))


def _no_crowded_minor_labels(ax) -> None:
    # Over a decade or more the major (power-of-ten) labels suffice; matplotlib's minor labels
    # (3×10⁻², 4×10⁻²) then overlap.
    from matplotlib.ticker import NullFormatter

    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        axis.set_major_formatter(_PowerOfTen())
        if lo > 0 and hi / lo >= 10:
            axis.set_minor_formatter(NullFormatter())
        else:
            axis.set_minor_formatter(_PowerOfTen(labelOnlyBase=False))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_SCI = re.compile(r"\$\\mathdefault\{(?:(?P<m>[0-9.]+)\\times)?10\^\{(?P<e>-?[0-9]+)\}\}\$")


class _PowerOfTen(LogFormatterSciNotation):
    """matplotlib's log-axis labels (10⁻², 3×10⁻²: which ticks get one is unchanged) as plain
    Unicode text instead of mathtext, whose parse and layout of every label was ≈ 20 % of a
    figure's cost.  A label of another form is left as matplotlib writes it."""

    def __call__(self, x, pos=None):
        label = super().__call__(x, pos)
        hit = _SCI.fullmatch(label)
        if hit is None:
            return label
        power = "10" + hit["e"].translate(_SUPERSCRIPT)
        return f"{hit['m']}×{power}" if hit["m"] else power


def _plot_seeds(ax, analysis: Analysis) -> None:
    """Every seed's value (light), the min–max spread over seeds (bar) and dropped points."""
    exp = analysis.experiment
    kept = set(analysis.kept)
    first = True
    for v, metric in analysis.per_point.items():
        good = metric[np.isfinite(metric) & (metric > 0)]
        if not good.size:
            continue
        color = "tab:blue" if v in kept else "0.6"
        ax.scatter(np.full(good.size, v), good, s=9, alpha=0.35, color=color, linewidths=0,
                   label=f"each seed ({exp.seeds} per point)" if first else None)
        ax.vlines(v, good.min(), good.max(), color=color, alpha=0.6, lw=1.2,
                  label="spread over seeds (min–max)" if first else None)
        first = False
    if analysis.dropped:
        dv = [v for v, _ in analysis.dropped]
        dy = [np.exp(np.nanmean(np.log(np.clip(analysis.per_point[v], 1e-300, None)))) for v in dv]
        # Reasons can be long; the full text is in `dprates verify`'s notes, the legend stays short.
        ax.scatter(dv, dy, marker="x", color="0.4",
                   label=f"dropped ({len(dv)}): vacuous/outside theorem; see verify notes")


def _centre(fit) -> tuple[float, float]:
    # The least-squares line in log-log passes through the geometric means of x and y.
    return float(np.exp(np.log(fit.x).mean())), float(np.exp(np.log(fit.y).mean()))


def _plot_fit(ax, analysis: Analysis) -> None:
    """Aggregated points, the fitted line and the band its slope's CI spans about the centre."""
    exp, fit = analysis.experiment, analysis.fit
    x = fit.x
    ax.scatter(x, fit.y, color="tab:blue", zorder=3, label=f"{exp.aggregate} over seeds (fitted)")
    xx = np.geomspace(x.min(), x.max(), 60)
    cx, cy = _centre(fit)
    lo, hi = cy * (xx / cx) ** fit.ci_low, cy * (xx / cx) ** fit.ci_high
    ax.fill_between(xx, np.minimum(lo, hi), np.maximum(lo, hi), color="tab:blue", alpha=0.15,
                    linewidth=0, label=f"{100 * fit.level:g}% CI of the fitted slope "
                                       f"[{fit.ci_low:+.3f}, {fit.ci_high:+.3f}]")
    ax.plot(xx, cy * (xx / cx) ** fit.slope, color="tab:blue", lw=1.6,
            label=f"fit: slope {fit.slope:+.3f}")


def _plot_bound(ax, fit, r, ls) -> None:
    """The bound's own values at the kept points (fit.y / ratios), scaled by the geometric mean
    of observed/bound so that the curve's shape, not its constant, is compared with the data;
    for a checked bound also its asymptotic exponent as a reference line through the centre."""
    x = fit.x
    ratios = np.asarray(r.ratios if r.ratios is not None else (), dtype=float)
    rejected = r.kind == "reject"
    # a competitor whose assumptions do not hold on the instance is drawn as a reference only
    reference = rejected and r.verdict == "REFERENCE"
    col = "tab:gray" if reference else "tab:red" if rejected else "tab:orange"
    if ratios.size == x.size and np.all(np.isfinite(ratios)) and np.all(ratios > 0):
        scale = float(np.exp(np.log(ratios).mean()))
        curve = fit.y / ratios * scale
        what = (f"reference {r.bound}" if reference else f"competitor {r.bound}" if rejected
                else f"bound {r.bound}")
        ax.plot(x, curve, color=col, ls=ls, lw=1.4, marker="." if not rejected else None,
                label=f"{what} × {scale:.3g} (local slope {r.local:+.3f}): {r.verdict}")
    if not rejected and np.isfinite(r.asymptotic):
        xx = np.geomspace(x.min(), x.max(), 60)
        cx, cy = _centre(fit)
        ax.plot(xx, cy * (xx / cx) ** r.asymptotic, color="tab:green", ls=":", lw=1.2,
                alpha=0.9, label=f"{r.bound} asymptotic exponent {r.asymptotic_expr}")


def figure_png(fig) -> bytes:
    """``fig`` as PNG bytes without metadata that changes between runs; closes ``fig``."""
    # fig.tight_layout() leaves a placeholder layout engine behind, and savefig then draws the
    # whole figure once more (text layout included) before drawing it for real: ≈ 15 % of a
    # figure's cost for nothing, since the layout is already done.  Without an engine the
    # bytes are the same.
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine) and not (
            matplotlib.rcParams["figure.autolayout"]
            or matplotlib.rcParams["figure.constrained_layout.use"]):
        fig.set_layout_engine(None)      # (with those rc settings None would mean an engine)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", metadata=_PNG_METADATA)
    finally:
        plt.close(fig)
    return buf.getvalue()


def write_png(data: bytes, path: str | os.PathLike) -> Path:
    """Write PNG ``data`` to ``path`` atomically (temporary file, then rename); an existing
    file with the same bytes is left alone, so redrawing leaves a git checkout clean."""
    from empirical.store.integrity import atomic_write_bytes

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return path
    # mkstemp in the target directory, then a rename: no predictable name, no write through a
    # planted symlink, no temporary file left when the write fails
    return atomic_write_bytes(path, data)


def save_figure(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` (:func:`figure_png`, then :func:`write_png`) and close it."""
    return write_png(figure_png(fig), path)
