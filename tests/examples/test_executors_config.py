"""configs/executors.json (the quickstart's models, each in a child process, its data in two shards) gives the
values, intervals, goals and per-example files of the same run in this process, unsharded."""

from pathlib import Path

import pyarrow.parquet as pq

from olive_eval import evaluate

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "executors.json"


def test_the_shipped_executors_config_equals_one_process(tmp_path) -> None:
    sharded = evaluate(CONFIG, output_dir=tmp_path / "sharded")
    local = evaluate(CONFIG, output_dir=tmp_path / "local", executor={"type": "local"})
    assert sharded.environment["config"]["executor"] == {"type": "process", "shards": 2, "timeout_s": 120.0}
    for name, model in local.models.items():
        other = sharded.models[name]
        assert other.status == model.status == "ok"
        for key, sub in model.metrics.items():
            assert (other.metrics[key].value, other.metrics[key].ci_low, other.metrics[key].ci_high) == (
                sub.value,
                sub.ci_low,
                sub.ci_high,
            ), key
            assert (other.metrics[key].goal is None) == (sub.goal is None)
            if sub.goal is not None:
                assert (other.metrics[key].goal.met, other.metrics[key].goal.margin_bound) == (
                    sub.goal.met,
                    sub.goal.margin_bound,
                )
        files = sorted((tmp_path / "local" / "instances" / model.folder).glob("*.parquet"))
        assert files
        for path in files:
            assert pq.read_table(tmp_path / "sharded" / "instances" / model.folder / path.name).equals(
                pq.read_table(path)
            )
    assert sharded.best == local.best == "digits_int8"
