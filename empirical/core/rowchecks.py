"""Verdicts on a run's stored rows rather than its slope: the privacy columns (target,
guarantee, spent), the theorem's settings (``used_``/``theory_`` and ``max_``/``limit_`` column
pairs) and the noise measured in every release against the scale the privacy was computed from.
A violation of any of them fails the experiment whatever its slopes say.
"""
from __future__ import annotations

import math

import numpy as np  # noqa: F401
from scipy import stats

from empirical.core.experiment import PRIVACY_UNITS, Experiment

def check_privacy(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """The privacy verdict of a private experiment's stored rows: ``(summary, error)``.

    Every row must carry ``<unit>_target``, ``<unit>_guarantee`` and ``<unit>_spent`` for one
    unit of ``PRIVACY_UNITS``; the guarantee (data independent, from dp-accounting) must equal
    the target within ``exp.privacy_rtol`` and the spend must not exceed the guarantee (relative
    1e-9, the accountant's rounding).  Where rows also carry ``delta_target`` and
    ``delta_guarantee`` (ε stated at a δ), the δ guaranteed must not exceed the δ targeted.
    Whatever the slopes say, a violation fails the experiment.
    """
    if not exp.private:
        return "not private (baseline or control)", ""
    if not rows:
        return "", "no rows"
    unit = next((u for u in PRIVACY_UNITS
                 if all(f"{u}_{c}" in rows[0] for c in ("target", "guarantee", "spent"))), None)
    if unit is None:
        return "", ("private experiment stores no privacy columns (<unit>_target, "
                    f"<unit>_guarantee, <unit>_spent for a unit in {PRIVACY_UNITS})")
    bad = []
    for r in rows:
        t, g, s = (r.get(f"{unit}_{c}") for c in ("target", "guarantee", "spent"))
        if any(v is None or not math.isfinite(v) for v in (t, g, s)):
            bad.append(f"seed {r['seed']}: non-finite privacy value")
        elif abs(g - t) > exp.privacy_rtol * t:
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"guarantee {unit}={g:.6g} != target {t:.6g}")
        elif s > g * (1 + 1e-9):
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"spent {unit}={s:.6g} > guarantee {g:.6g}")
        elif ("delta_target" in r and "delta_guarantee" in r
              and not (r["delta_guarantee"] is not None and r["delta_target"] is not None
                       and r["delta_guarantee"] <= r["delta_target"] * (1 + 1e-9))):
            bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g} seed {r['seed']}: "
                       f"guarantee delta={r['delta_guarantee']} > target {r['delta_target']}")
    if bad:
        return "", f"privacy violated in {len(bad)}/{len(rows)} rows; first: {bad[0]}"
    return (f"{unit}: guarantee = target (rtol {exp.privacy_rtol:g}) and spent <= guarantee "
            f"in all {len(rows)} rows"), ""


def check_settings(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """Every parameter of a theorem is exercised as the theorem sets it: ``(summary, error)``.

    For each pair of row columns ``used_<x>`` / ``theory_<x>`` the value the algorithm actually
    used (step count, noise std, clip, batch) must equal the theorem's setting, which the
    experiment computes *independently* of the algorithm (relative 1e-9); for each pair
    ``max_<x>`` / ``limit_<x>`` the measured value must not exceed the limit (an invariant such
    as ‖w_t − w0‖ ≤ the projection radius).  Rows without such columns pass trivially.
    """
    if not rows:
        return "", ""
    keys = rows[0].keys()
    eq = sorted(k[5:] for k in keys if k.startswith("used_") and f"theory_{k[5:]}" in keys)
    le = sorted(k[4:] for k in keys if k.startswith("max_") and f"limit_{k[4:]}" in keys)
    bad = []
    for r in rows:
        for x in eq:
            u, t = float(r[f"used_{x}"]), float(r[f"theory_{x}"])
            if not abs(u - t) <= 1e-9 * max(abs(t), 1e-300):
                bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g}: {x} used {u:.6g} "
                           f"!= theorem's {t:.6g}")
        for x in le:
            m, lim = float(r[f"max_{x}"]), float(r[f"limit_{x}"])
            if not m <= lim * (1 + 1e-9):
                bad.append(f"{exp.variable}={r[f'p_{exp.variable}']:g}: {x} reached {m:.6g} "
                           f"> limit {lim:.6g}")
    if bad:
        return "", f"settings violated in {len(bad)} row values; first: {bad[0]}"
    if not (eq or le):
        return "", ""
    return f"settings as the theorem sets them: {', '.join(eq + le)}", ""


#: False-alarm probability of one noise test (one channel at one grid point, both tails
#: together): the statistic's law is exact under a correct implementation, so this is the exact
#: rate; a verify runs about 10³ such tests (expected false failures ≈ 10⁻³).
NOISE_ALPHA = 1e-6


