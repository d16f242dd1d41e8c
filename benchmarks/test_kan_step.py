"""One clipped, correlated-noise DP-SGD step of the two-layer B-spline KAN (Algorithm 1 of the KAN
paper, ``algorithms/kan/correlated_noise.py``) against (a) a per-sample Python loop, (b) a torch
version of the same KAN under Opacus (``GradSampleModule`` + ``DPOptimizer``) and (c) the same
under Opacus' ghost clipping, at batch 64/256/4096 and d = 100/1000; and the B-spline basis
against scipy's design matrix and a scalar Cox–de Boor loop.

Model size: the suite's KAN experiments use width m = 32 and p = 6 splines per input
(the unit ``empirical/papers/kan/``: m ∈ {16, 32, 64}, p = 6 throughout), so the trainable
first layer W has m·d·p = 19 200 (d = 100) or 192 000 (d = 1000) parameters.

What "one step" is, on both sides: the batch's features h(x_i) ∈ R^{dp} are given (the
algorithm computes them once per data set, a torch user would too), then forward pass,
per-example gradients, clipping to C, summed clipped gradient plus the λ-correlated noise
C·κ(Z_t − λZ_{t−1}), the SGD update with step η/B, and the projection onto B(W₀, R_*).  Ours
never forms the B×m×dp per-example tensor (each per-example gradient is rank one, Lemma B.6);
Opacus does (``grad_sample``), which is why B = 4096, d = 1000 (6.3 GB of float64 per-example
gradients) is not run under Opacus.

Opacus hooks the model because the only trainable layer is an ``nn.Linear`` (W); the spline
activation of the second layer is parameter-free (c is fixed, a buffer), so no custom grad-sampler
or functorch fallback is needed.  Opacus adds independent noise, so the correlated noise is a
five-line ``DPOptimizer.add_noise`` override (same cost as Opacus' own).
"""
from __future__ import annotations

import math
import os
import time
from typing import Callable

import numpy as np
import pytest

from algorithms.kan.correlated_noise import (KAN, bspline_basis, dp_sgd_correlated,
                                             logistic_derivative, spline_contract)

BATCHES = (64, 256, 4096)
DIMS = (100, 1000)
M, P = 32, 6                           # the suite's width and spline count (see module docstring)
# per-example gradient norms of this model are ≈ 0.2–0.5 (whatever d): C = 0.35 clips about half
ETA, CLIP, KAPPA, LAM = 1.0, 0.35, 1.0, 0.5
R_STAR = 5.0                           # small enough that the projection is active after a few steps
OPACUS_MAX_ELEMENTS = 1e8              # B·m·dp above this (0.8 GB of float64 grad_sample): skip

# Opacus' full backward hook warns because the input features do not require gradients (they
# are data); that is the intended use, not a problem with the comparison.
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook:UserWarning")


# ---------------------------------------------------------------------------------------------
# data and model
# ---------------------------------------------------------------------------------------------
def _instance(B: int, d: int, seed: int = 0) -> tuple[KAN, np.ndarray, np.ndarray, np.ndarray]:
    """A KAN with the suite's m, p; a batch of B features in the unit ball; labels ±1; and a W
    moved away from W₀ so that clipping and the projection both matter."""
    rng = np.random.default_rng(seed)
    model = KAN.init(M, d, P, rng)
    X = rng.standard_normal((B, d))
    X *= (rng.random(B) ** (1.0 / d) / np.linalg.norm(X, axis=1))[:, None]   # uniform in the ball
    H = model.features(X)
    y = np.where(rng.random(B) < 0.5, -1.0, 1.0)
    u = rng.standard_normal(model.W0.shape)
    W = model.W0 + (0.999 * R_STAR / np.linalg.norm(u)) * u          # the projection is at stake
    return model, H, y, W


