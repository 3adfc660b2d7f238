"""Decoding images for vision and OCR evaluation: any image a dataset holds -> a loaded Pillow image in one mode.

An image may be a file path, the bytes of an encoded image, a Hugging Face ``datasets`` image dict
(``{"bytes", "path"}``, as ``Image(decode=False)`` stores it), a Pillow image, or a uint8 array (H, W) or
(H, W, C). Two choices follow the libraries a model's processor comes from:

- an EXIF orientation tag is applied (``ImageOps.exif_transpose``), as ``datasets`` does when it decodes, so a
  phone photo is upright whichever way it was loaded;
- transparency is composited onto white before converting to a mode without alpha, as transformers'
  ``convert_to_rgb`` does, so dark text on a transparent background stays readable (a bare
  ``convert("RGB")`` would leave transparent pixels at whatever colour they hold, often black).

Every image is fully loaded and the file closed before it is returned; the result never shares memory with
the value it came from.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from olive_eval.data.column_decode import clip_name, decode_column
from olive_eval.errors import EvaluationError, MissingDependencyError

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["ImageDecodeError", "decode_image", "decode_image_column", "image_size"]

_WHITE = (255, 255, 255, 255)


class ImageDecodeError(EvaluationError, ValueError):
    """An image could not be decoded. The message is one line: the example, then the reason.

    An :class:`EvaluationError`, so a run reports it as the data's fault in one line (not as an unforeseen
    failure with a source location); a ``ValueError`` for callers that catch that.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = " ".join(reason.split())
        super().__init__(f"{where}: {self.reason}")


def decode_image(value: Any, *, mode: str = "RGB", where: str) -> PILImage.Image:
    """Decode one image, upright and converted to ``mode``; ``where`` names the example in errors."""
    pil = _import_pillow()
    target_bands = _mode_bands(mode, pil)
    image = _open(value, where, pil)
    has_alpha = "A" in image.getbands() or "transparency" in image.info
    if has_alpha and "A" not in target_bands:
        rgba = image.convert("RGBA")
        image = pil.Image.alpha_composite(pil.Image.new("RGBA", rgba.size, _WHITE), rgba)
    return image.convert(mode)  # a new image even when the mode already matches


def decode_image_column(
    values: Sequence[Any],
    *,
    mode: str = "RGB",
    on_error: Literal["raise", "skip"] = "raise",
    names: Sequence[str] | None = None,
) -> tuple[list[PILImage.Image], list[int], list[str]]:
    """Decode a column of images. Returns (decoded images, indices of the kept examples, messages of skipped ones).

    With ``on_error="raise"`` the first undecodable image raises :class:`ImageDecodeError`; with ``"skip"`` it
    is left out and its one-line message is returned. ``names`` (one per example) label the examples in the
    messages (a batch of a dataset passes "example 130", its place in the data); without them the label is the
    position in ``values``, with a path found in the value.
    """
    _mode_bands(mode, _import_pillow())
    return decode_column(
        values, lambda value, where: decode_image(value, mode=mode, where=where), ImageDecodeError, on_error, names
    )


def image_size(image: PILImage.Image) -> tuple[int, int]:
    """(width, height) in pixels. Pillow's order; numpy's shape is (height, width)."""
    width, height = image.size
    return int(width), int(height)


# ----------------------------------------------------------------------------------------------- opening


def _open(value: Any, where: str, pil: Any) -> PILImage.Image:
    """A loaded, upright image that owns its pixels, from any accepted kind of value."""
    if isinstance(value, pil.Image.Image):
        return _decoded(lambda: value, where, "the image", pil, close=False)
    if isinstance(value, Mapping):
        path = value.get("path")
        name = str(path) if path else None
        if value.get("bytes") is not None:
            return _from_bytes(bytes(value["bytes"]), where, name, pil)
        if path:
            return _from_path(Path(path), where, pil)
        raise ImageDecodeError(
            where, f"the image dict holds neither 'bytes' nor 'path' (keys: {sorted(map(str, value))})"
        )
    if isinstance(value, (str, os.PathLike)):
        return _from_path(Path(value), where, pil)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _from_bytes(bytes(value), where, None, pil)
    if isinstance(value, np.ndarray):
        return _from_array(value, where, pil)
    raise ImageDecodeError(
        where,
        f"expected an image path, image bytes, an image dict, a PIL image or a uint8 array, got {type(value).__name__}",
    )


