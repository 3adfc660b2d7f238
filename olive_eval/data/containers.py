"""Data containers: Olive's names for a default choice of each component, by task.

A data config names a container (``type``, default ``HuggingfaceContainer``) and may give any component
itself; the ones it leaves out come from the container, and Olive's ``params.task`` of the pre-process
picks task-specific ones, as Olive's container does. ``RawDataContainer`` lives in :mod:`olive_eval.data.raw`,
the transformers dummy containers in :mod:`olive_eval.data.dummy_text`.
"""

from __future__ import annotations

from typing import ClassVar

from olive_eval.data.components import Component, ComponentParams, register_component

COMPONENT_KEYS = {
    "load_dataset_config": "dataset",
    "pre_process_data_config": "pre-process",
    "post_process_data_config": "post-process",
    "dataloader_config": "dataloader",
}


class Container(Component):
    """Default component types; ``by_task`` overrides some of them for a task."""

    Params = ComponentParams
    defaults: ClassVar[dict[str, str]] = {}
    by_task: ClassVar[dict[str, dict[str, str]]] = {}

    @classmethod
    def default(cls, key: str, task: str | None) -> str:
        return cls.by_task.get(task or "", {}).get(key) or cls.defaults[key]


@register_component("container", "HuggingfaceContainer")
class HuggingfaceContainer(Container):
    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "huggingface_dataset",
        "pre_process_data_config": "huggingface_pre_process",
        "post_process_data_config": "post_process",
        "dataloader_config": "default_dataloader",
    }
    by_task: ClassVar[dict[str, dict[str, str]]] = {
        "feature-extraction": {"pre_process_data_config": "tokenizer_pre_process"},
        "text-classification": {"post_process_data_config": "text_classification_post_process"},
        "ner": {
            "pre_process_data_config": "ner_huggingface_preprocess",
            "post_process_data_config": "ner_post_process",
        },
        "text-generation": {
            "pre_process_data_config": "text_generation_huggingface_pre_process",
            "post_process_data_config": "decode",
        },
        "audio-classification": {
            "pre_process_data_config": "audio_classification_pre_process",
            "post_process_data_config": "text_classification_post_process",
        },
        "image-classification": {
            "pre_process_data_config": "image_classification_pre_process",
            "post_process_data_config": "text_classification_post_process",
        },
        "speech-transcription": {"pre_process_data_config": "speech_transcription_pre_process"},
        **{
            task: {"pre_process_data_config": "vision_vqa_pre_process", "dataloader_config": "vision_vqa_dataloader"}
            for task in ("vision-vqa", "vision-chart-qa", "vision-ocr")
        },
    }


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
