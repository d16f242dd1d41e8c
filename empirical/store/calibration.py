"""The per-paper data file of held-out level-band calibrations (``calibration.json`` beside a
paper's declaring module): read by declarations, written atomically by
``python -m empirical.run.calibration`` (:mod:`empirical.core.calibration` says what a record
is and why its seeds are held out)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from empirical.core.calibration import Calibration
from empirical.store.integrity import atomic_write_text

__all__ = ["FILE_NAME", "data_file", "read_calibrations", "write_calibrations", "calibrations"]

FILE_NAME = "calibration.json"
#: Layout of the file; another layout is refused (the bands would be read wrong).
FORMAT = 1


def data_file(module_file: str | os.PathLike) -> Path:
    """The data file of the paper whose module is ``module_file`` (a declaring module's
    ``__file__``)."""
    return Path(module_file).parent / FILE_NAME


def _key(c: Calibration) -> str:
    return " | ".join(c.key)


def read_calibrations(path: str | os.PathLike) -> dict[tuple[str, str, str], Calibration]:
    """Records of ``path`` by (experiment, bound, kind); {} when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a calibration file of format {FORMAT}")
    out = {}
    for k, rec in data["records"].items():
        c = Calibration.from_json(rec)
        if k != _key(c):
            raise ValueError(f"{path}: record {k!r} holds {_key(c)!r}")
        out[c.key] = c
    return out


def write_calibrations(path: str | os.PathLike, records: list[Calibration], *,
                       replace: bool = False) -> Path:
    """Merge ``records`` into ``path`` (all of its records when ``replace``), atomically; each
    record is validated as held out first."""
    for c in records:
        c.validate(bound=c.bound, kind=c.kind, level=c.band, experiment=c.experiment)
    merged = {} if replace else read_calibrations(path)
    merged.update({c.key: c for c in records})
    doc = {"format": FORMAT,
           "about": "level bands calibrated on held-out seeds (empirical/core/calibration.py); "
                    "recompute with python -m empirical.run.calibration",
           "records": {_key(c): c.to_json() for _, c in sorted(merged.items())}}
    return atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def calibrations(module_file: str | os.PathLike) -> dict[tuple[str, str, str], Calibration]:
    """What a declaring module reads: the records of its paper's data file."""
    return read_calibrations(data_file(module_file))
