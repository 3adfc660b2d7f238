"""The fidelity example's own files: the unlabelled sentences it ships, its two configs, and the digits numbers its
README reports, recomputed here with onnxruntime, scipy and torchmetrics from the quickstart's committed models.
(The MiniLM config needs the ONNX files ``examples/minilm/make_models.py`` builds; CI runs it with ``--report``.)"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch
from scipy.special import rel_entr, softmax
from torchmetrics.functional.classification import multiclass_calibration_error

from olive_eval import evaluate

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fidelity"
SENTENCES = EXAMPLE / "data" / "sentences.jsonl"
QUICKSTART = REPO / "examples" / "quickstart"
#: The kinds of sentence the README lists, and how many of each.
KINDS = {
    **dict.fromkeys(
        ("statement", "query", "support", "review", "headline", "instruction", "technical", "numbers", "informal"), 16
    ),
    **dict.fromkeys(("long", "other_language", "fragment"), 8),
}


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_the_sentences_are_unlabelled_unique_and_new_to_the_minilm_pair_set():
    rows = read_jsonl(SENTENCES)
    assert all(set(row) == {"id", "kind", "text"} for row in rows)
    assert [row["id"] for row in rows] == list(range(len(rows)))
    texts = [row["text"] for row in rows]
    assert all(isinstance(t, str) and t == t.strip() and t for t in texts)
    assert len({t.casefold() for t in texts}) == len(texts), "a sentence appears twice"
    assert Counter(row["kind"] for row in rows) == KINDS
    pairs = {
        row[key].casefold()
        for row in read_jsonl(REPO / "examples/minilm/data/pairs.jsonl")
        for key in ("sentence1", "sentence2")
    }
    assert not pairs & {t.casefold() for t in texts}


def test_the_minilm_config_reads_no_labels_and_compares_the_sentence_embeddings():
    config = json.loads((REPO / "configs/fidelity_minilm.json").read_text())
    sentences = next(d for d in config["data_configs"] if d["name"] == "sentences")
    assert "label_col" not in sentences["pre_process_data_config"]
    assert sentences["post_process_data_config"] == {"type": "mean_pooling"}
    (fidelity,) = (m for m in config["evaluator"]["metrics"] if m["type"] == "fidelity")
    assert fidelity["data_config"] == "sentences"
    assert [(s["name"], s["metric_config"]) for s in fidelity["sub_types"]] == [
        ("cosine_similarity", {"compare": "prediction"})
    ]


def run_in_batches(model: Path, pixels: np.ndarray, batch_size: int = 64) -> np.ndarray:
    """The model's logits in the config's batches: dynamic int8 scales its activations over each batch."""
    session = ort.InferenceSession(str(model))
    parts = [session.run(None, {"pixels": pixels[i : i + batch_size]})[0] for i in range(0, len(pixels), batch_size)]
    return np.concatenate(parts)


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    return evaluate(REPO / "configs/fidelity_digits.json", output_dir=tmp_path_factory.mktemp("fidelity_digits"))


def test_the_digits_values_equal_onnxruntime_scipy_and_torchmetrics(digits_run):
    rows = read_jsonl(QUICKSTART / "data/digits_test.jsonl")
    pixels = np.array([row["pixels"] for row in rows], dtype=np.float32)
    labels = np.array([row["label"] for row in rows])
    logits = {name: run_in_batches(QUICKSTART / f"models/digits_{name}.onnx", pixels) for name in ("fp32", "int8")}
    p, q = (softmax(logits[name].astype(np.float64), axis=1) for name in ("fp32", "int8"))
    int8 = {key: sub.value for key, sub in digits_run.models["digits_int8"].metrics.items()}
    assert int8["fidelity-top1_agreement"] == np.mean(logits["int8"].argmax(1) == logits["fp32"].argmax(1))
    assert int8["fidelity-kl_divergence"] == pytest.approx(rel_entr(p, q).sum(axis=1).mean(), rel=1e-6)
    assert int8["accuracy-accuracy_score"] == np.mean(logits["int8"].argmax(1) == labels)
    ece = float(multiclass_calibration_error(torch.from_numpy(q), torch.from_numpy(labels), num_classes=10, n_bins=15))
    assert int8["accuracy-ece"] == pytest.approx(ece, abs=1e-5)
    assert digits_run.models["digits_int8"].goals_met is True and digits_run.best == "digits_int8"


def test_the_readme_reports_this_digits_run(digits_run):
    """The README's digits table and the numbers quoted under it are those of the committed models."""
    readme = (EXAMPLE / "README.md").read_text()
    table = readme.split("## Digits: fp32 vs int8", 1)[1].split("```", 2)[1]
    metrics = digits_run.models["digits_int8"].metrics
    for key, digits in (("fidelity-top1_agreement", 3), ("accuracy-accuracy_score", 4), ("accuracy-ece", 4)):
        sub = metrics[key]
        shown = f"{sub.value:.{digits}f} [{sub.ci_low:.{digits}f}, {sub.ci_high:.{digits}f}]"
        assert re.search(rf"^{re.escape(key)} .*{re.escape(shown)}", table, re.M), (key, shown)
    # int8 kernels differ by CPU in their last bits, and the README says "about": its figures within 10%
    quoted = re.search(r"about ([0-9.e-]+) nats \[([0-9.e-]+), ([0-9.e-]+)\]", readme)
    assert quoted is not None
    kl = metrics["fidelity-kl_divergence"]
    assert [kl.value, kl.ci_low, kl.ci_high] == pytest.approx([float(g) for g in quoted.groups()], rel=0.1)
