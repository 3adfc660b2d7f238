"""The ray executor on a local Ray (two CPUs): the same values as the local executor, a dying worker failing only
its model (after one retry), and one-line errors for a missing Ray, an unreachable address, impossible resources."""

from __future__ import annotations

import builtins
import json
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest
import ray

from olive_eval import evaluate
from olive_eval.engine.session.session import Evaluation
from olive_eval.errors import MissingDependencyError, UsageError
from tests.helpers import write_jsonl

ACC = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}]
RAY = {"type": "ray", "address": "local", "num_workers": 2}

MODELS = textwrap.dedent(
    """
    import os
    from pathlib import Path


    class Echo:
        def __call__(self, batch):
            return [int(v) % 3 for v in batch["v"]]


    def load_echo(model_path):
        return Echo()


    class Dies:
        def __init__(self, marker):
            self.marker = marker

        def __call__(self, batch):
            if self.marker is None or not Path(self.marker).exists():
                if self.marker is not None:
                    Path(self.marker).write_text("died once")
                os._exit(3)  # the worker process goes, as a segfault or an out-of-memory kill takes it
            return [int(v) % 3 for v in batch["v"]]


    def load_always_dies(model_path):
        return Dies(None)


    def load_dies_once(model_path):
        return Dies(Path(__file__).parent / "marker")  # the workers started before the test: no env var


    def load_hangs(model_path):
        import time

        time.sleep(3600)
    """
)


def python_config(tmp_path, loaders: dict[str, str], executor: dict, models: str = MODELS) -> dict:
    (tmp_path / "models.py").write_text(models)
    data = write_jsonl(tmp_path / "d.jsonl", [{"v": i, "label": i % 3} for i in range(12)])

    def model(name: str, loader: str) -> dict:
        return {"type": "PythonModel", "name": name, "user_script": str(tmp_path / "models.py"), "model_loader": loader}

    names = list(loaders)
    return {
        "input_model": model(names[0], loaders[names[0]]),
        "candidates": [model(name, loaders[name]) for name in names[1:]],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["v"], "label_col": "label"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": ACC,
        "output_dir": str(tmp_path / "out"),
        "executor": executor,
    }


def test_values_are_those_of_the_local_executor(local_ray, toy, tmp_path):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "confidence_interval": {"n_resamples": 200}},
                {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
            ],
        },
        {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
    ]
    config = toy.config({"c1": 0.2, "c2": 0.5, "c3": 0.8}, metrics)
    lines: list[tuple[str, str]] = []
    here = evaluate(config, output_dir=tmp_path / "local")
    there = evaluate(config, output_dir=tmp_path / "ray", executor=RAY, progress=lambda m, s: lines.append((m, s)))
    for name, model in here.models.items():
        other = there.models[name]
        assert other.status == model.status == "ok", other.error
        assert {k: (s.value, s.ci_low, s.ci_high) for k, s in other.metrics.items()} == {
            k: (s.value, s.ci_low, s.ci_high) for k, s in model.metrics.items()
        }
        assert all(entry["node"]["hostname"] == socket.gethostname() for entry in other.runtimes)
        assert all("node" not in entry for entry in model.runtimes)  # a local run says nothing new
    assert here.ranking == there.ranking and here.best == there.best
    # the per-example files were written by the workers, where a local run writes them
    assert (tmp_path / "ray" / "instances" / "c2").is_dir()
    saved = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert saved["models"]["c3"]["runtimes"][0]["node"]["hostname"] == socket.gethostname()
    # progress names each worker's model
    assert any(m == "c2" and s.startswith("[") and "started" in s for m, s in lines)


