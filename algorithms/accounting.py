"""Privacy accounting: a thin layer over Google's ``dp-accounting`` (no hand-written accountant).

Algorithms describe what they released as a ``dp_accounting.DpEvent`` built from their *actual*
noise multipliers (noise std / ℓ2-sensitivity; the sensitivities are ours, see
``algorithms.primitives``), and this module asks dp-accounting what that costs:

* ``zcdp_rho(event)``: the smallest ρ with D_α ≤ ρα at every Rényi order the RDP accountant
  tracks, i.e. ρ = max_α RDP(α)/α.  For (compositions of) Gaussian mechanisms RDP(α) = α/(2z²)
  summed over releases, so this is the exact zCDP parameter (Bun & Steinke 2016, Prop. 1.6, 1.7).
* ``epsilon(event, delta)``: (ε, δ)-DP from the RDP or PLD accountant.
* ``calibrate_noise_multiplier``: dp-accounting's Brent search for a target (ε, δ).

Closed forms that appear in the papers (ρ + 2√(ρ log 1/δ), z = √(k/(2ρ))) are kept here only as
named conversions, and tests check them against the accountant.

Every function takes the neighbouring relation the algorithm claims; the default is one,
:data:`DEFAULT_RELATION` (REPLACE_ONE: the papers' ``swap one record`` neighbours, under which
the sensitivities of ``algorithms.primitives`` are stated).  dp-accounting's own warnings
(absl logging, e.g. a calibration's bracket guess whose fractional orders do not converge) are
dropped unless ``DPRATES_ACCOUNTING_LOG=1`` or :func:`show_accounting_warnings` asks for them.
"""
from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

import dp_accounting as dpa
import numpy as np
from dp_accounting import rdp as dpa_rdp
from dp_accounting import pld as dpa_pld

from algorithms.validation import check_delta, check_int, check_positive
# The WOR-sampled Gaussian's RDP for searches lives apart; its names stay importable here.
from algorithms.wor_rdp import (_WOR_CHECK_ORDERS, _forward_diffs, _wor_rdp,  # noqa: F401
                                _wor_rdp_is_exact, wor_search_rdp)

NeighboringRelation = dpa.NeighboringRelation
REPLACE_ONE = NeighboringRelation.REPLACE_ONE
ADD_OR_REMOVE_ONE = NeighboringRelation.ADD_OR_REMOVE_ONE
#: The one default neighbouring relation of every function and class here.
DEFAULT_RELATION = REPLACE_ONE


class _QuietDpAccounting(logging.Filter):
    """Drops dp-accounting's records below ERROR (they go through absl's ``absl`` logger)."""

    show = os.environ.get("DPRATES_ACCOUNTING_LOG") == "1"

    def filter(self, record: logging.LogRecord) -> bool:
        if self.show or record.levelno >= logging.ERROR:
            return True
        return "dp_accounting" not in (record.pathname or "").replace("\\", "/")


_QUIET = _QuietDpAccounting()
logging.getLogger("absl").addFilter(_QUIET)


def show_accounting_warnings(show: bool = True) -> None:
    """Let dp-accounting's warnings through (``False``: drop them again, the default)."""
    _QuietDpAccounting.show = bool(show)

__all__ = ["NeighboringRelation", "REPLACE_ONE", "ADD_OR_REMOVE_ONE", "DEFAULT_RELATION",
           "show_accounting_warnings", "PrivacySpent",
           "gaussian_event", "composed", "zcdp_rho", "epsilon", "zcdp_event",
           "zcdp_to_epsilon", "zcdp_to_epsilon_closed_form", "epsilon_to_zcdp_closed_form",
           "pure_dp_to_zcdp", "noise_multiplier_for_zcdp", "calibrate_noise_multiplier",
           "ZcdpFilter", "wor_search_rdp"]


