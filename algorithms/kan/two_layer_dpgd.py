"""The prior algorithm the KAN paper (Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft;
paper id ``kan``) compares against in Section 5.2 and 5.3 'Comparison': full-batch DP-GD with
independent Gaussian noise on the two-layer KAN of Section 3.1 with *both* layers trained, the
setting of Wang, Zhou, Liznerski, Kloft (2026) as the paper describes it (App. B, proof of
Lemma B.6: "arguments from [60], where both c and W are trained"; Section 5.3: the paper's own
analysis is "the fixed-second-layer setting studied here").  Its claimed population risk is
√d/(γ⁴nε) privately and 1/(γ⁴n) without noise, both at width m ≍ γ⁻⁶ (Section 5.2 / 5.3
'Comparison').

:func:`dp_gd_two_layer`, for t = 1..T−1 (T iterates, as Algorithm 1 counts them):

    g_i = ∇_{(W, c)} ℓ(y_i f_{W_{t−1}, c_{t−1}}(x_i)),   g̃_i = g_i min{1, C_clip/‖g_i‖},
    (W_t, c_t) = (W_{t−1}, c_{t−1}) − η((1/n) Σ_i g̃_i + (C_clip/n) κ Z_t),   Z_t ~ N(0, I_{mdp+mp}),

with the gradients of Lemma B.6 for W (∇_{w_j} f = (1/√(md)) σ'(u_j)⟨c_j, h'(σ(u_j))⟩ h(x)) and
∇_{c_j} f = h(σ(u_j))/√m for c.  The KAN paper states no clipping for this algorithm; the joint
per-example gradient is clipped at C_clip here so that the sensitivity, and so the privacy, holds
for every input (a clip that never binds is the unclipped DP-GD; every run reports the clipped
fraction).  No projection (the KAN paper's D.3 recovery of full-batch DP-GD has none either).

Privacy (:func:`two_layer_epsilon`): the T − 1 releases are T − 1 Gaussian mechanisms on the
averaged clipped gradient, each with std C_clip·κ/n and ℓ₂-sensitivity C_clip/n (zero-out) or
2C_clip/n (replace-one); composed, one Gaussian mechanism with noise multiplier κ/(s√(T − 1)),
s = 1 or 2, whose ε(δ) dp-accounting's Gaussian privacy loss gives
(:func:`algorithms.kan.privacy.gaussian_epsilon`).  :func:`two_layer_epsilon_pld` is a second
route: dp-accounting's PLD accountant composing the T − 1 Gaussian events one by one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import dp_accounting as dpa
import numpy as np

from algorithms.kan.correlated_noise import (KAN, _contract_table, _knots, _local_weights,
                                            logistic_derivative, logistic_loss, spline_contract)
from algorithms.kan.privacy import gaussian_epsilon, gaussian_noise_multiplier
from algorithms.primitives import as_generators
from algorithms.validation import check_delta, check_int, check_nonnegative, check_positive

__all__ = ["TwoLayerRun", "two_layer_forward", "two_layer_gradients", "dp_gd_two_layer",
           "two_layer_epsilon", "two_layer_epsilon_pld", "two_layer_noise_multiplier",
           "RELATIONS"]

RELATIONS = ("zero-out", "replace-one")


def _relation_factor(relation: str) -> float:
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    return 2.0 if relation == "replace-one" else 1.0


def two_layer_epsilon(noise_multiplier: float, steps: int, delta: float,
                      relation: str = "replace-one") -> float:
    """ε(δ) of ``steps`` full-batch releases with noise multiplier κ (noise std C_clip·κ/n on the
    averaged clipped gradient, sensitivity C_clip/n zero-out, 2C_clip/n replace-one): one
    Gaussian mechanism of noise multiplier κ/(s√steps), ε from dp-accounting."""
    kappa = check_positive("noise_multiplier", noise_multiplier)
    steps = check_int("steps", steps)
    delta = check_delta(delta)
    s = _relation_factor(relation)
    return gaussian_epsilon(kappa / (s * math.sqrt(steps)), delta)


def two_layer_epsilon_pld(noise_multiplier: float, steps: int, delta: float,
                          relation: str = "replace-one") -> float:
    """The same ε by a second route: dp-accounting's PLD accountant composing ``steps`` Gaussian
    events of noise multiplier κ/s one by one (an upper bound, discretisation 1e-4)."""
    kappa = check_positive("noise_multiplier", noise_multiplier)
    steps = check_int("steps", steps)
    delta = check_delta(delta)
    s = _relation_factor(relation)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dpa.GaussianDpEvent(kappa / s), steps)
    return float(acc.get_epsilon(delta))


def two_layer_noise_multiplier(epsilon: float, steps: int, delta: float,
                               relation: str = "replace-one") -> float:
    """The smallest κ whose :func:`two_layer_epsilon` is ≤ ε."""
    eps = check_positive("epsilon", epsilon)
    steps = check_int("steps", steps)
    delta = check_delta(delta)
    s = _relation_factor(relation)
    k = gaussian_noise_multiplier(eps, delta) * s * math.sqrt(steps)
    while two_layer_epsilon(k, steps, delta, relation) > eps:
        k *= 1.0 + 1e-10
    return k


def _local(model: KAN, W: np.ndarray, c: np.ndarray, H: np.ndarray, derivs: bool):
    """All rows at once: f (R, N), and with ``derivs`` the left factors a (R, N, m) of
    ∇_W f = a hᵀ, and ∇_c f = h(σ(u))/√m in its sparse form: the flat indices (4, N, R·m) into
    c.ravel() of the four non-zero splines of each h(σ(u_ij)) and their values (4, N, R·m).
    On [−1, 1] ⊇ range(tanh) only four uniform cubic B-splines are non-zero at a point, so
    ⟨c_j, h(σ(u_j))⟩ needs four numbers per (i, j); the rows' coefficients are stacked as one
    (R·m, p) table so that one call contracts every row with its own c."""
    R, m, _ = W.shape
    d, p = model.d, model.p
    u = (np.einsum("nq,rmq->rnm", H, W, optimize=True) if H.ndim == 2
         else np.matmul(H, np.swapaxes(W, 1, 2)))
    s = np.tanh(u / math.sqrt(d))                                        # (R, N, m)
    N = s.shape[1]
    s2 = np.ascontiguousarray(np.swapaxes(s, 0, 1)).reshape(N, R * m)    # (N, R·m)
    cs = c.reshape(R * m, p)
    tab = _contract_table(cs, p)
    if not derivs:
        (hc,) = spline_contract(s2, cs, p, (0,), tab)
        return hc.reshape(N, R, m).sum(axis=-1).T / math.sqrt(m)
    hc, dhc = spline_contract(s2, cs, p, (0, 1), tab)
    f = hc.reshape(N, R, m).sum(axis=-1).T / math.sqrt(m)
    a = (1.0 - s * s) * np.swapaxes(dhc.reshape(N, R, m), 0, 1) / math.sqrt(m * d)
    h, _ = _knots(p)
    x = (s2 + 1.0) / h
    j = np.clip(x.astype(np.intp), 0, p - 4)           # x ≥ 0: truncation is floor
    base = j + np.arange(R * m) * p
    idx = np.stack([base + q for q in range(4)])                         # (4, N, R·m)
    w0 = np.stack(_local_weights(x - j, h, 0))                           # (4, N, R·m)
    return f, a, idx, w0


def two_layer_forward(model: KAN, W: np.ndarray, c: np.ndarray, H: np.ndarray) -> np.ndarray:
    """f_{W,c}(x_i) for W (R, m, dp), c (R, m, p) and features H (N, dp) or (R, N, dp): (R, N)."""
    return _local(model, W, c, H, False)


def two_layer_gradients(model: KAN, W: np.ndarray, c: np.ndarray, H: np.ndarray,
                        y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-example gradients of ℓ(y_i f(x_i)) materialised: (R, N, m, dp) for W and
    (R, N, m, p) for c.  For tests only (the algorithm never forms them)."""
    R, m, _ = W.shape
    p = model.p
    f, a, idx, w0 = _local(model, W, c, H, True)
    lp = logistic_derivative(y * f) * y                                  # (R, N)
    gW = (lp[..., None] * a)[..., None] * H[None, :, None, :]
    hs = np.zeros((H.shape[0], R * m * p))
    for q in range(4):
        np.put_along_axis(hs, idx[q], w0[q], axis=1)
    hs = np.swapaxes(hs.reshape(-1, R, m, p), 0, 1)                      # (R, N, m, p)
    return gW, lp[..., None, None] * hs / math.sqrt(m)


