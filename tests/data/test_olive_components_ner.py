"""Olive's ner_huggingface_preprocess: words tokenized into sub-tokens, word labels aligned to the tokens.

The expected labels are derived independently of ``word_ids``: each word is tokenized on its own to count
its pieces, and the label sequence is built from those counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval import evaluate
from olive_eval.config.data import DataConfig
from olive_eval.errors import EvaluationError
from tests.helpers import batches_of

STEMS = ["cat", "dog", "run", "jump", "red", "blue", "tree", "sky"]
SUFFIXES = ["s", "ing", "er", "est"]
#: Label ids in the B-/I- scheme: 0 O, 1 B-X, 2 I-X, 3 B-Y, 4 I-Y.
NUM_LABELS = 5


def wordpiece_tokenizer(folder: Path) -> Path:
    """A WordPiece tokenizer whose words split into stem + ##suffix pieces, saved with a tiny BERT config."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab_list = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", *STEMS, *[f"##{s}" for s in SUFFIXES]]
    vocab = {t: i for i, t in enumerate(vocab_list)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    fast.save_pretrained(folder)
    return folder


def random_rows(n: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        k = int(rng.integers(1, 7))
        words = [str(rng.choice(STEMS)) + (str(rng.choice(SUFFIXES)) if rng.random() < 0.5 else "") for _ in range(k)]
        rows.append({"id": i, "tokens": words, "ner_tags": [int(t) for t in rng.integers(0, NUM_LABELS, k)]})
    return rows


def expected_labels(tokenizer: Any, words: list[str], tags: list[int], mode: str, specials: bool) -> list[int]:
    special = 0 if mode == "olive" else -100
    out = [special] if specials else []
    for word, tag in zip(words, tags, strict=True):
        pieces = len(tokenizer(word, add_special_tokens=False)["input_ids"])
        rest = (tag + 1 if tag % 2 == 1 else tag) if mode == "olive" else -100
        out += [tag] + [rest] * (pieces - 1)
    return out + ([special] if specials else [])


def prepare(data_file: Path, folder: Path | None, **params: Any) -> tuple[Any, list[Any]]:
    config = DataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
            "pre_process_data_config": {"input_cols": ["tokens"], "label_col": "ner_tags", "task": "ner", **params},
            "dataloader_config": {"batch_size": 4},
        }
    )
    assert config.pre_process_data_config.type == "ner_huggingface_preprocess"  # Olive's task default
    assert config.post_process_data_config.type == "ner_post_process"
    return batches_of(config, folder)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("mode", ["olive", "first_subtoken"])
