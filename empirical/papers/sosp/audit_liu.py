"""Privacy audit of the prior algorithm the SOSP paper argues against (Tao et al., §1 and §3.1–3.2:
reference [29], Liu, Ganesh, Oh, Thakurta), :mod:`algorithms.sosp.liu`, and its broken controls
and mutants (its targets register on import; :mod:`empirical.papers.sosp.mutants` registers the
mutants).

What is claimed: replace-one (max{ε_G, ε_SVT}, δ)-DP (:func:`algorithms.sosp.liu.liu_privacy`).
Every training record enters one Gaussian release of DP-SPIDER (O₁ or O₂, multiplier z); the
injected perturbation N(0, r²I) near saddles is data-independent; AboveThreshold runs on
disjoint held-out records with Lap(b_T) on the threshold and Lap(b_q) on each query, which is
(Δ/b_T + 2Δ/b_q)-DP.  The two record sets are disjoint, so a replaced record enters one channel
only, and each channel has its own canary:

* ``sosp.liu.oracle.stepwise`` — the DP-SPIDER releases of [29]'s loop (η = 1/M, the forced O₁
  near saddles): one canary record among zero-data training records (landscape −0.3·x₁,
  d = 1), the linear ±G_s·e₁ at index 0 (the first O₁ batch, shift = the O₁ bound) or the sine
  ∓M_s cos x₁ at index b1 (the first O₂ batch, shift ≈ the O₂ bound), searched.  The score is
  the canary query's release times its shift over the channel's noise variance *measured* on a
  calibration run (release minus its known noise-free value), so no σ the algorithm reports
  enters the test.  Exact ε: one Gaussian of multiplier z (PLD).  Audited at δ = 0.05 against
  ε_G(0.05) (:data:`ORACLE_DELTA`).
* ``sosp.liu.svt`` — AboveThreshold over k = 64 candidates (``liu_select``, the algorithm's own
  selection code), on held-out statistics whose canary moves each query by ±Δ (the
  sensitivity bound), searched over query sequences: the canary raises the first k − 1
  queries and lowers the last (the classic worst case), or lowers all, each at 3Δ above the
  threshold on D.  Exact ε of each sequence: the output index's law integrated over the
  threshold noise (:func:`svt_index_law`), at scales recomputed here from G_s, M_s, α, ρ, n_sel
  and ε (not read from the plan).  Power reference: Laplace.

Broken controls (the registered mutants, applied inside the release): the threshold's noise
omitted (exact ε 3.0 on the searched sequence against the claim 1), the query noise drawn as
Lap(2Δ/ε) instead of Lap(4Δ/ε) (exact 1.48 at δ = 1e-5), and the O₁ noise omitted.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import brentq

from algorithms import accounting
from algorithms.sosp.liu import liu_plan, liu_select, liu_sosp
from empirical.privacy.audit import AuditTarget, exact_gaussian_epsilon, register_audit, spawn_rows
from empirical.privacy.mutants import Mutant, Patch, with_mutant
from empirical.papers.sosp.audit import AuditRecords, DELTA, EPS, G_S, M_S, SLOPE
from empirical.papers.sosp.common import accountant_multiplier

__all__ = ["LIU_AUDIT", "liu_audit_plan", "svt_scales", "svt_index_law", "svt_exact_epsilon",
           "SVT_SEQUENCES", "measure_liu_noise", "oracle_measured_variances", "ORACLE_DELTA",
           "LIU_MUTANTS"]

#: [29]'s plan for the audits: n = 200 records (n_sel = 20 held out, 180 training), d = 1,
#: α = 0.1, κ = 0.05, M = 10 (η = 1/M = 0.1: the first step ≈ 0.03 keeps the drift below κ,
#: so the second query is an O₂), G = U = ρ = 1: b1 = 45, b2 = 1, Δ = 2G_s/n_sel = 0.01.
LIU_AUDIT = dict(n=200, d=1, alpha=0.1, kappa=0.05, psi=0.05, G=1.0, M=10.0, U=1.0,
                 hessian_lipschitz=1.0)
#: AboveThreshold's audit: k queries, each Δ above the threshold on D (searched offline over
#: k ∈ {2..32} and gaps −Δ..3Δ for the largest ε_lo of the broken variants at 10⁵ runs).
SVT_K, SVT_GAP = 16, 1.0


def liu_audit_plan():
    p = LIU_AUDIT
    return liu_plan(p["n"], p["d"], epsilon=EPS, delta=DELTA, alpha=p["alpha"], kappa=p["kappa"],
                    psi=p["psi"], G=p["G"], M=p["M"], U=p["U"],
                    hessian_lipschitz=p["hessian_lipschitz"], G_sens=G_S, M_sens=M_S)


#: δ of the DP-SPIDER channel's audit: the Gaussian channel's claim is ε_G(δ) at every δ
#: (dp-accounting at the plan's z), and at δ = 0.05 the optimal test sits in the bulk of the
#: scores, where 2·10⁴ runs per side resolve it (power ≈ 0.9 against the Gaussian reference,
#: ≈ 0.2 at δ = 1e-5); the calibration code is the same at every δ.
ORACLE_DELTA = 0.05


def _oracle_claim() -> float:
    """ε_G(ORACLE_DELTA) of one Gaussian release at the plan's z (dp-accounting): the
    DP-SPIDER channel's part of liu_privacy's guarantee, at the audit's δ."""
    return accounting.epsilon(accounting.gaussian_event(liu_audit_plan().spider.z), ORACLE_DELTA)


