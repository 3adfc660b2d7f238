"""Text-overlap sub-types end to end: a Python model's generations over a JSON-lines file, scored in one pass by
ROUGE and sacrebleu's metrics, equal to rouge-score and sacrebleu on the same texts; a missing extra is one line at
plan time (exit 2), before any model loads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from rouge_score import rouge_scorer

from olive_eval import evaluate
from tests.helpers import python_model_run, write_jsonl

MODEL = textwrap.dedent(
    """
    from pathlib import Path


    def load(model_path):
        Path(model_path).write_text("loaded")  # evidence that the run got as far as loading the model
        return lambda batch: [s.replace("cat", "dog").replace("mat", "mats running") for s in batch["source"]]
    """
)


def generate(source: str) -> str:
    return source.replace("cat", "dog").replace("mat", "mats running")


@pytest.fixture
def run(tmp_path: Path):
    (tmp_path / "models.py").write_text(MODEL)
    rows = [
        {
            "source": f"The cat sat on the mat, number {i}.\nIt runs.",
            "target": [f"The cat sat on a mat {i}.\nIt ran."] + ([f"A dog sat on mats number {i}."] if i % 3 else []),
        }
        for i in range(23)
    ]
    write_jsonl(tmp_path / "d.jsonl", rows)

    def config(sub_types: list[dict]) -> dict:
        return python_model_run(tmp_path, {"name": "text", "sub_types": sub_types})

    return rows, config


def test_one_pass_scores_every_sub_type_as_rouge_score_and_sacrebleu(run):
    rows, config = run
    subs = [
        {"name": "rougeL", "priority": 1, "confidence_interval": {"n_resamples": 300}},
        {"name": "rouge1", "metric_config": {"use_stemmer": True}},
        {"name": "rougeLsum"},
        {"name": "bleu", "confidence_interval": {"n_resamples": 300}},
        {"name": "chrf", "metric_config": {"word_order": 2}},
        {"name": "ter"},
        {"name": "sentence_bleu"},
    ]
    result = evaluate(config(subs))
    metrics = result.models["m"].metrics
    preds = [generate(r["source"]) for r in rows]
    refs = [r["target"] for r in rows]
    for name, stem in [("rougeL", False), ("rouge1", True), ("rougeLsum", False)]:
        scorer = rouge_scorer.RougeScorer([name], use_stemmer=stem)
        expected = np.mean([scorer.score_multi(r, p)[name].fmeasure for p, r in zip(preds, refs, strict=True)])
        assert metrics[f"text-{name}"].value == expected
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(2)]
    assert metrics["text-bleu"].value == sacrebleu.corpus_bleu(preds, streams).score
    assert metrics["text-chrf"].value == sacrebleu.corpus_chrf(preds, streams, word_order=2).score
    assert metrics["text-ter"].value == sacrebleu.corpus_ter(preds, streams).score
    sentence = [sacrebleu.sentence_bleu(p, r).score for p, r in zip(preds, refs, strict=True)]
    assert metrics["text-sentence_bleu"].value == np.mean(sentence)
    for name in ("text-rougeL", "text-bleu"):
        assert metrics[name].ci_low <= metrics[name].value <= metrics[name].ci_high
    assert metrics["text-bleu"].details["signature"].startswith("nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp")


def _cli_without(package: str, tmp_path: Path, config: dict) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        "from olive_eval.cli import main\n"
        f"sys.exit(main(['--config', {str(path)!r}, '--quiet']))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("package", "sub", "line"),
    [
        (
            "sacrebleu",
            {"name": "chrf"},
            "metrics[0].sub_types[1].metric_config: sacrebleu's CHRF needs the 'sacrebleu' "
            "package; install it with: pip install 'olive-eval[text]'",
        ),
        (
            "nltk",
            {"name": "rouge2", "metric_config": {"use_stemmer": True}},
            "metrics[0].sub_types[1].metric_config: use_stemmer needs the 'nltk' package; "
            "install it with: pip install 'olive-eval[text]'",
        ),
    ],
)
def test_a_missing_extra_is_one_line_when_the_run_is_planned(run, tmp_path, package, sub, line):
    _, config = run
    done = _cli_without(package, tmp_path, config([{"name": "rougeL"}, sub]))
    assert (done.returncode, done.stderr.strip()) == (2, f"olive-eval: config error: {tmp_path / 'run.json'}: {line}")
    assert not (tmp_path / "loaded").exists() and not (tmp_path / "out" / "results.json").exists()
