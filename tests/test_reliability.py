"""Nothing a results directory or a worker holds can change a verdict or escape: caches are
sealed and keyed by the code that produced them, workers running other code are refused, and
stored HTML, ids, addresses, arguments and files are checked before they are used."""
import base64
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import _toy
from empirical.store import analysis_cache
from empirical.store import integrity
from empirical.run import runner
from empirical.run import scheduling
from empirical.run.runner import SweepError
from empirical.run.scheduling import sweep_all

REPO = Path(__file__).resolve().parents[1]


def _said():
    lines = []
    return lines, lines.append


# -- caches: sealed, keyed by code, refused from a worker running other code ------------------

def _analysed(tmp_path):
    out = sweep_all([_toy.TOY_FINDING], results=tmp_path, workers=1, analyse=True)
    return out[_toy.TOY_FINDING.id]


def test_hand_edited_analysis_cache_is_named_moved_aside_and_refit(tmp_path, capsys):
    first = _analysed(tmp_path)
    assert first.analysis.results[0].verdict != "PASS"
    path = analysis_cache.cache_path(_toy.TOY_FINDING, False, tmp_path)
    text = path.read_text()
    # flip the recorded verdict by hand (FINDING -> PASS), keeping the key
    forged = text.replace(f'"{first.analysis.results[0].verdict}"', '"PASS"')
    assert forged != text
    path.write_text(forged)
    again = _analysed(tmp_path)
    assert not again.analysis_cached
    assert again.analysis.results[0].verdict == first.analysis.results[0].verdict
    err = capsys.readouterr().err
    assert f"{path}: corrupt analysis cache: checksum mismatch" in err
    assert path.with_name(path.name + ".corrupt").exists()


def test_analysis_cache_key_covers_fitting_checks_and_validation_code():
    fp_mods = set()
    from empirical.store import rows as store_rows

    real = store_rows._scan_file

    def spy(name, path):
        fp_mods.add(name)
        return real(name, path)
    import unittest.mock as m
    with m.patch.object(store_rows, "_scan_file", spy):
        analysis_cache.analysis_fingerprint(_toy.TOY)
    assert {"empirical.core.fitting", "empirical.core.checks", "empirical.core.experiment",
            "empirical.store.analysis_cache", "empirical.store.integrity"} <= fp_mods


def test_forged_figure_cache_is_refused_and_redrawn(tmp_path):
    from empirical.report.cache import cached_bytes

    png = b"\x89PNG\r\n\x1a\nreal"
    path = tmp_path / "figure-quick.cache"
    assert cached_bytes(path, "k", lambda: png) == png
    rec = json.loads(path.read_text())
    rec["png"] = base64.b64encode(b"\x89PNG\r\n\x1a\nforged").decode()
    path.write_text(json.dumps(rec))
    lines, say = _said()
    assert cached_bytes(path, "k", lambda: png, say=say) == png
    assert len(lines) == 1 and "corrupt figure cache: checksum mismatch" in lines[0]
    assert path.with_name(path.name + ".corrupt").exists()
    assert cached_bytes(path, "k", lambda: b"never") == png, "rewritten, sealed"


