"""``matthews_corrcoef`` and ``cohen_kappa``: map/reduce over per-example agreement rows (see :mod:`.kernels`).

Predictions are class labels (the ``argmax`` post-process), or per-class scores ``[n, C]``, whose argmax is the
label; references are labels. The number of classes ``C`` is the width of the model's logits when the labels were
taken from them (as the classification metrics read it), else ``num_classes``, else the largest label plus one.
A reference equal to ``ignore_index`` counts nowhere. With ``C`` inferred per batch, the batches' rows are
widened to the largest (an added class is absent from the narrower batch).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from olive_eval.metrics.agreement.kernels import (
    Weights,
    agreement_rows,
    agreement_totals,
    kappa_from_totals,
    mcc_from_totals,
)
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.classification.inputs import check_labels, column, valid_mask
from olive_eval.metrics.classification.metrics import logits_width
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["AgreementConfig", "AgreementMetric", "CohenKappa", "KappaConfig", "MatthewsCorrcoef"]


class AgreementConfig(StrictModel):
    """metric_config of matthews_corrcoef."""

    num_classes: int | None = Field(None, ge=2, description="Classes (default: the logits' width, else inferred)")
    ignore_index: int | None = Field(None, description="A reference label that counts nowhere")


class KappaConfig(AgreementConfig):
    """metric_config of cohen_kappa."""

    weights: Literal["none", "linear", "quadratic"] = Field(
        "none", description="Disagreement weights on label distance: none, linear |i - j| or quadratic (i - j)^2"
    )


class AgreementMetric(Metric):
    """Map/reduce over ``[n, 2C + 1]`` rows ``[w(r, p), one_hot(r), one_hot(p)]``."""

    kind = Kind.MAP_REDUCE
    higher_is_better = True
    reads = ("prediction", "references", "logits")
    Config: ClassVar[type[StrictModel]] = AgreementConfig

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self.seen = 0  # examples of the earlier batches of a pass, to number examples in errors

    @property
    def weights(self) -> Weights:
        return "none"

    def labels(self, predictions: Any, references: Any, logits: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(references, predictions, valid, C) of a batch: int64 labels checked against ``C``."""
        c, start = self.config, self.seen
        width = logits_width(predictions, logits)
        p = column(predictions, "predictions", start=start, labels=True)
        r = column(references, "references", start=start, labels=True)
        if p.ndim == 2 and r.ndim == 1 and p.shape[1] >= 2:  # per-class scores: the label is their argmax
            width, p = p.shape[1], p.argmax(axis=1)
        if p.ndim != 1 or r.ndim != 1:
            raise ValueError(f"{self.name} needs one label per example; got shapes {list(p.shape)} and {list(r.shape)}")
        if len(p) != len(r):
            raise ValueError(f"predictions and references hold different numbers of examples: {len(p)} vs {len(r)}")
        valid = valid_mask(r, c.ignore_index)  # type: ignore[attr-defined]
        configured = c.num_classes  # type: ignore[attr-defined]
        if width is not None:
            if configured is not None and configured != width:
                raise ValueError(f"num_classes is {configured} but the model's scores have {width} classes")
            classes, why = width, f"the model's scores have {width} classes"
        elif configured is not None:
            classes, why = configured, f"num_classes is {configured}"
        else:
            largest = max(int(r[valid].max()) if valid.any() else 0, int(p[valid].max()) if valid.any() else 0)
            classes, why = max(2, largest + 1), "the labels are counted from 0"
        refs = check_labels(r, classes, "references", why=why, start=start, valid=valid)
        preds = check_labels(p, classes, "predictions", why=why, start=start, valid=valid)
        self.seen += len(p)
        return refs, np.where(valid, preds, 0), valid, classes

    def statistics(self, predictions: Any, references: Any, logits: Any = None) -> np.ndarray:
        refs, preds, valid, classes = self.labels(predictions, references, logits)
        return agreement_rows(refs, preds, classes, self.weights, valid)

    def compute(self, predictions: Any, references: Any, logits: Any = None) -> Score:
        """The whole set, from the rows' sums without building the rows; examples numbered from 0."""
        self.seen = 0
        refs, preds, valid, classes = self.labels(predictions, references, logits)
        return self.score(agreement_totals(refs, preds, classes, self.weights, valid))

    def shared_key(self) -> Any:
        """matthews_corrcoef and an unweighted cohen_kappa with the same classes read the same rows."""
        c = self.config
        return ("agreement", self.weights, c.num_classes, c.ignore_index)  # type: ignore[attr-defined]

    def adopt(self, producer: Metric) -> None:
        self.seen = getattr(producer, "seen", self.seen)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        """Rows of batches with fewer classes widened: zero columns for the classes they lack."""
        width = max((p.shape[1] for p in parts), default=5)
        classes = (width - 1) // 2
        widened = []
        for part in parts:
            have = (part.shape[1] - 1) // 2
            if have < classes:
                gap = np.zeros((len(part), classes - have), dtype=part.dtype)
                part = np.concatenate([part[:, : 1 + have], gap, part[:, 1 + have :], gap], axis=1)
            widened.append(part)
        dtype = np.result_type(*widened) if widened else np.int8
        return np.concatenate(widened, axis=0).astype(dtype) if widened else np.zeros((0, width), np.int8)

    def instance_scores(self, statistics: np.ndarray) -> None:  # type: ignore[override]
        """None: one example's correlation says nothing."""
        return None

    def values(self, totals: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        return self.values(np.asarray(totals).reshape(len(totals), -1))

    def undefined(self, totals: np.ndarray) -> str | None:
        """Why the value of these totals is NaN (None when it is not)."""
        return (
            "no examples to score (every reference is ignore_index, or there are none)"
            if not totals[1:].any()
            else None
        )

    def score(self, totals: np.ndarray) -> Score:
        value = float(self.values(totals[None])[0])
        return Score(value, undefined=self.undefined(totals) if np.isnan(value) else None)

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics)
        return self.score(rows.sum(axis=0, dtype=np.int64) if len(rows) else np.zeros(rows.shape[1:], np.int64))


@register_metric
class MatthewsCorrcoef(AgreementMetric):
    """Matthews' correlation coefficient, binary or multiclass (scikit-learn's ``matthews_corrcoef``)."""

    name = "matthews_corrcoef"

    def values(self, totals: np.ndarray) -> np.ndarray:
        return mcc_from_totals(totals)


@register_metric
class CohenKappa(AgreementMetric):
    """Cohen's kappa, unweighted or weighted by label distance (scikit-learn's ``cohen_kappa_score``)."""

    name = "cohen_kappa"
    Config: ClassVar[type[StrictModel]] = KappaConfig

    @property
    def weights(self) -> Weights:
        return self.config.weights  # type: ignore[attr-defined]

    def values(self, totals: np.ndarray) -> np.ndarray:
        return kappa_from_totals(totals, self.weights)

    def undefined(self, totals: np.ndarray) -> str | None:
        return super().undefined(totals) or (
            "the references and predictions all hold one and the same label: kappa is 0 / 0"
        )
