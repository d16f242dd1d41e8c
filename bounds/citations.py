"""The five papers whose theorems ``bounds`` encodes: authors, titles and where to read them.

One record per paper key of this project's entry points (pyproject.toml), spelled as on each paper's first
page.  The README, the report's headings and docs/results.md take their citations from here
(tests/test_readme.py checks that the README cites every record as written).  An arXiv
identifier is given where the paper's own text carries it; otherwise the link is an arXiv title
search.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote_plus

__all__ = ["Citation", "CITATIONS", "citation"]


@dataclass(frozen=True)
class Citation:
    """How a paper is cited: its authors in the order printed, its title, an arXiv id if known."""

    key: str
    authors: tuple[str, ...]
    title: str
    arxiv: str | None = None

    @property
    def url(self) -> str:
        if self.arxiv:
            return f"https://arxiv.org/abs/{self.arxiv}"
        return f"https://arxiv.org/search/?searchtype=title&query={quote_plus(self.title)}"

    @property
    def surnames(self) -> str:
        return ", ".join(a.split()[-1] for a in self.authors)

    def short(self) -> str:
        """Surnames, quoted title and the arXiv id if known: a heading-sized citation."""
        tail = f" (arXiv {self.arxiv})" if self.arxiv else ""
        return f'{self.surnames}, "{self.title}"{tail}'

    def markdown(self) -> str:
        """Full authors, the title linked, and the arXiv id if known."""
        tail = f", arXiv:{self.arxiv}" if self.arxiv else ""
        return f"{', '.join(self.authors)}. [{self.title}]({self.url}){tail}."


CITATIONS: dict[str, Citation] = {c.key: c for c in (
    Citation("kl", ("Michael Menart", "Enayat Ullah", "Raman Arora", "Raef Bassily",
                    "Cristóbal Guzmán"),
             "Differentially Private Non-Convex Optimization under the KL Condition with "
             "Optimal Rates"),
    Citation("kan", ("Puyu Wang", "Jan Schuchardt", "Nikita Kalinin", "Junyu Zhou",
                     "Sophie Fellenz", "Christoph Lampert", "Marius Kloft"),
             "Population Risk Bounds for Kolmogorov–Arnold Networks Trained by DP-SGD with "
             "Correlated Noise", "2605.12648"),
    Citation("linreg", ("Prateek Varshney", "Abhradeep Thakurta", "Prateek Jain"),
             "(Nearly) Optimal Private Linear Regression via Adaptive Clipping"),
    Citation("userlevel", ("Andrew Lowy", "Daogao Liu", "Hilal Asi"),
             "Faster Algorithms for User-Level Private Stochastic Convex Optimization"),
    Citation("sosp", ("Youming Tao", "Zuyuan Zhang", "Dongxiao Yu", "Xiuzhen Cheng",
                      "Falko Dressler", "Di Wang"),
             "Second-Order Convergence in Private Stochastic Non-Convex Optimization"),
)}


def citation(paper: str) -> Citation | None:
    """The citation of a built-in paper key, None for a paper registered from elsewhere."""
    return CITATIONS.get(paper)
