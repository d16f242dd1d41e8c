"""Stored privacy-audit results: one checksummed JSON file per audit target.

``dprates audit`` (:mod:`empirical.privacy.audit`) writes each target's result, as soon as it is
computed, to ``<results>/audits/<target>.json`` with the same atomic write (temporary file,
fsync, rename) and the same checksum convention as the sweep runner
(:mod:`empirical.run.runner`): the SHA-256 of the canonical JSON of every other field.  The record
carries the empirical lower bound ε_lo with its confidence, the claimed ε, the verdict, how the
runs were seeded, and a code fingerprint, so the report (:mod:`empirical.report.data`) can show
a stored audit beside the privacy an experiment spent without ever running an audit itself.

Fingerprint: the runner's ``code_fingerprint`` of the module that registered the target (its
release function's module, every algorithm module it imports, the numerical core and the
numpy/scipy/dp-accounting versions) combined with the SHA-256 of the audit harness's modules
(:data:`_HARNESS`: the statistics, the seeding, the registry, the core targets; the runner treats
them as harness code).  A stored audit whose
fingerprint differs from the current code is loaded as ``stale`` and shown as such, not hidden.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from empirical.store.rows import _atomic_write_json, _canonical, code_fingerprint, results_dir

if TYPE_CHECKING:  # pragma: no cover
    from empirical.privacy.audit import AuditResult, AuditTarget

__all__ = ["AUDIT_FORMAT", "AUDIT_DIR", "StoredAudit", "audit_path", "audit_fingerprint",
           "audit_record", "store", "load"]

AUDIT_FORMAT = 1
#: Sub-directory of the results directory (paper keys never start with this name's prefix).
AUDIT_DIR = "audits"
_FIELDS = ("format", "target", "paper", "claimed", "epsilon_lo", "confidence", "verdict",
           "fingerprint", "checksum")


def audit_path(name: str, results: str | os.PathLike | None = None) -> Path:
    """``<results>/audits/<name>.json``; ``name`` must be a plain target name."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"audit target name must be a non-empty name without '/' or a "
                         f"leading '.', got {name!r}")
    return results_dir(results) / AUDIT_DIR / f"{name}.json"


def _target_module(target: "AuditTarget") -> str:
    fn = target.release if target.release is not None else next(iter(target.candidates.values()))
    return getattr(fn, "__module__", None) or "empirical.privacy.audit"


#: The audit harness's modules: the statistics, the seeding, the registry and the core targets.
_HARNESS = ("empirical.privacy.audit", "empirical.privacy.statistics", "empirical.privacy.targets",
            "empirical.privacy.core_targets")


