"""HfModel and the text, vision and speech pipeline end to end, on tiny random-weight transformers models.

Every test runs ``olive_eval.evaluate`` on a JSON-lines dataset written here and checks what comes out
against the transformers model called directly on the same inputs (one example at a time, unpadded).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile
import soxr
import torch
from PIL import Image, ImageDraw
from sklearn.metrics import accuracy_score
from transformers import (
    AutoModelForCausalLM,
    AutoModelForCTC,
    AutoModelForImageClassification,
    AutoModelForSequenceClassification,
    AutoModelForSpeechSeq2Seq,
    AutoProcessor,
    AutoTokenizer,
)

import olive_eval.engine.run.run
from olive_eval import evaluate
from olive_eval.data.batch import Batch
from olive_eval.data.postprocess import CtcDecode, CtcParams
from olive_eval.data.prepared import PrepareContext
from olive_eval.data.preprocess import HuggingfacePreProcess
from olive_eval.engine.run.data_store import DataStore
from olive_eval.errors import ConfigError, DataError, EvaluationError
from olive_eval.metrics import metric_registry
from olive_eval.records.parquet import read_records
from olive_eval.runtimes.base import create_runtime
from olive_eval.runtimes.hf_config import HfModelConfig
from tests.helpers import write_jsonl
from tests.runtimes import hf_models

N_TEXTS = 23  # not a multiple of the batch sizes: the last batch is short


# ---------------------------------------------------------------------------------------------- models (built once)
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hf_models")


@pytest.fixture(scope="module")
def bert(built: Path) -> Path:
    return hf_models.build_bert(built / "bert")


@pytest.fixture(scope="module")
def bert_onnx(built: Path, bert: Path) -> Path:
    return hf_models.export_bert_onnx(bert, built / "bert_onnx" / "model.onnx")


@pytest.fixture(scope="module")
def gpt2(built: Path) -> Path:
    return hf_models.build_gpt2(built / "gpt2")


@pytest.fixture(scope="module")
def vit(built: Path) -> Path:
    return hf_models.build_vit(built / "vit")


@pytest.fixture(scope="module")
def whisper(built: Path) -> Path:
    return hf_models.build_whisper(built / "whisper")


@pytest.fixture(scope="module")
def wav2vec2(built: Path) -> Path:
    return hf_models.build_wav2vec2(built / "wav2vec2")


@pytest.fixture
def metric_names(request: pytest.FixtureRequest) -> dict[str, str]:
    """Unique names for metrics a test's user script registers, unregistered afterwards."""
    tag = re.sub(r"\W", "_", request.node.name)
    names = {"exact": f"exact_{tag}", "length": f"length_{tag}"}
    yield names
    for name in names.values():
        if name in metric_registry:
            metric_registry.unregister(name)


METRIC_SCRIPT = """
from olive_eval import register_metric


@register_metric(name="{exact}", higher_is_better=True)
def exact(prediction, reference):
    return float(isinstance(prediction, str) and prediction == reference)


@register_metric(name="{length}", higher_is_better=True)
def length(prediction, reference):
    return float(len(prediction))
"""


# ---------------------------------------------------------------------------------------------- helpers
def run(
    tmp_path: Path,
    models: list[dict[str, Any]],
    data_configs: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    device: str = "cpu",
):
    config = {
        "device": device,
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": data_configs,
        "metrics": metrics,
        "output_dir": str(tmp_path / "out"),
    }
    return evaluate(config)


def ok(result: Any) -> None:
    problems = {name: m.error for name, m in result.models.items() if m.status != "ok"}
    assert not problems, problems


def instances(tmp_path: Path, model: str, metric: str) -> list[dict[str, Any]]:
    return sorted(read_records(tmp_path / "out" / "instances" / model / f"{metric}.parquet"), key=lambda r: r["index"])


def predictions(tmp_path: Path, model: str, metric: str) -> list[Any]:
    return [r["prediction"] for r in instances(tmp_path, model, metric)]


def data_config(name: str, data_file: Path, pre: dict[str, Any], post: dict[str, Any], batch_size: int, **extra: Any):
    return {
        "name": name,
        "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
        "pre_process_data_config": pre,
        "post_process_data_config": post,
        "dataloader_config": {"batch_size": batch_size},
        **extra,
    }


def accuracy(name: str, data: str, priority: int = -1) -> dict[str, Any]:
    return {
        "name": name,
        "type": "accuracy",
        "data_config": data,
        "sub_types": [{"name": "accuracy_score", "priority": priority}],
    }


def text_data(tmp_path: Path, seed: int = 1) -> tuple[Path, list[str], list[int]]:
    texts = hf_models.sentences(N_TEXTS, seed)
    labels = np.random.default_rng(seed).integers(0, 3, N_TEXTS).tolist()
    rows = [{"text": t, "label": y, "id": f"s{i}"} for i, (t, y) in enumerate(zip(texts, labels, strict=True))]
    return write_jsonl(tmp_path / "texts.jsonl", rows), texts, labels


def direct_bert_logits(folder: Path, texts: list[str]) -> np.ndarray:
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        return np.stack([model(**tokenizer(t, return_tensors="pt")).logits[0].numpy() for t in texts])


