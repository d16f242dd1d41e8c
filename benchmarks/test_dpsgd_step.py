"""One clipped, noised DP-SGD step for least squares: the library's kernel
(:func:`algorithms.primitives.linear_dpsgd_step`, noise from
:class:`algorithms.primitives.NormalBlocks`) against (a) a per-sample Python loop and (b) Opacus
on CPU, at batch 64/256/4096 and d = 100/1000.  The step is the per-example-clipped
gradient of DP-SSGD / DP-AMBSSGD (Varshney, Thakurta, Jain, Algorithms 1–2) and of any DP-SGD on
a linear model.

The kernel benchmarked is the library's, not a copy: a per-example least-squares gradient is the
rank-one x_i r_i, so its norm is |r_i|·‖x_i‖, the clipped residual is sign(r_i)·min(|r_i|, C/‖x_i‖)
with C/‖x_i‖ computed once per data set, and the clipped sum is Xᵀc — two matrix-vector products
per step, no B×d per-example tensor.  Both sides run float64 on one thread.  Every check runs
for both of the step's kernels: ``numpy`` (two BLAS gemv) and ``fused`` (one pass per group of
rows, numba, extra ``fast``; skipped without numba).  One additional row runs both sides in
float32 (Opacus' default dtype), beside, not instead of, the float64 target.
"""
import numpy as np
import pytest
from _timing import cpu_side_by_side, load_average

from algorithms.primitives import (NormalBlocks, fused_kernel_available, least_squares_clip_limits,
                                   linear_dpsgd_step)

BATCHES = (64, 256, 4096)
# "numpy": two BLAS gemv passes over X (the default without numba); "fused": the numba kernel
# (extra ``fast``), one pass per group of rows.  Fused cases skip cleanly without numba.
KERNELS = ("numpy", pytest.param("fused", marks=pytest.mark.skipif(
    not fused_kernel_available(), reason="numba not installed (pip install -e '.[fast]')")))
DIMS = (100, 1000)
CLIP, NOISE, ETA = 1.0, 1.0, 0.1


class LibraryStep:
    """The library's step on a fixed batch: limits C/‖x_i‖ once per data set (as a sweep would),
    noise std = NOISE × CLIP (add/remove sensitivity of the clipped sum) drawn in blocks."""

    def __init__(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                 kernel: str = "numpy"):
        self.X, self.y, self.kernel = X, y, kernel
        self.limits = least_squares_clip_limits(X, CLIP)
        self.noise = NormalBlocks(rng, X.shape[1], scale=NOISE * CLIP)
        if kernel == "fused":     # numba's import and compile (or cache load) are not timed
            linear_dpsgd_step(np.zeros(X.shape[1]), X, y, lr=ETA, limits=self.limits,
                              noise=np.zeros(X.shape[1]), kernel=kernel)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        return linear_dpsgd_step(w, self.X, self.y, lr=ETA, limits=self.limits,
                                 noise=self.noise.next(), kernel=self.kernel)


class Float32Step:
    """The library's step (numpy path) with every array in float32, for the float32-on-both-sides
    row: Opacus' default dtype is float32, so this is what a researcher's Opacus run computes in.
    Noise drawn as float32 normals in blocks (NormalBlocks draws float64)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
        self.X, self.y = X.astype(np.float32), y.astype(np.float32)
        self.limits = least_squares_clip_limits(X, CLIP).astype(np.float32)
        self.rng, self.block, self.pos = rng, max(1, (1 << 16) // X.shape[1]), 0
        self.buf = np.empty((0, X.shape[1]), dtype=np.float32)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        if self.pos == len(self.buf):
            self.buf = self.rng.standard_normal((self.block, self.X.shape[1]), dtype=np.float32)
            self.buf *= np.float32(NOISE * CLIP)
            self.pos = 0
        self.pos += 1
        return linear_dpsgd_step(w, self.X, self.y, lr=ETA, limits=self.limits,
                                 noise=self.buf[self.pos - 1], kernel="numpy")


def loop_step(X: np.ndarray, y: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    g = np.zeros_like(w)
    for i in range(X.shape[0]):                       # what a per-sample implementation does
        gi = X[i] * (X[i] @ w - y[i])
        gi *= min(1.0, CLIP / max(np.linalg.norm(gi), 1e-300))
        g += gi
    g += NOISE * CLIP * rng.standard_normal(X.shape[1])
    return w - ETA * g / X.shape[0]


def _data(B: int, d: int):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((B, d)) / np.sqrt(d)
    w = rng.standard_normal(d)
    return X, X @ w + 0.1 * rng.standard_normal(B), np.zeros(d), rng


def _opacus_model(torch, B: int, d: int, noise: float = NOISE, dtype: str = "float64"):
    """nn.Linear under GradSampleModule + DPOptimizer, float64 (or ``dtype``), Opacus' default
    mean reduction: the update is w − lr·(Σ_i clip_C(g_i) + noise)/B, as ours."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    layer = torch.nn.Linear(d, 1, bias=False).to(getattr(torch, dtype))
    model = GradSampleModule(layer, loss_reduction="mean")
    opt = DPOptimizer(torch.optim.SGD(model.parameters(), lr=ETA), noise_multiplier=noise,
                      max_grad_norm=CLIP, expected_batch_size=B, loss_reduction="mean")
    return model, opt


