"""decode_audio / decode_audio_column against soundfile and soxr called directly, and against the signal itself.

Every clip is generated here (sine tones written with soundfile, one espeak-ng utterance), so the expected
frequency, amplitude, length and channel mix are known independently of the code under test.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

from olive_eval.data.audio import (
    RESAMPLE_QUALITY,
    Audio,
    AudioDecodeError,
    decode_audio,
    decode_audio_column,
)
from olive_eval.errors import EvaluationError, MissingDependencyError

TARGET = 16000


def tone(freq: float, rate: int, seconds: float, amplitude: float = 0.5, phase: float = 0.0) -> np.ndarray:
    t = np.arange(round(rate * seconds)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t + phase)).astype(np.float32)


def write(path: Path, data: np.ndarray, rate: int, subtype: str) -> Path:
    sf.write(str(path), data, rate, subtype=subtype)
    return path


def peak_frequency(samples: np.ndarray, rate: int) -> tuple[float, float]:
    """(frequency of the largest FFT bin, width of a bin) of a Hann-windowed signal."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size)))
    return float(np.argmax(spectrum) * rate / samples.size), rate / samples.size


def assert_one_line(exc: pytest.ExceptionInfo[BaseException], where: str, *needles: str) -> None:
    message = str(exc.value)
    assert "\n" not in message, message
    assert message.startswith(f"{where}: "), message
    for needle in needles:
        assert needle in message, message


# ----------------------------------------------------------------------------------------------- resampling

