"""Theorem 6's lower-bound construction of the KL paper (Menart et al., App. B.4, with Theorem 7 of
App. B.6), built as far as it can be, and the paper's algorithms for κ ≤ 2 run on it: every
(ε, δ)-DP algorithm has expected excess Ω(τ^{−1/(τ−1)}(L0√d/(λnε))^{τ/(τ−1)}) on some convex,
L0-Lipschitz, L1-smooth loss with (λ, τ)-growth (``bounds`` id ``kl:thm6``; through Lemma 6,
λ = 1/γ and τ = κ/(κ−1), Corollary 1).

The instance (proof of Theorem 6, i = 1, w₀ = 0): Theorem 7's loss (equation (5))
F(w; S) = (1/n)Σ⟨w, x_i⟩ + λ_H H(w), λ_H = N L0/(2nD), H the Huber regulariser (6) in its C¹ form
(‖w‖² inside 4D, 8D‖w‖ − 16D² outside: the printed 4D‖w‖ jumps in slope), plus the growth
term λ₁^τ 2^{τ−2}‖w‖^τ, with Δ = L0√d/(nε), the constants c₂(τ), c₃(τ) of the proof,
D = max(Δ^{1/τ}L1 L0^{(τ−2)/(τ−1)}/c₂, Δ^{1/τ}B/(L0^{1/(τ−1)}c₃), √d L0/(L1 nε)) (the printed
max; the text's second term carries an extra k), λ = 4^{(τ−1)²/τ²}(Δτ/(D^τ(τ−1)))^{(τ−1)/τ²},
λ₁ = 2^{−(τ−1)/τ}λ.  F̃₁ has (λ₁2^{(τ−2)/τ}, τ)-growth: that is the bound's λ.  The data: the
first N = ⌊√d/ε⌋ records x_i = (L0/√d)·s_i with s_i a row of a Tardos code (bias p_j = sin² r_j,
r_j uniform on [t′, π/2 − t′], sin² t′ = 1/(300N)), the other n − N zero, so that the data term's
smoothness 2λ_H is Theorem 7's √d L0/(nεD).

What cannot be built: the tracing guarantee of the code.  A Tardos code traces N users only at
length d ≥ 100 N² ln(N/ξ); with N = √d/ε that is ε² ≥ 100 ln(N/ξ) (or ≥ (π²/2) ln(N/ξ) at the best
known constant), false for every d when ε ≤ 1.  So the rows have the code's distribution but not
its guarantee (BST14's N carries log factors the Ω̃ hides), and the theorem states no constant:
the checks here are one-sided-lower on the slope only, with no level band.

The minimiser is w* = −r*x̄/‖x̄‖ (every term but the linear one is radial), r* the root of the
increasing φ′(r) = −‖x̄‖ + λ_H h′(r) + τλ₁^τ2^{τ−2}r^{τ−1}, found by bisection to machine
precision; the excess is F(w) − F(w*).
"""
from __future__ import annotations

import math

import numpy as np

import bounds
from algorithms.base import Problem
from algorithms.noise_meter import NoiseMeter, release_hook
from algorithms.validation import check_int, check_interval, check_positive
from empirical.core.experiment import Check, Experiment
from empirical.core.experiment import register as _register
from empirical.papers.kl.problems import adaptive_hook

__all__ = ["Thm6Construction", "thm6_parameters", "run_thm6", "thm6_values"]