def _oracle_claim_at(delta: float) -> float:
    """The DP-SPIDER channel's claimed profile: ε_G(δ) of one Gaussian release at the plan's z
    (dp-accounting), at every δ."""
    return accounting.epsilon(accounting.gaussian_event(liu_audit_plan().spider.z), delta)


#: Why the AboveThreshold targets carry no claimed profile.
_SVT_NO_PROFILE = ("; no claimed profile: the canary moves the AboveThreshold channel only, whose "
                   "claim is pure (Δ/b_T + 2Δ/b_q, the same at every δ), while the mechanism's "
                   "exact ε(δ) falls as δ grows, so a larger δ can only lose power")


def _claim() -> float:
    """The guarantee a run of the audit plan reports (liu_privacy: dp-accounting for the
    Gaussian part, Δ/b_T + 2Δ/b_q for AboveThreshold)."""
    plan = liu_audit_plan()
    eps_g = accounting.epsilon(accounting.gaussian_event(plan.spider.z), DELTA)
    return max(eps_g, plan.sensitivity / plan.b_threshold + 2.0 * plan.sensitivity / plan.b_query)


# =============================================================================================
# the DP-SPIDER channel
# =============================================================================================
def _zero_held_out(gen, X, k, row):
    C, d = X.shape
    return np.zeros((1, C, d)), np.zeros((1, C, d, d))


def _run_oracle(data: AuditRecords, gens, steps: int, observe) -> None:
    plan = dataclasses.replace(liu_audit_plan(), max_steps=steps, candidates=1)
    liu_sosp(data, plan, gens, held_out=_zero_held_out, observe=observe)


def oracle_measured_variances(rows: int = 300) -> dict:
    """Per-coordinate noise variance of the O₁ and O₂ releases of [29]'s loop on zero-data
    records (release minus its noise-free value: −0.3 for O₁, 0 for O₂'s increment), fixed
    seed."""
    acc = {"o1": [], "o2": []}

    def obs(kind, row, answer, sigma, x, x_prev):
        acc[kind].append(float(answer[0, 0]) + (SLOPE if kind == "o1" else 0.0))

    gens = [np.random.Generator(np.random.PCG64(s))
            for s in np.random.SeedSequence([2026, 29, 7]).spawn(rows)]
    _run_oracle(AuditRecords("linear", 0.0, -1), gens, 2, obs)
    return {k: float(np.mean(np.square(v))) if v else 0.0 for k, v in acc.items()}


_ORACLE_CANARIES = {  # label: (kind, stream index, query holding it)
    "O1 linear": ("linear", 0, "o1"),
    "O2 sine": ("sine", 45, "o2"),
}


def _oracle_release(label: str):
    kind, index, query = _ORACLE_CANARIES[label]
    steps = 1 if query == "o1" else 2

    def release(side, rng, trials):
        var = oracle_measured_variances()[query]
        b = liu_audit_plan().spider
        data = AuditRecords(kind, 1.0 if side else -1.0, index)
        score = np.zeros(trials)
        used = np.zeros(trials, dtype=np.int64)

        def obs(k, row, answer, sigma, x, x_prev):
            batch = b.b1 if k == "o1" else b.b2
            start = used[row]
            used[row] += batch
            if start <= index < start + batch:
                shift = (G_S if kind == "linear" else
                         M_S * (math.sin(float(x[0])) - math.sin(float(x_prev[0])))) / batch
                # a missing noise (measured variance 0) keeps the score finite and decisive
                score[row] += float(answer[0, 0]) * shift / max(var, 1e-30)

        _run_oracle(data, spawn_rows(rng, trials), steps, obs)
        return score
    return release