def gaussian_event(noise_multiplier: float, count: int = 1) -> dpa.DpEvent:
    """``count`` Gaussian releases, each with std ``noise_multiplier`` × ℓ2-sensitivity."""
    z = check_positive("noise_multiplier", noise_multiplier)
    count = check_int("count", count, minimum=0)
    if count == 0:
        return dpa.NoOpDpEvent()
    ev = dpa.GaussianDpEvent(z)
    return ev if count == 1 else dpa.SelfComposedDpEvent(ev, count)


def zcdp_event(rho: float) -> dpa.DpEvent:
    """A release known to be ρ-zCDP (e.g. a pure ε-DP step converted by Lemma 14)."""
    return dpa.ZCDpEvent(check_positive("rho", rho))


def composed(events: Sequence[dpa.DpEvent]) -> dpa.DpEvent:
    """Sequential (adaptive) composition of ``events``."""
    events = [e for e in events if not isinstance(e, dpa.NoOpDpEvent)]
    if not events:
        return dpa.NoOpDpEvent()
    return events[0] if len(events) == 1 else dpa.ComposedDpEvent(list(events))


def _rdp_accountant(event: dpa.DpEvent, relation: NeighboringRelation) -> dpa_rdp.RdpAccountant:
    acc = dpa_rdp.RdpAccountant(neighboring_relation=relation)
    if not acc.supports(event):
        raise ValueError(f"the RDP accountant does not support {_unsupported(event, relation)} "
                         f"under {relation.name}")
    acc.compose(event)
    return acc


def _children(event: dpa.DpEvent) -> list[dpa.DpEvent]:
    inner = getattr(event, "event", None)
    if isinstance(inner, dpa.DpEvent):
        return [inner]
    return [e for e in getattr(event, "events", None) or [] if isinstance(e, dpa.DpEvent)]


def _unsupported(event: dpa.DpEvent, relation: NeighboringRelation) -> str:
    """The innermost event the RDP accountant refuses under ``relation``, described: a wrapper
    (sampling, composition) is named with the event inside it, and why when it is the sampling
    that the relation rules out."""
    for child in _children(event):
        if not dpa_rdp.RdpAccountant(neighboring_relation=relation).supports(child):
            return _unsupported(child, relation)
    kids = _children(event)
    inside = f" of {kids[0]!r}" if len(kids) == 1 else ""
    why = ""
    if (isinstance(event, dpa.PoissonSampledDpEvent) and relation == REPLACE_ONE
            and dpa_rdp.RdpAccountant(neighboring_relation=ADD_OR_REMOVE_ONE).supports(event)):
        why = " (Poisson subsampling is accounted under ADD_OR_REMOVE_ONE: pass that relation)"
    return f"{type(event).__name__}{inside}{why}"


def zcdp_rho(event: dpa.DpEvent, relation: NeighboringRelation = DEFAULT_RELATION) -> float:
    """zCDP parameter of ``event``: max over the accountant's orders of RDP(α)/α.

    Exact for Gaussian mechanisms and ``ZCDpEvent(ρ, ξ=0)`` and their compositions, whose RDP
    curve is linear in α.  (Sensitivities are supplied by the caller under ``relation``; for
    Gaussian events the accountant's arithmetic does not depend on it.)
    """
    if isinstance(event, dpa.NoOpDpEvent):
        return 0.0
    if _has_linear_rdp(event):
        # The accountant's total, summed here from memoised leaf curves (bit for bit: see
        # _compose_rdp); Spider's plan and every row price the same few Gaussians again.
        return _rho_of_curve(_compose_rdp(event, relation, _default_orders()),
                             _default_orders())
    return _rho_of_accountant(_rdp_accountant(event, relation))


#: dp-accounting's RDP curve of each leaf event (Gaussian, zCDP) priced in this process, per
#: (event, relation, orders): a pure function of them.
_LEAF_CURVES: dict = {}


@lru_cache(maxsize=1)
def _default_orders() -> np.ndarray:
    """The RdpAccountant's default orders (read-only: shared)."""
    orders = np.asarray(dpa_rdp.RdpAccountant().orders, dtype=float)
    orders.flags.writeable = False
    return orders