# ---------------------------------------------------------------------------------------------- text classification
def test_bert_as_hf_model_and_as_its_onnx_export_match_the_direct_model(tmp_path, bert, bert_onnx):
    data_file, texts, labels = text_data(tmp_path)
    pre = {"input_cols": ["text"], "label_col": "label"}
    models = [
        {"type": "HfModel", "name": "hf", "model_path": str(bert), "task": "text-classification"},
        {"type": "ONNXModel", "name": "onnx", "model_path": str(bert_onnx), "processor_path": str(bert)},
    ]
    result = run(
        tmp_path,
        models,
        [
            data_config("labels", data_file, {**pre, "task": "text-classification"}, {"type": "argmax"}, 4),
            data_config("logits", data_file, pre, {"type": "identity"}, 5),
        ],
        [accuracy("acc", "labels", 1), accuracy("acc_logits", "logits")],
    )
    ok(result)
    direct = direct_bert_logits(bert, texts)
    expected_labels = direct.argmax(axis=1)
    assert len(set(expected_labels.tolist())) > 1  # the test can tell a constant model from the real one
    for name in ("hf", "onnx"):
        assert predictions(tmp_path, name, "acc") == expected_labels.tolist()
        np.testing.assert_allclose(np.array(predictions(tmp_path, name, "acc_logits")), direct, atol=1e-4, rtol=0)
        for metric in ("acc-accuracy_score", "acc_logits-accuracy_score"):
            assert result.models[name].metrics[metric].value == pytest.approx(
                accuracy_score(labels, expected_labels), abs=1e-12
            )
        assert result.models[name].passes["labels"]["examples"] == N_TEXTS
        assert result.models[name].passes["labels"]["batches"] == math.ceil(N_TEXTS / 4)
    described = result.models["hf"].runtimes[0]
    assert (described["runtime"], described["class"], described["device"], described["dtype"]) == (
        "transformers",
        "BertForSequenceClassification",
        "cpu",
        "float32",
    )


def test_models_sharing_a_tokenizer_share_one_tokenization(tmp_path, bert, bert_onnx, monkeypatch):
    """Three models with the same tokenizer folder → tokenized once; a fourth with another folder → once more."""
    data_file, texts, labels = text_data(tmp_path)
    other = tmp_path / "bert_copy"
    shutil.copytree(bert, other)
    stores: list[DataStore] = []
    tokenized_rows: list[int] = []

    class RecordingStore(DataStore):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            stores.append(self)

    original = HuggingfacePreProcess._tokenize

    def counting_tokenize(self, tokenizer, texts, names):
        tokenized_rows.append(len(texts[0]))
        return original(self, tokenizer, texts, names)

    monkeypatch.setattr(olive_eval.engine.run.run, "DataStore", RecordingStore)
    monkeypatch.setattr(HuggingfacePreProcess, "_tokenize", counting_tokenize)
    models = [
        {"type": "HfModel", "name": "hf", "model_path": str(bert), "task": "text-classification"},
        {"type": "HfModel", "name": "hf_again", "model_path": str(bert) + "/", "task": "text-classification"},
        {"type": "ONNXModel", "name": "onnx", "model_path": str(bert_onnx), "processor_path": str(bert)},
        {"type": "HfModel", "name": "hf_other_folder", "model_path": str(other), "task": "text-classification"},
    ]
    pre = {"input_cols": ["text"], "label_col": "label"}
    result = run(tmp_path, models, [data_config("d", data_file, pre, {"type": "argmax"}, 4)], [accuracy("acc", "d", 1)])
    ok(result)
    [store] = stores
    assert store.preparations == {("d", str(bert)): 1, ("d", str(other)): 1}
    assert sum(tokenized_rows) == 2 * N_TEXTS  # once per tokenizer, not once per model
    expected = accuracy_score(labels, direct_bert_logits(bert, texts).argmax(axis=1))
    assert [m.metrics["acc-accuracy_score"].value for m in result.models.values()] == pytest.approx([expected] * 4)


# ---------------------------------------------------------------------------------------------- text generation
def lm_data(tmp_path: Path, references: list[str] | None = None) -> tuple[Path, list[str]]:
    texts = hf_models.sentences(10, seed=2, max_words=7)
    rows = [{"text": t, **({"answer": references[i]} if references else {})} for i, t in enumerate(texts)]
    return write_jsonl(tmp_path / "prompts.jsonl", rows), texts