# =============================================================================================
# AboveThreshold
# =============================================================================================
def svt_scales(epsilon: float = EPS) -> dict:
    """Δ, threshold, b_T, b_q recomputed from the audit's constants (not from the plan): the
    score max{‖∇f̂‖, √(α/ρ)(−λ_min)₊} of a mean over n_sel held-out records moves by at most
    Δ = max{2G_s, √(α/ρ)·2M_s}/n_sel under replace-one; b_T = 2Δ/ε, b_q = 4Δ/ε (ε/2 + ε/2)."""
    p = LIU_AUDIT
    n_sel = min(max(1, math.ceil(0.1 * p["n"])), 2000)
    delta_s = max(2.0 * G_S, math.sqrt(p["alpha"] / p["hessian_lipschitz"]) * 2.0 * M_S) / n_sel
    return {"Delta": delta_s, "threshold": p["alpha"] / 2.0, "b_threshold": 2.0 * delta_s / epsilon,
            "b_query": 4.0 * delta_s / epsilon, "n_select": n_sel}


def _pattern(name: str) -> np.ndarray:
    if name == "raise k-1, lower the last":
        return np.r_[np.ones(SVT_K - 1), -1.0]
    if name == "lower all":
        return -np.ones(SVT_K)
    raise ValueError(f"sequence must be one of {tuple(SVT_SEQUENCES)}, got {name!r}")


#: Query sequences searched; each maps AboveThreshold's output index to a score ordered by its
#: likelihood ratio D′/D (none selected: position k).
SVT_SEQUENCES = ("raise k-1, lower the last", "lower all")


def _svt_scores_on(side: int, name: str) -> np.ndarray:
    """The k queries' scores on D (side 0) and D′ (side 1): 3Δ above the threshold on D, moved
    by pattern·Δ on D′."""
    sc = svt_scales()
    return sc["threshold"] + SVT_GAP * sc["Delta"] + side * _pattern(name) * sc["Delta"]


def _svt_release(name: str):
    def release(side, rng, trials):
        plan = liu_audit_plan()
        s = _svt_scores_on(int(side), name)
        # held-out gradients whose norms are the scores (d = 1, zero Hessians): the canary's
        # replace-one difference is pattern·Δ at every candidate
        def held_out(gen, X, k, row):
            return s.reshape(1, -1, 1).copy(), np.zeros((1, s.size, 1, 1))
        idx = liu_select(np.zeros((trials, SVT_K, 1)), plan, held_out, spawn_rows(rng, trials))
        pos = np.where(idx >= 0, idx, SVT_K)
        if name == "lower all":
            return -pos.astype(float)            # D′ passes earlier
        # D′: the last query passes more, the others less; none selected in between
        return np.where(pos == SVT_K - 1, 2.0, np.where(pos == SVT_K, 1.0, 0.0))
    return release


def svt_index_law(scores: np.ndarray, threshold: float, b_threshold: float, b_query: float,
                  grid: int = 40_001) -> np.ndarray:
    """Exact law of AboveThreshold's output (index 0..k−1, then "none") on fixed scores:
    P[index = t] = E_L[Π_{j<t}(1 − p_j(L))·p_t(L)], p_j(L) = P[Lap(b_q) ≥ s_j − threshold + L],
    integrated over the threshold noise L ~ Lap(b_T) on a grid of ±60 b_T (b_T = 0: L = 0;
    b_q = 0: deterministic comparisons)."""
    if b_threshold > 0:
        L = np.linspace(-60.0 * b_threshold, 60.0 * b_threshold, grid)
        w = np.exp(-np.abs(L) / b_threshold) / (2.0 * b_threshold) * (L[1] - L[0])
    else:
        L, w = np.zeros(1), np.ones(1)
    alive, out = np.ones_like(L), []
    for s in np.asarray(scores, dtype=float):
        x = s - threshold + L
        if b_query > 0:
            p = np.where(x < 0, 1.0 - 0.5 * np.exp(np.minimum(x, 0.0) / b_query),
                         0.5 * np.exp(-np.maximum(x, 0.0) / b_query))
        else:
            p = (x <= 0).astype(float)
        out.append(float(np.sum(alive * p * w)))
        alive = alive * (1.0 - p)
    out.append(float(np.sum(alive * w)))
    return np.array(out)


