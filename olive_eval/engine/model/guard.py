"""A failure kept to what it concerns: a metric that cannot score stops alone, and an error says what a user can
act on.

The pass (:mod:`olive_eval.engine.model.runner`) and each shard of a sharded pass (:mod:`olive_eval.engine.passes.shards`)
wrap every metric's scorer in :class:`Guarded`; what the failure then says is :func:`failure_message` (the
one-line error results.json records) and :func:`format_traceback` (the ``--debug`` traceback).
"""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig
from olive_eval.engine.passes.scored import Scored
from olive_eval.engine.passes.scoring import MetricScorer
from olive_eval.engine.passes.user_scoring import CustomScorer
from olive_eval.errors import EvaluationError, OliveEvalError, failure_location


def failure_message(exc: BaseException) -> str:
    """Our own errors carry a message a user can act on. Anything else is unforeseen (a bug of ours, or a
    library failing oddly): say what it is and where it was raised, so it can be found."""
    if isinstance(exc, OliveEvalError):
        return str(exc)
    lines = str(exc).strip().splitlines()
    where = failure_location(exc)
    return f"unexpected {type(exc).__name__}" + (f": {lines[0]}" if lines else "") + (f" (at {where})" if where else "")


def format_traceback(exc: BaseException) -> str:
    """The whole traceback of ``exc``, kept for ``--debug``."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def scoring_error(metric: MetricConfig, exc: Exception) -> Exception:
    """A metric kernel's complaint about the data (a ValueError) as the user's error, naming the metric."""
    if isinstance(exc, (ValueError, TypeError, IndexError)) and not isinstance(exc, OliveEvalError):
        error = EvaluationError(f"metric '{metric.name}' cannot score the model output: {exc}")
        error.__cause__ = exc
        return error
    return exc


class Guarded:
    """A metric's scorer in a pass: an error while it scores stops that metric, not the pass."""

    def __init__(self, metric: MetricConfig, scorer: MetricScorer | CustomScorer) -> None:
        self.metric, self.scorer = metric, scorer
        self.error: Exception | None = None

    def check_fields(self, available: list[str]) -> None:
        try:
            self.scorer.check_fields(available)
        except Exception as exc:
            self._stop(exc)

    def pass_reads(self) -> set[str]:
        return self.scorer.pass_reads()

    def update(self, fields: Any, start: int, cache: dict[Any, np.ndarray]) -> None:
        if self.error is None:
            try:
                self.scorer.update(fields, start, cache)
            except Exception as exc:
                self._stop(scoring_error(self.metric, exc))

    def takes_joined(self) -> bool:
        return isinstance(self.scorer, MetricScorer) and self.scorer.takes_joined()

    def update_joined(self, fields: Any, start: int, sizes: list[int], cache: dict[Any, np.ndarray]) -> None:
        """Consecutive batches joined in ``fields`` (see :mod:`olive_eval.engine.passes.held_batches`)."""
        if self.error is None:
            try:
                assert isinstance(self.scorer, MetricScorer)  # the pass asked ``takes_joined``
                self.scorer.update_joined(fields, start, sizes, cache)
            except Exception as exc:
                self._stop(scoring_error(self.metric, exc))

    def finish(self) -> list[Scored]:
        return self.scorer.finish()

    def statistics_so_far(self) -> dict[str, tuple[Any, np.ndarray]]:
        """The scorer's statistics so far by sub-type (none for a stopped metric or a user function's)."""
        if self.error is not None or not isinstance(self.scorer, MetricScorer):
            return {}
        return self.scorer.statistics_so_far()

    def discard(self) -> None:
        self.scorer.discard()

    def _stop(self, exc: Exception) -> None:
        self.error = exc
        self.scorer.discard()
