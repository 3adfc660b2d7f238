"""``"shards": N`` on the process executor: a shard's child that dies, or a model past ``timeout_s``, fails the
model's pass in one line, and the run goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psutil

from olive_eval import evaluate
from olive_eval.engine.executors.process import UNREAD_STATUS, shard_exit
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


CRASHES_AT_LOAD = """
import os, signal


def load(model_path):
    how = os.path.basename(model_path)
    if how == "exit":
        os._exit(3)
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    return lambda batch: [int(v) % 3 for v in batch["v"]]
"""


def processes_of(marker: str) -> list[int]:
    """The live processes whose environment holds ``marker`` (every process a run started inherits it)."""
    found = []
    for pid in psutil.pids():
        try:
            if marker in (psutil.Process(pid).environ() or {}):
                found.append(pid)
        except (psutil.Error, OSError):
            continue
    return found


def run_crashing_at_load(folder: Path, executor: dict[str, Any]) -> tuple[int, str, dict[str, Any], list[int]]:
    """The command line on a run whose first candidates die while loading (``os._exit(3)``, then SIGSEGV), the
    last is fine: its exit code, stderr, results.json's models and the run's processes alive once it ended."""
    (folder / "models.py").write_text(CRASHES_AT_LOAD)
    write_jsonl(folder / "d.jsonl", [{"v": i, "target": i % 3} for i in range(12)])
    config = python_model_run(folder, {"name": "acc", "sub_types": [{"name": "accuracy_score"}]}, model_path="fine")
    model = config["input_model"]
    config["candidates"] = [
        {**model, "name": name, "model_path": str(folder / name)} for name in ("exit", "segv", "after")
    ]
    config["input_model"] = {**model, "name": "base", "model_path": str(folder / "base")}
    (folder / "run.json").write_text(json.dumps({**config, "executor": executor}))
    marker = f"OLIVE_EVAL_TEST_RUN_{uuid.uuid4().hex}"
    env = {**os.environ, marker: "1", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    command = [sys.executable, "-m", "olive_eval.cli", "--config", str(folder / "run.json"), "--no-cache"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    left = processes_of(marker)
    for _ in range(40):  # a process the run ended may take a moment to go
        if not left:
            break
        time.sleep(0.25)
        left = processes_of(marker)
    results = folder / "out" / "results.json"
    models = json.loads(results.read_text())["models"] if results.is_file() else {}
    return done.returncode, done.stderr, models, left


def test_a_sharded_model_that_dies_while_loading_fails_alone_and_leaves_no_process(tmp_path):
    code, stderr, models, left = run_crashing_at_load(tmp_path, {"type": "process", "shards": 2})
    assert code == 1, stderr  # a model failed; the run itself went to its end
    assert models["exit"]["status"] == "failed"
    assert models["exit"]["error"] == "the model's process exited with status 3"
    assert models["segv"]["status"] == "failed"
    assert models["segv"]["error"] == "the model's process was killed by signal SIGSEGV"
    assert models["after"]["status"] == "ok" and models["after"]["metrics"]["acc-accuracy_score"]["value"] == 1.0
    assert models["base"]["status"] == "ok"
    assert left == []


class FakeChild:
    """A pool child as the shard's failure reads it: joined, then its exit code."""

    def __init__(self, exitcode: int) -> None:
        self.exitcode = exitcode

    def join(self, timeout: float) -> None:
        pass


def test_the_shard_that_died_is_named_by_its_own_status_not_the_fork_servers_unread_one():
    """The pool ends the other children when one dies; the fork server's handle reports 255 for a child whose status
    it could not read. Seen in a full run: shard 0 (ended by the pool, 255) came before shard 1 (os._exit(3))."""
    assert shard_exit([FakeChild(UNREAD_STATUS), FakeChild(3)]) == "the model's process exited with status 3"
    assert shard_exit([FakeChild(-15), FakeChild(-11)]) == "the model's process was killed by signal SIGSEGV"
    assert shard_exit([FakeChild(0), FakeChild(UNREAD_STATUS)]) == "the model's process exited with status 255"
