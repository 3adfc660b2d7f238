"""Data containers: Olive's names for a default choice of each component, by task.

A data config names a container (``type``, default ``HuggingfaceContainer``) and may give any component
itself; the ones it leaves out come from the container, and Olive's ``params.task`` of the pre-process
picks the task's own (:mod:`olive_eval.tasks`: each task declares its default components), as Olive's
``HuggingfaceContainer`` does. ``RawDataContainer`` lives in :mod:`olive_eval.data.raw`,
the transformers dummy containers in :mod:`olive_eval.data.dummy_text`.
"""

from __future__ import annotations

from typing import ClassVar

from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.tasks.base import find_task

COMPONENT_KEYS = {
    "load_dataset_config": "dataset",
    "pre_process_data_config": "pre-process",
    "post_process_data_config": "post-process",
    "dataloader_config": "dataloader",
}


class Container(Component):
    """Default component types; with ``task_defaults``, a registered task's own override them."""

    Params = ComponentParams
    defaults: ClassVar[dict[str, str]] = {}
    task_defaults: ClassVar[bool] = False

    @classmethod
    def default(cls, key: str, task: str | None) -> str:
        own = find_task(task) if cls.task_defaults and task is not None else None
        return (own.default_component(key) if own is not None else None) or cls.defaults[key]


@register_component("container", "HuggingfaceContainer")
class HuggingfaceContainer(Container):
    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "huggingface_dataset",
        "pre_process_data_config": "huggingface_pre_process",
        "post_process_data_config": "post_process",
        "dataloader_config": "default_dataloader",
    }
    task_defaults = True


@register_component("container", "DataContainer")
class DataContainer(Container):
    """Olive's generic container: components as given, columns as they are by default."""

    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "huggingface_dataset",
        "pre_process_data_config": "skip_pre_process",
        "post_process_data_config": "post_process",
        "dataloader_config": "default_dataloader",
    }


@register_component("container", "DummyDataContainer")
class DummyDataContainer(Container):
    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "dummy_dataset",
        "pre_process_data_config": "skip_pre_process",
        "post_process_data_config": "post_process",
        "dataloader_config": "default_dataloader",
    }


@register_component("container", "ImageDataContainer")
class ImageDataContainer(Container):
    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "huggingface_dataset",
        "pre_process_data_config": "image_classification_pre_process",
        "post_process_data_config": "text_classification_post_process",
        "dataloader_config": "default_dataloader",
    }
