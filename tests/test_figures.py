"""The experiment figure's tick labels and margins (empirical/store/figures.py)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from empirical.store import figures  # noqa: E402


def _labels(lo: float, hi: float) -> tuple[list[str], list[str]]:
    import matplotlib.pyplot as plt

    with figures.figure_style():
        fig, ax = plt.subplots()
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        figures._no_crowded_minor_labels(ax)
        fig.canvas.draw()
        out = ([t.get_text() for t in ax.get_yticklabels()],
               [t.get_text() for t in ax.get_yticklabels(minor=True)])
        plt.close(fig)
    return out


def test_log_tick_labels_are_plain_text_powers_of_ten():
    major, minor = _labels(1e-3, 1e4)
    assert {"10⁻³", "10⁻²", "10⁰", "10⁴"} <= set(major)
    assert not any(minor), "over a decade or more only the powers of ten are labelled"
    major, minor = _labels(2e-2, 9e-2)
    assert {"2×10⁻²", "3×10⁻²", "6×10⁻²"} <= set(minor)
    assert not any("$" in t for t in major + minor), "no mathtext"


def test_a_label_of_another_form_is_left_as_matplotlib_writes_it(monkeypatch):
    monkeypatch.setattr(figures.LogFormatterSciNotation, "__call__", lambda self, x, pos=None:
                        r"$\mathdefault{-10^{2}}$")
    assert figures._PowerOfTen()(100.0) == r"$\mathdefault{-10^{2}}$"


@pytest.mark.parametrize("label_len", [10, 60, 160])
def test_the_legend_and_the_title_stay_inside_the_figure(label_len):
    import matplotlib.pyplot as plt

    with figures.figure_style():
        fig, ax = plt.subplots(figsize=(9.6, 4.8), dpi=110)
        ax.loglog([1, 10, 100], [3e-2, 1e-2, 4e-3], label="x" * label_len)
        ax.plot([1, 100], [1e-2, 1e-2], label="bound")
        figures._no_crowded_minor_labels(ax)
        title = ["exp.id", "a title of two lines"]
        ax.set_title("\n".join(title), fontsize=9)
        legend = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                           borderaxespad=0.0, frameon=False)
        figures._margins(fig, legend, len(title))
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        width, height = fig.bbox.width, fig.bbox.height
        box = legend.get_window_extent(r)
        assert label_len > 100 or box.x1 <= width, "a legend of ordinary length fits"
        t = ax.title.get_window_extent(r)
        assert t.y1 <= height and ax.get_position().width > 0.3
        for lab in ax.get_yticklabels() + [ax.yaxis.label]:
            if lab.get_text():
                assert lab.get_window_extent(r).x0 >= 0
        plt.close(fig)