@pytest.mark.parametrize("batch_size", [1, 3])  # batches of prompts of different lengths: padded
def test_gpt2_perplexity_is_exp_of_the_mean_token_nll(tmp_path, gpt2, batch_size):
    data_file, texts = lm_data(tmp_path)
    pre = {"type": "text_generation_huggingface_pre_process", "input_cols": ["text"]}
    models = [{"type": "HfModel", "name": "gpt2", "model_path": str(gpt2), "task": "text-generation"}]
    metric = {"name": "lm", "type": "accuracy", "data_config": "lm", "sub_types": [{"name": "perplexity"}]}
    result = run(tmp_path, models, [data_config("lm", data_file, pre, {"type": "identity"}, batch_size)], [metric])
    ok(result)
    tokenizer = AutoTokenizer.from_pretrained(gpt2)
    model = AutoModelForCausalLM.from_pretrained(gpt2).eval()
    nll, tokens = 0.0, 0
    for text in texts:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        with torch.inference_mode():
            log_probs = torch.log_softmax(model(ids).logits[0, :-1].double(), dim=-1)
        nll -= log_probs[torch.arange(ids.shape[1] - 1), ids[0, 1:]].sum().item()
        tokens += ids.shape[1] - 1
    assert result.models["gpt2"].metrics["lm-perplexity"].value == pytest.approx(math.exp(nll / tokens), rel=1e-6)


def direct_generations(folder: Path, texts: list[str], **kwargs: Any) -> list[str]:
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    out = []
    for text in texts:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        with torch.inference_mode():
            generated = model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)
        out.append(tokenizer.decode(generated[0, ids.shape[1] :], skip_special_tokens=True).strip())
    return out


def generation_run(tmp_path: Path, gpt2: Path, kwargs: dict[str, Any], references: list[str], metric_names):
    """The tiny GPT-2 as an HfModel generating with ``kwargs``, decoded, scored by exact match."""
    data_file, _ = lm_data(tmp_path, references)
    script = tmp_path / "metrics.py"
    script.write_text(METRIC_SCRIPT.format(**metric_names))
    pre = {"type": "text_generation_huggingface_pre_process", "input_cols": ["text"], "label_col": "answer"}
    models = [
        {
            "type": "HfModel",
            "name": "gpt2",
            "model_path": str(gpt2),
            "task": "text-generation",
            "generation_kwargs": kwargs,
        }
    ]
    metric = {
        "name": "gen",
        "type": "accuracy",
        "data_config": "gen",
        "sub_types": [{"name": metric_names["exact"]}],
        "user_config": {"user_script": str(script)},
    }
    return run(tmp_path, models, [data_config("gen", data_file, pre, {"type": "decode"}, 4)], [metric])


def test_gpt2_generation_decodes_what_generate_gives(tmp_path, gpt2, metric_names):
    kwargs = {"max_new_tokens": 5, "do_sample": False}
    texts = hf_models.sentences(10, seed=2, max_words=7)
    direct = direct_generations(gpt2, texts, **kwargs)
    assert all(direct) and len(set(direct)) > 1
    references = [d if i % 3 else "no such answer" for i, d in enumerate(direct)]  # two thirds match
    result = generation_run(tmp_path, gpt2, kwargs, references, metric_names)
    ok(result)
    assert predictions(tmp_path, "gpt2", "gen") == direct
    expected = np.mean([d == r for d, r in zip(direct, references, strict=True)])
    assert result.models["gpt2"].metrics[f"gen-{metric_names['exact']}"].value == pytest.approx(expected)
    assert "notes" not in result.models["gpt2"].passes["gen"]


def test_an_empty_generation_is_counted_not_a_crash(tmp_path, gpt2, metric_names):
    tokenizer = AutoTokenizer.from_pretrained(gpt2)
    # the one new token is forced to be eos, which decoding skips: every generation decodes to ""
    kwargs = {"max_new_tokens": 1, "do_sample": False, "forced_eos_token_id": tokenizer.eos_token_id}
    texts = hf_models.sentences(10, seed=2, max_words=7)
    direct = direct_generations(gpt2, texts, **kwargs)
    assert direct == [""] * len(texts)
    result = generation_run(tmp_path, gpt2, kwargs, ["", *texts[1:]], metric_names)
    ok(result)
    assert predictions(tmp_path, "gpt2", "gen") == direct
    assert result.models["gpt2"].metrics[f"gen-{metric_names['exact']}"].value == pytest.approx(1 / len(texts))
    notes = result.models["gpt2"].passes["gen"]["notes"]
    assert notes == {"generations that decoded to empty text (scored as empty predictions)": len(texts)}
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["models"]["gpt2"]["passes"]["gen"]["notes"] == notes