def test_worker_with_other_fitting_code_is_refused(tmp_path):
    """A worker whose fitting.py differs from this machine's (here by one appended line; a
    changed slope would differ the same way) computes the analysis in its own process from
    its own copy of the project; the parent refuses it."""
    copy = tmp_path / "worker"
    for d in ("empirical", "bounds", "algorithms", "tests"):
        shutil.copytree(REPO / d, copy / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", copy)         # the checkout declares its papers there
    fitting = copy / "empirical" / "core" / "fitting.py"
    fitting.write_text(fitting.read_text() + "\n# slope += 0.5\n")
    rows = list(_analysed(tmp_path / "r").rows)
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    code = ("import json, pickle, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests'];"
            "import _toy; from empirical.run import scheduling;"
            "rows = json.load(open(sys.argv[2]));"
            "sys.stdout.buffer.write(pickle.dumps(scheduling._remote_analysis("
            "'toy.finding', '_toy', rows, False)))")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = subprocess.run([sys.executable, "-c", code, str(copy), str(tmp_path / "rows.json")],
                         capture_output=True, env=env, check=True, cwd=copy).stdout
    remote = pickle.loads(out)
    run = scheduling._Run([_toy.TOY_FINDING], False, tmp_path / "r", lambda m: None, None,
                          True, {}, validate=False)
    task = scheduling._Task((0,), "analysis", _toy.TOY_FINDING.id, rows=rows)
    run.states[task.exp_id].analysis_key = "k"
    with pytest.raises(SweepError, match="worker ran different analysis code.*analysis differ"):
        run.handle(task, lambda: remote)
    assert run.states[task.exp_id].outcome.analysis is None
    # the same worker with this machine's code is accepted
    here = scheduling._remote_analysis(_toy.TOY_FINDING.id, "_toy", rows, False)
    run.handle(task, lambda: here)
    assert run.states[task.exp_id].outcome.analysis is not None


# -- the report renders no markup it did not produce ------------------------------------------

_PAYLOAD = "<script>alert('x')</script>"


def _reseal_points(root, exp, edit):
    """Rewrite every stored point of ``exp`` with ``edit(rows)``, re-sealed as a tool that knows
    the checksum scheme would (the checksum only detects accidents, not intent)."""
    for f in (root / exp.paper / exp.id).glob("*.json"):
        rec = json.loads(f.read_text())
        rec["rows"] = edit(rec["rows"])
        rec.pop("checksum")
        integrity.atomic_write_json(f, rec)


def test_report_escapes_everything_read_from_a_results_dir(tmp_path):
    import dataclasses

    import bounds
    from empirical import report
    from empirical.report import cache as report_cache

    root = tmp_path / "results"
    runner.sweep(_toy.TOY, results=root)
    # (1) a planted exponent cache: raw HTML under every shipped key and under the toy bound's
    shipped = json.loads(report_cache._SHIPPED.read_text())["entries"]
    keys = [*shipped, report_cache.exponent_key(bounds.get("kl:toy_power_law"))]
    (root / "report-exponents.cache").write_text(json.dumps(
        {"format": 1, "entries": {k: f"<ul><li>{_PAYLOAD}</li></ul>" for k in keys}}))
    # (2) row strings, (3) an analysis error message, both carrying markup
    _reseal_points(root, _toy.TOY, lambda rows: [{**r, "label": _PAYLOAD} for r in rows])
    rows, _ = runner.load_rows(_toy.TOY, results=root)
    a = analysis_cache.analyse_quietly(_toy.TOY, rows)
    analysis_cache.store(_toy.TOY, analysis_cache.analysis_key(_toy.TOY, rows, False), False,
                         dataclasses.replace(a, fit=None, results=(), error=f"raised {_PAYLOAD}",
                                             privacy_error=_PAYLOAD), root)
    html, md = report.build_report("kl", results=root, out=tmp_path / "report",
                                   markdown=tmp_path / "results.md", figures=tmp_path / "figs",
                                   experiment_ids=[_toy.TOY.id, _toy.TOY_WRONG.id])
    page, summary = html.read_text(), md.read_text()
    assert "alert(" not in page.replace("alert(&#x27;x&#x27;)", "")
    assert "<script>alert" not in page and "<script>alert" not in summary
    assert _PAYLOAD not in summary
    assert page.count("&lt;script&gt;") >= 2 and "\\<script" not in summary, "shown, escaped"
    # the toy bound's exponent was recomputed, not taken from the planted file
    assert "<math" in page


# -- ids are safe path components in their own paper's namespace ------------------------------

@pytest.mark.parametrize("bad", ["toy/../../escape", "toy..x", "../x", "toy.", ".toy", "a/b",
                                 "toy x", "", "toy.\x00", 5, "x" * 200])
def test_an_id_that_is_not_a_safe_path_component_is_refused(bad, tmp_path):
    import dataclasses

    from empirical.core import experiment as registry

    with pytest.raises(ValueError, match="experiment id must be dot-separated words"):
        registry.register(dataclasses.replace(_toy.TOY, id=bad))
    assert not any(tmp_path.parent.glob("escape*"))


def test_a_module_cannot_register_an_id_in_a_builtin_papers_namespace(tmp_path, monkeypatch,
                                                                       capsys):
    """A --module that registers kl.thm9.rho with its own run would run it and write into the
    built-in experiment's directory: refused, and so is an id under another paper's key."""
    mod = tmp_path / "squatter.py"
    mod.write_text("import dataclasses, _toy\n"
                   "from empirical.core.experiment import register\n"
                   "def values(p):\n    return {'n': p['n']}\n"
                   "EXP = dataclasses.replace(_toy.TOY, id='kl.thm9.rho', bound_values=values)\n"
                   "register(EXP)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from empirical.cli import main

    assert main(["experiments", "kl", "--module", "squatter"]) == 2
    import dataclasses

    from empirical.core import experiment as registry

    with pytest.raises(ValueError, match="namespace but declares paper 'kl'"):
        registry.register(dataclasses.replace(_toy.TOY, id="sosp.mine", paper="kl"))
    assert registry.get("kl.thm9.rho").run.__module__.startswith("empirical.")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'kl.thm9.rho' is in dprates' own paper 'kl'" in err[0]


# -- the scheduler: one deadline for connect and handshake; a bad address refused early -------

@pytest.fixture
def silent_server():
    """A local TCP service that accepts connections and never says a word (bound to the
    loopback interface only)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held, stop = [], threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def test_a_service_that_accepts_and_never_answers_fails_within_the_deadline(silent_server,
                                                                             tmp_path, capsys):
    import time

    from empirical.cli import main

    t0 = time.monotonic()
    with pytest.raises(runner.SchedulerError, match="within 1s .no Dask handshake"):
        runner.connect(f"tcp://127.0.0.1:{silent_server}", timeout=1.0)
    assert time.monotonic() - t0 < 4
    t0 = time.monotonic()
    status = main(["verify", "--experiment", _toy.TOY.id, "--results", str(tmp_path / "r"),
                   "--scheduler", f"127.0.0.1:{silent_server}", "--no-figures"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "no Dask handshake" in err
    assert time.monotonic() - t0 < runner.DASK_TIMEOUT + 5


@pytest.mark.parametrize("bad", ["tcp://", "tcp://host", "http://h:80", "h:99999", "h:-1",
                                 "tcp://a b:1", "tcp://h:1/x", "::::"])
def test_a_malformed_scheduler_address_is_refused_at_parse_time(bad, tmp_path, capsys):
    import time

    from empirical.cli import main

    t0 = time.monotonic()
    status = main(["verify", "--experiment", _toy.TOY.id, "--results", str(tmp_path / "r"),
                   "--scheduler", bad])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("dprates: error: argument --scheduler: scheduler address must be")
    assert time.monotonic() - t0 < 1 and not (tmp_path / "r").exists()


# -- one experiment's failure is its own ERROR row; unreadable files are corrupt --------------

def _raising_run(exc_factory):
    def run(point, rngs):
        if point["n"] >= 4:
            raise exc_factory()
        return _toy.run_power_law(point, rngs)
    return run


def _raises_systemexit(point, rngs):
    return _raising_run(lambda: SystemExit(3))(point, rngs)


def _raises_keyboardinterrupt(point, rngs):
    return _raising_run(lambda: KeyboardInterrupt("from the experiment"))(point, rngs)


def _sends_itself_sigint(point, rngs):
    import signal
    import time

    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
    return _toy.run_power_law(point, rngs)


@pytest.fixture
def raising():
    """Toy experiments whose code raises SystemExit or KeyboardInterrupt, or sends this process
    a real SIGINT; registered only for the test that uses them."""
    import dataclasses

    from empirical.core import experiment as registry

    made = {name: registry.register(dataclasses.replace(_toy.TOY, id=f"toy.{name}", run=run))
            for name, run in (("raises_systemexit", _raises_systemexit),
                              ("raises_keyboardinterrupt", _raises_keyboardinterrupt),
                              ("sends_sigint", _sends_itself_sigint))}
    yield made
    for exp in made.values():
        registry._REGISTRY.pop(exp.id, None)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_systemexit_or_keyboardinterrupt_from_experiment_code_is_an_error_row(workers, tmp_path,
                                                                             capsys, raising):
    from empirical.cli import main

    EXITS, INTERRUPTS = raising["raises_systemexit"], raising["raises_keyboardinterrupt"]

    status = main(["verify", "--experiment", EXITS.id, "--experiment", INTERRUPTS.id,
                   "--experiment", _toy.TOY.id, "--results", str(tmp_path / "r"),
                   "--workers", workers, "--no-figures"])
    out = capsys.readouterr().out
    assert status == 1
    assert "SystemExit" in out and "KeyboardInterrupt" in out, out
    assert "1/3 experiments verified" in out
    row = next(line for line in out.splitlines() if line.startswith(_toy.TOY.id))
    assert "PASS" in row


def test_a_real_ctrl_c_still_stops_the_run(tmp_path, capsys, raising):
    import signal

    from empirical.cli import main

    # A background job starts Python with SIGINT ignored; Ctrl-C at a terminal is what this
    # checks, so run it under Python's own handler and put back whatever was there.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        status = main(["verify", "--experiment", raising["sends_sigint"].id,
                       "--results", str(tmp_path / "r"), "--workers", "1", "--no-figures"])
    finally:
        signal.signal(signal.SIGINT, before)
    assert status == 130 and "interrupted" in capsys.readouterr().err


def _nest(depth=100_000):
    return "[" * depth + "]" * depth


def test_over_nested_point_and_cache_files_are_named_moved_aside_and_recomputed(tmp_path,
                                                                                capsys):
    from empirical.cli import main

    root = tmp_path / "r"
    args = ["verify", "--experiment", _toy.TOY.id, "--results", str(root), "--workers", "1",
            "--figures", str(tmp_path / "f")]
    assert main(args) == 0
    capsys.readouterr()
    point = sorted((root / "kl" / _toy.TOY.id).glob("*.json"))[0]
    cache = analysis_cache.cache_path(_toy.TOY, False, root)
    fig = cache.with_name("figure-quick.cache")
    for f in (point, cache, fig):
        f.write_text(_nest())
    assert main(args) == 0
    err = capsys.readouterr().err
    for f in (point, cache, fig):
        assert f"{f}: corrupt" in err and "nested deeper than" in err, (f, err)
        assert f.with_name(f.name + ".corrupt").exists()
        integrity.unseal(json.loads(f.read_text())) if f != point else json.loads(f.read_text())
    assert "RecursionError" not in err


def test_over_nested_audit_file_is_named_and_hides_no_other_audit(tmp_path):
    from empirical.privacy import audit
    from empirical.store import audit_store

    audit.store_result(audit.run_audit(audit.get_target("core.gaussian"), trials=1000), tmp_path)
    (tmp_path / "audits" / "core.gaussian_broken.json").write_text(_nest())
    problems = []
    got = audit_store.load(tmp_path, problems)
    assert "core.gaussian" in got
    assert len(problems) == 1 and "nested deeper than" in problems[0]


def test_a_failed_figure_write_is_one_named_line_and_verdicts_still_print(tmp_path, capsys):
    from empirical.cli import main

    figs = tmp_path / "f"
    (figs / "kl").mkdir(parents=True)
    # the figure's path is a directory: the rename into place fails
    blocker = figs / "kl" / f"{_toy.TOY.id}.png"
    blocker.mkdir()
    (blocker / "keep").write_text("")
    status = main(["verify", "--experiment", _toy.TOY.id, "--results", str(tmp_path / "r"),
                   "--workers", "1", "--figures", str(figs)])
    cap = capsys.readouterr()
    assert status == 1
    assert "PASS" in cap.out and "1/1 experiments verified" in cap.out
    lines = [l for l in cap.err.splitlines() if "could not write the figure" in l]
    assert len(lines) == 1 and str(blocker) in lines[0]
    assert not [p for p in figs.rglob("*") if p.name.startswith(".tmp-")]


# -- temporary files: mkstemp in the target directory, then a rename --------------------------

def test_planted_symlinks_are_never_written_through(tmp_path):
    """Symlinks planted at every name a writer could have picked (``.index.html.tmp``,
    ``.name.<pid>.tmp``, ``.stem.<pid>.tmp.png``) and at the targets themselves: the victim
    files keep their content, the targets become regular files."""
    from empirical import report
    from empirical.report import cache as report_cache
    from empirical.store.figures import write_png

    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    pid = os.getpid()
    planted = {
        out / "index.html": out / ".index.html.tmp",
        out / "results.md": out / ".results.md.tmp",
        out / "x.cache": out / f".x.cache.{pid}.tmp",
        out / "fig.png": out / f".fig.{pid}.tmp.png",
        out / "a.json": out / ".tmp-a.json",
    }
    for target, tmp in planted.items():
        tmp.symlink_to(victim)
        target.symlink_to(victim)
    report._write(out / "index.html", "<p>page</p>")
    report._write(out / "results.md", "# md")
    report_cache.cached_bytes(out / "x.cache", "k", lambda: b"png")
    write_png(b"\x89PNG fig", out / "fig.png")
    runner._atomic_write_json(out / "a.json", {"a": 1})
    assert victim.read_text() == "precious"
    for target in planted:
        assert target.is_file() and not target.is_symlink()
    assert (out / "index.html").read_text() == "<p>page</p>"
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp-") and not p.is_symlink()]


# -- arguments and audit records checked at parse/read time -----------------------------------

@pytest.mark.parametrize("argv, what", [
    (["audit", "core.gaussian", "--alpha", "1.5"], "argument --alpha: must be a number in (0, 1)"),
    (["audit", "core.gaussian", "--alpha", "0"], "argument --alpha: must be a number in (0, 1)"),
    (["audit", "core.gaussian", "--alpha", "nan"], "argument --alpha"),
    (["audit", "core.gaussian", "--trials", "100000000000000000000000"], "argument --trials"),
    (["audit", "core.gaussian", "--trials", "1e23"], "argument --trials"),
    (["audit", "core.gaussian", "--trials", "3"], "argument --trials"),
    (["verify", "--workers", "99999999999999999999"], "argument --workers: must be an integer"),
    (["verify", "--workers", "0"], "argument --workers"),
    (["run", "toy.power_law", "--workers", "2000"], "argument --workers"),
])
def test_every_argument_is_checked_at_parse_time(argv, what, tmp_path, capsys):
    import time

    from empirical.cli import main

    t0 = time.monotonic()
    status = main([*argv, "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and what in err, err
    assert time.monotonic() - t0 < 5 and not (tmp_path / "r").exists()


def test_library_calls_check_alpha_trials_and_workers():
    from empirical.privacy import audit

    t = audit.get_target("core.gaussian")
    with pytest.raises(ValueError, match="alpha must be in"):
        audit.run_audit(t, trials=100, alpha=1.5)
    with pytest.raises(ValueError, match="trials must be an integer in"):
        audit.run_audit(t, trials=10**23)
    with pytest.raises(ValueError, match="workers must be an integer in"):
        runner._check_workers(10**20)


@pytest.fixture(scope="module")
def two_audits(tmp_path_factory):
    """Two stored audits (a results directory holding only them), written once."""
    from empirical.privacy import audit

    root = tmp_path_factory.mktemp("audits")
    for name in ("core.gaussian", "core.gaussian.noise_halved"):
        audit.store_result(audit.run_audit(audit.get_target(name), trials=1000), root)
    return root


@pytest.mark.parametrize("field, value", [("confidence", "0.95"), ("trials", "many"),
                                          ("claimed", [1]), ("epsilon_lo", {"a": 1}),
                                          ("verdict", 3), ("confidence", 1.5),
                                          ("target", "../x"), ("ok", "yes")])
def test_a_sealed_audit_record_with_wrong_types_is_named_and_hides_nothing(field, value,
                                                                           tmp_path, two_audits):
    from empirical.store import audit_store

    shutil.copytree(two_audits, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "audits" / "core.gaussian.json"
    rec = json.loads(path.read_text())
    rec[field] = value
    rec.pop("checksum")
    rec["checksum"] = __import__("hashlib").sha256(runner._canonical(rec)).hexdigest()
    path.write_text(json.dumps(rec))
    problems = []
    got = audit_store.load(tmp_path, problems)
    assert list(got) == ["core.gaussian.noise_halved"]
    assert len(problems) == 1 and f"field {field!r} must be" in problems[0]


# -- report refuses without results; nothing tracked is written unless asked ------------------

def test_report_without_stored_results_refuses_in_one_line_and_writes_nothing(tmp_path,
                                                                               capsys,
                                                                               monkeypatch):
    from empirical.cli import main

    monkeypatch.chdir(tmp_path)
    status = main(["report", "--paper", "kl", "--results", str(tmp_path / "empty")])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert "no stored results" in err and "run `dprates verify --paper kl" in err
    assert list(tmp_path.iterdir()) == [], "no report/, no docs/, no cache"


def test_report_writes_its_summary_beside_the_page_unless_asked(tmp_path, monkeypatch):
    """From a checkout (the working directory holds docs/results.md), `dprates report` leaves
    the tracked summary alone; --markdown docs/results.md regenerates it."""
    from empirical.cli import main

    root = tmp_path / "results"
    runner.sweep(_toy.TOY, results=root)
    (tmp_path / "docs").mkdir()
    tracked = tmp_path / "docs" / "results.md"
    tracked.write_text("committed")
    monkeypatch.chdir(tmp_path)
    base = ["report", "--experiment", _toy.TOY.id, "--results", str(root)]
    assert main(base) == 0
    assert tracked.read_text() == "committed"
    built = tmp_path / "report" / "results.md"
    assert built.exists() and (tmp_path / "report" / "index.html").exists()
    assert main([*base, "--markdown", "docs/results.md"]) == 0
    assert tracked.read_text().startswith("# Verification results")


def test_generated_links_never_name_the_build_machine(tmp_path):
    """A summary written outside the repository links the errata as the repository names it,
    not as ``../../../../<absolute path>/docs/errata.md``."""
    from empirical import report

    root = tmp_path / "results"
    runner.sweep(_toy.TOY, results=root)
    _, md = report.build_report("kl", results=root, out=tmp_path / "out",
                                markdown=tmp_path / "deep" / "er" / "results.md",
                                figures=tmp_path / "figs", experiment_ids=[_toy.TOY.id])
    text = md.read_text()
    assert "](docs/errata.md)" in text
    assert str(REPO) not in text and str(tmp_path) not in text and "../.." not in text


# -- accounting: one default relation, errors naming the inner event, quiet dp-accounting -----

def test_accounting_has_one_default_relation():
    import inspect

    from algorithms import accounting as acc

    defaults = {name: p.default for fn, name in (
        (acc.epsilon, "epsilon"), (acc.zcdp_rho, "zcdp_rho"),
        (acc.calibrate_noise_multiplier, "calibrate_noise_multiplier"),
        (acc.PrivacySpent.from_event, "PrivacySpent.from_event"),
        (acc.ZcdpFilter.__init__, "ZcdpFilter")) for p in [
        inspect.signature(fn).parameters["relation"]]}
    assert set(defaults.values()) == {acc.DEFAULT_RELATION}, defaults


@pytest.mark.parametrize("call", ["epsilon", "zcdp_rho", "calibrate"])
def test_an_unsupported_sampled_event_names_the_event_inside(call):
    import dp_accounting as dpa

    from algorithms import accounting as acc

    inner = dpa.GaussianDpEvent(1.0)
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, inner), 3)
    run = {"epsilon": lambda: acc.epsilon(ev, 1e-5), "zcdp_rho": lambda: acc.zcdp_rho(ev),
           "calibrate": lambda: acc.calibrate_noise_multiplier(
               lambda z: dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(z)), 1.0, 1e-5)}
    with pytest.raises(ValueError, match=r"PoissonSampledDpEvent of GaussianDpEvent\(noise_mult"
                                         r".*pass that relation\) under REPLACE_ONE"):
        run[call]()
    laplace = dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(1.0))
    with pytest.raises(ValueError, match="of LaplaceDpEvent") as info:
        acc.zcdp_rho(dpa.ComposedDpEvent([inner, laplace]))
    assert "pass that relation" not in str(info.value)


def test_dp_accountings_warnings_are_quiet_unless_asked():
    import logging

    from algorithms import accounting as acc
    from dp_accounting.rdp import rdp_privacy_accountant as impl

    # A handler of our own on absl's logger, at WARNING for the test: other tests (and absl's
    # own set-up) may change the handlers and the level, and the filter under test sits on the
    # logger, before any handler.
    records: list[logging.LogRecord] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    absl_logger = logging.getLogger("absl")
    handler, level = _Keep(logging.WARNING), absl_logger.level
    absl_logger.addHandler(handler)
    absl_logger.setLevel(logging.WARNING)

    def warned() -> bool:
        records.clear()
        # a negative Rényi divergence, as a numerically extreme event produces
        impl.compute_epsilon([2.0, 4.0], [-1e-3, 0.1], 1e-5)
        return any("Negative Renyi" in r.getMessage() for r in records)

    try:
        assert not warned()
        acc.show_accounting_warnings(True)
        try:
            assert warned()
        finally:
            acc.show_accounting_warnings(False)
        assert not warned()
    finally:
        absl_logger.removeHandler(handler)
        absl_logger.setLevel(level)


# -- committed figures: an absent optional baseline is named in the figure --------------------

def test_a_figure_without_an_optional_baseline_names_the_extra(tmp_path, monkeypatch):
    import types

    import numpy as np

    from empirical.papers.real import plots as real_plots

    seen = {}
    monkeypatch.setattr(real_plots, "drawable", lambda analyses: True)
    monkeypatch.setattr(real_plots, "_verdicts", lambda a, width: "")

    def keep(fig, path):
        seen["text"] = " ".join(t.get_text() for t in fig.texts)
        return path
    monkeypatch.setattr(real_plots, "save_figure", keep)
    rng = np.random.default_rng(0)
    cols = {v: {"excess_fixed": rng.uniform(0.5, 1.0, 8)} for v in (1.0, 16.0, 256.0)}
    a = types.SimpleNamespace(columns=cols, experiment=types.SimpleNamespace(id="x"))
    series = [("excess_fixed", "fixed clip"), ("excess_diffprivlib", "diffprivlib (pure ε-DP)")]
    real_plots.plot_lines(a, tmp_path, "x", [(series, "excess", None)], xlabel="ε")
    assert "diffprivlib (pure ε-DP): not drawn, the optional extra [real]" in seen["text"]
    cols[1.0]["excess_diffprivlib"] = cols[16.0]["excess_diffprivlib"] = \
        cols[256.0]["excess_diffprivlib"] = rng.uniform(0.5, 1.0, 8)
    real_plots.plot_lines(a, tmp_path, "x", [(series, "excess", None)], xlabel="ε")
    assert "not drawn" not in seen["text"]


def test_a_cache_written_before_sealing_is_stale_not_corrupt(tmp_path, capsys):
    """Caches of the previous layout (format 1, no checksum) are recomputed silently and
    rewritten sealed: an upgrade is not a page of corruption warnings."""
    first = _analysed(tmp_path)
    path = analysis_cache.cache_path(_toy.TOY_FINDING, False, tmp_path)
    rec = json.loads(path.read_text())
    rec.pop("checksum")
    rec["format"] = 1
    path.write_text(json.dumps(rec))
    capsys.readouterr()
    again = _analysed(tmp_path)
    assert not again.analysis_cached and "corrupt" not in capsys.readouterr().err
    assert integrity.unseal(json.loads(path.read_text()))["format"] == analysis_cache.CACHE_FORMAT
    assert first.analysis.results[0].verdict == again.analysis.results[0].verdict


def test_a_resealed_analysis_with_a_wrong_type_is_corrupt(tmp_path, capsys):
    first = _analysed(tmp_path)
    path = analysis_cache.cache_path(_toy.TOY_FINDING, False, tmp_path)
    rec = json.loads(path.read_text())
    rec.pop("checksum")
    text = json.dumps(rec).replace('"verdict": "FINDING"', '"verdict": 1.5')
    path.write_text(json.dumps(integrity.seal(json.loads(text))))
    again = _analysed(tmp_path)
    assert not again.analysis_cached
    assert again.analysis.results[0].verdict == first.analysis.results[0].verdict
    assert "CheckResult.verdict must be str" in capsys.readouterr().err


def test_a_figure_cache_written_before_sealing_is_redrawn_silently(tmp_path):
    from empirical.report.cache import cached_bytes

    path = tmp_path / "figure-quick.cache"
    path.write_text(json.dumps({"key": "k", "png": base64.b64encode(b"old").decode()}))
    lines, say = _said()
    assert cached_bytes(path, "k", lambda: b"new", say=say) == b"new" and lines == []
    assert integrity.unseal(json.loads(path.read_text()))["key"] == "k"
