"""``fail_on_miss`` in the config: a gate that cannot pass, or that names a model the run does not evaluate, is a
config error at ``fail_on_miss`` before any model runs."""

from __future__ import annotations

import json

import pytest

from olive_eval.config import RunConfig, load_run_config
from olive_eval.config.gate import parse_names
from olive_eval.errors import ConfigError


def accuracy(goal: dict | None) -> dict:
    sub = {"name": "accuracy_score", "priority": 1}
    return {
        "name": "acc",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [sub | ({"goal": goal} if goal else {})],
    }


GOAL = {"type": "max-degradation", "value": 0.01}


@pytest.fixture
def config(toy):
    return toy.config({"fast": 0.1, "small": 0.2}, [accuracy(GOAL)])


def error_of(config: dict) -> str:
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_the_default_is_no_gate_and_true_or_names_are_kept(config):
    assert load_run_config(config).fail_on_miss is False
    assert load_run_config(config | {"fail_on_miss": True}).fail_on_miss is True
    assert load_run_config(config | {"fail_on_miss": ["small", "fast"]}).fail_on_miss == ["small", "fast"]


def test_no_gate_needs_no_goal(toy):
    off = toy.config({"fast": 0.1}, [accuracy(None)]) | {"fail_on_miss": False}
    assert load_run_config(off).fail_on_miss is False


@pytest.mark.parametrize("setting", [True, ["fast"]])
def test_a_gate_without_goals_is_a_config_error(toy, setting):
    no_goals = toy.config({"fast": 0.1}, [accuracy(None)]) | {"fail_on_miss": setting}
    assert error_of(no_goals) == (
        "<config>: fail_on_miss: the config sets no goal, so no candidate can miss one; give a sub-type a 'goal'"
    )


def test_an_unknown_name_is_an_error_at_its_index_with_a_hint(config):
    assert error_of(config | {"fail_on_miss": ["fast", "smal"]}) == (
        "<config>: fail_on_miss[1]: no candidate named 'smal'; did you mean 'small'?"
    )
    assert error_of(config | {"fail_on_miss": ["int8"]}) == (
        "<config>: fail_on_miss[0]: no candidate named 'int8'; valid: fast, small"
    )


def test_the_baseline_cannot_be_gated(config):
    assert error_of(config | {"fail_on_miss": ["base"]}) == (
        "<config>: fail_on_miss[0]: 'base' is the baseline (input_model): goals are relative to it, it has none to miss"
    )


def test_a_config_without_candidates_cannot_pass_the_gate(toy):
    alone = toy.config({}, [accuracy(GOAL)]) | {"fail_on_miss": True}
    assert error_of(alone) == "<config>: fail_on_miss: the config has no candidates to meet the goals"
    assert error_of(alone | {"fail_on_miss": ["x"]}) == (
        "<config>: fail_on_miss[0]: no candidate named 'x'; the config has no candidates"
    )


@pytest.mark.parametrize(
    ("setting", "shown"),
    [([], None), ("fast", '"fast"'), (1, "1"), (None, "null"), (["fast", 2], '["fast", 2]'), ({"a": 1}, '{"a": 1}')],
)
def test_a_value_of_the_wrong_kind_is_one_line(config, setting, shown):
    message = error_of(config | {"fail_on_miss": setting})
    if shown is None:
        assert message == (
            "<config>: fail_on_miss: name at least one candidate, or give true to pass when any candidate meets "
            "every goal"
        )
    else:
        assert message == f"<config>: fail_on_miss: give true, false or a list of candidate names, not {shown}"


def test_the_error_names_the_file(config, tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config | {"fail_on_miss": ["nope"]}))
    assert error_of(path).startswith(f"{path}: fail_on_miss[0]: no candidate named 'nope'")


def test_with_fail_on_miss_replaces_the_setting_in_a_copy(config, tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config | {"fail_on_miss": ["fast"]}))
    run = load_run_config(path)
    gated = run.with_fail_on_miss(True)
    assert gated.fail_on_miss is True and run.fail_on_miss == ["fast"]
    assert (gated.source, gated.source_dir) == (str(path), tmp_path)  # errors found later still name the file
    with pytest.raises(ValueError, match=r"^no candidate named 'slow'; valid: fast, small$"):
        run.with_fail_on_miss(["slow"])
    with pytest.raises(ValueError, match=r"^give true, false or a list of candidate names$"):
        run.with_fail_on_miss("fast")  # type: ignore[arg-type]


def test_the_schema_documents_the_key():
    prop = RunConfig.model_json_schema(by_alias=True)["properties"]["fail_on_miss"]
    assert "exits 3" in prop["description"] and prop["default"] is False


@pytest.mark.parametrize(("text", "names"), [("a", ["a"]), ("a,b", ["a", "b"]), (" a , b c ", ["a", "b c"])])
def test_the_flags_names_split_at_commas(text, names):
    assert parse_names(text) == names


@pytest.mark.parametrize("text", ["", ",", "a,", "a,,b", " "])
def test_an_empty_name_in_the_flag_is_an_error(text):
    with pytest.raises(ValueError, match=r"^give candidate names separated by commas"):
        parse_names(text)
