"""The process executor: a model that takes its process down fails alone, the others' values are a local run's."""

from __future__ import annotations

import json
import re
import signal
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation
from olive_eval.errors import ConfigError, UsageError
from tests.helpers import ToyProblem

BAD_MODELS = """
import ctypes, os, resource, signal, time
import numpy as np


def predict(batch):
    return [0] * len(next(iter(batch.values())))


def load_segfault(model_path):
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def load_exit(model_path):
    os._exit(int(os.environ.get("OLIVE_EVAL_TEST_EXIT", "3")))  # no exception, no cleanup


def load_killed(model_path):
    os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's out-of-memory killer does


def load_over_limit(model_path):
    with open("/proc/self/status") as status:
        size_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    limit = (size_kb + 256 * 1024) * 1024  # 256 MiB more than the process has mapped
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    hog = np.ones(2**31, dtype=np.uint8)  # 2 GiB past that limit
    return lambda batch: hog


def load_hang(model_path):
    time.sleep(600)


def load_lingering(model_path):
    import threading

    threading.Thread(target=time.sleep, args=(60,)).start()  # not a daemon: the process waits on it to exit
    return predict
"""

ACCURACY = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}]


def bad_model(toy: Any, kind: str) -> dict[str, Any]:
    script = toy.root / "bad_models.py"
    script.write_text(BAD_MODELS)
    return {"type": "PythonModel", "name": kind, "user_script": str(script), "model_loader": f"load_{kind}"}


def values(result: Any, names: list[str]) -> dict[str, dict[str, float | None]]:
    return {name: {k: s.value for k, s in result.models[name].metrics.items()} for name in names}


def test_a_crash_an_exit_a_kill_and_a_memory_limit_each_fail_only_their_model(toy):
    config = toy.config({"cand": 0.3}, ACCURACY)
    config["candidates"] = [bad_model(toy, k) for k in ("segfault", "exit", "killed", "over_limit")] + config[
        "candidates"
    ]
    local = evaluate({**config, "candidates": config["candidates"][-1:]}, output_dir=toy.root / "local")
    config["executor"] = {"type": "process"}
    result = evaluate(config)
    errors = {name: m.error for name, m in result.models.items() if m.status == "failed"}
    assert set(errors) == {"segfault", "exit", "killed", "over_limit"}
    assert errors["segfault"] == "the model's process was killed by signal SIGSEGV"
    assert errors["exit"] == "the model's process exited with status 3"
    assert errors["killed"].startswith("the model's process was killed by signal SIGKILL")
    assert "MemoryError" in errors["over_limit"]  # the allocation failed in the child, which reported it
    assert values(result, ["base", "cand"]) == values(local, ["base", "cand"])
    assert result.models["cand"].status == "ok" and result.ranking == ["cand"]
    assert (toy.root / "out" / "instances" / "cand" / "acc.parquet").is_file()  # written by the child


@pytest.fixture(scope="module")
def started_server(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The fork server running, forked with what a child imports: a run's first child waits for it to start (a new
    interpreter importing the engine, where it cannot be forked), inside that model's timeout."""
    toy = ToyProblem(tmp_path_factory.mktemp("started"))
    evaluate({**toy.config({}, ACCURACY), "executor": {"type": "process"}})


def test_a_model_that_hangs_is_ended_at_its_timeout(toy, started_server):
    config = toy.config({}, ACCURACY)
    config["candidates"] = [bad_model(toy, "hang")]
    config["executor"] = {"type": "process", "timeout_s": 3}  # the baseline's child takes a tenth of it at load 15
    result = evaluate(config)
    assert result.models["base"].status == "ok"
    assert result.models["hang"].status == "failed"
    assert result.models["hang"].error == "the model ran past its timeout of 3 s (timeout_s); its process was ended"


@pytest.mark.parametrize(
    ("executor", "message"),
    [
        ({"type": "process", "timeout_s": 0}, "executor.timeout_s: Input should be greater than 0"),
        ({"type": "local", "timeout_s": 5}, "executor.timeout_s: the local executor cannot stop a model that hangs"),
        ({"type": "forked"}, "executor.type: unknown executor type 'forked'; executor types: local, process"),
    ],
)
def test_bad_executor_settings_are_config_errors(toy, executor, message):
    config = {**toy.config({}, ACCURACY), "executor": executor}
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        evaluate(config)


