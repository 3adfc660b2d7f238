"""The tiny Llama and the three local tasks, built once per test session. ``words_gen``'s answers come from the
model's own greedy text (read back from one lm-eval run with placeholder answers), so its two filters score
differently and neither is zero.

lm-eval runs the transformers model with torch's process-wide thread count (a model's ``threads`` is not entered
around ``simple_evaluate``); these tests time nothing, and on a 2-core machine shared with another pytest worker
two threads per model mostly wait for each other, so every lm-eval run here, ours and the references, uses one
(issue 34)."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lm_eval import lm_tasks
from tests.runtimes import llm_models

N = 24


#: ``reference``'s results in this process, by model folder, task files' contents, tasks and options.
REFERENCES: dict[tuple[Any, ...], dict[str, Any]] = {}


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch's intra-op threads at one for the block, the count before restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="package", autouse=True)
def lm_eval_on_one_thread() -> Iterator[None]:
    """The package's tests on one torch thread; the other packages' tests keep the count they had."""
    with one_torch_thread():
        yield


def _contents(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def reference(model_folder: Path, tasks_folder: Path, tasks: list[str], **kwargs: Any) -> dict[str, Any]:
    """lm-eval's own ``simple_evaluate`` on the transformers model, as an lm-eval user writes it; run once per
    process for the same model, task files (their contents) and options, a copy handed to each caller."""
    key = (
        str(model_folder),
        _contents(model_folder),
        _contents(tasks_folder),
        tuple(tasks),
        repr(sorted(kwargs.items())),
    )
    if key not in REFERENCES:
        REFERENCES[key] = _simple_evaluate(model_folder, tasks_folder, tasks, **kwargs)
    return copy.deepcopy(REFERENCES[key])


def _simple_evaluate(model_folder: Path, tasks_folder: Path, tasks: list[str], **kwargs: Any) -> dict[str, Any]:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_folder)
    with contextlib.redirect_stderr(io.StringIO()), one_torch_thread():
        lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=kwargs.pop("batch_size", 1), device="cpu")
        return lm_eval.simple_evaluate(
            model=lm,
            tasks=tasks,
            task_manager=TaskManager(include_path=str(tasks_folder), include_defaults=False),
            log_samples=True,
            **kwargs,
        )


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return llm_models.build_tiny_llama(tmp_path_factory.mktemp("lm_eval_llama") / "hf")


@pytest.fixture(scope="session")
def tasks_folder(llama: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lm_eval_tasks")
    lm_tasks.write_tasks(folder, ["placeholder"] * N, N)
    first = reference(llama, folder, ["words_gen"], bootstrap_iters=0)
    by_doc = {s["doc_id"]: s["resps"][0][0] for s in first["samples"]["words_gen"]}
    return lm_tasks.write_tasks(folder, lm_tasks.answers_from([by_doc[i] for i in range(N)]), N)


def lm_config(model: dict[str, Any], tasks_folder: Path, out: Path, **metric: Any) -> dict[str, Any]:
    """A run of ``model`` with one lm_eval metric ``lm`` (``metric`` keys: sub_types, metric_config overrides)."""
    options = {"tasks": list(lm_tasks.TASKS), "include_path": str(tasks_folder), "bootstrap_iters": 1000}
    options |= metric.pop("metric_config", {})
    entry: dict[str, Any] = {"name": "lm", "type": "lm_eval", "metric_config": options, **metric}
    return {"input_model": model, "metrics": [entry], "output_dir": str(out)}


def hf_model(folder: Path, name: str = "base") -> dict[str, Any]:
    """On one torch thread, as the package's references run (``lm_eval_on_one_thread``)."""
    return {"type": "HfModel", "name": name, "model_path": str(folder), "task": "text-generation", "threads": 1}
