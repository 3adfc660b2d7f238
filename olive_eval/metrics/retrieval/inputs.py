"""Ranking inputs at the edge: each query's scored candidates and their relevance grades, as padded arrays.

Two shapes, the same in every query of a column:

* **lists**: the prediction is a score per candidate (a list, or a row of a ``[queries, candidates]`` array),
  the reference a relevance grade per candidate, in the same order (a reranker scoring a query's passages, an
  embedding model's query-passage similarities);
* **dicts**: the prediction maps doc id to score (a run), the reference maps doc id to grade (qrels). A judged
  document the model did not score is relevant but never retrieved; a scored one nobody judged has grade 0. A
  value of ``None`` means the key is absent: a JSON lines file's dict column comes back with every row's keys.

Every error is one line naming the metric and the query, numbered from ``start`` (a batch's first query).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Rankings:
    """Padded ``[queries, candidates]`` scores (``-inf`` past a query's candidates) and grades (0 there), and the
    ``[queries, judged]`` grades of every judged document (the ideal ranking, the relevant counts)."""

    scores: np.ndarray
    grades: np.ndarray
    judged: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


def _shown(value: object) -> str:
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_dicts(column: Any) -> bool:
    return len(column) > 0 and isinstance(column[0], Mapping)


def rankings(predictions: Any, references: Any, metric: str, start: int = 0) -> Rankings:
    """The queries of a column pair as :class:`Rankings`; a ValueError of one line on bad input."""
    if references is None:
        raise ValueError(
            f"{metric} needs relevance grades: give the data config a label_col holding, per query, a grade per "
            "candidate (a list) or a dict doc id -> grade"
        )
    if len(predictions) != len(references):
        raise ValueError(f"{metric}: {len(predictions)} predictions but {len(references)} references")
    if not len(predictions):
        return Rankings(np.empty((0, 0)), np.empty((0, 0)), np.empty((0, 0)))
    score_dicts, grade_dicts = _is_dicts(predictions), _is_dicts(references)
    if score_dicts != grade_dicts:
        given = ("a dict of scores", "a list of grades") if score_dicts else ("a list of scores", "a dict of grades")
        raise ValueError(
            f"{metric}: query {start} has {given[0]} but {given[1]}; give both as lists aligned by candidate, "
            "or both as dicts keyed by doc id"
        )
    if score_dicts:
        return _from_dicts(predictions, references, metric, start)
    return _from_lists(predictions, references, metric, start)


def _dense(column: Any) -> np.ndarray | None:
    """A ``[queries, candidates]`` float array when the column is one, else None (ragged, or not all numbers)."""
    if isinstance(column, np.ndarray) and column.dtype != object:
        return column.astype(np.float64, copy=False) if column.ndim == 2 else None
    try:
        array = np.asarray(column, dtype=np.float64)
    except (TypeError, ValueError):  # ragged rows, or something that is not a number
        return None
    return array if array.ndim == 2 else None


def _row(value: Any, what: str, metric: str, query: int) -> np.ndarray:
    """One query's scores or grades as a 1-D float array."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(
            f"{metric}: query {query} has {_shown(value)} for its {what}; expected a list with one number per candidate"
        )
    try:
        row = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        bad = next((v for v in value if not isinstance(v, Real)), value)
        raise ValueError(f"{metric}: query {query} has {_shown(bad)} among its {what}; expected numbers") from None
    if row.ndim != 1:
        raise ValueError(f"{metric}: query {query} has {what} of shape {list(row.shape)}; expected one number each")
    return row


def _pad(rows: list[np.ndarray], fill: float) -> np.ndarray:
    lengths = np.array([len(r) for r in rows], dtype=np.intp)
    out = np.full((len(rows), int(lengths.max(initial=0))), fill, dtype=np.float64)
    out[np.arange(out.shape[1]) < lengths[:, None]] = np.concatenate(rows) if rows else []
    return out


def _from_lists(predictions: Any, references: Any, metric: str, start: int) -> Rankings:
    scores, grades = _dense(predictions), _dense(references)
    if scores is None or grades is None or scores.shape != grades.shape:
        score_rows = [_row(v, "scores", metric, start + i) for i, v in enumerate(predictions)]
        grade_rows = [_row(v, "relevance grades", metric, start + i) for i, v in enumerate(references)]
        for i, (s, g) in enumerate(zip(score_rows, grade_rows, strict=True)):
            if len(s) != len(g):
                raise ValueError(
                    f"{metric}: query {start + i} has {len(s)} candidate scores but {len(g)} relevance grades; give "
                    "one grade per candidate, in the same order"
                )
        scores, grades = _pad(score_rows, -np.inf), _pad(grade_rows, 0.0)
    _check_finite(scores, grades, metric, start)
    return Rankings(scores, grades, grades)


def _check_finite(scores: np.ndarray, grades: np.ndarray, metric: str, start: int) -> None:
    """Scores may be infinite (padding is ``-inf``) but not NaN; grades are finite."""
    for values, what, bad in ((scores, "score", np.isnan(scores)), (grades, "relevance grade", ~np.isfinite(grades))):
        if bad.any():
            query, position = np.argwhere(bad)[0]
            raise ValueError(
                f"{metric}: query {start + query} has a {what} of {_shown(values[query, position])} at candidate "
                f"{position}; {'scores' if what == 'score' else 'grades'} must be numbers"
            )


def _kept(mapping: Any, what: str, metric: str, query: int, allow_infinite: bool) -> dict[Any, float]:
    """A query's dict without its ``None`` values, every value a number (NaN never, infinity only for scores)."""
    if not isinstance(mapping, Mapping):
        raise ValueError(
            f"{metric}: query {query} has {_shown(mapping)} for its {what}; expected a dict doc id -> number"
        )
    kept = {}
    for key, value in mapping.items():
        if value is None:
            continue
        number = float(value) if isinstance(value, Real) else math.nan
        if math.isnan(number) or (math.isinf(number) and not allow_infinite):
            raise ValueError(
                f"{metric}: query {query} has {_shown(value)} for doc {key!r} among its {what}; expected a number"
            )
        kept[key] = number
    return kept


def _from_dicts(predictions: Any, references: Any, metric: str, start: int) -> Rankings:
    score_rows, grade_rows, judged_rows = [], [], []
    for i, (run, qrels) in enumerate(zip(predictions, references, strict=True)):
        scored = _kept(run, "scores", metric, start + i, allow_infinite=True)
        judged = _kept(qrels, "relevance grades", metric, start + i, allow_infinite=False)
        score_rows.append(np.fromiter(scored.values(), np.float64, len(scored)))
        grade_rows.append(np.fromiter((judged.get(doc, 0.0) for doc in scored), np.float64, len(scored)))
        judged_rows.append(np.fromiter(judged.values(), np.float64, len(judged)))
    return Rankings(_pad(score_rows, -np.inf), _pad(grade_rows, 0.0), _pad(judged_rows, 0.0))
