"""Ranking measures as pure numpy over padded ``[queries, candidates]`` arrays: one value per query.

Every kernel takes ``scores`` (a row per query, padded with ``-inf`` past a query's own candidates) and the
relevance ``grades`` aligned with them (padded with 0), plus ``judged``: the grades of every judged document of
each query (padded with 0), which set the ideal ranking and the number of relevant documents. For candidate
lists with a grade per candidate ``judged`` is ``grades`` itself; for dicts keyed by doc id it also holds the
judged documents the model did not score (relevant, never retrieved).

Conventions (those of trec_eval and ranx, where they agree; see docs/retrieval.md):

* higher scores rank first; **equal scores keep the candidates' order** (the first given ranks first);
* a document is relevant for the binary measures when its grade is at least ``relevance_level``;
* nDCG's gain is the grade (``linear``) or ``2**grade - 1`` (``exponential``), grades below 0 counting 0, and the
  discount ``1 / log2(rank + 1)``; the ideal DCG ranks the judged grades best first;
* a query with no relevant (or no positive) judged document scores 0;
* ``k`` beyond a query's candidates counts the candidates it has; precision still divides by ``k``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Gain = Literal["linear", "exponential"]


def top_ranked(scores: np.ndarray, depth: int | None) -> np.ndarray:
    """Column indices of each row's ``depth`` highest scores, best first; equal scores keep their column order.

    Only the top ``depth`` is sorted when it is a small part of the row (a partition picks it); ``None``: the whole
    row. numpy's fast sorts and partitions order ties arbitrarily, so the rows where a tie could change the result
    are done again exactly, and only those.
    """
    n, width = scores.shape
    depth = width if depth is None else min(depth, width)
    if depth == 0:
        return np.empty((n, 0), np.intp)
    if 4 * depth >= width:
        return _sorted_columns(scores)[:, :depth]
    columns = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
    cut = np.take_along_axis(scores, columns, axis=1).min(axis=1, keepdims=True)
    tied_at_cut = np.flatnonzero((scores >= cut).sum(axis=1) > depth)  # which tied columns make the cut matters
    if len(tied_at_cut):
        columns[tied_at_cut] = _first_at_cut(scores[tied_at_cut], depth)
    columns.sort(axis=1)  # column order, so that the stable sort below keeps ties in it
    order = np.argsort(-np.take_along_axis(scores, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, order, axis=1)


def _first_at_cut(scores: np.ndarray, depth: int) -> np.ndarray:
    """The columns of each row's ``depth`` highest scores, in column order: every one above the ``depth``-th highest
    score and, of those equal to it, the first ones (as many as are still wanted)."""
    threshold = -np.partition(-scores, depth - 1, axis=1)[:, depth - 1 : depth]
    above = scores > threshold
    tied = scores == threshold
    wanted = depth - above.sum(axis=1, keepdims=True)
    kept = above | (tied & (np.cumsum(tied, axis=1) <= wanted))
    return np.nonzero(kept)[1].reshape(len(scores), depth)


def _sorted_columns(scores: np.ndarray) -> np.ndarray:
    """Each row's columns by descending score, ties in column order. numpy's quicksort is three times faster than
    its stable sort but orders ties arbitrarily: only the rows where it met a tie are sorted again, stably."""
    order = np.argsort(-scores, axis=1)
    ranked = np.take_along_axis(scores, order, axis=1)
    tied = np.flatnonzero((ranked[:, 1:] == ranked[:, :-1]).any(axis=1))
    if len(tied):
        order[tied] = np.argsort(-scores[tied], axis=1, kind="stable")
    return order


def ranked_grades(scores: np.ndarray, grades: np.ndarray, depth: int | None) -> np.ndarray:
    """The grades of each query's top ``depth`` candidates in rank order ``[queries, min(depth, candidates)]``."""
    return np.take_along_axis(grades, top_ranked(scores, depth), axis=1)


def _discount(depth: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def _gains(grades: np.ndarray, gain: Gain) -> np.ndarray:
    positive = np.maximum(grades, 0.0)
    return np.exp2(positive) - 1.0 if gain == "exponential" else positive


def _best_first(judged: np.ndarray, depth: int | None) -> np.ndarray:
    """Each row's ``depth`` highest grades, highest first: the ideal ranking."""
    width = judged.shape[1]
    depth = width if depth is None else min(depth, width)
    if depth < width:
        judged = -np.partition(-judged, depth - 1, axis=1)[:, :depth]
    return -np.sort(-judged, axis=1)[:, :depth]


def dcg(ranked: np.ndarray, gain: Gain = "linear") -> np.ndarray:
    """Discounted cumulative gain of grades in rank order."""
    return _gains(ranked, gain) @ _discount(ranked.shape[1])


def ndcg(
    scores: np.ndarray, grades: np.ndarray, judged: np.ndarray, k: int | None = None, gain: Gain = "linear"
) -> np.ndarray:
    """DCG of the model's top ``k`` over the DCG of the ideal top ``k``; 0 where the ideal is 0."""
    found = dcg(ranked_grades(scores, grades, k), gain)
    ideal = dcg(_best_first(judged, k), gain)
    return np.divide(found, ideal, out=np.zeros_like(found), where=ideal > 0)


def relevant_count(judged: np.ndarray, relevance_level: float) -> np.ndarray:
    return (judged >= relevance_level).sum(axis=1)


def reciprocal_rank(scores: np.ndarray, grades: np.ndarray, k: int | None, relevance_level: float) -> np.ndarray:
    """1 / the rank of the first relevant candidate within the top ``k``; 0 when none is."""
    hits = ranked_grades(scores, grades, k) >= relevance_level
    first = np.argmax(hits, axis=1)
    return np.where(hits.any(axis=1), 1.0 / (first + 1.0), 0.0)


def precision_at_k(scores: np.ndarray, grades: np.ndarray, k: int, relevance_level: float) -> np.ndarray:
    """Relevant candidates among the top ``k``, over ``k`` (even where a query has fewer candidates)."""
    hits = ranked_grades(scores, grades, k) >= relevance_level
    return hits.sum(axis=1) / float(k)


def recall_at_k(
    scores: np.ndarray, grades: np.ndarray, judged: np.ndarray, k: int, relevance_level: float
) -> np.ndarray:
    """Relevant candidates among the top ``k``, over the query's relevant judged documents (0 when none)."""
    hits = (ranked_grades(scores, grades, k) >= relevance_level).sum(axis=1)
    relevant = relevant_count(judged, relevance_level)
    return np.divide(hits, relevant, out=np.zeros(len(hits)), where=relevant > 0)


def average_precision_at_k(
    scores: np.ndarray, grades: np.ndarray, judged: np.ndarray, k: int, relevance_level: float
) -> np.ndarray:
    """The precision at each relevant rank within the top ``k``, summed over the query's relevant judged
    documents (trec_eval's ``map_cut``, ranx's ``map@k``): a relevant document never ranked adds 0."""
    hits = ranked_grades(scores, grades, k) >= relevance_level
    precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    total = (precision * hits).sum(axis=1)
    relevant = relevant_count(judged, relevance_level)
    return np.divide(total, relevant, out=np.zeros(len(total)), where=relevant > 0)
