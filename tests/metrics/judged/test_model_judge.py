"""A model olive-eval runs as the judge: a tiny random Llama (an ``HfModel``) loaded by the engine with the run's
context and generating through its lm-eval adapter. Its replies are noise, so every one is unparseable: counted,
excluded, and the value undefined, never 0; the model is recorded as the judge and loaded once for two sub-types."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.judges import RunJudges, plan_judge
from olive_eval.errors import EvaluationError
from olive_eval.judges import judge_key
from olive_eval.metrics.registry import get_metric
from tests.runtimes import llm_models

CPU = RunContext("cpu", (("CPUExecutionProvider", {}),), False, {}, None)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory):
    return llm_models.build_tiny_llama(tmp_path_factory.mktemp("judge_llama") / "hf")


def test_a_generating_model_judges_and_its_noise_is_excluded_not_scored(llama):
    spec = {
        "type": "model",
        "model": {"type": "HfModel", "model_path": str(llama), "task": "text-generation"},
        "max_new_tokens": 6,
        "batch_size": 4,
    }
    key = judge_key(spec)
    judges = RunJudges({key: plan_judge(spec, Path.cwd(), False)}, CPU)
    bias = get_metric("bias", {"judge": spec})
    bias.bind_judges(judges)
    score = bias.reduce(bias.statistics(["one opinion", "another one"]))
    assert math.isnan(score.value) and score.details["unparseable"] == 2
    identity = score.details["judge"]
    assert identity["source"] == "model" and identity["runtime"]["runtime"] == "transformers"
    assert identity["runtime"]["device"] == "cpu"  # the run's: the spec names none
    assert identity["generation"]["max_gen_toks"] == 6 and identity["model"]["model_path"] == str(llama)
    toxicity = get_metric("toxicity", {"judge": spec})
    toxicity.bind_judges(judges)
    toxicity.statistics(["one opinion"])
    judge = judges[key]
    assert judge.calls == 1  # the opinions prompt of "one opinion" was cached by bias; one batched call
    judges.close()
    assert judges[key] is not judge  # closed with its holder: asked again, it is built (and loaded) again
    judges.close()


def test_a_model_judge_outside_a_run_says_it_needs_one(tmp_path):
    """A model judge is loaded by the engine, with the run's context; a metric on its own does not load one."""
    spec = {"type": "model", "model": {"type": "HfModel", "model_path": str(tmp_path), "task": "text-generation"}}
    with pytest.raises(EvaluationError, match=r"^a model judge runs on a model the run loads .*judge with a function"):
        get_metric("bias", {"judge": spec}).statistics(["an opinion"])


def test_a_model_judge_whose_folder_is_missing_is_a_config_error_when_the_run_is_planned(tmp_path):
    from olive_eval import evaluate
    from olive_eval.errors import ConfigError
    from tests.metrics.judged.test_run import config

    judge = {"type": "model", "model": {"type": "HfModel", "model_path": str(tmp_path / "nope")}}
    with pytest.raises(ConfigError) as err:
        evaluate(config(tmp_path, [{"name": "bias", "metric_config": {"judge": judge}}]))
    assert err.value.path == "metrics[0].sub_types[0].metric_config.judge.model.model_path"
    assert err.value.message == f"folder not found: {tmp_path / 'nope'}"
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize(
    ("model", "key", "says"),
    [
        ({"type": "ONNXModel"}, "type", "ONNXModel models do not generate text"),
        ({"type": "HfModel", "task": "text-classification"}, "task", "task text-classification does not generate"),
    ],
)
def test_a_judge_model_that_cannot_generate_is_refused_before_the_run(tmp_path, capsys, model, key, says):
    """Before, an ONNX classifier as the judge passed the config and failed when the run built the judge."""
    import json

    import numpy as np

    from olive_eval.cli import main
    from tests.helpers import linear_onnx
    from tests.metrics.judged.test_run import config

    onnx_file = linear_onnx(tmp_path / "classifier.onnx", np.eye(3, dtype=np.float32))
    folder = tmp_path / "hf_classifier"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    judge = {
        "type": "model",
        "model": {**model, "model_path": str(onnx_file if model["type"] == "ONNXModel" else folder)},
    }
    run = config(tmp_path, [{"name": "bias", "metric_config": {"judge": judge}}])
    file = tmp_path / "run.json"
    file.write_text(json.dumps(run))
    code = main(["--config", str(file), "--quiet", "--no-cache"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0
    assert f"{file}: metrics[0].sub_types[0].metric_config.judge.model.{key}: " in err
    assert says in err and "a judge model must generate text" in err
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"model_path": "m"}, "missing required key: a judge model needs a type (HfModel, GenAIModel...)"),
        ({"type": "HFModel", "model_path": "m"}, "unknown model type 'HFModel'; did you mean 'HfModel'?"),
        ({"type": 5}, "expected a string, got 5"),
    ],
)
def test_a_judge_model_whose_type_names_no_model_type_says_so_at_its_type(model, message):
    """Built by the model types' registry (``Registry.build``): before, an unknown type was reported at
    ``judge.type`` (the judge's own type) and a number as the type raised a TypeError."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as err:
        get_metric("bias", {"judge": {"type": "model", "model": model}})
    assert err.value.errors()[0]["ctx"] == {"subpath": "model.type", "message": message}
