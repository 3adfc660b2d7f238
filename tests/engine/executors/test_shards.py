"""A pass split into shards: values, intervals and the evidence paired goals resample are bit-identical to one
process's; more shards than examples is a one-line error."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.config import load_run_config
from olive_eval.engine.executors.fork_server import (
    LAZY_IMPORTS,
    engine_modules,
    ensure_server,
    fork_context,
    runtime_module,
)
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.passes.shards import RowRange, shard_ranges
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.plan import make_plan
from olive_eval.errors import ConfigError
from olive_eval.records.results import ModelResult
from tests.engine.unit_helpers import run_sharded

CI = {"method": "percentile", "n_resamples": 200, "seed": 3}
METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "confidence_interval": CI},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
            {"name": "auroc", "metric_config": {"task": "multiclass", "num_classes": 3}, "confidence_interval": CI},
        ],
    }
]


def one_process(run: Any, model: Any) -> tuple[ModelResult, dict[str, Any]]:
    evaluator = ModelEvaluator(run, make_plan(run), DataStore(run))
    result = evaluator.evaluate(model)
    return result, evaluator.evidence[model.display_name()]


def sharded(run: Any, model: Any, shards: int, mapper: Any = map) -> tuple[ModelResult, dict[str, Any]]:
    record, scored = run_sharded(run, model, "toy", ["acc"], shards, mapper)
    recorder = Recorder(model.display_name(), ModelResult(status="ok"))
    metric = run.all_metrics[0]
    for item in scored["acc"]:
        recorder.record(metric, item.sub, item.score, item.evidence)
    assert record.examples == 120
    return recorder.result, recorder.evidence


def same(a: tuple[ModelResult, dict[str, Any]], b: tuple[ModelResult, dict[str, Any]]) -> None:
    keys = ["acc-accuracy_score", "acc-f1_score", "acc-auroc"]
    for key in keys:
        x, y = a[0].metrics[key], b[0].metrics[key]
        assert (x.value, x.ci_low, x.ci_high) == (y.value, y.ci_low, y.ci_high), key
        ex, ey = a[1][key].sample, b[1][key].sample
        if ex.statistics is not None:
            assert np.array_equal(ex.statistics, ey.statistics), key  # what a paired goal resamples
        else:
            for fx, fy in zip(ex.fields, ey.fields, strict=True):
                assert np.array_equal(np.asarray(fx), np.asarray(fy)), key
    assert a[0].metrics["acc-accuracy_score"].ci_low is not None


@pytest.mark.parametrize("shards", [2, 3, 8])
def test_shards_in_this_process_give_one_process_values(toy, shards):
    run = load_run_config(toy.config({"cand": 0.5}, METRICS))
    model = run.models()[1]
    same(sharded(run, model, shards), one_process(run, model))


def test_shards_in_two_processes_give_one_process_values(toy):
    run = load_run_config(toy.config({"cand": 0.5}, METRICS))
    model = run.models()[1]
    # the process executor's fork server, started as it starts it (with what a child imports): a bare one started
    # here would be the server of every later child of this interpreter, each then importing the engine itself
    onnx = runtime_module("ONNXModel")
    preload = sorted(engine_modules() | ({onnx} if onnx else set())) + list(LAZY_IMPORTS)
    context = fork_context(preload)
    ensure_server(context, preload)
    with context.Pool(2) as pool:
        got = sharded(run, model, 2, pool.map)
    same(got, one_process(run, model))


def test_more_shards_than_examples_is_a_one_line_error(toy):
    with pytest.raises(ConfigError) as info:
        shard_ranges(5, 6, "toy")
    assert str(info.value) == "shards is 6, more than the 5 examples of data config 'toy'"
    run = load_run_config(toy.config({}, METRICS))
    with pytest.raises(
        ConfigError, match=r"^shards is 9, more than the 8 batches of 16 examples of data config 'toy'$"
    ):
        run_sharded(run, run.models()[0], "toy", ["acc"], 9)


def test_shard_bounds_fall_on_whole_batches():
    assert shard_ranges(120, 2, "toy", 16) == [(0, 64), (64, 120)]
    assert shard_ranges(10, 3, "toy") == [(0, 3), (3, 6), (6, 10)]


GOAL = {"type": "max-degradation", "value": 0.05, "confidence": 0.9, "n_resamples": 200}


def with_goal() -> list[dict[str, Any]]:
    metrics = [dict(METRICS[0])]
    subs = [dict(s) for s in METRICS[0]["sub_types"]]
    subs[0]["goal"] = GOAL
    subs[2]["goal"] = GOAL
    metrics[0]["sub_types"] = subs
    return metrics


def outcome(result: Any) -> dict[str, Any]:
    return {
        name: {key: (s.value, s.ci_low, s.ci_high, s.goal) for key, s in model.metrics.items()}
        for name, model in result.models.items()
    }


@pytest.mark.parametrize("executor", ["local", "process"])
def test_a_run_with_shards_gives_the_values_intervals_and_goals_of_one_process(toy, executor):
    config = toy.config({"cand": 0.5, "near": 0.05}, with_goal())
    one = evaluate(config, output_dir=toy.root / "one")
    got = evaluate({**config, "executor": {"type": executor, "shards": 3}}, output_dir=toy.root / executor)
    assert outcome(got) == outcome(one)
    assert got.models["cand"].metrics["acc-accuracy_score"].goal is not None
    assert got.models["cand"].passes["toy"]["examples"] == 120


ORDERED = """
import numpy as np