def _opacus_step(torch, B: int, d: int, dtype: str = "float64"):
    X, y, _, _ = _data(B, d)
    Xt, yt = torch.tensor(X, dtype=getattr(torch, dtype)), torch.tensor(y, dtype=getattr(torch, dtype))
    model, opt = _opacus_model(torch, B, d, dtype=dtype)

    def step():
        opt.zero_grad()
        loss = 0.5 * ((model(Xt).squeeze(1) - yt) ** 2).mean()
        loss.backward()
        opt.step()
    return step


@pytest.mark.parametrize("kernel", KERNELS)
def test_library_step_matches_the_loop(kernel):
    """Same numbers as the per-sample loop, noise included (same generator, same order)."""
    X, y, _, _ = _data(64, 100)
    w = np.random.default_rng(1).standard_normal(100)
    a = LibraryStep(X, y, np.random.default_rng(2), kernel)(w)
    b = loop_step(X, y, w, np.random.default_rng(2))
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
def test_library_step_matches_opacus_without_noise(torch_and_opacus, kernel):
    """Opacus computes the same update (up to the 1e-6 it adds in C/(‖g‖ + 1e-6))."""
    torch, _ = torch_and_opacus
    X, y, w, _ = _data(256, 100)
    assert np.mean(np.abs(y) * np.linalg.norm(X, axis=1) > CLIP) > 0.2   # clipping is exercised
    model, opt = _opacus_model(torch, 256, 100, noise=0.0)
    torch.nn.init.zeros_(model._module.weight)
    opt.zero_grad()
    (0.5 * ((model(torch.tensor(X)).squeeze(1) - torch.tensor(y)) ** 2).mean()).backward()
    opt.step()
    ours = linear_dpsgd_step(w, X, y, lr=ETA, limits=least_squares_clip_limits(X, CLIP),
                             noise=np.zeros(100), kernel=kernel)
    np.testing.assert_allclose(model._module.weight.detach().numpy()[0], ours, rtol=1e-5, atol=1e-9)


