"""End to end through ``olive_eval.evaluate`` on locally built ONNX models."""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import pytest
from sklearn.metrics import accuracy_score, f1_score

from olive_eval import evaluate
from olive_eval.errors import DataError
from olive_eval.runtimes.onnx import OnnxRuntime


def acc_metric(**extra):
    return {
        "name": "accuracy",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.05}},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
        ],
        **extra,
    }


def test_results_match_an_independent_computation(toy):
    config = toy.config({"close": 0.05, "far": 1.5}, [acc_metric()])
    result = evaluate(config)
    on_disk = json.loads((toy.root / "out" / "results.json").read_text())
    assert on_disk == result.to_dict()
    assert on_disk["baseline"] == "base"
    for name in ("base", "close", "far"):
        session = onnx.load(str(toy.root / f"{name}.onnx"))
        weights = onnx.numpy_helper.to_array(session.graph.initializer[0])
        preds = (toy.x @ weights).argmax(axis=1)
        metrics = on_disk["models"][name]["metrics"]
        assert on_disk["models"][name]["status"] == "ok"
        assert metrics["accuracy-accuracy_score"]["value"] == pytest.approx(
            accuracy_score(toy.labels, preds), abs=1e-12
        )
        assert metrics["accuracy-f1_score"]["value"] == pytest.approx(
            f1_score(toy.labels, preds, average="macro"), abs=1e-12
        )
        assert metrics["accuracy-accuracy_score"]["priority"] == 1
        assert metrics["accuracy-f1_score"]["priority"] == -1
    base_acc = on_disk["models"]["base"]["metrics"]["accuracy-accuracy_score"]["value"]
    for name in ("close", "far"):
        goal = on_disk["models"][name]["metrics"]["accuracy-accuracy_score"]["goal"]
        assert goal["threshold"] == pytest.approx(base_acc - 0.05)
        assert goal["met"] == (
            on_disk["models"][name]["metrics"]["accuracy-accuracy_score"]["value"] >= base_acc - 0.05
        )
    assert on_disk["ranking"] == [n for n in ("close", "far") if on_disk["models"][n]["goals_met"]]
    assert on_disk["best"] == (on_disk["ranking"][0] if on_disk["ranking"] else None)