#: The statistics' families whose exact laws :func:`noise_interval` knows: Gaussian noise gives
#: S = Σ(e/σ)² ~ χ²_k, Laplace noise S = Σ|e|/b ~ Gamma(k, 1) (the rows' ``noise_<family>_<ch>``
#: columns, written by :mod:`algorithms.noise_meter`, whose families must be these).
FAMILIES = ("gauss", "laplace")


def _noise_channels(keys) -> list[tuple[str, str]]:
    out = []
    for k in keys:
        for fam in FAMILIES:
            pre = f"noise_{fam}_"
            if k.startswith(pre) and f"noise_count_{k[len(pre):]}" in keys:
                out.append((k[len(pre):], fam))
    return sorted(out)


def noise_interval(k: float, family: str, sides: int,
                   alpha: float = NOISE_ALPHA) -> tuple[float, float]:
    """Acceptance interval of the measured/claimed scale ratio for k coordinates: the
    (α/sides, 1 − α/2) quantiles of S's exact law (Gaussian: χ²_k = Gamma(k/2, 2), ratio
    √(S/k); Laplace: Gamma(k, 1), ratio S/k), upper end ∞ for a one-sided channel."""
    if family == "gauss":
        law, to_ratio = stats.gamma(k / 2.0, scale=2.0), lambda q: math.sqrt(q / k)
    else:
        law, to_ratio = stats.gamma(k, scale=1.0), lambda q: q / k
    lo = to_ratio(float(law.ppf(alpha / sides)))
    hi = to_ratio(float(law.isf(alpha / 2.0))) if sides == 2 else math.inf
    return lo, hi


def check_noise(exp: Experiment, rows: list[dict]) -> tuple[str, str]:
    """The noise measured in every release against the scale the privacy columns were computed
    from: ``(summary, error)``.

    Rows carry, per channel, ``noise_gauss_<ch>`` or ``noise_laplace_<ch>`` (the statistic S of
    :mod:`algorithms.noise_meter`), ``noise_count_<ch>`` (its k) and ``noise_sides_<ch>``.  Per
    grid point the seeds' S and k are summed (independent draws) and S must lie inside the
    central 1 − :data:`NOISE_ALPHA` interval of its exact law (two-sided channels: too much
    noise means the accountant priced a σ the run did not use, and the rate checks test another
    algorithm than the theorem's; one-sided: only the lower tail, too little noise).  Written as
    the ratio measured/claimed scale, the interval is about 1 ± 4.9/√(2k) (Gaussian): a dropped
    noise (ratio 0), a σ of another channel or a factor √(L+1) slipped is far outside it as soon
    as k ≥ 50.  Rows without such columns pass trivially."""
    if not rows:
        return "", ""
    chans = _noise_channels(rows[0].keys())
    if not chans:
        return "", ""
    by: dict[tuple[str, float], list[float]] = {}
    bad, worst = [], {}
    for r in rows:
        v = float(r[f"p_{exp.variable}"])
        for ch, fam in chans:
            acc = by.setdefault((ch, v), [0.0, 0.0, 2.0])
            acc[0] += float(r[f"noise_{fam}_{ch}"])
            acc[1] += float(r[f"noise_count_{ch}"])
            acc[2] = min(acc[2], float(r.get(f"noise_sides_{ch}", 2.0)))
    fams = dict(chans)
    for (ch, v), (S, k, sides) in sorted(by.items()):
        if k <= 0:
            continue
        fam = fams[ch]
        ratio = math.sqrt(S / k) if fam == "gauss" else S / k
        lo, hi = noise_interval(k, fam, int(sides))
        w = worst.setdefault(ch, [math.inf, -math.inf, math.inf, 0])
        w[0], w[1], w[2], w[3] = min(w[0], ratio), max(w[1], ratio), min(w[2], k), w[3] + 1
        if not lo <= ratio <= hi:
            bad.append(f"{exp.variable}={v:g}: {ch} noise measured/claimed "
                       f"{ratio:.4g} outside [{lo:.4g}, {hi:.4g}] ({int(k)} coordinates)")
    if bad:
        return "", f"noise differs from its claim in {len(bad)} channel-points; first: {bad[0]}"
    if not worst:
        return "", ""
    parts = [f"{ch} {lo_:.3g}-{hi_:.3g} (k >= {int(kmin)})"
             for ch, (lo_, hi_, kmin, _) in sorted(worst.items())]
    return ("noise measured/claimed inside the exact " f"{1 - NOISE_ALPHA:.6g} interval: "
            + ", ".join(parts)), ""


def _with_noise(exp: Experiment, rows: list[dict], privacy: str,
                privacy_error: str) -> tuple[str, str]:
    noise, noise_error = check_noise(exp, rows)
    return ("; ".join(x for x in (privacy, noise) if x),
            "; ".join(x for x in (privacy_error, noise_error) if x))
