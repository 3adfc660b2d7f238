"""Multi-label classification over lists of class names (``["cat", "dog"]`` per example), as Unitxt's
multi-label metrics take them: each list is binarized into one indicator row, so the existing multilabel
stat scores count it. Pure numpy and Python; no config objects.

Why a growing class order: a pass scores batch by batch, and a class may first appear in a later batch. The
order is kept on the metric across batches (the given ``class_names``, or every name seen so far in order of
first appearance), so column ``j`` means one class in every batch; an earlier, narrower batch is widened with
true negatives (its examples did not name the new class). Reports sort the inferred classes, as
scikit-learn's ``MultiLabelBinarizer`` does.

Statistics are ``[N, 1 + C, 4]``: column 0 is the exact-set match of the example (``tp`` = 1 when the
predicted set equals the reference set, else ``fn`` = 1) so subset accuracy survives resampling as a sum;
columns ``1..C`` are the multilabel ``(tp, fp, fn, tn)`` of each class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from olive_eval.metrics.base import Score
from olive_eval.metrics.classification import stat_scores as K

SUBSET = 0  # the statistics column holding the exact-set match


def _is_sequence(value: object) -> bool:
    return isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, (str, bytes))


def _examples(values: object) -> list[Any]:
    if isinstance(values, np.ndarray):
        return [values] if values.ndim == 0 else list(values)
    return list(values) if _is_sequence(values) else [values]


def looks_like_name_lists(*columns: object) -> bool:
    """Whether either column holds lists of class names (see :func:`is_name_list_column`)."""
    return any(is_name_list_column(c) for c in columns)


def is_name_list_column(values: object) -> bool:
    """True when the first non-empty list among the examples starts with a string (a class name), when every
    example is an empty list, or when the column is a 2-D array of strings. Reading only up to the first
    non-empty list keeps numeric columns (scores, indicator rows) cheap."""
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":
        # a batch of equal-length lists arrives as one array; [N, 0]: every list empty
        return values.ndim == 2 and (values.dtype.kind in "US" or values.size == 0)
    if not _is_sequence(values):
        return False
    rows = _examples(values)
    for row in rows:
        if not _is_sequence(row):
            return False
        items = _flat(row)
        if items:
            return isinstance(items[0], str)
    return bool(rows)


def _flat(value: Any) -> list[Any]:
    items = list(value)
    if len(items) == 1 and _is_sequence(items[0]):  # Unitxt's one reference wrapped in a list
        return list(items[0])
    return items


def name_sets(values: object, what: str, *, start: int = 0) -> list[frozenset[str]]:
    """One set of class names per example. A reference may be wrapped once (``[["cat", "dog"]]``, Unitxt's
    list of references holding one); more than one reference per example is an error."""
    rows = []
    for i, value in enumerate(_examples(values)):
        where = f"{what}: example {start + i}"
        if not _is_sequence(value):
            raise ValueError(f"{where} is {value!r:.40}, not a list of class names")
        items = list(value)
        if items and all(_is_sequence(x) for x in items):
            if len(items) != 1:
                raise ValueError(f"{where} holds {len(items)} lists; multi-label classification takes one per example")
            items = list(items[0])
        bad = next((x for x in items if not isinstance(x, str)), None)
        if bad is not None:
            raise ValueError(f"{where} holds {bad!r:.40}, not a class name (a string)")
        rows.append(frozenset(items))
    return rows


def extend_classes(order: list[str], rows: Sequence[frozenset[str]]) -> list[str]:
    """``order`` followed by the names of ``rows`` it lacks, sorted (a stable order across batches)."""
    known = set(order)
    return order + sorted({name for row in rows for name in row} - known)


def binarize(rows: Sequence[frozenset[str]], order: list[str]) -> np.ndarray:
    """``[N, C]`` booleans: example ``i`` names class ``order[j]``. Names outside ``order`` are dropped."""
    index = {name: j for j, name in enumerate(order)}
    out = np.zeros((len(rows), len(order)), bool)
    for i, row in enumerate(rows):
        out[i, [index[name] for name in row if name in index]] = True
    return out


def check_known(rows: Sequence[frozenset[str]], class_names: list[str], what: str, start: int) -> None:
    """Every reference name is one of ``class_names`` (a typo in the data is an error, not a new class)."""
    known = set(class_names)
    for i, row in enumerate(rows):
        unknown = sorted(row - known)
        if unknown:
            raise ValueError(f"{what}: example {start + i} names {unknown[0]!r}, not one of class_names")


def check_class_names(value: list[str] | None) -> list[str] | None:
    if value is not None and (not value or len(set(value)) != len(value)):
        raise ValueError("class_names must list at least one class, each once")
    return value


def name_list_statistics(
    predictions: object, references: object, order: list[str] | None, config: Any, start: int
) -> tuple[np.ndarray, list[str]]:
    """``[N, 1 + C, 4]`` statistics (see the module docstring) and the class order after this batch.

    With ``config.class_names`` the classes are exactly those (a predicted name outside them is dropped, as
    ``MultiLabelBinarizer(classes=class_names)`` drops it); without, every name of both columns is a class.
    ``config`` is the metric's classification config, checked for options that do not apply to name lists.
    """
    if config.task not in (None, "multilabel") or config.top_k > 1 or config.ignore_index is not None:
        raise ValueError(
            f"lists of class names are multilabel: task {config.task!r}, top_k and ignore_index do not apply"
        )
    if config.num_classes is not None or config.num_labels is not None:
        raise ValueError("lists of class names take class_names, not num_classes or num_labels")
    class_names, order = config.class_names, order or []
    preds, refs = name_sets(predictions, "predictions", start=start), name_sets(references, "references", start=start)
    if len(preds) != len(refs):
        raise ValueError(f"predictions and references hold different numbers of examples: {len(preds)} vs {len(refs)}")
    if class_names is not None:
        check_known(refs, class_names, "references", start)
        order = list(class_names)
    else:
        order = extend_classes(order, [*refs, *preds])
    p, t = binarize(preds, order), binarize(refs, order)
    per_class = K.stat_scores(p.astype(np.int8), t.astype(np.int8), task="multilabel", start=start)
    exact = (p == t).all(axis=1)
    subset = np.zeros((len(preds), 1, 4), np.int8)
    subset[:, 0, 0], subset[:, 0, 2] = exact, ~exact
    return np.concatenate([subset, per_class.reshape(len(preds), len(order), 4)], axis=1), order


def widen(part: np.ndarray, width: int) -> np.ndarray:
    """A batch's statistics widened to ``width`` columns: its examples are true negatives of the added classes."""
    if part.shape[1] >= width:
        return part
    extra = np.zeros((len(part), width - part.shape[1], 4), dtype=part.dtype)
    extra[..., K.TN] = 1
    return np.concatenate([part, extra], axis=1)


