"""Speech end to end through ``olive_eval.evaluate``: espeak-ng clips transcribed by pocketsphinx (the example's
``PythonModel``) and by tiny random-weight Whisper and CTC models (``HfModel``), scored by wer/cer/mer/wil/wip and
rtfx in one metric from one pass; Olive's speech example config; and the bad inputs, each with its error."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jiwer
import numpy as np
import pytest
import soundfile
import soxr

from olive_eval import evaluate
from olive_eval.errors import ConfigError, DataError
from olive_eval.metrics.speech.normalize import olive_normalize
from olive_eval.records.parquet import read_records
from tests.config.test_olive_examples import _seed_file, json_blocks
from tests.helpers import write_jsonl
from tests.runtimes import hf_models

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIBER = ROOT / "examples" / "speech" / "transcriber.py"
SENTENCES = [
    ("please close the window before you go to bed", "en-us+klatt2", 160),
    ("the cat sat on the mat by the door", "en-us+klatt3", 150),
    ("we had fish and rice for dinner", "en-gb-x-rp+klatt", 155),
    ("turn left at the next corner and stop", "en-us+klatt", 175),
    ("the sun is shining and the sky is blue", "en-us+klatt6", 140),
    ("put the books back on the shelf", "en-us+klatt4", 185),
]
WORD_MEASURES = {"wer": jiwer.wer, "mer": jiwer.mer, "wil": jiwer.wil, "wip": jiwer.wip, "cer": jiwer.cer}


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six espeak-ng clips (22,050 Hz, so the pre-process resamples) and ``clips.jsonl`` with relative paths."""
    espeak = shutil.which("espeak-ng")
    assert espeak is not None, "espeak-ng must be installed (apt-get install espeak-ng)"
    folder = tmp_path_factory.mktemp("espeak")
    (folder / "wav").mkdir()
    rows = []
    for i, (text, voice, speed) in enumerate(SENTENCES):
        subprocess.run(
            [espeak, "-v", voice, "-s", str(speed), "-w", str(folder / "wav" / f"{i}.wav"), text], check=True
        )
        rows.append({"audio": f"wav/{i}.wav", "text": text, "speaker": voice})
    write_jsonl(folder / "clips.jsonl", rows)
    return folder


def data_config(data_file: Path, name: str = "clips", batch_size: int = 2, **pre: Any) -> dict[str, Any]:
    return {
        "name": name,
        "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
        "pre_process_data_config": {"type": "speech_transcription_pre_process", "audio_col": "audio", **pre},
        "post_process_data_config": {"type": "identity"},
        "dataloader_config": {"batch_size": batch_size},
    }


def sphinx(name: str = "sphinx", settings: str = "default", script: Path = TRANSCRIBER) -> dict[str, Any]:
    return {
        "type": "PythonModel",
        "name": name,
        "user_script": str(script),
        "model_loader": "load_transcriber",
        "model_path": settings,
    }


def deaf(tmp_path: Path) -> dict[str, Any]:
    """A stand-in for the recognizer where a test is about the references or the audio, not the transcripts: the
    same few words for every clip, at once (pocketsphinx takes most of a pass over the clips)."""
    script = tmp_path / "deaf.py"
    script.write_text("def load_transcriber(model_path):\n    return lambda batch: ['the cat'] * len(batch['text'])\n")
    return sphinx(script=script)


def run(tmp_path: Path, models: list[dict], data: list[dict], metrics: list[dict]) -> Any:
    return evaluate(
        {
            "input_model": models[0],
            "candidates": models[1:],
            "data_configs": data,
            "metrics": metrics,
            "output_dir": str(tmp_path / "out"),
        }
    )


def instances(tmp_path: Path, model: str, metric: str) -> list[dict[str, Any]]:
    return sorted(read_records(tmp_path / "out" / "instances" / model / f"{metric}.parquet"), key=lambda r: r["index"])


def seconds_at_16k(path: Path) -> float:
    samples, rate = soundfile.read(path, dtype="float32")
    return len(soxr.resample(samples, rate, 16000)) / 16000