class NumpyKanStep:
    """The body of ``dp_sgd_correlated``'s loop for one seed row, on a given batch: the rank-one
    per-example gradients ℓ'(y f)·y·a(x)h(x)ᵀ, norms |ℓ'|·‖a‖·‖h‖, clipping, the clipped sum as
    one (m×B)·(B×dp) product, correlated noise, projection.  ``test_step_matches_algorithm``
    checks it against ``dp_sgd_correlated`` itself, so it cannot drift from the algorithm."""

    def __init__(self, model: KAN, H: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                 r_star: float = R_STAR):
        self.model, self.H, self.y, self.rng, self.r_star = model, H[None], y[None], rng, r_star
        self.hnorm = np.linalg.norm(H, axis=1)[None]     # data-only: once per data set
        self.z_prev = np.zeros((1,) + model.W0.shape)

    def __call__(self, W: np.ndarray, kappa: float = KAPPA) -> np.ndarray:
        B = self.H.shape[1]
        f, a = self.model.forward_and_factors(W, self.H)
        lp = logistic_derivative(self.y * f) * self.y
        gnorm = np.abs(lp) * np.linalg.norm(a, axis=2) * self.hnorm
        scale = np.minimum(1.0, CLIP / np.maximum(gnorm, 1e-300))
        v = np.matmul(np.swapaxes(a * (lp * scale / B)[..., None], 1, 2), self.H)
        step = ETA * v
        if kappa > 0:
            z = self.rng.standard_normal(self.model.W0.shape)[None]
            step = step + (ETA * CLIP * kappa / B) * (z - LAM * self.z_prev)
            self.z_prev = z
        W = W - step
        diff = W - self.model.W0
        dn = math.sqrt(np.einsum("rij,rij->", diff, diff))
        if dn > self.r_star:
            W = self.model.W0 + diff * (self.r_star / dn)
        return W


def loop_step(model: KAN, H: np.ndarray, y: np.ndarray, W: np.ndarray,
              rng: np.random.Generator, z_prev: np.ndarray) -> np.ndarray:
    """What a per-sample implementation does: per example, the forward pass, the materialised
    m×dp gradient, its norm, clip, accumulate (the full basis, as a first implementation would)."""
    m, d, p = model.m, model.d, model.p
    g = np.zeros_like(model.W0)
    for i in range(H.shape[0]):
        u = W @ H[i] / math.sqrt(d)
        s = np.tanh(u)
        f = np.sum(model.c * bspline_basis(s, p)) / math.sqrt(m)
        a = (1 - s * s) * np.sum(model.c * bspline_basis(s, p, 1), axis=1) / math.sqrt(m * d)
        gi = logistic_derivative(y[i] * f) * y[i] * np.outer(a, H[i])
        gi *= min(1.0, CLIP / max(np.linalg.norm(gi), 1e-300))
        g += gi
    B = H.shape[0]
    z = rng.standard_normal(W.shape)
    Wn = W - ETA * g / B - (ETA * CLIP * KAPPA / B) * (z - LAM * z_prev)
    diff = Wn - model.W0
    dn = np.linalg.norm(diff)
    return model.W0 + diff * (R_STAR / dn) if dn > R_STAR else Wn


def algorithm_per_step(model: KAN, H: np.ndarray, y: np.ndarray, steps: int = 5) -> Callable[[], float]:
    """Seconds per step of ``dp_sgd_correlated`` itself (n = B, one row, losses evaluated on one
    example at the ends only), by differencing a run of ``steps`` steps against a zero-step run
    (so set-up — validation, ‖h(x_i)‖, the schedule — is not counted)."""
    kw = dict(eta=ETA, B=H.shape[0], C_clip=CLIP, lam=LAM, noise_multiplier=KAPPA, R_star=R_STAR,
              eval_every=steps + 1, eval_subsample=1)

    def run(T: int) -> float:
        t0 = time.process_time()
        dp_sgd_correlated(model, H, y, T=T, rng=np.random.default_rng(0), **kw)
        return time.process_time() - t0

    return lambda: max(run(steps + 1) - run(1), 1e-9) / steps