def _epsilon_of_laws(p0: np.ndarray, p1: np.ndarray, delta: float) -> float:
    def dlt(e):
        return max(np.maximum(0.0, p1 - math.exp(e) * p0).sum(),
                   np.maximum(0.0, p0 - math.exp(e) * p1).sum())
    if dlt(0.0) <= delta:
        return 0.0
    return float(brentq(lambda e: dlt(e) - delta, 0.0, 60.0, xtol=1e-10))


def svt_exact_epsilon(name: str, *, threshold_factor: float = 1.0,
                      query_factor: float = 1.0, delta: float = DELTA) -> float:
    """Exact ε(δ) of AboveThreshold's output on the sequence ``name`` at the scales of
    :func:`svt_scales` times the factors (a broken variant's: 0 drops a noise, 0.5 halves it)."""
    sc = svt_scales()
    laws = [svt_index_law(_svt_scores_on(side, name), sc["threshold"],
                          threshold_factor * sc["b_threshold"], query_factor * sc["b_query"])
            for side in (0, 1)]
    return _epsilon_of_laws(laws[0], laws[1], delta)


def _svt_exact() -> float:
    return max(svt_exact_epsilon(n) for n in SVT_SEQUENCES)


# =============================================================================================
# measured noise (tests/test_sosp_liu_audit.py and the rows of sosp.liu.*)
# =============================================================================================
def measure_liu_noise(rows: int = 100, seed: int = 0) -> dict:
    """[29]'s O₁ noise over z·2G_s/b1 and AboveThreshold's threshold and query noises over
    2Δ/ε and 4Δ/ε, each recomputed here (z by dp-accounting at (ε, δ), b1 from the plan's
    formula n_tr κ/(2Uη) with η = 1/M, Δ by :func:`svt_scales`): O₁ from one step on zero-data
    records, the Laplace draws from ``liu_select`` on the "lower all" sequence."""
    p, sc = LIU_AUDIT, svt_scales()
    n_tr = p["n"] - sc["n_select"]
    b1 = min(n_tr, max(1, math.ceil(n_tr * p["kappa"] * p["M"] / (2.0 * p["U"]))))
    sigma1 = accountant_multiplier(EPS, DELTA) * 2.0 * G_S / b1
    o1 = []
    gens = [np.random.Generator(np.random.PCG64(s))
            for s in np.random.SeedSequence([seed, 29, 11]).spawn(rows)]
    _run_oracle(AuditRecords("linear", 0.0, -1), gens, 1,
                lambda kind, row, answer, *a: o1.append(float(answer[0, 0]) + SLOPE))
    thr, qs = [], []
    plan = liu_audit_plan()
    s = _svt_scores_on(0, "lower all")
    gens = [np.random.Generator(np.random.PCG64(x))
            for x in np.random.SeedSequence([seed, 29, 12]).spawn(rows)]
    liu_select(np.zeros((rows, SVT_K, 1)), plan,
               lambda g, X, k, r: (s.reshape(1, -1, 1), np.zeros((1, s.size, 1, 1))), gens,
               observe=lambda r, nt, nq: (thr.append(nt), qs.append(np.asarray(nq))))
    o1a, ta, qa = np.array(o1), np.array(thr), np.concatenate(qs)
    return {"o1": {"ratio": float(np.sqrt(np.mean(o1a ** 2)) / sigma1), "count": o1a.size},
            "svt_threshold": {"ratio": float(np.mean(np.abs(ta)) / sc["b_threshold"]),
                              "count": ta.size},
            "svt_query": {"ratio": float(np.mean(np.abs(qa)) / sc["b_query"]),
                          "count": qa.size}}


# =============================================================================================
# registration
# =============================================================================================
_ORACLE_NOTE = ("[29]'s loop (η = 1/M, forced O₁ near saddles); one canary record among "
                "zero-data training records, landscape −0.3·x₁ (d = 1): O1 linear ±G_s·e₁ at "
                "index 0, O2 sine ∓M_s cos x₁ at index b1 = 45; score weighted by the noise "
                "measured on a calibration run, not the σ the algorithm reports")
_SVT_NOTE = (f"liu_select on k = {SVT_K} candidates, held-out scores {SVT_GAP:g}Δ above the "
             "threshold on D; sequences searched: the canary raises the first k − 1 queries "
             "and lowers the last, or lowers all (each by Δ)")