def speech_metric(data: str = "clips", subs: list[dict] | None = None) -> dict[str, Any]:
    return {"name": "asr", "type": "accuracy", "data_config": data, "sub_types": subs or [{"name": "wer"}]}


def only_error(result: Any) -> str:
    model = next(iter(result.models.values()))
    assert model.status == "failed", model
    return model.error


# ---------------------------------------------------------------------------------------------- pocketsphinx
def test_pocketsphinx_wer_family_and_rtfx_from_one_pass(tmp_path, clips):
    subs = [
        {"name": "wer", "priority": 1, "confidence_interval": {"n_resamples": 200}},
        {"name": "rtfx", "priority": 2, "confidence_interval": {"n_resamples": 200}},
        *({"name": n} for n in ("cer", "mer", "wil", "wip")),
    ]
    result = run(tmp_path, [sphinx()], [data_config(clips / "clips.jsonl")], [speech_metric(subs=subs)])
    model = result.models["sphinx"]
    assert model.status == "ok", model.error
    rows = instances(tmp_path, "sphinx", "asr")
    preds = [olive_normalize(r["prediction"]) for r in rows]
    refs = [olive_normalize(r["references"]) for r in rows]
    assert refs == [s for s, _, _ in SENTENCES] and any(preds)
    for name, reference in WORD_MEASURES.items():
        assert model.metrics[f"asr-{name}"].value == pytest.approx(reference(refs, preds), abs=1e-12), name
    wer = model.metrics["asr-wer"]
    counts = jiwer.process_words(refs, preds)
    assert [wer.details[k] for k in ("hits", "substitutions", "deletions", "insertions")] == [
        counts.hits,
        counts.substitutions,
        counts.deletions,
        counts.insertions,
    ]
    assert wer.ci_low <= wer.value <= wer.ci_high and wer.ci_low < wer.ci_high
    np.testing.assert_allclose(
        [r["wer"] for r in rows], [jiwer.wer(r, p) for r, p in zip(refs, preds, strict=True)], atol=1e-12
    )
    # rtfx: audio seconds of the decoded 16 kHz samples, the first batch (2 clips) left out of both sums
    rtfx = model.metrics["asr-rtfx"]
    audio = sum(seconds_at_16k(clips / "wav" / f"{i}.wav") for i in range(2, len(SENTENCES)))
    assert rtfx.details["audio_seconds"] == pytest.approx(audio, rel=1e-12)
    assert rtfx.details["timed_examples"] == len(SENTENCES) - 2
    assert rtfx.value == rtfx.details["audio_seconds"] / rtfx.details["inference_seconds"]
    assert 0 < rtfx.details["inference_seconds"] < model.passes["clips"]["seconds"]
    assert rtfx.ci_low <= rtfx.value <= rtfx.ci_high
    assert [r["rtfx"] for r in rows[:2]] == ["nan", "nan"]


def test_rtfx_without_warmup_counts_every_recorded_second(tmp_path, clips):
    """With warmup_batches 0 the recorded inference seconds are the pass's timed regions, to the rounding of
    the pass summary; those regions lie inside the wall time of the inference stage."""
    subs = [{"name": "wer", "priority": 1}, {"name": "rtfx", "metric_config": {"warmup_batches": 0}}]
    result = run(tmp_path, [sphinx()], [data_config(clips / "clips.jsonl", batch_size=4)], [speech_metric(subs=subs)])
    model = result.models["sphinx"]
    assert model.status == "ok", model.error
    rtfx = model.metrics["asr-rtfx"]
    timed = model.passes["clips"]["seconds"]
    assert rtfx.details["inference_seconds"] == pytest.approx(timed, abs=1e-8)
    assert timed <= model.stage_seconds["pass:clips"] + 1e-6
    audio = sum(seconds_at_16k(clips / "wav" / f"{i}.wav") for i in range(len(SENTENCES)))
    assert rtfx.details["audio_seconds"] == pytest.approx(audio, rel=1e-12)


