"""Stored results for the verification report: what was run, fitted and drawn, and where.

Collects each experiment's stored rows (never computing a point), its analysis, figure, audit
results and the environment; ``empirical.report`` renders them.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import importlib.metadata
import inspect
import os
import platform
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence


from bounds.core import papers
from empirical.core import experiment as registry
from empirical.store.analysis_cache import analysis_key, cached_analyse
from empirical.core.checks import Analysis, analyse
from empirical.core.experiment import Experiment
from empirical.store.integrity import parse_json
from empirical.report.cache import cached_bytes, figure_key
from empirical.run.runner import load_rows, point_key, results_dir
from bounds.core import paper_info, papers

__all__ = ["ExperimentState", "AuditView", "algorithm_keys", "collect", "environment"]

_REPO = Path(__file__).resolve().parents[2]
_NA = "—"

# ---------------------------------------------------------------------------------------------
# Collecting stored results
# ---------------------------------------------------------------------------------------------

@dataclass
class ExperimentState:
    """What the stored results say about one experiment (nothing is recomputed)."""

    experiment: Experiment
    rows: list[dict]
    missing: list[float]
    analysis: Analysis | None = None
    error: str = ""                       # analyse() raised: the page shows it, never hides it
    stored: tuple[float, float] | None = None   # mtimes of the stored point files
    notes: list[str] = field(default_factory=list)   # what the loader said (stale, corrupt)
    fingerprints: tuple[str, ...] = ()                 # code fingerprints of the stored points
    figure: bytes | None = None
    figure_error: str = ""
    full: bool = False                    # the grid the rows were loaded from

    @property
    def full_only_skipped(self) -> bool:
        """A full-grid-only experiment (``Experiment.full_only``) with no quick-grid rows:
        ``verify`` skips it on the quick grid by design."""
        return not self.full and bool(self.experiment.full_only) and not self.rows

    @property
    def status(self) -> str:
        """``not run``, ``partial`` (some grid points not stored) or ``complete``."""
        if not self.rows:
            return "not run"
        return "partial" if self.missing else "complete"

    @property
    def unrun_label(self) -> str:
        """``STALE`` when points are stored but by other code (the loader said so: they are
        recomputed by the next run, and meanwhile not analysed), ``FULL GRID ONLY`` for a
        full-grid-only experiment on the quick grid, else ``NOT RUN``."""
        if self.full_only_skipped:
            return "FULL GRID ONLY"
        return "STALE" if any("are stale" in n for n in self.notes) else "NOT RUN"

    def verdicts(self) -> list[tuple[str, str]]:
        """(bound, verdict) per declared check, also when no analysis exists."""
        exp = self.experiment
        a = self.analysis
        if a is not None and a.results:
            out = [(r.bound, r.verdict) for r in a.results]
        else:
            fallback = (self.unrun_label if not self.rows
                        else ("PARTIAL" if self.missing else "ERROR"))
            # a comparison experiment declares contrasts, not checks
            declared = [c.bound for c in exp.checks] or [c.name for c in
                                                         getattr(exp, "contrasts", ())]
            out = [(b, fallback) for b in declared]
        if a is not None and a.privacy_error:
            out = [(b, "PRIVACY FAIL") for b, _ in out]
        return out


def collect(paper: str | None = None, *, full: bool = False,
            results: str | os.PathLike | None = None,
            experiment_ids: Sequence[str] | None = None,
            errors: dict[str, str] | None = None) -> list[ExperimentState]:
    """Load and analyse the stored rows of every selected experiment (no sweep is run).

    A paper whose experiments module fails to import is skipped; its error goes into
    ``errors`` (paper -> message) so the page can say so.
    """
    if experiment_ids:
        exps = [registry.get(i) for i in experiment_ids]
        if paper is not None:
            exps = [e for e in exps if e.paper == paper]
    else:
        exps = []
        # every known paper: the five, then registered ones (the real-data pseudo-paper)
        for p in ([paper] if paper else list(papers())):
            try:
                exps += registry.experiments(p)
            except Exception as exc:  # one paper's broken module must not hide the others
                if errors is None:
                    raise
                errors[p] = f"{type(exc).__name__}: {exc}"
    root = results_dir(results)
    states = []
    for exp in exps:
        notes: list[str] = []
        rows, missing = _load(exp, full, root, notes.append)
        stored, prints = _stored_info(exp, full, root, missing)
        st = ExperimentState(exp, rows, missing, stored=stored, fingerprints=prints, notes=notes,
                             full=full)
        if rows:
            try:
                # the analysis `verify` cached beside these rows (same rows, same analysis
                # code), else a fresh one, then cached: the report refits nothing unchanged
                st.analysis, _ = cached_analyse(exp, rows, full=full, results=root)
            except Exception as exc:  # one broken experiment must not hide the others
                st.error = f"{type(exc).__name__}: {exc}"
        states.append(st)
    return states


def _load(exp: Experiment, full: bool, root: Path, say: Callable[[str], None]
          ) -> tuple[list[dict], list[float]]:
    # Newer runners report stale or corrupt stored points through ``progress``; the page shows
    # those messages instead of letting them scroll past on stderr.
    if "progress" in inspect.signature(load_rows).parameters:
        return load_rows(exp, full=full, results=root, progress=say)
    return load_rows(exp, full=full, results=root)


def _stored_info(exp: Experiment, full: bool, root: Path, missing: Sequence[float]
                 ) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """When the loaded points were stored (file times) and the code fingerprints they carry."""
    # Same layout as runner's storage: results/<paper>/<experiment>/<point_key>.json
    times, prints = [], set()
    for v in exp.grid(full):
        p = root / exp.paper / exp.id / f"{point_key(exp, exp.point(v))}.json"
        if v in missing or not p.exists():
            continue
        times.append(p.stat().st_mtime)
        try:
            fp = parse_json(p.read_bytes()).get("fingerprint")
        except (OSError, ValueError, AttributeError):
            fp = None
        if isinstance(fp, str):
            prints.add(fp)
    return ((min(times), max(times)) if times else None), tuple(sorted(prints))


def _draw_figures(states: list[ExperimentState], *, results: str | os.PathLike | None = None,
                  full: bool = False) -> dict[str, bytes | str]:
    """Draw each analysed experiment's figure (and the papers' summary figures) from the same
    analyses the tables show, so picture and numbers cannot disagree.  Returns the papers'
    summary figures: PNG bytes, or the error (str) that stopped one being drawn.

    With ``results`` (the directory the rows came from), each figure is read from its cache
    when the analysis it would be drawn from and the drawing code are unchanged
    (:mod:`empirical.report.cache`), and stored there when drawn."""
    from empirical.store.figures import plot_analysis

    keys = _analysis_keys(states, full) if results is not None else {}
    root = results_dir(results) if results is not None else None
    grid = "full" if full else "quick"
    summaries: dict[str, bytes | str] = {}
    with tempfile.TemporaryDirectory(prefix="dprates-report-") as tmp:
        for st in states:
            if st.analysis is None or st.analysis.fit is None:
                continue

            def draw(a=st.analysis) -> bytes:
                return Path(plot_analysis(a, tmp)).read_bytes()
            try:
                exp = st.experiment
                st.figure = (cached_bytes(root / exp.paper / exp.id / f"figure-{grid}.cache",
                                          figure_key([keys[exp.id]], [_FIGURE_CODE]), draw)
                             if exp.id in keys else draw())
            except Exception as exc:  # a plotting bug shows as a note, the report still renders
                st.figure_error = f"{type(exc).__name__}: {exc}"
        by_id = {st.experiment.id: st.analysis for st in states
                 if st.analysis is not None and not st.missing}
        for paper in sorted({st.experiment.paper for st in states}):
            for s in registry.summaries(paper):
                if all(e in by_id for e in s.experiments):
                    def draw_summary(s=s) -> bytes:
                        return Path(s.plot([by_id[e] for e in s.experiments], tmp)).read_bytes()
                    try:
                        if all(e in keys for e in s.experiments):
                            key = figure_key([keys[e] for e in s.experiments],
                                             [_FIGURE_CODE, _module_path(s.plot)])
                            summaries[s.id] = cached_bytes(
                                root / paper / f"summary-{s.id}-{grid}.cache", key, draw_summary)
                        else:
                            summaries[s.id] = draw_summary()
                    except Exception as exc:
                        summaries[s.id] = f"{type(exc).__name__}: {exc}"
    return summaries


_FIGURE_CODE = _REPO / "empirical" / "store" / "figures.py"


def cached_figure(exp: Experiment, rows: list[dict], draw: Callable[[], bytes], *,
                  full: bool = False, results: str | os.PathLike | None = None) -> bytes:
    """The figure of ``exp``'s analysis of exactly ``rows``: the report's cached PNG when the
    analysis and the drawing code are unchanged, else ``draw()`` (then cached).  A cache that
    cannot be read or written only costs a redraw."""
    try:
        key = figure_key([analysis_key(exp, rows, full)], [_FIGURE_CODE])
        grid = "full" if full else "quick"
        path = results_dir(results) / exp.paper / exp.id / f"figure-{grid}.cache"
    except Exception:  # a cache is never worth failing a run
        return draw()
    return cached_bytes(path, key, draw)


def remember_summary(summary, analysed: list[tuple[Experiment, list[dict]]], png: bytes, *,
                     full: bool = False, results: str | os.PathLike | None = None) -> None:
    """Store ``png`` (``summary.plot`` of the analyses of ``analysed``: each experiment with
    exactly the rows analysed, in ``summary.experiments``' order) as the report's cached summary
    figure, under the key :func:`_draw_figures` looks up.  Any failure only costs a redraw."""
    try:
        keys = [analysis_key(exp, rows, full) for exp, rows in analysed]
        key = figure_key(keys, [_FIGURE_CODE, _module_path(summary.plot)])
        grid = "full" if full else "quick"
        path = results_dir(results) / summary.paper / f"summary-{summary.id}-{grid}.cache"
        cached_bytes(path, key, lambda: png)
    except Exception:  # a cache is never worth failing a run
        pass


def _module_path(fn: Callable) -> Path:
    mod = inspect.getmodule(fn)
    return Path(getattr(mod, "__file__", "") or _FIGURE_CODE)


def _analysis_keys(states: list[ExperimentState], full: bool) -> dict[str, str]:
    """Experiment id -> the key its analysis is cached under (rows digest + analysis code)."""
    keys = {}
    for st in states:
        if st.analysis is not None and st.rows:
            try:
                keys[st.experiment.id] = analysis_key(st.experiment, st.rows, full)
            except Exception:  # no key, no cache: the figure is drawn
                pass
    return keys


# ---------------------------------------------------------------------------------------------
# Audits (stored by `dprates audit`, empirical/store/audit_store.py; the report never runs one)
# ---------------------------------------------------------------------------------------------

@dataclass
class AuditView:
    """Stored audits and which experiments' algorithms they audit.

    ``stored``: target name -> :class:`empirical.store.audit_store.StoredAudit`; ``by_experiment``:
    experiment id -> names of the stored *private* targets (controls are deliberately broken
    copies, not the algorithm) that audit its algorithm; ``registered``: target name -> paper
    of every registered target (empty if the registry could not be loaded), so the page can say
    "registered, not stored" apart from "not audited"; ``problems``: files that were skipped."""

    stored: dict = field(default_factory=dict)
    by_experiment: dict[str, list[str]] = field(default_factory=dict)
    registered: dict[str, str] = field(default_factory=dict)
    registered_by_experiment: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def for_paper(self, paper: str) -> list:
        return [a for _, a in sorted(self.stored.items()) if a.paper == paper]


_ALG_LABEL = re.compile(r"\bAlg(?:orithms?|s?\.)\s*(\d+(?:\s*(?:\+|,|and)\s*(?:Algorithm\s*)?\d+)*)")


def algorithm_keys(text: str, paper: str) -> frozenset[str]:
    """What an algorithm description names: the functions and classes of the paper's
    ``algorithms`` module it mentions (``dp_sgd_correlated``, ``AdaDPSpider``), and the paper's
    algorithm numbers ("Algorithm 3", "Alg. 1", "Algorithms 2 + 3" -> {"alg2", "alg3"}).

    Audit targets and experiments state their algorithm in free text; both are written from the
    same algorithm module, so its public names are the shared vocabulary.  A description that
    names a function is matched by the function only (its numbers may refer to sub-steps)."""
    names = _algorithm_names(paper)
    funcs = {w for w in re.findall(r"[A-Za-z_]\w*", text) if w in names}
    nums = {f"alg{n}" for m in _ALG_LABEL.finditer(text) for n in re.findall(r"\d+", m.group(1))}
    return frozenset(funcs | nums)


def _algorithm_names(paper: str) -> set[str]:
    # the modules the paper declares as its algorithms (bounds.register_paper(algorithms=...))
    return set().union(*(_module_algorithms(mod) for mod in paper_info(paper).algorithms))


def _module_algorithms(mod: str) -> set[str]:
    try:
        m = importlib.import_module(mod)
    except Exception:  # an unimportable algorithm module: fall back to algorithm numbers
        return set()
    public = getattr(m, "__all__", None)
    if public is not None:
        # a paper module split by algorithm re-exports its public names (defined elsewhere)
        # (callables of the project only: a typing alias such as an observer type is not one)
        top = m.__name__.partition(".")[0] + "."
        return {k for k in public if callable(v := getattr(m, k, None))
                and str(getattr(v, "__module__", "")).startswith(top)}
    return {k for k, v in vars(m).items() if not k.startswith("_") and callable(v)
            and getattr(v, "__module__", None) == m.__name__}


def _matches(target_text: str, exp: Experiment) -> bool:
    # A baseline (fixed clipping, no outlier removal) shares the function of the algorithm it is
    # a baseline of; its audit is not the algorithm's, nor the converse.
    if ("baseline" in target_text.lower()) != ("baseline" in exp.algorithm.lower()):
        return False
    t = algorithm_keys(target_text, exp.paper)
    e = algorithm_keys(exp.algorithm, exp.paper)
    t_funcs, e_funcs = {k for k in t if not k.startswith("alg")}, {k for k in e if not k.startswith("alg")}
    if t_funcs:
        return bool(t_funcs & e_funcs)
    return bool(t & e)


def _registered_targets() -> dict[str, tuple[str, str, str]]:
    """name -> (paper, algorithm text, expect) of every registered audit target."""
    audit = importlib.import_module("empirical.privacy.audit")
    return {t.name: (t.paper, t.algorithm, t.expect) for t in audit.targets()}


def _audits(states: list[ExperimentState], results: str | os.PathLike | None,
            registered: bool = True) -> AuditView:
    """Stored audit results and the experiments whose algorithm each private target audits."""
    view = AuditView()
    try:
        from empirical.store import audit_store

        view.stored = audit_store.load(results, view.problems)
    except Exception as exc:  # an optional module's failure must not take the report down
        view.problems.append(f"stored audits could not be read: {type(exc).__name__}: {exc}")
    regs: dict[str, tuple[str, str, str]] = {}
    if registered:
        try:
            regs = _registered_targets()
        except Exception as exc:
            view.problems.append(f"audit registry could not be loaded: {type(exc).__name__}: {exc}")
    view.registered = {k: v[0] for k, v in regs.items()}
    for st in states:
        exp = st.experiment
        if not exp.private:
            continue
        view.by_experiment[exp.id] = [
            k for k, a in sorted(view.stored.items())
            if a.paper == exp.paper and a.expect == "private" and _matches(a.algorithm, exp)]
        view.registered_by_experiment[exp.id] = [
            k for k, (paper, text, expect) in sorted(regs.items())
            if paper == exp.paper and expect == "private" and _matches(text, exp)]
    return view


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------

_PACKAGES = ("dprates", "numpy", "scipy", "sympy", "mpmath", "matplotlib", "dp-accounting",
             "dask", "distributed")


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=_REPO, capture_output=True, text=True,
                             timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def environment(full: bool, results: str | os.PathLike | None) -> dict[str, str]:
    """Versions, commit, grid and storage: what a reader needs to reproduce the page."""
    env = {"generated (UTC)": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M"),
           "python": f"{platform.python_version()} ({platform.python_implementation()})",
           "platform": platform.platform()}
    for pkg in _PACKAGES:
        try:
            env[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    commit = _git("rev-parse", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    env["git commit"] = (commit + (" (working tree modified)" if dirty else "")) if commit else "unknown"
    env["grid"] = "full" if full else "quick"
    env["results"] = str(results_dir(results).resolve())
    env["seeding"] = ("repetition r of point p of experiment e draws from "
                      "Generator(PCG64(SeedSequence([h(e), h(p), r])))")
    return env


def _fresh_cached(rows: list[dict]) -> str:
    """Fresh vs cached, if the rows carry a ``fresh`` or ``cached`` flag (runners that record
    it); otherwise say it is not recorded rather than guess."""
    if not rows:
        return _NA
    for key in ("fresh", "cached"):
        flags = [bool(r[key]) for r in rows if key in r]
        if flags:
            k = sum(flags) if key == "fresh" else len(flags) - sum(flags)
            return f"{k} rows fresh, {len(flags) - k} cached"
    return "not recorded in rows"