def test_a_worker_that_dies_fails_only_its_model_after_one_retry(local_ray, tmp_path):
    marker = tmp_path / "marker"
    loaders = {"base": "load_echo", "dies": "load_always_dies", "once": "load_dies_once", "fine": "load_echo"}
    lines: list[tuple[str, str]] = []
    result = evaluate(python_config(tmp_path, loaders, RAY), progress=lambda m, s: lines.append((m, s)))
    assert result.models["dies"].status == "failed"
    assert "Ray worker died (retried once)" in (result.models["dies"].error or "")
    assert result.models["once"].status == "ok" and marker.exists()  # the retry finished it
    assert any(m == "once" and "started again" in s for m, s in lines)
    assert (
        result.models["fine"].metrics["acc-accuracy_score"].value
        == result.models["base"].metrics["acc-accuracy_score"].value
    )
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["models"]["fine"]["status"] == "ok" and saved["models"]["dies"]["status"] == "failed"


def test_a_hanging_model_ends_at_its_timeout(local_ray, tmp_path):
    loaders = {"base": "load_echo", "hangs": "load_hangs", "fine": "load_echo"}
    clock = time.perf_counter()
    result = evaluate(python_config(tmp_path, loaders, {**RAY, "timeout_s": 3}))
    assert time.perf_counter() - clock < 60
    assert result.models["hangs"].status == "failed"
    assert "ran past its timeout of 3 s" in (result.models["hangs"].error or "")
    assert result.models["fine"].status == "ok"


def test_a_session_evaluates_a_batch_of_candidates_at_once(local_ray, toy, tmp_path):
    config = toy.config({}, ACC)
    with Evaluation(config, executor=RAY) as session:
        results = session.evaluate_many(
            [{"type": "ONNXModel", "name": f"p{i}", "model_path": str(toy.model(f"p{i}", 0.3 * i))} for i in range(3)]
        )
        assert [r.name for r in results] == ["p0", "p1", "p2"]
        assert all(r.status == "ok" for r in results)
        assert results[0].metrics["acc-accuracy_score"].value == 1.0  # no noise: the baseline's weights
        assert set(session.result.models) == {"base", "p0", "p1", "p2"}


# ------------------------------------------------------------------------------ bad input
def test_ray_not_installed_is_one_line_naming_the_extra(toy, monkeypatch):
    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(MissingDependencyError, match=r"pip install 'olive-eval\[ray\]'"):
        evaluate(toy.config({}, ACC), executor=RAY)


