"""Executor settings are built by ``executor_registry.build`` (the one builder of ``{type: ...}`` objects): a bare
name, an object with or without its type, or settings already built; each wrong spec is one line that says why,
in the words the run config and the command line use."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from olive_eval.config import load_run_config
from olive_eval.config.executor import (
    DEFAULT_EXECUTOR,
    LocalConfig,
    ProcessConfig,
    RayConfig,
    executor_config,
    executor_registry,
)
from olive_eval.errors import ConfigError
from olive_eval.registry_spec import SpecError

NAMES = ", ".join(executor_registry.names())
METRICS = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}]


def test_a_bare_name_is_that_type_with_its_defaults() -> None:
    settings = executor_config("process")
    assert type(settings) is ProcessConfig and settings == ProcessConfig(type="process")


def test_an_object_is_validated_by_its_registered_class() -> None:
    settings = executor_config({"type": "ray", "num_workers": 3, "resources_per_model": {"num_gpus": 0.5}})
    assert type(settings) is RayConfig
    assert settings.num_workers == 3 and settings.resources_per_model.num_gpus == 0.5


def test_an_object_without_a_type_is_the_default_executor() -> None:
    settings = executor_config({"shards": 2})
    assert DEFAULT_EXECUTOR == "local" and type(settings) is LocalConfig and settings.shards == 2


def test_built_settings_pass_through_unchanged() -> None:
    built = ProcessConfig(type="process", timeout_s=3)
    assert executor_config(built) is built


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("forked", f"type: unknown executor type 'forked'; executor types: {NAMES}"),
        ({"type": "forked"}, f"type: unknown executor type 'forked'; executor types: {NAMES}"),
        ({"type": 5}, f"type: unknown executor type 5; executor types: {NAMES}"),
        (5, "an executor is a type name or an object with a 'type', not int"),
        (["process"], "an executor is a type name or an object with a 'type', not list"),
    ],
)
def test_a_spec_that_names_no_executor_says_why(spec: object, message: str) -> None:
    with pytest.raises(SpecError) as err:
        executor_config(spec)
    assert str(err.value) == message


def test_a_bad_key_is_pydantics_error_for_the_caller_to_locate() -> None:
    with pytest.raises(ValidationError) as err:
        executor_config({"type": "process", "shards": 0})
    assert err.value.errors()[0]["loc"] == ("shards",)


@pytest.mark.parametrize(
    ("executor", "path", "message"),
    [
        ({"type": "forked"}, "executor.type", f"unknown executor type 'forked'; executor types: {NAMES}"),
        ({"type": 5}, "executor.type", "expected a string, got 5"),
        ({"type": "local", "timeout_s": 5}, "executor.timeout_s", "the local executor cannot stop a model that hangs"),
        ({"type": "process", "nope": 1}, "executor.nope", "unknown key"),
        ("process", "executor", 'expected an object, got "process"'),  # a bare name only on the command line
    ],
)
def test_the_run_config_locates_a_bad_executor(toy, executor: object, path: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_run_config({**toy.config({}, METRICS), "executor": executor})
    assert err.value.path == path and err.value.message.startswith(message)


def test_the_run_config_default_is_the_local_executor(toy) -> None:
    assert type(load_run_config(toy.config({}, METRICS)).executor) is LocalConfig
