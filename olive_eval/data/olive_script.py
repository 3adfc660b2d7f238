"""Olive's data components from a data config's ``user_script``, called the way Olive calls them.

A user script written for Olive registers functions with Olive's data ``Registry`` (``@Registry.register_dataset()``,
``register_pre_process``, ``register_post_process``, ``register_dataloader``); every one it registers becomes an
olive-eval component of that kind and name, so an Olive data config runs unchanged. Without Olive, a plain function
of the script named by a dataset or dataloader ``type`` is taken the same way (a plain pre- or post-process function
keeps olive-eval's own convention, :func:`olive_eval.data.preprocess.user_pre_process`). Olive's conventions, with
its data as columns by :mod:`olive_eval.data.olive_items`:

* dataset ``load(**params)``: a dataset of ``(inputs, label)`` items, or a Hugging Face dataset.
* pre-process ``pre(dataset, **params)``: such a dataset from the one loaded (the object the dataset function
  returned, or a Hugging Face dataset of an olive-eval dataset's rows, as Olive's ``huggingface_dataset`` gives).
* dataloader ``loader(dataset, batch_size=..., **params)``: an iterable of ``(inputs, labels)`` batches.
* post-process ``post(output, **params)``: the batch's predictions from the model's output as Olive passes it (a
  torch tensor for a model with one output, a dict of them by name otherwise).

A component's parameters are the function's keyword parameters, checked against its signature when the config loads.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from pydantic import model_validator

from olive_eval.data.batch import Batch, Column, Columns, Outputs, num_rows, select_output
from olive_eval.data.components import Component, ComponentParams, registries
from olive_eval.data.containers import COMPONENT_KEYS
from olive_eval.data.olive_items import (
    LABEL,
    NO_LABEL,
    ColumnsDataset,
    ObjectPrepared,
    ObjectSource,
    column_of,
    dataset_object,
    prepared_of,
    split_item,
    to_numpy,
    user_iteration,
)
from olive_eval.data.postprocess import PostProcess
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess
from olive_eval.data.sources import DataContext, Source
from olive_eval.errors import EvaluationError
from olive_eval.tasks.runtime_outputs import OUTPUT_LENGTHS, PROMPT_LENGTH
from olive_eval.user_module import call_user

#: Olive's component kinds (``DataComponentType`` values) → olive-eval's.
OLIVE_KINDS = {
    "load_dataset": "dataset",
    "pre_process_data": "pre-process",
    "post_process_data": "post-process",
    "dataloader": "dataloader",
}
#: The kinds a plain function of a script (registered with no Olive) is taken for in Olive's convention.
PLAIN_KINDS = ("dataset", "dataloader")


def register_script_components(dc: dict[str, Any], module: ModuleType, script: Path) -> None:
    """Make the components of ``module`` (the data config ``dc``'s imported user script) known by name: every
    function the script registers with Olive's data Registry, any other Olive registration ``dc`` names (Olive's
    registry is process-wide: a helper module of the script may have registered it), and the plain functions
    ``dc`` names as its dataset or dataloader. A name olive-eval already has keeps its component."""
    olive = dict(olive_registered())
    here = _file_of(module)
    for (kind, name), func in olive.items():
        if here is not None and _file_of(sys.modules.get(getattr(func, "__module__", ""))) == here:
            _register(kind, name, func, script)
    for key, kind in COMPONENT_KEYS.items():
        part = dc.get(key)
        name = part.get("type") if isinstance(part, dict) else None
        if not isinstance(name, str) or name in registries[kind]:
            continue
        func = olive.get((kind, name.lower()))  # Olive's names are case-insensitive
        if func is None and kind in PLAIN_KINDS:
            func = getattr(module, name, None)
        if callable(func):
            _register(kind, name, func, script)


def olive_registered() -> Iterator[tuple[tuple[str, str], Callable[..., Any]]]:
    """``((kind, name), function)`` of each data component registered with Olive by code other than Olive's own
    (none when Olive was never imported)."""
    registry = sys.modules.get("olive.data.registry")
    if registry is None:
        return
    for olive_kind, entries in getattr(registry.Registry, "_REGISTRY", {}).items():
        kind = OLIVE_KINDS.get(olive_kind)
        for name, func in entries.items() if kind else ():
            if str(getattr(func, "__module__", "")).split(".")[0] != "olive":
                yield (kind, name), func


def _file_of(module: ModuleType | None) -> Path | None:
    """The resolved file a module was imported from (Olive imports a user script under its own module name)."""
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _register(kind: str, name: str, func: Callable[..., Any], script: Path) -> None:
    if name in registries[kind]:
        return
    make = {"dataset": _dataset, "pre-process": _pre_process, "post-process": _post_process, "dataloader": _dataloader}
    try:
        where = inspect.getsourcefile(func) or str(script)
    except TypeError:
        where = str(script)
    registries[kind].register(name, make[kind](func, name), origin=f"{where}:{name}")


# ---------------------------------------------------------------------------------------------- parameters
def _params(func: Callable[..., Any], what: str, takes_data: bool) -> type[ComponentParams]:
    """The config of ``func``: its keyword parameters (after the data it is handed first, when ``takes_data``)."""
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # a callable without a signature: anything goes
        parameters = [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
    if takes_data:
        parameters = parameters[1:]
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = [p.name for p in parameters if p.name in named and p.default is p.empty]
    any_key = any(p.kind is p.VAR_KEYWORD for p in parameters)

    class FunctionParams(ComponentParams):
        model_config = ComponentParams.model_config | {"extra": "allow"}

        @model_validator(mode="before")
        @classmethod
        def _reject_unknown_keys(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                return data
            unknown = [k for k in data if k != "type" and k not in named]
            if unknown and not any_key:
                raise ValueError(f"{what} takes no parameter '{unknown[0]}'; it takes: {', '.join(named) or 'none'}")
            missing = [k for k in required if k not in data]
            if missing:
                raise ValueError(f"{what} needs parameter '{missing[0]}'")
            return data

        def kwargs(self) -> dict[str, Any]:
            return {k: v for k, v in self.model_dump().items() if k != "type"}

    return FunctionParams


# ---------------------------------------------------------------------------------------------- the components
def _dataset(func: Callable[..., Any], name: str) -> type[Component]:
    what = f"dataset '{name}'"

    class OliveDataset(Component):
        Params = _params(func, what, takes_data=False)

        def open(self, data_config: str, context: DataContext) -> Source:
            loaded = call_user(func, f"data config '{data_config}': {what}", (), self.params.kwargs())  # type: ignore[attr-defined]
            return ObjectSource(data_config, loaded, what)

    return OliveDataset


def _pre_process(func: Callable[..., Any], name: str) -> type[PreProcess]:
    what = f"pre-process '{name}'"

    class OlivePreProcess(PreProcess):
        Params = _params(func, what, takes_data=True)

        def prepare(self, source: Source, context: PrepareContext) -> Prepared:
            called = f"data config '{source.name}': {what}"
            result = call_user(func, called, (dataset_object(source),), self.params.kwargs())  # type: ignore[attr-defined]
            return prepared_of(ObjectSource(source.name, result, what))

    return OlivePreProcess


def _dataloader(func: Callable[..., Any], name: str) -> type[Component]:
    what = f"dataloader '{name}'"

    class OliveDataloader(Component):
        Params = _params(func, what, takes_data=True)

        def batches(self, data: Prepared) -> Iterator[Batch]:
            dataset = data.dataset if isinstance(data, ObjectPrepared) else ColumnsDataset(data)
            loader = call_user(func, f"data config '{data.name}': {what}", (dataset,), self.params.kwargs())  # type: ignore[attr-defined]
            start = 0
            for index, item in enumerate(
                user_iteration(loader, f"data config '{data.name}': {what}: iterating its batches")
            ):
                batch = self._batch(item, index, data, start)
                start += batch.size
                yield batch

        def _batch(self, item: Any, index: int, data: Prepared, start: int) -> Batch:
            inputs, labels = split_item(item, f"data config '{data.name}': {what} gives batch {index}")
            columns: Columns = {k: column_of(v) for k, v in inputs.items()}
            if labels is not NO_LABEL:
                columns[data.references or LABEL] = column_of(labels)
            try:
                num_rows(columns)
            except ValueError as exc:
                raise EvaluationError(f"data config '{data.name}': {what} gives batch {index} whose {exc}") from None
            return Batch(columns, list(inputs), start)

    return OliveDataloader


def _post_process(func: Callable[..., Any], name: str) -> type[PostProcess]:
    what = f"post-process '{name}'"

    class OlivePostProcess(PostProcess):
        Params = _params(func, what, takes_data=True)

        def requires(self) -> tuple[str, ...]:
            return ()

        def raw(self, outputs: Outputs) -> Column:
            return select_output(outputs, 0)

        def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
            result = to_numpy(call_user(func, what, (olive_output(outputs),), self.params.kwargs()))  # type: ignore[attr-defined]
            if isinstance(result, tuple):
                result = list(result)
            if not isinstance(result, (np.ndarray, list)) or np.ndim(result) == 0:
                raise EvaluationError(
                    f"{what} returned {type(result).__name__}; it must return the batch's predictions, one per example"
                )
            if len(result) != batch.size:
                raise EvaluationError(f"{what} returned {len(result)} predictions for {batch.size} examples")
            return result

    return OlivePostProcess


def olive_output(outputs: Outputs) -> Any:
    """A model's outputs as Olive hands them to a post-process: the one output, or a dict of them by name; torch
    tensors where torch is installed (Olive's evaluators pass tensors), numpy arrays otherwise."""
    try:
        import torch
    except ImportError:
        torch = None  # type: ignore[assignment]

    def tensor(value: Any) -> Any:
        if torch is None or not isinstance(value, np.ndarray) or value.dtype == object:
            return value
        return torch.from_numpy(np.ascontiguousarray(value))

    converted = {name: tensor(value) for name, value in outputs.items() if name not in (OUTPUT_LENGTHS, PROMPT_LENGTH)}
    return next(iter(converted.values())) if len(converted) == 1 else converted
