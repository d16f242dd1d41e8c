"""Checks every paper's claimed privacy profiles δ ↦ ε(δ) share (empirical/privacy/targets.py
``claimed_epsilon_at``): at the target's δ the profile is the claim, and over the ladder the audit
picks its profile point from it is finite, non-negative and non-increasing."""
import math

import pytest

from empirical.privacy import audit

#: δ of the profile points the audits test.
LADDER = audit.PROFILE_DELTAS


def check_profile(t, rel: float = 1e-9) -> None:
    """``t``'s profile equals its claim at its δ and does not increase over :data:`LADDER`."""
    assert t.claimed_epsilon_at(t.delta) == pytest.approx(t.claimed_epsilon(), rel=rel,
                                                          abs=1e-12), t.name
    eps = [t.claimed_epsilon_at(d) for d in LADDER]
    assert all(math.isfinite(e) and e >= 0 for e in eps), (t.name, eps)
    assert all(a >= b for a, b in zip(eps, eps[1:])), (t.name, eps)


def check_profiles(targets, skip=()) -> int:
    """:func:`check_profile` on each target of ``targets`` with a profile and not in ``skip``;
    returns how many were checked."""
    checked = 0
    for t in targets:
        if t.claimed_epsilon_at is None or t.name in skip:
            continue
        check_profile(t)
        checked += 1
    return checked


def check_profile_or_reason(targets) -> None:
    """Every target claims a profile or says in its note why it has none."""
    for t in targets:
        assert t.claimed_epsilon_at is not None or "no claimed profile:" in t.note, t.name