@pytest.mark.benchmark(group="linreg-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_bench_library(benchmark, B, d, kernel):
    X, y, w, rng = _data(B, d)
    benchmark(LibraryStep(X, y, rng, kernel), w)


@pytest.mark.benchmark(group="linreg-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES[:2])
def test_bench_python_loop(benchmark, B, d):
    X, y, w, rng = _data(B, d)
    benchmark(loop_step, X, y, w, rng)


@pytest.mark.benchmark(group="linreg-dpsgd-step")
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("B", BATCHES)
def test_bench_opacus(benchmark, torch_and_opacus, B, d):
    torch, _ = torch_and_opacus
    benchmark(_opacus_step(torch, B, d))


def _ratio(benchmark, fns: dict, label: str, **kw) -> float:
    """Ratio theirs/ours of the minimum CPU time per call (the least disturbed call of each,
    interleaved), the ratio asserted; the ratio of medians is recorded beside it.  Minima, because
    under load the longer call's CPU time inflates more (a call spanning a context switch resumes
    with cold caches): at load 14 the medians put Opacus 2.9× above its minimum and our step
    1.6×, which would flatter our ratio by 1.8×."""
    t = cpu_side_by_side(fns, **kw)
    (ours_med, ours_min), (theirs_med, theirs_min) = t["ours"], t["theirs"]
    info = dict(ours_min_s=ours_min, theirs_min_s=theirs_min, ratio=theirs_min / ours_min,
                ours_cpu_median_s=ours_med, theirs_cpu_median_s=theirs_med,
                ratio_of_medians=theirs_med / ours_med, load_average=load_average())
    benchmark.extra_info.update(info)
    benchmark.pedantic(fns["ours"], rounds=1, iterations=1)
    print(f"\n{label}: minima ours {ours_min * 1e6:.1f} µs, theirs {theirs_min * 1e6:.1f} µs: "
          f"{info['ratio']:.1f}x; CPU medians {ours_med * 1e6:.1f} / {theirs_med * 1e6:.1f} µs: "
          f"{info['ratio_of_medians']:.1f}x; load {info['load_average']:.1f}")
    return info["ratio"]


_D1000 = ("known shortfall of the numpy path only (docs/performance.md): at d = 1000 it is two "
          "float64 matrix-vector products over the 2 MB batch (≈ 33 µs each, the rate at which "
          "this CPU fills L1 from L2/L3) plus the noise: 75-83 µs against Opacus' least disturbed "
          "1.14-2.6 ms, 16.0-21.4x in five runs; the fused kernel (≈ 57-64 µs) "
          "is the one held to 20x")


@pytest.mark.parametrize("B, d, target", [(256, 100, 20.0), (256, 1000, 20.0)])
@pytest.mark.parametrize("kernel", KERNELS)
def test_ratio_vs_opacus(torch_and_opacus, benchmark, B, d, target, kernel, request):
    """The target: ≥ 20× Opacus (GradSampleModule + DPOptimizer, float64, one thread) at
    B = 256, d = 100 and 1000; CPU times side by side, interleaved (``_timing.cpu_side_by_side``),
    one-sided (faster is fine).  At d = 1000 the fused kernel meets it with little margin
    (20.0-44.6x over nine runs: Opacus' own minimum
    moves between 1.14 and 3.1 ms); the numpy path does not (xfail, reason above)."""
    if kernel == "numpy" and d == 1000:
        request.applymarker(pytest.mark.xfail(strict=False, reason=_D1000))
    torch, _ = torch_and_opacus
    X, y, w, rng = _data(B, d)
    step = LibraryStep(X, y, rng, kernel)
    ratio = _ratio(benchmark, {"ours": lambda: step(w), "theirs": _opacus_step(torch, B, d)},
                   f"linear step ({kernel}) vs Opacus B={B} d={d}")
    assert ratio >= target, f"library step only {ratio:.1f}x Opacus at B={B}, d={d}"


_D1000_F32 = ("float32 on both sides, numpy path (two sgemv over 1 MB + float32 noise ≈ 45-50 µs) "
              "against Opacus float32 (≈ 1 ms): 19.8x measured at load 9, not clearly 20x")


@pytest.mark.parametrize("B, d, target", [
    (256, 100, 20.0), pytest.param(256, 1000, 20.0, marks=pytest.mark.xfail(strict=False, reason=_D1000_F32))])
def test_ratio_vs_opacus_float32(torch_and_opacus, benchmark, B, d, target):
    """An additional row, not the target: both sides in float32 (Opacus' default dtype;
    dprates computes in float64).  Same one-sided 20× check.  The update is Opacus' to float32
    rounding (checked below at 1e-4 relative)."""
    torch, _ = torch_and_opacus
    X, y, w, rng = _data(B, d)
    step, w32 = Float32Step(X, y, rng), w.astype(np.float32)
    assert step(w32).dtype == np.float32
    ratio = _ratio(benchmark, {"ours": lambda: step(w32), "theirs": _opacus_step(torch, B, d, "float32")},
                   f"linear step float32 (numpy) vs Opacus float32 B={B} d={d}")
    assert ratio >= target, f"float32 step only {ratio:.1f}x Opacus float32 at B={B}, d={d}"


def test_float32_step_matches_opacus_float32_without_noise(torch_and_opacus):
    torch, _ = torch_and_opacus
    X, y, w, _ = _data(256, 100)
    model, opt = _opacus_model(torch, 256, 100, noise=0.0, dtype="float32")
    torch.nn.init.zeros_(model._module.weight)
    opt.zero_grad()
    Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    (0.5 * ((model(Xt).squeeze(1) - yt) ** 2).mean()).backward()
    opt.step()
    ours = linear_dpsgd_step(w.astype(np.float32), X.astype(np.float32), y.astype(np.float32),
                             lr=ETA, limits=least_squares_clip_limits(X, CLIP).astype(np.float32),
                             noise=np.zeros(100, np.float32), kernel="numpy")
    assert ours.dtype == np.float32
    np.testing.assert_allclose(model._module.weight.detach().numpy()[0], ours, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("B, d", [(256, 100), (256, 1000)])
@pytest.mark.parametrize("kernel", KERNELS)
def test_ratio_vs_python_loop(benchmark, B, d, kernel):
    X, y, w, rng = _data(B, d)
    step = LibraryStep(X, y, rng, kernel)
    ratio = _ratio(benchmark, {"ours": lambda: step(w), "theirs": lambda: loop_step(X, y, w, rng)},
                   f"linear step ({kernel}) vs loop B={B} d={d}", blocks=3, calls=10)
    assert ratio >= 10.0, f"vectorized step only {ratio:.1f}x the per-sample loop"


@pytest.mark.skipif(not fused_kernel_available(), reason="numba not installed (pip install -e '.[fast]')")
@pytest.mark.parametrize("B, d", [(256, 100), (256, 1000)])
def test_ratio_fused_vs_numpy_kernel(benchmark, B, d):
    """The fused kernel earns its optional dependency: ≥ 1.1× the numpy path's step (noise draw
    included, both through ``linear_dpsgd_step``), one-sided.  Measured 1.2-1.35× (reads X from
    memory once instead of twice, less per-call overhead at d = 100); a kernel that fell back to
    two passes over X would measure ≈ 1.0× and fail."""
    X, y, w, _ = _data(B, d)
    fused = LibraryStep(X, y, np.random.default_rng(0), "fused")
    plain = LibraryStep(X, y, np.random.default_rng(0), "numpy")
    ratio = _ratio(benchmark, {"ours": lambda: fused(w), "theirs": lambda: plain(w)},
                   f"linear step fused vs numpy kernel B={B} d={d}", blocks=15, calls=40)
    assert ratio >= 1.1, f"fused kernel only {ratio:.2f}x the numpy path at B={B}, d={d}"
