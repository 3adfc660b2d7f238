"""Bad configs fail with one line naming the file and the JSON path; good Olive configs pass unchanged."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from olive_eval.config import load_run_config
from olive_eval.config.loader import strip_trailing_commas
from olive_eval.errors import ConfigError


@pytest.fixture
def base(toy):
    return toy.config(
        {"cand": 0.1},
        [
            {
                "name": "accuracy",
                "type": "accuracy",
                "data_config": "toy",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.01}}
                ],
            },
            {"name": "latency", "type": "latency", "data_config": "toy", "sub_types": [{"name": "avg", "priority": 2}]},
        ],
    )


def error_of(config, tmp_path: Path | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    message = str(info.value)
    assert "\n" not in message
    return message


def modified(config, fn):
    out = copy.deepcopy(config)
    fn(out)
    return out


def test_valid_config_loads(base):
    run = load_run_config(base)
    assert [m.display_name() for m in run.models()] == ["base", "cand"]
    assert run.all_metrics[1].sub_types[0].higher_is_better is False


def test_malformed_json_reports_line_and_column(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{\n  "input_model": {\n    "type": "ONNXModel"\n    "model_path": "m.onnx"\n  }\n}\n')
    message = error_of(path)
    assert message.startswith(f"{path}: malformed JSON at line 4, column 5")


def test_trailing_commas_are_accepted_and_positions_kept():
    text = '{"a": [1, 2,], "b": {"c": ",}",},}'
    assert json.loads(strip_trailing_commas(text)) == {"a": [1, 2], "b": {"c": ",}"}}
    assert len(strip_trailing_commas(text)) == len(text)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda c: c["metrics"][0].update(subtypes=c["metrics"][0].pop("sub_types")),
            "metrics[0].subtypes: unknown key; did you mean 'sub_types'?",
        ),
        (
            lambda c: c["input_model"].update(modelpath="x"),
            "input_model.modelpath: unknown key; did you mean 'model_path'?",
        ),
        (lambda c: c.update(candidate=[]), "candidate: unknown key; did you mean 'candidates'?"),
        (
            lambda c: c["metrics"][0]["sub_types"][0]["goal"].update(valu=1),
            "metrics[0].sub_types[0].goal.valu: unknown key; did you mean 'value'?",
        ),
        (
            lambda c: c["metrics"][1]["sub_types"][0].update(metric_config={"warmup": 1}),
            "metrics[1].sub_types[0].metric_config.warmup: unknown key; did you mean 'warmup_num'?",
        ),
        (
            lambda c: c["metrics"][0]["sub_types"][0].update(metric_config={"averge": "macro"}),
            "metrics[0].sub_types[0].metric_config.averge: unknown key; did you mean 'average'?",
        ),
        (
            lambda c: c["data_configs"][0]["dataloader_config"].update(batchsize=2),
            "data_configs[0].dataloader_config.batchsize: unknown key; did you mean 'batch_size'?",
        ),
    ],
)
def test_unknown_keys_name_the_path_and_suggest(base, mutate, expected):
    assert error_of(modified(base, mutate)) == f"<config>: {expected}"


def test_missing_model_file(base, tmp_path):
    message = error_of(modified(base, lambda c: c["candidates"][0].update(model_path=str(tmp_path / "nope.onnx"))))
    assert message == f"<config>: candidates[0].model_path: file not found: {tmp_path / 'nope.onnx'}"


def test_unknown_sub_type_lists_valid_ones(base):
    message = error_of(modified(base, lambda c: c["metrics"][0]["sub_types"][0].update(name="bleu_score")))
    assert message.startswith(
        "<config>: metrics[0].sub_types[0].name: unknown accuracy sub-type 'bleu_score'; did you mean 'brier_score'? valid: "
    )
    for name in ("accuracy_score", "f1_score", "precision", "recall", "auroc", "perplexity"):
        assert name in message
    message = error_of(modified(base, lambda c: c["metrics"][1]["sub_types"][0].update(name="p98")))
    assert message == (
        "<config>: metrics[1].sub_types[0].name: unknown latency sub-type 'p98'; did you mean 'p99'? "
        "valid: avg, min, max, p50, p75, p90, p95, p99, p999, std, cv, load, first_call, ttft, ttft_p50, ttft_p90, "
        "tpot, tpot_p50, tpot_p90, e2e, e2e_p50, e2e_p90, tokens_per_second, tokens_per_second_p50, "
        "tokens_per_second_p90, prefill_tokens_per_second, prefill_tokens_per_second_p50, "
        "prefill_tokens_per_second_p90, peak_memory_mb"
    )


def test_duplicate_metric_names(base):
    message = error_of(modified(base, lambda c: c["metrics"][1].update(name="accuracy")))
    assert message == "<config>: metrics[1].name: metric name 'accuracy' is used twice"


def test_duplicate_model_names(base):
    message = error_of(modified(base, lambda c: c["candidates"][0].update(name="base")))
    assert (
        message
        == "<config>: candidates[0].name: model name 'base' is already used by input_model; give each model a unique name"
    )


def test_model_name_defaults_to_file_stem(base):
    config = modified(base, lambda c: [m.pop("name") for m in [c["input_model"], *c["candidates"]]])
    assert [m.display_name() for m in load_run_config(config).models()] == ["base", "cand"]


@pytest.mark.parametrize(
    ("priorities", "problem"),
    [
        ((1, 1), "accuracy-accuracy_score and latency-avg share priority 1; missing 2"),
        ((1, 3), "latency-avg has priority 3; missing 2"),
        ((2, 3), "accuracy-accuracy_score has priority 3 ... "),
        ((1, 0), "latency-avg has priority 0; missing 2"),
    ],
)
def test_priority_gaps_and_duplicates(base, priorities, problem):
    def mutate(c):
        c["metrics"][0]["sub_types"][0]["priority"] = priorities[0]
        c["metrics"][1]["sub_types"][0]["priority"] = priorities[1]

    message = error_of(modified(base, mutate))
    assert message.startswith("<config>: metrics: ranked priorities must be exactly 1..2 across all metrics")
    if not problem.endswith("... "):
        assert message.endswith(problem)
    else:
        assert "missing 1" in message


def test_olive_priority_vectors(base):
    """Olive's test_priority: two latency metrics with avg priorities (1,2) ok, (1,1) error, (2,1) ok, (1,0) error."""
    outcomes = {}
    for pair in [(1, 2), (1, 1), (2, 1), (1, 0)]:

        def mutate(c, pair=pair):
            c["metrics"] = [
                {"name": f"lat{i}", "type": "latency", "sub_types": [{"name": "avg", "priority": p}]}
                for i, p in enumerate(pair)
            ]

        try:
            load_run_config(modified(base, mutate))
            outcomes[pair] = "ok"
        except ConfigError:
            outcomes[pair] = "error"
    assert outcomes == {(1, 2): "ok", (1, 1): "error", (2, 1): "ok", (1, 0): "error"}