def _from_path(path: Path, where: str, pil: Any) -> PILImage.Image:
    clip = clip_name(where, str(path), "image file")
    if not path.exists():
        raise ImageDecodeError(where, f"{clip} does not exist")
    if path.is_dir():
        raise ImageDecodeError(where, f"{clip} is a directory")
    if path.stat().st_size == 0:
        raise ImageDecodeError(where, f"{clip} is empty (0 bytes)")
    return _decoded(lambda: pil.Image.open(path), where, clip, pil)


def _from_bytes(data: bytes, where: str, name: str | None, pil: Any) -> PILImage.Image:
    clip = clip_name(where, name, "image bytes")
    if not data:
        raise ImageDecodeError(where, f"{clip} are empty (0 bytes)")
    return _decoded(lambda: pil.Image.open(io.BytesIO(data)), where, clip, pil)


def _decoded(opener: Any, where: str, clip: str, pil: Any, *, close: bool = True) -> PILImage.Image:
    """Open, load every pixel, apply the EXIF orientation, and close the file (unless the caller owns it)."""
    try:
        image = opener()
        try:
            image.load()
            upright = _upright(image, pil)
        finally:
            if close:
                image.close()
    except pil.UnidentifiedImageError as exc:
        raise ImageDecodeError(where, f"cannot decode {clip}: not an image format Pillow recognises") from exc
    except Exception as exc:  # Pillow's plugins fail in many ways (OSError, SyntaxError, ValueError...)
        raise ImageDecodeError(where, f"cannot decode {clip}: {exc or type(exc).__name__}") from exc
    if upright.width == 0 or upright.height == 0:
        raise ImageDecodeError(where, f"{clip} is empty ({upright.width}x{upright.height} pixels)")
    return upright


def _upright(image: PILImage.Image, pil: Any) -> PILImage.Image:
    """The image turned as its EXIF orientation tag says (a loaded copy when there is no tag)."""
    try:
        orientation = image.getexif().get(0x0112)  # EXIF "Orientation"
    except Exception:  # unreadable EXIF metadata does not make the pixels unreadable
        orientation = None
    if orientation is not None and orientation != 1:
        return pil.ImageOps.exif_transpose(image)
    return image.copy()


def _from_array(array: np.ndarray, where: str, pil: Any) -> PILImage.Image:
    shape = array.shape
    ok_shape = array.ndim == 2 or (array.ndim == 3 and shape[2] in (1, 3, 4))
    if not ok_shape or array.dtype != np.uint8:
        raise ImageDecodeError(
            where,
            f"an image array must be uint8 of shape (H, W) or (H, W, C) with C in 1, 3, 4; "
            f"got {array.dtype} of shape {shape}",
        )
    if array.size == 0:
        raise ImageDecodeError(where, f"the image array is empty (shape {shape})")
    if array.ndim == 3 and shape[2] == 1:
        array = array[:, :, 0]
    # uint8 (H, W) -> "L", (H, W, 3) -> "RGB", (H, W, 4) -> "RGBA"; the copy stops the image sharing the array
    return pil.Image.fromarray(np.ascontiguousarray(array)).copy()


# ----------------------------------------------------------------------------------------------- helpers


def _mode_bands(mode: str, pil: Any) -> tuple[str, ...]:
    try:
        return pil.ImageMode.getmode(mode).bands
    except KeyError:
        raise ValueError(f"unknown Pillow image mode {mode!r} (e.g. 'RGB', 'L', 'RGBA')") from None


def _import_pillow() -> Any:
    """The Pillow modules this file uses, as one namespace (imported here: Pillow is needed only for images)."""
    try:
        from PIL import Image, ImageMode, ImageOps, UnidentifiedImageError
    except ImportError as exc:
        raise MissingDependencyError("pillow", "decoding images") from exc
    return SimpleNamespace(
        Image=Image, ImageMode=ImageMode, ImageOps=ImageOps, UnidentifiedImageError=UnidentifiedImageError
    )
