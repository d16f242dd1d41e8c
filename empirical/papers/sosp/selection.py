"""Model-selection experiments of the SOSP paper (Tao et al.):
Algorithm 4 (private model selection), Theorem 4 and eq. 141–142's errors.

``sosp.select.d`` (T = 10 candidates fixed: the Hessian error's d-exponent 1, two-sided; the
gradient's √d rejected) and ``sosp.select.d.tied`` (T = ⌈c_T U M²/(√ρ α^{5/2})⌉ tied to
Theorem 3's α, c_T = ``C_T`` = 10: exponent 3/4, two-sided; the fixed-T exponent rejected);
``sosp.select.eps`` / ``.n`` / ``.m`` / ``.T`` (eq. 142's privacy term in ε, n, m and T at d = 32,
two-sided; its sampling term, or the unaveraged per-client noise, rejected);
``sosp.select.grad.{n,epsilon,m,T,G,d}`` (the released gradients' error against eq. 141's privacy
term, two-sided: the norm of the averaged Gaussian noise attains it).  The operator
norm of the Hessian error is fitted two-sided (a Wigner matrix attains eq. 142); whether the
selected candidate is an α-SOSP is recorded per row (``selected_is_sosp``).  Private:
``epsilon_*`` columns from dp-accounting (2T releases per client, composed).
"""
from __future__ import annotations

import math

import numpy as np

import bounds
from algorithms.sosp.selection import private_model_selection
from bounds.rates.sosp import log_delta_value
from empirical.core.experiment import Check, Experiment
from empirical.papers.sosp.common import (C_T, DELTA, accountant_multiplier, privacy_columns, problem,
                                   rate_values, register_experiment, with_G)
from algorithms.noise_meter import NoiseMeter, observer
from empirical.papers.sosp.problems import CosineSaddle

__all__ = ["run_selection"]


def _selection_T(point: dict) -> int:
    if point.get("T_tied", 0):
        prob = problem(point)
        vals = rate_values(point)
        alpha = bounds.get("sosp:thm3")(**{k: vals[k] for k in bounds.get("sosp:thm3").variables})
        steps = prob.U * prob.M**2 / (math.sqrt(prob.hessian_lipschitz) * alpha**2.5)
        return max(2, math.ceil(float(point["c_T"]) * steps))
    return int(point["T"])


def _candidates(prob: CosineSaddle, T: int) -> np.ndarray:
    """T−1 strict saddles (y₁ = 0.3(t/T), v small: λ_min ≈ −γ cos y₁ < 0) and, last, the
    minimum (π, 0): an α-SOSP for every α, as Theorem 4 assumes."""
    X = np.zeros((T, prob.d))
    X[:-1, 0] = 0.3 * np.arange(T - 1) / T
    X[:-1, 1:] = 0.05
    X[-1, 0] = math.pi
    return X


def _selection_meter(meter: NoiseMeter, d: int):
    """Observe hook accumulating Algorithm 4's client noise (release − noise-free value) with
    scale 1; :func:`run_selection` then divides by the σ's the accountant priced: its multiplier
    z times each channel's sensitivity recomputed there (σ_g = z·2G_s/n, σ_H = z·2M_s√d/n), so a
    Hessian drawn at σ_g is caught even when the algorithm reports σ_H.  The Hessian's noise is
    its upper triangle (the lower one mirrors it: not independent)."""
    iu = np.triu_indices(d)
    meter.channel("gradient")
    meter.channel("hessian")

    def handle(kind, row, answer, sigma, X, _prev, *, clean):
        e = np.asarray(answer) - np.asarray(clean)
        if kind == "hessian":
            e = e[..., iu[0], iu[1]]
        meter.add(kind, row, e[None], 1.0)

    return observer(meter, handle)