def test_olive_speech_example_config_validates_and_runs_unchanged(tmp_path, clips):
    block = next(b for b in json_blocks(_seed_file().read_text()) if b.get("name") == "speech_accuracy")
    assert [s["name"] for s in block["sub_types"]] == ["wer", "rtfx"]
    data = data_config(clips / "clips.jsonl", name=block["data_config"])
    result = run(tmp_path, [sphinx()], [data], [block])
    model = result.models["sphinx"]
    assert model.status == "ok", model.error
    assert model.metrics["speech_accuracy-wer"].higher_is_better is False
    assert model.metrics["speech_accuracy-rtfx"].higher_is_better is True
    assert model.metrics["speech_accuracy-rtfx"].value > 0


# ---------------------------------------------------------------------------------------------- bad input
def test_a_corrupt_audio_file_is_named_or_skipped_per_on_error(tmp_path, clips):
    folder = tmp_path / "data"
    shutil.copytree(clips, folder)
    (folder / "wav" / "3.wav").write_bytes(b"RIFF not really a wave file")
    result = run(tmp_path, [deaf(tmp_path)], [data_config(folder / "clips.jsonl")], [speech_metric()])
    error = only_error(result)
    assert "example 3" in error and "3.wav" in error and "cannot decode" in error
    assert "\n" not in error
    skip = data_config(folder / "clips.jsonl", on_error="skip")
    result = run(tmp_path / "skip", [deaf(tmp_path)], [skip], [speech_metric()])
    assert result.models["sphinx"].status == "ok"
    assert result.models["sphinx"].passes["clips"]["examples"] == len(SENTENCES) - 1
    assert any("skipped a clip" in note for note in result.models["sphinx"].passes["clips"]["notes"])


def test_a_sample_rate_the_recognizer_does_not_take(tmp_path, clips):
    result = run(tmp_path, [sphinx()], [data_config(clips / "clips.jsonl", sample_rate=8000)], [speech_metric()])
    assert "pocketsphinx's en-us model takes 16000 Hz audio, got 8000 Hz" in only_error(result)


def test_a_missing_transcript_column(tmp_path, clips):
    with pytest.raises(DataError) as error:  # found when the run is planned, before the model loads
        run(tmp_path, [sphinx()], [data_config(clips / "clips.jsonl", text_col="transcript")], [speech_metric()])
    assert "transcript" in str(error.value) and "text" in str(error.value)


def test_empty_transcripts_are_an_error_not_inf(tmp_path, clips):
    rows = [{**json.loads(line), "text": ""} for line in (clips / "clips.jsonl").read_text().splitlines()]
    data_file = write_jsonl(clips / "empty.jsonl", rows)
    result = run(tmp_path, [deaf(tmp_path)], [data_config(data_file)], [speech_metric()])
    assert "the references hold no words at all" in only_error(result)


def test_a_missing_transcript_names_the_example(tmp_path, clips):
    rows = [json.loads(line) for line in (clips / "clips.jsonl").read_text().splitlines()]
    rows[3]["text"] = None
    data_file = write_jsonl(clips / "none.jsonl", rows)
    result = run(tmp_path, [deaf(tmp_path)], [data_config(data_file)], [speech_metric()])
    assert "the reference of example 3 is a NoneType, not a str" in only_error(result)


def test_a_prediction_that_is_not_a_string_names_the_example_and_type(tmp_path, clips):
    script = tmp_path / "numbers.py"
    script.write_text(
        "def load_transcriber(model_path):\n"
        "    return lambda batch: [7 if 'shelf' in t else t for t in batch['text']]\n"
    )
    result = run(tmp_path, [sphinx(script=script)], [data_config(clips / "clips.jsonl")], [speech_metric()])
    assert "the prediction of example 5 is a int, not a str: 7" in only_error(result)