register_audit(AuditTarget(
    name="sosp.liu.oracle.stepwise", paper="sosp",
    algorithm="algorithms.sosp.liu.liu_sosp ([29]), its DP-SPIDER O₁/O₂ releases",
    relation="replace-one", delta=ORACLE_DELTA, claimed_epsilon=_oracle_claim,
    claimed_epsilon_at=_oracle_claim_at,
    candidates={k: _oracle_release(k) for k in _ORACLE_CANARIES}, view="stepwise",
    # 8·10⁴ runs per side: power 0.88 (0.62 at 2·10⁴; its δ = 0.05 tops the profile ladder)
    trials=80_000, search_trials=2_000,
    exact_epsilon=lambda: exact_gaussian_epsilon(liu_audit_plan().spider.z, 1, ORACLE_DELTA),
    note=_ORACLE_NOTE))
register_audit(AuditTarget(
    name="sosp.liu.svt", paper="sosp",
    algorithm="algorithms.sosp.liu.liu_select ([29]'s AboveThreshold over the iterates)",
    relation="replace-one", delta=DELTA, claimed_epsilon=_claim,
    candidates={k: _svt_release(k) for k in SVT_SEQUENCES}, view="mechanism",
    trials=100_000, search_trials=20_000, exact_epsilon=_svt_exact, reference="laplace",
    note=_SVT_NOTE + _SVT_NO_PROFILE))

_LIU_MOD = "algorithms.sosp.liu"


def _svt_factors(threshold_factor: float, query_factor: float):
    def make(orig):
        def noise(gen, b_threshold, b_query, k):
            nt, nq = orig(gen, b_threshold, b_query, k)
            return threshold_factor * nt, query_factor * nq
        return noise
    return make


_MUTANTS = (
    ("sosp.liu.svt_threshold_noise_removed",
     "[29]'s AboveThreshold compares the queries with the bare threshold (its Lap(2Δ/ε) "
     "omitted; ε still reported as Δ/b_T + 2Δ/b_q)",
     Patch(_LIU_MOD, "_svt_noise", _svt_factors(0.0, 1.0), everywhere=False),
     "sosp.liu.svt", "noise omitted"),
    ("sosp.liu.svt_query_noise_halved",
     "[29]'s AboveThreshold draws its query noise as Lap(2Δ/ε) instead of Lap(4Δ/ε)",
     Patch(_LIU_MOD, "_svt_noise", _svt_factors(1.0, 0.5), everywhere=False),
     "sosp.liu.svt", "AboveThreshold noise slip"),
    ("sosp.liu.o1_noise_removed",
     "[29]'s DP-SPIDER O₁ answers carry no noise (10⁻¹² of it: the plan's σ₁; z unchanged)",
     Patch(_LIU_MOD, "o1_sensitivity", lambda orig: (lambda G, b: 1e-12 * orig(G, b)),
           everywhere=False),
     "sosp.liu.oracle.stepwise", "noise omitted"),
)
#: The mutants (registered by :mod:`empirical.papers.sosp.mutants`).
LIU_MUTANTS = tuple(
    Mutant(_name, "sosp", _what, (_patch,), experiments=("sosp.liu.best.n",), audits=(_audit,),
           tests=("tests/test_sosp_liu_audit.py::test_liu_noise_matches_its_claim",),
           bug_class=_cls)
    for _name, _what, _patch, _audit, _cls in _MUTANTS)
for _name, _what, _patch, _audit, _cls in _MUTANTS:
    register_audit(AuditTarget(
        name=_name, paper="sosp", algorithm=_what, relation="replace-one",
        delta=DELTA if _audit == "sosp.liu.svt" else ORACLE_DELTA,
        claimed_epsilon=_claim if _audit == "sosp.liu.svt" else _oracle_claim,
        claimed_epsilon_at=None if _audit == "sosp.liu.svt" else _oracle_claim_at,
        release=with_mutant(_name, _svt_release("raise k-1, lower the last")
                            if _audit == "sosp.liu.svt" else _oracle_release("O1 linear")),
        view="mechanism" if _audit == "sosp.liu.svt" else "stepwise",
        trials=100_000 if _audit == "sosp.liu.svt" else 20_000, expect="broken",
        reference="laplace" if _audit == "sosp.liu.svt" else "gaussian",
        note=_SVT_NOTE + _SVT_NO_PROFILE if _audit == "sosp.liu.svt" else _ORACLE_NOTE))