# ---------------------------------------------------------------------------------------------- vision
def render_images(folder: Path, n: int, seed: int) -> tuple[list[Path], list[int]]:
    """Pillow drawings of different sizes (the processor resizes them), saved as PNG."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    paths = []
    for i in range(n):
        width, height = (32, 32) if i % 2 else (int(rng.integers(24, 64)), int(rng.integers(24, 64)))
        background = tuple(int(c) for c in rng.integers(0, 256, 3))
        image = Image.new("RGB", (width, height), background)
        draw = ImageDraw.Draw(image)
        x0, y0 = int(rng.integers(0, width // 2)), int(rng.integers(0, height // 2))
        fill = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if i % 3 else draw.rectangle)([x0, y0, x0 + width // 2, y0 + height // 2], fill=fill)
        path = folder / f"image_{i}.png"
        image.save(path)
        paths.append(path)
    return paths, rng.integers(0, 3, n).tolist()


def test_vit_image_classification_matches_the_direct_model(tmp_path, vit):
    paths, labels = render_images(tmp_path / "images", 14, seed=3)
    data_file = write_jsonl(
        tmp_path / "images.jsonl", [{"image": str(p), "label": y} for p, y in zip(paths, labels, strict=True)]
    )
    models = [{"type": "HfModel", "name": "vit", "model_path": str(vit), "task": "image-classification"}]
    pre = {"type": "image_classification_pre_process", "image_col": "image", "label_col": "label"}
    result = run(
        tmp_path,
        models,
        [data_config("images", data_file, pre, {"type": "argmax"}, 4)],
        [accuracy("acc", "images", 1)],
    )
    ok(result)
    processor = AutoProcessor.from_pretrained(vit)
    model = AutoModelForImageClassification.from_pretrained(vit).eval()
    direct = []
    for path in paths:
        with Image.open(path) as image, torch.inference_mode():
            pixels = processor(images=image.convert("RGB"), return_tensors="pt")["pixel_values"]
            direct.append(int(model(pixel_values=pixels).logits.argmax(-1)))
    assert len(set(direct)) > 1
    assert predictions(tmp_path, "vit", "acc") == direct
    assert result.models["vit"].metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, direct))


# ---------------------------------------------------------------------------------------------- audio classification
def test_wav2vec2_audio_classification_matches_the_direct_model(tmp_path):
    """Olive's audio_classification_pre_process feeding an HfModel (task audio-classification): the
    predictions are the model's own argmax on the clip decoded, resampled (soxr) and featurized directly."""
    from transformers import AutoFeatureExtractor, AutoModelForAudioClassification

    from tests.data.test_olive_components_audio import LABELS, build_model

    names = ["yes", "no", "up", "up", "yes", "no", "no", "yes", "up", "no"]
    rows = []
    for i, name in enumerate(names):  # tones of different pitch and length, at 8 kHz
        clip = hf_models.sine_clip(0.2 + 0.05 * i, 150.0 * (i + 1), rate=8000, seed=i)
        soundfile.write(tmp_path / f"clip{i}.wav", clip, 8000)
        rows.append({"audio": str(tmp_path / f"clip{i}.wav"), "label": name})
    data_file = write_jsonl(tmp_path / "clips.jsonl", rows)
    folder = build_model(tmp_path / "w2v2_cls")
    extractor = AutoFeatureExtractor.from_pretrained(folder)
    model = AutoModelForAudioClassification.from_pretrained(folder).eval()

    def direct_logits() -> torch.Tensor:
        out = []
        for i in range(len(names)):
            samples, rate = soundfile.read(tmp_path / f"clip{i}.wav", dtype="float32")
            resampled = soxr.resample(samples, rate, 16000, quality="HQ").astype(np.float32)
            with torch.inference_mode():
                out.append(model(**extractor(resampled, sampling_rate=16000, return_tensors="pt")).logits[0])
        return torch.stack(out)

    with torch.no_grad():  # a random head gives every clip one class: centre its logits over the clips
        model.classifier.bias.sub_(direct_logits().mean(0))
    model.save_pretrained(folder)
    direct = direct_logits().argmax(-1).tolist()
    assert len(set(direct)) > 1

    models = [{"type": "HfModel", "name": "w2v2", "model_path": str(folder), "task": "audio-classification"}]
    data = {
        "name": "clips",
        "type": "HuggingfaceContainer",
        "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
        "pre_process_data_config": {"input_cols": ["audio"], "label_col": "label", "task": "audio-classification"},
        "dataloader_config": {"batch_size": 1},
    }
    result = run(tmp_path, models, [data], [accuracy("acc", "clips", 1)])
    ok(result)
    assert predictions(tmp_path, "w2v2", "acc") == direct
    label_ids = [{v: k for k, v in LABELS.items()}[n] for n in names]
    assert result.models["w2v2"].metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(label_ids, direct))


# ---------------------------------------------------------------------------------------------- speech
TRANSCRIBER_SCRIPT = """
import torch
from transformers import AutoModelForCTC, AutoModelForSpeechSeq2Seq, AutoProcessor


class Transcriber:
    # A PythonModel: speech_transcription_pre_process hands it the waveforms ("audio") at "sampling_rate".

    def __init__(self, folder):
        self.processor = AutoProcessor.from_pretrained(folder)
        try:
            self.model, self.ctc = AutoModelForSpeechSeq2Seq.from_pretrained(folder).eval(), False
        except ValueError:
            self.model, self.ctc = AutoModelForCTC.from_pretrained(folder).eval(), True

    def predict(self, batch):
        out = []
        for clip, rate in zip(batch["audio"], batch["sampling_rate"]):
            inputs = self.processor(audio=[clip], sampling_rate=int(rate), return_tensors="pt")
            with torch.inference_mode():
                if self.ctc:
                    ids = self.model(**inputs).logits.argmax(-1)
                else:
                    ids = self.model.generate(input_features=inputs["input_features"], max_new_tokens=6)
            out.append(self.processor.batch_decode(ids, skip_special_tokens=not self.ctc)[0].strip())
        return out


def load_transcriber(model_path):
    return Transcriber(model_path)
"""

