"""Decoding audio for speech evaluation: any clip a dataset holds -> a mono float32 waveform at one rate.

A clip may be a file path, the bytes of an audio file, a Hugging Face ``datasets`` audio dict (decoded
``{"array", "sampling_rate"}`` or undecoded ``{"path", "bytes"}``), or a bare waveform with its rate.
Files are decoded with soundfile (libsndfile), channels are averaged to mono, and a clip whose rate differs
from the target is resampled with soxr (band-limited; never interpolation). ``Audio.seconds`` is counted from
the decoded samples, so a header that lies about the length cannot skew a real-time factor.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from olive_eval.data.column_decode import clip_name, decode_column
from olive_eval.errors import EvaluationError, MissingDependencyError

__all__ = [
    "RESAMPLE_QUALITY",
    "Audio",
    "AudioDecodeError",
    "decode_audio",
    "decode_audio_column",
]

# soxr's default "high quality" preset (the one `soxr.resample` uses unless told otherwise).
RESAMPLE_QUALITY = "HQ"

# Full-scale values of integer PCM, so that integer waveforms land in [-1, 1) as soundfile scales files.
_INT_SCALE = {np.dtype(np.int8): 2.0**7, np.dtype(np.int16): 2.0**15, np.dtype(np.int32): 2.0**31}


class AudioDecodeError(EvaluationError, ValueError):
    """A clip could not be turned into a waveform. The message is one line: the example, then the reason.

    An :class:`EvaluationError`, so a run reports it as the data's fault in one line (as an undecodable image
    is), not as an unforeseen failure with a source location; a ``ValueError`` for callers that catch that.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = " ".join(reason.split())  # libsndfile's messages may hold newlines
        super().__init__(f"{where}: {self.reason}")


@dataclass(frozen=True, eq=False)
class Audio:
    """A decoded clip: mono float32 samples at ``sample_rate``; ``source_rate`` is the rate it was stored at."""

    samples: np.ndarray
    sample_rate: int
    source_rate: int
    seconds: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", self.samples.shape[0] / self.sample_rate)


def decode_audio(
    value: Any,
    *,
    sample_rate: int = 16000,
    where: str,
    source_rate: int | None = None,
) -> Audio:
    """Decode one clip to mono float32 at ``sample_rate``; ``where`` names the example in errors.

    ``source_rate`` is the rate of a bare waveform (or of a dict's ``array`` without ``sampling_rate``); it is
    ignored for files, whose rate comes from the file.
    """
    _check_rate(sample_rate, "sample_rate")
    if source_rate is not None:
        _check_rate(source_rate, "source_rate")
    data, rate, name = _read(value, where, source_rate)
    samples = _to_mono_float32(data, where, name)
    if samples.shape[0] == 0:
        raise AudioDecodeError(where, f"{clip_name(where, name, 'audio')} has no samples (empty audio)")
    bad = ~np.isfinite(samples)
    if bad.any():
        first, count = int(np.argmax(bad)), int(bad.sum())
        raise AudioDecodeError(
            where,
            f"{clip_name(where, name, 'audio')} has {count} non-finite sample{'s' if count > 1 else ''} (NaN or infinity), "
            f"the first at sample {first}",
        )
    if rate != sample_rate:
        soxr = _import_soxr()
        resampled = soxr.resample(samples, rate, sample_rate, quality=RESAMPLE_QUALITY)
        if resampled.shape[0] == 0:
            raise AudioDecodeError(
                where,
                f"{clip_name(where, name, 'audio')} is too short to resample: {samples.shape[0]} samples at {rate} Hz "
                f"give none at {sample_rate} Hz",
            )
        samples = np.ascontiguousarray(resampled, dtype=np.float32)
    return Audio(samples=samples, sample_rate=sample_rate, source_rate=rate)


def decode_audio_column(
    values: Sequence[Any],
    *,
    sample_rate: int = 16000,
    on_error: Literal["raise", "skip"] = "raise",
    names: Sequence[str] | None = None,
    source_rate: int | None = None,
) -> tuple[list[Audio], list[int], list[str]]:
    """Decode a column of clips. Returns (decoded clips, indices of the kept examples, messages of skipped ones).

    With ``on_error="raise"`` the first undecodable clip raises :class:`AudioDecodeError`; with ``"skip"`` it
    is left out and its one-line message is returned. ``names`` (one per example) label the examples in the
    messages (a batch of a dataset passes "example 130", its place in the data); without them the label is the
    position in ``values``, with a path found in the value.
    """
    _check_rate(sample_rate, "sample_rate")
    return decode_column(
        values,
        lambda value, where: decode_audio(value, sample_rate=sample_rate, where=where, source_rate=source_rate),
        AudioDecodeError,
        on_error,
        names,
    )


# ----------------------------------------------------------------------------------------------- reading