def thm6_parameters(n: int, d: int, tau: float, epsilon: float, L0: float = 1.0,
                    L1: float = 1.0, B: float = 1.0) -> dict:
    """Δ, c₂, c₃, D, λ, λ₁, the growth constant λ_g = λ₁2^{(τ−2)/τ} and the radius of W̃₁
    (the proof of Theorem 6, i = 1)."""
    n, d = check_int("n", n), check_int("d", d)
    tau = check_interval("tau", tau, 2.0, math.inf)
    epsilon = check_interval("epsilon", epsilon, 0.0, 1.0, closed_hi=True)
    L0, L1, B = check_positive("L0", L0), check_positive("L1", L1), check_positive("B", B)
    Delta = L0 * math.sqrt(d) / (n * epsilon)
    c2 = 4 ** ((tau - 1) / tau) * (tau / (tau - 1)) ** (1 / tau) * tau ** (1 / (tau - 1)) * (tau - 1)
    c3 = ((tau - 1) / tau) ** (1 / tau) / (2 * tau ** (1 / (tau - 1)) * 4 ** ((tau - 1) / tau))
    D = max(Delta ** (1 / tau) * L1 * L0 ** ((tau - 2) / (tau - 1)) / c2,
            Delta ** (1 / tau) * B / (L0 ** (1 / (tau - 1)) * c3),
            math.sqrt(d) * L0 / (L1 * n * epsilon))
    lam = 4 ** ((tau - 1) ** 2 / tau ** 2) * (Delta * tau / (D ** tau * (tau - 1))) ** (
        (tau - 1) / tau ** 2)
    lam1 = 2 ** (-(tau - 1) / tau) * lam
    radius = (L0 / (2 * tau * lam1 ** tau * 2 ** (tau - 2))) ** (1 / (tau - 1))
    return {"Delta": Delta, "c2": c2, "c3": c3, "D": D, "lambda": lam, "lambda1": lam1,
            "lambda_g": lam1 * 2 ** ((tau - 2) / tau), "radius": radius}


class Thm6Construction(Problem):
    """F̃₁(w; S) of Theorem 6's proof on R^d (see the module docstring).  Constants: L0 (the data
    term's Lipschitz constant, which fixes the sensitivity), L1 (the smoothness bound on W̃₁),
    growth (λ_g, τ), hence KL (γ, κ) = (1/λ_g, τ/(τ−1)) (Lemma 6), ``F_star`` exact."""

    def __init__(self, n: int, d: int, tau: float, epsilon: float, *, L0: float = 1.0,
                 L1: float = 1.0, B: float = 1.0, data_seed: int = 0):
        super().__init__(n, d)
        par = thm6_parameters(n, d, tau, epsilon, L0, L1, B)
        self.tau, self.epsilon, self.par = float(tau), float(epsilon), par
        self.N = max(1, min(n, int(math.floor(math.sqrt(d) / epsilon))))
        rng = np.random.default_rng([int(data_seed), n, d])
        t = 1.0 / (300.0 * self.N)
        tp = math.asin(math.sqrt(t))
        p = np.sin(rng.uniform(tp, math.pi / 2 - tp, size=d)) ** 2
        self.signs = np.where(rng.random((self.N, d)) < p, 1, -1).astype(np.int8)
        self.scale = L0 / math.sqrt(d)
        self.xbar = self.signs.sum(axis=0) * (self.scale / n)
        self.D = par["D"]
        self.lam_H = self.N * L0 / (2.0 * n * self.D)
        self.c_tau = par["lambda1"] ** tau * 2.0 ** (tau - 2.0)
        self.L0 = L0
        # smoothness on W̃₁: the data term's 2λ_H plus the growth term's τ(τ−1)c_τ r^{τ−2}
        self.L1 = 2.0 * self.lam_H + tau * (tau - 1.0) * self.c_tau * par["radius"] ** (tau - 2.0)
        self.kappa = tau / (tau - 1.0)
        self.gamma = 1.0 / par["lambda_g"]
        self.smooth = True
        a = float(np.linalg.norm(self.xbar))
        self.r_star = self._root(a)
        self.w_star = -self.r_star * self.xbar / a if a > 0 else np.zeros(d)
        self.F_star = float(self._F(self.w_star[None, :])[0])

    def _h1(self, r):
        return np.where(r <= 4.0 * self.D, 2.0 * r, 8.0 * self.D)

    def _root(self, a: float) -> float:
        lo, hi = 0.0, max(1.0, a / (2.0 * self.lam_H))
        for _ in range(200):                       # bisection: φ′ is increasing
            mid = 0.5 * (lo + hi)
            g = -a + self.lam_H * float(self._h1(mid)) + self.tau * self.c_tau * mid ** (self.tau - 1)
            lo, hi = (mid, hi) if g < 0 else (lo, mid)
            if hi - lo <= 1e-17 * max(1.0, hi):
                break
        return 0.5 * (lo + hi)

    def _F(self, W):
        r = np.linalg.norm(W, axis=1)
        H = np.where(r <= 4.0 * self.D, r * r, 8.0 * self.D * r - 16.0 * self.D ** 2)
        return W @ self.xbar + self.lam_H * H + self.c_tau * r ** self.tau

    def _loss(self, W):
        return self._F(W)

    def _reg_grad(self, W):
        r = np.linalg.norm(W, axis=1, keepdims=True)
        safe = np.where(r > 0, r, 1.0)
        coef = (self.lam_H * self._h1(r) + self.tau * self.c_tau * r ** (self.tau - 1)) / safe
        return coef * W

    def _gradient(self, W):
        return self.xbar[None, :] + self._reg_grad(W)

    def _per_sample_gradients(self, W, idx):
        idx = np.asarray(idx)
        X = np.zeros((idx.size, self.d))
        code = idx < self.N
        X[code] = self.signs[idx[code]] * self.scale
        return X[None, :, :] + self._reg_grad(W)[:, None, :]

    def excess(self, W: np.ndarray) -> np.ndarray:
        return self._F(np.atleast_2d(np.asarray(W, float))) - self.F_star

    def in_kl_region(self, W: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(W), axis=1) <= self.par["radius"]

    def start(self) -> np.ndarray:
        return np.zeros(self.d)


