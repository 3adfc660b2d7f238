"""Olive's dummy inputs for transformer language models, with Olive's names and parameters.

Containers ``TransformersDummyDataContainer``, ``TransformersPromptDummyDataContainer`` (prompt
processing: ``past_seq_len`` 0) and ``TransformersTokenDummyDataContainer`` (one new token over a cache),
and their datasets ``transformers_dummy_dataset``, ``transformers_prompt_dummy_dataset`` and
``transformers_token_dummy_dataset``. Each example is what Olive's ``TransformersDummyDataset`` gives:

* ``input_ids`` (``seq_len``), random ids below the model's ``vocab_size``;
* ``attention_mask`` (``past_seq_len + seq_len``), ones;
* unless ``generative``: ``position_ids`` (``seq_len``), the positions after the cache, and the cache,
  one key and one value of (key/value heads, ``past_seq_len``, head size) per layer, uniform in [0, 1),
  named ``ort_past_key_name`` / ``ort_past_value_name`` with ``<id>`` the layer. ``shared_kv`` (ONNX and
  fp16 only) gives each cache tensor ``max_seq_len`` positions, zeros after the cache;
* ``step`` (0) when ``use_step`` and the model is ONNX.

The sizes come from the model's config (``config.json``): ``model_name``, or the evaluated model's own folder
(the ``transformers_dummy_pre_process`` the containers default to reads it for each model). Olive's
placeholder label is not made up: the data has no references, so it serves latency and throughput metrics.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from olive_eval.data.arrow import table_columns
from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.containers import Container
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess
from olive_eval.data.sources import CHUNK_ROWS, DataContext, Source, arrow_column
from olive_eval.errors import EvaluationError

#: Config keys Olive reads each size from, in order (its aliases for the same concept across models).
ALIASES = {
    "num_layers": ("num_hidden_layers", "n_layer", "n_layers"),
    "hidden_size": ("hidden_size", "dim", "d_model", "n_embd"),
    "num_attention_heads": ("num_attention_heads", "num_heads", "n_head", "n_heads", "encoder_attention_heads"),
    "num_kv_heads": ("num_key_value_heads",),
}
#: Olive's ``model_framework`` values that mean an ONNX model.
ONNX = "ONNX"


class TransformersDummyParams(ComponentParams):
    """Olive's parameters of ``transformers_dummy_dataset`` (defaults of the plain variant)."""

    data_dir: str | None = Field(None, description="Olive's; unused (the inputs are made up).")
    model_name: str | None = Field(
        None, description="Folder (or cached hub name) of the model's config; default: the model's own"
    )
    seq_len: int = Field(128, ge=1)
    past_seq_len: int = Field(128, ge=0)
    max_seq_len: int = Field(1024, ge=1)
    model_framework: str = Field(ONNX, description="'ONNX' flattens the cache into one input per key and value")
    use_fp16: bool = False
    shared_kv: bool = False
    generative: bool = Field(False, description="Only input_ids and attention_mask (no position ids, no cache)")
    ort_past_key_name: str = "past_key_values.<id>.key"
    ort_past_value_name: str = "past_key_values.<id>.value"
    trust_remote_code: bool | None = None
    max_samples: int = Field(32, ge=1)
    use_step: bool = False
    ignore_input_fields: list[str] | None = None
    seed: int = Field(0, description="olive-eval's: the random inputs are reproducible.")

    @model_validator(mode="after")
    def _check(self) -> TransformersDummyParams:
        onnx = self.model_framework.lower() == ONNX.lower()
        if self.shared_kv and not (onnx and self.use_fp16):
            raise ValueError("shared_kv is only supported for an ONNX model with use_fp16 (Olive's rule)")
        if self.shared_kv and self.max_seq_len < self.past_seq_len:
            raise ValueError(f"max_seq_len {self.max_seq_len} is shorter than past_seq_len {self.past_seq_len}")
        if not onnx and not self.generative:
            raise ValueError(
                f"model_framework '{self.model_framework}' with generative false passes the cache as nested "
                "past_key_values tuples, which olive-eval batches do not carry; set generative: true "
                "(input_ids and attention_mask only) or evaluate the ONNX model"
            )
        return self