FORMATS = [("wav", "PCM_16"), ("wav", "FLOAT"), ("flac", "PCM_16"), ("flac", "PCM_24")]


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize(("ext", "subtype"), FORMATS, ids=[f"{e}-{s}" for e, s in FORMATS])
def test_resampled_tone_keeps_length_frequency_and_level(tmp_path, rate, ext, subtype):
    freq, seconds, amplitude = 1237.0, 0.731, 0.5  # under every source's Nyquist; not a whole number of bins
    path = write(tmp_path / f"tone.{ext}", tone(freq, rate, seconds, amplitude), rate, subtype)
    n = sf.info(str(path)).frames

    audio = decode_audio(path, where="example 0")

    assert isinstance(audio, Audio)
    assert audio.samples.dtype == np.float32 and audio.samples.ndim == 1
    assert (audio.sample_rate, audio.source_rate) == (TARGET, rate)
    # libsoxr's one-shot output holds round(n * out / in) samples; allow one for the rounding of halves
    assert abs(audio.samples.size - round(n * TARGET / rate)) <= 1
    assert audio.seconds == audio.samples.size / TARGET
    # the same as calling soxr on soundfile's decoding, with the same quality preset
    direct, _ = sf.read(str(path), dtype="float32")
    np.testing.assert_array_equal(audio.samples, soxr.resample(direct, rate, TARGET, quality=RESAMPLE_QUALITY))
    # the tone is still the tone: its frequency within one FFT bin, its RMS level within 1% (edges trimmed)
    peak, bin_width = peak_frequency(audio.samples, TARGET)
    assert abs(peak - freq) <= bin_width
    middle = audio.samples[TARGET // 20 : -TARGET // 20]
    assert np.sqrt(np.mean(middle.astype(np.float64) ** 2)) == pytest.approx(amplitude / np.sqrt(2), rel=0.01)


def test_target_rate_is_honoured_and_equal_rates_are_not_resampled(tmp_path):
    data = tone(440.0, 22050, 0.5)
    path = write(tmp_path / "a.wav", data, 22050, "FLOAT")

    same = decode_audio(path, sample_rate=22050, where="example 0")
    np.testing.assert_array_equal(same.samples, data)  # FLOAT files round-trip exactly; nothing resampled
    assert (same.sample_rate, same.source_rate, same.seconds) == (22050, 22050, data.size / 22050)

    at_8k = decode_audio(path, sample_rate=8000, where="example 0")
    np.testing.assert_array_equal(at_8k.samples, soxr.resample(data, 22050, 8000, quality=RESAMPLE_QUALITY))
    assert at_8k.seconds == at_8k.samples.size / 8000


@pytest.mark.parametrize(("subtype", "dtype", "full_scale"), [("PCM_16", np.int16, 2**15), ("PCM_32", np.int32, 2**31)])
def test_integer_pcm_is_scaled_to_unit_range(tmp_path, subtype, dtype, full_scale):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    pcm = rng.integers(info.min, info.max, size=4000, endpoint=True, dtype=dtype)
    pcm[:2] = [info.min, info.max]
    path = tmp_path / "pcm.wav"
    sf.write(str(path), pcm, TARGET, subtype=subtype)

    from_file = decode_audio(path, where="example 0").samples
    from_array = decode_audio(pcm, source_rate=TARGET, where="example 0").samples

    expected = (pcm.astype(np.float64) / full_scale).astype(np.float32)
    np.testing.assert_array_equal(from_file, expected)
    np.testing.assert_array_equal(from_array, expected)
    assert from_file.min() == -1.0 and from_file.max() <= 1.0  # int32 full scale rounds to 1.0 in float32


def test_unsigned_8bit_wav_is_centred(tmp_path):
    data = tone(300.0, 8000, 0.25, amplitude=0.75)
    path = write(tmp_path / "u8.wav", data, 8000, "PCM_U8")
    direct, _ = sf.read(str(path), dtype="float32")
    assert abs(float(direct.mean())) < 0.02  # soundfile's own reading: centred on 0, not on half scale

    audio = decode_audio(path, where="example 0")

    np.testing.assert_array_equal(audio.samples, soxr.resample(direct, 8000, TARGET, quality=RESAMPLE_QUALITY))
    assert float(np.abs(audio.samples).max()) == pytest.approx(0.75, abs=0.03)


# ----------------------------------------------------------------------------------------------- channels


def test_stereo_is_averaged_to_mono(tmp_path):
    left, right = tone(500.0, TARGET, 0.5, 0.6), tone(2100.0, TARGET, 0.5, 0.3, phase=1.0)
    path = write(tmp_path / "stereo.wav", np.stack([left, right], axis=1), TARGET, "FLOAT")

    audio = decode_audio(path, where="example 0")

    np.testing.assert_allclose(audio.samples, (left.astype(np.float64) + right) / 2, rtol=0, atol=1e-7)
    assert audio.samples.ndim == 1 and audio.seconds == 0.5


def test_stereo_is_averaged_before_resampling(tmp_path):
    left, right = tone(700.0, 44100, 0.4, 0.4), tone(3300.0, 44100, 0.4, 0.4)
    path = write(tmp_path / "stereo.flac", np.stack([left, right], axis=1), 44100, "PCM_24")
    direct, _ = sf.read(str(path), dtype="float32")
    assert direct.shape[1] == 2

    audio = decode_audio(path, where="example 0")

    mono = direct.mean(axis=1, dtype=np.float32)
    np.testing.assert_allclose(
        audio.samples, soxr.resample(mono, 44100, TARGET, quality=RESAMPLE_QUALITY), rtol=0, atol=1e-6
    )
    spectrum = np.abs(np.fft.rfft(audio.samples * np.hanning(audio.samples.size)))
    bins = spectrum.size
    level = {f: spectrum[round(f * 2 * (bins - 1) / TARGET)] for f in (700.0, 3300.0, 1500.0)}
    assert level[700.0] > 100 * level[1500.0] and level[3300.0] > 100 * level[1500.0]  # both channels present


# ----------------------------------------------------------------------------------------------- input kinds


def test_every_input_kind_gives_the_same_clip(tmp_path):
    data = np.stack([tone(880.0, 44100, 0.3, 0.5), tone(440.0, 44100, 0.3, 0.2)], axis=1)
    path = write(tmp_path / "clip.wav", data, 44100, "PCM_16")
    raw = path.read_bytes()
    decoded, rate = sf.read(str(path), dtype="float32")
    mono = decoded.mean(axis=1, dtype=np.float32)

    reference = decode_audio(str(path), where="example 0")
    variants = {
        "Path": path,
        "bytes": raw,
        "bytearray": bytearray(raw),
        "hf undecoded, bytes": {"bytes": raw, "path": "clip.wav"},
        "hf undecoded, path only": {"bytes": None, "path": str(path)},
        "hf decoded": {"path": "clip.wav", "array": mono.astype(np.float64), "sampling_rate": rate},
        "hf decoded, list": {"array": mono.tolist(), "sampling_rate": rate},
        "array": mono,
    }
    for label, value in variants.items():
        kwargs = {"source_rate": rate} if label == "array" else {}
        audio = decode_audio(value, where="example 0", **kwargs)
        np.testing.assert_array_equal(audio.samples, reference.samples, err_msg=label)
        assert (audio.sample_rate, audio.source_rate, audio.seconds) == (TARGET, 44100, reference.seconds), label


def test_array_input_is_copied():
    data = tone(440.0, TARGET, 0.1)
    audio = decode_audio(data, source_rate=TARGET, where="example 0")
    data[:] = 0
    assert np.abs(audio.samples).max() > 0.4


def test_sample_rate_arguments_are_checked():
    with pytest.raises(ValueError, match="sample_rate must be a positive integer"):
        decode_audio(np.zeros(10, np.float32), source_rate=TARGET, sample_rate=0, where="example 0")
    with pytest.raises(ValueError, match="source_rate must be a positive integer"):
        decode_audio(np.zeros(10, np.float32), source_rate=16000.5, where="example 0")


# ----------------------------------------------------------------------------------------------- bad input


def _wav_bytes(data: np.ndarray, rate: int = TARGET) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, data, rate, format="WAV", subtype="FLOAT")
    return buffer.getvalue()


