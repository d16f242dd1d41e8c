"""Bounds of the correlated-noise paper: the optimisation theorems
(:mod:`bounds.rates.kan.correlated_noise`), the population-risk theorems
(:mod:`bounds.rates.kan.population`) and the calibrations, corollaries and prior rates
(:mod:`bounds.rates.kan.calibration_corollaries`); importing the package registers all three."""
from pathlib import Path

from bounds.core import register_paper
from bounds.rates.kan import correlated_noise, population, calibration_corollaries  # noqa: F401

# The paper's experiments and audits (imported with its bounds when its experiments are asked
# for) and the algorithms the report links.
register_paper(
    "kan", "empirical.papers.kan", algorithms=("algorithms.kan.correlated_noise",),
    title='Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft, "Population Risk Bounds for Kolmogorov–Arnold Networks Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648)',
    citation='Puyu Wang, Jan Schuchardt, Nikita Kalinin, Junyu Zhou, Sophie Fellenz, Christoph Lampert, Marius Kloft. [Population Risk Bounds for Kolmogorov–Arnold Networks Trained by DP-SGD with Correlated Noise](https://arxiv.org/abs/2605.12648), arXiv:2605.12648.',
    url='https://arxiv.org/abs/2605.12648',
    errata=str(Path(__file__).resolve().parents[3] / "docs" / "errata" / "kan.md"))
