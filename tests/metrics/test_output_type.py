"""``register_metric(output_type=...)``, lm-eval's metric output type (issue 32, seed 001), read as the call mode of
the passes the metric may score: ``generate_until`` over generating passes, the other three over forward passes;
a mismatch is a one-line config error when the run is planned, before any model loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.task import ALL_OUTPUT_TYPES

from olive_eval import evaluate, register_metric
from olive_eval.config import load_run_config
from olive_eval.engine.run.preflight import check_outputs
from olive_eval.errors import ConfigError
from olive_eval.metrics import Kind, Metric, metric_registry
from olive_eval.metrics.output_types import GENERATES, output_type_problem
from tests.helpers import write_jsonl

TYPES = ("generate_until", "loglikelihood", "multiple_choice", "loglikelihood_rolling")


@pytest.fixture
def lm_metrics():
    """Registers one instance metric per lm-eval output type, named after it; unregisters them after."""
    for output_type in TYPES:
        register_metric(name=f"ot_{output_type}", higher_is_better=True, kind="instance", output_type=output_type)(
            lambda prediction, reference: float(prediction == reference)
        )
    yield
    for output_type in TYPES:
        metric_registry.unregister(f"ot_{output_type}")


def test_the_output_types_are_lm_evals():
    """lm-eval's own list of a task's (and a metric's) output types is ours."""
    assert sorted(GENERATES) == sorted(ALL_OUTPUT_TYPES)


def test_registered_metrics_carry_their_output_type(lm_metrics):
    assert [metric_registry.get(f"ot_{t}").output_type for t in TYPES] == list(TYPES)
    register_metric(name="ot_none", higher_is_better=True)(lambda prediction, reference: 1.0)
    try:
        assert metric_registry.get("ot_none").output_type is None
    finally:
        metric_registry.unregister("ot_none")


def test_an_unknown_output_type_is_a_one_line_error():
    with pytest.raises(ValueError) as info:
        register_metric(name="ot_bad", higher_is_better=True, output_type="generate")(lambda p, r: 1.0)
    assert str(info.value) == (
        "metric 'ot_bad': output_type 'generate' is not one of 'generate_until', 'loglikelihood', "
        "'multiple_choice', 'loglikelihood_rolling'"
    )

    class Bad(Metric):
        name = "ot_bad_class"
        higher_is_better = True
        kind = Kind.INSTANCE
        output_type = "multiple-choice"

    with pytest.raises(ValueError, match=r"^metric 'ot_bad_class': output_type 'multiple-choice' is not one of"):
        register_metric(Bad)
    assert "ot_bad" not in metric_registry.names() and "ot_bad_class" not in metric_registry.names()


@pytest.mark.parametrize("output_type", TYPES)
def test_which_pass_each_output_type_fits(output_type):
    generates = output_type == "generate_until"
    assert output_type_problem(output_type, generates) is None
    assert output_type_problem(output_type, None) is None  # a plain callable decides itself
    assert output_type_problem(None, not generates) is None  # no output type: no check
    wants = "generated text" if generates else "a forward pass's scores"
    assert output_type_problem(output_type, not generates) == f"output_type '{output_type}' scores {wants}"


# ------------------------------------------------------------------------------ at plan time


def never_loaded(tmp_path: Path) -> Path:
    """A model folder that passes the file checks but fails to load: the config error must come first."""
    folder = tmp_path / "never_loaded"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    return folder


def config(tmp_path: Path, post: str, metric: str) -> dict[str, Any]:
    """A text-generation HfModel over a few prompts: ``decode`` generates, ``argmax`` runs one forward pass."""
    rows = [{"text": "a b", "answer": "c"}, {"text": "d", "answer": "e"}]
    model = {"type": "HfModel", "name": "gpt2", "model_path": str(never_loaded(tmp_path)), "task": "text-generation"}
    return {
        "input_model": model,
        "data_configs": [
            {
                "name": "gen",
                "load_dataset_config": {
                    "data_name": "json",
                    "data_files": str(write_jsonl(tmp_path / "p.jsonl", rows)),
                },
                "pre_process_data_config": {
                    "type": "text_generation_huggingface_pre_process",
                    "input_cols": ["text"],
                    "label_col": "answer",
                },
                "post_process_data_config": {"type": post},
            }
        ],
        "metrics": [
            {
                "name": "lm",
                "type": "accuracy",
                "data_config": "gen",
                "sub_types": [{"name": "exact_match", "priority": 1}, {"name": metric, "priority": 2}],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }


@pytest.mark.parametrize("output_type", ["loglikelihood", "multiple_choice", "loglikelihood_rolling"])
def test_a_forward_output_type_over_a_generating_pass_is_a_config_error(tmp_path, lm_metrics, output_type):
    with pytest.raises(ConfigError) as err:
        evaluate(config(tmp_path, "decode", f"ot_{output_type}"))
    assert err.value.path == "metrics[0].sub_types[1].name"
    assert err.value.message == (
        f"metric 'ot_{output_type}' has output_type '{output_type}' scores a forward pass's scores, but data config "
        "'gen' calls model 'gpt2' (input_model) generating"
    )


def test_generate_until_over_a_forward_pass_is_a_config_error(tmp_path, lm_metrics):
    with pytest.raises(ConfigError) as err:
        evaluate(config(tmp_path, "argmax", "ot_generate_until"))
    assert err.value.path == "metrics[0].sub_types[1].name"
    assert err.value.message == (
        "metric 'ot_generate_until' has output_type 'generate_until' scores generated text, but data config 'gen' "
        "calls model 'gpt2' (input_model) on a forward pass"
    )


@pytest.mark.parametrize(("post", "output_type"), [("decode", "generate_until"), ("argmax", "multiple_choice")])
def test_a_fitting_output_type_passes_the_plan_check(tmp_path, lm_metrics, post, output_type):
    check_outputs(load_run_config(config(tmp_path, post, f"ot_{output_type}")), ["gen"])
