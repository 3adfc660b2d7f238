"""``reward`` with a sequence classifier the run loads (``"type": "classifier"``): a random 2-layer BERT built in
the test (``torch.manual_seed``), scored through the HfModel runtime and through its ONNX export, equal to the
same model called directly in the test on random pairs and on edge pairs (an empty response, texts far past the
tokenizer's 64 tokens, batches that end short), with the label and output options taking effect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from olive_eval.engine.run.judges import plan_judge
from olive_eval.judges.base import JudgeSpecError
from olive_eval.metrics.judged.reward import scoring
from olive_eval.runtimes.torch_threads import torch_threads
from tests.metrics.judged.reward_helpers import direct_rewards, reward_of
from tests.runtimes import hf_models

N = 23  # not a multiple of the batch sizes below: the last batch is short


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for the direct references (the runs' reward models have one too, ``threads``): nothing
    here tests threads, and a worker shares two cores with another (tiny forwards on two threads mostly wait)."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reward_models")


@pytest.fixture(scope="module")
def one_label(built: Path) -> Path:
    return hf_models.build_bert(built / "rm1", seed=1, num_labels=1)


@pytest.fixture(scope="module")
def three_labels(built: Path) -> Path:
    return hf_models.build_bert(built / "rm3", seed=2, num_labels=3)


@pytest.fixture(scope="module")
def one_label_onnx(built: Path, one_label: Path) -> Path:
    """``one_label``'s ONNX export, alone in its folder (no tokenizer beside it), once per module."""
    return hf_models.export_bert_onnx(one_label, built / "rm1_onnx" / "model.onnx")


def hf(folder: Path, **spec) -> dict:
    return {
        "type": "classifier",
        "model": {"type": "HfModel", "model_path": str(folder), "task": "text-classification", "threads": 1},
        **spec,
    }


def pairs(seed: int = 0) -> tuple[list[str], list[str]]:
    return hf_models.sentences(N, seed), hf_models.sentences(N, seed + 100, min_words=1, max_words=12)


@pytest.mark.parametrize("batch_size", [1, 4, 64])
def test_the_value_is_the_mean_of_the_models_own_logit_on_random_pairs(one_label, batch_size):
    queries, responses = pairs()
    value, each, details = reward_of(hf(one_label, batch_size=batch_size), queries, responses)
    expected = direct_rewards(one_label, list(zip(queries, responses, strict=True)), max_length=64)
    np.testing.assert_allclose(each, expected, rtol=1e-5, atol=1e-5)
    assert value == pytest.approx(expected.mean(), abs=1e-5)
    assert details["scored"] == N and details["failed"] == 0
    assert details["reward"]["source"] == "classifier" and details["reward"]["runtime"]["device"] == "cpu"
    assert details["reward"]["max_length"] == 64  # the tokenizer's own limit


def test_edge_pairs_empty_responses_and_texts_past_the_limit_are_truncated_and_scored(one_label):
    long = " ".join(["cat"] * 300)
    queries = ["the cat", long, "the dog runs", long, "zzz unknown words"]
    responses = ["", "a dog", long, long, "the mat"]
    value, each, _ = reward_of(hf(one_label, batch_size=2), queries, responses)
    expected = direct_rewards(one_label, list(zip(queries, responses, strict=True)), max_length=64)
    np.testing.assert_allclose(each, expected, rtol=1e-5, atol=1e-5)
    assert value == pytest.approx(expected.mean(), abs=1e-5)


def test_max_length_takes_effect(one_label):
    long = " ".join(["dog", "runs"] * 40)
    queries, responses = ["the cat sits", "a bird"], [long, long]
    _, short, details = reward_of(hf(one_label, max_length=8), queries, responses)
    _, full, _ = reward_of(hf(one_label), queries, responses)
    expected = direct_rewards(one_label, list(zip(queries, responses, strict=True)), max_length=8)
    np.testing.assert_allclose(short, expected, rtol=1e-5, atol=1e-5)
    assert details["reward"]["max_length"] == 8 and not np.allclose(short, full)


