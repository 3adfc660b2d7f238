"""Olive's audio_classification_pre_process: clips decoded and resampled, labels renumbered to the model's
ids by name, features from the model's own feature extractor (checked against soundfile + soxr + the
extractor called directly, and fed to the model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval.config.data import DataConfig
from olive_eval.errors import EvaluationError
from tests.helpers import batches_of

LABELS = {0: "yes", 1: "no", 2: "up"}


def build_model(folder: Path) -> Path:
    import torch
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2ForSequenceClassification

    torch.manual_seed(0)
    config = Wav2Vec2Config(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(8, 8),
        conv_kernel=(10, 4),
        conv_stride=(5, 4),
        num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2,
        feat_extract_norm="layer",
        do_stable_layer_norm=True,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        mask_time_prob=0.0,
        classifier_proj_size=8,
    )
    Wav2Vec2ForSequenceClassification(config).eval().save_pretrained(folder)
    Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=True
    ).save_pretrained(folder)
    return folder


def write_clips(tmp_path: Path, labels: list[str], rate: int = 8000) -> Path:
    import soundfile as sf

    rng = np.random.default_rng(0)
    rows = []
    for i, label in enumerate(labels):
        clip = (0.3 * rng.standard_normal(int(rate * (0.2 + 0.1 * i)))).astype(np.float32)
        path = tmp_path / f"clip{i}.wav"
        sf.write(path, clip, rate)
        rows.append({"audio": str(path), "label": label, "speaker": f"s{i}"})
    data = tmp_path / "clips.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def prepare(data: Path, folder: Path, **params: Any) -> tuple[Any, list[Any]]:
    config = DataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": {"data_name": "json", "data_files": str(data)},
            "pre_process_data_config": {"input_cols": ["audio"], "task": "audio-classification", **params},
            "dataloader_config": {"batch_size": 2},
        }
    )
    assert config.pre_process_data_config.type == "audio_classification_pre_process"  # Olive's task default
    assert config.post_process_data_config.type == "text_classification_post_process"
    return batches_of(config, folder)


def test_features_labels_filter_and_limit_match_a_direct_computation(tmp_path):
    import soundfile as sf
    import soxr
    import torch
    from transformers import AutoFeatureExtractor, Wav2Vec2ForSequenceClassification

    folder = build_model(tmp_path / "model")
    names = ["Yes", "up", "noise", "no", "UP", "yes"]
    data = write_clips(tmp_path, names)
    prepared, batches = prepare(data, folder, labels_to_filter=["noise"], max_samples=4, max_duration=0.5)
    assert prepared.references == "label" and prepared.inputs == ["input_values", "attention_mask"]
    kept = [0, 1, 3, 4]  # "noise" dropped, then the first four rows
    extractor = AutoFeatureExtractor.from_pretrained(folder)
    model = Wav2Vec2ForSequenceClassification.from_pretrained(folder).eval()
    rows = [row for batch in batches for row in range(batch.size)]
    assert len(rows) == 4
    at = 0
    for batch in batches:
        for r in range(batch.size):
            i = kept[at]
            samples, rate = sf.read(tmp_path / f"clip{i}.wav", dtype="float32")
            resampled = soxr.resample(samples, rate, 16000, quality="HQ").astype(np.float32)
            want = extractor(resampled, sampling_rate=16000, max_length=8000, truncation=True, return_tensors="np")
            n = int(batch.columns["attention_mask"][r].sum())
            assert n == min(len(resampled), 8000)  # clips longer than max_duration are truncated
            np.testing.assert_allclose(batch.columns["input_values"][r][:n], want["input_values"][0], atol=1e-4)
            assert batch.columns["label"][r] == {"yes": 0, "no": 1, "up": 2}[names[i].lower()]
            assert batch.columns["audio_seconds"][r] == pytest.approx(len(resampled) / 16000)
            assert batch.columns["speaker"][r] == f"s{i}"
            at += 1
        with torch.no_grad():  # the batch feeds the model as it is
            logits = model(
                input_values=torch.tensor(batch.columns["input_values"]),
                attention_mask=torch.tensor(batch.columns["attention_mask"]),
            ).logits
        assert logits.shape == (batch.size, 3)


def test_bad_input(tmp_path):
    folder = build_model(tmp_path / "model")
    data = write_clips(tmp_path, ["yes", "maybe"])
    with pytest.raises(EvaluationError, match="label 'maybe' is not one of the model's labels: no, up, yes"):
        prepare(data, folder)
    with pytest.raises(
        EvaluationError, match="input column 'wave' is not a column of the dataset; columns: audio, label"
    ):
        prepare(data, folder, input_cols=["wave"])
    broken = tmp_path / "broken.jsonl"
    (tmp_path / "bad.wav").write_bytes(b"not audio at all")
    broken.write_text(json.dumps({"audio": str(tmp_path / "bad.wav"), "label": "yes"}) + "\n")
    with pytest.raises(EvaluationError, match="example 0"):
        prepare(broken, folder)
    _, batches = prepare(broken, folder, on_error="skip")
    assert batches == []
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text((folder / "config.json").read_text())
    with pytest.raises(EvaluationError, match="no feature extractor in"):
        prepare(data, empty)
    with pytest.raises(ValueError, match="at most 1 item"):
        prepare(data, folder, input_cols=["audio", "label"])