# ---------------------------------------------------------------------------------------------
# torch + Opacus
# ---------------------------------------------------------------------------------------------
def _torch_kan(torch, model: KAN):
    """The same KAN in torch (float64): an ``nn.Linear`` holding W (trained), tanh, then the same
    uniform cubic B-spline basis on [−1, 1] contracted with the fixed c (a buffer)."""
    nn = torch.nn
    h = 2.0 / (model.p - 3)
    knots = -1.0 + (np.arange(model.p) - 3.0) * h

    class TorchKAN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(model.d * model.p, model.m, bias=False, dtype=torch.float64)
            with torch.no_grad():
                self.lin.weight.copy_(torch.from_numpy(model.W0))
            self.register_buffer("c", torch.from_numpy(model.c.copy()))
            self.register_buffer("t", torch.from_numpy(knots))

        def forward(self, H):
            s = torch.tanh(self.lin(H) / math.sqrt(model.d))               # (B, m)
            uu = (s[..., None] - self.t) / h                               # (B, m, p)
            w = torch.where(uu > 2.0, 4.0 - uu, uu)                        # N₃(u) = N₃(4 − u)
            n3 = torch.where(w < 1.0, w ** 3 / 6.0,
                             (-3.0 * w ** 3 + 12.0 * w ** 2 - 12.0 * w + 4.0) / 6.0)
            basis = torch.where(w > 0.0, n3, torch.zeros_like(n3))
            return (basis * self.c).sum(dim=(1, 2)) / math.sqrt(model.m)

    return TorchKAN()


def _correlated_dp_optimizer(opacus, ghost: bool = False):
    from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
    from opacus.optimizers.optimizer import _check_processed_flag, _mark_as_processed
    import torch

    class CorrelatedDPOptimizer(DPOptimizerFastGradientClipping if ghost else DPOptimizer):
        """DPOptimizer whose noise is C·κ(Z_t − λZ_{t−1}) instead of C·κZ_t."""
        lam = LAM

        def add_noise(self) -> None:
            for p in self.params:
                _check_processed_flag(p.summed_grad)
                z = torch.randn(p.summed_grad.shape, dtype=p.summed_grad.dtype,
                                generator=self.generator)
                prev = self.state[p].get("z_prev")
                noise = z if prev is None else z - self.lam * prev
                self.state[p]["z_prev"] = z
                p.grad = (p.summed_grad + self.noise_multiplier * self.max_grad_norm * noise).view_as(p)
                _mark_as_processed(p.summed_grad)

    return CorrelatedDPOptimizer


def _opacus_step(torch, opacus, model: KAN, H: np.ndarray, y: np.ndarray, W: np.ndarray,
                 kappa: float = KAPPA):
    """(step, net): ``step()`` runs one Opacus DP-SGD step + projection on the batch; losses are
    summed and the learning rate is η/B, so the update is ours exactly (Opacus clips with
    C/(‖g‖ + 1e-6), ours with C/‖g‖)."""
    from opacus import GradSampleModule

    net = GradSampleModule(_torch_kan(torch, model), loss_reduction="sum")
    with torch.no_grad():
        net._module.lin.weight.copy_(torch.from_numpy(W))
    B = H.shape[0]
    opt = _correlated_dp_optimizer(opacus)(
        torch.optim.SGD(net.parameters(), lr=ETA / B), noise_multiplier=kappa, max_grad_norm=CLIP,
        expected_batch_size=B, loss_reduction="sum")
    Ht, yt = torch.from_numpy(H), torch.from_numpy(y)
    W0 = torch.from_numpy(model.W0)
    weight = net._module.lin.weight

    def step() -> None:
        opt.zero_grad()
        loss = torch.nn.functional.softplus(-yt * net(Ht)).sum()       # ℓ(z) = log(1 + e^{−z})
        loss.backward()
        opt.step()
        with torch.no_grad():                                           # Π onto B(W₀, R_*)
            diff = weight - W0
            dn = float(torch.linalg.vector_norm(diff))
            if dn > R_STAR:
                weight.copy_(W0 + diff * (R_STAR / dn))
    return step, net


class _LogisticLoss:
    """ℓ(y f) = log(1 + e^{−y f}) as a criterion Opacus' ghost-clipping wrapper can switch to
    per-sample (it sets ``reduction`` to "none" for the first backward pass)."""
    reduction = "sum"

    def __call__(self, f, y):
        import torch
        loss = torch.nn.functional.softplus(-y * f)
        return loss if self.reduction == "none" else loss.sum()