SECONDS_SCRIPT = """
@register_metric(name="{seconds}", higher_is_better=True, reads=("prediction", "audio_seconds"))
def seconds(prediction, audio_seconds):
    return float(audio_seconds)
"""


def speech_clips(tmp_path: Path) -> list[Path]:
    """Seven sine clips of different lengths and pitches; the odd ones at 8 kHz (the pre-process resamples)."""
    paths = []
    for i in range(7):
        rate = hf_models.SAMPLE_RATE if i % 2 == 0 else 8000
        clip = hf_models.sine_clip(0.3 + 0.09 * i, 180.0 + 170.0 * i, rate=rate, seed=i)
        path = tmp_path / f"clip_{i}.wav"
        soundfile.write(path, clip, rate)
        paths.append(path)
    return paths


def load_16k(path: Path) -> np.ndarray:
    """The clip at 16 kHz, resampled with soxr (as the pre-process is documented to do)."""
    samples, rate = soundfile.read(path, dtype="float32")
    return samples if rate == hf_models.SAMPLE_RATE else soxr.resample(samples, rate, hf_models.SAMPLE_RATE)


def direct_transcripts(folder: Path, paths: list[Path]) -> list[str]:
    """Each clip alone through the processor and the model, decoded as transformers documents it (for CTC:
    repeats grouped first, then blanks dropped; skipping special tokens would drop the blanks first and merge
    a letter repeated across one)."""
    processor = AutoProcessor.from_pretrained(folder)
    ctc = json.loads((folder / "config.json").read_text())["model_type"] == "wav2vec2"
    model = (AutoModelForCTC if ctc else AutoModelForSpeechSeq2Seq).from_pretrained(folder).eval()
    out = []
    for path in paths:
        inputs = processor(audio=[load_16k(path)], sampling_rate=hf_models.SAMPLE_RATE, return_tensors="pt")
        with torch.inference_mode():
            if ctc:
                ids = model(**inputs).logits.argmax(-1)
            else:
                ids = model.generate(input_features=inputs["input_features"], max_new_tokens=6)
        out.append(processor.batch_decode(ids, skip_special_tokens=not ctc)[0].strip())
    return out


def asr_run(tmp_path, model: dict[str, Any], post: str, batch_size: int, metric_names, references: list[str]):
    """``speech_transcription_pre_process`` over the clips, scored by exact match and by clip seconds."""
    paths = speech_clips(tmp_path)
    rows = [{"audio": str(p), "text": t, "clip": p.name} for p, t in zip(paths, references, strict=True)]
    data_file = write_jsonl(tmp_path / "speech.jsonl", rows)
    script = tmp_path / "speech.py"
    script.write_text(TRANSCRIBER_SCRIPT + METRIC_SCRIPT.format(**metric_names) + SECONDS_SCRIPT.format(**metric_names))
    model = {"user_script": str(script), **model} if model["type"] == "PythonModel" else model
    pre = {"type": "speech_transcription_pre_process", "audio_col": "audio", "text_col": "text"}
    data = data_config("speech", data_file, pre, {"type": post}, batch_size)
    metric = {
        "name": "asr",
        "type": "accuracy",
        "data_config": "speech",
        "sub_types": [{"name": metric_names["exact"], "priority": 1}, {"name": metric_names["seconds"]}],
        "user_config": {"user_script": str(script)},
    }
    return run(tmp_path, [model], [data], [metric])


def asr_references(direct: list[str]) -> list[str]:
    return [d if i % 2 else "not this" for i, d in enumerate(direct)]


def check_asr(tmp_path: Path, result: Any, direct: list[str], metric_names: dict[str, str]) -> None:
    """Transcripts, exact match against the references, and each clip's seconds as a metadata column."""
    ok(result)
    name = next(iter(result.models))
    assert predictions(tmp_path, name, "asr") == direct
    metrics = result.models[name].metrics
    references = asr_references(direct)
    expected = np.mean([d == r for d, r in zip(direct, references, strict=True)])
    assert metrics[f"asr-{metric_names['exact']}"].value == pytest.approx(expected)
    seconds = [soundfile.info(p).frames / soundfile.info(p).samplerate for p in sorted(tmp_path.glob("clip_*.wav"))]
    assert metrics[f"asr-{metric_names['seconds']}"].value == pytest.approx(np.mean(seconds))


@pytest.fixture
def metric_names_speech(metric_names: dict[str, str]) -> dict[str, str]:
    name = f"seconds_{metric_names['exact'].removeprefix('exact_')}"
    metric_names["seconds"] = name
    return metric_names


def hf_asr(folder: Path) -> dict[str, Any]:
    return {
        "type": "HfModel",
        "name": "asr",
        "model_path": str(folder),
        "task": "automatic-speech-recognition",
        "generation_kwargs": {"max_new_tokens": 6},
    }