def _read(value: Any, where: str, source_rate: int | None) -> tuple[np.ndarray, int, str | None]:
    """(raw samples, their rate, the file's name if any) for any accepted kind of value."""
    if isinstance(value, Mapping):
        return _read_dict(value, where, source_rate)
    if isinstance(value, (str, os.PathLike)):
        return (*_read_file(Path(value), where), str(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return (*_read_bytes(bytes(value), where, None), None)
    if isinstance(value, (np.ndarray, list, tuple)):
        return _waveform(value, where, None), _rate_or_fail(source_rate, where, None), None
    raise AudioDecodeError(
        where,
        f"expected a file path, audio bytes, an audio dict or a waveform array, got {type(value).__name__}",
    )


def _read_dict(value: Mapping[str, Any], where: str, source_rate: int | None) -> tuple[np.ndarray, int, str | None]:
    path = value.get("path")
    name = str(path) if path else None
    if value.get("array") is not None:
        rate = value.get("sampling_rate")
        if rate is None:
            rate = _rate_or_fail(source_rate, where, name)
        elif isinstance(rate, bool) or not isinstance(rate, (int, np.integer, float)) or not _whole_positive(rate):
            raise AudioDecodeError(where, f"{clip_name(where, name, 'audio')} has an invalid sampling_rate {rate!r}")
        return _waveform(value["array"], where, name), int(rate), name
    if value.get("bytes") is not None:
        return (*_read_bytes(bytes(value["bytes"]), where, name), name)
    if path:
        return (*_read_file(Path(path), where), name)
    raise AudioDecodeError(
        where, f"the audio dict holds neither 'array' nor 'bytes' nor 'path' (keys: {sorted(map(str, value))})"
    )


def _read_file(path: Path, where: str) -> tuple[np.ndarray, int]:
    clip = clip_name(where, str(path), "audio file")
    if not path.exists():
        raise AudioDecodeError(where, f"{clip} does not exist")
    if path.is_dir():
        raise AudioDecodeError(where, f"{clip} is a directory")
    if path.stat().st_size == 0:
        raise AudioDecodeError(where, f"{clip} is empty (0 bytes)")
    return _soundfile_read(str(path), where, clip)


def _read_bytes(data: bytes, where: str, name: str | None) -> tuple[np.ndarray, int]:
    clip = clip_name(where, name, "audio bytes")
    if not data:
        raise AudioDecodeError(where, f"{clip} are empty (0 bytes)")
    return _soundfile_read(io.BytesIO(data), where, clip)


def _soundfile_read(source: str | io.BytesIO, where: str, clip: str) -> tuple[np.ndarray, int]:
    sf = _import_soundfile()
    try:
        # float32 output: libsndfile scales integer PCM to [-1, 1) itself
        data, rate = sf.read(source, dtype="float32", always_2d=False)
    except Exception as exc:  # libsndfile reports every unreadable input its own way; all mean "cannot decode"
        detail = getattr(exc, "error_string", None) or str(exc) or type(exc).__name__
        raise AudioDecodeError(where, f"cannot decode {clip}: {detail}") from exc
    return data, int(rate)


def _waveform(array: Any, where: str, name: str | None) -> np.ndarray:
    try:
        samples = np.array(array)  # a copy: the clip must not alias the caller's buffer
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise AudioDecodeError(where, f"{clip_name(where, name, 'audio')} is not a numeric waveform: {exc}") from exc
    if samples.ndim != 1:
        raise AudioDecodeError(
            where, f"{clip_name(where, name, 'audio')} must be a 1-D waveform, got an array of shape {samples.shape}"
        )
    if samples.dtype.kind not in "fiu":
        raise AudioDecodeError(
            where, f"{clip_name(where, name, 'audio')} is not a numeric waveform (dtype {samples.dtype})"
        )
    return samples


def _to_mono_float32(data: np.ndarray, where: str, name: str | None) -> np.ndarray:
    """Average channels (soundfile gives frames x channels) and bring integer PCM to [-1, 1) as float32."""
    if data.dtype.kind in "iu":
        if data.dtype.kind == "u":  # unsigned PCM (8-bit WAV) is centred on half scale
            half = 2.0 ** (8 * data.dtype.itemsize - 1)
            data = (data.astype(np.float64) - half) / half
        elif data.dtype in _INT_SCALE:
            data = data.astype(np.float64) / _INT_SCALE[data.dtype]
        else:
            raise AudioDecodeError(
                where, f"{clip_name(where, name, 'audio')} has an unsupported sample type {data.dtype}"
            )
    if data.ndim == 2:
        data = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    return np.ascontiguousarray(data, dtype=np.float32)


# ----------------------------------------------------------------------------------------------- helpers


def _rate_or_fail(source_rate: int | None, where: str, name: str | None) -> int:
    if source_rate is None:
        raise AudioDecodeError(
            where,
            f"{clip_name(where, name, 'waveform')} comes without a sample rate (give 'sampling_rate' or source_rate)",
        )
    return source_rate


def _whole_positive(rate: float) -> bool:
    return rate > 0 and float(rate).is_integer()  # False for NaN and infinity too


def _check_rate(rate: Any, label: str) -> None:
    if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or rate <= 0:
        raise ValueError(f"{label} must be a positive integer number of Hz, got {rate!r}")


def _import_soundfile() -> Any:
    try:
        import soundfile
    except (ImportError, OSError) as exc:  # OSError: the wheel is there but libsndfile is not
        raise MissingDependencyError("soundfile", "decoding audio") from exc
    return soundfile


def _import_soxr() -> Any:
    try:
        import soxr
    except ImportError as exc:
        raise MissingDependencyError("soxr", "resampling audio") from exc
    return soxr
