"""Algorithm 2 (Ada-DP-SPIDER, Theorem 2) and Algorithm 3 (distributed Ada-DP-SPIDER, Theorem 3)
of Tao et al., "Second-Order Convergence in Private Stochastic Non-Convex Optimization", as a
stateful gradient oracle for
:func:`algorithms.sosp.psgd.gauss_psgd`.  m is the number of clients.

* :class:`ClientData` — fresh records of m clients (§4's sampling model), vectorized over seed
  rows.
* :class:`AdaDPSpider` — O₁ (fresh b1-batch gradient) when the drift reaches κ or after a
  restart (errata SOSP-E4), else O₂ (the SPIDER correction over a b2-batch); with m > 1 each
  client privatizes its own batch (its own noise std: :func:`algorithms.sosp.privacy.client_noise_std`,
  errata SOSP-E1), the server averages, the drift switch is shared.  The estimation noise this
  produces is Lemma 7's (Lemma 9's); the parameters are :func:`algorithms.sosp.plan.spider_plan`'s
  and the privacy argument is in :mod:`algorithms.sosp.privacy` (SOSP-E2).

Algorithm 3 is the same class at m > 1: the per-client batch, noise and correction are
Algorithm 2's with a client axis, so a separate class would only repeat it.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence as _SequenceABC
from typing import Callable, Sequence

import numpy as np

from algorithms import accounting
from algorithms.primitives import as_generators
from algorithms.sosp.plan import SpiderPlan
from algorithms.sosp.privacy import _spider_noise, client_noise_std, o2_sensitivity
from algorithms.sosp.psgd import Oracle, PSGDResult, gauss_psgd

__all__ = ["ClientData", "AdaDPSpider", "spider_psgd"]


class ClientData(ABC):
    """Fresh records of m clients, vectorized over seed rows (the sampling model of §4: client j's
    records are i.i.d. from its own 𝒟_j; each is used at most once).

    ``batch_gradient(gen, x, b)`` — for one row: client-wise mean gradients ∇f̂_{B_j}(x) over b
    fresh records per client, shape (m, d).
    ``batch_difference(gen, x, x_prev, b)`` — client-wise ∇f̂_{B_j}(x) − ∇f̂_{B_j}(x_prev), (m, d).
    ``G_sens``/``M_sens``: ‖∇f(x;z) − ∇f(x;z')‖ ≤ 2G_s and
    ‖(∇f(x;z) − ∇f(y;z)) − (∇f(x;z') − ∇f(y;z'))‖ ≤ 2M_s‖x − y‖ for records of one client.
    """

    d: int
    m: int
    G_sens: float
    M_sens: float

    @abstractmethod
    def batch_gradient(self, gen: np.random.Generator, x: np.ndarray, b: int) -> np.ndarray: ...

    @abstractmethod
    def batch_difference(self, gen: np.random.Generator, x: np.ndarray, x_prev: np.ndarray,
                         b: int) -> np.ndarray: ...

    # Several rows at once, (k, m, d), row i from gens[i] only; ``rows`` are the oracle's seed
    # rows (for data whose landscape differs by row; the defaults ignore them).  The defaults
    # call the one-row methods in turn; a subclass may override them with a kernel that draws
    # the same numbers and computes them together (CosineSaddle does: the per-row numpy calls
    # dominated the run).
    def batch_gradients(self, gens: Sequence[np.random.Generator], X: np.ndarray, b: int,
                        rows: np.ndarray | None = None) -> np.ndarray:
        """Rows' ``batch_gradient`` stacked: (len(gens), m, d)."""
        if not len(gens):
            return np.zeros((0, self.m, self.d))
        return np.stack([self.batch_gradient(g, x, b) for g, x in zip(gens, X)])

    def batch_differences(self, gens: Sequence[np.random.Generator], X: np.ndarray,
                          X_prev: np.ndarray, b: int, rows: np.ndarray | None = None
                          ) -> np.ndarray:
        """Rows' ``batch_difference`` stacked: (len(gens), m, d)."""
        if not len(gens):
            return np.zeros((0, self.m, self.d))
        return np.stack([self.batch_difference(g, x, y, b) for g, x, y in zip(gens, X, X_prev)])


def _o2_estimate(data: ClientData, gens: Sequence[np.random.Generator], X: np.ndarray,
                 X_prev: np.ndarray, G_prev: np.ndarray, b2: int, rows: np.ndarray
                 ) -> np.ndarray:
    """O₂'s noiseless estimates per row and client, (k, m, d) for k rows: the SPIDER recursion
    ĝ_{j,t−1} + ∇f̂_{B_j}(x_{t−1}) − ∇f̂_{B_j}(x_{t−2}) (the correction whose sensitivity scales
    with the step)."""
    return G_prev + data.batch_differences(gens, X, X_prev, b2, rows)


class _SpawnedStreams:
    """Row r's child generator ``gen_r.spawn(2)[which]`` (records: 0, noise: 1), built on first
    use: the children's seeds are spawned up front (so each row's numbers are those of
    ``spawn(2)``), a Generator is made only for rows that draw — data that draws nothing (the
    audits' fixed records) costs no generator (making one is most of a 10⁴-row audit's time)."""

    def __init__(self, gens: Sequence[np.random.Generator],
                 sibling: "_SpawnedStreams | None" = None):
        if sibling is None:
            self._seeds = [g.bit_generator.seed_seq.spawn(2) for g in gens]
            self._kinds = [type(g.bit_generator) for g in gens]
            which = 0
        else:
            self._seeds, self._kinds, which = sibling._seeds, sibling._kinds, 1
        self._which = which
        self._gens: list[np.random.Generator | None] = [None] * len(gens)

    def __getitem__(self, r: int) -> np.random.Generator:
        g = self._gens[r]
        if g is None:
            g = self._gens[r] = np.random.Generator(self._kinds[r](self._seeds[r][self._which]))
        return g

    def view(self, rows: np.ndarray) -> "_StreamView":
        return _StreamView(self, rows)


class _StreamView(_SequenceABC):
    """The generators of some rows, made when read (see :class:`_SpawnedStreams`)."""

    def __init__(self, streams: _SpawnedStreams, rows: np.ndarray):
        self._streams, self._rows = streams, rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._streams[int(r)] for r in self._rows[i]]
        return self._streams[int(self._rows[i])]


