"""Olive's data configs as their users wrote them.

A data config reaches the evaluator after two rounds of Olive's filling-in, and olive-eval's strict validation
must see neither:

* Olive's ``DataConfig`` gives every component a type (the container's own default, else Olive's generic
  ``default_load_dataset`` / ``default_pre_process_data`` / ``default_post_process_data`` /
  ``default_dataloader``) and every parameter of its function's signature (``model_name: null``,
  ``max_samples: null``, ...). A type equal to that default, and a parameter equal to its signature default,
  are dropped: olive-eval's container chooses the same components.
* Olive's run config copies an ONNX or transformers input model into a ``HuggingfaceContainer``'s pre- and
  post-process (:func:`input_fill_in`): its ``model_name`` and its ``task``, and the task then picks the
  components. Olive's post-processes take both as ignored keyword arguments, so they are dropped there. The
  pre-process keeps them (olive-eval's tokenizes with that model's and picks the task's components, as
  Olive's does), except from an ONNX model file without ``model_attributes``: then the ``model_name`` is the
  ``.onnx`` file (no tokenizer loads from it, so Olive's own evaluator fails on it) and the task Olive's
  fallback ``text-generation-with-past``; they say nothing about the data and are dropped, with the component
  types that task chose. A ``model_name`` or task the user wrote differs from the fill-in and is kept, and
  checked as usual.
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
_PRE, _POST = "pre_process_data_config", "post_process_data_config"


@dataclass(frozen=True)
class FillIn:
    """What Olive's run config wrote into a ``HuggingfaceContainer``'s pre- and post-process from the input
    model. ``usable``: False when it says nothing about the data (an ONNX model file without attributes)."""

    model_name: str | None
    task: str
    usable: bool = True

    def matches(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` hold this fill-in (and not a ``model_name`` or task of the user's)."""
        if params.get("task") != self.task:
            return False
        name = params.get("model_name")
        if name is None or self.model_name is None:
            return name is None and self.model_name is None
        return name == self.model_name or Path(str(name)).resolve() == Path(self.model_name).resolve()


def input_fill_in(model: Any) -> FillIn | None:
    """The fill-in Olive's run config derives from ``model``, the workflow's input model: an ONNX model's
    ``model_attributes`` (``_name_or_path``, ``hf_task``) or else its path and Olive's fallback task, a
    transformers model's path and task; None for any other model (Olive fills in nothing)."""
    from olive.common.constants import DEFAULT_HF_TASK

    kind = type(model).__name__
    if kind == "HfModelHandler":
        return FillIn(str(model.model_path), str(model.task or DEFAULT_HF_TASK))
    if kind != "ONNXModelHandler":
        return None
    attributes = getattr(model, "model_attributes", None)
    if attributes:
        name = attributes.get("_name_or_path")
        return FillIn(None if name is None else str(name), str(attributes.get("hf_task", DEFAULT_HF_TASK)))
    # the path as configured (a folder stays a folder; the handler's model_path is the .onnx file inside it)
    path = str(model.get_resource("model_path"))
    return FillIn(path, DEFAULT_HF_TASK, usable=not Path(path).is_file())


def _default_types(container: Any) -> dict[str, str]:
    """Olive component kind → the type Olive gives a component the user left without one (and no task)."""
    from olive.data.config import DefaultDataComponentCombos

    return {**DefaultDataComponentCombos, **(getattr(container, "default_components_type", None) or {})}


def _task_types(container: Any, fill_in: FillIn | None, given: dict[str, Any]) -> dict[str, str]:
    """Olive component kind → the type an unusable filled-in task chose (empty when there is none)."""
    pre = (given.get("pre_process_data_config") or {}).get("params") or {}
    if fill_in is None or fill_in.usable or not fill_in.matches(pre):
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
        if fill_in is not None and (key == _POST or (key == _PRE and not fill_in.usable)) and fill_in.matches(raw):
            raw.pop("model_name", None)
            del raw["task"]
        params = {k: v for k, v in raw.items() if v is not None and not (k in signature and signature[k].default == v)}
        if kind_type == defaults[kind] and not params:
            continue
        out[key] = {"type": kind_type, **params}
    return out
