"""Olive's ``huggingface_metrics`` backend: a sub-type names a Hugging Face ``evaluate`` module.

A metric with ``"backend": "huggingface_metrics"`` runs, for each sub-type::

    evaluate.load(name, **load_params).compute(predictions=preds, references=targets, **compute_params)

and reads the value at ``result_key`` (a dotted path into the result, ``"MISC.precision"`` ->
``result["MISC"]["precision"]``) or, when ``result_key`` is null, at the sub-type's name (the
script's stem when the name is a path: ``"metrics/my_acc.py"`` -> ``result["my_acc"]``).

``name`` may be a local script (``path/to/my_metric.py``), a folder holding ``<folder>.py``, or a
Hub name (``accuracy``, ``user/metric``) that ``evaluate`` already has in its modules cache. Nothing
here changes ``evaluate``'s settings: with no network a Hub name that is not cached fails with a
one-line :class:`EvaluationError` saying how to point the sub-type at a local script instead.
``evaluate`` honours ``HF_EVALUATE_OFFLINE=1`` (read when it is imported) to skip the network at
once; ``HF_HUB_OFFLINE`` and ``HF_DATASETS_OFFLINE`` do not affect how it loads metric modules.

Extra per-example columns of the pass go to ``compute`` by name, as Unitxt's ``hf_additional_input_fields_pass``
(``additional_input_fields``: one list per field, an element per example) and
``hf_additional_input_fields_pass_one_value`` (``additional_input_fields_one_value``: the one value every example
shares, else an error naming the first example that differs). The metric reads them as pass fields, so the run
checks they exist when it is planned and a metric's ``fields`` may remap them.

The class is not in the metric registry: its name comes from the config, not from the class.
"""

from __future__ import annotations

import importlib.util
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.strict_model import StrictModel

BACKEND = "huggingface_metrics"


class HuggingFaceMetricConfig(StrictModel):
    """A ``huggingface_metrics`` sub-type's ``metric_config``, as Olive defines it."""

    load_params: dict[str, Any] = Field(default_factory=dict)
    compute_params: dict[str, Any] = Field(default_factory=dict)
    result_key: str | None = None
    additional_input_fields: list[str] = Field(
        default_factory=list,
        description="Pass fields (data columns) handed to compute by name, one value per example "
        "(Unitxt's hf_additional_input_fields_pass)",
    )
    additional_input_fields_one_value: list[str] = Field(
        default_factory=list,
        description="Pass fields every example holds the same value of, handed to compute as that one value "
        "(Unitxt's hf_additional_input_fields_pass_one_value)",
    )

    @field_validator("additional_input_fields", "additional_input_fields_one_value")
    @classmethod
    def _distinct_inputs(cls, names: list[str], info: ValidationInfo) -> list[str]:
        """Each extra field is one more keyword of compute: it may not repeat one compute already gets."""
        taken = {"predictions", "references", "prediction", *info.data.get("compute_params", {})}
        if info.field_name == "additional_input_fields_one_value":
            taken.update(info.data.get("additional_input_fields", []))
        for name in names:
            if name in taken:
                raise ValueError(
                    f"'{name}' is already an argument of compute (predictions, references, compute_params or "
                    "another extra field)"
                )
            taken.add(name)
        return names

    @property
    def extra_fields(self) -> tuple[str, ...]:
        """The extra pass fields, in the order the metric reads them after prediction and references."""
        return (*self.additional_input_fields, *self.additional_input_fields_one_value)


def _import_evaluate() -> Any:
    try:
        import evaluate
    except ImportError as exc:
        raise MissingDependencyError("evaluate", f"the {BACKEND} backend", extra="hf") from exc
    return evaluate


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _to_python(value: Any) -> Any:
    """numpy arrays (and anything else with ``tolist``, such as tensors) to lists, inside lists too."""
    if isinstance(value, np.ndarray) or (hasattr(value, "tolist") and callable(value.tolist)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_to_python(v) for v in value]
    return value


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _real_number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (numpy scalars and 0-d arrays too, bools not)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _keys(mapping: Mapping[Any, Any]) -> str:
    return ", ".join(str(k) for k in mapping) or "(none)"