def test_a_session_refuses_an_unknown_executor_name_as_a_usage_error(toy) -> None:
    with pytest.raises(UsageError, match=r"^unknown executor type 'forked'; executor types: local, process"):
        Evaluation(toy.config({}, ACCURACY), executor="forked")


def test_a_session_locates_an_unknown_executor_type_in_an_object(toy) -> None:
    with pytest.raises(ConfigError) as err:
        Evaluation(toy.config({}, ACCURACY), executor={"type": "forked"})
    assert err.value.path == "executor.type" and err.value.message.startswith("unknown executor type 'forked'")


def test_the_command_line_chooses_the_process_executor(toy, capsys):
    config = toy.config({}, ACCURACY)
    config["candidates"] = [bad_model(toy, "exit")]
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--executor", "process", "--quiet", "--no-cache"]) == 1  # a model failed
    models = json.loads((toy.root / "out" / "results.json").read_text())["models"]
    assert models["base"]["status"] == "ok" and models["exit"]["error"] == "the model's process exited with status 3"
    assert main(["--config", str(path), "--executor", "nope", "--quiet"]) == 2
    assert "unknown executor type 'nope'" in capsys.readouterr().err


def test_the_session_takes_an_executor(toy):
    config = toy.config({}, ACCURACY)
    with Evaluation(config, executor="process") as session:
        assert type(session._run.executor).__name__ == "ProcessExecutor"
        crashed = session.evaluate(bad_model(toy, "segfault"))
        kept = session.evaluate({"type": "ONNXModel", "name": "cand", "model_path": str(toy.model("cand", 0.3))})
    assert crashed.status == "failed" and crashed.error == "the model's process was killed by signal SIGSEGV"
    assert kept.status == "ok" and kept.rank == 1


def test_the_session_takes_a_built_executor_and_leaves_it_open(toy):
    from olive_eval.engine.executors.local import LocalExecutor

    ran: list[str] = []

    class Counting(LocalExecutor):
        closed = False

        def run(self, unit):  # type: ignore[no-untyped-def]
            ran.append(unit.name)
            return super().run(unit)

        def close(self) -> None:
            Counting.closed = True

    config = toy.config({"cand": 0.3}, ACCURACY)
    with Evaluation(config) as probe:
        executor = Counting(probe._run.evaluator)
    with Evaluation(config, output_dir=toy.root / "o2", executor=executor) as session:
        session.run()
    assert ran == ["base", "cand"] and not Counting.closed


def test_a_child_sees_the_environment_of_now_not_of_the_fork_servers_start(toy, monkeypatch):
    config = toy.config({}, ACCURACY)
    config["candidates"] = [bad_model(toy, "exit")]
    config["executor"] = {"type": "process"}
    evaluate(config)  # the fork server runs from here on
    monkeypatch.setenv("OLIVE_EVAL_TEST_EXIT", "5")
    result = evaluate(config)
    assert result.models["exit"].error == "the model's process exited with status 5"


def test_a_child_that_sent_its_evaluation_is_not_waited_for_and_one_that_lingers_is_ended_at_close(toy, monkeypatch):
    from olive_eval.engine.executors import process

    monkeypatch.setattr(process, "LEAVE_S", 0.5)
    with Evaluation(toy.config({}, ACCURACY), executor="process") as session:
        result = session.evaluate(bad_model(toy, "lingering"))
        leaving = list(session._run.executor._leaving)
        assert result.status == "ok" and leaving[-1].is_alive()  # its thread holds it: the run went on
    assert leaving[-1].exitcode == -signal.SIGKILL  # still there LEAVE_S into the session's close
    assert all(child.exitcode == 0 for child in leaving[:-1])


def test_a_childs_progress_lines_reach_a_parent_that_shows_them(toy):
    config = toy.config({"cand": 0.3}, ACCURACY)
    lines: dict[str, list[tuple[str, str]]] = {}
    for executor in ("local", "process"):
        got: list[tuple[str, str]] = []
        evaluate(
            config, output_dir=toy.root / executor, executor=executor, progress=lambda m, s, got=got: got.append((m, s))
        )
        lines[executor] = [(model, re.sub(r"[\d.]+", "N", text)) for model, text in got]  # times differ
    assert lines["process"] == lines["local"] and any(model == "cand" for model, _ in lines["process"])