def test_rtfx_on_data_without_audio_durations_names_the_field(tmp_path, clips):
    script = tmp_path / "echo.py"
    script.write_text("def load_transcriber(model_path):\n    return lambda batch: list(batch['text'])\n")
    data_file = write_jsonl(tmp_path / "texts.jsonl", [{"row": i, "text": s} for i, (s, _, _) in enumerate(SENTENCES)])
    data = {
        "name": "texts",
        "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
        "pre_process_data_config": {"input_cols": ["row"], "label_col": "text"},
        "post_process_data_config": {"type": "identity"},
    }
    subs = [{"name": "wer", "priority": 1}, {"name": "rtfx"}]
    with pytest.raises(ConfigError) as err:  # when the run is planned, before the model loads
        run(tmp_path, [sphinx(script=script)], [data], [speech_metric("texts", subs)])
    assert err.value.path == "metrics[0].sub_types[1].name"
    assert err.value.message.startswith("accuracy sub-type 'rtfx' reads audio_seconds, which data config 'texts'")


# ---------------------------------------------------------------------------------------------- HfModel
@pytest.fixture(scope="module")
def sine_clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sines")
    rows = []
    for i in range(5):
        rate = 16000 if i % 2 else 8000
        soundfile.write(folder / f"{i}.wav", hf_models.sine_clip(0.3 + 0.1 * i, 200.0 + 150.0 * i, rate=rate), rate)
        rows.append({"audio": f"{i}.wav", "text": " ".join(hf_models.sentences(1, i)[0].split()[:3])})
    write_jsonl(folder / "clips.jsonl", rows)
    return folder


@pytest.mark.parametrize(("builder", "post"), [("build_whisper", "decode"), ("build_wav2vec2", "ctc_decode")])
def test_hf_asr_paths_score_wer_and_rtfx(tmp_path, sine_clips, builder, post):
    folder = getattr(hf_models, builder)(tmp_path / "model")
    model = {
        "type": "HfModel",
        "name": "asr",
        "model_path": str(folder),
        "task": "automatic-speech-recognition",
        "generation_kwargs": {"max_new_tokens": 4},
    }
    data = {**data_config(sine_clips / "clips.jsonl"), "post_process_data_config": {"type": post}}
    subs = [{"name": "wer", "priority": 1}, {"name": "cer"}, {"name": "rtfx", "metric_config": {"warmup_batches": 0}}]
    result = run(tmp_path, [model], [data], [speech_metric(subs=subs)])
    asr = result.models["asr"]
    assert asr.status == "ok", asr.error
    rows = instances(tmp_path, "asr", "asr")
    assert all(isinstance(r["prediction"], str) for r in rows)
    preds, refs = [olive_normalize(r["prediction"]) for r in rows], [olive_normalize(r["references"]) for r in rows]
    assert asr.metrics["asr-wer"].value == pytest.approx(jiwer.wer(refs, preds), abs=1e-12)
    assert asr.metrics["asr-cer"].value == pytest.approx(jiwer.cer(refs, preds), abs=1e-12)
    rtfx = asr.metrics["asr-rtfx"]
    audio = sum(seconds_at_16k(sine_clips / f"{i}.wav") for i in range(5))
    assert rtfx.details["audio_seconds"] == pytest.approx(audio, rel=1e-12)
    assert rtfx.details["inference_seconds"] == pytest.approx(asr.passes["clips"]["seconds"], abs=1e-8)


def test_a_sample_rate_the_processor_does_not_take(tmp_path, sine_clips):
    folder = hf_models.build_wav2vec2(tmp_path / "model")
    model = {"type": "HfModel", "name": "asr", "model_path": str(folder), "task": "automatic-speech-recognition"}
    data = {
        **data_config(sine_clips / "clips.jsonl", sample_rate=8000),
        "post_process_data_config": {"type": "ctc_decode"},
    }
    error = only_error(run(tmp_path, [model], [data], [speech_metric()]))
    assert "the model's processor takes 16000 Hz audio, but pre_process_data_config.sample_rate is 8000" in error
