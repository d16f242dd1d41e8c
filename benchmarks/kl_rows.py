"""Row identity and CPU cost of KL quick-grid points, old code against new.

    python benchmarks/kl_rows.py dump OUT.pkl EXP [EXP ...]     # run every quick point, store rows
    python benchmarks/kl_rows.py compare OLD.pkl NEW.pkl         # every row dict, exactly

``dump`` runs each point through ``empirical.run.runner.run_point`` (the seeds and code path of a
sweep) in this process and records its rows and its process CPU; ``compare`` asserts that the
rows are equal value for value (floats compared by bits, NaN equal to NaN), ignoring only
``runner.TIMING_COLUMNS``, and prints CPU before/after per experiment.  ``--full`` uses the full
grids.
"""
from __future__ import annotations

import math
import pickle
import sys
import time

from empirical.core import experiment
from empirical.run.runner import TIMING_COLUMNS, run_point


def dump(out: str, exp_ids: list[str], full: bool = False) -> None:
    import empirical.papers.kl.experiments  # noqa: F401  (registers the KL experiments)
    print("code:", empirical.papers.kl.experiments.__file__, flush=True)
    data = {}
    for eid in exp_ids:
        exp = experiment.get(eid)
        pts = []
        for v in exp.grid(full):
            pt = exp.point(v)
            c0 = time.process_time()
            rows = run_point(eid, pt, exp.run.__module__)
            cpu = time.process_time() - c0
            pts.append((v, cpu, [{k: r[k] for k in r if k not in TIMING_COLUMNS} for r in rows]))
            print(f"{eid} {v:.6g}: {cpu:.2f} CPU-s", flush=True)
        data[eid] = pts
    with open(out, "wb") as fh:
        pickle.dump(data, fh)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a.hex() == b.hex()
    return type(a) is type(b) and a == b


def compare(old: str, new: str) -> bool:
    with open(old, "rb") as fh:
        A = pickle.load(fh)
    with open(new, "rb") as fh:
        B = pickle.load(fh)
    ok = True
    for eid in A:
        if eid not in B:
            continue
        ca = sum(c for _, c, _ in A[eid])
        cb = sum(c for _, c, _ in B[eid])
        nrows = bad = 0
        for (va, _, ra), (vb, _, rb) in zip(A[eid], B[eid], strict=True):
            assert va == vb
            for x, y in zip(ra, rb, strict=True):
                nrows += 1
                if x.keys() != y.keys() or not all(_same(x[k], y[k]) for k in x):
                    bad += 1
                    diff = [k for k in x if k in y and not _same(x[k], y[k])]
                    if bad <= 3:
                        print(f"  {eid} at {va:.6g} seed {x['seed']}: differs in {diff}")
        ok &= bad == 0
        print(f"{eid:32s} CPU {ca:7.2f} -> {cb:7.2f} s   rows {nrows - bad}/{nrows} identical")
    return ok


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    full = "--full" in args
    args = [a for a in args if a != "--full"]
    if cmd == "dump":
        dump(args[0], args[1:], full)
    else:
        sys.exit(0 if compare(args[0], args[1]) else 1)
