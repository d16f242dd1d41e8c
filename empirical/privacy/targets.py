"""The registry of privacy-audit targets: what a target declares (:class:`AuditTarget`), what
an audit of it found (:class:`AuditResult`), and how targets are registered and selected.  A
paper's audit module registers its targets with :func:`register_audit` when it is imported."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from algorithms.validation import check_int, check_open_interval
from bounds.core import papers
from empirical.privacy.statistics import EpsilonBound


#: Neighbouring relations an algorithm may claim.
RELATIONS = ("replace-one", "add-remove", "zero-out", "user-replace", "user-add-remove")
_VIEWS = ("final", "stepwise", "mechanism")
_EXPECT = ("private", "broken")
_REFERENCES = ("gaussian", "laplace")
#: Search settings: ``quick`` (tests, default) tries a target's ``candidates``; ``full`` adds its
#: ``full_candidates`` and runs ``full_trials`` per side.
SEARCHES = ("quick", "full")
#: An audit whose power (:func:`reference_power`) is below this is flagged LOW POWER.
POWER_FLAG = 0.7
#: The δ ladder of profile-point audits: a target that claims a profile δ ↦ ε(δ)
#: (``claimed_epsilon_at``) is audited, besides its own δ, at the ladder point above it where the
#: reference power is largest.  Near δ = 10⁻⁵ a threshold test needs ~10⁶ runs per side (the
#: (ε, δ) trade-off is tangent to the Gaussian's at false-positive rates ≈ δ); at 10⁻³–5·10⁻²
#: the 10⁴–10⁵ runs the targets use certify most of ε(δ).
PROFILE_DELTAS = (1e-3, 1e-2, 5e-2)

ReleaseFn = Callable[[int, np.random.Generator, int], np.ndarray]



# =============================================================================================
# registry
# =============================================================================================
@dataclass(frozen=True)
class AuditTarget:
    """One private mechanism and one (or several candidate) neighbouring pairs to audit it on.

    ``release(side, rng, trials)`` returns the scores of ``trials`` independent runs on D
    (side 0) or D′ (side 1), drawing only from ``rng``.  ``claimed_epsilon()`` is the ε(δ) the
    algorithm claims, from dp-accounting.  ``candidates`` replaces ``release`` when the pair (or
    the statistic) is searched for.  ``expect="broken"`` marks a deliberately broken control
    that the audit must catch.  ``exact_epsilon``/``min_fraction`` state a power requirement.
    """

    name: str
    paper: str
    algorithm: str
    relation: str
    delta: float
    claimed_epsilon: Callable[[], float]
    release: ReleaseFn | None = None
    candidates: Mapping[str, ReleaseFn] | None = None
    view: str = "final"
    trials: int = 100_000
    search_trials: int = 4_000
    expect: str = "private"
    exact_epsilon: Callable[[], float] | None = None
    min_fraction: float | None = None
    note: str = ""
    #: extra candidates tried only under ``search="full"`` (``dprates audit --search full``)
    full_candidates: Mapping[str, ReleaseFn] | None = None
    #: runs per side under ``search="full"`` (default: ``trials``)
    full_trials: int | None = None
    #: shape of the power reference (:func:`reference_power`): "gaussian" or "laplace"
    reference: str = "gaussian"
    #: the claimed privacy profile: δ ↦ ε(δ) from the same accountant, noise and sensitivity as
    #: ``claimed_epsilon`` (which is its value at ``delta``).  A mechanism that is (ε(δ), δ)-DP
    #: for one δ of its profile is so for each: the audit may test the profile where its
    #: threshold test has power (``run_audit``'s profile point).  None: only ``delta`` is claimed;
    #: also right for a pure-ε (Laplace) claim, ε(δ) = ε at every δ, where a larger δ only lowers
    #: what a test certifies (Lap(0, 1) vs Lap(1, 1), 2·10⁴ runs per side at α/2: ε_lo 0.97 at
    #: δ = 10⁻⁵, 0.95 at 10⁻², 0.87 at 5·10⁻², against the claim 1).  NaN at a δ: no claim there.
    claimed_epsilon_at: Callable[[float], float] | None = None

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        if self.view not in _VIEWS:
            raise ValueError(f"view must be one of {_VIEWS}, got {self.view!r}")
        if self.expect not in _EXPECT:
            raise ValueError(f"expect must be one of {_EXPECT}, got {self.expect!r}")
        if (self.release is None) == (self.candidates is None):
            raise ValueError("give exactly one of release and candidates")
        if self.candidates is not None and not self.candidates:
            raise ValueError("candidates must be non-empty")
        check_open_interval("delta", self.delta, 0.0, 1.0)
        check_int("trials", self.trials, minimum=8)
        if self.reference not in _REFERENCES:
            raise ValueError(f"reference must be one of {_REFERENCES}, got {self.reference!r}")
        if self.full_candidates is not None and self.candidates is None:
            raise ValueError("full_candidates needs candidates")
        if self.full_trials is not None:
            check_int("full_trials", self.full_trials, minimum=8)
        if self.min_fraction is not None:
            check_open_interval("min_fraction", self.min_fraction, 0.0, 1.0)
            if self.exact_epsilon is None:
                raise ValueError("min_fraction needs exact_epsilon")
        if self.claimed_epsilon_at is not None and not callable(self.claimed_epsilon_at):
            raise ValueError(f"claimed_epsilon_at must be a callable δ ↦ ε(δ) or None, got "
                             f"{type(self.claimed_epsilon_at).__name__}")


@dataclass(frozen=True)
class ProfilePoint:
    """The audit of a claimed profile at one δ_p of :data:`PROFILE_DELTAS`: the claim ε(δ_p),
    the lower bound the same scores give there, and the reference power at δ_p.  ``ladder``:
    the reference power at every eligible ladder point (δ_p is the largest; chosen before any
    audit run)."""

    delta: float
    claimed: float
    bound: EpsilonBound
    power: float | None
    ladder: dict = field(default_factory=dict)

    @property
    def audited(self) -> float:
        return self.bound.epsilon

    @property
    def exceeded(self) -> bool:
        return self.bound.epsilon > self.claimed


@dataclass(frozen=True)
class AuditResult:
    target: AuditTarget
    claimed: float
    bound: EpsilonBound
    alpha: float
    trials: int
    pair: str
    exact: float | None
    verdict: str
    seconds: float
    search: dict = field(default_factory=dict)
    block: int = 50_000          # runs per seeded block (part of how the runs were seeded)
    power: float | None = None   # fraction of the exact ε certified on the reference mechanism
    setting: str = "quick"       # the search setting (SEARCHES)
    profile: ProfilePoint | None = None   # the profile point δ_p, when the target claims one

    @property
    def best_power(self) -> float | None:
        """The larger of the powers at the target's δ and at the profile point δ_p."""
        ps = [p for p in (self.power, self.profile.power if self.profile else None)
              if p is not None]
        return max(ps) if ps else None

    @property
    def low_power(self) -> bool:
        """The better point's power below :data:`POWER_FLAG`: an ε_lo far below the claim at
        both points is weak evidence."""
        p = self.best_power
        return p is not None and p < POWER_FLAG

    @property
    def exceeded(self) -> bool:
        """ε_lo above the claim at the target's δ or at the profile point."""
        return self.bound.epsilon > self.claimed or bool(self.profile and self.profile.exceeded)

    @property
    def point_alpha(self) -> float:
        """α of each point's bound: α/2 with a profile point (Bonferroni: the pair holds at
        1 − α), else α."""
        return self.alpha / 2 if self.profile is not None else self.alpha

    @property
    def audited(self) -> float:
        return self.bound.epsilon

    @property
    def ok(self) -> bool:
        return self.verdict in ("OK", "CAUGHT", "POWER OK")


