"""Lemma C.2's absolute constant (UL-E13 restated): what the derived bound proves, and what the
three-group pairs show is needed (user-level SCO paper, Lemma C.2 / B.2)."""
import math

import numpy as np
import pytest

from empirical.papers.userlevel import audit as aul
from empirical.papers.userlevel import sensitivity as uls


def test_derived_bound_proves_lemma_c2_with_a_constant_of_about_33():
    """Δ = 2r(f + 2)/(2s_min − K − t) at s_min = 0.7K, r = 2τ, large K, is c·τ log(1/ζ)/K with
    c ≈ 32.6 at ζ = 10⁻² and smaller for every smaller ζ (f and t grow slower than log(1/ζ)):
    so the lemma holds with an absolute constant ≈ 33 for all ζ ≤ 10⁻²."""
    cs = [uls.lemma_c2_constant(z) for z in (1e-2, 1e-3, 1e-6, 1e-12)]
    assert cs[0] == pytest.approx(32.6, abs=0.3)
    assert all(a > b for a, b in zip(cs, cs[1:]))
    assert uls.lemma_c2_constant(1e-2, K=10**5) == pytest.approx(cs[0], rel=1e-3)


def test_constants_one_and_two_are_unsafe_and_shared_coins_need_more_than_six():
    """On the three-group pairs (scores ≥ 0.7K on both sides), the shared-coin move's
    (1 − ζ)-quantile at ζ = 10⁻², in units of τ log(1/ζ)/K, is ≈ 6.1 at K = 66 (outer fraction
    0.38): the readings C = 1 and C = 2 of the "≲" fail, and shared coins need C ≥ 6."""
    zeta = 1e-2
    t = np.linspace(10.0, 20.0, 201)                 # units of r/K = 2τ/K (step 0.05)
    out = aul.three_group_tail(66, t, frac=0.38)
    assert out["s"] >= 0.7 and out["s_prime"] >= 0.7
    assert out["tail"][0] > zeta and out["tail"][-1] <= zeta       # the quantile is inside
    q = t[np.argmax(out["tail"] <= zeta)] * 2.0 / math.log(1.0 / zeta)
    assert 6.0 <= q <= 6.2
    assert q > 2.0 > 1.0