def test_lone_sub_type_gets_priority_one_and_many_unranked_fail(base):
    config = modified(
        base, lambda c: c.update(metrics=[{"name": "lat", "type": "latency", "sub_types": [{"name": "avg"}]}])
    )
    assert load_run_config(config).all_metrics[0].sub_types[0].priority == 1
    config["metrics"][0]["sub_types"].append({"name": "max"})
    assert error_of(config) == (
        "<config>: metrics[0].sub_types[0].priority: none of the 2 sub-types (lat-avg, lat-max) has a priority; with "
        'more than one, rank at least one: "priority": 1 for the most important (then 2, 3... for others you '
        "rank; -1 or none: measured, not ranked)"
    )


def test_undefined_data_config_lists_defined(base):
    message = error_of(modified(base, lambda c: c["metrics"][0].update(data_config="imagenet")))
    assert message == "<config>: metrics[0].data_config: data config 'imagenet' is not defined; defined: toy"


def test_user_script_missing_or_without_function(base, tmp_path):
    script = tmp_path / "user.py"
    script.write_text("def other(model, device, execution_providers):\n    return 1.0\n")
    custom = {
        "name": "custom",
        "type": "custom",
        "sub_types": [{"name": "score", "priority": 3, "higher_is_better": True}],
        "user_config": {"user_script": str(tmp_path / "missing.py"), "evaluate_func": "score"},
    }
    message = error_of(modified(base, lambda c: c["metrics"].append(custom)))
    assert (
        message == f"<config>: metrics[2].user_config.user_script: user_script {tmp_path / 'missing.py'} does not exist"
    )
    custom["user_config"]["user_script"] = str(script)
    message = error_of(modified(base, lambda c: c["metrics"].append(custom)))
    assert (
        message
        == f"<config>: metrics[2].user_config.evaluate_func: user_script {script} has no function 'score'; it defines: other"
    )


