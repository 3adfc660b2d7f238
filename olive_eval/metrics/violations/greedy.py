"""The greedy one-to-one matching of the candidate pairs: highest score first, ties to the lower prediction, then
the lower ground truth; documents never interact.

:func:`greedy_order` is what :func:`.kernels.match` calls: every document in one C call (``_matching.greedy``: a
sort of each document's pairs and one walk) where the extension is built, else the numpy forms below. The numpy
forms run in rounds: a pair that is the first, in the (score, prediction, ground truth) order, of both its
prediction's and its ground truth's remaining pairs is exactly one the sequential greedy takes, so each round takes
all of those at once (at most min(predictions, ground truths) rounds).
"""

from __future__ import annotations

import numpy as np

from olive_eval.metrics.violations import native
from olive_eval.metrics.violations.inputs import Violations

__all__ = ["SMALL", "greedy_by_document", "greedy_match", "greedy_order"]

#: Documents whose greedy is at most this many cell visits (min(n_pred, n_truth) * n_pred * n_truth) go as arrays.
SMALL = 4096


def greedy_match(rows: np.ndarray, cols: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positions of the pairs the greedy takes (highest score first, ties to the lower row, then the lower column),
    one-to-one; ``rows``/``cols`` are ids unique across documents, so documents never interact."""
    order = np.lexsort((cols, rows, -scores))
    r, c = rows[order], cols[order]
    taken: list[np.ndarray] = []
    alive = np.arange(len(order))
    n_rows = int(r.max()) + 1 if len(r) else 0
    n_cols = int(c.max()) + 1 if len(c) else 0
    first_r = np.full(n_rows, len(order), dtype=np.int64)
    first_c = np.full(n_cols, len(order), dtype=np.int64)
    while len(alive):
        ra, ca = r[alive], c[alive]
        np.minimum.at(first_r, ra, alive)
        np.minimum.at(first_c, ca, alive)
        best = (first_r[ra] == alive) & (first_c[ca] == alive)
        taken.append(alive[best])
        first_r[ra[best]] = -1  # matched: every other pair of this row or column is out
        first_c[ca[best]] = -1
        keep = (first_r[ra] != -1) & (first_c[ca] != -1)
        alive = alive[keep]
        first_r[ra[keep]] = len(order)
        first_c[ca[keep]] = len(order)
    return np.sort(order[np.concatenate(taken)]) if taken else np.empty(0, dtype=np.int64)


def greedy_by_document(
    doc: np.ndarray, p: np.ndarray, g: np.ndarray, scores: np.ndarray, pred: Violations, truth: Violations
) -> np.ndarray:
    """:func:`greedy_match` for pairs listed by document: documents of one small shape (``n_pred x n_truth`` with
    ``min * n_pred * n_truth <= SMALL``) as one ``[documents, n_pred, n_truth]`` array, one best pair per document
    per step (``argmax`` takes the first of equal scores in C order: the lower prediction, then ground truth);
    the rest through :func:`greedy_match`. Positions of the pairs taken, sorted."""
    n_pred, n_truth = pred.counts[doc], truth.counts[doc]
    small = np.minimum(n_pred, n_truth) * n_pred * n_truth <= SMALL
    taken = [np.flatnonzero(~small)[greedy_match(p[~small], g[~small], scores[~small])]]
    where = np.flatnonzero(small)
    shape = n_pred[where] * (int(n_truth.max(initial=0)) + 1) + n_truth[where]
    kinds, inverse = np.unique(shape, return_inverse=True)
    for k in range(len(kinds)):
        sel = where[inverse.reshape(-1) == k]
        n_p, n_g = int(n_pred[sel[0]]), int(n_truth[sel[0]])
        docs, slot = np.unique(doc[sel], return_inverse=True)
        i, j = p[sel] - pred.offsets[doc[sel]], g[sel] - truth.offsets[doc[sel]]
        board = np.full((len(docs), n_p, n_g), -np.inf)
        board[slot, i, j] = scores[sel]
        owner = np.full((len(docs), n_p, n_g), -1, dtype=np.int64)
        owner[slot, i, j] = sel
        flat, every = board.reshape(len(docs), -1), np.arange(len(docs))
        for _ in range(min(n_p, n_g)):  # the whole board each step: no copy of the documents still open
            best = flat.argmax(axis=1)
            live = np.flatnonzero(flat[every, best] > -np.inf)
            if not len(live):
                break
            bi, bj = np.divmod(best[live], n_g)
            taken.append(owner[live, bi, bj])
            board[live, bi, :] = -np.inf
            board[live, :, bj] = -np.inf
    return np.sort(np.concatenate(taken))


def greedy_order(
    doc: np.ndarray, p: np.ndarray, g: np.ndarray, scores: np.ndarray, pred: Violations, truth: Violations
) -> np.ndarray:
    """Positions of the pairs the greedy takes (pairs listed by document), by document and within one in the order
    the greedy takes them; in C when the extension is built, else :func:`greedy_by_document`."""
    extension = native.matching_extension
    if extension is None:
        taken = greedy_by_document(doc, p, g, scores, pred, truth)
        return taken[np.lexsort((g[taken], p[taken], -scores[taken], doc[taken]))]
    firsts = np.searchsorted(doc, np.arange(len(pred.offsets)))
    as_int = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    out = extension.greedy(as_int(firsts), as_int(p), as_int(g), np.ascontiguousarray(scores, dtype=np.float64))
    return np.frombuffer(out, dtype=np.int64)