def test_corrupt_bytes_name_the_example_and_the_file():
    where = "example 12 (clips/a.wav)"
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(b"this is not a riff header" * 4, where=where)
    assert_one_line(exc, where, "cannot decode", "Format not recognised")

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio({"bytes": b"\x00\x01" * 50, "path": "clips/b.flac"}, where="example 3")
    assert_one_line(exc, "example 3", "clips/b.flac", "cannot decode")


def test_corrupt_file_names_the_file(tmp_path):
    path = tmp_path / "broken.wav"
    path.write_bytes(_wav_bytes(tone(440.0, TARGET, 0.1))[:30])  # header cut short
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(path, where="example 4")
    assert_one_line(exc, "example 4", str(path), "cannot decode")
    assert isinstance(exc.value, ValueError) and exc.value.where == "example 4"


def test_empty_file_and_empty_audio(tmp_path):
    empty_file = tmp_path / "empty.wav"
    empty_file.write_bytes(b"")
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(empty_file, where="example 0")
    assert_one_line(exc, "example 0", str(empty_file), "empty (0 bytes)")

    no_frames = tmp_path / "silence.wav"
    no_frames.write_bytes(_wav_bytes(np.zeros(0, np.float32)))
    assert sf.info(str(no_frames)).frames == 0  # a valid WAV with no samples
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(no_frames, where="example 1")
    assert_one_line(exc, "example 1", "silence.wav", "no samples")

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio({"array": [], "sampling_rate": TARGET}, where="example 2")
    assert_one_line(exc, "example 2", "no samples")


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(tmp_path / "nope.wav", where="example 5")
    assert_one_line(exc, "example 5", "nope.wav", "does not exist")

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio({"path": str(tmp_path / "gone.flac"), "bytes": None}, where="example 6")
    assert_one_line(exc, "example 6", "gone.flac", "does not exist")

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(tmp_path, where="example 7")
    assert_one_line(exc, "example 7", "is a directory")


def test_array_without_a_rate():
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(tone(440.0, TARGET, 0.1), where="example 8")
    assert_one_line(exc, "example 8", "without a sample rate")

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio({"array": tone(440.0, TARGET, 0.1), "path": "x.wav"}, where="example 9")
    assert_one_line(exc, "example 9", "x.wav", "without a sample rate")

    # a dict without its rate takes source_rate when given
    audio = decode_audio({"array": tone(440.0, 8000, 0.1)}, source_rate=8000, where="example 9")
    assert audio.source_rate == 8000 and audio.samples.size == 1600


@pytest.mark.parametrize(
    ("value", "kwargs", "needle"),
    [
        (np.array([0.1, np.nan, 0.2, np.inf], np.float32), {"source_rate": TARGET}, "2 non-finite samples"),
        (np.zeros((2, 100), np.float32), {"source_rate": TARGET}, "1-D waveform"),
        (np.array(["a", "b"]), {"source_rate": TARGET}, "not a numeric waveform"),
        (np.zeros(10, np.int64), {"source_rate": TARGET}, "unsupported sample type int64"),
        ({"array": np.zeros(10), "sampling_rate": -5}, {}, "invalid sampling_rate"),
        ({"array": np.zeros(10), "sampling_rate": 16000.5}, {}, "invalid sampling_rate"),
        ({"array": np.zeros(10), "sampling_rate": float("nan")}, {}, "invalid sampling_rate"),
        ({"array": np.zeros(10), "sampling_rate": "16k"}, {}, "invalid sampling_rate"),
        ({"path": None, "bytes": None}, {}, "neither 'array' nor 'bytes' nor 'path'"),
        (12345, {}, "got int"),
        (b"", {}, "empty (0 bytes)"),
        (np.ones(1, np.float32), {"source_rate": 48000}, "too short to resample"),
    ],
    ids=[
        "non-finite",
        "2-D",
        "strings",
        "int64",
        "negative-rate",
        "fractional-rate",
        "nan-rate",
        "string-rate",
        "empty-dict",
        "int",
        "no-bytes",
        "1-sample",
    ],
)
def test_bad_values_get_one_line_errors(value, kwargs, needle):
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(value, where="example 10", **kwargs)
    assert_one_line(exc, "example 10", needle)


def test_non_finite_samples_in_a_file(tmp_path):
    data = tone(440.0, TARGET, 0.1)
    data[7] = np.nan
    path = write(tmp_path / "nan.wav", data, TARGET, "FLOAT")
    with pytest.raises(AudioDecodeError) as exc:
        decode_audio(path, where="example 11")
    assert_one_line(exc, "example 11", "nan.wav", "1 non-finite sample (", "the first at sample 7")