def run_selection(point: dict, rngs: list) -> dict:
    """Algorithm 4 on T candidates; metric: the geometric mean over candidates of
    ‖∇²F̄(x_t) − ∇²F(x_t)‖_op (sampling error of the held-out Hessians + the aggregated
    symmetric Gaussian noise), per seed row."""
    d, m, n = int(point["d"]), int(point["m"]), int(point["n"])
    prob = problem(point)
    T = _selection_T(point)
    X = _candidates(prob, T)
    alpha = float(point["alpha"])
    R = len(rngs)
    meter = NoiseMeter(R)
    res = private_model_selection(
        X, client_grad_hess=prob.held_out_grad_hess,
        true_grad_hess=lambda Y: (prob.gradient(Y), prob.hessian(Y)), m=m, n=n,
        epsilon=float(point["epsilon"]), delta=float(point["delta"]), alpha=alpha,
        G_sens=prob.G_sens, M_sens=prob.M_sens, hessian_lipschitz=prob.hessian_lipschitz,
        omega=float(point["omega"]), rng=rngs, observe=_selection_meter(meter, d))
    sel = res.selected
    chosen = np.where(sel >= 0, sel, T - 1)
    a_sel = prob.alpha_emp(X[chosen])
    full = lambda v: np.full(R, float(v))  # noqa: E731
    # Algorithm 4's noise as the theorem sets it, recomputed here: z with dp-accounting's
    # ε(Gaussian(z)^{⊗2T}, δ) = ε (bisection), σ_g = z·2G_s/n, σ_H = z·2M_s√d/n
    eps, delta = float(point["epsilon"]), float(point["delta"])
    z_th = accountant_multiplier(eps, delta, 2 * T, hi=1e5)
    meter.claim("gradient", res.z * 2.0 * prob.G_sens / n)
    meter.claim("hessian", res.z * 2.0 * prob.M_sens * math.sqrt(d) / n)
    settings = {"used_noise_multiplier": full(res.z), "theory_noise_multiplier": full(z_th),
                "used_sigma_grad": full(res.sigma_grad),
                "theory_sigma_grad": full(z_th * 2.0 * prob.G_sens / n),
                "used_sigma_hess": full(res.sigma_hess),
                "theory_sigma_hess": full(z_th * 2.0 * prob.M_sens * math.sqrt(d) / n)}
    return {**settings, **meter.columns(), "hess_error": np.exp(np.mean(np.log(res.hess_error), axis=1)),
            "grad_error": np.exp(np.mean(np.log(res.grad_error), axis=1)),
            "selected": sel.astype(float), "selected_is_sosp": (a_sel <= alpha).astype(float),
            "alpha_selected": a_sel, "T": full(T), "sigma_hess": full(res.sigma_hess),
            "sigma_grad": full(res.sigma_grad), "noise_multiplier": full(res.z),
            "hess_threshold": full(res.hess_threshold), "grad_threshold": full(res.grad_threshold),
            **privacy_columns(res.privacy, R)}


def _selection_values(point: dict) -> dict:
    prob = problem(point)
    return {"d": float(point["d"]), "m": float(point["m"]), "n": float(point["n"]),
            "epsilon": float(point["epsilon"]), "log_delta": log_delta_value(point["delta"]),
            "omega": float(point["omega"]), "M": prob.M_sens, "T": float(_selection_T(point))}


def _selection_grad_values(point: dict) -> dict:
    v = _selection_values(point)
    v["G"] = problem(point).G_sens
    del v["M"]
    return v


_SEL_BASE = {"m": 2, "n": 200, "epsilon": 1.0, "delta": DELTA, "omega": 0.1, "alpha": 0.05,
             "s1": 0.15, "s2": 0.05, "k": 1}
_SEL_TOL = ("two-sided: the aggregated noise is a symmetric Gaussian matrix with entry std "
            "σ_H/√m, σ_H ∝ √d (Frobenius sensitivity 2M√d/n), whose operator norm is ≈ 2σ√d "
            "(Wigner), so eq. 142's d-exponent 1 is attained; the band spans the sampling term; "
            "0.1 covers the finite-d Wigner correction (E‖H‖/(2σ√d) rises from 0.91 at d = 16 "
            "to 0.97 at d = 64: +0.04 in slope; from d = 4 it would be +0.1, which is why the "
            "grid starts at 16; the quick grid stops at 64 because LAPACK's threaded eigensolver "
            "dominates the run time beyond) and 6-seed noise (CI half-width ≈ 0.02)")
