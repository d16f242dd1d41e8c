"""Threads and memory of numerical libraries in worker processes: every executor caps BLAS /
OpenMP at one thread per process (:func:`limit_threads`) and keeps freed heap for reuse
(:func:`keep_freed_pages`)."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys


#: Environment variables that cap the threads of BLAS / OpenMP libraries in pool workers.
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def default_workers() -> int:
    """The cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def limit_threads(n: int = 1) -> int | None:
    """Cap BLAS / OpenMP threads of this process at ``n``; returns OpenBLAS's previous count
    (None if unknown), so that a caller can restore it.

    Why every executor uses one thread: besides oversubscription (two pool workers of two BLAS
    threads each on two cores), OpenBLAS's multi-threaded dot product sums in another order, so
    a row's last bits would depend on the thread count (seen: ``x @ x`` for 2e6 entries differs
    between 1 and 2 threads).  The environment variables reach libraries loaded later (and child
    processes); numpy's OpenBLAS is already loaded in a forked worker, so it is also told
    directly (OpenBLAS's own ``set_num_threads``, found among the loaded libraries).
    """
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    return _openblas_threads(n)


def _openblas_functions() -> list[tuple[object, object]]:
    """(get, set) of every OpenBLAS loaded in this process (numpy's and scipy's may differ)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "openblas" in line.lower()})
    except OSError:         # not Linux: the environment variables are what we can do
        return []
    out = []
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for prefix, suffix in (("", ""), ("", "64_"), ("scipy_", "64_"), ("scipy_", "")):
            setter = getattr(handle, f"{prefix}openblas_set_num_threads{suffix}", None)
            getter = getattr(handle, f"{prefix}openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                out.append((getter, setter))
                break
    return out


def _openblas_threads(n: int) -> int | None:
    import ctypes

    before = None
    for getter, setter in _openblas_functions():
        before = before or int(getter())
        setter(ctypes.c_int(n))
    return before


_LIMITED = []


def _limit_once() -> None:
    if not _LIMITED:
        limit_threads(1)
        keep_freed_pages()
        _LIMITED.append(True)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3      # glibc <malloc.h>


def keep_freed_pages() -> bool:
    """Ask glibc to serve arrays up to 32 MB from the heap and keep up to 256 MB of freed heap.

    Why: a step of the KAN paper's Algorithm 1 makes a few dozen temporaries of (rows × batch × m)
    doubles (≈ 0.5 MB each); under glibc's default dynamic thresholds they are returned to the
    kernel when freed and faulted in afresh at the next step, which cost up to 45% of a sweep
    point's CPU (KAN stability, Cor 5.3 at n = 1200).  Numbers are unchanged (rows bit-identical);
    the process keeps its peak heap for reuse.  Process-wide, so it is applied where dprates
    owns the process (pool and Dask workers, the CLI), never on import of a library module.
    Idempotent; a no-op (False) off glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 256 << 20))