# ----------------------------------------------------------------------------------------------- columns


def test_column_skip_keeps_the_others(tmp_path):
    good = write(tmp_path / "good.wav", tone(440.0, 22050, 0.2), 22050, "PCM_16")
    values = [
        good,
        b"garbage bytes, not audio",
        str(tmp_path / "missing.wav"),
        {"array": tone(440.0, 8000, 0.2), "sampling_rate": 8000},
        np.zeros(0, np.float32),
    ]

    audios, kept, messages = decode_audio_column(values, on_error="skip", source_rate=8000)

    assert kept == [0, 3]
    assert len(audios) == 2
    np.testing.assert_array_equal(audios[0].samples, decode_audio(good, where="x").samples)
    np.testing.assert_array_equal(audios[1].samples, decode_audio(values[3], where="x").samples)
    assert len(messages) == 3
    assert messages[0].startswith("example 1: cannot decode")
    assert messages[1].startswith(f"example 2 ({tmp_path / 'missing.wav'}): ") and "does not exist" in messages[1]
    assert messages[2].startswith("example 4: ") and "no samples" in messages[2]
    assert all("\n" not in message for message in messages)


def test_column_raise_stops_at_the_first_bad_example_and_uses_names(tmp_path):
    good = write(tmp_path / "good.wav", tone(440.0, TARGET, 0.1), TARGET, "PCM_16")
    values = [good, good, b"not audio at all", b"nor this"]
    names = ["example 40", "example 41", "example 42", "example 43"]

    with pytest.raises(AudioDecodeError) as exc:
        decode_audio_column(values, names=names)
    assert_one_line(exc, "example 42", "cannot decode the audio bytes")  # the name as given, as images label them
    assert isinstance(exc.value, EvaluationError)  # the data's fault, reported in one line by a run

    audios, kept, messages = decode_audio_column(values[:2], names=names[:2])
    assert kept == [0, 1] and messages == [] and [a.seconds for a in audios] == [0.1, 0.1]


def test_column_arguments_are_checked():
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'skip'"):
        decode_audio_column([], on_error="ignore")
    with pytest.raises(ValueError, match="names has 1 entries for 2 values"):
        decode_audio_column([b"", b""], names=["a"])
    assert decode_audio_column([]) == ([], [], [])


# ----------------------------------------------------------------------------------------------- dependencies


def test_missing_soundfile_names_the_install_command(tmp_path, monkeypatch):
    path = write(tmp_path / "a.wav", tone(440.0, TARGET, 0.1), TARGET, "PCM_16")
    monkeypatch.setitem(sys.modules, "soundfile", None)
    with pytest.raises(MissingDependencyError, match="pip install soundfile"):
        decode_audio(path, where="example 0")
    # a waveform needs no file decoder
    assert decode_audio(tone(440.0, TARGET, 0.1), source_rate=TARGET, where="example 0").samples.size == 1600


def test_missing_soxr_names_the_install_command_only_when_resampling(monkeypatch):
    monkeypatch.setitem(sys.modules, "soxr", None)
    assert decode_audio(tone(440.0, TARGET, 0.1), source_rate=TARGET, where="example 0").samples.size == 1600
    with pytest.raises(MissingDependencyError, match="pip install soxr"):
        decode_audio(tone(440.0, 8000, 0.1), source_rate=8000, where="example 0")


def test_missing_dependency_is_not_skipped_as_a_bad_example(monkeypatch):
    monkeypatch.setitem(sys.modules, "soundfile", None)
    with pytest.raises(MissingDependencyError):
        decode_audio_column([b"RIFF...."], on_error="skip")


# ----------------------------------------------------------------------------------------------- real speech


def test_espeak_ng_clip_is_decoded_and_resampled(tmp_path):
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is not installed: install it (apt-get install espeak-ng); CI installs it")
    path = tmp_path / "hello.wav"
    subprocess.run([espeak, "-w", str(path), "hello world"], check=True, capture_output=True, timeout=60)
    info = sf.info(str(path))
    direct, rate = sf.read(str(path), dtype="float32")

    audio = decode_audio(path, where="example 0 (hello.wav)")

    assert info.samplerate != TARGET  # espeak-ng writes 22050 Hz, so this clip really is resampled
    assert (audio.sample_rate, audio.source_rate) == (TARGET, info.samplerate)
    assert audio.seconds > 0.3
    assert audio.seconds == audio.samples.size / TARGET
    assert abs(audio.seconds - direct.shape[0] / rate) <= 1 / TARGET
    np.testing.assert_array_equal(audio.samples, soxr.resample(direct, rate, TARGET, quality=RESAMPLE_QUALITY))
    assert np.sqrt(np.mean(audio.samples.astype(np.float64) ** 2)) > 0.01  # speech, not silence