def test_whisper_transcribes_like_generate_and_decode(tmp_path, whisper, metric_names_speech):
    direct = direct_transcripts(whisper, speech_clips(tmp_path))
    assert len(set(direct)) > 1
    result = asr_run(tmp_path, hf_asr(whisper), "decode", 3, metric_names_speech, asr_references(direct))
    check_asr(tmp_path, result, direct, metric_names_speech)
    assert result.models["asr"].runtimes[0]["class"] == "WhisperForConditionalGeneration"


def test_wav2vec2_ctc_logits_match_the_direct_model(tmp_path, wav2vec2, metric_names_speech):
    """The CTC path without decoding: AutoModelForSpeechSeq2Seq refuses the config, AutoModelForCTC loads it;
    each clip's frames are the model's on the clip alone, and the runtime says how many of them are its own."""
    paths = speech_clips(tmp_path)
    processor = AutoProcessor.from_pretrained(wav2vec2)
    direct_model = AutoModelForCTC.from_pretrained(wav2vec2).eval()
    direct = []
    for path in paths:
        with torch.inference_mode():
            inputs = processor(audio=[load_16k(path)], sampling_rate=hf_models.SAMPLE_RATE, return_tensors="pt")
            direct.append(direct_model(**inputs).logits[0].numpy())
    lengths = [len(d) for d in direct]
    assert len(set(lengths)) > 1
    result = asr_run(tmp_path, hf_asr(wav2vec2), "identity", 3, metric_names_speech, [""] * len(paths))
    ok(result)
    assert result.models["asr"].runtimes[0]["class"] == "Wav2Vec2ForCTC"
    # the runtime on one batch the dataloader padded
    clips = [load_16k(p) for p in paths]
    padded = processor(audio=clips, sampling_rate=hf_models.SAMPLE_RATE, return_tensors="np", padding=True)
    config = HfModelConfig(type="HfModel", model_path=str(wav2vec2), task="automatic-speech-recognition")
    runtime = create_runtime(config, "cpu", [])
    columns = {"input_values": padded["input_values"], "attention_mask": padded["attention_mask"]}
    outputs = runtime.predict(Batch(columns, list(columns)))
    assert next(iter(outputs)) == "logits"
    assert outputs["output_lengths"].tolist() == lengths
    for row, length, alone in zip(outputs["logits"], lengths, direct, strict=True):
        np.testing.assert_allclose(row[:length], alone, atol=1e-4, rtol=0)


@pytest.mark.parametrize(
    "batch_size",
    [
        1,
        3,
    ],
)
def test_wav2vec2_ctc_transcribes_like_argmax_and_batch_decode(tmp_path, wav2vec2, metric_names_speech, batch_size):
    direct = direct_transcripts(wav2vec2, speech_clips(tmp_path))
    assert len(set(direct)) > 1
    result = asr_run(tmp_path, hf_asr(wav2vec2), "ctc_decode", batch_size, metric_names_speech, asr_references(direct))
    check_asr(tmp_path, result, direct, metric_names_speech)


@pytest.mark.parametrize("which", ["whisper", "wav2vec2"])
def test_asr_through_a_python_model(tmp_path, request, which, metric_names_speech):
    folder = request.getfixturevalue(which)
    direct = direct_transcripts(folder, speech_clips(tmp_path))
    model = {"type": "PythonModel", "name": "asr", "model_loader": "load_transcriber", "model_path": str(folder)}
    result = asr_run(tmp_path, model, "identity", 3, metric_names_speech, asr_references(direct))
    check_asr(tmp_path, result, direct, metric_names_speech)


def test_loading_a_model_prints_nothing_and_restores_transformers_settings(bert, capfd):
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    assert hf_logging.is_progress_bar_enabled()
    capfd.readouterr()
    config = HfModelConfig(type="HfModel", model_path=str(bert), task="text-classification")
    create_runtime(config, "cpu", [])
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")  # no "Loading weights" bar, no warnings: a run reports through its own lines
    assert hf_logging.get_verbosity() == level and hf_logging.is_progress_bar_enabled()


def test_ctc_decode_keeps_a_letter_repeated_across_a_blank(wav2vec2):
    processor = AutoProcessor.from_pretrained(wav2vec2)
    vocab = processor.tokenizer.get_vocab()
    frames = [["h", "h", "e", "l", "<pad>", "l", "o", "|", "o", "o", "<pad>"], ["c", "<pad>", "a", "a", "t", "t"]]
    width = max(len(f) for f in frames)
    ids = np.array([[vocab[t] for t in f] + [vocab["<pad>"]] * (width - len(f)) for f in frames])
    logits = np.eye(len(vocab), dtype=np.float32)[ids]
    expected = [t.strip() for t in processor.batch_decode(ids)]
    assert expected == ["hello o", "cat"]
    context = PrepareContext("speech", wav2vec2)
    batch = Batch({"text": ["", ""]}, [])
    assert CtcDecode(CtcParams(type="ctc_decode")).apply({"logits": logits}, batch, context) == expected


# ---------------------------------------------------------------------------------------------- bad input
def text_run(tmp_path: Path, model: dict[str, Any], rows: list[dict[str, Any]] | None = None, **pre: Any):
    data_file = write_jsonl(tmp_path / "d.jsonl", rows or [{"text": "the cat sits", "label": 1}])
    pre = {"input_cols": ["text"], "label_col": "label", **pre}
    return run(tmp_path, [model], [data_config("d", data_file, pre, {"type": "argmax"}, 2)], [accuracy("acc", "d", 1)])


