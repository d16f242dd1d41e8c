"""Measured noise of every private release, against the noise its privacy accounting assumed.

Every private algorithm of the five papers (KL Algorithms 1-4, KAN's correlated-noise SGD, the
linreg paper's DP-STAT and DP-SSGD, SOSP's Ada-DP-SPIDER and Algorithm 4, user-level
Algorithms 1 and 3 with AboveThreshold) is priced by dp-accounting at the noise scale it
states.  A release whose noise was dropped, halved or drawn at another channel's scale is then
priced at the wrong σ while the rows still report the budget as met.  This module measures the
noise actually added: at each release, through the algorithm's ``observe`` hook, the noise-free
value on the same draws (``clean``) is subtracted from the release, and

* Gaussian channel (claimed std σ per coordinate): S = Σ (e/σ)², which is exactly χ²_k, i.e.
  Gamma(k/2, scale 2), over k independent coordinates when the claim is true;
* Laplace channel (claimed scale b): S = Σ |e|/b, exactly Gamma(k, 1) when the claim is true.

The stored rows carry, per channel ``<ch>``, ``noise_gauss_<ch>`` or ``noise_laplace_<ch>``
(S per seed row), ``noise_count_<ch>`` (k per seed row) and ``noise_sides_<ch>`` (2: both tails
are a bug; 1: only too little noise is); :func:`empirical.core.checks.check_noise` judges them.

The claimed scale passed to :meth:`NoiseMeter.add` is the one the privacy columns were computed
from: where the experiment can recompute it from the accountant's multiplier and the theorem's
sensitivity it does (so a draw at another channel's σ is caught even when the algorithm's own
report of σ follows the bug); where the scale is data dependent (Spider's σ_k, O₂'s σ₂ of the
step taken) the algorithm's value is used and its formula is checked by the settings verdict.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["NoiseMeter", "GAUSS", "LAPLACE", "FAMILIES", "observer", "release_hook",
           "user_level_hook", "correlated_hook", "RELEASE_CAP",
           "COORDINATE_CAP"]

GAUSS, LAPLACE = "gauss", "laplace"
FAMILIES = (GAUSS, LAPLACE)


class NoiseMeter:
    """Accumulates, per channel and seed row, the statistic S and the coordinate count k.

    ``measures_noise`` tells an algorithm's observe hook that this observer wants the noise-free
    value of each release (passed as ``clean=``); observers without it (the audits') are called
    as before."""

    measures_noise = True

    def __init__(self, rows: int):
        if int(rows) != rows or rows < 1:
            raise ValueError(f"rows must be an integer in [1, inf), got {rows!r}")
        self.rows = int(rows)
        self._stat: dict[str, np.ndarray] = {}
        self._count: dict[str, np.ndarray] = {}
        self._family: dict[str, str] = {}
        self._sides: dict[str, int] = {}

    def channel(self, name: str, family: str = GAUSS, sides: int = 2) -> None:
        """Declare a channel (also done by the first :meth:`add`): it is stored with count 0
        when the run made no such release."""
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
        if sides not in (1, 2):
            raise ValueError(f"sides must be 1 or 2, got {sides!r}")
        if not name or not name.replace("_", "").isalnum():
            raise ValueError(f"channel name must be alphanumeric with underscores, got {name!r}")
        if name in self._family:
            if (self._family[name], self._sides[name]) != (family, sides):
                raise ValueError(f"channel {name!r} was declared as {self._family[name]}, "
                                 f"{self._sides[name]}-sided")
            return
        self._family[name], self._sides[name] = family, sides
        self._stat[name] = np.zeros(self.rows)
        self._count[name] = np.zeros(self.rows)

    def add(self, name: str, rows, noise, scale, *, family: str = GAUSS,
            sides: int = 2) -> None:
        """Add releases of channel ``name``: ``noise`` (release − clean) with leading axis
        aligned with ``rows`` (an int: one row; rows listed once each), ``scale`` the claimed σ
        (Gaussian) or b (Laplace), a scalar, one per row, or broadcastable to ``noise``.
        Coordinates whose claimed scale is 0 (nothing was to be added) are left out of S and k."""
        if name not in self._family:
            self.channel(name, family, sides)
        elif self._family[name] != family or self._sides[name] != sides:
            self.channel(name, family, sides)      # raises: declared otherwise
        r = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        e = np.asarray(noise, dtype=float).reshape(r.size, -1)
        s = np.asarray(scale, dtype=float)
        if s.ndim > 0 and s.shape[0] != r.size:
            raise ValueError(f"scale must be a scalar or have one entry per row ({r.size}), "
                             f"got shape {s.shape}")
        if s.size <= 1 or s.size == r.size:
            # one scale per row (the common case): one pass over the noise
            sr = np.broadcast_to(s.reshape(-1), (r.size,))
            raw = np.einsum("ij,ij->i", e, e) if family == GAUSS else np.abs(e).sum(axis=1)
            live = sr > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                stat = np.where(live, raw / np.where(live, sr, 1.0) ** (2 if family == GAUSS else 1),
                                0.0)
            count = np.where(live, float(e.shape[1]), 0.0)
        else:
            s = np.broadcast_to(s.reshape(r.size, -1), e.shape)
            live = s > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                u = np.where(live, e / np.where(live, s, 1.0), 0.0)
            stat = np.sum(u * u, axis=1) if family == GAUSS else np.sum(np.abs(u), axis=1)
            count = np.count_nonzero(live, axis=1).astype(float)
        self._stat[name][r] += stat
        self._count[name][r] += count

    def claim(self, name: str, scale: float) -> None:
        """Divide channel ``name``'s statistic, accumulated with scale 1, by the claimed scale
        known only after the run (the accountant's multiplier times a sensitivity)."""
        if not scale > 0:
            raise ValueError(f"scale must be in (0, inf), got {scale!r}")
        self._stat[name] /= scale * scale if self._family[name] == GAUSS else scale

    def columns(self) -> dict[str, np.ndarray]:
        """The row columns (see the module docstring)."""
        out = {}
        for ch, fam in self._family.items():
            out[f"noise_{fam}_{ch}"] = self._stat[ch].copy()
            out[f"noise_count_{ch}"] = self._count[ch].copy()
            out[f"noise_sides_{ch}"] = np.full(self.rows, float(self._sides[ch]))
        return out


def observer(meter: NoiseMeter, handle: Callable) -> Callable:
    """An observe hook marked as wanting ``clean=``: ``handle(*args, clean=...)`` records into
    ``meter`` (the algorithm-specific part: which channel, which claimed scale)."""

    def hook(*args, clean=None, **kw):
        if clean is not None:
            handle(*args, clean=clean, **kw)

    hook.measures_noise = True
    hook.meter = meter
    return hook


#: Releases measured per channel and run by :func:`release_hook` (KL Algorithm 1 makes up to
#: ≈ 3·10⁴ full-gradient releases per run at d = 1; past this many calls each further release
#: costs only a returning call).  A noise that is wrong in every release of its kind (the
#: classes checked here) shows in the first ones; a slip confined to late releases would not.
RELEASE_CAP = 2000
#: Coordinates measured per channel and run: 10⁶ put the acceptance interval at ±0.7%.
COORDINATE_CAP = 10**6


def release_hook(meter: NoiseMeter, channels: tuple[str, ...] = (),
                 scale: Callable | None = None, cap: int = RELEASE_CAP) -> Callable:
    """The observe hook of algorithms whose releases are ``observe(kind, rows, released, sigma)``
    (KL Algorithms 1, 3, 4): the channel is the release's kind, the noise release − clean, the
    claimed scale ``sigma`` (or ``scale(kind, sigma)`` when the experiment recomputes it), the
    first ``cap`` calls of each kind.  ``channels`` are declared up front, so a run with no such
    release stores count 0."""
    for ch in channels:
        meter.channel(ch)
    calls: dict[str, list] = {}
    full: set = set()

    def handle(kind, rows, released, sigma, *, clean):
        c = calls.setdefault(kind, [0, 0])
        if c[0] >= cap or c[1] >= COORDINATE_CAP:
            full.add(kind)
            if channels and full >= set(channels):
                hook.listening = False        # every declared channel measured: stop calling
            return
        c[0] += 1
        c[1] += released.size
        s = sigma if scale is None else scale(kind, sigma)
        meter.add(kind, rows, released - clean, s)

    hook = observer(meter, handle)
    hook.listening = True
    return hook


def user_level_hook(meter: NoiseMeter, row: int, gaussian: tuple[str, ...],
                    laplace: dict[str, float], cap: int = 500) -> Callable:
    """The observe hook of the user-level algorithms (``observe(kind, released, scale, info)``,
    one seed row per run): the kinds in ``gaussian`` are measured against the scale the
    algorithm states (its σ_i = z·Δ_i, z the accountant's), the kinds in ``laplace`` against the
    scale given here (the paper's, recomputed by the experiment: AboveThreshold's 8/ε and 16/ε,
    Algorithm 1's score 20/ε).  The first ``cap`` releases of each kind per run (AboveThreshold's
    query noise: ≥ 10³ Laplace draws over a point's seeds, interval ≈ ±15%: a factor 2 shows)."""
    for k in gaussian:
        meter.channel(k)
    for k in laplace:
        meter.channel(k, LAPLACE)
    calls: dict[str, int] = {}

    def handle(kind, released, scale, info, *, clean):
        c = calls.get(kind, 0)
        if c >= cap:
            return
        calls[kind] = c + 1
        e = np.atleast_1d(np.asarray(released, dtype=float) - np.asarray(clean, dtype=float))
        if kind in laplace:
            meter.add(kind, row, e[None], laplace[kind], family=LAPLACE)
        elif kind in gaussian:
            meter.add(kind, row, e[None], scale)

    return observer(meter, handle)


def correlated_hook(meter: NoiseMeter, lam: np.ndarray, rows_per_seed: int = 1,
                    measured: int | None = None, steps_cap: int = 64) -> Callable:
    """The observe hook of KAN's Algorithm 1 (``observe(t, released, noise_std)``, all rows at
    once): the noise e_t = (C_clip/B)κ(Z_t − λZ_{t−1}) of each release is decorrelated by
    u_t = e_t + λu_{t−1} = (C_clip/B)κ Z_t, the fresh Gaussian the accountant prices, and Σu²
    is accumulated with scale 1 (the experiment divides by its claimed (C_clip κ/B)² through
    :meth:`NoiseMeter.claim`).  A λ slipped in the noise leaves u correlated and its variance
    off.  Rows of one seed share Z, so only row ``measured`` of each seed's ``rows_per_seed``
    (default the last) is counted: meter row = seed.  Only releases t ≤ ``steps_cap`` are
    measured (m·d·p ≥ 10³ coordinates each: ≥ 6·10⁴ per seed; the verify budget)."""
    lam = np.asarray(lam, dtype=float)
    k = int(rows_per_seed)
    j = k - 1 if measured is None else int(measured)
    meter.channel("correlated")
    state = {"u": None}

    def handle(t, released, noise_std, *, clean):
        if t > steps_cap:        # the first steps_cap releases (u_t needs every earlier one)
            return
        e = (np.asarray(released) - np.asarray(clean))[j::k]
        u = e if state["u"] is None else e + lam[j::k].reshape((-1,) + (1,) * (e.ndim - 1)) * state["u"]
        state["u"] = u
        live = np.asarray(noise_std, dtype=float)[j::k] > 0
        if live.any():
            meter.add("correlated", np.flatnonzero(live), u[live], 1.0)

    return observer(meter, handle)
