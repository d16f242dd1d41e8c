"""The KAN part of the mutation self-test (mutants registered in empirical/audit_kan.py): every
broken variant of Algorithm 1 and its calibration is caught by a KAN check, a KAN unit test or
a KAN audit.  Slow (each mutant re-runs its quick grids, audits and tests in a fresh
subprocess), so skipped unless DPRATES_MUTATION=1:

    DPRATES_MUTATION=1 pytest tests/test_kan_mutants.py -s

Each mutant runs through :func:`empirical.audit_kan.run_kan_mutant`, which imports
empirical.audit_kan in the subprocess before handing over to ``empirical.mutants``: the plain
``python -m empirical.mutants`` / ``dprates audit --mutants`` loader does not import
``empirical.audit``'s extra modules, so it does not know the KAN mutants (see the module).
The cheap registration tests are in tests/test_audit_kan.py.
"""
import os

import pytest

from empirical import audit_kan as ak
from empirical import mutants


@pytest.mark.skipif(os.environ.get("DPRATES_MUTATION") != "1",
                    reason="mutation self-test is slow; run with DPRATES_MUTATION=1")
@pytest.mark.parametrize("name", ak.KAN_MUTANTS)
def test_every_kan_mutant_is_caught(name, tmp_path):
    rep = ak.run_kan_mutant(name, results=str(tmp_path))
    print("\n" + mutants.format_mutant_table([rep]))
    for kind in ("experiments", "audits", "tests"):
        for k, v in rep.get(kind, {}).items():
            print(f"    {kind[:-1]} {k}: {'caught' if v['caught'] else 'passed'}"
                  + (f" (ε_lo {v['audited']:.2f} vs claimed {v['claimed']:.2f})"
                     if kind == "audits" else ""))
    assert rep["caught"], rep.get("error", rep)