def test_a_tokenizer_missing_from_the_model_folder(tmp_path):
    folder = hf_models.build_bert(tmp_path / "no_tokenizer", with_tokenizer=False)
    result = text_run(tmp_path, {"type": "HfModel", "name": "bert", "model_path": str(folder)})
    message = (
        f"no tokenizer or processor in {folder} (none of tokenizer.json, tokenizer_config.json, vocab.txt, "
        "preprocessor_config.json, processor_config.json); give the model's processor folder with processor_path, "
        "or pre_process_data_config.model_name"
    )
    assert result.models["bert"].status == "failed"
    assert result.models["bert"].metrics["acc-accuracy_score"].error == message
    assert result.models["bert"].error == f"metric(s) acc failed: {message}"


def test_an_onnx_model_without_a_processor_on_text_data(tmp_path, bert_onnx):
    with pytest.raises(DataError) as error:  # when the run is planned, before the model loads
        text_run(tmp_path, {"type": "ONNXModel", "name": "onnx", "model_path": str(bert_onnx)})
    assert str(error.value) == (
        "data config 'd' needs a tokenizer or processor: give the model's folder (HfModel model_path, ONNXModel "
        "processor_path) or pre_process_data_config.model_name; a model that takes the raw columns (a PythonModel) "
        "wants pre_process_data_config.type 'skip_pre_process'"
    )


def test_remote_code_without_the_flag(tmp_path, bert):
    folder = tmp_path / "remote"
    shutil.copytree(bert, folder)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModelForSequenceClassification": "modeling_custom.CustomModel"}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError) as caught:
        text_run(tmp_path, {"type": "HfModel", "model_path": str(folder), "task": "text-classification"})
    assert str(caught.value) == (
        f"<config>: input_model.load_kwargs.trust_remote_code: {folder} ships its own model code (auto_map in "
        "config.json); set load_kwargs.trust_remote_code to true if you trust it"
    )