_SEL_LEVEL = (1.5, 3.5)
register_experiment(Experiment(
    id="sosp.select.d", paper="sosp",
    title="Algorithm 4: Hessian error ‖∇²F̄ − ∇²F‖ vs d at a fixed number of candidates T=10",
    variable="d", quick_grid=(16, 24, 32, 48, 64), full_grid=(16, 32, 64, 128, 256),
    fixed={**_SEL_BASE, "T": 10, "T_tied": 0}, seeds=6, run=run_selection, metric="hess_error",
    bound_values=_selection_values,
    checks=(
        Check("sosp:thm4_hessian_error", "two-sided", 0.1, _SEL_TOL,
              level=_SEL_LEVEL,
              level_source="instance", level_reason="error/bound → 4zε/√(T·8 log(1.25/δ)) × E‖W‖/(2√d): the first factor "
                           "is 2.36 for the accountant's z of 2T Gaussian releases at (ε, δ) = "
                           "(1, 1e-5) (the Õ hides it), the Wigner factor is 0.91–0.97 on the grid, "
                           "the sampling term adds ≤ 10%"),
        Check("sosp:thm4_gradient_error", "reject", 0.1,
              "competing rate: the gradient release's error √d (eq. 141; what Hessian-vector "
              "products would reduce the d-dependence to, Remark 5); 0.1 as for the main check",
              values=_selection_grad_values),
    ),
    problem="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T candidates",
    algorithm="algorithms.sosp.nonconvex.private_model_selection (Algorithm 4)",
    private=True, privacy_rtol=1e-9))

register_experiment(Experiment(
    id="sosp.select.d.tied", paper="sosp",
    title="Algorithm 4: Hessian error vs d with T = ⌈c_T UM²/(√ρ α^{5/2})⌉ tied to Theorem 3's α",
    variable="d", quick_grid=(16, 24, 32, 48, 64), full_grid=(16, 32, 64, 128, 256),
    fixed={**_SEL_BASE, "T_tied": 1, "c_T": C_T}, seeds=6, run=run_selection,
    metric="hess_error", bound_values=lambda p: {**rate_values(p), "omega": float(p["omega"]),
                                                 "c_T": float(p["c_T"]),
                                                 "M_s": problem(p).M_sens},
    checks=(
        Check("sosp:thm4_hessian_error_tied", "two-sided", 0.1,
              _SEL_TOL + "; with T ∝ α^{−5/2} ∝ d^{−1/2} the exponent is 3/4 (T rounded to an "
                         "integer ≥ 2: ≤ 0.02 in slope)",
              level=_SEL_LEVEL,
              level_source="instance", level_reason="as for sosp.select.d: error/bound → 4zε/√(T_b·8 log(1.25/δ)) × the "
                           "Wigner factor (0.91–0.97), z now the accountant's for the 2T "
                           "releases of the rounded T and T_b the bound's unrounded "
                           "c_T·UM²/(√ρ α^{5/2}): the "
                           "first factor is 2.30–2.39 over the full grid (data-free), the "
                           "sampling term adds ≤ 10%, so the same band"),
        Check("sosp:thm4_hessian_error", "reject", 0.1,
              "competing prediction: the fixed-T exponent 1 (the slope a suite would predict if "
              "it ignored how T is set: T held at its value at the first grid d); 0.1 "
              "as for the main check",
              values=lambda p: {**_selection_values(p),
                                "T": float(_selection_T({**p, "d": 16}))}),
    ),
    problem="CosineSaddle(k=1) held-out records, m=2 clients × n=200",
    algorithm="algorithms.sosp.nonconvex.private_model_selection (Algorithm 4)",
    private=True, privacy_rtol=1e-9))



