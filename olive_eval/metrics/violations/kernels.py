"""Violation matching, pure: span IoU, pairwise similarities, the weighted score and greedy one-to-one matching.

Every pair (prediction, ground truth) of a document is a potential match. Its parts: the IoU of the two spans'
character positions, the similarity of the rules, category equality, and the similarity of the explanations
and of the corrections; its score is their weighted sum. A pair can match when IoU > ``overlap``, rule
similarity > ``rule`` and score > ``match`` (all strict, as the seed). Among those, the greedy takes the pair
with the highest score, matches it, removes its prediction and ground truth, and repeats. Ties are broken by
the lower prediction index, then the lower ground-truth index (positions in each document's lists).

Work is done for a whole batch at once: pairs are flat arrays across documents. Parts are computed only for
pairs still able to match (a pair with no overlap never needs its rule similarity), strings are compared once per
distinct pair of strings (each row coded to its distinct string once), and the greedy is :mod:`.greedy`'s. The
overlaps, the codes and the greedy each run as one C call over all documents where the optional extension
``_matching.c`` is built (:mod:`.native`), else as numpy over the flat arrays; both give identical pairs and values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics.violations import native
from olive_eval.metrics.violations.greedy import greedy_order
from olive_eval.metrics.violations.inputs import Violations

__all__ = [
    "PARTS",
    "Matching",
    "PairSimilarity",
    "Thresholds",
    "match",
    "overlapping_pairs",
    "rapidfuzz_similarity",
    "span_iou",
]

#: The parts of a match score, in the order of a weights vector and of ``Matching.parts``' columns.
PARTS = ("text", "rule", "category", "explanation", "correction")

#: ``similarity(a, b, ia, ib)``: the similarity of ``a[ia[k]]`` and ``b[ib[k]]`` for each k (float64 ``[k]``);
#: ``a`` and ``b`` hold distinct strings where strings repeat (see :func:`_codes`), and may hold strings no pair uses.
PairSimilarity = Callable[[list[str], list[str], np.ndarray, np.ndarray], np.ndarray]

#: Strings are deduplicated when the first ``DEDUPE_SAMPLE`` rows asked about hold at most this share of distinct ones.
DEDUPE_SAMPLE, DEDUPE_RATIO = 1000, 0.2
#: Free text is compared a document at a time (a matrix per document) when the pairs asked about are more than this
#: share of those documents' pairs, else pair by pair.
DENSE = 0.35


@dataclass(frozen=True)
class Thresholds:
    """A pair can match only above all three (strictly)."""

    overlap: float = 0.0
    rule: float = 0.01
    match: float = 0.5


@dataclass
class Matching:
    """The outcome for a batch of documents.

    ``counts``: ``[documents, 4]`` float64 rows ``tp, fp, fn, score_sum`` (the sum of the matched pairs' scores).
    The matched pairs, in the greedy's order within each document: ``doc``, ``pred`` and ``truth`` (indices in the
    document's lists), ``score``, and ``parts`` ``[pairs, 5]`` (columns :data:`PARTS`; NaN for a part with weight 0).
    """

    counts: np.ndarray
    doc: np.ndarray
    pred: np.ndarray
    truth: np.ndarray
    score: np.ndarray
    parts: np.ndarray


def span_iou(start_a: np.ndarray, end_a: np.ndarray, start_b: np.ndarray, end_b: np.ndarray) -> np.ndarray:
    """Element-wise (broadcast) IoU of character ranges ``[start, end)``: intersection / union; 0 for an empty union."""
    inter = np.maximum(np.minimum(end_a, end_b) - np.maximum(start_a, start_b), 0)
    union = (end_a - start_a) + (end_b - start_b) - inter
    return np.divide(inter, union, out=np.zeros(np.shape(inter), dtype=np.float64), where=union > 0)


def overlapping_pairs(
    pred: Violations, truth: Violations, above: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (prediction, ground truth) of each document whose span IoU is above ``above``: ``doc``,
    both rows in the flat arrays, and the IoU; ordered by document, then prediction, then ground truth.

    In C where the extension is built; else every pair of every document at once on flat arrays (each pair's
    document from the offsets), the IoU divided only where the spans intersect (elsewhere it is 0, never above)."""
    extension = native.matching_extension
    if extension is not None:
        as_int = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
        out = extension.overlaps(
            *(as_int(a) for a in (pred.offsets, pred.starts, pred.ends, truth.offsets, truth.starts, truth.ends)),
            float(above),
        )
        return tuple(np.frombuffer(b, dtype=t) for b, t in zip(out, (np.int64,) * 3 + (np.float64,), strict=True))
    n_pred, n_truth = pred.counts, truth.counts
    per_doc = n_pred * n_truth
    first = np.concatenate([[0], np.cumsum(per_doc)])
    doc = np.repeat(np.arange(len(per_doc)), per_doc)
    local = np.arange(first[-1]) - first[doc]
    width = n_truth[doc]
    p = pred.offsets[doc] + local // np.maximum(width, 1)
    g = truth.offsets[doc] + local % np.maximum(width, 1)
    s1, e1, s2, e2 = pred.starts[p], pred.ends[p], truth.starts[g], truth.ends[g]
    inter = np.minimum(e1, e2) - np.maximum(s1, s2)
    hit = np.flatnonzero(inter > 0) if above >= 0 else np.arange(len(doc))
    iou = span_iou(s1[hit], e1[hit], s2[hit], e2[hit])
    keep = iou > above
    hit = hit[keep]
    return doc[hit], p[hit], g[hit], iou[keep]


def _codes(values: list[str], rows: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Strings to compare for ``values[rows]``, and each row's position among them (-1 for rows not asked about).

    When a sample of the rows asked about repeats its strings (rules, categories: a few distinct values), the
    distinct strings, each hashed once, so a backend compares each distinct pair once; else (free text) the
    values as they are, with no hashing at all."""
    used = np.zeros(len(values), dtype=bool)
    used[rows] = True
    wanted = np.flatnonzero(used)
    sample = wanted[:DEDUPE_SAMPLE].tolist()
    if len({values[i] for i in sample}) > DEDUPE_RATIO * len(sample):
        return values, np.arange(len(values))
    extension = native.matching_extension
    if extension is not None and type(values) is list:
        distinct, codes = extension.codes(values, wanted)
        return distinct, np.frombuffer(codes, dtype=np.int64)
    strings = list(map(values.__getitem__, wanted.tolist()))
    distinct = list(dict.fromkeys(strings))
    index = {text: k for k, text in enumerate(distinct)}
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[wanted] = np.fromiter(map(index.__getitem__, strings), dtype=np.int64, count=len(strings))
    return distinct, codes


def rapidfuzz_similarity(scorer: Callable[..., float], scale: float, processor: Callable[[str], str] | None = None):
    """A :data:`PairSimilarity` from a rapidfuzz scorer whose values divided by ``scale`` lie in [0, 1]: the matrix
    of the distinct strings (``process.cdist``) when it is no bigger than the pairs, else only the pairs
    (``process.cpdist``)."""
    from rapidfuzz import process

    def similarity(a: list[str], b: list[str], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        if not len(ia):
            return np.empty(0)
        if len(a) * len(b) <= len(ia):
            matrix = process.cdist(a, b, scorer=scorer, processor=processor, dtype=np.float64)
            values = matrix[ia, ib]
        else:
            values = process.cpdist(
                np.array(a, dtype=object)[ia].tolist(),
                np.array(b, dtype=object)[ib].tolist(),
                scorer=scorer,
                processor=processor,
                dtype=np.float64,
            )
        return values / scale if scale != 1 else values

    def matrix(a: list[str], b: list[str]) -> np.ndarray:
        values = process.cdist(a, b, scorer=scorer, processor=processor, dtype=np.float64)
        return values / scale if scale != 1 else values

    similarity.matrix = matrix  # type: ignore[attr-defined]
    return similarity


def _per_document(
    matrix: Callable[[list[str], list[str]], np.ndarray],
    pred: Violations,
    truth: Violations,
    field: str,
    doc: np.ndarray,
    p: np.ndarray,
    g: np.ndarray,
) -> np.ndarray:
    """``matrix`` of each document's strings (``doc`` sorted), gathered at the pairs ``(p, g)``: one C call per
    document over all its pairs, cheaper than pair by pair when most pairs are asked about."""
    cut = np.flatnonzero(np.diff(doc)) + 1
    firsts = np.concatenate([[0], cut]) if len(doc) else np.empty(0, dtype=np.int64)
    a, b = pred.texts[field], truth.texts[field]
    blocks, base, size = [], np.zeros(len(firsts), dtype=np.int64), 0
    for k, d in enumerate(doc[firsts].tolist()):
        ps, pe, gs, ge = pred.offsets[d], pred.offsets[d + 1], truth.offsets[d], truth.offsets[d + 1]
        block = matrix(a[ps:pe], b[gs:ge])
        blocks.append(block.reshape(-1))
        base[k] = size
        size += block.size
    owner = np.repeat(np.arange(len(firsts)), np.diff(np.append(firsts, len(doc))))
    width = truth.counts[doc]
    flat = base[owner] + (p - pred.offsets[doc]) * width + (g - truth.offsets[doc])
    return np.concatenate(blocks)[flat] if blocks else np.empty(0)


def _text_part(
    pred: Violations,
    truth: Violations,
    field: str,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    similarity: PairSimilarity | None,
) -> np.ndarray:
    """One string part for the pairs ``(doc, p, g)``: ``similarity``, or exact equality when it is None."""
    doc, p, g = pairs
    a, ca = _codes(pred.texts[field], p)
    b, cb = _codes(truth.texts[field], g)
    if similarity is None:
        # One id per distinct string over both sides: ``a`` and ``b`` may repeat a string (when not deduplicated),
        # and every copy must get the same id.
        ids: dict[str, int] = {}
        id_a = np.fromiter((ids.setdefault(s, len(ids)) for s in a), dtype=np.int64, count=len(a))
        id_b = np.fromiter((ids.setdefault(s, len(ids)) for s in b), dtype=np.int64, count=len(b))
        return (id_a[ca[p]] == id_b[cb[g]]).astype(np.float64)
    matrix = getattr(similarity, "matrix", None)
    if matrix is not None and a is pred.texts[field] and len(doc):
        docs = np.unique(doc)
        if len(doc) > DENSE * float((pred.counts[docs] * truth.counts[docs]).sum()):
            return _per_document(matrix, pred, truth, field, doc, p, g)
    return np.asarray(similarity(a, b, ca[p], cb[g]), dtype=np.float64)


def match(
    pred: Violations,
    truth: Violations,
    weights: np.ndarray,
    thresholds: Thresholds,
    similarity: PairSimilarity,
) -> Matching:
    """Match each document's predictions to its ground truths (see the module docstring)."""
    weights = np.asarray(weights, dtype=np.float64)
    doc, p, g, iou = overlapping_pairs(pred, truth, thresholds.overlap)
    rule = _text_part(pred, truth, "rule", (doc, p, g), similarity)
    keep = rule > thresholds.rule
    if not keep.all():  # often every overlapping pair's rules are alike: no copies then
        doc, p, g, iou, rule = doc[keep], p[keep], g[keep], iou[keep], rule[keep]
    columns = {0: iou, 1: rule}  # text and rule always, the others where they weigh
    for k, name in enumerate(PARTS[2:], start=2):
        if weights[k] != 0:
            scorer = None if name == "category" else similarity
            columns[k] = _text_part(pred, truth, name, (doc, p, g), scorer)
    used = np.flatnonzero(weights != 0)
    score = np.stack([columns[k] for k in used.tolist()], axis=1) @ weights[used] if len(doc) else np.empty(0)
    above = score > thresholds.match
    if above.all():
        chosen = greedy_order(doc, p, g, score, pred, truth)  # by document, then in the greedy's order
    else:
        keep = np.flatnonzero(above)
        chosen = keep[greedy_order(doc[keep], p[keep], g[keep], score[keep], pred, truth)]
    doc, score = doc[chosen], score[chosen]
    parts = np.full((len(chosen), len(PARTS)), np.nan)
    for k, column in columns.items():
        parts[:, k] = column[chosen]
    n_docs = len(pred.offsets) - 1
    tp = np.bincount(doc, minlength=n_docs).astype(np.float64)
    counts = np.stack([tp, pred.counts - tp, truth.counts - tp, np.bincount(doc, weights=score, minlength=n_docs)], 1)
    return Matching(
        counts=counts,
        doc=doc,
        pred=p[chosen] - pred.offsets[doc],
        truth=g[chosen] - truth.offsets[doc],
        score=score,
        parts=parts,
    )
