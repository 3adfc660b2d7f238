"""decode_image / decode_image_column against Pillow and ``datasets`` decoding the same images directly.

Every image is rendered here with Pillow (text in the default font, flat colours, alpha ramps), so the
expected pixels are known independently of the code under test.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import datasets
import numpy as np
import psutil
import pytest
from PIL import Image, ImageDraw, ImageFont, ImageOps

from olive_eval.data.images import ImageDecodeError, decode_image, decode_image_column, image_size
from olive_eval.errors import MissingDependencyError


def rendered_text(text: str = "TOTAL 12.50 EUR", size: tuple[int, int] = (220, 48)) -> Image.Image:
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).text((8, 12), text, fill=(20, 20, 20), font=ImageFont.load_default())
    return image


def encoded(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image)


def assert_one_line(exc: pytest.ExceptionInfo[BaseException], where: str, *needles: str) -> None:
    message = str(exc.value)
    assert "\n" not in message, message
    assert message.startswith(f"{where}: "), message
    for needle in needles:
        assert needle in message, message


def hf_decode(value: dict, mode: str | None = "RGB") -> Image.Image:
    """The ``datasets`` library's own decoding of an undecoded image dict."""
    return datasets.Image(mode=mode).decode_example(value)


# ----------------------------------------------------------------------------------------------- input kinds


def test_rendered_text_png_from_every_input_kind(tmp_path):
    original = rendered_text()
    expected = pixels(original)
    assert (expected < 128).any(axis=2).sum() > 50  # the text really is drawn
    path = tmp_path / "receipt.png"
    original.save(path)
    raw = path.read_bytes()

    variants = {
        "str": str(path),
        "Path": path,
        "bytes": raw,
        "memoryview": memoryview(raw),
        "hf dict, bytes": {"bytes": raw, "path": "receipt.png"},
        "hf dict, path only": {"bytes": None, "path": str(path)},
        "PIL image": original,
        "PIL image, lazily opened": Image.open(path),
        "array": expected,
    }
    for label, value in variants.items():
        image = decode_image(value, where="example 0")
        assert image.mode == "RGB", label
        assert image_size(image) == (220, 48) == (image.width, image.height), label
        np.testing.assert_array_equal(pixels(image), expected, err_msg=label)  # PNG is lossless
    np.testing.assert_array_equal(pixels(hf_decode({"bytes": raw, "path": None})), expected)


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_jpeg_bytes_match_pillow_and_datasets(mode):
    raw = encoded(rendered_text("Invoice no. 4711"), "JPEG", quality=80)

    image = decode_image(raw, mode=mode, where="example 1")

    with Image.open(io.BytesIO(raw)) as reference:
        np.testing.assert_array_equal(pixels(image), pixels(reference.convert(mode)))
    np.testing.assert_array_equal(pixels(image), pixels(hf_decode({"bytes": raw, "path": None}, mode)))
    assert image.mode == mode


def test_exif_orientation_is_applied_as_datasets_does(tmp_path):
    upright = rendered_text("ROTATED", size=(120, 40))
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to view": the stored pixels lie on their side
    raw = encoded(upright.transpose(Image.Transpose.ROTATE_90), "JPEG", quality=95, exif=exif)
    path = tmp_path / "photo.jpg"
    path.write_bytes(raw)

    for value in (raw, path, {"bytes": raw, "path": None}, Image.open(path)):
        image = decode_image(value, where="example 2")
        assert image_size(image) == (120, 40)
        np.testing.assert_array_equal(pixels(image), pixels(hf_decode({"bytes": raw, "path": None})))
        with Image.open(io.BytesIO(raw)) as reference:
            np.testing.assert_array_equal(pixels(image), pixels(ImageOps.exif_transpose(reference).convert("RGB")))
    # the result no longer carries the tag, so decoding it again does not turn it twice
    again = decode_image(decode_image(raw, where="example 2"), where="example 2")
    assert image_size(again) == (120, 40)


def test_numpy_arrays():
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    gray = rng.integers(0, 256, size=(5, 7), dtype=np.uint8)

    np.testing.assert_array_equal(pixels(decode_image(rgb, where="example 0")), rgb)
    from_gray = pixels(decode_image(gray, where="example 0"))
    assert from_gray.shape == (5, 7, 3)
    for channel in range(3):
        np.testing.assert_array_equal(from_gray[:, :, channel], gray)
    np.testing.assert_array_equal(pixels(decode_image(gray[:, :, None], where="example 0")), from_gray)
    np.testing.assert_array_equal(pixels(decode_image(gray, mode="L", where="example 0")), gray)
    # a strided view (every other column, channels reversed) is taken as the values it shows
    view = rgb[:, ::2, ::-1]
    np.testing.assert_array_equal(pixels(decode_image(view, where="example 0")), view)