def _leaf_curve(event: dpa.DpEvent, relation: NeighboringRelation,
                orders: tuple[float, ...] | None) -> np.ndarray:
    """dp-accounting's RDP curve of ``event`` alone at ``orders`` (None: the accountant's
    default orders): an accountant that composed it once holds 0 + 1·curve = curve exactly
    (for a leaf event; :class:`ZcdpFilter` also prices whole compositions with it)."""
    key = (event, relation, orders)
    try:
        hit = _LEAF_CURVES.get(key)
    except TypeError:                        # an unhashable event: priced every time
        key, hit = None, None
    if hit is not None:
        return hit
    acc = (dpa_rdp.RdpAccountant(neighboring_relation=relation) if orders is None else
           dpa_rdp.RdpAccountant(orders=list(orders), neighboring_relation=relation))
    acc.compose(event)
    curve = np.asarray(acc.rdp, dtype=float)
    curve.flags.writeable = False            # shared: never added into in place
    if key is not None:
        if len(_LEAF_CURVES) >= 4096:
            _LEAF_CURVES.clear()
        _LEAF_CURVES[key] = curve
    return curve


def _compose_rdp(event: dpa.DpEvent, relation: NeighboringRelation, orders_array: np.ndarray,
                 orders: tuple[float, ...] | None = None, total: np.ndarray | None = None,
                 count: int = 1) -> np.ndarray:
    """The RDP total an ``RdpAccountant`` holds after composing ``event`` onto ``total``
    (default zeros), bit for bit: its traversal (``_maybe_compose``: self-composed counts
    multiply, composed events in order) and its arithmetic (``total += count * curve(leaf)``),
    with each leaf's curve computed by dp-accounting once per process.  Only for events with
    linear RDP (:func:`_has_linear_rdp`); tested against the accountant."""
    if total is None:
        total = np.zeros(len(orders_array))
    if isinstance(event, dpa.NoOpDpEvent):
        return total
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _compose_rdp(event.event, relation, orders_array, orders, total,
                            event.count * count)
    if isinstance(event, dpa.ComposedDpEvent):
        for e in event.events:
            _compose_rdp(e, relation, orders_array, orders, total, count)
        return total
    total += count * _leaf_curve(event, relation, orders)
    return total


def _rho_of_accountant(acc: dpa_rdp.RdpAccountant) -> float:
    """max over the accountant's orders of RDP(α)/α (the zCDP parameter of a linear RDP curve)."""
    return _rho_of_curve(np.asarray(acc.rdp, dtype=float), np.asarray(acc.orders, dtype=float))


def _rho_of_curve(rdp: np.ndarray, orders: np.ndarray) -> float:
    return float(np.max(rdp / orders))


def _has_sampling(event: dpa.DpEvent) -> bool:
    """Whether a subsampling event occurs anywhere in ``event``'s tree."""
    if isinstance(event, (dpa.PoissonSampledDpEvent, dpa.SampledWithoutReplacementDpEvent)):
        return True
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _has_sampling(event.event)
    if isinstance(event, dpa.ComposedDpEvent):
        return any(_has_sampling(e) for e in event.events)
    return False