_AUDITS: dict[str, AuditTarget] = {}
#: Modules registering audit targets beyond the paper modules (the core targets are registered
#: when empirical.privacy.audit is imported).
_EXTRA_MODULES: list[str] = []


def register_audit(target: AuditTarget) -> AuditTarget:
    from empirical.core.experiment import check_id

    check_id(target.name, "audit target name")     # its stored file is audits/<name>.json
    if target.name in _AUDITS and _AUDITS[target.name] is not target:
        old = _AUDITS[target.name]
        if (old.paper, old.algorithm) != (target.paper, target.algorithm):
            raise ValueError(f"audit target {target.name!r} registered twice")
    _AUDITS[target.name] = target
    return target


def _load(paper: str | None = None) -> None:
    from empirical.core import experiment as registry

    registry._load_all(paper if paper in papers() else None)
    for m in _EXTRA_MODULES:
        importlib.import_module(m)


def targets(selection: Sequence[str] | None = None) -> list[AuditTarget]:
    """Targets by name or paper key (``"core"``, ``"kl"``, ...); all when empty."""
    from empirical.core import experiment as registry

    sel = list(selection or [])
    keys = [s for s in sel if s in papers()]
    _load(keys[0] if len(keys) == 1 and len(sel) == 1 else None)
    return select_registered(_AUDITS, sel, "audit target or paper")


def select_registered(registry: Mapping[str, Any], selection: Sequence[str] | None,
                      what: str) -> list:
    """The entries of ``registry`` (name → entry with a ``paper``) that ``selection`` names, in
    order, each once: a name, a name prefix ending before a ``.``, or a paper key; all entries
    (sorted by name) when ``selection`` is empty.  KeyError naming ``what`` for a selector that
    matches nothing (audit targets here, mutants in :mod:`empirical.privacy.mutants`)."""
    if not selection:
        return [e for _, e in sorted(registry.items())]
    out: list = []
    for s in selection:
        hits = [e for n, e in sorted(registry.items())
                if e.paper == s or n == s or n.startswith(s + ".")]
        if not hits:
            raise KeyError(f"no {what} {s!r}; known: {sorted(registry)}")
        out += [e for e in hits if e not in out]
    return out


def get_target(name: str) -> AuditTarget:
    _load(name.split(".", 1)[0])
    if name not in _AUDITS:
        _load()
    try:
        return _AUDITS[name]
    except KeyError:
        raise KeyError(f"no audit target {name!r}; known: {sorted(_AUDITS)}") from None



# =============================================================================================
# building blocks of release functions
# =============================================================================================
def spawn_rows(rng: np.random.Generator, trials: int) -> list[np.random.Generator]:
    """``trials`` independent Generators spawned from ``rng``'s SeedSequence (for algorithms
    that take one generator per row)."""
    return [np.random.Generator(np.random.PCG64(s))
            for s in rng.bit_generator.seed_seq.spawn(check_int("trials", trials))]
