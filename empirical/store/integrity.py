"""Authenticated storage shared by every file dprates reads back (point files, analysis,
figure and exponent caches, audit records): a file is believed only when it parses within a
bounded nesting depth, carries the SHA-256 checksum of its own canonical content, and its key
names the code that produced it.  Anything else is *corrupt*: named in one line, moved aside to
``<name>.corrupt[.N]`` (never deleted: it is evidence) and recomputed.

Writes go through :func:`atomic_write_bytes`: a temporary file from ``tempfile.mkstemp`` in the
target directory (``O_EXCL``, an unpredictable name, so a planted symlink is never followed),
fsynced, then renamed over the target (a rename replaces a symlink at the target, it does not
write through it).

Not tied to one paper: the harness that stores what every paper's experiments produce.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["MAX_DEPTH", "CorruptFile", "parse_json", "canonical", "seal", "unseal",
           "atomic_write_bytes", "atomic_write_text", "atomic_write_json", "move_aside",
           "read_sealed", "quarantine"]

#: Deepest nesting of arrays/objects any stored file needs (an analysis record is about 12
#: deep); deeper input is refused before any recursive code sees it.
MAX_DEPTH = 64


class CorruptFile(ValueError):
    """A stored file that cannot be believed; the message says why, in a few words."""


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(i for i in range(256) if i not in b"[]{}")


def _depth_ok(raw: bytes | str, limit: int) -> bool:
    """Whether JSON text nests at most ``limit`` deep: brackets outside strings, counted at C
    speed (string literals blanked by a regular expression, the brackets' running sum)."""
    b = raw.encode("utf-8", "replace") if isinstance(raw, str) else bytes(raw)
    brackets = _STRING.sub(b'""', b).translate(None, _NOT_BRACKETS)
    if not brackets:
        return True
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max()) <= limit


def parse_json(raw: bytes | str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses, with :class:`CorruptFile`, anything empty, undecodable,
    truncated or nested deeper than ``limit`` (never a RecursionError)."""
    if not (raw.strip() if raw else raw):
        raise CorruptFile("empty file")
    if not _depth_ok(raw, limit):
        raise CorruptFile(f"nested deeper than {limit} levels")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CorruptFile(f"truncated or not JSON ({str(exc)[:80]})") from None


def canonical(obj: Any) -> bytes:
    """The bytes a checksum is taken over: sorted keys, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=float).encode()


def seal(body: dict) -> dict:
    """``body`` (round-tripped through JSON) with the checksum of its canonical bytes."""
    rec = json.loads(canonical(body))
    rec.pop("checksum", None)
    rec["checksum"] = hashlib.sha256(canonical(rec)).hexdigest()
    return rec


def unseal(rec: Any) -> dict:
    """The body of a sealed record, or :class:`CorruptFile` (not an object, no checksum, or
    content that does not match it)."""
    if not isinstance(rec, dict):
        raise CorruptFile(f"not a JSON object but a {type(rec).__name__}")
    if not isinstance(rec.get("checksum"), str):
        raise CorruptFile("no checksum")
    body = {k: v for k, v in rec.items() if k != "checksum"}
    try:
        ok = hashlib.sha256(canonical(body)).hexdigest() == rec["checksum"]
    except (TypeError, ValueError, RecursionError):
        ok = False
    if not ok:
        raise CorruptFile("checksum mismatch (edited or damaged after writing)")
    return body


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int | None = None) -> Path:
    """Write ``data`` to ``path``: mkstemp in its directory, fsync, rename.  On any failure the
    temporary file is removed and the target is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
    try:
        os.fchmod(fd, _FILE_MODE if mode is None else mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:
            # named by the file the caller asked for, not by the temporary name
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any, *, sealed: bool = True) -> Path:
    """``obj`` as JSON (with its checksum when ``sealed``), atomically."""
    return atomic_write_bytes(path, json.dumps(seal(obj) if sealed else obj,
                                               sort_keys=True).encode())


def move_aside(path: Path) -> Path:
    """Rename a corrupt file out of the way to ``<name>.corrupt[.N]`` (never delete evidence)."""
    target = path.with_name(path.name + ".corrupt")
    n = 1
    while target.exists() or target.is_symlink():
        target = path.with_name(f"{path.name}.corrupt.{n}")
        n += 1
    os.replace(path, target)
    return target


def quarantine(path: Path, what: str, reason: str, say: Callable[[str], None],
               then: str = "recomputing") -> None:
    """Name a corrupt ``path`` in one line on ``say`` and move it aside."""
    try:
        where = f"moved aside to {move_aside(path).name}"
    except OSError as exc:
        where = f"could not move it aside ({exc.strerror or exc})"
    say(f"{path}: corrupt {what}: {reason}; {where}; {then}")


def read_sealed(path: Path, what: str, say: Callable[[str], None]) -> dict | None:
    """The checked body of the sealed JSON file ``path``; None when it is missing, or when it
    is corrupt (then named on ``say`` and moved aside)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        say(f"{path}: unreadable {what} ({exc.strerror or exc}); recomputing")
        return None
    try:
        rec = parse_json(raw)
        if isinstance(rec, dict) and "checksum" not in rec and rec.get("format", 1) == 1:
            return None     # written before files were sealed: stale, silently rewritten
        return unseal(rec)
    except CorruptFile as exc:
        quarantine(path, what, str(exc), say)
        return None
