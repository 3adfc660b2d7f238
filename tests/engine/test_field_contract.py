"""The field contract: what a pass gives (engine/passes/fields.py) is what metrics get, and a metric reading a field its
data config does not give is a config error when the run is planned, before any model loads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.passes.fields import PASS_FIELDS, pass_fields
from olive_eval.errors import ConfigError
from olive_eval.metrics import metric_registry, register_metric
from olive_eval.metrics.base import Kind, Metric


@pytest.fixture
def every_field():
    """A metric reading every pass field and the references: it keeps what it got."""
    seen: dict[str, list[np.ndarray]] = {}

    @register_metric
    class EveryField(Metric):
        name = "test_every_pass_field"
        higher_is_better = True
        kind = Kind.INSTANCE
        reads = (*PASS_FIELDS, "references")

        def statistics(self, *fields):
            for name, values in zip(self.reads, fields, strict=True):
                seen.setdefault(name, []).append(np.asarray(values))
            return np.zeros(len(fields[0]))

    yield seen
    metric_registry.unregister("test_every_pass_field")


def metric(sub: str) -> dict:
    return {"name": "m", "type": "accuracy", "data_config": "toy", "sub_types": [{"name": sub}]}


def test_every_pass_field_reaches_a_metric(toy, every_field):
    config = toy.config({}, [metric("test_every_pass_field")])
    config["data_configs"][0]["post_process_data_config"] = {"type": "argmax"}
    model = evaluate(config).models["base"]
    assert model.status == "ok", model.error
    got = {name: np.concatenate(parts) for name, parts in every_field.items()}
    logits = toy.x @ toy.weights
    n = len(toy.labels)
    np.testing.assert_allclose(got["logits"], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got["prediction"], logits.argmax(axis=1))
    np.testing.assert_array_equal(got["references"], toy.labels)
    np.testing.assert_array_equal(got["batch_index"], np.arange(n) // 16)  # batch_size 16
    assert (got["model_seconds"] > 0).all() and (got["inference_seconds"] >= got["model_seconds"]).all()


def test_pass_fields_are_the_pass_fields_with_the_columns_and_references():
    assert pass_fields(["x", "audio_seconds"], "label") == sorted({*PASS_FIELDS, "x", "audio_seconds", "references"})
    assert "references" not in pass_fields(["x"], None)


def without_audio(toy) -> dict:
    """rtfx reads audio_seconds, a column the toy data does not have; the model file would fail to load."""
    config = toy.config({}, [metric("rtfx")])
    config["input_model"]["model_path"] = str(toy.root / "never_loaded.onnx")
    (toy.root / "never_loaded.onnx").write_bytes(b"not a model: loading it would fail")
    return config


def test_a_field_the_data_does_not_give_is_a_config_error_at_plan_time(toy):
    with pytest.raises(ConfigError) as err:
        evaluate(without_audio(toy))
    assert err.value.path == "metrics[0].sub_types[0].name"
    assert err.value.message == (
        "accuracy sub-type 'rtfx' reads audio_seconds, which data config 'toy' does not give; it gives: "
        "batch_index, inference_seconds, label, logits, model_seconds, prediction, references, x"
    )


def test_the_cli_exits_2_with_one_line_before_any_model_loads(toy, tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(without_audio(toy)))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "metrics[0].sub_types[0].name" in err[0] and "reads audio_seconds" in err[0]