def test_result_owns_its_pixels():
    array = np.full((4, 4, 3), 200, np.uint8)
    from_array = decode_image(array, where="example 0")
    array[:] = 0
    assert pixels(from_array).min() == 200

    source = Image.new("RGB", (4, 4), (10, 20, 30))
    from_image = decode_image(source, where="example 0")
    assert from_image is not source
    source.paste((0, 0, 0), (0, 0, 4, 4))
    assert pixels(from_image)[0, 0].tolist() == [10, 20, 30]


def test_files_are_closed(tmp_path):
    paths = []
    for index in range(3):
        path = tmp_path / f"page{index}.png"
        rendered_text(f"page {index}").save(path)
        paths.append(path)
    process = psutil.Process()

    images, kept, _ = decode_image_column([*paths, {"path": str(paths[0]), "bytes": None}])

    still_open = {Path(f.path).name for f in process.open_files()} & {p.name for p in paths}
    assert still_open == set()
    assert kept == [0, 1, 2, 3] and all(pixels(image).shape == (48, 220, 3) for image in images)


# ----------------------------------------------------------------------------------------------- modes


def test_grayscale_to_rgb_and_rgb_to_grayscale():
    gray = Image.fromarray(np.arange(0, 250, 10, dtype=np.uint8).reshape(5, 5))
    raw = encoded(gray, "PNG")

    as_rgb = pixels(decode_image(raw, where="example 0"))
    assert as_rgb.shape == (5, 5, 3)
    assert (as_rgb == pixels(gray)[:, :, None]).all()

    colours = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [90, 160, 30]]], dtype=np.uint8)
    as_gray = pixels(decode_image(colours, mode="L", where="example 0")).astype(np.int64)
    # ITU-R 601-2 luma, the conversion Pillow documents for "L"
    luma = colours.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    np.testing.assert_allclose(as_gray, luma, atol=1)


def test_rgba_is_composited_on_white():
    colour = np.array([30, 60, 200], dtype=np.float64)
    alpha = np.array([0, 64, 128, 255], dtype=np.float64)
    rgba = np.zeros((1, 4, 4), np.uint8)
    rgba[0, :, :3] = colour
    rgba[0, :, 3] = alpha
    expected = colour[None, :] * (alpha[:, None] / 255) + 255 * (1 - alpha[:, None] / 255)

    for value in (rgba, encoded(Image.fromarray(rgba), "PNG"), Image.fromarray(rgba)):
        as_rgb = pixels(decode_image(value, where="example 0")).astype(np.float64)
        assert as_rgb.shape == (1, 4, 3)
        np.testing.assert_allclose(as_rgb[0], expected, atol=1)
    np.testing.assert_array_equal(pixels(decode_image(rgba, mode="RGBA", where="example 0")), rgba)


def test_transparent_text_stays_readable():
    """Dark text on a transparent background: on white it reads as dark-on-light, as a processor would see it."""
    image = Image.new("RGBA", (160, 40), (0, 0, 0, 0))
    ImageDraw.Draw(image).text((6, 10), "PAID", fill=(0, 0, 0, 255), font=ImageFont.load_default())
    decoded = pixels(decode_image(encoded(image, "PNG"), mode="L", where="example 0"))
    alpha = pixels(image)[:, :, 3]
    assert (decoded[alpha == 0] == 255).all()
    assert (decoded[alpha == 255] == 0).all()


def test_palette_with_transparency_is_composited_on_white():
    palette_image = Image.new("P", (3, 1))
    palette_image.putpalette([0, 0, 0, 255, 0, 0, 0, 0, 255] + [0] * (256 * 3 - 9))
    palette_image.putdata([0, 1, 2])
    raw = encoded(palette_image, "PNG", transparency=0)  # index 0 (black) is fully transparent

    decoded = pixels(decode_image(raw, where="example 0"))

    assert decoded[0].tolist() == [[255, 255, 255], [255, 0, 0], [0, 0, 255]]


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown Pillow image mode 'RGBX2'"):
        decode_image(np.zeros((2, 2), np.uint8), mode="RGBX2", where="example 0")


