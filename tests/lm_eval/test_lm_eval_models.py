"""lm-eval tasks on the other models olive-eval runs: a GenAI export (equal to lm-eval's own onnxruntime-genai
backend on the same folder) and a Python object (generation through its call, log-likelihoods only through its
own methods)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from olive_eval import evaluate
from tests.lm_eval import lm_tasks
from tests.lm_eval.conftest import lm_config

SCRIPT = '''
import json


class Answers:
    """Answers words_gen from a table, then a stop string and more text; no log-likelihoods."""

    def __init__(self, path):
        self.table = json.loads(open(path).read())
        self.calls = 0

    def __call__(self, batch):
        self.calls += 1
        assert set(batch) == {"prompt", "until", "max_gen_toks"}
        return [self.table.get(p, "nothing") + "\\nafter the stop" for p in batch["prompt"]]


class Scorer(Answers):
    """Also scores a continuation by minus its length, and a text by minus its number of words."""

    def loglikelihood(self, pairs):
        return [(-float(len(continuation)), True) for _, continuation in pairs]

    def loglikelihood_rolling(self, texts):
        return [-float(len(text.split())) for text in texts]


def answers(path):
    return Answers(path)


def scorer(path):
    return Scorer(path)
'''


@pytest.fixture(scope="module")
def python_model(tasks_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("python_lm")
    (folder / "lm.py").write_text(SCRIPT)
    rows = [json.loads(line) for line in (tasks_folder / "words_gen.jsonl").read_text().splitlines()]
    table = {r["prompt"]: r["answer"] for r in rows[::2]}  # every other prompt answered right
    (folder / "table.json").write_text(json.dumps(table))
    return {
        "type": "PythonModel",
        "name": "py",
        "user_script": str(folder / "lm.py"),
        "model_path": str(folder / "table.json"),
    }


def _filtered(text: str, pattern: re.Pattern[str], last: bool) -> str:
    found = pattern.findall(text)
    return (found[-1] if last else found[0]).strip() if found else "[invalid]"


def test_a_python_model_generates_through_its_call(python_model, tasks_folder, tmp_path):
    model = {**python_model, "model_loader": "answers"}
    config = lm_config(model, tasks_folder, tmp_path, metric_config={"tasks": ["words_gen"], "batch_size": 5})
    metrics = evaluate(config).models["py"].metrics
    rows = [json.loads(line) for line in (tasks_folder / "words_gen.jsonl").read_text().splitlines()]
    table = json.loads(Path(python_model["model_path"]).read_text())
    texts = [table.get(r["prompt"], "nothing") for r in rows]  # cut at the stop string "\n"
    strict = np.mean([_filtered(t, lm_tasks.STRICT, False) == r["answer"] for t, r in zip(texts, rows, strict=True)])
    flexible = np.mean([_filtered(t, lm_tasks.FLEXIBLE, True) == r["answer"] for t, r in zip(texts, rows, strict=True)])
    assert metrics["lm-words_gen/exact_match,strict-match"].value == pytest.approx(strict)
    assert metrics["lm-words_gen/exact_match,flexible-extract"].value == pytest.approx(flexible)
    assert strict > 0 and flexible > 0


def test_loglikelihood_on_a_python_model_that_only_generates_fails_that_model(python_model, tasks_folder, tmp_path):
    config = lm_config({**python_model, "model_loader": "answers"}, tasks_folder, tmp_path)
    result = evaluate(config).models["py"]
    assert result.status == "failed"
    error = result.metrics["lm-words_mc/acc,none"].error
    assert "model 'py' cannot serve lm-eval's loglikelihood requests, which task(s) words_mc make" in error
    assert "it serves: generate_until" in error


def test_a_python_model_with_its_own_loglikelihoods(python_model, tasks_folder, tmp_path):
    config = lm_config({**python_model, "model_loader": "scorer"}, tasks_folder, tmp_path)
    metrics = evaluate(config).models["py"].metrics
    rows = [json.loads(line) for line in (tasks_folder / "words_mc.jsonl").read_text().splitlines()]
    # lm-eval asks for " " + choice after the context: the shortest choice wins, the first of equals
    picks = [int(np.argmax([-len(" " + c) for c in r["choices"]])) for r in rows]
    assert metrics["lm-words_mc/acc,none"].value == pytest.approx(
        np.mean([p == r["answer"] for p, r in zip(picks, rows, strict=True)])
    )
    texts = [json.loads(line)["text"] for line in (tasks_folder / "words_ppl.jsonl").read_text().splitlines()]
    words = sum(len(t.split()) for t in texts)
    # lm-eval counts words by whitespace split: exp(Σ words / Σ words) = e
    assert metrics["lm-words_ppl/word_perplexity,none"].value == pytest.approx(np.exp(words / words))


def test_a_python_model_returning_the_wrong_count_is_named(tasks_folder, tmp_path):
    (tmp_path / "bad.py").write_text("def load(path):\n    return lambda batch: ['x']\n")
    model = {"type": "PythonModel", "name": "bad", "user_script": str(tmp_path / "bad.py"), "model_loader": "load"}
    config = lm_config(model, tasks_folder, tmp_path / "out", metric_config={"tasks": ["words_gen"], "batch_size": 4})
    error = evaluate(config).models["bad"].metrics["lm-words_gen/exact_match,strict-match"].error
    assert "returned 1 items for 4 requests" in error


def export_genai_here(hf_folder: Path, out: Path) -> Path:
    """The fp32 GenAI export by the builder's own command line (``-p fp32 -e cpu``, as
    ``llm_models.export_genai``), run in this process: in a fresh interpreter its imports of torch, transformers
    and onnx were nearly all of its cost (issue 34)."""
    argv = ["builder", "-i", str(hf_folder), "-o", str(out), "-p", "fp32", "-e", "cpu"]
    argv += ["-c", str(out.parent / "cache-fp32")]
    with mock.patch.object(sys, "argv", argv), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.filterwarnings("ignore", "'onnxruntime_genai.models.builder' found in sys.modules", RuntimeWarning)
        runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__")
    assert (out / "genai_config.json").is_file(), f"the GenAI builder wrote no genai_config.json in {out}"
    return out


@pytest.fixture(scope="module")
def genai_fp32(llama: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_genai_here(llama, tmp_path_factory.mktemp("lm_eval_genai") / "fp32")


def test_a_genai_model_equals_lm_evals_own_genai_backend(genai_fp32, tasks_folder, tmp_path):
    import lm_eval
    from lm_eval.tasks import TaskManager

    model = {"type": "GenAIModel", "name": "genai", "model_path": str(genai_fp32)}
    ours = evaluate(lm_config(model, tasks_folder, tmp_path)).models["genai"].metrics
    with contextlib.redirect_stderr(io.StringIO()):
        theirs = lm_eval.simple_evaluate(
            model="onnxruntime-genai",
            model_args={"pretrained": str(genai_fp32), "execution_provider": "cpu"},
            tasks=list(lm_tasks.TASKS),
            task_manager=TaskManager(include_path=str(tasks_folder), include_defaults=False),
            bootstrap_iters=1000,
        )
    compared = 0
    for task in lm_tasks.TASKS:
        for key, value in theirs["results"][task].items():
            if "," in key and "_stderr," not in key:
                assert ours[f"lm-{task}/{key}"].value == value, key
                compared += 1
    assert compared == 7