# --------------------------------------------------------------------------------------------
# Theorem 4 (eq. 142) beyond d: ε, n and m, each on an instance where the privacy term of the
# Hessian error dominates (d = 32, T = 10: the privacy/sampling ratio of the bound's two terms
# is d√(T·log_delta)/(ε√(n·log(d/ω))) ≥ 10 on every grid below)
# --------------------------------------------------------------------------------------------
def _noise_factor(eps: float, delta: float, T: int) -> float:
    """4zε/√(8T ln(1.25/δ)): the noise the accountant's z (2T releases) adds over the classical
    calibration inside eq. 142's log_delta (the level factor of ``sosp.select.d``)."""
    z = accountant_multiplier(eps, delta, 2 * T)
    return 4.0 * z * eps / math.sqrt(8.0 * T * math.log(1.25 / delta))


def _selection_values_effective(point: dict) -> dict:
    """:func:`_selection_values` with ε replaced by the ε at which eq. 142's classical
    calibration adds the noise the accountant's z adds, scaled to equal ε at ε = 1
    (ε·F(1)/F(ε), F = :func:`_noise_factor`): z·ε is not constant (RDP → (ε, δ), errata
    SOSP-E12), so the bound is compared with the noise actually added; the level factor then
    stays F(1) = 2.36 at every ε, the band of ``sosp.select.d``."""
    v = _selection_values(point)
    eps, delta, T = float(point["epsilon"]), float(point["delta"]), int(_selection_T(point))
    v["epsilon"] = eps * _noise_factor(1.0, delta, T) / _noise_factor(eps, delta, T)
    return v


_SEL_LEVEL_REASON = ("as for sosp.select.d: error/bound → 4zε/√(T·8 log(1.25/δ)) × E‖W‖/(2√d) = "
                     "2.36 × 0.94 at d = 32 (the Õ hides the first factor), the sampling term "
                     "adds ≤ 10%")
_SEL_ALG = "algorithms.sosp.nonconvex.private_model_selection (Algorithm 4)"

register_experiment(Experiment(
    id="sosp.select.eps", paper="sosp",
    title="Algorithm 4: Hessian error vs ε, d=32, T=10 (eq. 142 at the noise added)",
    variable="epsilon", quick_grid=(0.5, 1.0, 2.0, 4.0, 8.0),
    full_grid=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
    fixed={k: v for k, v in {**_SEL_BASE, "d": 32, "T": 10, "T_tied": 0}.items()
           if k != "epsilon"}, seeds=6, run=run_selection,
    metric="hess_error", bound_values=_selection_values_effective,
    checks=(
        Check("sosp:thm4_hessian_privacy", "two-sided", 0.1,
              "two-sided: the aggregated Gaussian noise (std ∝ z(ε)) attains eq. 142's privacy "
              "term (Wigner), evaluated at the noise the accountant's z adds (errata SOSP-E12); "
              "0.1 as for sosp.select.d (6 seeds: CI half-width ≈ 0.02; the sampling term, "
              "the bound's ≤ 1/10 of the privacy term up to ε = 8, flattens the slope by "
              "≤ 0.05)",
              level=_SEL_LEVEL, level_source="instance", level_reason=_SEL_LEVEL_REASON),
        Check("sosp:thm4_hessian_sampling", "reject", 0.1,
              "control: the sampling term alone (slope 0), the error a selection whose noise "
              "did not follow ε would show; 0.1 as for the main check"),
    ),
    problem="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T=10 candidates, d=32",
    algorithm=_SEL_ALG, private=True, privacy_rtol=1e-9))

