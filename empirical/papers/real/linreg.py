"""Linear-regression paper (Varshney–Thakurta–Jain) on real
data: DP-AMBSSGD (Algorithm 2, adaptive clipping through DP-STAT) and the fixed-clip minibatch
baseline on scikit-learn's ``diabetes``, error against ε, beside diffprivlib's
``LinearRegression`` (a peer the community uses; skipped when not installed) and non-private
least squares.

The algorithms were written for a streamed distribution (``LinearRegressionDesign.sample``);
here :class:`FiniteSample` streams the training rows instead, each seed through its own random
permutation, *once*: every record enters exactly one mechanism (a DP-STAT count or one gradient
step), which is what the algorithm's parallel-composition accounting needs.

Metrics per run: the exact excess empirical risk ½‖w − ŵ‖²_Ĥ (Ĥ = XᵀX/n on the training rows,
ŵ least squares: the realizable optimum of the training distribution) and the test MSE in units
of Var(y).  Constants the theorem takes from the data distribution are set a priori, never from
the data: R_x² = 1 (rows in the unit ball give E‖x‖²xxᵀ ⪯ H), ‖w*‖_H + σ = 1 (y standardised;
B of DP-STAT), the fixed clip ζ = 1.  Theorem 3.7's phase count T = ⌈κ ln n⌉ needs κ(Ĥ) ≈ 455
here, i.e. T ≈ 2600 phases and n ≥ 11T ≈ 29 000 rows, 94× more than diabetes has: the run uses
T = 6 (b = 46 gradient and s = 4 DP-STAT points per phase), outside the theorem's regime, and
says so.  diffprivlib is pure ε-DP (δ = 0; its own accountant), the others (ε, 1e-5)-DP by
dp-accounting.
"""
from __future__ import annotations

import importlib
import math
import warnings
from typing import Sequence

import numpy as np

from algorithms import accounting
from algorithms.linreg.adaptive_clipping import dp_ambssgd
from algorithms.noise_meter import NoiseMeter, observer
from empirical.core.checks import ComparisonExperiment, Contrast
from empirical.core.experiment import Summary, register, register_summary
from empirical.papers.real.data import PAPER, prepared

__all__ = ["FiniteSample", "diffprivlib_linear_regression", "run_linreg", "METHODS"]

_DATA_KEY = "real.linreg.diabetes"
#: Private methods run at every ε (column suffixes).
METHODS = ("adaptive", "adaptive_L6", "fixed", "diffprivlib")


class FiniteSample:
    """A finite data set in the role of ``LinearRegressionDesign`` for :func:`dp_ambssgd`: each
    generator passed to :meth:`sample` walks its own random permutation of the rows, without
    replacement (a one-pass algorithm then touches every record at most once)."""

    tail_a = 0.5          # Gaussian-like tails (a of the Tail condition): ζ_t = R_x γ_t √(ln n)

    def __init__(self, X: np.ndarray, y: np.ndarray, *, rx2: float = 1.0, w_norm: float = 1.0,
                 sigma: float = 0.0) -> None:
        self.X, self.y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        if self.X.ndim != 2 or self.y.shape != (self.X.shape[0],):
            raise ValueError(f"X must be (n, d) and y (n,), got {self.X.shape} and {self.y.shape}")
        self.rx2, self.w_norm, self.sigma = float(rx2), float(w_norm), float(sigma)
        self._cursor: dict[int, tuple[np.ndarray, int]] = {}

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def condition_number(self) -> float:
        raise ValueError("T must be given: Theorem 3.7's T = ⌈κ ln n⌉ needs κ(H), a private "
                         "property of the data")

    def sample(self, gens: Sequence[np.random.Generator], m: int) -> tuple[np.ndarray, np.ndarray]:
        idx = np.stack([self._next(g, m) for g in gens])
        return self.X[idx], self.y[idx]

    def _next(self, g: np.random.Generator, m: int) -> np.ndarray:
        perm, cur = self._cursor.get(id(g), (None, 0))
        if perm is None:
            perm = g.permutation(self.y.size)
        if cur + m > perm.size:
            raise ValueError(f"m must be in [0, {perm.size - cur}] (rows left in this pass), "
                             f"got {m}")
        self._cursor[id(g)] = (perm, cur + m)
        return perm[cur:cur + m]


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    Xtr, ytr, Xte, yte = prepared("diabetes", 0.3, _DATA_KEY)
    mu, sd = ytr.mean(), ytr.std()          # public preprocessing, as the features'
    return Xtr, (ytr - mu) / sd, Xte, (yte - mu) / sd


