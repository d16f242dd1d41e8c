"""Algorithm 1 (Gauss-PSGD) of Tao et al., "Second-Order Convergence in Private Stochastic
Non-Convex Optimization", Theorem 1, over any gradient oracle.

* :class:`Oracle` — the interface: estimates ĝ at the rows' points, vectorized over seed rows.
* :class:`GaussianOracle` — the oracle of §5.1 (eq. 1–4): ∇F(x) + ζ + ξ, ζ sampling noise
  (isotropic or with no component along chosen directions), ξ ~ N(0, r²I).
* :func:`gauss_psgd` — Algorithm 1 with the model-drift escape certificate ‖x_t − x̃‖ ≥ R
  (Lemma 1's escape, Q rounds of Lemma 2), returning x̃ after Q failed rounds (errata SOSP-E3).

The private oracle, Ada-DP-SPIDER (Algorithms 2, 3), is :class:`algorithms.sosp.spider.AdaDPSpider`;
its parameters come from :mod:`algorithms.sosp.plan`.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from algorithms.primitives import as_generators
from algorithms.validation import (check_finite_array, check_int, check_nonnegative,
                                   check_positive)

__all__ = ["Oracle", "GaussianOracle", "PSGDResult", "gauss_psgd"]


# =============================================================================================
# Oracles
# =============================================================================================
class Oracle(ABC):
    """A gradient oracle for :func:`gauss_psgd`, vectorized over R seed rows.

    ``query(rows, X, restart)`` returns (ĝ, ok): estimates at X (shape (len(rows), d)) for the
    given rows, and a mask of rows that could be served (False: out of data — the row stops).
    ``restart`` marks rows whose position was just reset to x̃ (stateful oracles refresh).
    """

    @abstractmethod
    def query(self, rows: np.ndarray, X: np.ndarray, restart: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]: ...


class _BlockNormals:
    """Per-row standard normals in blocks: row r's stream depends only on its generator, not on
    how many rows share the batch (a block of k draws = k single draws in order)."""

    def __init__(self, gens: Sequence[np.random.Generator], d: int, block: int = 256):
        self.gens, self.d, self.block = list(gens), d, block
        self.buf = np.empty((len(self.gens), 0, d))
        self.pos = np.zeros(len(self.gens), dtype=np.int64)

    def take(self, rows: np.ndarray) -> np.ndarray:
        need = rows[self.pos[rows] >= self.buf.shape[1]]
        if need.size:
            if self.buf.shape[1] == 0:
                self.buf = np.empty((len(self.gens), self.block, self.d))
            for i in need:
                self.buf[i] = self.gens[i].standard_normal((self.block, self.d))
                self.pos[i] = 0
        out = self.buf[rows, self.pos[rows]]
        self.pos[rows] += 1
        return out


class GaussianOracle(Oracle):
    """§5.1's oracle: ĝ = ∇F(x) + ζ + ξ with ξ ~ N(0, r²I_d) and sampling noise ζ ~ N(0, σ²/d·P)
    where P projects out the columns of ``blind`` (an orthonormal (d, k) basis; None: P = I).

    With ``blind`` = v_min the sampling noise has no component along the escape direction (the
    false-certificate construction of the escape experiments).  ``gradient(X)`` returns ∇F at the
    rows of X; with ``rowwise=True`` it is called as ``gradient(X, rows)`` (rows: the seed-row
    indices of X), for batches whose rows have different landscapes.  ζ and ξ come from separate
    per-row streams (spawned from the row's generator), so switching r on or off leaves ζ
    unchanged.
    """

    def __init__(self, gradient: Callable[..., np.ndarray], d: int, *, sigma: float,
                 r: float, rng: np.random.Generator | Sequence[np.random.Generator],
                 blind: np.ndarray | None = None, rowwise: bool = False):
        self.gradient = gradient
        self.rowwise = bool(rowwise)
        self.d = check_int("d", d)
        self.sigma = check_nonnegative("sigma", sigma)
        self.r = check_nonnegative("r", r)
        gens = as_generators(rng)
        kids = [g.spawn(2) for g in gens]
        self._zeta = _BlockNormals([k[0] for k in kids], self.d)
        self._xi = _BlockNormals([k[1] for k in kids], self.d)
        if blind is not None:
            B = check_finite_array("blind", blind, ndim=2)
            if B.shape[0] != self.d:
                raise ValueError(f"blind must have shape ({self.d}, k), got {B.shape}")
            self.blind = B
        else:
            self.blind = None

    def query(self, rows, X, restart):
        g = np.array(self.gradient(X, rows) if self.rowwise else self.gradient(X), dtype=float)
        if self.sigma > 0:
            zeta = self._zeta.take(rows) * (self.sigma / math.sqrt(self.d))
            if self.blind is not None:
                zeta -= (zeta @ self.blind) @ self.blind.T
            g += zeta
        if self.r > 0:
            g += self.r * self._xi.take(rows)
        return g, np.ones(rows.size, dtype=bool)


# =============================================================================================
# Algorithm 1: Gauss-PSGD
# =============================================================================================
@dataclass
class PSGDResult:
    """Per seed row: output x (R, d); ``certified`` (returned x̃ after Q failed rounds),
    ``capped`` (step cap hit), ``out_of_data`` (oracle could not serve), ``steps`` (oracle
    calls), ``escapes`` (successful escape rounds), ``procedures`` (escape procedures started),
    ``first_escape_step`` (step at which the first procedure's drift reached R, −1 if none),
    ``first_procedure_escaped``."""

    x: np.ndarray
    certified: np.ndarray
    capped: np.ndarray
    out_of_data: np.ndarray
    steps: np.ndarray
    escapes: np.ndarray
    procedures: np.ndarray
    first_escape_step: np.ndarray
    first_procedure_escaped: np.ndarray
    info: dict = field(default_factory=dict)


def gauss_psgd(oracle: Oracle, x0: np.ndarray, *, chi: float, eta: float, radius: float,
               Gamma: int, Q: int, max_steps: int, rows: int | None = None,
               stop_on_first_procedure: bool = False) -> PSGDResult:
    """Algorithm 1 (Gauss-PSGD), vectorized over seed rows with masks.

    Each step queries the oracle once at x_{t−1}:
      normal mode: if ‖ĝ‖ ≤ 3χ start the escape procedure at x̃ = x_{t−1} (ĝ is discarded),
                   else x_t = x_{t−1} − ηĝ;
      escape procedure: Q rounds; each restarts from x̃ (the oracle is told, so a stateful one
                   refreshes) and takes up to Γ steps x_t = x_{t−1} − ηĝ; as soon as
                   ‖x_t − x̃‖ ≥ R the procedure ends (escape) and normal descent continues
                   from x_t; if all Q rounds stay within R, return x̃ (the certificate).
    Line 27 prints ``return x_{t−1}``; the text's x̃ is returned (errata SOSP-E3).  Rows stop at
    ``max_steps`` oracle calls (``capped``, output x_{t−1}) or when the oracle is out of data.
    ``stop_on_first_procedure`` ends a row as soon as its first escape procedure ends (escape
    experiments).  ``x0``: (d,) or (R, d); ``rows`` the number R of rows if x0 is (d,).
    """
    chi, eta = check_positive("chi", chi), check_positive("eta", eta)
    radius = check_positive("radius", radius)
    Gamma, Q = check_int("Gamma", Gamma), check_int("Q", Q)
    max_steps = check_int("max_steps", max_steps)
    x0 = check_finite_array("x0", x0, ndim=(1, 2))
    if x0.ndim == 1:
        X = np.tile(x0, (check_int("rows", rows if rows is not None else 1), 1))
    else:
        X = x0.copy()
    st = _RowState.start(X)
    thr = 3.0 * chi
    while st.alive.any():
        served = _query(st, oracle, max_steps)
        if served is None:
            break
        rows_, g = served
        esc = st.in_esc[rows_]          # the mode each row was in when it queried
        if (~esc).any():
            _normal_step(st, rows_[~esc], g[~esc], thr, eta)
        if esc.any():
            _escape_step(st, rows_[esc], g[esc], eta, radius, Gamma, Q, stop_on_first_procedure)
    return PSGDResult(x=st.out, certified=st.certified, capped=st.capped,
                      out_of_data=st.no_data, steps=st.steps, escapes=st.escapes,
                      procedures=st.procedures, first_escape_step=st.first_escape,
                      first_procedure_escaped=st.first_escaped,
                      info={"chi": chi, "eta": eta, "radius": radius, "Gamma": Gamma, "Q": Q,
                            "max_steps": max_steps, "d": X.shape[1]})


@dataclass
class _RowState:
    """Algorithm 1's per-row state (arrays over R seed rows): position X, output, x̃, the
    mode flags, the round counter q and step-in-round τ, and the counters of :class:`PSGDResult`."""

    X: np.ndarray
    out: np.ndarray
    x_tilde: np.ndarray
    alive: np.ndarray
    certified: np.ndarray
    capped: np.ndarray
    no_data: np.ndarray
    in_esc: np.ndarray
    restart: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    steps: np.ndarray
    escapes: np.ndarray
    procedures: np.ndarray
    first_escape: np.ndarray
    first_done: np.ndarray
    first_escaped: np.ndarray

    @classmethod
    def start(cls, X: np.ndarray) -> "_RowState":
        R = X.shape[0]
        flags = {k: np.zeros(R, dtype=bool) for k in ("certified", "capped", "no_data", "in_esc",
                                                       "restart", "first_done", "first_escaped")}
        counts = {k: np.zeros(R, dtype=np.int64) for k in ("q", "tau", "steps", "escapes",
                                                            "procedures")}
        return cls(X=X, out=X.copy(), x_tilde=X.copy(), alive=np.ones(R, dtype=bool),
                   first_escape=np.full(R, -1, dtype=np.int64), **flags, **counts)


def _query(st: _RowState, oracle: Oracle, max_steps: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Stop rows at the step cap, query the oracle for the others at x_{t−1} and stop those it
    cannot serve; returns the served rows and their estimates (None when no row is left)."""
    hit = st.alive & (st.steps >= max_steps)
    if hit.any():
        st.capped[hit] = True
        st.out[hit] = st.X[hit]
        st.alive &= ~hit
    rows_ = np.flatnonzero(st.alive)
    if rows_.size == 0:
        return None
    g, ok = oracle.query(rows_, st.X[rows_], st.restart[rows_])
    st.restart[rows_] = False
    if not ok.all():
        bad = rows_[~ok]
        st.no_data[bad] = True
        st.out[bad] = st.X[bad]
        st.alive[bad] = False
        g, rows_ = g[ok], rows_[ok]
    st.steps[rows_] += 1
    return rows_, g


def _normal_step(st: _RowState, rn: np.ndarray, gn: np.ndarray, thr: float, eta: float) -> None:
    """Normal mode: ‖ĝ‖ ≤ 3χ starts the escape procedure at x̃ = x_{t−1} (ĝ discarded, round 1
    starts with a restart), else x_t = x_{t−1} − ηĝ."""
    small = np.einsum("ij,ij->i", gn, gn) <= thr * thr
    start = rn[small]
    if start.size:
        st.in_esc[start] = True
        st.x_tilde[start] = st.X[start]
        st.q[start] = 1
        st.tau[start] = 0
        st.restart[start] = True
        st.procedures[start] += 1
    mv = rn[~small]
    st.X[mv] -= eta * gn[~small]


def _escape_step(st: _RowState, re: np.ndarray, ge: np.ndarray, eta: float, radius: float,
                 Gamma: int, Q: int, stop_on_first_procedure: bool) -> None:
    """Escape procedure: x_t = x_{t−1} − ηĝ; ‖x_t − x̃‖ ≥ R ends the procedure (escape);
    after Γ steps within R the round fails: the next round restarts from x̃, and after Q failed
    rounds the row returns x̃ (the certificate)."""
    st.X[re] -= eta * ge
    st.tau[re] += 1
    diff = st.X[re] - st.x_tilde[re]
    far = np.einsum("ij,ij->i", diff, diff) >= radius * radius
    gone = re[far]
    if gone.size:
        st.in_esc[gone] = False
        st.escapes[gone] += 1
        first = gone[~st.first_done[gone]]
        st.first_escape[first] = st.steps[first]
        st.first_escaped[first] = True
        st.first_done[first] = True
        if stop_on_first_procedure:
            st.out[gone] = st.X[gone]
            st.alive[gone] = False
    stay = re[~far]
    over = stay[st.tau[stay] >= Gamma]
    if over.size:
        st.q[over] += 1
        fail = over[st.q[over] > Q]
        if fail.size:
            st.certified[fail] = True
            st.out[fail] = st.x_tilde[fail]
            st.alive[fail] = False
            st.first_done[fail] = True
        again = over[st.q[over] <= Q]
        st.X[again] = st.x_tilde[again]
        st.tau[again] = 0
        st.restart[again] = True