def _opacus_ghost_step(torch, opacus, model: KAN, H: np.ndarray, y: np.ndarray, W: np.ndarray,
                       kappa: float = KAPPA):
    """As :func:`_opacus_step` with Opacus' ghost clipping (``GradSampleModuleFastGradientClipping``
    + ``DPOptimizerFastGradientClipping`` + ``DPLossFastGradientClipping``): per-example norms
    from the layer's activations and backprops (for a linear layer on non-sequence input that is
    the same ‖a‖·‖h‖ trick as ours), then a second backward pass on the reweighted loss — no
    B×m×dp tensor, so every batch size runs."""
    from opacus.grad_sample import GradSampleModuleFastGradientClipping
    from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping

    net = GradSampleModuleFastGradientClipping(_torch_kan(torch, model), max_grad_norm=CLIP,
                                               use_ghost_clipping=True, loss_reduction="sum")
    with torch.no_grad():
        net._module.lin.weight.copy_(torch.from_numpy(W))
    B = H.shape[0]
    opt = _correlated_dp_optimizer(opacus, ghost=True)(
        torch.optim.SGD(net.parameters(), lr=ETA / B), noise_multiplier=kappa, max_grad_norm=CLIP,
        expected_batch_size=B, loss_reduction="sum")
    criterion = DPLossFastGradientClipping(net, opt, _LogisticLoss(), loss_reduction="sum")
    Ht, yt = torch.from_numpy(H), torch.from_numpy(y)
    W0 = torch.from_numpy(model.W0)
    weight = net._module.lin.weight

    def step() -> None:
        opt.zero_grad()
        criterion(net(Ht), yt).backward()
        opt.step()
        with torch.no_grad():
            diff = weight - W0
            dn = float(torch.linalg.vector_norm(diff))
            if dn > R_STAR:
                weight.copy_(W0 + diff * (R_STAR / dn))
    return step, net


def _opacus_fits(B: int, d: int) -> bool:
    return B * M * d * P <= OPACUS_MAX_ELEMENTS


# ---------------------------------------------------------------------------------------------
# correctness (untimed)
# ---------------------------------------------------------------------------------------------
def test_step_matches_algorithm():
    """The benchmarked kernel is dp_sgd_correlated's step: one step with the same generator gives
    the same W (full batch n = B, so the schedule draws nothing and the noise is Z_1, Z_2, ...);
    three steps, so the correlation λZ_{t−1} enters, with a radius the iterates reach."""
    model, H, y, _ = _instance(64, 100)
    r_star = 0.6
    run = dp_sgd_correlated(model, H, y, T=4, eta=ETA, B=64, C_clip=CLIP, lam=LAM,
                            noise_multiplier=KAPPA, R_star=r_star, rng=[np.random.default_rng(3)])
    assert run.projection_active[0] > 0
    step = NumpyKanStep(model, H, y, np.random.default_rng(3), r_star=r_star)
    W = model.W0[None]
    for _ in range(3):
        W = step(W)
    np.testing.assert_allclose(W, run.W, rtol=1e-12, atol=1e-12)