def test_a_hub_name_not_in_the_cache_fails_at_once_without_the_network(tmp_path, monkeypatch):
    from huggingface_hub import constants

    attempts: list[Any] = []

    def no_network(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("the test forbids the network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    name = "olive-eval-tests/no-such-tiny-bert"
    with pytest.raises(ConfigError) as caught:
        text_run(tmp_path, {"type": "HfModel", "model_path": name, "task": "text-classification"})
    assert str(caught.value) == (
        f"<config>: input_model.model_path: '{name}' is not a local folder nor in the local Hugging Face cache "
        f"({constants.HF_HUB_CACHE}); point model_path at a model folder, or allow downloads with "
        '"allow_download": true or --allow-download'
    )
    assert attempts == []


def test_a_missing_local_folder_is_not_taken_for_a_hub_name(tmp_path):
    missing = tmp_path / "no_such_model"
    with pytest.raises(ConfigError) as caught:
        text_run(tmp_path, {"type": "HfModel", "model_path": str(missing), "task": "text-classification"})
    assert str(caught.value) == f"<config>: input_model.model_path: folder not found: {missing}"


def test_an_unknown_task(tmp_path, bert):
    with pytest.raises(ConfigError) as caught:
        text_run(tmp_path, {"type": "HfModel", "model_path": str(bert), "task": "text-clasification"})
    assert str(caught.value) == (
        "<config>: input_model.task: unknown task 'text-clasification'; did you mean 'text-classification'? tasks: "
        "audio-classification, automatic-speech-recognition (speech-transcription), feature-extraction, "
        "image-classification, image-text-to-text, text-classification, text-generation, token-classification (ner), "
        "vision-chart-qa, vision-ocr, vision-vqa"
    )


def test_a_batch_whose_shapes_the_model_rejects_names_the_input_and_both_shapes(tmp_path, bert):
    rows = [{"text": "the cat sits", "label": 0}, {"text": " ".join(["dog"] * 100), "label": 1}]
    model = {"type": "HfModel", "name": "bert", "model_path": str(bert), "task": "text-classification"}
    result = text_run(tmp_path, model, rows, truncation=False)
    error = result.models["bert"].metrics["acc-accuracy_score"].error
    assert re.fullmatch(
        re.escape(
            "model 'bert' rejected the batch of examples 0..1: input 'input_ids' has shape [2, 102]; the model "
            "expects [batch, <=64] (max_position_embeddings 64; truncate with pre_process_data_config.max_length) "
            "(RuntimeError: "
        )
        + r".+\)",
        error,
    ), error
    # truncated as the tokenizer allows (its model_max_length is 64), the same data runs
    (tmp_path / "truncated").mkdir()
    ok(text_run(tmp_path / "truncated", model, rows))


def test_bad_input_of_an_audio_model_names_its_shapes(tmp_path, whisper, metric_names):
    """Features with another number of mel bins (as from another model's feature extractor)."""
    script = tmp_path / "features.py"
    features = """
import numpy as np


def short_features(columns):
    return {"input_features": np.zeros((len(columns["text"]), 8, 100), np.float32), "text": columns["text"]}
"""
    script.write_text(features + METRIC_SCRIPT.format(**metric_names))
    data_file = write_jsonl(tmp_path / "d.jsonl", [{"text": "a"}, {"text": "b"}])
    data = data_config(
        "d", data_file, {"type": "short_features", "label_col": "text"}, {"type": "decode"}, 2, user_script=str(script)
    )
    model = {"type": "HfModel", "name": "asr", "model_path": str(whisper), "task": "automatic-speech-recognition"}
    metric = {
        "name": "m",
        "type": "accuracy",
        "data_config": "d",
        "sub_types": [{"name": metric_names["exact"]}],
        "user_config": {"user_script": str(script)},
    }
    result = run(tmp_path, [model], [data], [metric])
    error = result.models["asr"].metrics[f"m-{metric_names['exact']}"].error
    assert error.startswith(
        "model 'asr' rejected the batch of examples 0..1: input 'input_features' has shape [2, 8, 100]; the model "
        "expects [batch, 16, 100] (num_mel_bins 16, max_source_positions 50: frames of the feature extractor's "
        "padding) (RuntimeError: "
    ), error


# ---------------------------------------------------------------------------------------------- devices
def test_gpu_without_cuda_is_refused(tmp_path, bert, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    data_file, _, _ = text_data(tmp_path)
    pre = {"input_cols": ["text"], "label_col": "label"}
    models = [{"type": "HfModel", "name": "hf", "model_path": str(bert), "task": "text-classification"}]
    with pytest.raises(ConfigError) as error:  # when the run is planned, before the model loads
        run(
            tmp_path,
            models,
            [data_config("d", data_file, pre, {"type": "argmax"}, 4)],
            [accuracy("acc", "d", 1)],
            "gpu",
        )
    assert str(error.value) == (
        "<config>: device: 'gpu' is asked for, but model 'hf' (HfModel) cannot run there: torch has no CUDA device; run on a "
        'machine with a GPU, or set "device": "cpu"'
    )
    with pytest.raises(EvaluationError, match=r"^device gpu was requested but torch has no CUDA device$"):
        create_runtime(HfModelConfig(**models[0]), "gpu", [])  # loading it anyway says so too


def bert_and_gpt2_on(device: str, tmp_path: Path, bert: Path, gpt2: Path, metric_names: dict[str, str]) -> None:
    """BERT logits and GPT-2 greedy generations on ``device`` match the direct model's on the CPU."""
    data_file, texts, _ = text_data(tmp_path)
    pre = {"input_cols": ["text"], "label_col": "label"}
    model = {"type": "HfModel", "name": "hf", "model_path": str(bert), "task": "text-classification"}
    result = run(
        tmp_path / "bert",
        [model],
        [data_config("d", data_file, pre, {"type": "identity"}, 4)],
        [accuracy("acc", "d", 1)],
        device,
    )
    ok(result)
    assert result.models["hf"].runtimes[0]["device"].startswith("cuda" if device == "gpu" else "cpu")
    logits = np.array(predictions(tmp_path / "bert", "hf", "acc"))
    np.testing.assert_allclose(logits, direct_bert_logits(bert, texts), atol=1e-3, rtol=0)

    kwargs = {"max_new_tokens": 5, "do_sample": False}
    prompts = hf_models.sentences(10, seed=2, max_words=7)
    direct = direct_generations(gpt2, prompts, **kwargs)
    rows = [{"text": t, "answer": d} for t, d in zip(prompts, direct, strict=True)]
    prompt_file = write_jsonl(tmp_path / "prompts.jsonl", rows)
    script = tmp_path / "metrics.py"
    script.write_text(METRIC_SCRIPT.format(**metric_names))
    gpt = {
        "type": "HfModel",
        "name": "gpt2",
        "model_path": str(gpt2),
        "task": "text-generation",
        "generation_kwargs": kwargs,
    }
    gen_pre = {"type": "text_generation_huggingface_pre_process", "input_cols": ["text"], "label_col": "answer"}
    metric = {
        "name": "gen",
        "type": "accuracy",
        "data_config": "g",
        "sub_types": [{"name": metric_names["exact"]}],
        "user_config": {"user_script": str(script)},
    }
    result = run(
        tmp_path / "gpt2", [gpt], [data_config("g", prompt_file, gen_pre, {"type": "decode"}, 4)], [metric], device
    )
    ok(result)
    assert result.models["gpt2"].runtimes[0]["device"].startswith("cuda" if device == "gpu" else "cpu")
    assert predictions(tmp_path / "gpt2", "gpt2", "gen") == direct
    assert result.models["gpt2"].metrics[f"gen-{metric_names['exact']}"].value == 1.0


@pytest.mark.gpu
def test_bert_and_gpt2_on_cuda_match_the_direct_model_on_cpu(tmp_path, bert, gpt2, metric_names):
    """Needs a CUDA device: the models run on cuda and say so."""
    bert_and_gpt2_on("gpu", tmp_path, bert, gpt2, metric_names)