class PromptDummyParams(TransformersDummyParams):
    seq_len: int = Field(8, ge=1)
    past_seq_len: int = Field(0, ge=0)
    max_seq_len: int = Field(2048, ge=1)


class TokenDummyParams(TransformersDummyParams):
    seq_len: int = Field(1, ge=1)
    past_seq_len: int = Field(8, ge=0)
    max_seq_len: int = Field(2048, ge=1)


def model_sizes(config: dict[str, Any], where: str) -> dict[str, int]:
    """Layers, key/value heads, head size and vocabulary of a model config, as Olive reads them."""
    found: dict[str, int | None] = {}
    for key, names in ALIASES.items():
        found[key] = next((int(config[n]) for n in names if config.get(n) is not None), None)
    if found["num_attention_heads"] is None or found["hidden_size"] is None or found["num_layers"] is None:
        missing = [k for k in ("num_layers", "hidden_size", "num_attention_heads") if found[k] is None]
        raise EvaluationError(f"{where}: the model config has no {', '.join(missing)} (needed for the dummy cache)")
    world = int(config.get("world_size", 1) or 1)
    heads = found["num_attention_heads"] // world  # type: ignore[operator]
    head_size = found["hidden_size"] // heads  # type: ignore[operator]
    if found["num_kv_heads"] is not None:
        heads = found["num_kv_heads"] // world
    return {
        "layers": found["num_layers"],  # type: ignore[dict-item]
        "kv_heads": heads,
        "head_size": head_size,
        "vocab_size": int(config.get("vocab_size", 50256) or 50256),
    }


def dummy_example_columns(p: TransformersDummyParams, sizes: dict[str, int], count: int) -> dict[str, np.ndarray]:
    """``count`` examples of Olive's dummy inputs (first axis: examples)."""
    rng = np.random.default_rng(p.seed)
    total = p.past_seq_len + p.seq_len
    out: dict[str, np.ndarray] = {
        "input_ids": rng.integers(0, sizes["vocab_size"], (count, p.seq_len), dtype=np.int64),
        "attention_mask": np.ones((count, total), dtype=np.int64),
    }
    onnx = p.model_framework.lower() == ONNX.lower()
    if p.use_step and onnx:
        out["step"] = np.zeros(count, dtype=np.int64)
    if not p.generative:
        out["position_ids"] = np.broadcast_to(np.arange(p.past_seq_len, total, dtype=np.int64), (count, p.seq_len))
        dtype = np.float16 if p.use_fp16 else np.float32
        cache_len = p.max_seq_len if p.shared_kv else p.past_seq_len
        shape = (count, sizes["kv_heads"], cache_len, sizes["head_size"])
        for layer in range(sizes["layers"]):
            for template in (p.ort_past_key_name, p.ort_past_value_name):
                cache = np.zeros(shape, dtype=dtype)
                cache[:, :, : p.past_seq_len] = rng.random((*shape[:2], p.past_seq_len, shape[3]), dtype=np.float32)
                out[template.replace("<id>", str(layer))] = cache
    for name in p.ignore_input_fields or []:
        out.pop(name, None)
    return out


class TransformersDummySource(Source):
    """``max_samples`` made-up examples; the sizes come from ``model_name``'s config, or from the model's folder
    once :meth:`for_model` names it."""

    def __init__(self, name: str, params: TransformersDummyParams, context: DataContext, folder: str | None = None):
        self.name, self.params, self.context, self.folder = name, params, context, folder or params.model_name
        self.columns = ["input_ids", "attention_mask"]

    @property
    def needs_model(self) -> bool:  # type: ignore[override]
        return self.folder is None

    def for_model(self, folder: str | None) -> TransformersDummySource:
        return TransformersDummySource(self.name, self.params, self.context, self.params.model_name or folder)

    @property
    def num_rows(self) -> int:
        return self.params.max_samples

    def chunks(self) -> Iterator[pa.Table]:
        columns = dummy_example_columns(self.params, self._sizes(), self.params.max_samples)
        table = pa.table({k: arrow_column(v) for k, v in columns.items()})
        for start in range(0, table.num_rows, CHUNK_ROWS):
            yield table.slice(start, CHUNK_ROWS)

    def _sizes(self) -> dict[str, int]:
        where = f"data config '{self.name}'"
        if self.folder is None:
            raise EvaluationError(
                f"{where}: the transformers dummy dataset needs the model's config: give load_dataset_config "
                "model_name, or evaluate a model with a folder (HfModel model_path, ONNXModel processor_path)"
            )
        return model_sizes(read_model_config(self.folder, self.context, self.params.trust_remote_code, where), where)