class AdaDPSpider(Oracle):
    """Algorithm 2 (m = 1) / Algorithm 3 (m > 1): Ada-DP-SPIDER as a stateful oracle.

    Per seed row, with drift ← κ initially (forces O₁):
      if drift ≥ κ (or the row was restarted to x̃, errata SOSP-E4):
          every client j: ĝ_j = ∇f̂_{B_j}(x_{t−1}) + N(0, σ₁²I), |B_j| = b1, σ₁ = z·2G_s/b1;
          drift ← 0
      else:
          every client j: ĝ_j = ĝ_{j,t−1} + ∇f̂_{B_j}(x_{t−1}) − ∇f̂_{B_j}(x_{t−2}) + N(0, σ₂²I),
          |B_j| = b2, σ₂ = z·2M_s‖x_{t−1} − x_{t−2}‖/b2
      server: ĝ = (1/m)Σ_j ĝ_j;  drift ← drift + η²‖ĝ‖²  (shared by all clients).
    Each client's batch is fresh (its records are used once); a row stops (``ok`` False) when a
    client would need more than n records.  Diagnostics per row: samples used per client, O₁ and
    O₂ counts, the ‖ĝ_t − ∇F(x_{t−1})‖ of every query when ``true_gradient`` is given, and the
    injected noise (``noise_sq``: Σ‖noise‖², ``noise_var``: Σσ²·m·d, ``noise_var4``: Σσ⁴·m·d,
    per query type).
    ``observe(kind, row, answer, sigma, x, x_prev)``, if given, is called at every query with
    kind ``"o1"``/``"o2"``, the seed row, each client's release (m, d) (O₁: noisy batch gradient;
    O₂: noisy increment), the per-client noise std and the public points x_{t−1}, x_{t−2}
    (privacy audits, :mod:`empirical.papers.sosp.audit`).  An observer with a true attribute
    ``measures_noise`` is called once per query for all its rows (row, answer, sigma, x and
    x_prev stacked along a leading axis) with ``clean=`` the releases' noise-free values
    (:mod:`algorithms.noise_meter`).
    """

    def __init__(self, data: ClientData, plan: SpiderPlan,
                 rng: np.random.Generator | Sequence[np.random.Generator],
                 true_gradient: Callable[[np.ndarray], np.ndarray] | None = None,
                 observe: Callable | None = None):
        if data.d != plan.d or data.m != plan.m:
            raise ValueError(f"data has (d, m) = ({data.d}, {data.m}) but the plan has "
                             f"({plan.d}, {plan.m})")
        if data.G_sens > plan.G_sens or data.M_sens > plan.M_sens:
            raise ValueError("the plan's sensitivities G_sens, M_sens must bound the data's")
        self.data, self.plan = data, plan
        gens = as_generators(rng)
        self._data_gens = _SpawnedStreams(gens)                  # records
        self._noise_gens = _SpawnedStreams(gens, self._data_gens)    # DP noise
        R, d, m = len(gens), plan.d, plan.m
        self.rows = R
        self.true_gradient = true_gradient
        self.g_clients = np.zeros((R, m, d))
        self.x_prev = np.zeros((R, d))
        self.drift = np.full(R, np.inf)
        self.samples = np.zeros(R, dtype=np.int64)        # per client
        self.n_o1 = np.zeros(R, dtype=np.int64)
        self.n_o2 = np.zeros(R, dtype=np.int64)
        self.err_sq_sum = np.zeros(R)
        self.err_max = np.zeros(R)
        self.n_queries = np.zeros(R, dtype=np.int64)
        self.o2_sigma_max = np.zeros(R)
        # injected noise, measured: Σ‖added noise‖² and Σ σ²·(m·d) of what the oracle meant to
        # add, per query type (the stored rows compare them: a draw scaled wrongly shows)
        self.noise_sq = {"o1": np.zeros(R), "o2": np.zeros(R)}
        self.noise_var = {"o1": np.zeros(R), "o2": np.zeros(R)}
        self.noise_var4 = {"o1": np.zeros(R), "o2": np.zeros(R)}   # Σσ⁴·m·d (standard errors)
        self.observe = observe

    def query(self, rows, X, restart):
        # All rows of one query type are served together: records and noise are still drawn
        # row by row from each row's own generators (in the order a one-row loop would draw
        # them), the arithmetic is done on the stacked rows.
        p = self.plan
        refresh = restart | (self.drift[rows] >= p.kappa)
        need = np.where(refresh, p.b1, p.b2)
        ok = self.samples[rows] + need <= p.n
        out = np.zeros((rows.size, p.d))
        for kind, sel in (("o1", np.flatnonzero(ok & refresh)),
                          ("o2", np.flatnonzero(ok & ~refresh))):
            if sel.size:
                out[sel] = self._serve(kind, rows[sel], X[sel])
        served = rows[ok]
        if served.size:
            self.drift[served] += p.eta**2 * np.einsum("ij,ij->i", out[ok], out[ok])
            self.n_queries[served] += 1
            if self.true_gradient is not None:
                err = np.linalg.norm(out[ok] - self.true_gradient(X[ok]), axis=1)
                self.err_sq_sum[served] += err**2
                self.err_max[served] = np.maximum(self.err_max[served], err)
        return out, ok

    def _serve(self, kind: str, rows: np.ndarray, X: np.ndarray) -> np.ndarray:
        """One O₁ or O₂ answer for each of ``rows`` (all of one kind) at X: records, noise and
        the bookkeeping; returns the server's averages (len(rows), d)."""
        p = self.plan
        k = rows.size
        gd = self._data_gens.view(rows)
        if kind == "o1":
            sigma = np.full(k, client_noise_std(p.sigma1, p.m))
            clean = self.data.batch_gradients(gd, X, p.b1, rows)
            batch = p.b1
        else:
            diff = X - self.x_prev[rows]
            # ‖x_{t−1} − x_{t−2}‖ as one-row code computes it (np.linalg.norm of a vector is
            # √(x·x) by BLAS dot; a row-wise reduction could differ in the last bit)
            step = np.array([math.sqrt(v.dot(v)) for v in diff])
            sigma = client_noise_std(p.z * o2_sensitivity(p.M_sens, step, p.b2), p.m)
            sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (k,))
            clean = _o2_estimate(self.data, gd, X, self.x_prev[rows], self.g_clients[rows], p.b2,
                                 rows)
            batch = p.b2
        noise = np.zeros((k, p.m, p.d))
        for i in np.flatnonzero(sigma > 0):     # σ₂ = 0 (no step) draws nothing
            noise[i] = sigma[i] * _spider_noise(self._noise_gens[rows[i]], (p.m, p.d))
        gj = clean + noise
        self._account(kind, rows, noise, sigma, batch)
        if self.observe is not None:
            # what each client releases for this query: O₁ its noisy batch gradient, O₂ its
            # noisy increment ĝ_{j,t} − ĝ_{j,t−1}; x = x_{t−1}, x_prev = x_{t−2} (public)
            answer = gj if kind == "o1" else gj - self.g_clients[rows]
            if getattr(self.observe, "measures_noise", False):
                # a noise-measuring observer sees the query's rows at once, with each
                # release's noise-free value (the same increment without the noise)
                self.observe(kind, rows, answer, sigma, X, self.x_prev[rows],
                             clean=clean if kind == "o1" else clean - self.g_clients[rows])
            else:
                for i, r in enumerate(rows):
                    self.observe(kind, int(r), answer[i], float(sigma[i]), X[i].copy(),
                                 self.x_prev[r].copy())
        self.g_clients[rows] = gj
        self.x_prev[rows] = X
        return gj.mean(axis=1)

    def _account(self, kind: str, rows: np.ndarray, noise: np.ndarray, sigma: np.ndarray,
                 batch: int) -> None:
        """Counts, records used, the drift reset of O₁, σ₂'s maximum and the injected noise
        (Σ‖noise‖² against Σσ²·m·d) of one query of ``kind`` at ``rows``."""
        p = self.plan
        if kind == "o1":
            self.drift[rows] = 0.0
            self.n_o1[rows] += 1
        else:
            self.o2_sigma_max[rows] = np.maximum(self.o2_sigma_max[rows], sigma)
            self.n_o2[rows] += 1
        self.samples[rows] += batch
        self.noise_sq[kind][rows] += np.sum((noise * noise).reshape(rows.size, -1), axis=1)
        self.noise_var[kind][rows] += sigma * sigma * p.m * p.d
        self.noise_var4[kind][rows] += sigma**4 * p.m * p.d

    def privacy(self, row: int) -> dict:
        """ε guarantee and ε spent of row ``row`` (dp-accounting, RDP, at the plan's δ).

        Records are used at most once, so every record is in exactly one Gaussian release of
        multiplier z (or none): parallel composition makes both the guarantee and what was spent
        ε(GaussianDpEvent(z), δ) (0 spent if the row released nothing)."""
        return {k: (v[row] if isinstance(v, np.ndarray) else v)
                for k, v in self.privacy_rows().items()}

    def privacy_rows(self) -> dict:
        """:meth:`privacy` of every row at once: ``epsilon_spent`` an array over rows, the other
        entries shared (one accountant call: the guarantee is the same for every row)."""
        eps_query = accounting.epsilon(accounting.gaussian_event(self.plan.z), self.plan.delta)
        spent = np.where(self.n_queries > 0, eps_query, 0.0)
        return {"epsilon_guarantee": eps_query, "epsilon_spent": spent,
                "epsilon_target": self.plan.epsilon, "delta": self.plan.delta,
                "noise_multiplier": self.plan.z}


