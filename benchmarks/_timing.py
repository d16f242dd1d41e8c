"""Timing functions shared by the benchmarks (side-by-side CPU times, the machine's load)."""
import os
import time

import numpy as np


def cpu_side_by_side(fns: dict, blocks: int = 7, calls: int = 30) -> dict:
    """Median and minimum CPU seconds per call of each function, timed in interleaved blocks.

    CPU time (``time.process_time``), not wall time: on a shared machine a process is
    descheduled for milliseconds at a time, which lands in most calls of a millisecond-long
    step and in few calls of a 50 µs one, so wall-time medians inflate the slower side and
    flatter the ratio.  Interleaving (block by block, each function in turn) exposes both sides
    to the same cache and memory contention.  Returns ``{name: (median, min)}``.
    """
    times: dict = {k: [] for k in fns}
    for fn in fns.values():
        fn()                                          # warm-up (allocations, hooks)
    for _ in range(blocks):
        for k, fn in fns.items():
            for _ in range(calls):
                t0 = time.process_time()
                fn()
                times[k].append(time.process_time() - t0)
    return {k: (float(np.median(v)), float(np.min(v))) for k, v in times.items()}


def load_average() -> float:
    """One-minute load average (recorded beside every ratio: the machine is shared)."""
    return os.getloadavg()[0]