def report_order(order: list[str], class_names: list[str] | None) -> np.ndarray:
    """Indices of the class columns in reporting order: ``class_names`` as given, else sorted names."""
    return np.arange(len(order)) if class_names is not None else np.argsort(np.array(order, dtype=object))


def reduce_totals(totals: np.ndarray, stat: K.StatName, average: K.Average) -> np.ndarray:
    """The metric for each of ``B`` summed statistics ``[B, 1 + C, 4]``: accuracy is subset accuracy (the
    exact-set column), the others count the class columns as multilabel (``none`` gives the macro value)."""
    totals = np.asarray(totals, dtype=np.float64)
    if stat == "accuracy":
        return K.safe_divide(totals[:, SUBSET, K.TP], totals[:, SUBSET, K.TP] + totals[:, SUBSET, K.FN])
    return K.reduce_totals_batch(totals[:, 1:], stat, average, task="multilabel")


def reduce_name_lists(
    statistics: np.ndarray, stat: K.StatName, average: K.Average, order: list[str], config: Any
) -> Score:
    """The metric over ``[N, 1 + C, 4]`` statistics; with ``none``, ``details["per_class"]`` names each value."""
    totals = np.asarray(statistics).sum(axis=0, dtype=np.int64)
    extra = {"task": "multilabel"}
    if stat == "accuracy":
        return Score(float(reduce_totals(totals[None], stat, average)[0]), extra=extra)
    if not order:
        return Score(float("nan"), undefined="no class names in the predictions or the references", extra=extra)
    columns = report_order(order, config.class_names)
    classes = totals[1:][columns]
    if average != "none":
        return Score(float(K.reduce_stat_scores(classes, stat, average, task="multilabel")), extra=extra)
    per_class = K.reduce_stat_scores(classes, stat, "none", task="multilabel")
    macro = K.reduce_stat_scores(classes, stat, "macro", task="multilabel")
    values = [float(v) for v in per_class]
    named = {"per_class": {order[j]: v for j, v in zip(columns, values, strict=True)}}
    return Score(float(macro), per_class=values, extra=extra, details=named)