# ----------------------------------------------------------------------------------------------- bad input


def test_corrupt_bytes_and_truncated_files_name_the_example(tmp_path):
    with pytest.raises(ImageDecodeError) as exc:
        decode_image(b"definitely not an image" * 3, where="example 3")
    assert_one_line(exc, "example 3", "cannot decode", "not an image format")

    with pytest.raises(ImageDecodeError) as exc:
        decode_image({"bytes": b"\x89PNG garbage", "path": "scans/p1.png"}, where="example 4")
    assert_one_line(exc, "example 4", "scans/p1.png", "cannot decode")

    truncated = tmp_path / "cut.png"
    raw = encoded(rendered_text(), "PNG")
    truncated.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ImageDecodeError) as exc:
        decode_image(truncated, where="example 5")
    assert_one_line(exc, "example 5", "cut.png", "cannot decode")
    assert isinstance(exc.value, ValueError) and exc.value.where == "example 5"


def test_missing_empty_and_directory_paths(tmp_path):
    with pytest.raises(ImageDecodeError) as exc:
        decode_image(tmp_path / "missing.png", where="example 6")
    assert_one_line(exc, "example 6", "missing.png", "does not exist")

    with pytest.raises(ImageDecodeError) as exc:
        decode_image({"bytes": None, "path": str(tmp_path / "gone.jpg")}, where="example 7 (gone.jpg)")
    assert_one_line(exc, "example 7 (gone.jpg)", "gone.jpg", "does not exist")

    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageDecodeError) as exc:
        decode_image(empty, where="example 8")
    assert_one_line(exc, "example 8", "empty.png", "empty (0 bytes)")

    with pytest.raises(ImageDecodeError) as exc:
        decode_image(tmp_path, where="example 9")
    assert_one_line(exc, "example 9", "is a directory")


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (np.zeros((4, 4), np.float32), "must be uint8"),
        (np.zeros((4, 4, 2), np.uint8), "must be uint8 of shape"),
        (np.zeros((4,), np.uint8), "must be uint8 of shape"),
        (np.zeros((0, 4, 3), np.uint8), "empty"),
        ({"path": None}, "neither 'bytes' nor 'path'"),
        (b"", "empty (0 bytes)"),
        (3.5, "got float"),
    ],
    ids=["float", "two-channels", "1-D", "zero-height", "empty-dict", "no-bytes", "float-scalar"],
)
def test_bad_values_get_one_line_errors(value, needle):
    with pytest.raises(ImageDecodeError) as exc:
        decode_image(value, where="example 10")
    assert_one_line(exc, "example 10", needle)


# ----------------------------------------------------------------------------------------------- columns


def test_column_skip_keeps_the_others(tmp_path):
    good = tmp_path / "good.png"
    rendered_text().save(good)
    values = [good, b"not an image", str(tmp_path / "missing.png"), np.zeros((3, 3), np.uint8)]

    images, kept, messages = decode_image_column(values, on_error="skip")

    assert kept == [0, 3]
    np.testing.assert_array_equal(pixels(images[0]), pixels(rendered_text()))
    np.testing.assert_array_equal(pixels(images[1]), np.zeros((3, 3, 3), np.uint8))
    assert len(messages) == 2
    assert messages[0].startswith("example 1: cannot decode")
    assert messages[1].startswith(f"example 2 ({tmp_path / 'missing.png'}): ") and "does not exist" in messages[1]
    assert all("\n" not in message for message in messages)


def test_column_raise_names_the_example(tmp_path):
    values = [np.zeros((2, 2), np.uint8), b"broken", b"also broken"]
    with pytest.raises(ImageDecodeError) as exc:
        decode_image_column(values, names=["example 7", "example 8", "example 9"])
    assert_one_line(exc, "example 8", "cannot decode")

    images, kept, messages = decode_image_column(values[:1], mode="L")
    assert kept == [0] and messages == [] and images[0].mode == "L"


def test_column_arguments_are_checked():
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'skip'"):
        decode_image_column([], on_error="warn")
    with pytest.raises(ValueError, match="names has 2 entries for 1 values"):
        decode_image_column([b""], names=["a", "b"])
    assert decode_image_column([]) == ([], [], [])


def test_missing_pillow_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(MissingDependencyError, match="pip install pillow"):
        decode_image(b"\x89PNG", where="example 0")
    with pytest.raises(MissingDependencyError, match="pip install pillow"):
        decode_image_column([b"\x89PNG"], on_error="skip")