def spider_psgd(data: ClientData, plan: SpiderPlan,
                rng: np.random.Generator | Sequence[np.random.Generator], *,
                true_gradient: Callable[[np.ndarray], np.ndarray] | None = None,
                observe: Callable | None = None, max_steps: int | None = None,
                stop_on_first_procedure: bool = False) -> tuple[PSGDResult, AdaDPSpider]:
    """The algorithm of Theorem 2 (m = 1) / Theorem 3 (m > 1) in one call: Gauss-PSGD
    (Algorithm 1) from x₀ = 0 over the Ada-DP-SPIDER oracle (Algorithm 2/3), with χ, η, R, Γ, Q
    and the step cap from ``plan`` (``max_steps`` overrides the cap).  One seed row per
    generator of ``rng``.  Returns the run and the oracle (its privacy report and diagnostics)."""
    oracle = AdaDPSpider(data, plan, rng, true_gradient=true_gradient, observe=observe)
    res = gauss_psgd(oracle, np.zeros(plan.d), chi=plan.chi, eta=plan.eta, radius=plan.radius,
                     Gamma=plan.Gamma, Q=plan.Q,
                     max_steps=plan.max_steps if max_steps is None else max_steps,
                     rows=oracle.rows, stop_on_first_procedure=stop_on_first_procedure)
    return res, oracle
