"""Real data, in miniature: the shared core of the pseudo-paper ``real``.

The papers' empirical claims, reproduced at CPU scale on data sets scikit-learn ships inside its
package (nothing is downloaded at run time):

* KAN paper, Figure 1 (from Kalinin et al.): accuracy of DP-SGD
  with λ-correlated noise against λ, one curve per ε (:mod:`empirical.papers.real.kan`);
* linear-regression paper: DP-AMBSSGD against the fixed-clip
  baseline, diffprivlib and least squares on ``diabetes`` (:mod:`empirical.papers.real.linreg`);
* KL paper, Theorem 4: adaptive noisy GD on realizable p-th-power
  regression over real features, against n by subsampling (:mod:`empirical.papers.real.kl`);
* SOSP and user-level papers (:mod:`empirical.papers.real.sosp`, :mod:`empirical.papers.real.userlevel`).

This module holds what they share: deterministic loaders, scaling into the unit ball,
train/test splits, subsamples and user assignments, all seeded through ``SeedSequence`` from a
string key, so the same call gives the same rows on every machine and every executor.

Preprocessing is treated as public, as in the papers' experiments: the standardisation uses the
training split's mean and standard deviation (not privatised); every row is then projected onto
the unit ball, a per-record map that needs no data-dependent constant.

Importing this module registers every real-data experiment; it needs scikit-learn
(``pip install -e ".[real]"``) and says so in one line when it is missing.
"""
from __future__ import annotations

import hashlib
import importlib
from functools import lru_cache

import numpy as np

try:
    import sklearn.datasets as _skd
except ImportError:  # pragma: no cover - exercised by a subprocess test
    from bounds.core import OptionalExtraMissing

    raise OptionalExtraMissing("the real-data experiments (paper 'real') need scikit-learn: "
                      "pip install -e \".[real]\"") from None

__all__ = ["DATASETS", "PAPER", "load", "key_seed", "split", "standardize_unit_ball",
           "subsample", "assign_users", "prepared"]

#: Pseudo-paper key of every real-data experiment (ids ``real.*``).
PAPER = "real"
#: Data sets bundled with scikit-learn: name -> (loader, task).
DATASETS = {"breast_cancer": (_skd.load_breast_cancer, "binary"),
            "digits": (_skd.load_digits, "multiclass"),
            "diabetes": (_skd.load_diabetes, "regression"),
            "wine": (_skd.load_wine, "multiclass")}


def _check_dataset(name: str) -> str:
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    return name


@lru_cache(maxsize=None)
def _load_cached(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = DATASETS[name][0](return_X_y=True)
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, d) and targets (n,) of a bundled data set, as read-only float arrays."""
    return _load_cached(_check_dataset(name))


def key_seed(key: str, seed: int = 0) -> np.random.Generator:
    """A generator from ``SeedSequence([h(key), seed])``: the same key, the same draws."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty string, got {key!r}")
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be an integer in [0, inf), got {seed!r}")
    h = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([h, int(seed)])))


def split(n: int, test_fraction: float, key: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices of a deterministic random split of range(n)."""
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n must be an integer in [2, inf), got {n!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    perm = key_seed(key, seed).permutation(n)
    n_test = min(n - 1, max(1, int(round(test_fraction * n))))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def subsample(n_total: int, n: int, key: str, seed: int = 0) -> np.ndarray:
    """n indices of range(n_total) without replacement, deterministic in (key, seed)."""
    if not (isinstance(n, (int, np.integer)) and 1 <= n <= n_total):
        raise ValueError(f"n must be an integer in [1, {n_total}], got {n!r}")
    return np.sort(key_seed(key, seed).permutation(n_total)[:n])


def assign_users(n_rows: int, n_users: int, m_items: int, key: str, seed: int = 0) -> np.ndarray:
    """Row indices of n_users users with m_items rows each, shape (n_users, m_items): a
    deterministic random assignment without replacement (rows left over belong to nobody)."""
    for name, v in (("n_users", n_users), ("m_items", m_items)):
        if not (isinstance(v, (int, np.integer)) and v >= 1):
            raise ValueError(f"{name} must be an integer in [1, inf), got {v!r}")
    if n_users * m_items > n_rows:
        raise ValueError(f"n_users * m_items must be in [1, n_rows={n_rows}], got "
                         f"{n_users} * {m_items} = {n_users * m_items}")
    perm = key_seed(key, seed).permutation(n_rows)
    return perm[: n_users * m_items].reshape(n_users, m_items)


def standardize_unit_ball(X_train: np.ndarray, X_test: np.ndarray | None = None,
                          radius_scale: float | None = None
                          ) -> tuple[np.ndarray, np.ndarray | None]:
    """Standardise with the training split's mean and std, divide by ``radius_scale`` (default
    √d, so an average row has norm ≈ 1), then project every row onto the unit ball.

    √d rather than the largest row norm: one outlier row would otherwise shrink every other
    row (breast_cancer's largest standardised norm is ≈ 4√d).
    """
    X_train = np.asarray(X_train, dtype=float)
    if X_train.ndim != 2 or X_train.shape[0] < 2:
        raise ValueError(f"X_train must be a 2-d array with at least 2 rows, got {X_train.shape}")
    mu = X_train.mean(axis=0)
    sd = X_train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)     # constant columns (digits' border pixels) stay 0
    s = float(np.sqrt(X_train.shape[1])) if radius_scale is None else float(radius_scale)
    if not s > 0:
        raise ValueError(f"radius_scale must be in (0, inf), got {radius_scale!r}")

    def scale(X: np.ndarray) -> np.ndarray:
        Z = (np.asarray(X, dtype=float) - mu) / sd / s
        return Z / np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]

    return scale(X_train), None if X_test is None else scale(X_test)


@lru_cache(maxsize=32)
def prepared(name: str, test_fraction: float, key: str
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, y_train, X_test, y_test) of a data set: deterministic split, rows in the unit
    ball (see :func:`standardize_unit_ball`); targets as loaded."""
    X, y = load(name)
    tr, te = split(len(y), test_fraction, key)
    Xtr, Xte = standardize_unit_ball(X[tr], X[te])
    out = (Xtr, y[tr].copy(), Xte, y[te].copy())
    for a in out:
        a.setflags(write=False)
    return out


def _import_parts() -> None:
    # Each part registers its experiments on import.  real2's parts may not exist yet: only a
    # missing *module of that name* is skipped; any other error (a bug inside it) propagates.
    for part in ("kan", "linreg", "kl", "sosp", "userlevel"):
        name = f"empirical.papers.real.{part}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


_import_parts()
