"""lm-evaluation-harness tasks as olive-eval metrics (``"type": "lm_eval"``).

lm-eval (the ``lm_eval`` extra) is the engine for tasks: its task files, filters, metrics, aggregations and stderr
are used as they are. olive-eval adds what Olive's ``LMEvaluator`` drops: every (task, metric, filter) is its own
sub-type with lm-eval's direction, its stderr becomes the sub-type's interval, per-sample results back paired
goals, nothing downloads unless the run allows it, and the task versions and hashes are recorded.

Modules: ``options`` (the metric's ``metric_config`` and the adapters' options, no lm-eval import),
``metric_type`` (the ``lm_eval`` metric type), ``names`` (sub-type names), ``tasks`` (finding and checking tasks
before any model loads), ``adapters`` (request types and the check that a model serves them), ``serving`` (what
each model type serves, and the lm-eval ``LM`` objects over olive-eval's loaded models), ``environment_report``
(lm-eval's machine description, skipped in a run). The run's side (planning
with the run; one lm-eval run and its results as scores and evidence) is :mod:`olive_eval.lm_eval_run`.
"""

from __future__ import annotations

from typing import Any

from olive_eval.errors import MissingDependencyError


def lm_eval_package() -> Any:
    """``lm_eval``, or a one-line error naming the extra to install."""
    try:
        import lm_eval
    except ImportError:
        raise MissingDependencyError("lm-eval", "an lm_eval metric", "lm_eval") from None
    return lm_eval