#: ``observe(t, released, noise_std)``: the released noisy update of every row at step t, the
#: W part and the c part flattened and concatenated, shape (R, m·dp + m·p), and each row's noise
#: std C_clip·κ/n (R,).  As for Algorithm 1's observer, one with a true ``measures_noise``
#: attribute is also passed ``clean=`` the update without its noise.
Observer = Callable[..., None]


@dataclass
class TwoLayerRun:
    """What one call of :func:`dp_gd_two_layer` measured, one entry per row; the averages are
    over the evaluated iterates t ∈ ``eval_steps`` (the theorems average over t < T)."""

    W: np.ndarray                   # (R, m, dp) last iterate
    c: np.ndarray                   # (R, m, p) last iterate
    eval_steps: np.ndarray
    train_curve: np.ndarray         # (R, len(eval_steps))
    test_curve: np.ndarray | None
    avg_train_loss: np.ndarray      # (R,)
    avg_test_loss: np.ndarray | None
    clip_fraction: np.ndarray       # fraction of per-example gradients clipped
    c_drift: np.ndarray             # ‖c_{T−1} − c₀‖ / ‖c₀‖: how far the second layer moved
    params: dict = field(default_factory=dict)


def dp_gd_two_layer(model: KAN, H: np.ndarray, y: np.ndarray, *, T: int, eta: float,
                    C_clip: float, noise_multiplier: float,
                    rng: np.random.Generator | Sequence[np.random.Generator],
                    H_test: np.ndarray | None = None, y_test: np.ndarray | None = None,
                    eval_every: int = 1, train_second_layer: bool = True,
                    observe: Observer | None = None) -> TwoLayerRun:
    """Full-batch DP-GD on (W, c) from the model's (W₀, c₀) (see the module docstring).

    ``H`` holds the training features h(x_i): (n, dp) shared by all rows, or (R, n, dp), one data
    set per generator; ``y`` likewise.  Row r draws its noise from ``rng[r]`` only.
    ``train_second_layer=False`` keeps c at c₀ (the KAN paper's fixed-second-layer setting, with
    the same clipping of the W-gradient alone).  κ = 0 is non-private full-batch GD."""
    gens = as_generators(rng)
    T = check_int("T", T, minimum=1)
    eta = check_positive("eta", eta)
    C_clip = check_positive("C_clip", C_clip)
    kappa = check_nonnegative("noise_multiplier", noise_multiplier)
    eval_every = check_int("eval_every", eval_every)
    R = len(gens)
    m, d, p = model.m, model.d, model.p
    dp_ = d * p
    H = np.asarray(H, dtype=float)
    y = np.asarray(y, dtype=float)
    if H.ndim == 2:
        H = np.broadcast_to(H, (R,) + H.shape)
        y = np.broadcast_to(y, (R,) + y.shape)
    if H.ndim != 3 or H.shape[0] != R or H.shape[2] != dp_:
        raise ValueError(f"H must have shape (n, {dp_}) or ({R}, n, {dp_}), got {H.shape}")
    if y.shape != H.shape[:2] or not np.all(np.abs(y) == 1):
        raise ValueError("y must hold labels in {-1, +1}, one per row of H")
    if not np.all(np.isfinite(H)):
        raise ValueError("H must be finite")
    n = H.shape[1]
    W = np.broadcast_to(model.W0, (R, m, dp_)).copy()
    c0 = np.broadcast_to(model.c, (R, m, p)).copy()
    c = c0.copy()
    hnorm2 = np.einsum("rnq,rnq->rn", H, H)
    std = C_clip * kappa / n
    eval_steps = sorted(set(range(0, T, eval_every)) | {T - 1})
    train_curve, test_curve = [], []
    clipped = np.zeros(R)

    def evaluate(Wc, cc):
        train_curve.append(logistic_loss(y * two_layer_forward(model, Wc, cc, H)).mean(axis=-1))
        if H_test is not None:
            test_curve.append(logistic_loss(
                y_test * two_layer_forward(model, Wc, cc, H_test)).mean(axis=-1))

    evaluate(W, c)
    for t in range(1, T):
        f, a, idx, w0 = _local(model, W, c, H, True)
        lp = logistic_derivative(y * f) * y                             # (R, n)
        gsq = np.einsum("rnm,rnm->rn", a, a) * hnorm2
        if train_second_layer:
            gsq = gsq + np.einsum("qnk,qnk->nk", w0, w0).reshape(n, R, m).sum(axis=-1).T / m
        gnorm = np.abs(lp) * np.sqrt(gsq)
        scale = np.minimum(1.0, C_clip / np.maximum(gnorm, 1e-300))
        clipped += (gnorm > C_clip).mean(axis=1)
        coef = lp * scale / n                                           # (R, n)
        vW = np.matmul(np.swapaxes(a * coef[..., None], 1, 2), H)       # (R, m, dp)
        if train_second_layer:
            # coefficient of (row r, example i) on the flat (N, R·m) layout of idx and w0
            cw = np.repeat(coef.T, m, axis=1)                           # (n, R·m)
            vc = (np.bincount(idx.ravel(), weights=(w0 * cw).ravel(), minlength=R * m * p)
                  .reshape(R, m, p) / math.sqrt(m))
        else:
            vc = np.zeros_like(c)
        relW, relc = vW, vc
        if kappa > 0:
            z = np.stack([g.standard_normal(m * dp_ + (m * p if train_second_layer else 0))
                          for g in gens]) * std
            relW = vW + z[:, :m * dp_].reshape(R, m, dp_)
            if train_second_layer:
                relc = vc + z[:, m * dp_:].reshape(R, m, p)
        if observe is not None:
            parts = [relW.reshape(R, -1)] + ([relc.reshape(R, -1)] if train_second_layer else [])
            extra = {}
            if getattr(observe, "measures_noise", False):
                extra["clean"] = np.concatenate(
                    [vW.reshape(R, -1)] + ([vc.reshape(R, -1)] if train_second_layer else []), axis=1)
            observe(t, np.concatenate(parts, axis=1), np.full(R, std), **extra)
        W = W - eta * relW
        if train_second_layer:
            c = c - eta * relc
        if t in eval_steps:
            evaluate(W, c)
    train = np.stack(train_curve, axis=1)
    test = np.stack(test_curve, axis=1) if test_curve else None
    c_drift = np.linalg.norm((c - c0).reshape(R, -1), axis=1) / np.linalg.norm(model.c)
    return TwoLayerRun(W=W, c=c, eval_steps=np.asarray(eval_steps), train_curve=train,
                       test_curve=test, avg_train_loss=train.mean(axis=1),
                       avg_test_loss=None if test is None else test.mean(axis=1),
                       clip_fraction=clipped / max(T - 1, 1), c_drift=c_drift,
                       params={"T": T, "eta": eta, "B": n, "C_clip": C_clip,
                               "noise_multiplier": kappa, "noise_std": std, "releases": T - 1,
                               "train_second_layer": bool(train_second_layer)})