def read_model_config(name: str, context: DataContext, trust_remote_code: bool | None, where: str) -> dict[str, Any]:
    """A model's ``config.json`` as a dict: from a folder, or through transformers from the local cache."""
    folder = Path(name)
    if folder.is_dir():
        path = folder / "config.json"
        if not path.is_file():
            raise EvaluationError(f"{where}: no config.json in {folder} (the dummy inputs are sized from it)")
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"{where}: cannot read {path}: {exc}") from None
    from olive_eval.huggingface_env import offline

    try:
        from transformers import AutoConfig

        with offline(context.allow_download):
            config = AutoConfig.from_pretrained(
                name, local_files_only=not context.allow_download, trust_remote_code=bool(trust_remote_code)
            )
    except (OSError, ValueError) as exc:
        raise EvaluationError(
            f"{where}: model_name '{name}' is neither a folder nor a model config in the local Hugging Face cache "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from None
    return dict(config.to_dict())


class _TransformersDummyDataset(Component):
    Params: ClassVar[type[ComponentParams]] = TransformersDummyParams

    def open(self, name: str, context: DataContext) -> Source:
        return TransformersDummySource(name, self.params, context)  # type: ignore[arg-type]


for _dataset, _params in (
    ("transformers_dummy_dataset", TransformersDummyParams),
    ("transformers_prompt_dummy_dataset", PromptDummyParams),
    ("transformers_token_dummy_dataset", TokenDummyParams),
):
    register_component("dataset", _dataset)(type(_dataset, (_TransformersDummyDataset,), {"Params": _params}))


class DummyPreParams(ComponentParams):
    task: str | None = None


@register_component("pre-process", "transformers_dummy_pre_process")
class TransformersDummyPreProcess(PreProcess):
    """The transformers dummy dataset's inputs for the model at hand: sized from its own config when the
    dataset names no ``model_name``, so models of different shapes each get theirs."""

    Params = DummyPreParams

    def processor_source(self, context: PrepareContext) -> str | None:
        return str(context.processor_folder) if context.processor_folder is not None else None

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        if not isinstance(source, TransformersDummySource):
            raise EvaluationError(
                f"data config '{source.name}': transformers_dummy_pre_process takes a transformers dummy dataset "
                "(transformers_dummy_dataset, transformers_prompt_dummy_dataset, transformers_token_dummy_dataset)"
            )
        bound = source.for_model(self.processor_source(context))
        probe = next(bound.chunks())
        inputs = list(probe.column_names)

        def chunks() -> Iterator[Any]:
            for table in bound.chunks():
                yield table_columns(table)

        return Prepared(source.name, chunks, inputs, None, inputs, num_rows=bound.num_rows)


class _TransformersDummyContainer(Container):
    dataset: ClassVar[str] = "transformers_dummy_dataset"
    dataloader: ClassVar[str] = "default_dataloader"

    @classmethod
    def default(cls, key: str, task: str | None) -> str:
        return {
            "load_dataset_config": cls.dataset,
            "pre_process_data_config": "transformers_dummy_pre_process",
            "post_process_data_config": "post_process",
            "dataloader_config": cls.dataloader,
        }[key]


register_component("container", "TransformersDummyDataContainer")(
    type("TransformersDummyDataContainer", (_TransformersDummyContainer,), {})
)
register_component("container", "TransformersPromptDummyDataContainer")(
    type(
        "TransformersPromptDummyDataContainer",
        (_TransformersDummyContainer,),
        {"dataset": "transformers_prompt_dummy_dataset"},
    )
)
register_component("container", "TransformersTokenDummyDataContainer")(
    type(
        "TransformersTokenDummyDataContainer",
        (_TransformersDummyContainer,),
        {"dataset": "transformers_token_dummy_dataset", "dataloader": "dataloader_with_ignored_batch_fields"},
    )
)
