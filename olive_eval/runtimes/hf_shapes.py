"""Why a transformers model refused a batch: the input shapes its config fixes (positions, image size, mel bins),
and the first input that does not fit them, with the config keys that fix it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _AtMost:
    limit: int

    def __str__(self) -> str:
        return f"<={self.limit}"


Dim = int | str | _AtMost


def _expected_shapes(config: Any) -> dict[str, tuple[tuple[Dim, ...], str]]:
    """The input shapes a model's config fixes, with the config keys that fix them (for error messages)."""
    out: dict[str, tuple[tuple[Dim, ...], str]] = {}
    positions = getattr(config, "max_position_embeddings", None)  # GPT-2's n_positions answers to this name too
    if isinstance(positions, int) and not config.is_encoder_decoder:
        why = f"max_position_embeddings {positions}; truncate with pre_process_data_config.max_length"
        for name in ("input_ids", "attention_mask", "token_type_ids", "position_ids"):
            out[name] = (("batch", _AtMost(positions)), why)
    size, channels = getattr(config, "image_size", None), getattr(config, "num_channels", None)
    if isinstance(size, int) and isinstance(channels, int):
        out["pixel_values"] = (("batch", channels, size, size), f"num_channels {channels}, image_size {size}")
    mels, sources = getattr(config, "num_mel_bins", None), getattr(config, "max_source_positions", None)
    if isinstance(mels, int) and isinstance(sources, int):
        out["input_features"] = (
            ("batch", mels, 2 * sources),
            f"num_mel_bins {mels}, max_source_positions {sources}: frames of the feature extractor's padding",
        )
    return out


def _fits(shape: tuple[int, ...], expected: tuple[Dim, ...]) -> bool:
    if len(shape) != len(expected):
        return False
    for got, want in zip(shape, expected, strict=True):
        if isinstance(want, _AtMost) and got > want.limit:
            return False
        if isinstance(want, int) and got != want:
            return False
    return True


def misfit(config: Any, shapes: dict[str, tuple[int, ...]]) -> str | None:
    """The first input whose shape the model's ``config`` rules out, with the shape it expects and why; or None."""
    expected = _expected_shapes(config)
    name = next((n for n, shape in shapes.items() if n in expected and not _fits(shape, expected[n][0])), None)
    if name is None:
        return None
    shape, why = expected[name]
    return f"input '{name}' has shape {list(shapes[name])}; the model expects [{', '.join(map(str, shape))}] ({why})"
