"""Olive's data configs as their users wrote them.

A data config reaches the evaluator after two rounds of Olive's filling-in, and olive-eval's strict validation
must see neither:

* Olive's ``DataConfig`` gives every component a type (the container's own default, else Olive's generic
  ``default_load_dataset`` / ``default_pre_process_data`` / ``default_post_process_data`` /
  ``default_dataloader``) and every parameter of its function's signature (``model_name: null``,
  ``max_samples: null``, ...). A type equal to that default, and a parameter equal to its signature default,
  are dropped: olive-eval's container chooses the same components.
* Olive's run config copies the input model into a ``HuggingfaceContainer``'s pre- and post-process: its
  ``model_name`` and its ``task``, and the task then picks the components. For an ONNX model file without
  ``model_attributes`` these say nothing about the data: the ``model_name`` is the ``.onnx`` file (no
  tokenizer loads from it, so Olive's own evaluator fails on it) and the task is Olive's fallback
  ``text-generation-with-past``. That fill-in (:func:`onnx_fill_in`) is dropped, with the component types
  the task chose; a ``model_name`` or task the user wrote differs from it and is kept, and checked as usual.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPONENTS = {
    "load_dataset_config": "load_dataset",
    "pre_process_data_config": "pre_process_data",
    "post_process_data_config": "post_process_data",
    "dataloader_config": "dataloader",
}
#: The components Olive's run config writes the input model's ``model_name`` and ``task`` into.
_FILLED = ("pre_process_data_config", "post_process_data_config")


@dataclass(frozen=True)
class FillIn:
    """What Olive's run config wrote into a ``HuggingfaceContainer`` from an input model that has no data
    information: the model file as ``model_name`` and Olive's fallback task."""

    model_name: str
    task: str

    def matches(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` hold this fill-in (and not a ``model_name`` or task of the user's)."""
        name = params.get("model_name")
        return (
            isinstance(name, str)
            and Path(name).resolve() == Path(self.model_name).resolve()
            and params.get("task") == self.task
        )


def onnx_fill_in(model: Any) -> FillIn | None:
    """The fill-in Olive's run config derives from ``model`` (the workflow's input model) when it is an ONNX
    model file without ``model_attributes``; None for any other model, whose name and task are its own."""
    from olive.common.constants import DEFAULT_HF_TASK

    if type(model).__name__ != "ONNXModelHandler" or getattr(model, "model_attributes", None):
        return None
    path = getattr(model, "model_path", None)
    if not path or not Path(str(path)).is_file():
        return None
    return FillIn(str(path), DEFAULT_HF_TASK)


def _default_types(container: Any) -> dict[str, str]:
    """Olive component kind → the type Olive gives a component the user left without one (and no task)."""
    from olive.data.config import DefaultDataComponentCombos

    return {**DefaultDataComponentCombos, **(getattr(container, "default_components_type", None) or {})}


def _task_types(container: Any, fill_in: FillIn | None, given: dict[str, Any]) -> dict[str, str]:
    """Olive component kind → the type the filled-in task chose (empty when there is no fill-in)."""
    pre = (given.get("pre_process_data_config") or {}).get("params") or {}
    if fill_in is None or not fill_in.matches(pre):
        return {}
    task_map = getattr(container, "task_type_components_map", None) or {}
    return dict(task_map.get(fill_in.task.replace("-with-past", ""), {}))


def data_config(config: Any, fill_in: FillIn | None = None) -> dict[str, Any]:
    """An Olive ``DataConfig`` as its user wrote it: the component types and params Olive filled in are dropped,
    and the container's default component types left to olive-eval's container (which chooses as Olive's
    does). ``fill_in``: what Olive's run config copied from the input model, dropped where found."""
    from olive.data.registry import Registry

    given = config.to_json()
    out: dict[str, Any] = {"name": given["name"]}
    container = Registry.get_container(given["type"])
    out["type"] = container.__name__
    defaults, chosen = _default_types(container), _task_types(container, fill_in, given)
    for key in ("user_script", "script_dir"):
        if given.get(key):
            out[key] = given[key]
    for key, kind in COMPONENTS.items():
        part = given.get(key)
        if not part:
            continue
        kind_type = defaults[kind] if part["type"] == chosen.get(kind) else part["type"]
        component = Registry.get_component(kind, kind_type)
        signature = inspect.signature(component).parameters
        raw = dict(part.get("params") or {})
        if key in _FILLED and fill_in is not None and fill_in.matches(raw):
            del raw["model_name"], raw["task"]
        params = {k: v for k, v in raw.items() if v is not None and not (k in signature and signature[k].default == v)}
        if kind_type == defaults[kind] and not params:
            continue
        out[key] = {"type": kind_type, **params}
    return out