def diffprivlib_linear_regression():
    """diffprivlib's ``LinearRegression`` and ``BudgetAccountant`` classes, or the one-line
    reason they are unavailable (not installed, or failing to import against this
    scikit-learn: diffprivlib 0.6.6 does under scikit-learn 1.9)."""
    try:
        return (importlib.import_module("diffprivlib.models").LinearRegression,
                importlib.import_module("diffprivlib.accountant").BudgetAccountant)
    except ImportError as exc:
        return f"diffprivlib unavailable ({type(exc).__name__}: {exc})"


def _diffprivlib_runs(Xtr, ytr, epsilon: float, rngs: list) -> tuple[np.ndarray, np.ndarray] | None:
    found = diffprivlib_linear_regression()
    if isinstance(found, str):
        return None
    cls, accountant = found
    W, spent = [], []
    for g in rngs:
        with warnings.catch_warnings():
            # diffprivlib warns when bounds are given without a budget accountant; ours are
            # public a-priori bounds (rows in the unit ball, standardised y clipped at ±3).
            warnings.simplefilter("ignore")
            # a fresh accountant per fit: the default one is global and sums over every fit
            acc = accountant()
            model = cls(epsilon=epsilon, bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0),
                        fit_intercept=False, random_state=int(g.integers(2 ** 31 - 1)),
                        accountant=acc)
            model.fit(Xtr, np.clip(ytr, -3.0, 3.0))
        W.append(np.asarray(model.coef_, dtype=float).ravel())
        spent.append(float(acc.total()[0]))
    return np.stack(W), np.asarray(spent)


def _multiplier(epsilon: float, delta: float) -> float:
    """α of a ½α⁻²-zCDP run that is (ε, δ)-DP, recomputed here by bisection on dp-accounting's
    ρ → ε (not through the algorithm's ``alpha_for_epsilon``)."""
    from scipy.optimize import brentq

    return brentq(lambda a: accounting.zcdp_to_epsilon(0.5 / a**2, delta) - epsilon, 1e-4, 1e4,
                  xtol=1e-300, rtol=1e-15, maxiter=500)


def _meter_hook(meter: NoiseMeter, method: str, alpha: float, levels: int | None):
    """Observe hook measuring one method's noise (release − noise-free value on the same draws):
    DP-STAT's counts against Lemma 3.10's α√(L + 1), α recomputed here; the gradient steps
    against the std α·2ζ_t/b the accountant priced (ζ_t is data dependent: the algorithm's)."""
    meter.channel(f"grad_{method}")
    if levels is not None:
        meter.channel(f"stat_{method}")
    stat_std = alpha * math.sqrt(levels + 1) if levels is not None else 0.0

    def handle(kind, t, rows, released, sigma, *, clean):
        e = np.asarray(released, dtype=float) - np.asarray(clean, dtype=float)
        meter.add(f"{kind}_{method}", rows, e, stat_std if kind == "stat" else sigma)

    return observer(meter, handle)


def run_linreg(point: dict, rngs: list) -> dict:
    """One ε: every method on each seed; excess empirical risk and test MSE per method."""
    Xtr, ytr, Xte, yte = _data()
    n = ytr.size
    Hh = Xtr.T @ Xtr / n
    w_ls = np.linalg.lstsq(Xtr, ytr, rcond=None)[0]

    def excess(W: np.ndarray) -> np.ndarray:
        D = W - w_ls
        return 0.5 * np.einsum("rd,de,re->r", D, Hh, D)

    def test_mse(W: np.ndarray) -> np.ndarray:
        return np.mean((Xte @ W.T - yte[:, None]) ** 2, axis=0)

    eps, delta, T = point["epsilon"], point["delta"], int(point["T"])
    S = len(rngs)
    kw = dict(epsilon=eps, delta=delta, T=T)
    # Each method gets its own child stream of the seed, so adding a method moves no other.
    kids = [g.spawn(len(METHODS)) for g in rngs]
    meter = NoiseMeter(S)
    alpha = _multiplier(eps, delta)
    runs = {"adaptive": dp_ambssgd(FiniteSample(Xtr, ytr), n, rng=[k[0] for k in kids],
                                   observe=_meter_hook(meter, "adaptive", alpha, 40), **kw),
            "adaptive_L6": dp_ambssgd(FiniteSample(Xtr, ytr), n, rng=[k[1] for k in kids],
                                      levels=6, observe=_meter_hook(meter, "adaptiveL6", alpha, 6),
                                      **kw),
            "fixed": dp_ambssgd(FiniteSample(Xtr, ytr), n, rng=[k[2] for k in kids],
                                clip="fixed", zeta=point["zeta"],
                                observe=_meter_hook(meter, "fixed", alpha, None), **kw)}
    out: dict = meter.columns()
    for name, r in runs.items():
        out[f"excess_{name}"] = excess(r.w)
        out[f"testmse_{name}"] = test_mse(r.w)
        out[f"clip_fraction_{name}"] = r.info["clip_fraction"]
        out[f"epsilon_spent_{name}"] = np.asarray(r.info["epsilon_spent"], dtype=float)
    out["zeta_mean_adaptive"] = runs["adaptive"].info["zeta"].mean(axis=1)
    g = np.array([r.info["epsilon_guarantee"] for r in runs.values()])
    out["epsilon_target"] = np.full(S, eps)
    out["epsilon_guarantee"] = np.full(S, g[np.argmax(np.abs(g - eps))])
    out["epsilon_spent"] = np.max([out[f"epsilon_spent_{m}"] for m in runs], axis=0)
    out["delta_target"] = out["delta_guarantee"] = np.full(S, delta)
    dpl = _diffprivlib_runs(Xtr, ytr, eps, [k[3] for k in kids])
    if dpl is not None:
        out["excess_diffprivlib"] = excess(dpl[0])
        out["testmse_diffprivlib"] = test_mse(dpl[0])
        out["epsilon_pure_diffprivlib"] = dpl[1]
    out["testmse_ols"] = np.full(S, float(np.mean((Xte @ w_ls - yte) ** 2)))
    out["testmse_zero"] = np.full(S, float(np.mean(yte ** 2)))
    return out


