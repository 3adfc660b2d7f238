"""Issue 29 items 11, 15, 25: repeats are bounded, two seeds on one pass are a config error, and a metric that gives
``"repeats": 1`` gets its one generation seeded, with the seed in a PythonModel's batch column ``repeat_seed``."""

from __future__ import annotations

import json

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.config import load_run_config
from olive_eval.config.repeats import MAX_GENERATIONS, MAX_REPEATS
from olive_eval.errors import ConfigError
from tests.helpers import python_model_run, write_jsonl

MODELS = """
import numpy as np


class SeedEcho:
    '''Answers the seed of the repeat it generates ('none' without one), and a draw from NumPy's generator.'''

    def __call__(self, batch):
        n = len(batch["x"])
        if "repeat_seed" not in batch:
            return ["none"] * n
        return [f"{int(s)}:{np.random.randint(1000)}" for s in batch["repeat_seed"]]


def load(model_path):
    open(model_path, "w").write("loaded")  # a marker: the model was loaded
    return SeedEcho()
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    write_jsonl(tmp_path / "d.jsonl", [{"x": i, "target": "7"} for i in range(5)])
    return tmp_path


def exact(name: str, **extra) -> dict:
    return {"name": name, "sub_types": [{"name": "exact_match", "priority": 1 if name == "a" else -1}], **extra}


def run_cli(folder, config: dict, capsys) -> tuple[int, str]:
    path = folder / "run.json"
    path.write_text(json.dumps(config))
    code = main(["--config", str(path), "--quiet"])
    return code, capsys.readouterr().err


def predictions(folder) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_table(folder / "out" / "instances" / "m" / "a.parquet").column("prediction").to_pylist()


# ------------------------------------------------------------------------------------ item 25: repeats 1
def test_repeats_1_gives_a_python_model_the_seed_column_and_seeds_the_generators(folder):
    import numpy as np

    np.random.seed(7)
    draws = [f"7:{np.random.randint(1000)}" for _ in range(2)]  # a batch of two
    config = python_model_run(folder, exact("a", repeats=1, repeat_seed=7), batch_size=2)
    result = evaluate(config)
    model = result.models["m"]
    assert model.status == "ok", model.error
    assert predictions(folder) == [*draws, *draws, draws[0]]  # each batch seeded again, as each repeat is
    assert not any("identical" in w for w in model.warnings)  # one repeat: nothing to compare


def test_without_repeats_the_batch_has_no_seed_column(folder):
    result = evaluate(python_model_run(folder, exact("a")))
    assert predictions(folder) == ["none"] * 5
    assert result.models["m"].status == "ok"


# ------------------------------------------------------------------------------ item 15: seeds on one pass
def two_metrics(folder, seed_a: int, seed_b: int, data_b: str = "d") -> dict:
    config = python_model_run(folder, exact("a", repeats=2, repeat_seed=seed_a, reduction="mean"))
    config["metrics"].append(
        {"type": "accuracy", "data_config": data_b, **exact("b", repeats=2, repeat_seed=seed_b, reduction="mean")}
    )
    return config


def test_two_seeds_on_one_pass_are_a_config_error_naming_both_metrics(folder, capsys):
    with pytest.raises(ConfigError) as info:
        load_run_config(two_metrics(folder, 1, 2))
    assert info.value.path == "metrics[1].repeat_seed"
    assert info.value.message == (
        "metric 'b' (repeat_seed 2) shares the pass over data config 'd' with metric 'a' at metrics[0].repeat_seed "
        "(repeat_seed 1): one pass generates one set of samples; give them one repeat_seed"
    )
    code, err = run_cli(folder, two_metrics(folder, 1, 2), capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"olive-eval: config error: {folder / 'run.json'}: metrics[1].repeat_seed: {info.value.message}"
    ]
    assert not (folder / "loaded").exists()  # before any model loads


def test_a_metric_without_repeats_or_on_another_pass_may_give_another_seed(folder):
    config = two_metrics(folder, 1, 2)
    del config["metrics"][1]["repeats"], config["metrics"][1]["reduction"]
    load_run_config(config)
    other = two_metrics(folder, 1, 2, data_b="e")
    other["data_configs"].append({**other["data_configs"][0], "name": "e"})
    load_run_config(other)


# ---------------------------------------------------------------------------------- item 11: bounded repeats
def test_repeats_above_the_maximum_are_a_config_error(folder, capsys):
    with pytest.raises(ConfigError) as info:
        load_run_config(python_model_run(folder, exact("a", repeats=MAX_REPEATS + 1, reduction="mean")))
    assert (info.value.path, info.value.message) == (
        "metrics[0].repeats",
        f"Input should be less than or equal to {MAX_REPEATS}",
    )
    code, err = run_cli(folder, python_model_run(folder, exact("a", repeats=10**9, reduction="mean")), capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"olive-eval: config error: {folder / 'run.json'}: metrics[0].repeats: Input should be less than or equal "
        f"to {MAX_REPEATS}"
    ]
    assert not (folder / "loaded").exists()


def test_repeats_times_examples_above_the_cap_are_refused_before_any_model_loads(folder, capsys):
    examples = MAX_GENERATIONS // MAX_REPEATS + 1
    write_jsonl(folder / "d.jsonl", [{"x": i, "target": "7"} for i in range(examples)])
    config = python_model_run(folder, exact("a", repeats=MAX_REPEATS, reduction="mean"))
    code, err = run_cli(folder, config, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"olive-eval: config error: {folder / 'run.json'}: metrics[0].repeats: metric 'a' asks for {MAX_REPEATS} "
        f"repeats of the {examples} examples of data config 'd': {MAX_REPEATS * examples} samples, above the "
        f"{MAX_GENERATIONS} a pass may hold; lower repeats, or set load_dataset_config.limit"
    ]
    assert not (folder / "loaded").exists()
    config["data_configs"][0]["load_dataset_config"]["limit"] = examples - 1  # at the cap: accepted
    config["metrics"][0]["repeats"] = 2
    assert evaluate(config).models["m"].status == "ok"
