"""The reward example runs from any folder: a baseline and two candidates scored by its stand-in reward model,
each value equal to the mean of that reward computed here on the model's own answers, with the paired goal and
the ranking that follow from them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from olive_eval import evaluate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reward"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"reward_example_{name}", EXAMPLE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_scores_two_candidates_against_the_baseline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = evaluate(EXAMPLE / "config.json", output_dir=tmp_path / "out")
    rows = [json.loads(line) for line in (EXAMPLE / "prompts.jsonl").read_text().splitlines()]
    reward, models = _module("reward"), _module("models")
    batch = {"query": [r["query"] for r in rows], "reference": [r["reference"] for r in rows]}
    loaders = {"echo": models.load, "brief": models.load_brief, "full": models.load_full}
    values = {}
    for name, load in loaders.items():
        answers = load(".")(batch)
        expected = sum(reward.reward(batch["query"], answers)) / len(rows)
        score = result.models[name].metrics["preference-reward"]
        assert score.value == pytest.approx(expected)
        values[name] = score.value
        if name != "echo":
            assert score.goal.met == (expected >= values["echo"] - 0.5 and score.goal.change_ci_low >= -0.5)
    assert values["full"] > values["brief"] > values["echo"]
    assert result.ranking[0] == "full"
