"""Fuzzing the stores a results directory holds (point files, analysis caches, figure caches,
stored audits): random byte corruption, truncation, nesting and type changes are always detected
(or leave the content exactly as stored), never crash the reader, and never change a verdict."""
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _toy
from empirical.store import analysis_cache
from empirical.privacy import audit
from empirical.store import audit_store
from empirical.store import integrity
from empirical.run import runner
from empirical.report.cache import cached_bytes

EXP = _toy.TOY_FINDING
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One of each store, written by the code that writes them; kept pristine as bytes."""
    root = tmp_path_factory.mktemp("fuzz") / "results"
    rows = runner.sweep(EXP, results=root)
    a, _ = analysis_cache.cached_analyse(EXP, list(rows), results=root)
    fig = analysis_cache.cache_path(EXP, False, root).with_name("figure-quick.cache")
    cached_bytes(fig, "figkey", lambda: b"\x89PNG\r\n\x1a\nthe figure")
    audit.store_result(audit.run_audit(audit.get_target("core.gaussian"), trials=1000), root)
    point = sorted((root / EXP.paper / EXP.id).glob("*.json"))[0]
    files = {"point": point, "analysis": analysis_cache.cache_path(EXP, False, root),
             "figure": fig, "audit": root / "audits" / "core.gaussian.json"}
    return {"root": root, "files": files, "raw": {k: p.read_bytes() for k, p in files.items()},
            "verdicts": [(r.bound, r.verdict) for r in a.results]}


def _restore(stored):
    for kind, path in stored["files"].items():
        for junk in path.parent.glob(path.name + ".corrupt*"):
            junk.unlink()
        path.write_bytes(stored["raw"][kind])


def _paths(obj, prefix=()):
    """Every (path, value) inside a JSON value."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _set(obj, path, value):
    if not path:
        return value
    obj[path[0]] = _set(obj[path[0]], path[1:], value)
    return obj


_OTHER = st.sampled_from(["x", "0.95", 1.5, -1, 0, None, True, [], {}, [1, [2]], {"$f": "nan"},
                          "many", 1e308])


@st.composite
def damaged(draw, raw: bytes):
    """(bytes, resealed) after one random damage of ``raw``."""
    how = draw(st.sampled_from(["flip", "truncate", "nest", "type", "type+seal", "junk"]))
    if how == "flip":
        i = draw(st.integers(0, len(raw) - 1))
        b = draw(st.integers(0, 255).filter(lambda b: b != raw[i]))
        return raw[:i] + bytes([b]) + raw[i + 1:], False
    if how == "truncate":
        return raw[:draw(st.integers(0, len(raw) - 1))], False
    if how == "junk":
        return draw(st.binary(max_size=200)), False
    rec = json.loads(raw)
    if how == "nest":
        depth = draw(st.sampled_from([2, 70, 1000, 200_000]))
        paths = [p for p, _ in _paths(rec) if p and p[-1] != "checksum"]
        path = draw(st.sampled_from(paths))
        nested = json.loads("[" * min(depth, 60) + "0" + "]" * min(depth, 60))
        text = json.dumps(_set(rec, path, nested))
        if depth > 60:      # deeper than json.dumps could write: spliced in as text
            text = text.replace("[" * 60 + "0" + "]" * 60,
                                "[" * depth + "0" + "]" * depth, 1)
        return text.encode(), False
    paths = [p for p, _ in _paths(rec) if p and p[-1] != "checksum"][:400]
    path = draw(st.sampled_from(paths))
    value = draw(_OTHER)
    rec = _set(rec, path, value)
    if how == "type+seal":
        rec.pop("checksum", None)
        return json.dumps(integrity.seal(rec)).encode(), True
    return json.dumps(rec).encode(), False


def _same_json(a: bytes, b: bytes) -> bool:
    try:
        return json.loads(a) == json.loads(b)
    except Exception:
        return False


