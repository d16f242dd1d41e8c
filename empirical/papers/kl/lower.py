"""Theorem 8's lower-bound construction of the KL paper (Menart et al.,
App. C.3, adapting ALD21 Thm 5), run: every (ε, δ)-DP algorithm's expected excess empirical risk
on the pair of neighbouring-in-1/ε-records datasets (S, S′) is at least (1/4)(1/(nε))^κ
(``bounds`` id ``kl:thm8``; κ ≥ 2, ε ≤ ln 2, δ ≤ (1 − e^{−ε})/16).

Construction (1-D): τ = κ/(κ−1) ∈ (1, 2], records x ∈ {−1, +1},

    f(w; +1) = |w − a| (w ≤ a),  (w − a)^τ (w > a);   f(w; −1) the mirror image about 0,

S holds (1 + ρ_f)/2 of +1's, S′ (1 − ρ_f)/2, with ρ_f = 1/(nε) — so S and S′ differ in
nρ_f = 1/ε records — and a = ρ_f^{1/(τ−1)}/2.  The minimisers are ±a, F* = (1 − ρ_f)a, and
the proof bounds ½(E exc_S + E exc_S′) ≥ (1/4)(2a)^τ = (1/4)(1/(nε))^κ.  Here ε = 0.5 exactly
(so 1/ε = 2 records differ), δ = 1e-3 ≤ (1 − e^{−0.5})/16 = 0.0246, and the algorithm runs at
the ρ whose closed-form conversion (Bun–Steinke Prop. 1.3) gives ε = 0.5 at δ: every ρ-zCDP
algorithm here is (0.5, 1e-3)-DP, so the theorem applies to it.

The power branch is continued linearly past |w ∓ a| = r₀ = τ^{−1/(τ−1)}, where its slope reaches
1: f stays convex and becomes globally 1-Lipschitz (the algorithms' sensitivity 2L0/n holds
wherever the iterates go); near the minimisers (|w ∓ a| ≤ r₀, where the proof's growth step
is used) f is the theorem's.

``kl.thm8lb.n.k2``: Algorithm 2 (private proximal point, Theorem 2 — the paper's algorithm for
κ ≥ 2, which this lower bound shows is tight at d = 1) from w₀ = 1 on the construction, metric
½(exc_S + exc_S′) per seed.  Level band [1, ·]: the lower bound itself (gmean over seeds ≤ mean,
so the band's lower edge is conservative); slope two-sided against −κ.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from algorithms.accounting import epsilon_to_zcdp_closed_form, zcdp_to_epsilon_closed_form
from algorithms.base import Problem
from algorithms.validation import check_int, check_interval
from empirical.core.experiment import Check, Experiment
from empirical.core.experiment import register as _register
from empirical.store.calibration import calibrations

__all__ = ["Thm8Construction", "run_thm8", "thm8_values"]

#: Calibrated band ends, fit on held-out seeds (calibration.json beside this module, recomputed
#: by python -m empirical.run.calibration; docs/methodology.md, "Level bands").
_HELD_OUT = calibrations(__file__)
_THM2_UPPER = ("Theorem 2 with O-constant 1 (a run above it would contradict the theorem at the "
               "constant the code base uses)")


def _held(eid: str, bound: str, kind: str, hi: float, why: str) -> dict:
    """Level-band fields whose lower end is ``eid``'s held-out calibration and whose upper end
    ``hi`` is not a calibration (``why``); the record states the combined band."""
    r = _HELD_OUT[(eid, bound, kind)]
    r = dataclasses.replace(r, band=(r.band[0], hi))
    return dict(level=r.band, level_source="calibration", calibration=r,
                level_reason=f"lower end: {r.describe()}; upper end {hi:g}: {why}")


class Thm8Construction(Problem):
    """F(w; S) of Theorem 8 on R (d = 1) for n records of which n₊ are +1 (``sign`` = +1: the
    dataset S with the +1 majority, −1: its mirror S′).  Constants: L0 = 1, KL (γ, κ) = (1, κ)
    near the minimiser, ``w_star`` = sign·a, ``F_star`` = (1 − ρ_f)a."""

    def __init__(self, n: int, kappa: float, epsilon: float, sign: int = 1):
        n = check_int("n", n, minimum=4)
        if n % 2:
            raise ValueError(f"n must be even (S and S′ differ in 1/ε records), got {n}")
        self.kappa = check_interval("kappa", kappa, 2.0, math.inf)
        epsilon = check_interval("epsilon", epsilon, 0.0, math.log(2.0))
        diff = 1.0 / epsilon
        if abs(diff - round(diff)) > 1e-12 or round(diff) % 2:
            raise ValueError(f"1/epsilon must be an even integer (records S and S′ differ in), "
                             f"got {diff}")
        if sign not in (1, -1):
            raise ValueError(f"sign must be +1 or -1, got {sign}")
        super().__init__(n, 1)
        self.tau = self.kappa / (self.kappa - 1.0)
        self.rho_f = 1.0 / (n * epsilon)
        self.a = self.rho_f ** (1.0 / (self.tau - 1.0)) / 2.0
        self.r0 = self.tau ** (-1.0 / (self.tau - 1.0))
        self.sign = sign
        n_major = n // 2 + int(round(diff)) // 2
        self.p_plus = (n_major if sign == 1 else n - n_major) / n   # fraction of +1 records
        self.n_plus = int(round(self.p_plus * n))
        self.L0, self.gamma = 1.0, 1.0
        self.w_star = sign * self.a
        self.F_star = (1.0 - self.rho_f) * self.a

    # f(w; +1) as a function of u = w − a; f(w; −1)(w) = f(−w; +1)
    def _f_plus(self, u: np.ndarray) -> np.ndarray:
        pw = np.minimum(np.maximum(u, 0.0), self.r0)
        return np.where(u <= 0.0, -u, pw ** self.tau + np.maximum(u - self.r0, 0.0))

    def _g_plus(self, u: np.ndarray) -> np.ndarray:
        return np.where(u <= 0.0, -1.0,
                        np.where(u <= self.r0, self.tau * np.maximum(u, 0.0) ** (self.tau - 1.0),
                                 1.0))

    def _loss(self, W):
        w = W[:, 0]
        return self.p_plus * self._f_plus(w - self.a) + (1 - self.p_plus) * self._f_plus(-w - self.a)

    def _gradient(self, W):
        w = W[:, 0]
        g = self.p_plus * self._g_plus(w - self.a) - (1 - self.p_plus) * self._g_plus(-w - self.a)
        return g[:, None]

    def _per_sample_gradients(self, W, idx):
        w = W[:, 0][:, None]
        plus = (np.asarray(idx) < self.n_plus)[None, :]
        g = np.where(plus, self._g_plus(w - self.a), -self._g_plus(-w - self.a))
        return g[..., None]

    def excess(self, W: np.ndarray) -> np.ndarray:
        """F(w) − F*, exact: the data-weighted sum of each branch's distance above its value at
        the minimiser (no difference of nearly equal numbers)."""
        w = np.atleast_2d(np.asarray(W, float))[:, 0]
        s = self.sign
        # work in the frame of S (the +1 majority): mirror S′
        v = s * w
        p = self.p_plus if s == 1 else 1 - self.p_plus          # majority fraction
        major = self._f_plus(v - self.a)                         # 0 at v = a
        minor = self._f_plus(-v - self.a) - 2.0 * self.a         # = v − a for v > −a
        return p * major + (1 - p) * minor


def thm8_values(point: dict) -> dict:
    """kl:thm8's symbols: n, ε (the construction's), κ."""
    return {"n": float(point["n"]), "epsilon": float(point["epsilon"]),
            "kappa": float(point["kappa"])}


def run_thm8(point: dict, rngs: list) -> dict:
    """Algorithm 2 (proximal point, inner noisy GD capped at ``inner_max_steps``) on S and on S′
    from w₀ = point["w0"], each seed's generator spawned into two streams (one per dataset);
    per seed ½(exc_S + exc_S′) and both excesses."""
    from algorithms.kl.proximal import proximal_point

    n, kappa = int(point["n"]), float(point["kappa"])
    eps, delta = float(point["epsilon"]), float(point["delta"])
    rho = epsilon_to_zcdp_closed_form(eps, delta)
    R = len(rngs)
    kids = [g.spawn(2) for g in rngs]
    out, priv = {}, []
    for j, sign in enumerate((1, -1)):
        prob = Thm8Construction(n, kappa, eps, sign)
        w0 = np.array([float(point["w0"])])
        F0 = float(prob.excess(w0)[0])
        res = proximal_point(prob, rho=rho, w0=w0, L0=prob.L0, L1t=float(point["L1t"]),
                             gamma=prob.gamma, kappa=kappa, F0=F0, beta=float(point["beta"]),
                             rng=[k[j] for k in kids],
                             inner_max_steps=int(point["inner_max_steps"]))
        out["S" if sign == 1 else "S_prime"] = prob.excess(res.w)
        out["dist_" + ("S" if sign == 1 else "S_prime")] = np.abs(res.w[:, 0] - prob.w_star)
        priv.append(res.privacy)
        out["outer_T"] = np.full(R, float(res.info["T"]))
        out["inner_T"] = np.full(R, float(res.info["inner_T"]))
        out["inner_T_theory"] = np.full(R, float(res.info["inner_T_theory"]))
    probe = Thm8Construction(n, kappa, eps, 1)
    lb = 0.25 * (1.0 / (n * eps)) ** kappa
    rho_spent = np.array([max(a.rho, b.rho) for a, b in zip(priv[0], priv[1])])
    return {"excess_pair": 0.5 * (out["S"] + out["S_prime"]),
            "excess_S": out["S"], "excess_S_prime": out["S_prime"],
            "dist_S": out["dist_S"], "dist_S_prime": out["dist_S_prime"],
            "lower_bound": np.full(R, lb), "a": np.full(R, probe.a),
            "rho_f": np.full(R, probe.rho_f), "tau": np.full(R, probe.tau),
            "outer_T": out["outer_T"], "inner_T": out["inner_T"],
            "inner_T_theory": out["inner_T_theory"],
            "epsilon_dp": np.full(R, zcdp_to_epsilon_closed_form(rho, delta)),
            "rho_spent": rho_spent,
            "rho_guarantee": np.array([p.guarantee_rho for p in priv[0]], dtype=float),
            "rho_target": np.full(R, rho)}


_THM8_FIXED = {"kappa": 2.0, "epsilon": 0.5, "delta": 1e-3, "w0": 1.0, "L1t": 0.1, "beta": 0.1,
               "inner_max_steps": 300}


def _thm2_values(point: dict) -> dict:
    """kl:thm2's symbols on the construction: d = 1, γ = L0 = 1, κ, ρ (the run's), β, L̃1 and
    F0 = the exact excess of w₀ on S (the same on S′ by symmetry)."""
    n, eps = int(point["n"]), float(point["epsilon"])
    prob = Thm8Construction(n, float(point["kappa"]), eps, 1)
    return {"n": float(n), "d": 1.0, "rho": epsilon_to_zcdp_closed_form(eps, point["delta"]),
            "beta": float(point["beta"]), "kappa": float(point["kappa"]), "gamma": 1.0,
            "L0": 1.0, "L1t": float(point["L1t"]),
            "F0": float(prob.excess(np.array([[float(point["w0"])]]))[0])}


THM8_N = _register(Experiment(
    id="kl.thm8lb.n.k2", paper="kl",
    title="Theorem 8's lower-bound construction (κ = 2, d = 1, ε = 0.5): Algorithm 2's excess vs n",
    variable="n", quick_grid=(100, 178, 316, 562, 1000),
    full_grid=(100, 134, 178, 238, 316, 422, 562, 750, 1000),
    fixed=_THM8_FIXED, seeds=64, run=run_thm8, metric="excess_pair", bound_values=thm8_values,
    checks=(
        Check("kl:thm8", "two-sided", 0.3,
              "two-sided: the paper says this lower bound makes Theorem 2's rate tight at d = 1, "
              "so an optimal algorithm's excess must fall as (nε)^{−κ}; 0.3 because Theorem 2's "
              "log factors (outer rounds ∝ log n, β′ = β/T) bend its local slope to −1.57 over "
              "this grid against −2 (kl:thm2), and 64 seeds of a χ²-like excess give a CI "
              "half-width ≈ 0.11",
              level=(1.0, 1e5),
              level_source="theorem", level_reason="lower edge: Theorem 8 itself (½(E exc_S + E exc_S′) ≥ (1/4)(1/(nε))^κ "
                           "for every (ε, δ)-DP algorithm; the gmean over seeds is ≤ the mean, "
                           "so the edge is conservative); upper: Theorem 2's bound at these "
                           "values is 3.7e4–1.0e5 × the lower bound, and Algorithm 2 stays "
                           "below it (kl:thm2 check)"),
        Check("kl:thm2", "two-sided", 0.15,
              "two-sided: Theorem 2's upper bound, tight at d = 1 by Theorem 8; the band spans "
              "its local slope −1.57 (log factors) and its exponent −2; 0.15 ≈ the CI "
              "half-width (0.11) plus the cap's effect (none measured: inner cap 300 and 1500 "
              "give slopes −1.856 and −1.853)",
              values=_thm2_values,
              wide_reason="the interval is Theorem 2's own bend between its local slope (log "
                          "factors over n = 100…1000) and its exponent −2, which Theorem 8 makes "
                          "tight; the main check of this experiment is kl:thm8's",
              **_held("kl.thm8lb.n.k2", "kl:thm2", "two-sided", 1.0, _THM2_UPPER))),
    problem="Thm8Construction(κ = 2, ε = 0.5): f(w;±1) = |w ∓ a| or (w ∓ a)², ρ_f = 1/(nε), "
            "S and S′ differ in 2 records; w₀ = 1",
    algorithm="algorithms.kl.condition.proximal_point (Algorithm 2 + Algorithm 4), inner T ≤ 300, "
              "ρ = the closed-form conversion of (0.5, 1e-3)",
    description="The inner cap does not change the excess on this grid (cap 300 vs 1500: "
                "slopes −1.856 / −1.853, levels within seed noise)."))


# Theorem 8 in ε at the n-grid's top (n = 1000): 1/ε must be an even number of differing records
# (2, 4, 8, 16); below n = 1000 the smallest ε leaves Algorithm 2 trivial (at n = 316, ε = 1/16,
# its excess ≈ 1.4, the start's).  The construction moves with nε and the run's ρ ≈ ε²/(4 log(1/δ))
# with ε: both make the excess fall as ε^{−κ}.
THM8_EPS = _register(Experiment(
    id="kl.thm8lb.epsilon.k2", paper="kl",
    title="Theorem 8's lower-bound construction (κ = 2, d = 1, n = 1000): Algorithm 2's excess vs ε",
    variable="epsilon", quick_grid=(0.0625, 0.125, 0.25, 0.5), full_grid=(0.0625, 0.125, 0.25, 0.5),
    fixed={**{k: v for k, v in _THM8_FIXED.items() if k != "epsilon"}, "n": 1000}, seeds=64,
    run=run_thm8, metric="excess_pair",
    bound_values=thm8_values,
    checks=(
        Check("kl:thm8", "two-sided", 0.3,
              "two-sided: Theorem 8 with Theorem 2 makes (nε)^{−κ} tight at d = 1 (as for "
              "kl.thm8lb.n.k2), here in ε: the construction's ρ_f = 1/(nε) and the run's "
              "ρ(ε) both move; 0.3 as for the n-sweep (64 seeds of a log-excess spread ≈ 0.85 "
              "over 0.9 decades: CI half-width ≈ 0.15); no competitor: at κ = 2 Theorem 2's "
              "upper bound, Corollary 1's and Theorem 8's lower bounds all fall as ε^{−2} (the "
              "tightness the paper claims), and Theorem 7's ε^{−1} needs smoothness this "
              "construction lacks (its kink at ±a)",
              level=(1.0, 1.1e5), level_source="theorem",
              level_reason="lower edge: Theorem 8 itself (½(E exc_S + E exc_S′) ≥ (1/4)(1/(nε))^κ "
                           "for every (ε, δ)-DP algorithm; gmean ≤ mean, so conservative); upper: "
                           "Theorem 2's bound at these values is 5.0e4–1.0e5 × the lower bound"),),
    problem="Thm8Construction(κ = 2, n = 1000): f(w;±1) = |w ∓ a| or (w ∓ a)², ρ_f = 1/(nε), S "
            "and S′ differ in 1/ε = 2…16 records; w₀ = 1",
    algorithm="algorithms.kl.condition.proximal_point (Algorithm 2 + Algorithm 4), inner T ≤ 300, "
              "ρ = the closed-form conversion of (ε, 1e-3)",
    description="Theorem 8 in its privacy parameter: kl.thm8lb.n.k2 holds ε = 0.5."))


def run_thm8_nonprivate(point: dict, rngs: list) -> dict:
    """The control: per seed, Algorithm 2 on the same construction (built for ε = 0.5) at the
    private ρ (as :func:`run_thm8`) and at ρ = point["rho_run"] (far from (0.5, δ)-DP: Theorem 8
    does not apply), same inner cap, each from its own spawned streams.  The privacy columns
    are the non-private run's (what this experiment's rows spend)."""
    from algorithms.kl.proximal import proximal_point

    n, kappa, eps = int(point["n"]), float(point["kappa"]), float(point["epsilon"])
    rho_priv = epsilon_to_zcdp_closed_form(eps, float(point["delta"]))
    rho = float(point["rho_run"])
    R = len(rngs)
    kids = [g.spawn(4) for g in rngs]
    exc = {}
    priv = []
    for tag, r_ in (("private", rho_priv), ("nonprivate", rho)):
        pair = []
        for j, sign in enumerate((1, -1)):
            prob = Thm8Construction(n, kappa, eps, sign)
            w0 = np.array([float(point["w0"])])
            col = (0 if tag == "private" else 2) + j
            res = proximal_point(prob, rho=r_, w0=w0, L0=prob.L0, L1t=float(point["L1t"]),
                                 gamma=prob.gamma, kappa=kappa, F0=float(prob.excess(w0)[0]),
                                 beta=float(point["beta"]), rng=[k[col] for k in kids],
                                 inner_max_steps=int(point["inner_max_steps"]))
            pair.append(prob.excess(res.w))
            if tag == "nonprivate":
                priv.append(res.privacy)
        exc[tag] = 0.5 * (pair[0] + pair[1])
    return {"excess_pair": exc["nonprivate"], "excess_private": exc["private"],
            "lower_bound": np.full(R, 0.25 * (1.0 / (n * eps)) ** kappa),
            "rho_private": np.full(R, rho_priv),
            "rho_spent": np.array([max(a.rho, b.rho) for a, b in zip(priv[0], priv[1])]),
            "rho_guarantee": np.array([p.guarantee_rho for p in priv[0]], dtype=float),
            "rho_target": np.full(R, rho)}


def _control() -> Experiment:
    from empirical.core.checks import ComparisonExperiment, Contrast
    return _register(ComparisonExperiment(
        id="kl.thm8lb.n.k2.nonprivate", paper="kl",
        title="Control: the same construction and code at ρ = 1e4: is kl.thm8lb.n.k2's level "
              "the privacy's?",
        variable="n", quick_grid=(100, 316), full_grid=(100, 178, 316, 562, 1000),
        fixed={**_THM8_FIXED, "rho_run": 1e4}, seeds=6, run=run_thm8_nonprivate,
        metric="excess_pair", bound_values=thm8_values, checks=(),
        contrasts=(Contrast(
            name="private excess > 10 × the same algorithm's at ρ = 1e4", kind="greater",
            hi="excess_private", lo="excess_pair", log=True, margin=math.log(10.0),
            reason="an excess above Theorem 8's bound is trivially reached by an algorithm that "
                   "does not optimise (inner cap, step size): the level of kl.thm8lb.n.k2 says "
                   "something about privacy only if removing the privacy lowers it.  Paired per "
                   "seed (the same construction and inner cap), the private excess must exceed "
                   "the ρ = 1e4 run's by more than 10× (95% t-interval of the mean log ratio over "
                   "6 seeds above log 10) at every n.  (The ρ = 1e4 run does not go below the "
                   "bound itself: its optimisation error, 1.6–27 × the bound, is above it.)"),),
        problem="Thm8Construction(κ = 2, ε = 0.5), w₀ = 1",
        algorithm="algorithms.kl.condition.proximal_point at the private ρ and at ρ = 1e4, "
                  "inner T ≤ 300",
        aggregate="mean"))


THM8_CONTROL = _control()


def _plot_control(analyses: list, root) -> object:
    # Imported by name so that drawing code stays out of the run module's code fingerprint.
    import importlib
    plots = importlib.import_module("empirical.papers.real.plots")
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        drawn = plots.plot_lines(
        analyses[0], tmp, "kl.thm8lb.n.k2.nonprivate",
        [([("excess_private", "Algorithm 2, (0.5, 1e-3)-DP"),
           ("excess_pair", "Algorithm 2, ρ = 1e4 (not private)"),
           ("lower_bound", "Theorem 8: (1/4)(1/(nε))^κ")],
          "½(excess on S + excess on S′)", None)],
        xlabel="n (construction of Theorem 8, κ = 2, ε = 0.5)",
        note="paired seeds; the private run's level above the bound is the privacy's")
        if drawn is None:
            return None
        dest = Path(root) / "kl" / "kl.thm8lb.n.k2.nonprivate.png"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(Path(drawn).read_bytes())
        return dest


def _register_control_figure() -> None:
    from empirical.core.experiment import Summary, register_summary
    register_summary(Summary("kl.thm8lb.n.k2.nonprivate", "kl", (THM8_CONTROL.id,),
                             _plot_control))


_register_control_figure()