_DELTA = 1e-6


def _rho(point: dict) -> float:
    return float(bounds.get("kl:dp_to_zcdp")(epsilon=float(point["epsilon"]), delta=_DELTA))


def _problem(point: dict) -> Thm6Construction:
    return Thm6Construction(int(point["n"]), int(point["d"]), float(point["tau"]),
                            float(point["epsilon"]), data_seed=int(point.get("data_seed", 0)))


def run_thm6(point: dict, rngs: list) -> dict:
    """Algorithm 1 (Spider, given the instance's γ = 1/λ_g, κ) or Algorithm 3 (adaptive, given
    nothing of the KL condition) from w₀ = 0 on the construction, at ρ = kl:dp_to_zcdp(ε, 1e-6)."""
    from algorithms.kl.adaptive import adaptive_noisy_gd
    from algorithms.kl.spider import kl_spider

    prob = _problem(point)
    rho, R = _rho(point), len(rngs)
    w0 = prob.start()
    F0 = float(prob.excess(w0)[0])
    meter = NoiseMeter(R)
    if point["algorithm"] == "spider":
        res = kl_spider(prob, rho=rho, w0=w0, L0=prob.L0, L1=prob.L1, gamma=prob.gamma,
                        kappa=prob.kappa, F0=F0, beta=0.1, rng=rngs,
                        observe=release_hook(meter, ("full", "difference")))
    else:
        res = adaptive_noisy_gd(prob, rho=rho, w0=w0, L0=prob.L0, L1=prob.L1, beta=0.1, rng=rngs,
                                observe=adaptive_hook(meter, prob, rho))
    priv = res.privacy if isinstance(res.privacy, list) else [res.privacy] * R
    return {"excess": prob.excess(res.w), "F0": np.full(R, F0), **meter.columns(),
            "lower_bound": np.full(R, float(bounds.get("kl:thm6")(**thm6_values(point)))),
            "lambda_g": np.full(R, prob.par["lambda_g"]), "D": np.full(R, prob.D),
            "N_code": np.full(R, float(prob.N)),
            "in_region": prob.in_kl_region(res.w).astype(float),
            "rho_spent": np.array([p.rho for p in priv], dtype=float),
            "rho_guarantee": np.array([p.guarantee_rho for p in priv], dtype=float),
            "rho_target": np.full(R, rho)}