def test_loop_matches_vectorized_step():
    model, H, y, W = _instance(32, 20)
    a = NumpyKanStep(model, H, y, np.random.default_rng(4))(W[None])[0]
    b = loop_step(model, H, y, W, np.random.default_rng(4), np.zeros_like(W))
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_torch_kan_matches_ours(torch_and_opacus):
    """Same outputs f_W(x_i), same per-example gradient norms (Opacus' grad_sample against
    |ℓ'|·‖a‖·‖h‖), and — without noise — the same DP-SGD step, with clipping and projection."""
    torch, opacus = torch_and_opacus
    model, H, y, W = _instance(64, 100)
    step, net = _opacus_step(torch, opacus, model, H, y, W, kappa=0.0)
    Ht, yt = torch.from_numpy(H), torch.from_numpy(y)

    f_t = net(Ht)
    f, a = model.forward_and_factors(W[None], H)
    np.testing.assert_allclose(f_t.detach().numpy(), f[0], rtol=1e-12, atol=1e-13)

    torch.nn.functional.softplus(-yt * f_t).sum().backward()
    gs = net._module.lin.weight.grad_sample                              # (B, m, dp)
    lp = logistic_derivative(y * f[0]) * y
    norms = np.abs(lp) * np.linalg.norm(a[0], axis=1) * np.linalg.norm(H, axis=1)
    np.testing.assert_allclose(gs.reshape(64, -1).norm(dim=1).numpy(), norms, rtol=1e-10)
    assert (norms > CLIP).any() and (norms < CLIP).any()                # clipping is exercised
    net.zero_grad()

    step()
    ours = NumpyKanStep(model, H, y, np.random.default_rng(0))(W[None], kappa=0.0)[0]
    # compare the displacements W_1 − W, not W_1 (W's entries would swamp a wrong update); Opacus'
    # C/(‖g‖ + 1e-6) moves each clipped example's weight by ≈ 1e-6/‖g‖ ≈ 3e-6 relative
    disp, want = net._module.lin.weight.detach().numpy() - W, ours - W
    np.testing.assert_allclose(disp, want, rtol=0, atol=2e-5 * np.abs(want).max())


def test_torch_kan_ghost_clipping_matches_ours(torch_and_opacus):
    """Opacus' ghost-clipping step, without noise, makes our update (to Opacus' 1e-6)."""
    torch, opacus = torch_and_opacus
    model, H, y, W = _instance(64, 100)
    step, net = _opacus_ghost_step(torch, opacus, model, H, y, W, kappa=0.0)
    step()
    ours = NumpyKanStep(model, H, y, np.random.default_rng(0))(W[None], kappa=0.0)[0]
    disp, want = net._module.lin.weight.detach().numpy() - W, ours - W
    np.testing.assert_allclose(disp, want, rtol=0, atol=2e-5 * np.abs(want).max())


