"""``"shards": N`` on the process executor: a shard's child that dies, or a model past ``timeout_s``, fails the
model's pass in one line, and the run goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olive_eval import evaluate
from tests.helpers import python_model_run, write_jsonl

MODELS = """
import os, time


class Past:
    '''Fine on the first shard's batches (examples 0 to 3); on the second's, ``then`` happens.'''

    def __init__(self, then):
        self.then = then

    def __call__(self, batch):
        if int(batch["v"][0]) >= 4:
            if self.then == "exit":
                os._exit(3)
            if self.then == "hang":
                time.sleep(60)
        return [int(v) % 3 for v in batch["v"]]


def load(model_path):
    return Past(os.path.basename(model_path))
"""


def run_of(folder: Path, then: str, executor: dict[str, Any]) -> dict[str, Any]:
    (folder / "models.py").write_text(MODELS)
    write_jsonl(folder / "d.jsonl", [{"v": i, "target": i % 3} for i in range(12)])
    config = python_model_run(folder, {"name": "acc", "sub_types": [{"name": "accuracy_score"}]}, model_path=then)
    fine = {**config["input_model"], "name": "fine", "model_path": str(folder / "fine")}
    return {**config, "candidates": [fine], "executor": executor}


def test_a_shard_whose_process_dies_fails_the_model_naming_the_exit(tmp_path):
    result = evaluate(run_of(tmp_path, "exit", {"type": "process", "shards": 2}))
    error = result.models["m"].metrics["acc-accuracy_score"].error
    assert result.models["m"].status == "failed"
    assert error == "a shard of the pass: the model's process exited with status 3"
    assert result.models["fine"].status == "ok" and result.models["fine"].metrics["acc-accuracy_score"].value == 1.0


def test_a_sharded_model_past_its_timeout_has_its_shards_ended(tmp_path):
    result = evaluate(run_of(tmp_path, "hang", {"type": "process", "shards": 2, "timeout_s": 3}))
    error = result.models["m"].metrics["acc-accuracy_score"].error
    assert error == "the model ran past its timeout of 3 s (timeout_s); its shard processes were ended"
    assert result.models["fine"].status == "ok"
