"""The ``metric_config`` of the classification metrics: torchmetrics' task-style keys, ``task`` inferred when left
out, plus the options of the other systems olive-eval reproduces (``labels``, ``class_names``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from olive_eval.metrics.classification import label_lists as L
from olive_eval.strict_model import StrictModel


class TaskConfig(StrictModel):
    task: Literal["binary", "multiclass", "multilabel"] | None = None
    num_classes: int | None = None
    num_labels: int | None = None
    ignore_index: int | None = None

    @field_validator("num_classes")
    @classmethod
    def _check_num_classes(cls, value: int | None) -> int | None:
        if value is not None and value < 2:
            raise ValueError(f"num_classes must be >= 2, got {value}")
        return value

    @field_validator("num_labels")
    @classmethod
    def _check_num_labels(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"num_labels must be >= 1, got {value}")
        return value


class ClassificationConfig(TaskConfig):
    """metric_config of accuracy_score, f1_score, precision and recall."""

    average: Literal["micro", "macro", "weighted", "none"] = "micro"
    threshold: float = 0.5
    top_k: int = 1
    class_names: list[str] | None = None  # the classes of lists of class names, in reporting order

    @field_validator("class_names")
    @classmethod
    def _check_class_names(cls, value: list[str] | None) -> list[str] | None:
        return L.check_class_names(value)

    labels: Literal["observed", "references"] = Field(
        "observed",
        description="Multiclass: the classes the averages run over. observed: every class seen in the predictions "
        "or the references (scikit-learn's default); references: the classes of the references only, as "
        "scikit-learn with labels=set(references) and Unitxt's F1Micro/F1Macro (a class only predicted leaves "
        "macro's mean, its false positives leave micro)",
    )

    @model_validator(mode="after")
    def _labels_need_multiclass(self) -> ClassificationConfig:
        if self.labels == "references" and self.task in ("binary", "multilabel"):
            raise ValueError(f"labels 'references' applies to multiclass tasks, not {self.task}")
        return self

    @field_validator("threshold")
    @classmethod
    def _check_threshold(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"threshold must lie in [0, 1], got {value}")
        return value

    @field_validator("top_k")
    @classmethod
    def _check_top_k(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"top_k must be >= 1, got {value}")
        return value


class AurocConfig(TaskConfig):
    """metric_config of auroc (no threshold or top_k: AUROC sweeps every threshold)."""

    average: Literal["micro", "macro", "weighted", "none"] = "macro"