def test_ranked_custom_sub_type_must_state_direction(base, tmp_path):
    script = tmp_path / "user.py"
    script.write_text("def score(model, device, execution_providers):\n    return 1.0\n")
    custom = {
        "name": "custom",
        "type": "custom",
        "sub_types": [{"name": "score", "priority": 3}],
        "user_config": {"user_script": str(script), "evaluate_func": "score"},
    }
    message = error_of(modified(base, lambda c: c["metrics"].append(custom)))
    assert (
        message
        == "<config>: metrics[2].sub_types[0].higher_is_better: a ranked or goal-bearing custom sub-type must state it"
    )


@pytest.mark.parametrize(
    ("metric", "goal", "ok"),
    [
        (0, {"type": "percent-max-degradation", "value": 50}, True),
        (0, {"type": "percent-max-degradation", "value": 100}, False),  # accuracy: (0, 100)
        (0, {"type": "percent-min-improvement", "value": 150}, True),  # accuracy: (0, inf)
        (1, {"type": "percent-min-improvement", "value": 100}, False),  # latency: (0, 100)
        (1, {"type": "percent-max-degradation", "value": 150}, True),  # latency: (0, inf)
        (0, {"type": "percent-min-improvement", "value": 0}, False),
        (0, {"type": "max-degradation", "value": 0}, True),
        (0, {"type": "max-degradation", "value": -0.1}, False),
        (0, {"type": "threshold", "value": -5}, True),
        (0, {"type": "max_degradation", "value": 1}, False),
    ],
)
def test_goal_ranges_follow_olive(base, metric, goal, ok):
    config = modified(base, lambda c: c["metrics"][metric]["sub_types"][0].update(goal=goal))
    if ok:
        load_run_config(config)
    else:
        assert f"metrics[{metric}].sub_types[0].goal" in error_of(config)


def test_perplexity_is_lower_is_better_by_default(base):
    config = modified(base, lambda c: c["metrics"][0]["sub_types"].append({"name": "perplexity"}))
    subs = load_run_config(config).all_metrics[0].sub_types
    assert [s.higher_is_better for s in subs] == [True, False]


def test_execution_provider_shapes(base):
    for ok in [
        "CPUExecutionProvider",
        ["CPUExecutionProvider"],
        ["CPUExecutionProvider", {}],
        [["CPUExecutionProvider", {}]],
    ]:
        run = load_run_config(modified(base, lambda c, ok=ok: c.update(execution_providers=ok)))
        assert run.execution_providers == [("CPUExecutionProvider", {})]
    for bad in [["CPUExecutionProvider", {}, {}], [["CPUExecutionProvider"]]]:
        assert "execution_providers" in error_of(modified(base, lambda c, bad=bad: c.update(execution_providers=bad)))


def test_errors_name_the_config_file(base, tmp_path):
    bad = modified(base, lambda c: c["metrics"][0].update(typ="accuracy"))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(bad))
    assert error_of(path) == f"{path}: metrics[0].typ: unknown key; did you mean 'type'?"


def test_relative_paths_resolve_against_the_config_file(toy, base):
    config = copy.deepcopy(base)
    config["input_model"]["model_path"] = "base.onnx"
    config["candidates"][0]["model_path"] = "cand.onnx"
    config["data_configs"][0]["load_dataset_config"]["data_files"] = "data.jsonl"
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    run = load_run_config(path)
    assert run.input_model.model_path == toy.root / "base.onnx"