def test_one_inference_pass_per_model_and_data_config(toy, monkeypatch, tmp_path):
    script = tmp_path / "metric_funcs.py"
    script.write_text(
        "import numpy as np\ndef mean_logit(model_output, targets):\n    return float(np.mean(model_output.logits))\n"
    )
    calls: list[int] = []
    original = OnnxRuntime.predict

    def counting_predict(self, batch):
        calls.append(batch.size)
        return original(self, batch)

    monkeypatch.setattr(OnnxRuntime, "predict", counting_predict)
    metrics = [
        acc_metric(),
        {
            "name": "more",
            "type": "accuracy",
            "data_config": "toy",
            "sub_types": [{"name": "precision", "metric_config": {"average": "macro"}}, {"name": "recall"}],
        },
        {
            "name": "logit",
            "type": "custom",
            "data_config": "toy",
            "sub_types": [{"name": "mean_logit"}],
            "user_config": {"user_script": str(script), "metric_func": "mean_logit"},
        },
    ]
    result = evaluate(toy.config({"cand": 0.1}, metrics))
    assert all(m.status == "ok" for m in result.models.values())
    batches_per_pass = -(-len(toy.x) // 16)
    assert len(calls) == 2 * batches_per_pass  # two models, one pass each
    assert sum(calls) == 2 * len(toy.x)


def test_failing_candidate_does_not_stop_the_others(toy, tmp_path):
    script = tmp_path / "funcs.py"
    script.write_text(
        "def score(model, device, execution_providers):\n"
        "    if 'bad' in str(model.model_path):\n"
        "        raise RuntimeError('cannot score this one')\n"
        "    return {'score': 1.0}\n"
    )
    custom = {
        "name": "custom",
        "type": "custom",
        "sub_types": [{"name": "score", "priority": 2, "higher_is_better": True}],
        "user_config": {"user_script": str(script), "evaluate_func": "score"},
    }
    result = evaluate(toy.config({"bad": 0.1, "good": 0.0}, [acc_metric(), custom]))
    # Issue 6 item 20: the failing metric carries its error; the metrics that succeeded are kept.
    assert result.models["bad"].status == "partial"
    message = (
        "custom metric 'custom' on model 'bad': evaluate_func 'score' raised RuntimeError: cannot score this one"
        f" (at {script}:3)"
    )
    assert result.models["bad"].metrics["custom-score"].error == message
    assert result.models["bad"].metrics["custom-score"].value is None
    kept = result.models["bad"].metrics["accuracy-accuracy_score"]
    assert kept.error is None and 0 < kept.value <= 1
    assert result.models["bad"].error == f"metric(s) custom failed: {message}"
    assert not result.models["bad"].goals_met  # custom-score is ranked but has no value
    assert result.models["good"].status == "ok" and result.models["good"].metrics["custom-score"].value == 1.0
    assert result.ranking == ["good"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return 'high'", "evaluate_func 'f' returned str 'high'; expected a number or a dict keyed by sub-type name"),
        ("return [1.0]", "evaluate_func 'f' returned list [1.0]; expected a number or a dict keyed by sub-type name"),
        ("return {'other': 1.0}", "evaluate_func 'f' returned keys ['other'] without sub-type 's'"),
        # a NaN is the sub-type undefined, not an error (issue 29 item 8: tests/engine/test_undefined_user_values.py)
        # Issue 6 item 19: infinity is refused like NaN, and extra keys are named, not dropped.
        ("return float('inf')", "evaluate_func 'f' returned a non-finite value: 's' = inf"),
        ("return {'s': -float('inf')}", "evaluate_func 'f' returned a non-finite value: 's' = -inf"),
        (
            "return {'s': 1.0, 'extra': 2.0, 'more': 3}",
            "evaluate_func 'f' returned keys that are not sub-types of the metric: extra, more; sub-types: s",
        ),
        ("return {'s': None}", "evaluate_func 'f' returned NoneType None for 's'; expected a number"),
    ],
)
def test_custom_function_bad_returns(toy, tmp_path, body, message):
    script = tmp_path / "f.py"
    script.write_text(f"def f(model, device, execution_providers):\n    {body}\n")
    custom = {
        "name": "c",
        "type": "custom",
        "sub_types": [{"name": "s"}],
        "user_config": {"user_script": str(script), "evaluate_func": "f"},
    }
    result = evaluate(toy.config({}, [custom]))
    assert result.models["base"].status == "failed"
    assert result.models["base"].metrics["c-s"].error == f"custom metric 'c' on model 'base': {message}"


def test_evaluate_func_wins_over_metric_func_and_gets_kwargs(toy, tmp_path):
    script = tmp_path / "f.py"
    script.write_text(
        "def ev(model, device, execution_providers, scale):\n    return {'a': scale * 2, 'b': len(execution_providers)}\n"
        "def mf(model_output, targets):\n    raise AssertionError('metric_func must not run')\n"
    )
    custom = {
        "name": "c",
        "type": "custom",
        "sub_types": [
            {"name": "a", "priority": 1, "higher_is_better": True},
            {"name": "b", "priority": 2, "higher_is_better": False},
        ],
        "user_config": {
            "user_script": str(script),
            "evaluate_func": "ev",
            "metric_func": "mf",
            "evaluate_func_kwargs": {"scale": 3},
        },
    }
    result = evaluate(toy.config({}, [custom]))
    assert result.models["base"].metrics["c-a"].value == 6.0
    assert result.models["base"].metrics["c-b"].value == 1.0


def test_dataset_without_label_column(toy):
    config = toy.config({"cand": 0.1}, [acc_metric()])
    config["data_configs"][0]["pre_process_data_config"]["label_col"] = "target"
    message = "data config 'toy': label column 'target' is not a column of the dataset; columns: x, label"
    with pytest.raises(DataError, match=f"^{re.escape(message)}$"):  # when the run is planned, before any loads
        evaluate(config)


def test_unavailable_execution_provider_names_available_ones(toy):
    config = toy.config({}, [acc_metric()])
    config["input_model"]["inference_settings"] = {"execution_provider": ["CUDAExecutionProvider"]}
    result = evaluate(config)
    error = result.models["base"].error
    assert result.models["base"].status == "failed"
    assert "CUDAExecutionProvider" in error and "available: " in error and "CPUExecutionProvider" in error


