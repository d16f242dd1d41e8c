"""Data, model plumbing and run functions of :mod:`empirical.papers.real.sosp` (the SOSP paper's
Appendix E in miniature on digits; Tao et al.).  Kept apart from
the declarations so that editing a contrast or a figure does not make stored rows stale (the
runner fingerprints the run function's module and what it imports).  The design is described in
:mod:`empirical.papers.real.sosp`."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.noise_meter import NoiseMeter, observer
from algorithms.real_models import (MLPShape, accuracy, clip_rows, clipped_hessian_columns,
                                    kaiming_init, per_example_gradients)
from algorithms.sosp.nonconvex import (AdaDPSpider, ClientData, SpiderPlan, gauss_psgd,
                                       o1_sensitivity, private_model_selection,
                                       selection_multiplier)
from empirical.papers.real.data import prepared

__all__ = ["DigitsClients", "load_digits_split", "client_shards", "run_sosp",
           "selection_multiplier", "CHI", "KAPPA", "GAMMA", "Q_ROUNDS", "TEST_FRACTION"]

#: Appendix E's Gauss-PSGD hyperparameters: escape threshold χ, drift threshold κ, Γ, Q.
CHI, KAPPA, GAMMA, Q_ROUNDS = 0.01, 0.1, 10, 3
#: Test fraction (≈ 500 of 1797 rows; one fixed split, so every point is scored on the same rows).
TEST_FRACTION = 0.28


# =============================================================================================
# Data
# =============================================================================================
@lru_cache(maxsize=1)
def load_digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, y_train, X_test, y_test): the shared core's deterministic split of digits
    (:func:`empirical.papers.real.data.prepared`: standardised, rows in the unit ball), integer labels."""
    Xtr, ytr, Xte, yte = prepared("digits", TEST_FRACTION, "real.sosp")
    return Xtr, ytr.astype(np.intp), Xte, yte.astype(np.intp)