def thm6_values(point: dict) -> dict:
    """kl:thm6's symbols: n, d, ε, τ, L0 = 1 and λ = the instance's growth constant λ_g."""
    par = thm6_parameters(int(point["n"]), int(point["d"]), float(point["tau"]),
                          float(point["epsilon"]))
    return {"n": float(point["n"]), "d": float(point["d"]), "epsilon": float(point["epsilon"]),
            "tau": float(point["tau"]), "L0": 1.0, "lambda_g": par["lambda_g"]}


_VAR_TAG = {"n": "n", "d": "d", "epsilon": "epsilon"}
_VAR_TEXT = {"n": "n", "d": "d", "epsilon": "ε"}
_HELD_TEXT = {"n": "d = 100, ε = 1", "d": "n = 10⁴, ε = 1", "epsilon": "n = 10⁴, d = 100"}
_LOWER_REASON = ("one-sided-lower: Theorem 6 bounds every (ε, δ)-DP algorithm's excess from "
                 "below, so its slope may be flatter than the bound's (−κ in n and ε, κ/2 in d), not "
                 "steeper; "
                 "{tol} = the CI half-width of {seeds} seeds over the grid.  No level band: the "
                 "theorem states Ω with no constant (its proof is by contradiction with o(·)), and "
                 "the data are not a tracing code (module docstring)")


def _thm6_exp(algorithm: str, tau: float, quick: tuple, full: tuple, seeds: int,
              tol: float, extra: tuple = (), variable: str = "n") -> Experiment:
    tag = {4.0: "k4_3", 2.0: "k2"}[tau]          # τ = 4 is run in tests only (see THM6)
    name = {"spider": "Algorithm 1 (Spider)", "adaptive": "Algorithm 3 (adaptive noisy GD)"}[algorithm]
    return _register(Experiment(
        id=f"kl.thm6lb.{_VAR_TAG[variable]}.{algorithm}_{tag}", paper="kl",
        title=f"Theorem 6's construction (τ = {tau:g}, κ = {tau / (tau - 1):.3g}, "
              f"{_HELD_TEXT[variable]}): {name}'s excess vs {_VAR_TEXT[variable]}",
        variable=variable, quick_grid=quick, full_grid=full,
        fixed={k: v for k, v in {"n": 10000, "d": 100, "tau": tau, "epsilon": 1.0,
                                 "algorithm": algorithm, "data_seed": 0}.items() if k != variable},
        seeds=seeds, run=run_thm6, metric="excess", bound_values=thm6_values,
        checks=(Check("kl:thm6", "one-sided-lower", tol,
                      _LOWER_REASON.format(tol=tol, seeds=seeds)),) + extra,
        problem="Thm6Construction: Theorem 7's linear + Huber loss on N = ⌊√d/ε⌋ Tardos-code "
                "rows (the others zero) plus the growth term λ₁^τ2^{τ−2}‖w‖^τ, w₀ = 0",
        algorithm=f"algorithms.kl.condition.{'kl_spider' if algorithm == 'spider' else 'adaptive_noisy_gd'} "
                  f"({name}) at ρ = kl:dp_to_zcdp(1, 1e-6)",
        description="The start w₀ = 0 has excess F0 = 0.39–0.45 × the bound at constant 1 "
                    "(τ = 4) and 0.23–0.27 × (τ = 2), falling as n^{−κ} like the bound: the "
                    "construction is scaled so that the lower bound is its own scale, and the "
                    "check asks that the private algorithm does not beat that rate.  Without "
                    "noise gradient descent reaches excess ≤ 1e-18 on it (tests/test_kl_thm6.py), "
                    "so the check can fail."))