register_experiment(Experiment(
    id="sosp.select.n", paper="sosp",
    title="Algorithm 4: Hessian error vs n, d=32, T=10, ε=1 (eq. 142)",
    variable="n", quick_grid=(100, 200, 400, 800), full_grid=(100, 200, 400, 800, 1600, 3200),
    fixed={k: v for k, v in {**_SEL_BASE, "d": 32, "T": 10, "T_tied": 0}.items() if k != "n"}, seeds=6, run=run_selection,
    metric="hess_error", bound_values=_selection_values,
    checks=(
        Check("sosp:thm4_hessian_privacy", "two-sided", 0.1,
              "two-sided: the noise std z·2M_s√d/n attains eq. 142's privacy term 1/n "
              "(Wigner); the sampling term (1/√n; the bound's is ≤ 1/10 of the privacy term "
              "here) bends the slope by ≤ 0.05; 0.1 as for sosp.select.d",
              level=_SEL_LEVEL, level_source="instance", level_reason=_SEL_LEVEL_REASON),
        Check("sosp:thm4_hessian_sampling", "reject", 0.1,
              "control: the sampling term alone (slope −1/2), what the error would do if the "
              "noise did not fall with the records per client; 0.1 as for the main check"),
    ),
    problem="CosineSaddle(k=1) held-out records, m=2 clients × n, T=10 candidates, d=32",
    algorithm=_SEL_ALG, private=True, privacy_rtol=1e-9))

register_experiment(Experiment(
    id="sosp.select.m", paper="sosp",
    title="Algorithm 4: Hessian error vs the number of clients m, d=32, T=10, n=200 (eq. 142)",
    variable="m", quick_grid=(1, 2, 4, 8, 16), full_grid=(1, 2, 4, 8, 16, 32, 64),
    fixed={k: v for k, v in {**_SEL_BASE, "d": 32, "T": 10, "T_tied": 0}.items() if k != "m"}, seeds=6, run=run_selection,
    metric="hess_error", bound_values=_selection_values,
    checks=(
        Check("sosp:thm4_hessian_privacy", "two-sided", 0.1,
              "two-sided: the server averages m independent client noises (each calibrated for "
              "its own records, ICRL-DP), std ∝ 1/√m, which eq. 142's privacy term states and "
              "a Wigner matrix attains; 0.1 as for sosp.select.d",
              level=_SEL_LEVEL, level_source="instance", level_reason=_SEL_LEVEL_REASON),
        Check("sosp:thm4_hessian_per_client", "reject", 0.1,
              "control: eq. 142 at m = 1 for every m (slope 0), the error if the average did "
              "not reduce the clients' noise; 0.1 as for the main check"),
    ),
    problem="CosineSaddle(k=1) held-out records, m clients × n=200, T=10 candidates, d=32",
    algorithm=_SEL_ALG, private=True, privacy_rtol=1e-9))


def _selection_values_effective_T(point: dict) -> dict:
    """:func:`_selection_values` with T replaced by T·(F(T)/F(10))², F = :func:`_noise_factor`:
    the accountant's z for 2T releases is F(T)·√T times a constant, so the bound's √T is
    evaluated at the composition the accountant actually prices (the RDP → (ε, δ) conversion
    makes z grow slower than √T; errata SOSP-E12's reading, applied to T)."""
    v = _selection_values(point)
    eps, delta, T = float(point["epsilon"]), float(point["delta"]), int(_selection_T(point))
    v["T"] = T * (_noise_factor(eps, delta, T) / _noise_factor(eps, delta, 10)) ** 2
    return v


register_experiment(Experiment(
    id="sosp.select.T", paper="sosp",
    title="Algorithm 4: Hessian error vs the number of candidates T, d=32, ε=1 (eq. 142)",
    variable="T", quick_grid=(4, 8, 16, 32), full_grid=(2, 4, 8, 16, 32, 64, 128),
    fixed={k: v for k, v in {**_SEL_BASE, "d": 32, "T_tied": 0}.items() if k != "T"}, seeds=6,
    run=run_selection, metric="hess_error", bound_values=_selection_values_effective_T,
    checks=(
        Check("sosp:thm4_hessian_privacy", "two-sided", 0.1,
              "two-sided: each client's noise is calibrated for 2T releases (z ∝ √T up to the "
              "RDP conversion, evaluated at the z the accountant sets), which eq. 142's √T "
              "states and a Wigner matrix attains; 0.1 as for sosp.select.d",
              level=_SEL_LEVEL, level_source="instance", level_reason=_SEL_LEVEL_REASON),
        Check("sosp:thm4_hessian_sampling", "reject", 0.1,
              "control: the sampling term alone (slope 0 in T), the error of a selection whose "
              "noise did not compose over its 2T releases; 0.1 as for the main check"),
    ),
    problem="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T candidates, d=32",
    algorithm=_SEL_ALG, private=True, privacy_rtol=1e-9))