def test_results_are_written_after_each_model(toy):
    seen = {}

    def progress(model, message):
        path = toy.root / "out" / "results.json"
        if model == "cand" and message == "loading model":
            seen["at_cand_start"] = json.loads(path.read_text())

    evaluate(toy.config({"cand": 0.1, "later": 0.2}, [acc_metric()]), progress=progress)
    snapshot = seen["at_cand_start"]
    assert snapshot["models"]["base"]["status"] == "ok"
    assert snapshot["models"]["cand"]["status"] == "running"  # named before it starts, should the process die
    assert snapshot["models"]["later"]["status"] == "pending"
    assert [snapshot["models"][n]["goals_met"] for n in ("cand", "later")] == [None, None]  # not known yet


def test_latency_throughput_and_size(toy):
    metrics = [
        {
            "name": "lat",
            "type": "latency",
            "data_config": "toy",
            "sub_types": [
                {"name": n, "metric_config": {"warmup_num": 2, "repeat_test_num": 7}}
                for n in ("avg", "min", "max", "p50", "p90", "p999")
            ],
        },
        {
            "name": "thr",
            "type": "throughput",
            "data_config": "toy",
            "sub_types": [
                {"name": "avg", "metric_config": {"warmup_num": 2, "repeat_test_num": 7}},
                {"name": "min", "metric_config": {"warmup_num": 2, "repeat_test_num": 7}},
            ],
        },
        {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes", "priority": 1}]},
    ]
    result = evaluate(toy.config({}, metrics))
    m = result.models["base"].metrics
    assert m["lat-min"].value <= m["lat-p50"].value <= m["lat-p90"].value <= m["lat-p999"].value <= m["lat-max"].value
    assert m["lat-avg"].unit == "ms" and not m["lat-avg"].higher_is_better
    assert m["thr-min"].value <= m["thr-avg"].value and m["thr-avg"].higher_is_better
    assert m["size-bytes"].value == (toy.root / "base.onnx").stat().st_size


def test_size_on_disk_counts_external_data(tmp_path):
    from tests.helpers import linear_onnx

    path = linear_onnx(tmp_path / "big.onnx", np.ones((64, 64), dtype=np.float32))
    proto = onnx.load(str(path))
    onnx.save_model(proto, str(path), save_as_external_data=True, location="big.data", size_threshold=0)
    config = {
        "input_model": {"type": "ONNXModel", "model_path": str(path)},
        "metrics": [{"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]}],
        "output_dir": str(tmp_path / "out"),
    }
    result = evaluate(config)
    expected = path.stat().st_size + (tmp_path / "big.data").stat().st_size
    assert result.models["big"].metrics["size-bytes"].value == expected
    assert (tmp_path / "big.data").stat().st_size >= 64 * 64 * 4


def test_latency_with_dummy_inputs_from_the_graph(tmp_path):
    from tests.helpers import linear_onnx

    static = linear_onnx(tmp_path / "static.onnx", np.ones((8, 3), dtype=np.float32), batch=4)
    dynamic = linear_onnx(tmp_path / "dynamic.onnx", np.ones((8, 3), dtype=np.float32))
    metric = {"name": "lat", "type": "latency", "sub_types": [{"name": "avg", "metric_config": {"repeat_test_num": 3}}]}
    ok = evaluate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(static)},
            "metrics": [metric],
            "output_dir": str(tmp_path / "a"),
        }
    )
    assert ok.models["static"].status == "ok" and ok.models["static"].metrics["lat-avg"].value > 0
    bad = evaluate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(dynamic)},
            "metrics": [metric],
            "output_dir": str(tmp_path / "b"),
        }
    )
    assert bad.models["dynamic"].metrics["lat-avg"].error == (
        "dummy data: model input 'x' has a dynamic shape ['N', 8]; give input_shapes in a DummyDataContainer data config"
    )
    dummy = {
        "name": "dummy",
        "type": "DummyDataContainer",
        "load_dataset_config": {"input_names": ["x"], "input_shapes": [[2, 8]], "input_types": ["float32"]},
    }
    fixed = evaluate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(dynamic)},
            "data_configs": [dummy],
            "metrics": [{**metric, "data_config": "dummy"}],
            "output_dir": str(tmp_path / "c"),
        }
    )
    assert fixed.models["dynamic"].status == "ok"