def _harness_sha() -> str:
    # The harness's source is hashed as files: the store does not import the harness above it.
    h = hashlib.sha256()
    for name in _HARNESS:
        spec = importlib.util.find_spec(name)
        h.update(name.encode() + b"\0" + Path(spec.origin).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def audit_fingerprint(module: str) -> dict:
    """Code fingerprint of an audit registered by ``module`` (see the module docstring)."""
    fp = code_fingerprint(module)
    code = dict(fp["code"], **{"empirical.privacy.audit": _harness_sha()})
    digest = hashlib.sha256(_canonical({"format": AUDIT_FORMAT, "code": code,
                                        "versions": fp["versions"]})).hexdigest()[:16]
    return {"digest": digest, "code": code, "versions": fp["versions"]}


def _num(x: float | None) -> float | None:
    # JSON has no inf/nan: an unbounded ε_lo (a zero denominator) is stored as None with a flag
    return None if x is None or not math.isfinite(x) else float(x)


def audit_record(result: "AuditResult") -> dict:
    """The JSON record of one audit result (without the file's checksum)."""
    t, b = result.target, result.bound
    module = _target_module(t)
    fp = audit_fingerprint(module)
    return {
        "format": AUDIT_FORMAT, "target": t.name, "paper": t.paper, "algorithm": t.algorithm,
        "relation": t.relation, "view": t.view, "expect": t.expect, "note": t.note,
        "delta": t.delta, "alpha": result.alpha, "confidence": 1.0 - result.alpha,
        "claimed": _num(result.claimed), "epsilon_lo": _num(b.epsilon),
        "epsilon_lo_infinite": not math.isfinite(b.epsilon), "point": _num(b.point),
        "threshold": _num(b.threshold), "form": b.form, "fpr": b.fpr, "tpr": b.tpr,
        "n_eval": b.n_eval, "exact": _num(result.exact), "min_fraction": t.min_fraction,
        "verdict": result.verdict, "ok": result.ok, "trials": result.trials,
        "default_trials": t.trials,
        "pair": result.pair, "search": {k: _num(v) for k, v in result.search.items()},
        "search_setting": getattr(result, "setting", "quick"),
        "power": _num(getattr(result, "power", None)),
        "power_reference": t.reference,
        "low_power": bool(getattr(result, "low_power", False)),
        "alpha_per_point": getattr(result, "point_alpha", result.alpha),
        "profile": _profile_record(getattr(result, "profile", None)),
        "seeding": {"scheme": "block j of side s draws from Generator(PCG64(SeedSequence("
                              "[h(target), h(pair), h(tag), s, j]))), h = first 8 bytes of "
                              "SHA-256, little-endian; tag 'search' for the pair search, "
                              "'audit' for the audit",
                    "h_target": _h(t.name), "h_pair": _h(result.pair),
                    "block": result.block, "sides": [0, 1]},
        "seconds": result.seconds, "module": module, "fingerprint": fp["digest"],
        "code": fp["code"], "versions": fp["versions"],
    }


def _profile_record(pp) -> dict | None:
    """The profile point of an audit (δ_p, its claim, bound and power, the ladder's powers)."""
    if pp is None:
        return None
    b = pp.bound
    return {"delta": pp.delta, "claimed": _num(pp.claimed), "epsilon_lo": _num(b.epsilon),
            "epsilon_lo_infinite": not math.isfinite(b.epsilon), "point": _num(b.point),
            "threshold": _num(b.threshold), "form": b.form, "fpr": b.fpr, "tpr": b.tpr,
            "power": _num(pp.power),
            "ladder": [[float(d), _num(p)] for d, p in sorted(pp.ladder.items())]}


def _h(s: str) -> int:
    """The hash the audit harness seeds with (it imports it from here): first 8 bytes of
    SHA-256, little-endian."""
    return int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little")


def store(result: "AuditResult", results: str | os.PathLike | None = None) -> Path:
    """Write ``result`` atomically to :func:`audit_path`; returns the path."""
    rec = json.loads(_canonical(audit_record(result)))
    # Checksum of what a reader will parse (the runner's convention)
    rec["checksum"] = hashlib.sha256(_canonical(rec)).hexdigest()
    path = audit_path(result.target.name, results)
    _atomic_write_json(path, rec)
    return path


@dataclass(frozen=True)
class StoredAudit:
    """One stored audit as the report shows it."""

    target: str
    paper: str
    algorithm: str
    expect: str
    relation: str
    view: str
    delta: float
    confidence: float
    claimed: float | None
    epsilon_lo: float | None          # None: unbounded (a zero-rate denominator)
    exact: float | None
    verdict: str
    ok: bool
    trials: int
    fingerprint: str
    status: str = "ok"                # "ok" or "stale" (code changed since it was stored)
    reason: str = ""
    path: str = ""
    record: dict = field(default_factory=dict, repr=False, compare=False)
    power: float | None = None        # fraction of the exact ε certified on the reference
    low_power: bool = False           # the better point's power below POWER_FLAG
    profile_delta: float | None = None        # the profile point δ_p (None: none audited)
    profile_claimed: float | None = None      # ε(δ_p) claimed
    profile_epsilon_lo: float | None = None   # ε_lo at δ_p (None also when unbounded)
    profile_power: float | None = None        # the reference power at δ_p

    @property
    def audited(self) -> str:
        return "∞" if self.epsilon_lo is None else f"{self.epsilon_lo:.3f}"

    def __str__(self) -> str:
        conf = f"{100 * self.confidence:g}%"
        claimed = "—" if self.claimed is None else f"{self.claimed:.3f}"
        s = (f"{self.target}: ε_lo {self.audited} ({conf}) vs claimed {claimed} at δ = "
             f"{self.delta:g}, {self.verdict}")
        if self.profile_delta is not None:
            lo = "∞" if self.profile_epsilon_lo is None else f"{self.profile_epsilon_lo:.3f}"
            claim = "—" if self.profile_claimed is None else f"{self.profile_claimed:.3f}"
            s += f"; at δ_p = {self.profile_delta:g}: ε_lo {lo} vs {claim}"
        if self.low_power:
            best = max(p for p in (self.power, self.profile_power, 0.0) if p is not None)
            s += f" [LOW POWER {best:.2f}]"
        return s + (f" [stale: {self.reason}]" if self.status == "stale" else "")


def _is_num(x, lo: float = -math.inf, hi: float = math.inf, *, open_lo: bool = False,
            open_hi: bool = False) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return False
    return (lo < x if open_lo else lo <= x) and (x < hi if open_hi else x <= hi)


def _opt_num(x, lo: float = 0.0) -> bool:
    return x is None or _is_num(x, lo)


#: Each field the report reads: (required, check, what it must be).  A record whose checksum
#: matches but whose fields have other types or ranges is refused as a whole, so one file can
#: neither break the report nor hide the other audits.
_TYPES = {
    "format": (True, lambda v: v == AUDIT_FORMAT, f"{AUDIT_FORMAT}"),
    "target": (True, lambda v: isinstance(v, str) and bool(_SAFE_NAME.fullmatch(v)),
               "a target name"),
    "paper": (True, lambda v: isinstance(v, str) and bool(re.fullmatch(r"[a-z][a-z0-9_]*", v)),
              "a paper key"),
    "algorithm": (False, lambda v: isinstance(v, str), "a string"),
    "expect": (False, lambda v: v in ("private", "broken"), "'private' or 'broken'"),
    "relation": (False, lambda v: isinstance(v, str), "a string"),
    "view": (False, lambda v: isinstance(v, str), "a string"),
    "delta": (False, lambda v: _is_num(v, 0, 1, open_lo=True, open_hi=True), "in (0, 1)"),
    "confidence": (True, lambda v: _is_num(v, 0, 1, open_lo=True, open_hi=True), "in (0, 1)"),
    "claimed": (True, _opt_num, "a number >= 0 or null"),
    "epsilon_lo": (True, _opt_num, "a number >= 0 or null"),
    "exact": (False, _opt_num, "a number >= 0 or null"),
    "verdict": (True, lambda v: isinstance(v, str) and len(v) <= 40, "a short string"),
    "ok": (False, lambda v: isinstance(v, bool), "true or false"),
    "trials": (False, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
               "an integer >= 1"),
    "fingerprint": (True, lambda v: isinstance(v, str), "a string"),
    "module": (False, lambda v: v is None or isinstance(v, str), "a module name"),
    "code": (False, lambda v: v is None or isinstance(v, dict), "an object"),
    "versions": (False, lambda v: v is None or isinstance(v, dict), "an object"),
    "checksum": (True, lambda v: isinstance(v, str), "a string"),
    "profile": (False, lambda v: v is None or _profile_ok(v), "null or a profile point"),
}


def _profile_ok(v) -> bool:
    return (isinstance(v, dict) and _is_num(v.get("delta"), 0, 1, open_lo=True, open_hi=True)
            and all(_opt_num(v.get(k)) for k in ("claimed", "epsilon_lo", "power")))
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_][A-Za-z0-9_\-]*)*")