# --------------------------------------------------------------------------------------------
# Theorem 4 (eq. 141) beyond d: the gradient error of Algorithm 4's released gradients in n, ε,
# m, T and G.  The same runs as the Hessian sweeps, metric ‖∇F̄ − ∇F‖ (geometric mean over the
# T candidates).  eq. 141's privacy term dominates on every grid below: at d = 32, T = 10 the
# bound's privacy/sampling ratio √(dT·log_delta)/(ε√(n log(d/ω))) is ≥ 1.3 (ε = 4, n = 200) and
# the measured noise norm is ≥ 4.8× the measured sampling error (ε ≤ 4, n ≤ 3200), which adds
# ≤ 2% in quadrature.
# --------------------------------------------------------------------------------------------
def _gradient_values(values, transform=lambda p: p):
    """Symbol values of eq. 141 from a Hessian sweep's ``values`` at ``transform(point)``:
    G = G_s for M."""
    def vals(point: dict) -> dict:
        point = transform(point)
        v = {k: x for k, x in values(point).items() if k != "M"}
        v["G"] = problem(point).G_sens
        return v
    return vals


def run_selection_G(point: dict, rngs: list) -> dict:
    """:func:`run_selection` on CosineSaddle with s1 = G − s2 (the point's G)."""
    return run_selection(with_G(point), rngs)


_SEL_GRAD_TOL = ("two-sided: the average of m client Gaussians N(0, σ_g²I), σ_g = z·2G_s/n, z for "
                 "2T releases, has norm √d·σ_g/√m up to E‖Z‖/√d, which eq. 141's privacy term "
                 "states and a Gaussian vector attains; the sampling error adds ≤ 2% in "
                 "quadrature on the grid (≤ 0.01 in slope), the bound is evaluated at the noise "
                 "the accountant's z adds (errata SOSP-E12); 0.05 covers these and 6 seeds × 10 "
                 "candidates of a χ_32 norm (CI half-width ≈ 0.02)")
_SEL_GRAD_LEVEL = (1.0, 1.4)
_SEL_GRAD_LEVEL_REASON = ("error/bound = 2zε/√(T·8 log(1.25/δ)) × E‖Z‖/√d: the first factor is "
                          "F(1)/2 = 1.18 at every point (the bound is evaluated at the noise "
                          "added; the Õ hides it), the second 0.98 at d = 32 (geometric mean of "
                          "χ_32/√32); the sampling error adds ≤ 2%: 1.16, band ±15% each way "
                          "(a noise std off by √2 leaves it)")


def _grad_exp(var: str, quick: tuple, full: tuple, values, checks: tuple, *, run=run_selection,
              transform=lambda p: p, seeds: int = 6, title: str,
              problem_desc: str) -> Experiment:
    # a G-sweep sets s1 = G − s2 itself (with_G), so s1 is not fixed there
    drop = (var, "s1") if var == "G" else (var,)
    base = {k: v for k, v in {**_SEL_BASE, "d": 32, "T": 10, "T_tied": 0}.items() if k not in drop}
    return register_experiment(Experiment(
        id=f"sosp.select.grad.{var}", paper="sosp", title=title, variable=var,
        quick_grid=quick, full_grid=full, fixed=base,
        seeds=seeds, run=run, metric="grad_error",
        bound_values=_gradient_values(values, transform),
        checks=(Check("sosp:thm4_gradient_privacy", "two-sided", 0.05, _SEL_GRAD_TOL,
                      level=_SEL_GRAD_LEVEL, level_source="instance",
                      level_reason=_SEL_GRAD_LEVEL_REASON),) + checks,
        problem=problem_desc, algorithm=_SEL_ALG, private=True, privacy_rtol=1e-9))


_REJECT_GRAD_SAMPLING = ("control: eq. 141's sampling term alone ({slope}), the error of a "
                         "selection whose gradient noise did not follow {var}; 0.05 as for the "
                         "main check")