def ordered(model_output, targets):
    preds = np.asarray(model_output.preds)
    preds = preds.argmax(axis=1) if preds.ndim > 1 else preds
    return {"s": float(np.sum(np.arange(len(targets)) * (preds == targets)))}
"""


def with_files(root: Any) -> list[dict[str, Any]]:
    """The shard tests' metrics, a sample log of 70 records (past the first shard's 64) and a custom metric
    whose value depends on the examples' order."""
    script = root / "ordered.py"
    script.write_text(ORDERED)
    custom = {
        "name": "ordered",
        "type": "custom",
        "data_config": "toy",
        "sample_log_num": 70,
        "sub_types": [{"name": "s", "priority": 2, "higher_is_better": True}],
        "user_config": {"user_script": str(script), "metric_func": "ordered"},
    }
    return [{**METRICS[0], "sample_log_num": 70}, custom]


def same_files(one: Any, other: Any) -> int:
    """The per-example files under two output folders have the same names and contents (a Parquet file's row
    groups may differ); the number of files compared."""
    import pyarrow.parquet as pq

    def files(root: Any) -> list[Any]:
        return sorted(
            p.relative_to(root) for d in ("instances", "samples") for p in (root / d).rglob("*") if p.is_file()
        )

    names = files(one)
    assert names == files(other)
    for name in names:
        if name.suffix == ".parquet":
            a, b = pq.read_table(one / name), pq.read_table(other / name)
            assert a.num_rows == 120 and a.equals(b, check_metadata=True), name
        else:
            assert (one / name).read_bytes() == (other / name).read_bytes(), name
    return len(names)


@pytest.mark.parametrize("executor", ["local", "process"])
def test_a_sharded_run_writes_the_per_example_files_of_one_process(toy, executor):
    config = toy.config({"cand": 0.5}, with_files(toy.root))
    one = evaluate(config, output_dir=toy.root / "one")
    got = evaluate({**config, "executor": {"type": executor, "shards": 3}}, output_dir=toy.root / executor)
    assert outcome(got) == outcome(one)
    ordered = [m.metrics["ordered-s"].value for m in (one.models["cand"], got.models["cand"])]
    assert ordered[0] is not None and ordered[0] == ordered[1]
    assert not any("shards" in w for model in got.models.values() for w in model.warnings)
    files = sorted(p.name for p in (toy.root / executor).rglob("*") if p.is_file())
    assert "acc.parquet" in files and "acc_samples.jsonl" in files and "ordered_samples.jsonl" in files
    assert same_files(toy.root / "one", toy.root / executor) == 6  # 2 models: acc's records, 2 sample logs


def test_a_metric_failing_in_a_shard_fails_alone(toy):
    """A custom metric whose function raises fails alone; the others keep their values and files."""
    script = toy.root / "broken.py"
    script.write_text("def broken(model_output, targets):\n    raise ValueError('no')\n")
    broken = {
        "name": "broken",
        "type": "custom",
        "data_config": "toy",
        "sub_types": [{"name": "s"}],
        "user_config": {"user_script": str(script), "metric_func": "broken"},
    }
    config = toy.config({}, [METRICS[0], broken])
    one = evaluate(config, output_dir=toy.root / "one")
    got = evaluate({**config, "executor": {"type": "local", "shards": 2}}, output_dir=toy.root / "two")
    assert got.models["base"].metrics["broken-s"].error == one.models["base"].metrics["broken-s"].error
    assert got.models["base"].metrics["broken-s"].error is not None
    assert outcome(got) == outcome(one)
    same_files(toy.root / "one", toy.root / "two")


def test_a_row_range_cuts_across_chunks():
    chunks = [{"x": np.arange(0, 5)}, {"x": np.arange(5, 12)}, {"x": np.arange(12, 20)}]
    rows = RowRange(lambda: iter(chunks), 3, 14)
    assert np.concatenate([c["x"] for c in rows()]).tolist() == list(range(3, 14))
    assert [c["x"].tolist() for c in RowRange(lambda: iter(chunks), 5, 12)()] == [list(range(5, 12))]


@pytest.mark.parametrize("executor", ["local", "process"])
def test_more_shards_than_batches_is_a_config_error_before_any_model_loads(toy, capsys, executor):
    config = toy.config({"cand": 0.5}, METRICS)  # 120 examples in batches of 16: 8 batches
    config["executor"] = {"type": executor, "shards": 9}
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"olive-eval: config error: {path}: executor.shards: shards is 9, more than the 8 batches of 16 examples of "
        "data config 'toy'\n"
    )
    assert not (toy.root / "out" / "results.json").exists()


def test_as_many_shards_as_batches_is_accepted(toy):
    config = toy.config({}, METRICS)
    config["executor"] = {"type": "local", "shards": 8}
    assert evaluate(config).models["base"].status == "ok"
