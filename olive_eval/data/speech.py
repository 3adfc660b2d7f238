"""``speech_transcription_pre_process`` (Olive's, with its parameters): clips decoded and resampled, each
clip's seconds kept as the ``audio_seconds`` column, and the model's features when it has a processor.

Audio is decoded with soundfile and resampled with soxr (never naive interpolation); the seconds come from
the decoded samples and the rate, not from file headers. A ``PythonModel`` gets the waveforms
(``audio``, a list of float32 arrays at ``sample_rate``) beside ``sampling_rate`` and every other column;
an ``HfModel`` (or an ONNX model with a processor) gets the processor's features (``input_features`` for
Whisper, ``input_values`` for CTC models). Whisper takes at most 30 s of audio: a longer clip is an
error that says so (split it, or set ``max_duration`` to skip longer clips).
"""

from __future__ import annotations

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
from olive_eval.data.sources import Source
from olive_eval.data.subsets import olive_limit_indices
from olive_eval.errors import EvaluationError

#: Clips decoded at a time (a minute of 16 kHz audio is 3.8 MB of float32).
CLIPS_PER_CHUNK = 64


class SpeechParams(ComponentParams):
    audio_col: str = "audio"
    text_col: str = "text"
    sample_rate: int = Field(16000, ge=1000, le=384000)
    max_samples: int | None = Field(None, ge=1, description="Olive's (deprecated there): the first N clips.")
    limit: float | None = Field(None, ge=0, description="The first N clips, or a fraction chosen with seed.")
    seed: int = 42
    max_duration: float | None = Field(None, gt=0, description="Skip clips longer than this (seconds).")
    on_error: Literal["raise", "skip"] = Field("raise", description="A clip that cannot be decoded: fail, or skip it.")
    model_name: str | None = Field(None, description="The processor's folder; default: the model's own, if any.")
    task: str | None = None


@register_component("pre-process", "speech_transcription_pre_process")
class SpeechTranscription(PreProcess):
    Params = SpeechParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: SpeechParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        p: SpeechParams = self.params  # type: ignore[assignment]
        check_columns(source, [p.audio_col, p.text_col], "column")
        processor = context.processor(p.model_name) if self.processor_source(context) else None
        feature_extractor = getattr(processor, "feature_extractor", processor)
        max_seconds = getattr(feature_extractor, "chunk_length", None)
        accepted = getattr(feature_extractor, "sampling_rate", None)
        if accepted is not None and int(accepted) != p.sample_rate:
            raise EvaluationError(
                f"data config '{source.name}': the model's processor takes {int(accepted)} Hz audio, but "
                f"pre_process_data_config.sample_rate is {p.sample_rate}; set it to {int(accepted)}"
            )
        metadata = [c for c in source.columns if c not in (p.audio_col, p.text_col)]

        data_dirs = _data_dirs(source)

        def chunks() -> Iterator[Columns]:
            whole = _limited(source, p)
            for start in range(0, whole.num_rows, CLIPS_PER_CHUNK):  # decoded audio is large: a few at a time
                yield from chunk(whole.slice(start, CLIPS_PER_CHUNK), start)

        def chunk(table: pa.Table, start: int) -> Iterator[Columns]:
            raw = table_columns(table)
            audio_values = _audio_values(table, p.audio_col, data_dirs)
            names = [f"example {start + i}" for i in range(table.num_rows)]
            from olive_eval.data.audio import decode_audio_column

            clips, kept, skipped = decode_audio_column(
                audio_values, sample_rate=p.sample_rate, on_error=p.on_error, names=names
            )
            for message in skipped:
                context.note(f"skipped a clip that cannot be decoded: {message}")
            rows = [(i, clip) for i, clip in zip(kept, clips, strict=True)]
            if p.max_duration is not None:
                long = [i for i, clip in rows if clip.seconds > p.max_duration]
                if long:
                    context.note(f"skipped clips longer than max_duration {p.max_duration:g} s", len(long))
                rows = [(i, clip) for i, clip in rows if clip.seconds <= p.max_duration]
            if max_seconds:
                too_long = next(((i, clip) for i, clip in rows if clip.seconds > max_seconds), None)
                if too_long is not None:
                    i, clip = too_long
                    raise EvaluationError(
                        f"data config '{source.name}': example {start + i} is {clip.seconds:.1f} s of audio; the model's processor "
                        f"takes at most {max_seconds} s (Whisper does not chunk here): split the clip, or set "
                        "pre_process_data_config.max_duration to skip longer clips"
                    )
            keep = [i for i, _ in rows]
            out: Columns = {
                "audio": [clip.samples for _, clip in rows],
                "sampling_rate": np.full(len(rows), p.sample_rate),
                "audio_seconds": np.array([clip.seconds for _, clip in rows]),
                p.text_col: [raw[p.text_col][i] for i in keep],
            }
            for c in metadata:
                column = raw[c]
                out[c] = column[keep] if isinstance(column, np.ndarray) else [column[i] for i in keep]
            if processor is not None:
                out.update(_features(feature_extractor, out["audio"], p.sample_rate))
            yield out

        inputs = ["audio"]
        pad: dict[str, int | float] = {}
        if processor is not None:
            keys = list(_features(feature_extractor, [np.zeros(p.sample_rate // 10, np.float32)], p.sample_rate))
            inputs, pad = keys, {k: 0 for k in keys if k != "input_features"}
        columns = [*inputs, "audio", "sampling_rate", "audio_seconds", p.text_col, *metadata]
        return Prepared(
            source.name,
            chunks,
            inputs,
            p.text_col,
            list(dict.fromkeys(columns)),
            pad,
            "right",
            None,
            self.processor_source(context),
        )


def _limited(source: Source, p: SpeechParams) -> pa.Table:
    table = pa.concat_tables(list(source.chunks()))
    limit = p.limit if p.limit is not None else p.max_samples
    keep = olive_limit_indices(table.num_rows, limit, p.seed)
    return table if keep is None else table.take(pa.array(keep, type=pa.int64()))


def _data_dirs(source: Source) -> list[Path]:
    """The folders of a file source's data files (relative audio paths are looked up there first)."""
    return list(dict.fromkeys(Path(f).resolve().parent for f in getattr(source, "files", None) or []))


def _audio_values(table: pa.Table, column: str, data_dirs: list[Path]) -> list[Any]:
    """Audio cells as plain values: paths, bytes, or ``{"path", "bytes"}`` / ``{"array", "sampling_rate"}``.

    A relative path is taken relative to the data file's folder when the clip is there (as an audio folder's
    ``metadata.jsonl`` lists its clips), else relative to the working directory.
    """
    values = table.column(column).to_pylist()
    if not data_dirs:
        return values
    return [_resolve(v, data_dirs) if isinstance(v, str) else v for v in values]


def _resolve(path: str, data_dirs: list[Path]) -> str:
    if Path(path).is_absolute():
        return path
    for folder in data_dirs:
        candidate = folder / path
        if candidate.exists():
            return str(candidate)
    return path


def _features(extractor: Any, clips: list[np.ndarray], sample_rate: int) -> Columns:
    """The processor's features, one example at a time (so rows keep their own lengths until batching)."""
    out: dict[str, list[np.ndarray]] = {}
    for clip in clips:
        features = extractor(clip, sampling_rate=sample_rate, return_tensors="np")
        for key, value in features.items():
            out.setdefault(key, []).append(np.asarray(value)[0])
    dense: Columns = {}
    for key, rows in out.items():
        shapes = {r.shape for r in rows}
        dense[key] = np.stack(rows) if len(shapes) == 1 else rows
    return dense