def epsilon(event: dpa.DpEvent, delta: float, *, accountant: str = "rdp",
            relation: NeighboringRelation = DEFAULT_RELATION) -> float:
    """(ε, δ)-DP of ``event`` by dp-accounting's RDP (default) or PLD accountant.

    Convention of this code base: a Gaussian event's noise multiplier is the noise std divided
    by the ℓ2-sensitivity *under the relation the algorithm claims* (e.g. 2G/n for a mean of
    G-bounded gradients under replace-one).  dp-accounting's RDP accountant reads unsampled
    Gaussian events that way under either relation, but its PLD accountant reads the multiplier
    relative to one record's contribution and doubles the sensitivity under REPLACE_ONE, so the
    same event would cost about twice the ε.  For events without subsampling the relation
    changes nothing once the sensitivity is supplied, so PLD is asked under ADD_OR_REMOVE_ONE,
    which reads the multiplier as ours.  Subsampled events keep ``relation``: there the
    multiplier is relative to one record's contribution, as dp-accounting defines it.
    """
    delta = check_delta(delta)
    if accountant == "rdp":
        return float(_rdp_accountant(event, relation).get_epsilon(delta))
    if accountant == "pld":
        rel = relation if _has_sampling(event) else ADD_OR_REMOVE_ONE
        acc = dpa_pld.PLDAccountant(neighboring_relation=rel)
        if not acc.supports(event):
            raise ValueError(f"the PLD accountant does not support {type(event).__name__}")
        return float(acc.compose(event).get_epsilon(delta))
    raise ValueError(f"accountant must be 'rdp' or 'pld', got {accountant!r}")


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP mechanism at δ, by dp-accounting's RDP→DP conversion (tighter than the
    closed form)."""
    return epsilon(zcdp_event(rho), delta)


def zcdp_to_epsilon_closed_form(rho: float, delta: float) -> float:
    """Bun & Steinke 2016, Prop. 1.3: ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP."""
    rho = check_positive("rho", rho)
    delta = check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def epsilon_to_zcdp_closed_form(epsilon_: float, delta: float) -> float:
    """Largest ρ whose closed-form conversion gives ε: √ρ = √(log(1/δ) + ε) − √(log(1/δ))."""
    e = check_positive("epsilon", epsilon_)
    L = math.log(1.0 / check_delta(delta))
    return (math.sqrt(L + e) - math.sqrt(L)) ** 2


def pure_dp_to_zcdp(epsilon_: float) -> float:
    """Bun & Steinke 2016, Prop. 1.4 (the KL paper's Lemma 14): ε-DP ⇒ (ε²/2)-zCDP."""
    return 0.5 * check_positive("epsilon", epsilon_) ** 2


def noise_multiplier_for_zcdp(rho: float, count: int = 1) -> float:
    """Noise multiplier z so that ``count`` Gaussian releases are exactly ρ-zCDP: z = √(count/(2ρ)).

    Algorithms use this to set their noise and then report ``zcdp_rho`` of what they actually
    released, so any mismatch shows up in the reported spend.
    """
    rho = check_positive("rho", rho)
    count = check_int("count", count, minimum=1)
    return math.sqrt(count / (2.0 * rho))


def calibrate_noise_multiplier(make_event: Callable[[float], dpa.DpEvent], target_epsilon: float,
                               target_delta: float, *, accountant: str = "rdp",
                               relation: NeighboringRelation = DEFAULT_RELATION) -> float:
    """Smallest noise multiplier z with ε(make_event(z), δ) ≤ target, via
    ``dp_accounting.calibrate_dp_mechanism`` (Brent search), under ``relation`` (the module's
    one default; Poisson-subsampled events need ADD_OR_REMOVE_ONE)."""
    te = check_positive("target_epsilon", target_epsilon)
    td = check_delta(target_delta, "target_delta")
    probe = make_event(1.0)
    if accountant == "rdp":
        if not dpa_rdp.RdpAccountant(neighboring_relation=relation).supports(probe):
            raise ValueError(f"the RDP accountant does not support "
                             f"{_unsupported(probe, relation)} under {relation.name}")
        fresh = lambda: dpa_rdp.RdpAccountant(neighboring_relation=relation)  # noqa: E731
    elif accountant == "pld":
        # as epsilon() asks PLD: the relation matters only for subsampled events
        rel = relation if _has_sampling(probe) else ADD_OR_REMOVE_ONE
        fresh = lambda: dpa_pld.PLDAccountant(neighboring_relation=rel)  # noqa: E731
    else:
        raise ValueError(f"accountant must be 'rdp' or 'pld', got {accountant!r}")
    return float(dpa.calibrate_dp_mechanism(
        fresh, make_event, te, td,
        bracket_interval=dpa.LowerEndpointAndGuess(1e-3, 1.0)))


@dataclass(frozen=True)
class PrivacySpent:
    """What a run released, what that cost, and the guarantee the run carries.

    ``event`` holds the releases this run actually made and ``rho`` their zCDP parameter, computed
    by dp-accounting (None if the event is not zCDP-accountable).  When the number of releases
    depends on the data (early stopping), ``rho`` is an ex-post quantity and is *not* itself a
    privacy guarantee.  The guarantee is ``guarantee_rho``, the data-independent ρ the algorithm
    is certified at:

    * for a fixed schedule, ``rho`` itself;
    * for a schedule that may stop early, the dp-accounting ρ of its longest path;
    * for a privacy filter, the filter's budget (fully adaptive composition).

    ``target_rho`` is the budget the caller asked for.  ``relation`` is the neighbouring relation
    under which the event's sensitivities were computed.
    """

    event: dpa.DpEvent
    relation: NeighboringRelation
    rho: float | None
    target_rho: float | None = None
    details: dict = field(default_factory=dict)
    guarantee_rho: float | None = None

    def __post_init__(self) -> None:
        if self.guarantee_rho is None:
            object.__setattr__(self, "guarantee_rho", self.rho)
        elif self.rho is not None and self.rho > self.guarantee_rho * (1.0 + 1e-12):
            raise ValueError(f"guarantee_rho must be >= the released rho {self.rho!r}, "
                             f"got {self.guarantee_rho!r}")

    @classmethod
    def from_event(cls, event: dpa.DpEvent, *, relation: NeighboringRelation = DEFAULT_RELATION,
                   target_rho: float | None = None, guarantee_rho: float | None = None,
                   **details) -> "PrivacySpent":
        return cls(event, relation, zcdp_rho(event, relation), target_rho, dict(details),
                   guarantee_rho)

    def epsilon(self, delta: float, accountant: str = "rdp") -> float:
        """(ε, δ) of the releases this run made (ex-post, like ``rho``)."""
        return epsilon(self.event, delta, accountant=accountant, relation=self.relation)

    def guarantee_epsilon(self, delta: float) -> float:
        """(ε, δ)-DP guarantee of the run: ``guarantee_rho``-zCDP converted by dp-accounting."""
        if self.guarantee_rho is None:
            raise ValueError("guarantee_rho is None: the event is not zCDP-accountable")
        return zcdp_to_epsilon(self.guarantee_rho, delta)


# ---------------------------------------------------------------------------------------------
# Privacy filter (fully adaptive composition)
# ---------------------------------------------------------------------------------------------
def _has_linear_rdp(event: dpa.DpEvent) -> bool:
    """True for events whose RDP curve is ρ·α (Gaussian, ZCDpEvent with ξ = 0, compositions)."""
    if isinstance(event, (dpa.NoOpDpEvent, dpa.GaussianDpEvent)):
        return True
    if isinstance(event, dpa.ZCDpEvent):
        return event.xi == 0
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _has_linear_rdp(event.event)
    if isinstance(event, dpa.ComposedDpEvent):
        return all(_has_linear_rdp(e) for e in event.events)
    return False


class ZcdpFilter:
    """A zCDP privacy filter: admits a release only if the running total stays within ``budget``.

    Fully adaptive composition (Whitehouse, Ramdas, Rogers, Wu 2022, "Fully adaptive composition
    in differential privacy", Thm 1; the Rényi filter of Feldman & Zrnic 2021 applied at every
    order α): if each release is ρ_t-zCDP with ρ_t chosen from the previous outputs, and the
    analyst releases only while Σ_t ρ_t ≤ ρ, the whole interaction is ρ-zCDP.  Each event's RDP
    curve is dp-accounting's (an ``RdpAccountant`` that composed it), and the running total is
    summed leaf by leaf in the order and with the arithmetic of ``RdpAccountant.compose``, so it
    is that accountant's total bit for bit (tested) at a third of the cost (each new σ is
    evaluated once, not again when composed); the spend is max_α RDP(α)/α, as in
    :func:`zcdp_rho`.

    Only events with linear RDP curves (Gaussian mechanisms, ``ZCDpEvent`` with ξ = 0, and their
    compositions) are accepted: for them RDP(α)/α is the same at every order, so a short order
    grid is exact and keeps each admission cheap (dp-accounting evaluates each order in Python).

    ``can_afford(event, reserve=...)`` checks the total after ``event`` and a later ``reserve``
    (e.g. a final selection step) in the same floating-point order in which they will be
    composed, so an admitted run can always spend its reserve and never reports more than
    ``budget``.
    """

    ORDERS = (2.0, 4.0, 16.0, 64.0)

    def __init__(self, budget: float, relation: NeighboringRelation = DEFAULT_RELATION):
        self.budget = check_positive("budget", budget)
        self.relation = relation
        self._orders = np.asarray(self.ORDERS, dtype=float)
        # The running RDP total, composed leaf by leaf exactly as dp-accounting's RdpAccountant
        # composes (see _compose): bit for bit its ``rdp`` (tested), without re-evaluating a
        # leaf's curve per order in Python at every admission.
        self._rdp = np.zeros(len(self.ORDERS))
        self._events: list[dpa.DpEvent] = []

    def _curve(self, event: dpa.DpEvent) -> np.ndarray:
        """RDP curve of ``event`` alone, from dp-accounting (memoised per process by
        :func:`_leaf_curve`: the same norm event recurs at every step of every seed row)."""
        if not _has_linear_rdp(event):
            raise ValueError("event must be a Gaussian or zCDP event (or a composition of them), "
                             f"got {type(event).__name__}")
        return _leaf_curve(event, self.relation, self.ORDERS)

    def _compose(self, event: dpa.DpEvent) -> None:
        """Add ``event`` to the running total as RdpAccountant.compose adds it
        (:func:`_compose_rdp`: its leaves in order, each as ``total += count * curve(leaf)``),
        so the total is the accountant's bit for bit."""
        _compose_rdp(event, self.relation, self._orders, self.ORDERS, self._rdp)

    def cost(self, event: dpa.DpEvent) -> float:
        """zCDP parameter of ``event`` alone."""
        return _rho_of_curve(self._curve(event), self._orders)

    @property
    def spent(self) -> float:
        """zCDP spent so far (dp-accounting's RDP curve, max_α RDP(α)/α)."""
        return _rho_of_curve(self._rdp, self._orders)

    @property
    def rdp(self) -> np.ndarray:
        """The running RDP total at :attr:`ORDERS` (a copy): dp-accounting's, bit for bit."""
        return self._rdp.copy()

    @property
    def remaining(self) -> float:
        return self.budget - self.spent

    @property
    def event(self) -> dpa.DpEvent:
        """Everything admitted so far, as one composed event."""
        return composed(self._events)

    def can_afford(self, event: dpa.DpEvent, reserve: dpa.DpEvent | None = None) -> bool:
        """Would the total after ``event`` (and then ``reserve``) stay ≤ budget?"""
        rdp = self._rdp + self._curve(event)
        if reserve is not None:
            rdp = rdp + self._curve(reserve)
        return _rho_of_curve(rdp, self._orders) <= self.budget

    def try_spend(self, event: dpa.DpEvent, reserve: dpa.DpEvent | None = None) -> bool:
        """Compose ``event`` if affordable (keeping ``reserve`` affordable); return whether it was."""
        if not self.can_afford(event, reserve):
            return False
        self._compose(event)
        self._events.append(event)
        return True

    def spend(self, event: dpa.DpEvent) -> None:
        """Compose ``event``; ValueError if it would exceed the budget."""
        if not self.try_spend(event):
            raise ValueError(f"event costs {self.cost(event)!r} but only {self.remaining!r} of the "
                             f"budget {self.budget!r} remains")

    def privacy_spent(self, target_rho: float | None = None, **details) -> "PrivacySpent":
        """The admitted events and their total, as a :class:`PrivacySpent`."""
        return PrivacySpent(self.event, self.relation, self.spent, target_rho,
                            dict(details, filter_budget=self.budget), guarantee_rho=self.budget)

