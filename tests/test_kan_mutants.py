"""The KAN part of the mutation self-test (mutants registered in empirical/papers/kan/mutants.py): every
broken variant of Algorithm 1 and its calibration is caught by a KAN check, a KAN unit test or
a KAN audit.  Slow (each mutant re-runs its quick grids, audits and tests in a fresh
subprocess), so skipped unless DPRATES_MUTATION=1:

    DPRATES_MUTATION=1 pytest tests/test_kan_mutants.py -s

Each mutant runs through :func:`empirical.papers.kan.mutants.run_kan_mutant`, i.e.
``empirical.privacy.mutants.run_mutant`` (``python -m empirical.privacy.mutants`` loads every audit module's
mutants, the KAN ones included: tests/test_mutants.py checks each is listed once).
The cheap registration tests are in tests/test_audit_kan.py and tests/test_mutants.py.
"""
import os

import pytest

from empirical.papers.kan import mutants as km
from empirical.privacy import mutants


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
@pytest.mark.parametrize("name", km.KAN_MUTANTS)
def test_every_kan_mutant_is_caught(name, tmp_path):
    rep = km.run_kan_mutant(name, results=str(tmp_path))
    print("\n" + mutants.format_mutant_table([rep]))
    for kind in ("experiments", "audits", "tests"):
        for k, v in rep.get(kind, {}).items():
            print(f"    {kind[:-1]} {k}: {'caught' if v['caught'] else 'passed'}"
                  + (f" (ε_lo {v['audited']:.2f} vs claimed {v['claimed']:.2f})"
                     if kind == "audits" else ""))
    assert rep["caught"], rep.get("error", rep)
