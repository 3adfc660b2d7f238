"""Data configs, in Olive's shape: a container type plus load / pre-process / post-process / dataloader parts.

Each part is ``{"type": ..., "params": {...}}`` or has its params inline, and is validated by the
registered component of that type (see :mod:`olive_eval.data.components`); a part left out, or given
without a type, gets the container's default for the task.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from olive_eval.config.components import Registered, inline_params, nested_error
from olive_eval.data.components import ComponentParams, registries
from olive_eval.data.containers import COMPONENT_KEYS
from olive_eval.registry import RegistryError
from olive_eval.strict_model import LaxPath, StrictModel


def _component(kind: str) -> Any:
    return Annotated[ComponentParams, Registered(registries[kind])]


class DataConfig(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_\-.]+$")
    type: str = Field("HuggingfaceContainer", description="The container: default components for each part.")
    version: str | None = Field(
        None, description="The data's version (e.g. '2024-05', 'curated@0.3.2'): recorded in results.json."
    )
    user_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    load_dataset_config: _component("dataset")  # type: ignore[valid-type]
    pre_process_data_config: _component("pre-process")  # type: ignore[valid-type]
    post_process_data_config: _component("post-process")  # type: ignore[valid-type]
    dataloader_config: _component("dataloader")  # type: ignore[valid-type]

    @model_validator(mode="before")
    @classmethod
    def _container_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        container_name = data.get("type", "HuggingfaceContainer")
        try:
            container = registries["container"].get(str(container_name))
            container.Params.model_validate({"type": container_name})  # a refused container says so here
        except RegistryError as exc:
            raise nested_error("type", str(exc)) from None
        except ValueError as exc:
            raise nested_error("type", str(exc).splitlines()[0]) from None
        out = dict(data)
        pre = out.get("pre_process_data_config")
        task = inline_params(pre).get("task") if isinstance(pre, dict) else None
        for key in COMPONENT_KEYS:
            part = out.get(key)
            if part is None:
                part = {}
            if not isinstance(part, dict):
                continue  # validation reports it
            if "type" not in part:
                part = {"type": container.default(key, task), **part}
            out[key] = part
        return out

    @property
    def is_dummy(self) -> bool:
        """Dummy inputs (for latency) rather than examples to score."""
        return self.load_dataset_config.type == "dummy_dataset"