def client_shards(X: np.ndarray, y: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Label-sorted rows cut into m equal contiguous shards, (m, n_c, D) and (m, n_c); the
    remainder rows (< m) are dropped.  Deterministic: client j always holds the same rows."""
    if not (isinstance(m, (int, np.integer)) and 1 <= m <= len(y)):
        raise ValueError(f"m must be an integer in [1, {len(y)}], got {m!r}")
    order = np.argsort(y, kind="stable")
    n_c = len(y) // m
    idx = order[: m * n_c].reshape(m, n_c)
    return X[idx], y[idx]


class DigitsClients(ClientData):
    """m clients' shards for :class:`AdaDPSpider`: each oracle row walks its own random
    permutation of every shard (a pass: each record in at most one batch), clipped gradients.

    The permutation of a row is drawn from the generator the oracle hands in (its per-row data
    stream) on first use, so a row's batches do not depend on which other rows share the run."""

    def __init__(self, Xs: np.ndarray, ys: np.ndarray, shape: MLPShape, clip: float,
                 M_sens: float):
        self.Xs, self.ys, self.shape = Xs, ys, shape
        self.m, self.n = ys.shape
        self.d = shape.P
        self.G_sens, self.M_sens = float(clip), float(M_sens)
        self._state: dict[int, list] = {}
        self._buffers: dict[tuple, np.ndarray] = {}

    def _scratch(self, name: str, shape: tuple) -> np.ndarray:
        """A float buffer reused across calls: per-example gradients are MBs, and glibc maps a
        fresh block of a size it has just freed each time (≈ 1000 page faults a call)."""
        buf = self._buffers.get((name, shape))
        if buf is None:
            buf = self._buffers[(name, shape)] = np.empty(shape)
        return buf

    def _gradients(self, name: str, x: np.ndarray, Xb: np.ndarray, yb: np.ndarray
                   ) -> np.ndarray:
        out = self._scratch(name, (*yb.shape, self.shape.P))             # (m, b, P)
        return per_example_gradients(self.shape, x, Xb, yb, out=out)

    def _next(self, gen: np.random.Generator, b: int) -> tuple[np.ndarray, np.ndarray]:
        st = self._state.get(id(gen))
        if st is None:
            perm = np.argsort(gen.random((self.m, self.n)), axis=1)
            st = self._state[id(gen)] = [perm, 0, gen]      # keep gen alive: ids stay unique
        perm, pos, _ = st
        if pos + b > self.n:
            raise ValueError(f"batch of {b} past the end of a pass ({self.n} records per client)")
        idx = perm[:, pos:pos + b]
        st[1] = pos + b
        rows = np.arange(self.m)[:, None]
        return self.Xs[rows, idx], self.ys[rows, idx]

    def batch_gradient(self, gen: np.random.Generator, x: np.ndarray, b: int) -> np.ndarray:
        Xb, yb = self._next(gen, b)
        G = self._gradients("g", x, Xb, yb)
        return clip_rows(G, self.G_sens, out=G, work=self._scratch("w", G.shape)).mean(axis=1)

    def batch_difference(self, gen: np.random.Generator, x: np.ndarray, x_prev: np.ndarray,
                         b: int) -> np.ndarray:
        Xb, yb = self._next(gen, b)
        step = float(np.linalg.norm(x - x_prev))
        D = self._gradients("g", x, Xb, yb)
        np.subtract(D, self._gradients("g_prev", x_prev, Xb, yb), out=D)
        return clip_rows(D, self.M_sens * step, out=D,
                         work=self._scratch("w", D.shape)).mean(axis=1)


# =============================================================================================
# Runs
# =============================================================================================
def _plan(n_c: int, d: int, m: int, *, z: float, epsilon: float, delta: float, eta: float,
          b1: int, b2: int, clip: float, M_sens: float) -> SpiderPlan:
    """One pass's plan: Appendix E's χ, κ, Γ, Q; R = √κ (the appendix does not state R: one
    drift threshold's worth of movement); z for the whole run (E passes composed)."""
    sigma1 = z * o1_sensitivity(clip, b1)
    return SpiderPlan(n=n_c, d=d, m=m, epsilon=epsilon, delta=delta, alpha=4 * CHI, chi=CHI,
                      eta=eta, radius=math.sqrt(KAPPA), kappa=KAPPA, kappa_1=math.nan,
                      kappa_2=math.nan, b1=b1, b2=b2, b1_real=float(b1), b2_real=float(b2),
                      z=z, sigma1=sigma1, r_c=sigma1 / math.sqrt(m), Gamma=GAMMA, Q=Q_ROUNDS,
                      G=clip, M=M_sens, U=1.0, hessian_lipschitz=1.0, G_sens=clip,
                      M_sens=M_sens, max_steps=10 * n_c)


def _claimed_multiplier(epsilon: float, delta: float, count: int) -> float:
    """z with dp-accounting's ε(Gaussian(z)^{⊗count}, δ) = ε, by bisection here (independent of
    the algorithms' calibration code): the multiplier the privacy columns price."""
    return float(brentq(lambda v: accounting.epsilon(accounting.gaussian_event(v, count), delta)
                        - epsilon, 1e-6, 1e5, xtol=1e-14, rtol=1e-13))


def _spider_meter(meter: NoiseMeter, tag: str, *, z: float, n_c: int, batches: int,
                  clip: float, M_sens: float):
    """Observe hook of Ada-DP-SPIDER measuring each client's O₁ and O₂ noise (release minus its
    noise-free value) against σ₁ = z·2G_s/b1 and σ₂ = z·2M_s‖x_{t−1} − x_{t−2}‖/b2, with z the
    accountant's multiplier for E passes (:func:`_claimed_multiplier`) and b1 = ⌊n_c/batches⌋,
    b2 = ⌊b1/4⌋ recomputed here; channels ``o1<tag>``, ``o2<tag>``."""
    b1 = max(1, n_c // batches)
    b2 = max(1, b1 // 4)
    o1, o2 = f"o1{tag}", f"o2{tag}"
    meter.channel(o1)
    meter.channel(o2)

    def handle(kind, rows, answer, sigma, X, X_prev, *, clean):
        e = np.asarray(answer) - np.asarray(clean)
        if kind == "o1":
            meter.add(o1, rows, e, z * 2.0 * clip / b1)
            return
        step = np.linalg.norm(np.asarray(X) - np.asarray(X_prev), axis=-1)
        meter.add(o2, rows, e, z * 2.0 * M_sens * step / b2)

    return observer(meter, handle)


def _selection_meter(meter: NoiseMeter, row: int, P: int, *, z: float, n_h: int, clip: float,
                     M_hess: float):
    """Observe hook of Algorithm 4 (one seed row per call, recorded as ``row``): the gradient
    releases against σ_g = z·2G_s/n_h and the Hessians' upper triangles (the lower one mirrors
    it) against σ_H = z·2M_s√P/n_h, z the accountant's for its 2T releases (channels
    ``sel_gradient``, ``sel_hessian``)."""
    iu = np.triu_indices(P)
    meter.channel("sel_gradient")
    meter.channel("sel_hessian")

    def handle(kind, _row, answer, sigma, X, _prev, *, clean):
        e = np.asarray(answer) - np.asarray(clean)
        if kind == "hessian":
            meter.add("sel_hessian", row, e[..., iu[0], iu[1]][None],
                      z * 2.0 * M_hess * math.sqrt(P) / n_h)
        else:
            meter.add("sel_gradient", row, e[None], z * 2.0 * clip / n_h)

    return observer(meter, handle)


def _train(data: DigitsClients, gens: list, theta0: np.ndarray, *, epochs: int, z: float,
           epsilon: float, delta: float, eta: float, batches: int,
           observe=None) -> tuple[list, dict]:
    """E passes of Gauss-PSGD + (distributed) Ada-DP-SPIDER; iterates after each pass (R, P)
    and diagnostics.  ``gens``: per row, one generator per pass; ``batches``: O₁ batches per
    client per pass; ``observe``: the oracle's hook (measured noise)."""
    # the same number of O₁ batches per pass at every m (b1 = ⌊n_c/batches⌋ fits exactly), so
    # every learner takes the same number of steps; b2 = b1/4 for the SPIDER corrections
    b1 = max(1, data.n // batches)
    b2 = max(1, b1 // 4)
    plan = _plan(data.n, data.d, data.m, z=z, epsilon=epsilon, delta=delta, eta=eta, b1=b1,
                 b2=b2, clip=data.G_sens, M_sens=data.M_sens)
    X, out = theta0.copy(), []
    diag = {"certified": np.zeros(len(gens)), "escapes": np.zeros(len(gens)),
            "steps": np.zeros(len(gens))}
    for e in range(epochs):
        data._state.clear()
        oracle = AdaDPSpider(data, plan, [g[e] for g in gens], observe=observe)
        res = gauss_psgd(oracle, X, chi=CHI, eta=eta, radius=plan.radius, Gamma=GAMMA,
                         Q=Q_ROUNDS, max_steps=plan.max_steps)
        X = res.x
        out.append(X.copy())
        diag["certified"] += res.certified
        diag["escapes"] += res.escapes
        diag["steps"] += res.steps
    diag["sigma1"] = plan.sigma1
    return out, diag


def _select(shape: MLPShape, cands: np.ndarray, Xh: np.ndarray, yh: np.ndarray, *, gen,
            epsilon: float, delta: float, clip: float, M_hess: float,
            buffers: dict | None = None, observe=None) -> tuple[int, dict]:
    """Algorithm 4 over ``cands`` (T, P) with the clients' held-out shards (m, n_h, D).
    ``buffers``: a dict reused across calls to hold the (m, T, P, P) Hessians (60 MB at m = 10:
    a fresh one per seed costs more in page faults than the copy it replaces)."""
    m, n_h = yh.shape
    T = cands.shape[0]
    cache = {} if buffers is None else buffers
    cache.pop("ready", None)

    def client_grad_hess(_gen, X, n):
        if "ready" not in cache:
            # all m clients in one call per candidate (each client's rows stay its own)
            if cache.get("h", np.empty(0)).shape != (m, T, shape.P, shape.P):
                cache["g"] = np.empty((m, T, shape.P))
                cache["h"] = np.empty((m, T, shape.P, shape.P))
            cache["ready"] = True
            for t in range(T):
                cache["g"][:, t] = clipped_hessian_columns(shape, X[t], Xh, yh, clip, M_hess,
                                                           out=cache["h"][:, t])[0]
        return cache["g"], cache["h"]

    def true_grad_hess(X):
        g, h = client_grad_hess(None, X, n_h)
        return g.mean(axis=0), h.mean(axis=0)

    sel = private_model_selection(cands, client_grad_hess=client_grad_hess,
                                  true_grad_hess=true_grad_hess, m=m, n=n_h, epsilon=epsilon,
                                  delta=delta, alpha=4 * CHI, G_sens=clip, M_sens=M_hess,
                                  hessian_lipschitz=1.0, rng=[gen], observe=observe)
    return int(sel.selected[0]), sel.privacy


def _shape(point: dict) -> MLPShape:
    return MLPShape(64, int(point["hidden"]), 10)


def run_sosp(point: dict, rngs: list) -> dict:
    """Both methods on every seed row; per-epoch test accuracies, ε from dp-accounting."""
    m, E = int(point["m"]), int(point["epochs"])
    eps, delta = float(point["epsilon"]), float(point["delta"])
    shape = _shape(point)
    Xtr, ytr, Xte, yte = load_digits_split()
    Xs, ys = client_shards(Xtr, ytr, m)
    kw = dict(eta=float(point["lr"]), batches=int(point["batches"]))
    clip, M_sens = float(point["clip"]), float(point["M_sens"])
    R = len(rngs)
    kids = [g.spawn(4) for g in rngs]
    theta0 = np.stack([kaiming_init(shape, k[0]) for k in kids])
    # Gauss-PSGD: all of every shard, (ε, δ) over E passes
    z = selection_multiplier(eps, delta, E)
    data = DigitsClients(Xs, ys, shape, clip, M_sens)
    meter = NoiseMeter(R)
    hook = _spider_meter(meter, "", z=_claimed_multiplier(eps, delta, E), n_c=data.n,
                         batches=kw["batches"], clip=clip, M_sens=M_sens)
    iters, diag = _train(data, [k[1].spawn(E) for k in kids], theta0, epochs=E, z=z,
                         epsilon=eps, delta=delta, observe=hook, **kw)
    eps_psgd = accounting.epsilon(accounting.gaussian_event(z, E), delta)
    acc = np.array([accuracy(shape, X, Xte, yte) for X in iters])          # (E, R)
    out = {"acc_psgd": acc[-1], "acc_init": accuracy(shape, theta0, Xte, yte),
           "zero": np.zeros(R), "epsilon_psgd": np.full(R, eps_psgd),
           "epsilon_target": np.full(R, eps), "epsilon_guarantee": np.full(R, eps_psgd),
           "epsilon_spent": np.full(R, eps_psgd), "delta_target": np.full(R, delta),
           "delta_guarantee": np.full(R, delta), "certified": diag["certified"],
           "escapes": diag["escapes"], "steps_psgd": diag["steps"],
           "sigma1_psgd": np.full(R, diag["sigma1"]),
           "records_per_client": np.full(R, Xs.shape[1])}
    for e in range(E):
        out[f"acc_psgd_e{e + 1}"] = acc[e]
    if int(point.get("baseline", 1)):
        out.update(_baseline(point, shape, Xs, ys, theta0, kids, E=E, eps=eps, delta=delta,
                             kw=kw, clip=clip, M_sens=M_sens, meter=meter))
        # the row's claim covers both methods: each must be (ε, δ)-DP by dp-accounting
        out["epsilon_guarantee"] = np.maximum(eps_psgd, out["epsilon_baseline"])
        out["epsilon_spent"] = out["epsilon_guarantee"]
    out.update(meter.columns())
    return out


def _baseline(point: dict, shape: MLPShape, Xs: np.ndarray, ys: np.ndarray,
              theta0: np.ndarray, kids: list, *, E: int, eps: float, delta: float, kw: dict,
              clip: float, M_sens: float, meter: NoiseMeter) -> dict:
    """The learner on 1 − holdout of each shard at (ε/2, δ/2), Algorithm 4 at (ε/2, δ/2) on the
    held-out rest; every release's noise measured into ``meter`` (channels ``o1_baseline``,
    ``o2_baseline``, ``sel_gradient``, ``sel_hessian``)."""
    _, _, Xte, yte = load_digits_split()
    R = len(kids)
    n_tr = int(round((1.0 - float(point["holdout"])) * Xs.shape[1]))
    z_b = selection_multiplier(eps / 2, delta / 2, E)
    bdata = DigitsClients(Xs[:, :n_tr], ys[:, :n_tr], shape, clip, M_sens)
    hook = _spider_meter(meter, "_baseline", z=_claimed_multiplier(eps / 2, delta / 2, E),
                         n_c=bdata.n, batches=kw["batches"], clip=clip, M_sens=M_sens)
    biters, bdiag = _train(bdata, [k[2].spawn(E) for k in kids], theta0, epochs=E, z=z_b,
                           epsilon=eps / 2, delta=delta / 2, observe=hook, **kw)
    cand_epochs = _candidate_epochs(E, int(point.get("n_candidates", 4)))
    z_sel = _claimed_multiplier(eps / 2, delta / 2, 2 * len(cand_epochs))
    n_h = Xs.shape[1] - n_tr
    eps_train = accounting.epsilon(accounting.gaussian_event(z_b, E), delta / 2)
    acc_sel, sel_epoch, eps_b = [], [], []
    buffers: dict = {}
    for r in range(R):
        cands = np.stack([biters[e - 1][r] for e in cand_epochs])
        sel, priv = _select(shape, cands, Xs[:, n_tr:], ys[:, n_tr:], gen=kids[r][3],
                            epsilon=eps / 2, delta=delta / 2, clip=clip,
                            M_hess=float(point["M_hess"]), buffers=buffers,
                            observe=_selection_meter(meter, r, shape.P, z=z_sel, n_h=n_h,
                                                     clip=clip, M_hess=float(point["M_hess"])))
        chosen = cands[sel] if sel >= 0 else biters[-1][r]
        acc_sel.append(float(accuracy(shape, chosen, Xte, yte)))
        sel_epoch.append(cand_epochs[sel] if sel >= 0 else -1)
        eps_b.append(eps_train + priv["epsilon_guarantee"])
    bacc = np.array([accuracy(shape, X, Xte, yte) for X in biters])
    out = {"acc_baseline": np.asarray(acc_sel), "acc_baseline_last": bacc[-1],
           "selected_epoch": np.asarray(sel_epoch, float), "epsilon_baseline": np.asarray(eps_b),
           "sigma1_baseline": np.full(R, bdiag["sigma1"])}
    for e in range(E):
        out[f"acc_baseline_last_e{e + 1}"] = bacc[e]
    return out


def _candidate_epochs(E: int, T: int) -> list[int]:
    """T evenly spaced epochs ending at E (Algorithm 4's candidate list)."""
    T = max(1, min(T, E))
    return sorted({int(round(E * (k + 1) / T)) for k in range(T)})


