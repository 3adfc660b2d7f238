"""Olive's ``audio_classification_pre_process``: clips decoded, labelled with the model's ids, made into the
feature extractor's inputs.

With Olive's parameters: ``model_name`` (default: the model's own folder), ``input_cols`` (one audio
column), ``label_col``, ``max_samples``, ``trust_remote_code``, ``feature_extractor_args`` (passed to
``AutoFeatureExtractor.from_pretrained``), ``max_duration`` (seconds, default 30: longer clips are
truncated by the extractor) and ``labels_to_filter`` (label names whose rows are dropped). As in Olive:

* rows whose label is in ``labels_to_filter`` are dropped, then labels are renumbered to the model's
  ``label2id`` by name, case-insensitively (``datasets``' ``align_labels_with_mapping``). The names are
  the label column's strings, or the ``ClassLabel`` names ``datasets`` stored with the data (an
  ``audiofolder``'s folder names); integer labels without names are taken as the model's ids;
* the first ``max_samples`` rows are kept;
* each clip is decoded with soundfile and resampled with soxr to the extractor's ``sampling_rate``
  (:mod:`olive_eval.data.audio`), then given to the extractor with ``max_length`` = rate × ``max_duration``,
  ``truncation`` and ``return_attention_mask``.

The references are the ``label`` column; ``audio_seconds`` (each clip's decoded length) is kept beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import Field

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import Columns
from olive_eval.data.components import ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess, check_columns
from olive_eval.data.sources import DataContext, Source
from olive_eval.errors import EvaluationError
from olive_eval.huggingface_env import offline

#: The references column (Olive names the aligned labels ``label``).
LABEL = "label"
#: Clips decoded at a time.
CLIPS_PER_CHUNK = 64


class AudioClassificationParams(ComponentParams):
    model_name: str | None = Field(
        None, description="Folder with the model's config and feature extractor; default: the model's own"
    )
    input_cols: list[str] = Field(default_factory=lambda: ["audio"], min_length=1, max_length=1)
    label_col: str = "label"
    max_samples: int | None = Field(None, ge=1)
    trust_remote_code: bool | None = None
    feature_extractor_args: dict[str, Any] | None = None
    max_duration: float = Field(30, gt=0)
    labels_to_filter: list[str] | None = None
    batched: bool = Field(True, description="Olive's map switch; accepted, no effect here")
    on_error: Literal["raise", "skip"] = Field("raise", description="olive-eval's: a clip that cannot be decoded")
    task: str | None = None


@register_component("pre-process", "audio_classification_pre_process")
class AudioClassificationPreProcess(PreProcess):
    Params = AudioClassificationParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: AudioClassificationParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder is not None else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        from olive_eval.data.dummy_text import read_model_config

        p: AudioClassificationParams = self.params  # type: ignore[assignment]
        audio_col = p.input_cols[0]
        check_columns(source, [audio_col], "input column")
        check_columns(source, [p.label_col], "label column")
        folder = self.processor_source(context)
        where = f"data config '{source.name}'"
        if folder is None:
            raise EvaluationError(f"{where}: audio_classification_pre_process needs the model's folder (model_name)")
        config = read_model_config(folder, DataContext(context.allow_download), p.trust_remote_code, where)
        label2id = {str(k).lower(): int(v) for k, v in (config.get("label2id") or {}).items()}
        extractor = _feature_extractor(folder, p, context.allow_download, where)
        rate = int(extractor.sampling_rate)
        keys = list(_features(extractor, [np.zeros(rate // 10, np.float32)], rate, p.max_duration))
        main_pad = float(getattr(extractor, "padding_value", 0.0))
        pad: dict[str, int | float] = {k: (0 if k == "attention_mask" else main_pad) for k in keys}
        metadata = [c for c in source.columns if c not in (audio_col, LABEL)]

        def rows() -> Iterator[tuple[pa.Table, np.ndarray]]:
            names: list[str] | None = None
            kept_rows = 0
            for table in source.chunks():
                if names is None:
                    names = _class_names(table, p.label_col)
                labels = [_label_name(v, names) for v in table.column(p.label_col).to_pylist()]
                keep = [i for i, name in enumerate(labels) if not (p.labels_to_filter and name in p.labels_to_filter)]
                if p.labels_to_filter and any(name is None for name in labels):
                    raise EvaluationError(
                        f"{where}: labels_to_filter needs label names; '{p.label_col}' has integer ids without names"
                    )
                if p.max_samples is not None:
                    keep = keep[: max(0, p.max_samples - kept_rows)]
                kept_rows += len(keep)
                ids = np.array(
                    [_model_id(table.column(p.label_col)[i].as_py(), labels[i], label2id, where) for i in keep],
                    np.int64,
                )
                yield table.take(pa.array(keep, pa.int64())), ids
                if p.max_samples is not None and kept_rows >= p.max_samples:
                    return

        def chunks() -> Iterator[Columns]:
            from olive_eval.data.audio import AudioDecodeError, decode_audio_column

            start = 0
            for table, ids in rows():
                for first in range(0, table.num_rows, CLIPS_PER_CHUNK):
                    part = table.slice(first, CLIPS_PER_CHUNK)
                    names = [f"example {start + first + i}" for i in range(part.num_rows)]
                    try:
                        clips, kept, skipped = decode_audio_column(
                            part.column(audio_col).to_pylist(), sample_rate=rate, on_error=p.on_error, names=names
                        )
                    except AudioDecodeError as exc:
                        raise EvaluationError(f"{where}: {exc}") from None
                    for message in skipped:
                        context.note(f"skipped a clip that cannot be decoded: {message}")
                    raw = table_columns(part, metadata)
                    out: Columns = dict(_features(extractor, [c.samples for c in clips], rate, p.max_duration))
                    out[LABEL] = ids[first : first + part.num_rows][kept]
                    out["audio_seconds"] = np.array([c.seconds for c in clips])
                    for c in metadata:
                        out[c] = raw[c][kept] if isinstance(raw[c], np.ndarray) else [raw[c][i] for i in kept]
                    yield out
                start += table.num_rows

        columns = [*keys, LABEL, "audio_seconds", *metadata]
        return Prepared(source.name, chunks, keys, LABEL, columns, pad, "right", None, folder)


def _feature_extractor(folder: str, p: AudioClassificationParams, allow_download: bool, where: str) -> Any:
    from transformers import AutoFeatureExtractor

    if Path(folder).is_dir() and not (Path(folder) / "preprocessor_config.json").is_file():
        raise EvaluationError(f"{where}: no feature extractor in {folder} (preprocessor_config.json)")
    try:
        with offline(allow_download):
            return AutoFeatureExtractor.from_pretrained(
                folder,
                local_files_only=not allow_download,
                trust_remote_code=bool(p.trust_remote_code),
                **(p.feature_extractor_args or {}),
            )
    except (OSError, ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise EvaluationError(f"{where}: cannot load a feature extractor from '{folder}': {first}") from None


def _features(extractor: Any, clips: list[np.ndarray], rate: int, max_duration: float) -> Columns:
    """The extractor's inputs, one clip at a time (rows keep their lengths until the batch pads them)."""
    out: dict[str, list[np.ndarray]] = {}
    for clip in clips:
        features = extractor(
            clip,
            sampling_rate=rate,
            max_length=int(rate * max_duration),
            truncation=True,
            return_attention_mask=True,
            return_tensors="np",
        )
        for key, value in features.items():
            out.setdefault(key, []).append(np.asarray(value)[0])
    return {k: (np.stack(v) if len({r.shape for r in v}) == 1 else v) for k, v in out.items()}


def _class_names(table: pa.Table, column: str) -> list[str] | None:
    """The ``ClassLabel`` names ``datasets`` stored in the Arrow schema's metadata, if any."""
    meta = (table.schema.metadata or {}).get(b"huggingface")
    if not meta:
        return None
    try:
        feature = json.loads(meta)["info"]["features"][column]
    except (ValueError, KeyError, TypeError):
        return None
    names = feature.get("names") if isinstance(feature, dict) else None
    return [str(n) for n in names] if names else None


def _label_name(value: Any, names: list[str] | None) -> str | None:
    if isinstance(value, str):
        return value
    if names is not None and isinstance(value, int) and 0 <= value < len(names):
        return names[value]
    return None


def _model_id(value: Any, name: str | None, label2id: dict[str, int], where: str) -> int:
    if name is None:
        if not isinstance(value, int):
            raise EvaluationError(f"{where}: label {value!r} is neither a class name nor an integer id")
        return value
    if not label2id:
        raise EvaluationError(f"{where}: the model config has no label2id to map label '{name}' to")
    if name.lower() not in label2id:
        raise EvaluationError(f"{where}: label '{name}' is not one of the model's labels: {', '.join(label2id)}")
    return label2id[name.lower()]