def _typed(rec: dict) -> str:
    """Empty when every field of ``rec`` has its type and range (:data:`_TYPES`), else the
    first that does not, named."""
    for name, (required, ok, what) in _TYPES.items():
        if name not in rec:
            if required:
                return f"missing field {name!r}"
            continue
        if not ok(rec[name]):
            return f"field {name!r} must be {what}, got {str(rec[name])[:40]!r}"
    return ""


def _read(path: Path) -> tuple[dict | None, str]:
    from empirical.store.integrity import CorruptFile, parse_json

    try:
        rec = parse_json(path.read_bytes())
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    except CorruptFile as exc:
        return None, str(exc)
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    missing = [k for k in _FIELDS if k not in rec]
    if missing:
        return None, f"missing fields {missing}"
    if rec["format"] != AUDIT_FORMAT:
        return None, f"format {rec['format']!r}, expected {AUDIT_FORMAT}"
    body = {k: v for k, v in rec.items() if k != "checksum"}
    try:
        digest = hashlib.sha256(_canonical(body)).hexdigest()
    except (TypeError, ValueError, RecursionError):
        digest = ""
    if digest != rec["checksum"]:
        return None, "checksum mismatch (edited or damaged after writing)"
    bad = _typed(rec)
    if bad:
        return None, bad
    if path.stem != rec["target"]:
        return None, f"holds target {rec['target']!r}, not {path.stem!r}"
    return rec, ""


