"""dprates' experiment harness: the public face.

A paper declares its experiments with :class:`Experiment` and :class:`Check` and registers them
with :func:`register` (see docs/extending.md); everything else lives in rooms:

* ``empirical.core``: declarations, registry, validation, fitting and verdicts;
* ``empirical.store``: analyses, audits and figures on disk;
* ``empirical.run``: the point runner, its row store, the task queue and executors;
* ``empirical.privacy``: the privacy-audit harness and the mutation self-test;
* ``empirical.report``: the HTML page and docs/results.md;
* ``empirical.cli``: the ``dprates`` command;
* ``empirical.papers.<key>``: one unit per paper.
"""
import sys as _sys

from empirical.core import experiment as _experiment
from empirical.core.experiment import (FINDING_ON, PRIVACY_UNITS, Check, Experiment, Summary,
                                       experiments, get, ids, register, register_summary,
                                       summaries)
from empirical.core.validation import validate_experiment

from empirical.core import results as _results


def _analysis_html(analysis: "_results.Analysis") -> str:
    from empirical.report import analysis_repr_html

    return analysis_repr_html(analysis)


_results.HTML_REPR = _analysis_html

# Plugins written against the flat layout import ``empirical.core.experiment``: the same module.
_sys.modules.setdefault("empirical.core.experiment", _experiment)

__all__ = ["FINDING_ON", "PRIVACY_UNITS", "Check", "Experiment", "Summary", "experiments", "get",
           "ids", "register", "register_summary", "summaries", "validate_experiment"]