def test_a_ray_client_address_without_the_client_says_what_to_install(toy, monkeypatch):
    real = builtins.__import__

    def no_grpc(name, *args, **kwargs):  # Ray Client's one package beyond ray itself
        if name == "grpc" or name.startswith("grpc."):
            raise ImportError("No module named 'grpc'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_grpc)
    with pytest.raises(MissingDependencyError) as info:
        evaluate(toy.config({}, ACC), executor={"type": "ray", "address": "ray://127.0.0.1:10001"})
    assert str(info.value) == (
        "the 'ray' executor at 'ray://127.0.0.1:10001' (Ray Client) needs the 'ray[client]' package; install it "
        "with: pip install 'olive-eval[ray]'"
    )


def test_the_ray_extra_installs_ray_client():
    lines = (Path(__file__).parents[3] / "pyproject.toml").read_text().splitlines()  # tomllib: Python 3.11 on
    extra = next(line for line in lines if line.startswith("ray = ["))
    assert extra.startswith('ray = ["ray[client]==2.60.0"]'), extra
    assert '    "ray[client]==2.60.0",' in lines  # the dev extra's


def test_an_unreachable_address_fails_in_seconds(toy):
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    clock = time.perf_counter()
    with pytest.raises(UsageError, match=rf"cannot reach the Ray cluster at 'ray://127.0.0.1:{port}'"):
        evaluate(toy.config({}, ACC), executor={"type": "ray", "address": f"ray://127.0.0.1:{port}"})
    assert time.perf_counter() - clock < 10


def test_resources_no_node_has_are_refused_before_submitting(local_ray, toy):
    executor = {**RAY, "resources_per_model": {"num_cpus": 1, "num_gpus": 4}}
    with pytest.raises(UsageError, match="no node of the Ray cluster can give one model num_cpus 1, num_gpus 4"):
        evaluate(toy.config({"c": 0.1}, ACC), executor=executor)


def test_bad_executor_keys_are_config_errors(toy):
    from olive_eval.errors import ConfigError

    with pytest.raises(ConfigError, match="address is 'local', 'auto'"):
        evaluate(toy.config({}, ACC), executor={"type": "ray", "address": "nowhere"})
    with pytest.raises(ConfigError, match="timeout_s"):
        evaluate(toy.config({}, ACC), executor={"type": "ray", "timeout_s": 0})


def test_a_user_script_importing_what_the_workers_lack_fails_its_models_clearly(local_ray, toy, tmp_path):
    """The driver has a package the workers do not (added to its path after Ray started): one clear line."""
    lib = tmp_path / "driver_only"
    lib.mkdir()
    (lib / "olive_eval_test_driver_only.py").write_text("OFFSET = 0.0\n")
    script = tmp_path / "lacking_metrics.py"
    script.write_text(
        "import olive_eval_test_driver_only\n"
        "from olive_eval import register_metric\n\n\n"
        '@register_metric(name="ray_test_lacking", higher_is_better=True, kind="instance", reads=("logits", '
        '"references"))\n'
        "def lacking(logits, reference):\n"
        "    return float(logits[reference]) + olive_eval_test_driver_only.OFFSET\n"
    )
    metrics = [{**ACC[0], "user_config": {"user_script": str(script)}}]
    sys.path.insert(0, str(lib))
    try:
        result = evaluate(toy.config({"c": 0.1}, metrics), executor=RAY)
    finally:
        sys.path.remove(str(lib))
        sys.modules.pop("olive_eval_test_driver_only", None)
    for model in result.models.values():
        assert model.status == "failed"
        assert "Ray worker could not evaluate it: on " in (model.error or "")
        assert "olive_eval_test_driver_only" in (model.error or "")
        assert "install it on the workers" in (model.error or "")


def test_the_command_line_runs_on_ray(local_ray, toy, tmp_path, capsys):
    from olive_eval.cli import main

    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({"c": 0.1}, ACC)))
    assert main(["--config", str(path), "--executor", "ray", "--quiet"]) == 0
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["models"]["c"]["runtimes"][0]["node"]["hostname"] == socket.gethostname()


def test_a_batch_on_the_local_executor_equals_one_at_a_time(toy):
    config = toy.config({}, ACC)
    proposed = [{"type": "ONNXModel", "name": f"q{i}", "model_path": str(toy.model(f"q{i}", 0.4))} for i in range(2)]
    with Evaluation(config, output_dir=toy.root / "many") as session:
        many = session.evaluate_many(proposed)
    with Evaluation(config, output_dir=toy.root / "one") as session:
        one = [session.evaluate(candidate) for candidate in proposed]
    assert [(r.name, r.metrics["acc-accuracy_score"].value) for r in many] == [
        (r.name, r.metrics["acc-accuracy_score"].value) for r in one
    ]


def _raises() -> None:
    raise RuntimeError("the result could not be sent back")


def test_a_task_that_raises_outside_the_model_is_not_called_a_dead_worker(local_ray):
    from olive_eval.engine.executors.ray_executor import RayExecutor
    from olive_eval.engine.model.unit import ModelUnit
    from olive_eval.runtimes.python import PythonModelConfig

    executor = RayExecutor.__new__(RayExecutor)  # only its outcome reading, on a task of our own
    executor.ray = ray
    unit = ModelUnit(PythonModelConfig(type="PythonModel", name="m", user_script="m.py", model_loader="load"), "m")
    evaluation = executor._outcome(unit, ray.remote(max_retries=0)(_raises).remote())
    assert evaluation.result.status == "failed" and evaluation.result.folder == "m"
    assert evaluation.result.error == "the Ray worker could not evaluate it: the result could not be sent back"