@pytest.mark.parametrize("specials", [False, True], ids=["olive-default-no-specials", "with-specials"])
def test_labels_align_to_sub_tokens(tmp_path, mode, specials):
    from transformers import AutoTokenizer

    folder = wordpiece_tokenizer(tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    rows = random_rows(23, seed=1)
    prepared, batches = prepare(
        write_rows(tmp_path / "d.jsonl", rows), folder, label_alignment=mode, add_special_tokens=specials
    )
    assert prepared.references == "label" and prepared.inputs[0] == "input_ids"
    pad = 0 if mode == "olive" else -100
    seen = 0
    for batch in batches:
        ids, labels, mask = batch.columns["input_ids"], batch.columns["label"], batch.columns["attention_mask"]
        assert ids.shape == labels.shape == mask.shape
        for r in range(batch.size):
            row = rows[seen + r]
            n = int(mask[r].sum())
            want_ids = tokenizer(row["tokens"], is_split_into_words=True, add_special_tokens=specials)["input_ids"]
            assert ids[r, :n].tolist() == want_ids
            want = expected_labels(tokenizer, row["tokens"], row["ner_tags"], mode, specials)
            assert labels[r, :n].tolist() == want
            assert (labels[r, n:] == pad).all() and (ids[r, n:] == tokenizer.pad_token_id).all()
            assert list(batch.columns["ner_tags"][r]) == row["ner_tags"]  # the word labels stay as metadata
        seen += batch.size
    assert seen == len(rows)


def test_published_example(tmp_path):
    """The Hugging Face course's example of the scheme: 'cats' = cat ##s with B-X keeps B-X then I-X."""
    folder = wordpiece_tokenizer(tmp_path / "tok")
    rows = [{"tokens": ["cats", "run", "skyest"], "ner_tags": [1, 0, 3]}]
    _, batches = prepare(write_rows(tmp_path / "d.jsonl", rows), folder)
    assert batches[0].columns["label"].tolist() == [[1, 2, 0, 3, 4]]
    _, batches = prepare(write_rows(tmp_path / "d.jsonl", rows), folder, label_alignment="first_subtoken")
    assert batches[0].columns["label"].tolist() == [[1, -100, 0, 3, -100]]


METRIC_SCRIPT = """
import numpy as np

from olive_eval import register_metric


@register_metric(name="{name}", higher_is_better=True)
def word_accuracy(prediction, reference):
    keep = np.asarray(reference) != -100
    return float((np.asarray(prediction)[keep] == np.asarray(reference)[keep]).mean())
"""


@pytest.fixture
def metric_name(request):
    from olive_eval.metrics import metric_registry

    name = f"ner_word_accuracy_{request.node.name}".replace("[", "_").replace("]", "_")
    yield name
    if name in metric_registry:
        metric_registry.unregister(name)


def tiny_ner(tmp_path: Path) -> tuple[Any, Any, list[dict[str, Any]], dict[str, Any]]:
    """A tiny BertForTokenClassification with its tokenizer, random rows, and the HfModel + data config."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForTokenClassification

    folder = wordpiece_tokenizer(tmp_path / "bert")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=NUM_LABELS,
        initializer_range=0.5,
    )
    model = BertForTokenClassification(config).eval()
    model.save_pretrained(folder)
    rows = random_rows(17, seed=2)
    data = write_rows(tmp_path / "d.jsonl", rows)
    run = {
        "input_model": {"type": "HfModel", "name": "bert", "model_path": str(folder), "task": "token-classification"},
        "data_configs": [
            {
                "name": "ner",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {
                    "params": {
                        "input_cols": ["tokens"],
                        "label_col": "ner_tags",
                        "task": "ner",
                        "label_alignment": "first_subtoken",
                    }
                },
                "dataloader_config": {"batch_size": 5},
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }
    return tokenizer, model, rows, run


def word_first_tokens(tokenizer: Any, model: Any, rows: list[dict[str, Any]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each sentence's labels and the model's own predictions at its words' first tokens."""
    import torch

    out = []
    with torch.no_grad():
        for row in rows:
            enc = tokenizer(row["tokens"], is_split_into_words=True, add_special_tokens=False, return_tensors="pt")
            logits = model(**enc).logits[0].numpy()
            want = np.array(expected_labels(tokenizer, row["tokens"], row["ner_tags"], "first_subtoken", False))
            keep = want != -100
            assert keep.sum() == len(row["tokens"])
            out.append((want[keep], logits.argmax(-1)[keep]))
    return out


def test_evaluate_token_classification_bert(tmp_path, metric_name):
    """A tiny BertForTokenClassification as HfModel: per-sentence accuracy over word-first tokens equals
    scikit-learn's on the model's own logits at those positions (the aligned labels reach the metric)."""
    tokenizer, model, rows, run = tiny_ner(tmp_path)
    script = tmp_path / "metrics.py"
    script.write_text(METRIC_SCRIPT.format(name=metric_name))
    metric = {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [{"name": metric_name}],
        "user_config": {"user_script": str(script)},
    }
    result = evaluate({**run, "metrics": [metric]})
    bert = result.models["bert"]
    assert bert.status == "ok", bert.error
    per_sentence = [accuracy_score(y, p) for y, p in word_first_tokens(tokenizer, model, rows)]
    assert bert.metrics[f"acc-{metric_name}"].value == pytest.approx(np.mean(per_sentence))


@pytest.mark.parametrize("task", [{"task": "multiclass", "num_classes": NUM_LABELS}, {}], ids=["explicit", "inferred"])
def test_builtin_accuracy_scores_ner_per_token(tmp_path, task):
    """The built-in accuracy_score and f1_score (macro) over per-token predictions with ignore_index -100:
    scikit-learn's over every word-first token of the data (torchmetrics' global multidim average)."""
    from sklearn.metrics import f1_score

    tokenizer, model, rows, run = tiny_ner(tmp_path)
    config = {"ignore_index": -100, **task}
    metric = {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "metric_config": config},
            {"name": "f1_score", "priority": 2, "metric_config": {**config, "average": "macro"}},
        ],
    }
    result = evaluate({**run, "metrics": [metric]})
    bert = result.models["bert"]
    assert bert.status == "ok", bert.error
    pairs = word_first_tokens(tokenizer, model, rows)
    labels = np.concatenate([y for y, _ in pairs])
    predicted = np.concatenate([p for _, p in pairs])
    assert len(set(predicted.tolist())) > 1
    assert bert.metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, predicted))
    want_f1 = f1_score(labels, predicted, average="macro")  # over the classes that occur, as torchmetrics
    assert bert.metrics["acc-f1_score"].value == pytest.approx(want_f1)


def test_bad_input(tmp_path):
    folder = wordpiece_tokenizer(tmp_path / "tok")
    rows = [{"tokens": ["cat", "dog"], "ner_tags": [1, 0]}]
    data = write_rows(tmp_path / "d.jsonl", rows)
    with pytest.raises(
        EvaluationError, match="label column 'tags' is not a column of the dataset; columns: tokens, ner_tags"
    ):
        prepare(data, folder, label_col="tags")
    with pytest.raises(EvaluationError, match="input column 'words' is not a column"):
        prepare(data, folder, input_cols=["words"])
    bad = write_rows(tmp_path / "bad.jsonl", [{"tokens": ["cat", "dog"], "ner_tags": [1]}])
    with pytest.raises(EvaluationError, match="example 0: 2 words in 'tokens' but 1 labels in 'ner_tags'"):
        prepare(bad, folder)
    names = write_rows(tmp_path / "names.jsonl", [{"tokens": ["cat"], "ner_tags": ["B-X"]}])
    with pytest.raises(EvaluationError, match=r"ner_tags holds str values; .* takes label ids"):
        prepare(names, folder)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvaluationError, match="no tokenizer or processor in"):
        prepare(data, empty)
    with pytest.raises(ValueError, match="expected 'olive' or 'first_subtoken'"):
        prepare(data, folder, label_alignment="last")
