"""Text fidelity: a registered metric that scores predictions against references runs with the baseline's
predictions as the references (exact match, WER, ROUGE), on data without labels; equal to jiwer and rouge-score
on the same text pairs."""

from __future__ import annotations

import jiwer
import numpy as np
import pytest

from olive_eval import evaluate
from tests.helpers import write_jsonl

MODELS = '''
from pathlib import Path


class Writer:
    """Answers each question with a sentence; a noisy writer drops or changes some words."""

    def __init__(self, noise):
        self.noise = noise

    def __call__(self, batch):
        out = []
        for i, q in zip(batch["i"], batch["q"]):
            words = f"the answer to {q} is {int(i) * 7}".split()
            if self.noise and int(i) % self.noise == 0:
                words = words[:-2] + ["maybe"]
            out.append(" ".join(words))
        return out


def load(model_path):
    return Writer(int(Path(model_path).read_text()))
'''

SENTENCES = ["what is seven", "how far is the moon", "who wrote this", "why not", "when is noon", "where to go"]


def model(root, name: str, noise: int) -> dict:
    (root / f"{name}.txt").write_text(str(noise))
    return {
        "type": "PythonModel",
        "name": name,
        "user_script": str(root / "models.py"),
        "model_loader": "load",
        "model_path": str(root / f"{name}.txt"),
    }


def sentences(noise: int, n: int) -> list[str]:
    out = []
    for i in range(n):
        words = f"the answer to {SENTENCES[i % len(SENTENCES)]} is {i * 7}".split()
        if noise and i % noise == 0:
            words = [*words[:-2], "maybe"]
        out.append(" ".join(words))
    return out


@pytest.fixture
def run(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    n = 30
    write_jsonl(tmp_path / "d.jsonl", [{"i": i, "q": SENTENCES[i % len(SENTENCES)]} for i in range(n)])
    metric = {
        "name": "agree",
        "type": "fidelity",
        "sub_types": [{"name": "exact_match", "priority": 1}, {"name": "wer"}, {"name": "rougeL"}],
    }
    config = {
        "input_model": model(tmp_path, "base", 0),
        "candidates": [model(tmp_path, "every3", 3), model(tmp_path, "every2", 2)],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "d.jsonl")},
                "pre_process_data_config": {"type": "skip_pre_process"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [metric],
        "output_dir": str(tmp_path / "out"),
    }
    return evaluate(config), n


def test_the_baselines_text_stands_for_the_references(run):
    result, n = run
    base = result.models["base"].metrics
    assert (base["agree-exact_match"].value, base["agree-wer"].value, base["agree-rougeL"].value) == (1.0, 0.0, 1.0)
    reference = sentences(0, n)
    for name, noise in (("every3", 3), ("every2", 2)):
        metrics = result.models[name].metrics
        hypothesis = sentences(noise, n)
        assert metrics["agree-exact_match"].value == pytest.approx(
            np.mean([h == r for h, r in zip(hypothesis, reference, strict=True)])
        )
        assert metrics["agree-wer"].value == pytest.approx(jiwer.wer(reference, hypothesis))
    assert result.models["every2"].metrics["agree-wer"].value > result.models["every3"].metrics["agree-wer"].value


def test_rouge_against_the_baseline_equals_rouge_score(run):
    from rouge_score import rouge_scorer  # the reference (a dev dependency)

    result, n = run
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    reference, hypothesis = sentences(0, n), sentences(3, n)
    expected = np.mean([scorer.score(r, h)["rougeL"].fmeasure for r, h in zip(reference, hypothesis, strict=True)])
    assert result.models["every3"].metrics["agree-rougeL"].value == pytest.approx(expected)