# ---------------------------------------------------------------------------------------------
# timed
# ---------------------------------------------------------------------------------------------
@pytest.mark.benchmark(group="kan-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES)
def test_bench_numpy(benchmark, B, d):
    model, H, y, W = _instance(B, d)
    benchmark(NumpyKanStep(model, H, y, np.random.default_rng(0)), W[None])


@pytest.mark.benchmark(group="kan-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES[:2])
def test_bench_python_loop(benchmark, B, d):
    model, H, y, W = _instance(B, d)
    z_prev = np.zeros_like(W)
    benchmark.pedantic(loop_step, (model, H, y, W, np.random.default_rng(0), z_prev), rounds=3)


@pytest.mark.benchmark(group="kan-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES)
def test_bench_opacus(benchmark, torch_and_opacus, B, d):
    if not _opacus_fits(B, d):
        pytest.skip(f"Opacus would materialise B·m·dp = {B * M * d * P:.2g} float64 per-example "
                    f"gradients ({B * M * d * P * 8 / 1e9:.1f} GB)")
    torch, opacus = torch_and_opacus
    step, _ = _opacus_step(torch, opacus, *_instance(B, d))
    benchmark.pedantic(step, warmup_rounds=1, rounds=10 if B * d < 1e6 else 3)


@pytest.mark.benchmark(group="kan-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES)
def test_bench_opacus_ghost(benchmark, torch_and_opacus, B, d):
    torch, opacus = torch_and_opacus
    step, _ = _opacus_ghost_step(torch, opacus, *_instance(B, d))
    benchmark.pedantic(step, warmup_rounds=1, rounds=10 if B * d < 1e6 else 3)


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()                                              # warm-up (allocations, hooks)
    ts = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        ts.append(time.process_time() - t0)
    return float(np.median(ts))


RATIO_POINTS = [(64, 100, 10.0), (256, 100, 10.0), (256, 1000, 10.0), (4096, 100, 10.0)]


def _side_by_side(torch, opacus, B: int, d: int, theirs_factory) -> dict:
    """Kernel, algorithm per step and an Opacus step timed in interleaved blocks (5 × median of
    a few calls each, one thread each) so machine load affects all alike; medians of the blocks.
    CPU time (``time.process_time``): wall time under load counts the waits for
    a core, which land mostly on the slower side (docs/performance.md)."""
    model, H, y, W = _instance(B, d)
    kernel = NumpyKanStep(model, H, y, np.random.default_rng(0))
    ours = lambda: kernel(W[None])                    # noqa: E731
    # more steps where a step is short, so the difference of two runs is not lost in timer noise
    per_step = algorithm_per_step(model, H, y, steps=20 if B * d <= 256 * 100 else 5)
    theirs, _ = theirs_factory(torch, opacus, model, H, y, W)
    reps = 10 if B * d <= 256 * 100 else 3
    t_ours, t_alg, t_theirs = [], [], []
    for _ in range(5):
        t_ours.append(_median_time(ours, reps))
        t_alg.append(float(np.median([per_step() for _ in range(3)])))
        t_theirs.append(_median_time(theirs, reps))
    ours_s, alg_s, opacus_s = (float(np.median(t)) for t in (t_ours, t_alg, t_theirs))
    return dict(kernel_s=ours_s, algorithm_step_s=alg_s, opacus_s=opacus_s,
                ratio_kernel=opacus_s / ours_s, ratio_algorithm=opacus_s / alg_s,
                omp_threads=os.environ.get("OMP_NUM_THREADS"), run=ours)


def _report(benchmark, label: str, B: int, d: int, r: dict) -> None:
    run = r.pop("run")
    benchmark.extra_info.update(r)
    benchmark.pedantic(run, rounds=1, iterations=1)
    print(f"\nKAN B={B} d={d}: kernel {r['kernel_s'] * 1e3:.2f} ms, algorithm "
          f"{r['algorithm_step_s'] * 1e3:.2f} ms/step, {label} {r['opacus_s'] * 1e3:.2f} ms: "
          f"{r['ratio_kernel']:.1f}x / {r['ratio_algorithm']:.1f}x")


@pytest.mark.parametrize("B, d, target", RATIO_POINTS)
def test_ratio_vs_opacus(torch_and_opacus, benchmark, B, d, target):
    """The target: ≥ 10× a torch version of the same KAN under Opacus (GradSampleModule +
    DPOptimizer), timed side by side.  Both the kernel (one step on a given batch) and
    dp_sgd_correlated's own per-step time (differenced, so set-up is excluded) are recorded; the
    target is asserted on the latter, since that is what a sweep pays."""
    torch, opacus = torch_and_opacus
    r = _side_by_side(torch, opacus, B, d, _opacus_step)
    _report(benchmark, "Opacus", B, d, r)
    assert r["ratio_algorithm"] >= target, (
        f"dp_sgd_correlated step only {r['ratio_algorithm']:.1f}x the torch KAN under Opacus at B={B}, d={d}")


@pytest.mark.xfail(strict=False, reason=(
    "known shortfall (docs/performance.md): ghost clipping does the same two B·m·dp products as "
    "our step plus one more backward pass, so at equal float64 arithmetic dp_sgd_correlated is "
    "2.4-6.1x (CPU time) faster, not 10x"))
@pytest.mark.parametrize("B, d, target", RATIO_POINTS)
def test_ratio_vs_opacus_ghost(torch_and_opacus, benchmark, B, d, target):
    """The same target against Opacus' ghost clipping, the mode a researcher would pick for a
    large layer: it computes per-example norms without the B×m×dp tensor (as we do), so the
    margin is what our per-step work and overheads leave."""
    torch, opacus = torch_and_opacus
    r = _side_by_side(torch, opacus, B, d, _opacus_ghost_step)
    _report(benchmark, "Opacus ghost", B, d, r)
    assert r["ratio_algorithm"] >= target, (
        f"dp_sgd_correlated step only {r['ratio_algorithm']:.1f}x the torch KAN under Opacus ghost "
        f"clipping at B={B}, d={d}")


@pytest.mark.parametrize("B, d", [(256, 100)])
def test_ratio_vs_python_loop(benchmark, B, d):
    model, H, y, W = _instance(B, d)
    kernel = NumpyKanStep(model, H, y, np.random.default_rng(0))
    z_prev = np.zeros_like(W)
    t_loop = _median_time(lambda: loop_step(model, H, y, W, np.random.default_rng(0), z_prev), 3)
    t_ours = _median_time(lambda: kernel(W[None]), 20)
    benchmark.extra_info["ratio"] = t_loop / t_ours
    benchmark.pedantic(lambda: kernel(W[None]), rounds=1, iterations=1)
    assert t_loop / t_ours >= 10.0, f"vectorized KAN step only {t_loop / t_ours:.1f}x the per-sample loop"


# ---------------------------------------------------------------------------------------------
# the B-spline basis
# ---------------------------------------------------------------------------------------------
def _basis_input(n: int, d: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1.0, 1.0, (n, d)) / math.sqrt(d)


def _scipy_design(v: np.ndarray, p: int) -> np.ndarray:
    """The same basis from scipy: cubic B-splines on the p + 4 uniform knots −1 − 3h, …, 1 + 3h."""
    from scipy.interpolate import BSpline
    h = 2.0 / (p - 3)
    t = -1.0 + (np.arange(p + 4) - 3.0) * h
    return BSpline.design_matrix(v.ravel(), t, 3).toarray().reshape(v.shape + (p,))


def _loop_basis(v: np.ndarray, p: int) -> np.ndarray:
    """Cox–de Boor per scalar, the textbook recursion a first implementation uses."""
    h = 2.0 / (p - 3)
    t = -1.0 + (np.arange(p + 4) - 3.0) * h
    out = np.zeros(v.shape + (p,))
    for idx, x in np.ndenumerate(v):
        N = [1.0 if t[i] <= x < t[i + 1] or (x == t[-4] and t[i] < x <= t[i + 1]) else 0.0
             for i in range(p + 3)]
        for k in range(1, 4):
            N = [(x - t[i]) / (t[i + k] - t[i]) * N[i] + (t[i + k + 1] - x) / (t[i + k + 1] - t[i + 1]) * N[i + 1]
                 for i in range(p + 3 - k)]
        out[idx] = N[:p]
    return out


def test_basis_baselines_agree():
    v = _basis_input(16, 10)
    ours = bspline_basis(v, P)
    np.testing.assert_allclose(_scipy_design(v, P), ours, atol=1e-12)
    np.testing.assert_allclose(_loop_basis(v, P), ours, atol=1e-12)


@pytest.mark.benchmark(group="bspline-basis")
@pytest.mark.parametrize("n, d", [(256, 100), (256, 1000), (4096, 100)])
def test_bench_basis_ours(benchmark, n, d):
    v = _basis_input(n, d)
    benchmark(bspline_basis, v, P)


@pytest.mark.benchmark(group="bspline-basis")
@pytest.mark.parametrize("n, d", [(256, 100), (256, 1000)])
def test_bench_basis_scipy(benchmark, n, d):
    v = _basis_input(n, d)
    benchmark.pedantic(_scipy_design, (v, P), rounds=5)


@pytest.mark.benchmark(group="bspline-basis")
@pytest.mark.parametrize("n, d", [(16, 100)])
def test_bench_basis_python_loop(benchmark, n, d):
    v = _basis_input(n, d)
    benchmark.pedantic(_loop_basis, (v, P), rounds=3)


@pytest.mark.benchmark(group="bspline-contract")
@pytest.mark.parametrize("B", [256, 4096])
def test_bench_contract_local(benchmark, B):
    """The second layer's ⟨c_j, h(s_j)⟩ and ⟨c_j, h'(s_j)⟩ from the four non-zero splines."""
    rng = np.random.default_rng(0)
    s, c = np.tanh(rng.standard_normal((1, B, M))), rng.standard_normal((M, P))
    benchmark(spline_contract, s, c, P, (0, 1))


@pytest.mark.benchmark(group="bspline-contract")
@pytest.mark.parametrize("B", [256, 4096])
def test_bench_contract_full_basis(benchmark, B):
    """The same two contractions through the full (B, m, p) basis and an einsum."""
    rng = np.random.default_rng(0)
    s, c = np.tanh(rng.standard_normal((1, B, M))), rng.standard_normal((M, P))
    benchmark(lambda: [np.einsum("rnmk,mk->rnm", bspline_basis(s, P, k), c) for k in (0, 1)])
