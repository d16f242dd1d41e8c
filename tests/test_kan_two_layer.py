"""Wang et al.'s full-batch DP-GD on the two-layer KAN with both layers trained (the KAN paper's
Section 5.2 / 5.3 'Comparison'; algorithms/kan/two_layer_dpgd.py): gradients against finite
differences, one step against a line-by-line reference, the privacy accounting against
dp-accounting's PLD composition, bad input, and the end-to-end audit's statistic."""
import math

import numpy as np
import pytest

from algorithms.kan.correlated_noise import KAN, bspline_basis, logistic_loss
from algorithms.kan.two_layer_dpgd import (dp_gd_two_layer, two_layer_epsilon,
                                           two_layer_epsilon_pld, two_layer_forward,
                                           two_layer_gradients, two_layer_noise_multiplier)


def _tiny(seed=0, m=3, d=2, p=5, n=4):
    rng = np.random.default_rng(seed)
    model = KAN.init(m, d, p, rng)
    X = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    W = model.W0[None] + 0.3 * rng.standard_normal((1,) + model.W0.shape)
    c = model.c[None] + 0.2 * rng.standard_normal((1,) + model.c.shape)
    return model, model.features(X), y, W, c


def _f_ref(model, W, c, H):
    """f from the definition: (1/√m) Σ_j ⟨c_j, h(tanh(⟨w_j, h(x)⟩/√d))⟩ with the full basis."""
    s = np.tanh(H @ W.T / math.sqrt(model.d))
    return np.einsum("nmk,mk->n", bspline_basis(s, model.p), c) / math.sqrt(model.m)


def test_forward_and_gradients_against_definition_and_finite_differences():
    model, H, y, W, c = _tiny()
    assert np.allclose(two_layer_forward(model, W, c, H)[0], _f_ref(model, W[0], c[0], H),
                       atol=1e-12)
    gW, gc = two_layer_gradients(model, W, c, H, y)
    i, e = 2, 1e-6
    loss = lambda W_, c_: logistic_loss(y[i] * _f_ref(model, W_, c_, H[i:i + 1]))[0]  # noqa: E731
    for theta, g, other in ((W[0], gW[0, i], "W"), (c[0], gc[0, i], "c")):
        fd = np.zeros_like(theta)
        for idx in np.ndindex(theta.shape):
            tp, tm = theta.copy(), theta.copy()
            tp[idx] += e
            tm[idx] -= e
            args = ((tp, c[0]), (tm, c[0])) if other == "W" else ((W[0], tp), (W[0], tm))
            fd[idx] = (loss(*args[0]) - loss(*args[1])) / (2 * e)
        assert np.allclose(fd, g, atol=1e-8), other


def test_one_step_equals_a_line_by_line_reference():
    model, H, y, _, _ = _tiny(seed=1)
    n, eta, C, kappa, T = H.shape[0], 0.7, 0.05, 3.0, 3
    run = dp_gd_two_layer(model, H, y, T=T, eta=eta, C_clip=C, noise_multiplier=kappa,
                          rng=[np.random.default_rng(5)])
    # reference: per-example gradients materialised, clipped, averaged, noised, stepped
    g = np.random.default_rng(5)
    W, c = model.W0[None].copy(), model.c[None].copy()
    D = W.size + c.size
    clipped = 0
    for _ in range(T - 1):
        gW, gc = two_layer_gradients(model, W, c, H, y)
        flat = np.concatenate([gW[0].reshape(n, -1), gc[0].reshape(n, -1)], axis=1)
        norms = np.linalg.norm(flat, axis=1)
        clipped += np.mean(norms > C)
        v = (flat * np.minimum(1.0, C / norms)[:, None]).mean(axis=0)
        v = v + C * kappa / n * g.standard_normal(D)
        W = W - eta * v[:W.size].reshape(W.shape)
        c = c - eta * v[W.size:].reshape(c.shape)
    assert np.allclose(run.W, W, atol=1e-12) and np.allclose(run.c, c, atol=1e-12)
    assert run.clip_fraction[0] == pytest.approx(clipped / (T - 1))
    assert run.clip_fraction[0] > 0                 # the clip binds on this instance