def _staleness(rec: dict, current: dict[str, dict | str]) -> str:
    """Empty when ``rec`` was stored by the current code, else what changed, in a few words."""
    module = rec.get("module") or "empirical.privacy.audit"
    if module not in current:
        try:
            current[module] = audit_fingerprint(module)
        except Exception as exc:  # module gone or unreadable: the stored audit cannot be current
            current[module] = f"{module} unavailable ({type(exc).__name__})"
    now = current[module]
    if isinstance(now, str):
        return now
    if now["digest"] == rec["fingerprint"]:
        return ""
    old_code, old_vers = rec.get("code") or {}, rec.get("versions") or {}
    changed = sorted(k for k in set(old_code) | set(now["code"])
                     if old_code.get(k) != now["code"].get(k))
    changed += [f"{k} {old_vers.get(k)} -> {v}" for k, v in now["versions"].items()
                if old_vers.get(k) != v]
    return "code changed since the audit: " + ", ".join(changed[:5]) if changed \
        else "fingerprint differs"


def _profile_fields(v: dict | None) -> dict:
    if not v:
        return {}
    return {"profile_delta": v["delta"], "profile_claimed": v.get("claimed"),
            "profile_epsilon_lo": v.get("epsilon_lo"), "profile_power": v.get("power")}


def load(results: str | os.PathLike | None = None,
         problems: list[str] | None = None) -> dict[str, StoredAudit]:
    """Every stored audit under ``<results>/audits`` by target name.  Files that fail the
    checksum or are malformed are skipped and named in ``problems``; audits stored by other
    code are returned with ``status = "stale"``."""
    d = results_dir(results) / AUDIT_DIR
    out: dict[str, StoredAudit] = {}
    if not d.is_dir():
        return out
    current: dict[str, dict | str] = {}
    for path in sorted(d.glob("*.json")):
        rec, why = _read(path)
        if rec is None:
            if problems is not None:
                problems.append(f"{path}: {why}")
            continue
        reason = _staleness(rec, current)
        out[rec["target"]] = StoredAudit(
            target=rec["target"], paper=rec["paper"], algorithm=rec.get("algorithm", ""),
            expect=rec.get("expect", "private"), relation=rec.get("relation", ""),
            view=rec.get("view", ""), delta=rec.get("delta", float("nan")),
            confidence=rec["confidence"], claimed=rec["claimed"], epsilon_lo=rec["epsilon_lo"],
            exact=rec.get("exact"), verdict=rec["verdict"], ok=bool(rec.get("ok")),
            trials=int(rec.get("trials", 0)), fingerprint=rec["fingerprint"],
            status="stale" if reason else "ok", reason=reason, path=str(path), record=rec,
            power=rec.get("power"), low_power=bool(rec.get("low_power", False)),
            **_profile_fields(rec.get("profile")))
    return out