_grad_exp("n", (100, 283, 800), (100, 200, 400, 800, 1600, 3200), _selection_values,
          (Check("sosp:thm4_gradient_sampling", "reject", 0.05,
                 _REJECT_GRAD_SAMPLING.format(slope="slope −1/2", var="the records per client"),
                 values=_gradient_values(_selection_values)),),
          title="Algorithm 4: gradient error vs n, d=32, T=10, ε=1 (eq. 141)",
          problem_desc="CosineSaddle(k=1) held-out records, m=2 clients × n, T=10 candidates, d=32")
_grad_exp("epsilon", (0.5, 1.41421, 4.0), (0.25, 0.5, 1.0, 2.0, 4.0),
          _selection_values_effective,
          (Check("sosp:thm4_gradient_sampling", "reject", 0.05,
                 _REJECT_GRAD_SAMPLING.format(slope="slope 0", var="ε"),
                 values=_gradient_values(_selection_values)),),
          title="Algorithm 4: gradient error vs ε, d=32, T=10, n=200 (eq. 141 at the noise added)",
          problem_desc="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T=10 candidates, d=32")
_grad_exp("m", (1, 4, 16), (1, 2, 4, 8, 16, 32, 64), _selection_values,
          (Check("sosp:thm4_gradient_per_client", "reject", 0.05,
                 "control: eq. 141 at m = 1 for every m (slope 0), the error if the server's "
                 "average did not reduce the clients' noise; 0.05 as for the main check"),),
          title="Algorithm 4: gradient error vs the number of clients m, d=32, T=10, n=200 "
                "(eq. 141)",
          problem_desc="CosineSaddle(k=1) held-out records, m clients × n=200, T=10 candidates, d=32")
_grad_exp("T", (4, 11, 32), (2, 4, 8, 16, 32, 64, 128), _selection_values_effective_T,
          (Check("sosp:thm4_gradient_sampling", "reject", 0.05,
                 _REJECT_GRAD_SAMPLING.format(slope="slope 0", var="the 2T releases"),
                 values=_gradient_values(_selection_values)),),
          title="Algorithm 4: gradient error vs the number of candidates T, d=32, ε=1 (eq. 141)",
          problem_desc="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T candidates, d=32")
_grad_exp("G", (0.1, 0.4, 1.6), (0.1, 0.2, 0.4, 0.8, 1.6, 3.2), _selection_values,
          (Check("sosp:thm4_hessian_privacy", "reject", 0.05,
                 "control: eq. 142's privacy term (G-free, slope 0: the Hessian noise scales "
                 "with M_s = s2, which the sweep holds), the error of a gradient release "
                 "calibrated to M instead of G; 0.05 as for the main check",
                 values=lambda p: _selection_values(with_G(p))),),
          run=run_selection_G, transform=with_G,
          title="Algorithm 4: gradient error vs the Lipschitz constant G, d=32, T=10, n=200 "
                "(eq. 141)",
          problem_desc="CosineSaddle(k=1, s1=G−0.05, s2=0.05) held-out records, m=2 clients × "
                       "n=200, T=10 candidates, d=32")
# 24 seeds and d = 8…64: at 6 seeds over d = 8…32 the CI (±0.09) straddled an edge of A; the
# norm of a d-vector spreads as 1/√(2d), most at the smallest d
_grad_exp("d", (8, 16, 32, 64), (8, 16, 32, 64, 128), _selection_values,
          (Check("sosp:thm4_hessian_privacy", "reject", 0.05,
                 "control: eq. 142's privacy term (d^1: a matrix release's Frobenius √d times "
                 "its operator norm's √d), what the gradient error would follow if its noise "
                 "were calibrated like the Hessian's; 0.05 as for the main check",
                 values=_selection_values),),
          seeds=24, title="Algorithm 4: gradient error vs d, T=10, n=200, ε=1 (eq. 141)",
          problem_desc="CosineSaddle(k=1) held-out records, m=2 clients × n=200, T=10 candidates")