class HuggingFaceMetric(Metric):
    """One ``huggingface_metrics`` sub-type: an ``evaluate`` module, loaded on first use."""

    name: ClassVar[str] = BACKEND  # replaced per instance by the sub-type's name
    higher_is_better: ClassVar[bool] = True  # a default; the sub-type's higher_is_better overrides it
    kind: ClassVar[Kind] = Kind.GLOBAL
    input: ClassVar[str] = "preds"
    Config: ClassVar[type[StrictModel]] = HuggingFaceMetricConfig
    requires: ClassVar[tuple[str, ...]] = ("evaluate",)
    extra: ClassVar[str | None] = "hf"
    #: The loaded module, and the folder names resolve against: the run's config gives both again, so the
    #: result cache leaves them out of the metric's state.
    transient = ("_module", "base_dir")

    config: HuggingFaceMetricConfig

    def __init__(self, name: str, config: HuggingFaceMetricConfig, *, base_dir: Path | None = None) -> None:
        super().__init__(config)
        self.name = name  # type: ignore[misc]  # per instance: the evaluate module this sub-type names
        self.base_dir = base_dir
        self.reads = ("prediction", "references", *config.extra_fields)  # type: ignore[misc]  # per instance
        self._module: Any = None

    @classmethod
    def from_sub_type(
        cls, name: str, metric_config: dict[str, Any] | None, *, base_dir: Path | None = None
    ) -> HuggingFaceMetric:
        """Validate the sub-type's metric_config (pydantic ValidationError on a bad one); loads nothing."""
        cls.check_requirements()
        return cls(name, HuggingFaceMetricConfig.model_validate(metric_config or {}), base_dir=base_dir)

    @classmethod
    def check_requirements(cls) -> None:
        """Fail early, without importing it (slow), when ``evaluate`` is not installed."""
        try:
            found = importlib.util.find_spec("evaluate") is not None
        except (ImportError, ValueError):  # ValueError: sys.modules["evaluate"] is None or has no spec
            found = False
        if not found:
            raise MissingDependencyError("evaluate", f"the {BACKEND} backend", extra="hf")

    # ------------------------------------------------------------------------------------------ loading
    def _path(self, base_dir: Path | None) -> str:
        """The name to load: resolved against ``base_dir`` (the run config's folder) when that exists."""
        if base_dir is not None and not Path(self.name).is_absolute() and (Path(base_dir) / self.name).exists():
            return str(Path(base_dir) / self.name)
        return self.name

    @property
    def default_result_key(self) -> str:
        """The key read when ``result_key`` is null: the name, or the script's stem for a path."""
        path = Path(self.name)
        if path.suffix == ".py":
            return path.stem
        return path.name if ("/" in self.name or "\\" in self.name) else self.name

    def load(self, base_dir: Path | None = None) -> Any:
        """The ``evaluate`` module, loaded once and cached on this instance."""
        if self._module is not None:
            return self._module
        evaluate = _import_evaluate()
        path = self._path(base_dir if base_dir is not None else self.base_dir)
        try:
            module = evaluate.load(path, **self.config.load_params)
        except (FileNotFoundError, ConnectionError) as exc:
            # evaluate raises FileNotFoundError ("Couldn't find a module script at ... doesn't exist on the
            # Hugging Face Hub either") both when the Hub has no such module and when it cannot be reached
            # (and with HF_EVALUATE_OFFLINE=1); a local path that exists failed for another reason.
            if Path(path).exists() or Path(path).suffix == ".py":
                raise EvaluationError(
                    f"huggingface metric '{self.name}' could not be loaded: {_first_line(exc)}"
                ) from exc
            raise EvaluationError(
                f"huggingface metric '{self.name}' is not a local script and is not in the local cache "
                f"(no network to fetch it); point the sub-type name at a local metric script, "
                f'e.g. "name": "path/to/my_metric.py"'
            ) from exc
        except Exception as exc:
            raise EvaluationError(
                f"huggingface metric '{self.name}' could not be loaded: {type(exc).__name__}: {_first_line(exc)}"
            ) from exc
        self._module = module
        return module

    # ---------------------------------------------------------------------------------------- computing
    def compute(self, predictions: Any, references: Any, *extra: Any) -> Score:
        """``extra``: the columns of :attr:`HuggingFaceMetricConfig.extra_fields`, in that order."""
        module = self.load()
        inputs = self._extra_inputs(extra)
        try:
            result = module.compute(
                predictions=_to_python(predictions),
                references=_to_python(references),
                **inputs,
                **self.config.compute_params,
            )
        except Exception as exc:
            raise EvaluationError(
                f"huggingface metric '{self.name}' failed to compute: {type(exc).__name__}: {_first_line(exc)}"
            ) from exc
        key = self.config.result_key or self.default_result_key
        value = self._pick(result, key)
        number = _real_number(value)
        if number is None:
            hint = ""
            if isinstance(value, Mapping) and value:
                hint = f" (keys: {_keys(value)}; set metric_config.result_key to one, e.g. '{key}.{next(iter(value))}')"
            raise EvaluationError(
                f"huggingface metric '{self.name}': result '{key}' is a {_type_name(value)}, not a real number{hint}"
            )
        return Score(number, extra={"result_key": key})

    def _extra_inputs(self, columns: tuple[Any, ...]) -> dict[str, Any]:
        """The extra fields by name: a list per field, or the one value a one-value field holds for every example."""
        inputs: dict[str, Any] = {}
        one_value = set(self.config.additional_input_fields_one_value)
        for name, column in zip(self.config.extra_fields, columns, strict=True):
            values = _to_python(column)
            if name not in one_value:
                inputs[name] = values
                continue
            differs = next((i for i, value in enumerate(values) if value != values[0]), None)
            if differs is not None:
                raise EvaluationError(
                    f"huggingface metric '{self.name}': additional_input_fields_one_value '{name}' is not the same in "
                    f"every example (example 0: {values[0]!r}, example {differs}: {values[differs]!r}); list it in "
                    "additional_input_fields to pass one value per example"
                )
            inputs[name] = values[0] if values else None
        return inputs

    def _pick(self, result: Any, key: str) -> Any:
        """``result[key]``, or the dotted path ``key`` into nested mappings (a key holding dots wins)."""
        if not isinstance(result, Mapping) or not result:
            raise EvaluationError(
                f"Cannot find the result for huggingface metric '{self.name}' (key '{key}'): compute returned "
                f"{'an empty mapping' if isinstance(result, Mapping) else _type_name(result)}"
            )
        if key in result:
            return result[key]
        if self.config.result_key is None and self.name in result:
            return result[self.name]
        value: Any = result
        walked: list[str] = []
        for part in key.split("."):
            where = ".".join(walked) or "the result"
            if not isinstance(value, Mapping):
                raise EvaluationError(
                    f"Cannot find the result for huggingface metric '{self.name}': key '{key}' needs "
                    f"'{where}' to be a mapping, it is a {_type_name(value)}"
                )
            if part not in value:
                raise EvaluationError(
                    f"Cannot find the result for huggingface metric '{self.name}': no key '{key}'; "
                    f"{where} has keys: {_keys(value)}"
                )
            value = value[part]
            walked.append(part)
        return value