def _cor1_values(point: dict) -> dict:
    """Corollary 1's symbols through Lemma 6: γ = 1/λ_g, κ = τ/(τ−1), ρ the run's, ε."""
    v = thm6_values(point)
    return {"n": v["n"], "d": v["d"], "epsilon": v["epsilon"], "L0": 1.0,
            "gamma": 1.0 / v["lambda_g"], "kappa": v["tau"] / (v["tau"] - 1.0),
            "rho": _rho(point)}


def _cor1_checks(tol: float, seeds: int) -> tuple:
    why = ("Corollary 1 is Theorem 6 read through Lemma 6 (λ = 1/γ, τ = κ/(κ−1)); one-sided-"
           f"lower as kl:thm6, {tol} as there")
    return (Check("kl:cor1_dp", "one-sided-lower", tol, why + " ((ε, δ) form)",
                  values=_cor1_values),
            Check("kl:cor1", "one-sided-lower", tol,
                  why + " (ρ form; ρ = kl:dp_to_zcdp(ε, 1e-6) is fixed along n)",
                  values=_cor1_values))


_Q6 = (1000, 10000, 100000)
_F6 = (1000, 3162, 10000, 31623, 100000, 316228)
# At τ = 4 (κ = 4/3) both algorithms end within 1% of F0, the excess of w₀ (Spider's Φ̂ floor is
# above F0, Algorithm 3 stops at once; tests/test_kl_thm6.py), so a sweep there would measure the
# instance's F0 alone: the experiments are at τ = 2, where both move.
THM6 = {alg: _thm6_exp(alg, 2.0, _Q6, _F6, 16, 0.1, _cor1_checks(0.1, 16))
        for alg in ("spider", "adaptive")}

_QE, _FE = (0.125, 0.35355339, 1.0), (0.0625, 0.125, 0.25, 0.5, 1.0)
# kl:cor1 (the ρ form) has no ε: the ε sweep checks Theorem 6 and Corollary 1's (ε, δ) form
THM6_EPS = _thm6_exp("spider", 2.0, _QE, _FE, 32, 0.1, _cor1_checks(0.1, 32)[:1],
                     variable="epsilon")

from empirical.core.coverage import declare_unswept as _declare_unswept  # noqa: E402

_D_REASON = ("d enters the construction through the N = ⌊√d/ε⌋ code rows as well as Δ, and the "
             "excess is the instance's F0 to within 3% (Spider, τ = 2), whose ratio to the bound "
             "falls from 0.40 at d = 16 (N = 4) to 0.25 at d ≥ 100: a d-sweep measures that "
             "discreteness (Spider, τ = 2, d = 16…4096, 32 seeds: slope +0.913 [+0.910, +0.916] "
             "against the bound's +1, one-sided-lower with tolerance 0.1: PASS at the edge), and "
             "it does not fit the verify budget beside the n and ε sweeps")
for _b in ("kl:thm6", "kl:cor1_dp", "kl:cor1"):
    _declare_unswept(_b, "d", _D_REASON)
_CONST = ("a constant of the construction: λ (γ = 1/λ), L0 and τ (κ) are fixed by the proof's "
          "choices (λ_g = 0.354 for every n at τ = 2, L0 = 1); τ is an exponent, not a scale, and "
          "at τ = 4 (κ = 4/3) both algorithms end within 1% of the start's excess "
          "(tests/test_kl_thm6.py)")
for _b, _vars in (("kl:thm6", ("lambda_g", "tau", "L0")), ("kl:cor1_dp", ("gamma", "kappa", "L0")),
                  ("kl:cor1", ("gamma", "kappa", "L0"))):
    for _v in _vars:
        _declare_unswept(_b, _v, _CONST)
_declare_unswept("kl:cor1", "rho", "the ρ form has no ε: ρ = kl:dp_to_zcdp(ε, 1e-6) moves with ε, "
                 "which kl.thm6lb.epsilon.spider_k2 sweeps against the (ε, δ) form kl:cor1_dp")
