"""Real data, in miniature (pseudo-paper ``real``): the papers' claims reproduced on data sets
scikit-learn ships.  It builds on the other papers' units (their problems, algorithms and
bounds); importing it registers every real-data experiment (:mod:`empirical.papers.real.data`)."""
from pathlib import Path

from bounds.core import register_paper

register_paper("real", uses=("kan", "linreg", "kl", "sosp", "userlevel"),
               title="Real data: the papers' claims in miniature, on scikit-learn's data sets",
               errata=str(Path(__file__).resolve().parents[3] / "docs" / "errata" / "real.md"))

from empirical.papers.real import data  # noqa: E402,F401
