"""Sample moments of the KL paper's regression design, built once per machine and shared by the
processes of a sweep.

The data-driven case of Theorem 4 (realizable p-th-power regression,
:class:`empirical.papers.kl.problems.MomentPowerRegression`) needs mean a_i a_iᵀ and, for p = 4, the
fourth-moment matrix of n ≤ 10⁸ design rows.  Generating the rows dominates (≈ 2 s per 10⁷ rows
on this machine) and every process that validates, runs or analyses a grid point needs the
moments of that point, so without sharing a ``dprates verify`` built each of them three or four
times.  :func:`cached_arrays` stores the arrays in ``$DPRATES_CACHE`` (default
``<tempdir>/dprates-cache-<uid>``, owned by the user and not writable by others;
``DPRATES_CACHE=off`` disables it):

* the file name is a digest of the key: every input (n, d, p, data seed, block size) plus the
  source of the code that computes the arrays and the numpy version (the generator's stream),
  and the key is stored inside the file and compared on load, so a file can only be used for
  exactly the computation it came from;
* a file is written to a temporary name and renamed (atomic on POSIX), and a builder holds an
  exclusive ``flock`` on ``<name>.lock`` while it builds, so a concurrent process waits for the
  file instead of building the same arrays again;
* the zero-byte ``.lock`` files stay (removing one while another process waits on it would
  let two builders run at once); they and the ``.npz`` files may be deleted whenever no sweep
  runs;
* an unreadable, foreign or unwritable file is a miss: the cache can only save work, never
  change a number (the arrays round-trip exactly through ``.npz``).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

try:                                   # POSIX only; elsewhere concurrent builders just race
    import fcntl
except ImportError:                    # pragma: no cover
    fcntl = None

__all__ = ["cache_dir", "cached_arrays", "CACHE_FORMAT"]

#: Layout of a cache file; another format is a miss.
CACHE_FORMAT = 1
_OFF = ("", "0", "off", "none", "no")


def cache_dir() -> Path | None:
    """Where shared arrays live: $DPRATES_CACHE, else ``<tempdir>/dprates-cache-<uid>`` (a
    temporary directory: the test suite writes only to those, and the OS may clear it); None
    when $DPRATES_CACHE is 'off' (or '0', 'none', empty)."""
    env = os.environ.get("DPRATES_CACHE")
    if env is not None:
        return None if env.strip().lower() in _OFF else Path(env)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"dprates-cache-{uid}"


def _usable(root: Path) -> bool:
    """Create ``root`` (mode 0700) if needed; refuse a directory another user owns or can write
    (in a shared /tmp it could hold forged arrays under the right key)."""
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = root.stat()
    except OSError:
        return False
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return False
    return True


def _key_text(key: dict) -> str:
    return json.dumps({"format": CACHE_FORMAT, "numpy": np.__version__, **key}, sort_keys=True)


def _load(path: Path, text: str) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as f:
            if str(f["__key__"]) != text:
                return None
            return {k: f[k] for k in f.files if k != "__key__"}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def _store(path: Path, text: str, arrays: dict[str, np.ndarray]) -> None:
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.stem, suffix=".tmp",
                                         delete=False) as f:
            tmp = f.name
            np.savez(f, __key__=np.array(text), **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)          # readable like an ordinary file (mkstemp makes 0600)
        os.replace(tmp, path)           # readers see the old file or the whole new one
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def cached_arrays(name: str, key: dict, build: Callable[[], dict[str, np.ndarray]]
                  ) -> dict[str, np.ndarray]:
    """``build()``, or the arrays a previous ``build()`` with the same ``key`` stored.

    ``key`` must name every input of ``build`` and the code it runs (JSON-serialisable);
    ``name`` only prefixes the file name.  Arrays with a key named ``__key__`` are refused.
    """
    root = cache_dir()
    if root is None or not _usable(root):
        return build()
    text = _key_text(key)
    path = root / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.npz"
    hit = _load(path, text)
    if hit is not None:
        return hit
    try:
        lock = open(path.with_suffix(".lock"), "a")
    except OSError:
        return build()
    with lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)     # released when the file is closed
        hit = _load(path, text)                  # built while we waited
        if hit is not None:
            return hit
        arrays = build()
        if "__key__" in arrays:
            raise ValueError("arrays must not be named '__key__' (reserved for the cache key)")
        _store(path, text, arrays)
        return arrays