def test_frozen_second_layer_keeps_c_and_noise_free_run_is_deterministic():
    model, H, y, _, _ = _tiny(seed=2)
    run = dp_gd_two_layer(model, H, y, T=4, eta=0.5, C_clip=1.0, noise_multiplier=2.0,
                          rng=[np.random.default_rng(0), np.random.default_rng(1)],
                          train_second_layer=False)
    assert np.array_equal(run.c, np.broadcast_to(model.c, run.c.shape))
    assert np.all(run.c_drift == 0) and not np.allclose(run.W[0], run.W[1])
    a = dp_gd_two_layer(model, H, y, T=4, eta=0.5, C_clip=1.0, noise_multiplier=0.0,
                        rng=[np.random.default_rng(0), np.random.default_rng(1)])
    assert np.array_equal(a.W[0], a.W[1]) and np.all(a.c_drift > 0)


def test_privacy_accounting_matches_dp_accounting_composition():
    for steps, delta, rel in ((99, 1e-3, "replace-one"), (20, 1e-5, "zero-out")):
        k = two_layer_noise_multiplier(1.0, steps, delta, rel)
        eps = two_layer_epsilon(k, steps, delta, rel)
        assert eps <= 1.0 and eps == pytest.approx(1.0, rel=1e-8)
        assert two_layer_epsilon_pld(k, steps, delta, rel) == pytest.approx(eps, rel=1e-3)
    # replace-one doubles the sensitivity: κ twice as large costs what κ costs under zero-out
    assert two_layer_epsilon(6.0, 10, 1e-5, "replace-one") == pytest.approx(
        two_layer_epsilon(3.0, 10, 1e-5, "zero-out"), rel=1e-9)
    # more steps cost more
    assert two_layer_epsilon(6.0, 40, 1e-5) > two_layer_epsilon(6.0, 10, 1e-5)


@pytest.mark.parametrize("kw, name", [
    (dict(T=0), "T"), (dict(eta=0.0), "eta"), (dict(C_clip=-1.0), "C_clip"),
    (dict(noise_multiplier=-0.1), "noise_multiplier"), (dict(eval_every=0), "eval_every")])
def test_bad_input_names_the_parameter(kw, name):
    model, H, y, _, _ = _tiny()
    args = dict(T=3, eta=0.5, C_clip=1.0, noise_multiplier=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=name):
        dp_gd_two_layer(model, H, y, **{**args, **kw})


def test_bad_data_and_accounting_input():
    model, H, y, _, _ = _tiny()
    args = dict(T=3, eta=0.5, C_clip=1.0, noise_multiplier=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="y"):
        dp_gd_two_layer(model, H, 0.5 * y, **args)
    with pytest.raises(ValueError, match="H"):
        dp_gd_two_layer(model, H[:, :-1], y, **args)
    with pytest.raises(ValueError, match="relation"):
        two_layer_epsilon(1.0, 5, 1e-5, "add-one")
    with pytest.raises(ValueError, match="delta"):
        two_layer_epsilon(1.0, 5, 1.5)
    with pytest.raises(ValueError, match="steps"):
        two_layer_noise_multiplier(1.0, 0, 1e-5)


def test_audit_statistic_is_the_claimed_gaussian():
    """The end-to-end audit's releases are ±ĝ_t + κZ_t per unit clip: the score has mean ±S/κ
    and variance S, and the auditor's rebuilt iterates are the algorithm's own."""
    from empirical.papers.kan import audit_wang as aw
    k = aw._kappa()
    S = aw.TWO_LAYER["T"] - 1
    gens = [np.random.default_rng(i) for i in range(400)]
    for side, sign in ((0, 1.0), (1, -1.0)):
        m = aw.measure_two_layer(side, gens, k)
        assert np.allclose(m["clip_fraction"], 1.0)
        assert np.allclose(m["theta"][:, :4], m["W"].reshape(-1, 4), atol=1e-9)
        assert np.allclose(m["theta"][:, 4:], m["c"].reshape(-1, 4), atol=1e-9)
        score = np.einsum("rsk,rsk->r", m["releases"], m["units"]) / k
        assert abs(score.mean() - sign * S / k) < 4 * math.sqrt(S / 400)
        assert score.var() == pytest.approx(S, rel=0.25)