def _contrasts() -> tuple[Contrast, ...]:
    why = ("the paper's claim: adaptive clipping beats a fixed clip; paired by seed (same seed, "
           "own streams), log of the excess risk (spans decades), one-sided, 95% t-interval")
    out = [Contrast(f"adaptive < fixed @ε={e:g}", "greater", "excess_adaptive", "excess_fixed",
                    why, at=(e,), sign=-1, log=True, expect=ex)
           for e, ex in ((1.0, "finding"), (16.0, "finding"), (256.0, "hold"))]
    out.append(Contrast("adaptive(L=6) < fixed @ε=16", "greater", "excess_adaptive_L6",
                        "excess_fixed", why + "; DP-STAT with L = 6 levels (Δ = B/64) instead of "
                        "the default 40", at=(16.0,), sign=-1, log=True, expect="finding"))
    out.append(Contrast("fixed vs least squares (test MSE)", "report", "testmse_fixed",
                        "testmse_ols", "no claim: the price of privacy in test MSE (log ratio)",
                        sign=-1, log=True))
    return tuple(out)


def _diffprivlib_contrast() -> tuple[Contrast, ...]:
    if isinstance(diffprivlib_linear_regression(), str):
        return ()
    return (Contrast("fixed vs diffprivlib", "report", "excess_fixed", "excess_diffprivlib",
                     "no claim: a peer library (pure ε-DP, functional mechanism); log ratio of "
                     "excess risks, positive = ours better", sign=-1, log=True),)


LINREG = register(ComparisonExperiment(
    id="real.linreg.diabetes", paper=PAPER,
    title="DP-AMBSSGD vs fixed clip vs diffprivlib vs least squares on diabetes, error vs ε",
    variable="epsilon", quick_grid=(1.0, 16.0, 256.0), full_grid=(1.0, 4.0, 16.0, 64.0, 256.0),
    fixed={"delta": 1e-5, "T": 6, "zeta": 1.0}, seeds=16, run=run_linreg,
    metric="excess_adaptive", bound_values=lambda p: {}, checks=(),
    contrasts=_contrasts() + _diffprivlib_contrast(), problem="diabetes (n = 309 train)",
    algorithm="dp_ambssgd (Algorithm 2), clip='fixed'", aggregate="mean",
    description=__doc__.split("\n\n")[2], privacy_rtol=1e-6))


def _plot(analyses: list, root) -> object:
    # Imported by name so that drawing code stays out of the run module's code fingerprint.
    plots = importlib.import_module("empirical.papers.real.plots")
    names = {"adaptive": "DP-AMBSSGD (L = 40)", "adaptive_L6": "DP-AMBSSGD (L = 6)",
             "fixed": "fixed clip ζ = 1", "diffprivlib": "diffprivlib (pure ε-DP)"}
    excess = [(f"excess_{m}", names[m]) for m in METHODS]
    mse = [(f"testmse_{m}", names[m]) for m in METHODS] + [("testmse_ols", "least squares"),
                                                           ("testmse_zero", "predict 0")]
    return plots.plot_lines(analyses[0], root, "real.linreg.diabetes",
                            [(excess, "excess empirical risk ½‖w − ŵ‖²_Ĥ", None),
                             (mse, "test MSE / Var(y) (diffprivlib off scale)", (0.3, 1.5))],
                            xlabel="ε (δ = 1e-5; diffprivlib δ = 0)",
                            note="ε spent = ε target for every run (dp-accounting; diffprivlib: "
                                 "its accountant)")


register_summary(Summary("real.linreg.diabetes", PAPER, (LINREG.id,), _plot))
