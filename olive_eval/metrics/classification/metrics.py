"""Classification metrics (Olive's ``accuracy`` type): accuracy_score, f1_score, precision, recall, auroc.

``metric_config`` means what the same keys mean to torchmetrics' task-style classification functions
(``task``, ``num_classes``, ``num_labels``, ``average``, ``threshold``, ``top_k``, ``ignore_index``),
except that ``task`` may be left out to be inferred. The numpy kernels live in :mod:`.stat_scores`
(``stat_scores``, ``reduce_stat_scores``) and :mod:`.auroc`, the functional forms in :mod:`.functional`;
this module holds the registered classes, which only adapt a config to the kernels.

``average: "none"`` returns ``Score(value=..., per_class=[...])`` where ``per_class`` holds every
class's (label's) value and ``value`` is their unweighted mean over the classes a macro average would
include -- i.e. ``value`` equals the ``macro`` result. Binary inputs have one class: ``average`` does
not change the value, and ``none`` gives a one-element ``per_class``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from olive_eval.metrics.base import Kind, Metric, Score, statistics_grouping
from olive_eval.metrics.classification import label_lists as L
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.classification.auroc import auroc
from olive_eval.metrics.classification.configs import AurocConfig, ClassificationConfig
from olive_eval.metrics.classification.inputs import (
    Task,
    check_labels,
    column,
    infer_task,
    resolve_task,
    valid_mask,
)
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.stats import LastSums
from olive_eval.strict_model import StrictModel

__all__ = [
    "AUROC",
    "AccuracyScore",
    "AurocConfig",
    "ClassificationConfig",
    "F1Score",
    "Precision",
    "Recall",
]


#: The sums of the joined statistics the sub-types of one metric reduce in turn.
_TOTALS = LastSums()


def _score(value: float | np.ndarray, per_class: np.ndarray | None, task: str) -> Score:
    return Score(
        value=float(value),
        per_class=None if per_class is None else [float(v) for v in np.atleast_1d(per_class)],
        extra={"task": task},
    )


def _binary_as_two_classes(part: np.ndarray) -> np.ndarray:
    """Binary stat scores ``[N, 1, 4]`` (class 1 positive) as multiclass ones over classes 0 and 1: class 0's
    true positives are class 1's true negatives, its false positives class 1's false negatives, and so on."""
    one = part[:, 0, :]
    zero = one[:, [K.TN, K.FN, K.FP, K.TP]]  # in the order TP, FP, FN, TN
    return np.stack([zero, one], axis=1)


def logits_width(predictions: Any, logits: Any) -> int | None:
    """The number of classes when the predictions are labels taken from per-class logits (an argmax over the
    last axis or over axis 1), else None: predicted labels alone cannot tell how many classes the model has."""
    if not (isinstance(predictions, np.ndarray) and isinstance(logits, np.ndarray)):
        return None
    if predictions.dtype.kind not in "iu" or logits.ndim != predictions.ndim + 1:
        return None
    for axis in (-1, 1):
        if np.delete(logits.shape, axis).tolist() == list(predictions.shape) and logits.shape[axis] >= 2:
            return int(logits.shape[axis])
    return None


def _fixed_width(predictions: Any, references: Any, logits: Any) -> int | None:
    """The number of classes the inputs fix, whatever ``num_classes`` says (or an error when it says another): the
    width of the logits the predicted labels came from, or of score columns for one reference per example."""
    width = logits_width(predictions, logits)
    if width is None and all(isinstance(a, np.ndarray) and a.dtype.kind in "biuf" for a in (predictions, references)):
        return int(predictions.shape[1]) if predictions.ndim == 2 and references.ndim == 1 else None
    return width


class _StatScoresMetric(Metric):
    """Map/reduce over per-example ``[N, C, 4]`` (tp, fp, fn, tn) counts (see :mod:`.stat_scores`).

    It reads the pass's ``logits`` besides the predictions: when the predictions are labels taken from them
    (the ``argmax`` post-process), their width is the number of classes, so a reference label outside the
    model's classes is an error rather than one more class. Without logits (``compute_metric`` on labels),
    ``num_classes`` comes from metric_config or the largest label.

    With ``task`` left out, ``reduce`` uses the task that the last ``statistics`` call on this instance
    inferred (a ``[N, 1, 4]`` array with nothing inferred is taken as binary); set ``task`` explicitly
    when reducing statistics computed elsewhere. Likewise set ``num_classes`` when the statistics of
    several batches of predicted labels are concatenated: inferred from each batch's largest label,
    ``C`` could differ between batches. Errors number the examples across the batches of a pass.
    """

    kind = Kind.MAP_REDUCE
    higher_is_better = True
    reads = ("prediction", "references", "logits")

    Config: ClassVar[type[StrictModel]] = ClassificationConfig
    stat: ClassVar[K.StatName]

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._inferred_task: Task | None = None
        self._seen = 0  # examples of the earlier batches, to number examples in errors
        self._class_order: list[str] | None = None  # lists of class names: the classes' columns (label_lists)

    def compute(self, *fields: Any) -> Score:
        """The whole set: examples numbered from 0."""
        self._seen, self._class_order = 0, None
        return super().compute(*fields)

    def statistics(self, predictions: Any, references: Any, logits: Any = None) -> np.ndarray:
        c, start = self.config, self._seen
        if c.class_names or self._class_order is not None or L.looks_like_name_lists(predictions, references):
            stats, self._class_order = L.name_list_statistics(predictions, references, self._class_order, c, start)
            self._inferred_task, self._seen = "multilabel", start + len(stats)
            return stats
        task, num_classes = c.task, c.num_classes
        width = logits_width(predictions, logits)
        if width is not None:
            if num_classes is not None and num_classes != width:
                raise ValueError(f"num_classes is {num_classes} but the model's logits have {width} classes")
            refs = column(references, "references", start=start, labels=True)
            why = f"the model's logits have {width} classes"
            check_labels(refs, width, "references", why=why, start=start, valid=valid_mask(refs, c.ignore_index))
            num_classes, task = width, task or ("multiclass" if width > 2 else None)
        task = resolve_task(predictions, references, task, c.ignore_index)
        if c.task is None and task == "binary" and self._inferred_task == "multiclass":
            task = "multiclass"  # a pass streams in batches: once a label above 1 was seen, stay multiclass
        stats, codes = K.coded_stat_scores(
            predictions,
            references,
            task=task,
            num_classes=num_classes,
            num_labels=c.num_labels,
            threshold=c.threshold,
            top_k=c.top_k,
            ignore_index=c.ignore_index,
            start=start,
        )
        if codes is not None:  # the per-example scores group the rows by their label pairs
            statistics_grouping().remember(stats, codes)
        self._inferred_task = task
        self._seen += len(stats)
        return stats

    def shared_key(self) -> Any:
        """Accuracy, F1, precision and recall with the same task settings share one stat-scores pass."""
        return ("stat_scores", self.config.model_dump_json(exclude={"average", "labels"}))

    def statistics_key(self, predictions: Any, references: Any, logits: Any = None) -> Any:
        """The shared key, where a ``num_classes`` that the data fix (the predictions' score columns, the logits the
        predicted labels came from) counts as left out: accuracy without it shares F1's statistics with it."""
        c = self.config
        if c.num_classes is not None and c.num_classes == _fixed_width(predictions, references, logits):
            return (
                "stat_scores",
                c.model_copy(update={"num_classes": None}).model_dump_json(exclude={"average", "labels"}),
            )
        return self.shared_key()

    def adopt(self, producer: Metric) -> None:
        self._inferred_task = getattr(producer, "_inferred_task", None) or self._inferred_task
        self._seen = getattr(producer, "_seen", self._seen)
        self._class_order = getattr(producer, "_class_order", self._class_order)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        """Batches whose class count was inferred differently (labels rather than scores, a class missing
        from a batch) are widened to the largest: an example is a true negative of every added class."""
        width = max((p.shape[1] for p in parts), default=0)
        if self._class_order is not None:
            return np.concatenate([L.widen(p, width) for p in parts], axis=0)
        if width > 1 and self.config.task is None:  # batches inferred binary before a later one was multiclass
            parts = [_binary_as_two_classes(p) if p.shape[1] == 1 else p for p in parts]
        widened = []
        for part in parts:
            if part.shape[1] < width:
                extra = np.zeros((len(part), width - part.shape[1], 4), dtype=part.dtype)
                extra[..., K.TN] = part.reshape(len(part), -1).any(axis=1)[:, None]
                part = np.concatenate([part, extra], axis=1)
            widened.append(part)
        return np.concatenate(widened, axis=0) if widened else np.empty((0, 0, 4), dtype=np.int8)

    def _task(self, statistics: np.ndarray) -> Task:
        task = self.config.task or self._inferred_task
        if task is None and statistics.shape[-2] == 1:
            task = "binary"
        if task is None:
            raise ValueError(
                f"{self.name}: cannot tell multiclass from multilabel statistics; set 'task' in metric_config"
            )
        if self.config.labels == "references" and task != "multiclass":
            raise ValueError(
                f"{self.name}: labels 'references' averages over the classes of a multiclass task, but the task is "
                f"{task} (set task 'multiclass' to score 0/1 labels as two classes)"
            )
        return task

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        """All resamples in one vectorized call (no Python loop per resample)."""
        totals = np.asarray(totals)
        if self._class_order is not None:
            return L.reduce_totals(totals, self.stat, self.config.average)
        c = self.config
        return K.reduce_totals_batch(
            totals, self.stat, c.average, task=self._task(totals), top_k=c.top_k, labels=c.labels
        )

    def ratio_rows(self, statistics: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Pooled (micro, or binary) accuracy is correct counts over counted ones, example by example."""
        c = self.config
        stats = np.asarray(statistics)
        if self.stat != "accuracy" or self._class_order is not None or stats.ndim != 3 or len(stats) == 0:
            return None
        task = self._task(stats)
        if task != "binary" and c.average != "micro":  # type: ignore[attr-defined]
            return None
        s = stats.astype(np.float64)
        if task == "multiclass":
            return s[..., K.TP].sum(axis=1), (s[..., K.TP] + s[..., K.FN]).sum(axis=1)
        return (s[..., K.TP] + s[..., K.TN]).sum(axis=1), s.sum(axis=(1, 2))

    def reduce(self, statistics: np.ndarray) -> Score:
        statistics = np.asarray(statistics)
        if not statistics.any():  # every example adds to some count: nothing counted is 0 / 0
            why = "every reference is ignore_index" if len(statistics) else "no examples to score"
            return Score(float("nan"), undefined=why)
        if self._class_order is not None:
            return L.reduce_name_lists(statistics, self.stat, self.config.average, self._class_order, self.config)
        task, average = self._task(statistics), self.config.average
        options = {"task": task, "top_k": self.config.top_k, "labels": self.config.labels}
        # summed once for the sub-types reducing the same array (any other shape: the kernel's error)
        totals = _TOTALS(statistics) if statistics.ndim == 3 and statistics.shape[2] == 4 else statistics
        if average != "none":
            return _score(K.reduce_stat_scores(totals, self.stat, average, **options), None, task)
        if task == "binary":
            value = K.reduce_stat_scores(totals, self.stat, "micro", task=task)
            return _score(value, np.array([value]), task)
        per_class = K.reduce_stat_scores(totals, self.stat, "none", **options)
        macro = K.reduce_stat_scores(totals, self.stat, "macro", **options)
        return _score(macro, per_class, task)


@register_metric
class AccuracyScore(_StatScoresMetric):
    """Binary/multilabel ``(tp+tn)/total``; multiclass ``tp/(tp+fn)``.

    Multiclass micro is (top-k) accuracy; macro is the mean per-class recall.
    """

    name = "accuracy_score"
    stat = "accuracy"
    example_range = (0.0, 1.0)  # pooled: each example's share of correct counts (see ratio_rows)


@register_metric
class F1Score(_StatScoresMetric):
    """F1 ``2tp/(2tp+fp+fn)``; micro pools the counts of all classes first."""

    name = "f1_score"
    stat = "f1"


@register_metric
class Precision(_StatScoresMetric):
    """Precision ``tp/(tp+fp)``; micro pools the counts of all classes first."""

    name = "precision"
    stat = "precision"


@register_metric
class Recall(_StatScoresMetric):
    """Recall ``tp/(tp+fn)``; micro pools the counts of all classes first."""

    name = "recall"
    stat = "recall"


@register_metric
class AUROC(Metric):
    """Area under the ROC curve over the whole set (see :func:`.auroc.auroc`).

    A class without positives or without negatives has no ROC curve: it is undefined (NaN in
    ``per_class``) and left out of the averages. torchmetrics scores it 0.0, which reads as "always
    wrong"; scikit-learn refuses the whole computation. With nothing defined, the metric is undefined.
    """

    name = "auroc"
    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("logits", "references")
    Config: ClassVar[type[StrictModel]] = AurocConfig

    def compute(self, predictions: Any, references: Any) -> Score:
        c = self.config
        p, t = column(predictions, "predictions"), column(references, "references", labels=True)
        task = c.task or infer_task(p, t, c.ignore_index)
        kwargs = {"task": task, "num_classes": c.num_classes, "num_labels": c.num_labels}
        if c.average != "none" or task == "binary":
            value = auroc(p, t, average=c.average, ignore_index=c.ignore_index, **kwargs)
            score = _score(value, np.array([value]) if c.average == "none" else None, task)
        else:
            per_class = auroc(p, t, average="none", ignore_index=c.ignore_index, **kwargs)
            defined = per_class[~np.isnan(per_class)]
            score = _score(defined.mean() if defined.size else np.nan, per_class, task)
        if np.isnan(score.value):
            score.undefined = _undefined_auroc_reason(t if c.ignore_index is None else t[t != c.ignore_index], task)
        return score


def _undefined_auroc_reason(targets: np.ndarray, task: str) -> str:
    if targets.size == 0:
        return "no examples to score"
    if task == "binary":
        present = np.unique(targets)
        if present.size != 1:
            return "AUROC needs both classes in the targets"
        label = present[0].item()
        label = int(label) if isinstance(label, float) and label.is_integer() else label
        return f"AUROC needs both classes in the targets; only {label} is present"
    return "AUROC needs positives and negatives for at least one class; every class lacks one or the other"