@given(data=st.data())
@FUZZ
def test_point_files(stored, data):
    _restore(stored)
    path, raw = stored["files"]["point"], stored["raw"]["point"]
    bad, resealed = data.draw(damaged(raw))
    path.write_bytes(bad)
    point = EXP.point(json.loads(raw)["point"][EXP.variable])
    got = runner._read_point(path, EXP, point, runner.code_fingerprint(EXP.run.__module__))
    assert got.status in ("ok", "corrupt", "stale")
    ref = json.loads(raw)["rows"]
    if got.status == "ok" and not resealed:
        assert got.rows == ref, "an accepted file holds the stored rows"
    elif got.status == "ok":
        # re-sealed by hand: a well-typed value may differ (the checksum detects damage, not
        # intent), but no column changes its type and no row its identity
        def kinds(rows):
            return [{k: (type(v) if v is not None else float) for k, v in r.items()}
                    for r in rows]
        norm = lambda rows: [{k: (float if t is int else t) for k, t in r.items()}
                             for r in kinds(rows)]
        assert norm(got.rows) == norm(ref)
        assert [(r["seed"], r["experiment"]) for r in got.rows] == \
            [(r["seed"], r["experiment"]) for r in ref]
    else:
        rows, missing = runner.load_rows(EXP, results=stored["root"], progress=lambda m: None)
        assert missing and len(rows) == (len(EXP.quick_grid) - 1) * EXP.seeds


@given(data=st.data())
@FUZZ
def test_analysis_cache(stored, data):
    _restore(stored)
    path, raw = stored["files"]["analysis"], stored["raw"]["analysis"]
    bad, resealed = data.draw(damaged(raw))
    path.write_bytes(bad)
    rows, _ = runner.load_rows(EXP, results=stored["root"])
    a, hit = analysis_cache.cached_analyse(EXP, rows, results=stored["root"])
    if hit:
        assert _same_json(bad, raw) or resealed, "an accepted cache is the stored one"
    if not resealed:
        assert [(r.bound, r.verdict) for r in a.results] == stored["verdicts"]
    elif hit:
        # re-sealed by hand: well-typed values may differ (the checksum detects damage, not
        # intent), but no field of the analysis changes its type
        assert all(isinstance(r.verdict, str) and isinstance(r.local, float)
                   and isinstance(r.observed.slope, float) for r in a.results)
        assert a.fit is None or isinstance(a.fit.ci_low, float)


@given(data=st.data())
@FUZZ
def test_figure_cache(stored, data):
    _restore(stored)
    path, raw = stored["files"]["figure"], stored["raw"]["figure"]
    bad, resealed = data.draw(damaged(raw))
    path.write_bytes(bad)
    said = []
    png = cached_bytes(path, "figkey", lambda: b"redrawn", say=said.append)
    original = b"\x89PNG\r\n\x1a\nthe figure"
    assert png in (original, b"redrawn") or resealed
    if png != b"redrawn" and not resealed:
        assert _same_json(bad, raw)
    assert len(said) <= 1


@given(data=st.data())
@FUZZ
def test_stored_audits(stored, data):
    _restore(stored)
    path, raw = stored["files"]["audit"], stored["raw"]["audit"]
    bad, resealed = data.draw(damaged(raw))
    path.write_bytes(bad)
    problems = []
    got = audit_store.load(stored["root"], problems)
    if "core.gaussian" in got:
        a = got["core.gaussian"]
        ref = json.loads(raw)
        fields = ("verdict", "confidence", "claimed", "epsilon_lo", "trials", "target")
        if not resealed:
            assert all(a.record.get(f) == ref.get(f) for f in fields)
        assert isinstance(a.confidence, float) and 0 < a.confidence < 1
        assert isinstance(a.trials, int) and isinstance(a.verdict, str)
        str(a)          # the report's rendering of it does not fail
    else:
        assert len(problems) == 1 and str(path) in problems[0]
