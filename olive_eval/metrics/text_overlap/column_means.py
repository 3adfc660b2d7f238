"""Per-example scores computed together and reported apart: rows ``[score_1, ..., score_k, 1]`` per example.

Several sub-types read one pass over the texts (``shared_key``) and each reports the mean of its own column.
The rows are map/reduce statistics: a corpus or a bootstrap resample sums them and divides a column by the count
(the last column), so intervals and paired goals resample per-example scores without scoring text twice.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.text_overlap.references import pair_up, per_example
from olive_eval.strict_model import StrictModel

__all__ = ["ColumnMean"]


class ColumnMean(Metric):
    """One column of shared per-example rows, averaged over the examples; examples numbered across batches."""

    kind = Kind.MAP_REDUCE
    reads = ("prediction", "references")
    #: Which score this sub-type reports, and how many scores a row holds (the count comes after them).
    column: ClassVar[int]
    width: ClassVar[int]
    #: Sub-types with the same family share one pass over the texts.
    family: ClassVar[str]

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0

    def scores(self, predictions: list[str], references: list[list[str]], start: int) -> np.ndarray:
        """``[N, width]`` scores of the examples (numbered from ``start`` in errors)."""
        raise NotImplementedError

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        rows = np.ones((len(preds), self.width + 1))
        rows[:, : self.width] = self.scores(preds, per_example(answers), self._seen)
        self._seen += len(preds)
        return rows

    def shared_key(self) -> Any:
        return (self.family, *self.config.model_dump().items())

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.width + 1))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, dtype=np.float64).reshape(-1, self.width + 1)
        count = t[:, self.width]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, t[:, self.column] / count, np.nan)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        return np.asarray(statistics, dtype=np.float64).reshape(-1, self.width + 1)[:, self.column]

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=np.float64).reshape(-1, self.width + 1)
        if len(rows) == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return Score(float(rows[:, self.column].mean()))