@pytest.mark.parametrize(("label", "column"), [(2, 2), ("LABEL_1", 1), (0, 0)])
@pytest.mark.parametrize("output", ["logit", "probability"])
def test_the_label_and_output_options_pick_what_is_read(three_labels, label, column, output):
    queries, responses = pairs(seed=3)
    _, each, _ = reward_of(hf(three_labels, label=label, output=output, batch_size=5), queries, responses)
    reference = list(zip(queries, responses, strict=True))
    expected = direct_rewards(three_labels, reference, max_length=64, label=column, output=output)
    np.testing.assert_allclose(each, expected, rtol=1e-5, atol=1e-5)
    other = direct_rewards(three_labels, reference, max_length=64, label=(column + 1) % 3, output=output)
    assert not np.allclose(each, other)  # another label reads other values: the option took effect


def test_probability_of_a_one_label_model_is_the_sigmoid_of_its_logit(one_label):
    queries, responses = pairs(seed=5)
    _, each, _ = reward_of(hf(one_label, output="probability"), queries, responses)
    logits = direct_rewards(one_label, list(zip(queries, responses, strict=True)), max_length=64)
    np.testing.assert_allclose(each, 1 / (1 + np.exp(-logits)), rtol=1e-5, atol=1e-5)


def test_the_onnx_export_scores_as_the_model_does(one_label_onnx, one_label):
    onnx_file = one_label_onnx
    spec = {
        "type": "classifier",
        "model": {"type": "ONNXModel", "model_path": str(onnx_file), "processor_path": str(one_label)},
        "batch_size": 3,
    }
    queries, responses = pairs(seed=7)
    value, each, details = reward_of(spec, queries, responses)
    expected = direct_rewards(one_label, list(zip(queries, responses, strict=True)), max_length=64)
    np.testing.assert_allclose(each, expected, rtol=1e-4, atol=1e-4)
    assert value == pytest.approx(expected.mean(), abs=1e-4)
    assert details["reward"]["runtime"]["providers"][0] == "CPUExecutionProvider"


@pytest.mark.parametrize(
    ("spec", "key", "says"),
    [
        (
            {"label": None},
            "label",
            "the model gives 3 logits (LABEL_0, LABEL_1, LABEL_2); name the one to read with label",
        ),
        ({"label": "good"}, "label", "no label 'good'; the model's labels: LABEL_0, LABEL_1, LABEL_2"),
        ({"label": 3}, "label", "label 3 is out of range: the model gives 3 logits"),
    ],
)
def test_a_label_the_model_lacks_is_refused_when_the_run_is_planned(three_labels, spec, key, says):
    with pytest.raises(JudgeSpecError) as err:
        plan_judge(scoring(hf(three_labels, **spec)), Path.cwd(), False)
    assert (err.value.key, err.value.message) == (key, says)


def test_an_onnx_reward_model_without_its_tokenizer_is_refused_when_planned(one_label_onnx):
    onnx_file = one_label_onnx
    with pytest.raises(JudgeSpecError) as err:
        plan_judge(
            scoring({"type": "classifier", "model": {"type": "ONNXModel", "model_path": str(onnx_file)}}),
            Path.cwd(),
            False,
        )
    assert err.value.key == "model.processor_path"
    assert err.value.message == "a reward model needs its tokenizer: give its folder here"


def test_an_onnx_reward_models_tokenizer_folder_that_is_missing_is_refused_when_planned(tmp_path, one_label_onnx):
    onnx_file = one_label_onnx
    model = {"type": "ONNXModel", "model_path": str(onnx_file), "processor_path": str(tmp_path / "gone")}
    with pytest.raises(JudgeSpecError) as err:
        plan_judge(scoring({"type": "classifier", "model": model}), Path.cwd(), False)
    assert (err.value.key, err.value.message) == ("model.processor_path", f"folder not found: {tmp_path / 'gone'}")


def test_a_deberta_v2_reward_model_scores_as_its_own_forward(built):
    """OpenAssistant's reward models are DeBERTa-v3 (DebertaV2 classes): a random 2-layer one, with the word
    tokenizer, through the same source."""
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    folder = built / "deberta"
    torch.manual_seed(6)
    tokenizer = hf_models.word_tokenizer("bert")
    config = DebertaV2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=1,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.5,
    )
    DebertaV2ForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    queries, responses = pairs(seed=11)
    value, each, _ = reward_of(hf(folder, batch_size=6), queries, responses)
    expected = direct_rewards(folder, list(zip(queries, responses, strict=True)), max_length=64)
    np.testing.assert_allclose(each, expected, rtol=1e-5, atol=1e-5)
    assert value == pytest.approx(expected.mean(), abs=1e-5) and np.std(expected) > 0
