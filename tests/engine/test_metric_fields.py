"""A metric's ``fields`` (Unitxt's MetricPipeline): sub-types on one pass score against the label or against a context
column, renamed by ``score_name``; rouge-score and the seed's token overlap on the same texts are the references. A
column the data does not give is refused when the run is planned, before the model loads; a remap that cannot apply
is refused when the config loads."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from rouge_score import rouge_scorer

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from tests.helpers import python_model_run, write_jsonl

MODEL = textwrap.dedent(
    """
    from pathlib import Path


    def load(model_path):
        Path(model_path).write_text("loaded")
        calls = Path(model_path).with_name("calls")

        def answer(batch):
            with calls.open("a") as handle:  # one line per model call: the passes made
                handle.write("call\\n")
            return [s.replace("cat", "dog") for s in batch["source"]]

        return answer
    """
)

ROUGE1 = rouge_scorer.RougeScorer(["rouge1"])


def generate(source: str) -> str:
    return source.replace("cat", "dog")


def rouge1(predictions: list[str], references: list[str]) -> float:
    return float(np.mean([ROUGE1.score(r, p)["rouge1"].fmeasure for p, r in zip(predictions, references, strict=True)]))


def overlap(prediction: str, reference: str) -> tuple[float, float]:
    """Unitxt's TokenOverlap F1 and recall (seed 000): shared words after SQuAD's normalization (no articles; the texts here
    are lower case without punctuation), counted with multiplicity."""
    pred, ref = ([w for w in text.split() if w not in ("a", "an", "the")] for text in (prediction, reference))
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0, 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall), recall


@pytest.fixture
def rows(tmp_path: Path) -> list[dict[str, str]]:
    (tmp_path / "models.py").write_text(MODEL)
    rng = np.random.default_rng(3)
    words = ["the", "cat", "dog", "sat", "on", "mat", "a", "rug", "ran", "far"]
    rows = [
        {
            "source": " ".join(rng.choice(words, 6)),
            "target": " ".join(rng.choice(words, 5)),
            "context": " ".join(rng.choice(words, 9)),
        }
        for _ in range(22)
    ]
    rows[0]["context"] = "zzz"  # no overlap at all: an edge case of both metrics
    write_jsonl(tmp_path / "d.jsonl", rows)
    return rows


def run_config(tmp_path: Path, metrics: list[dict]) -> dict:
    config = python_model_run(tmp_path, metrics[0])
    config["metrics"] += [{"type": "accuracy", "data_config": "d", **m} for m in metrics[1:]]
    return config


def test_two_metrics_on_one_pass_score_label_and_context(tmp_path, rows):
    with_label = {
        "name": "text",
        "sub_types": [
            {"name": "rouge1", "priority": 1},
            {"name": "rouge1", "score_name": "rouge1_context", "fields": {"references": "context"}},
            {"name": "token_overlap_f1"},
        ],
    }
    with_context = {
        "name": "overlap_with_context",
        "fields": {"references": "context"},
        "sub_types": [
            {"name": "token_overlap_f1", "score_name": "f1_overlap_with_context"},
            {"name": "rouge1", "fields": {"references": "references"}},  # the sub-type's fields win
            # the same statistics' work as the context F1 (one shared pass over the texts), on another column
            {"name": "token_overlap_recall", "fields": {"references": "references"}},
        ],
    }
    result = evaluate(run_config(tmp_path, [with_label, with_context]))
    metrics = result.models["m"].metrics
    preds = [generate(r["source"]) for r in rows]
    labels, contexts = [r["target"] for r in rows], [r["context"] for r in rows]
    assert metrics["text-rouge1"].value == pytest.approx(rouge1(preds, labels), abs=1e-12)
    assert metrics["text-rouge1_context"].value == pytest.approx(rouge1(preds, contexts), abs=1e-12)
    assert abs(rouge1(preds, labels) - rouge1(preds, contexts)) > 0.01  # the remap changes the value
    expected_overlap = np.mean([overlap(p, c)[0] for p, c in zip(preds, contexts, strict=True)])
    assert metrics["overlap_with_context-f1_overlap_with_context"].value == pytest.approx(expected_overlap, abs=1e-12)
    expected_label = np.mean([overlap(p, t)[0] for p, t in zip(preds, labels, strict=True)])
    assert metrics["text-token_overlap_f1"].value == pytest.approx(expected_label, abs=1e-12)
    assert abs(expected_label - expected_overlap) > 0.01
    expected_recall = np.mean([overlap(p, t)[1] for p, t in zip(preds, labels, strict=True)])
    assert metrics["overlap_with_context-token_overlap_recall"].value == pytest.approx(expected_recall, abs=1e-12)
    assert metrics["overlap_with_context-rouge1"].value == pytest.approx(rouge1(preds, labels), abs=1e-12)
    assert "overlap_with_context-token_overlap_f1" not in metrics
    batches = -(-len(rows) // 4)
    assert (tmp_path / "calls").read_text().count("call") == batches  # one inference pass for both metrics


@pytest.mark.parametrize(
    ("metrics", "path"),
    [
        (
            [{"name": "t", "sub_types": [{"name": "rouge1", "priority": 1, "fields": {"references": "contxt"}}]}],
            "metrics[0].sub_types[0].fields.references",
        ),
        (
            [{"name": "t", "fields": {"references": "contxt"}, "sub_types": [{"name": "rouge1", "priority": 1}]}],
            "metrics[0].fields.references",
        ),
        (
            [
                {"name": "t", "sub_types": [{"name": "rouge1", "priority": 1}]},
                {"name": "u", "fields": {"prediction": "sorce"}, "sub_types": [{"name": "rouge1"}]},
            ],
            "metrics[1].fields.prediction",
        ),
    ],
)
def test_missing_column_is_refused_when_planned(tmp_path, rows, metrics, path):
    with pytest.raises(ConfigError) as info:
        evaluate(run_config(tmp_path, metrics))
    assert info.value.path == path
    message = str(info.value)
    assert "\n" not in message and "does not give; it gives:" in message and "context" in message
    assert not (tmp_path / "loaded").exists()  # refused before the model loads


@pytest.mark.parametrize(
    ("metric", "path", "message"),
    [
        (
            {"sub_types": [{"name": "rouge1", "fields": {"reference": "context"}}]},
            "sub_types[0].fields.reference",
            "sub-type 'rouge1' does not read 'reference'; it reads: prediction, references",
        ),
        (
            {"fields": {"logits": "context"}, "sub_types": [{"name": "rouge1"}]},
            "fields.logits",
            "no sub-type of this metric reads 'logits'; they read: prediction, references",
        ),
        (
            {"sub_types": [{"name": "rouge1", "fields": {"references": " "}}]},
            "sub_types[0].fields.references",
            "names no field",
        ),
        (
            {"sub_types": [{"name": "rouge1"}, {"name": "rouge1", "fields": {"references": "context"}}]},
            "sub_types[1].name",
            "sub-type 'rouge1' appears twice",
        ),
        (
            {"sub_types": [{"name": "rouge1"}, {"name": "rouge2", "score_name": "rouge1"}]},
            "sub_types[1].score_name",
            "sub-type 'rouge1' appears twice",
        ),
        (
            {"type": "latency", "fields": {"references": "context"}, "sub_types": [{"name": "avg"}]},
            "fields",
            "latency metrics do not score a prediction pass",
        ),
    ],
)
def test_remap_that_cannot_apply_is_a_config_error(tmp_path, rows, metric, path, message):
    config = run_config(tmp_path, [{"name": "t", **metric}])
    if metric.get("type") == "latency":
        config["metrics"][0].pop("data_config")
    with pytest.raises(ConfigError) as info:
        load_run_config(config, base_dir=tmp_path)
    assert info.value.path == f"metrics[0].{path}"
    assert message in str(info.value) and "\n" not in str(info.value)


CUSTOM = textwrap.dedent(
    """
    def metric(model_output, targets):
        return {"seen": float(sum(len(t.split()) for t in targets))}
    """
)


def test_custom_metric_func_gets_the_remapped_references(tmp_path, rows):
    (tmp_path / "custom.py").write_text(CUSTOM)
    metric = {
        "name": "c",
        "type": "custom",
        "fields": {"references": "context"},
        "sub_types": [{"name": "seen", "priority": 1, "higher_is_better": True}],
        "user_config": {"user_script": str(tmp_path / "custom.py"), "metric_func": "metric"},
    }
    config = run_config(tmp_path, [metric])
    result = evaluate(config)
    assert result.models["m"].metrics["c-seen"].value == sum(len(r["context"].split()) for r in rows)
    metric["sub_types"][0]["fields"] = {"references": "target"}
    with pytest.raises(ConfigError, match="a metric_func scores every sub-type at once: set fields on the metric"):
        load_run_config(run_config(tmp_path, [metric]), base_dir=tmp_path)
