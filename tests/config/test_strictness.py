"""Input the validator must refuse: one line, the JSON path, before any model runs (issue 6, items 5-11, 23, 24)."""

from __future__ import annotations

import copy
import json
import time

import pytest

from olive_eval.cli import main
from olive_eval.config import load_run_config
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
                "confidence_interval": {"n_resamples": 100},
            },
            {
                "name": "latency",
                "type": "latency",
                "data_config": "toy",
                "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"repeat_test_num": 5}}],
            },
        ],
    )


def error_of(config) -> str:
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    message = str(info.value)
    assert "\n" not in message
    return message


def changed(config, path: str, value):
    """A copy of ``config`` with the value at a dotted/indexed path replaced."""
    out = copy.deepcopy(config)
    keys = [int(k) if k.isdigit() else k for k in path.replace("[", ".").replace("]", "").split(".")]
    node = out
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return out


# ------------------------------------------------------------------------------ item 5: NaN and infinity
@pytest.mark.parametrize(("literal", "shown"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity")])
def test_non_finite_json_literals_are_refused_with_their_path(base, tmp_path, literal, shown):
    text = json.dumps(base).replace('"value": 0.01', f'"value": {literal}')
    path = tmp_path / "run.json"
    path.write_text(text)
    message = error_of(path)
    assert message == (
        f"{path}: metrics[0].sub_types[0].goal.value: {shown} is not a number JSON allows; write a finite number"
    )


def test_non_finite_anywhere_in_a_dict_config(base):
    config = changed(base, "metrics[1].sub_types[0].metric_config.sleep_num", float("inf"))
    assert error_of(config).endswith(
        "metrics[1].sub_types[0].metric_config.sleep_num: Infinity is not a number JSON allows; write a finite number"
    )


# ------------------------------------------------------------------------------ item 6: strict types
@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("metrics[0].sub_types[0].priority", "1", 'expected an integer, got "1"'),
        ("metrics[0].sub_types[0].priority", 1.0, "expected an integer, got 1.0"),
        ("metrics[0].sub_types[0].priority", True, "expected an integer, got true"),
        ("data_configs[0].dataloader_config.batch_size", "64", 'expected an integer, got "64"'),
        ("data_configs[0].dataloader_config.batch_size", True, "expected an integer, got true"),
        ("metrics[0].sub_types[0].goal.value", "0.01", 'expected a number, got "0.01"'),
        ("metrics[1].sub_types[0].metric_config.repeat_test_num", "5", "expected an integer or 'auto', got \"5\""),
        ("metrics[0].sub_types[0].higher_is_better", 1, "expected true or false, got 1"),
        ("metrics[0].sub_types[0].higher_is_better", "true", 'expected true or false, got "true"'),
    ],
)
def test_numbers_must_be_numbers_and_booleans_booleans(base, path, value, expected):
    assert error_of(changed(base, path, value)) == f"<config>: {path}: {expected}"


def test_an_integer_valued_number_is_a_fine_float(base):
    run = load_run_config(changed(base, "metrics[0].sub_types[0].goal.value", 0))
    assert run.all_metrics[0].sub_types[0].goal.value == 0.0


# ------------------------------------------------------------------------------ item 7: encodings
def test_latin1_config_is_a_one_line_error(base, tmp_path, capsys):
    path = tmp_path / "run.json"
    text = json.dumps(changed(base, "input_model.name", "modèle"), ensure_ascii=False)
    path.write_bytes(text.encode("latin-1"))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"olive-eval: config error: {path}: not UTF-8 text: byte 0xE8 at line 1 cannot be decoded")
    assert "\n" not in err


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_utf16_utf32_and_bom_configs_are_read(base, tmp_path, encoding):
    path = tmp_path / "run.json"
    path.write_bytes(json.dumps(changed(base, "input_model.name", "modèle"), ensure_ascii=False).encode(encoding))
    assert load_run_config(path).baseline_name == "modèle"


# ------------------------------------------------------------------------------ item 8: a folder as model_path
def test_a_folder_as_model_path_is_named_at_config_time(base, tmp_path):
    empty = tmp_path / "empty_folder"
    empty.mkdir()
    message = error_of(changed(base, "candidates[0].model_path", str(empty)))
    assert message == (
        f"<config>: candidates[0].model_path: {empty} is a directory with 0 .onnx files; "
        "name the model file, or the one to use with onnx_file_name"
    )
    two = tmp_path / "two"
    two.mkdir()
    for name in ("a.onnx", "b.onnx"):
        (two / name).write_bytes(b"x")
    assert "is a directory with 2 .onnx files (a.onnx, b.onnx)" in error_of(
        changed(base, "candidates[0].model_path", str(two))
    )


def test_a_folder_with_one_onnx_file_is_olive_style_and_works(base, toy, tmp_path):
    folder = tmp_path / "model_dir"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(toy.model("inside").read_bytes())
    run = load_run_config(changed(base, "candidates[0].model_path", str(folder)))
    assert run.candidates[0].onnx_path == folder / "model.onnx"
    config = changed(base, "candidates[0].model_path", str(folder))
    config["candidates"][0]["onnx_file_name"] = "missing.onnx"
    assert error_of(config) == f"<config>: candidates[0].onnx_file_name: missing.onnx is not a file in {folder}"


def test_a_folder_as_torchscript_path(base, tmp_path):
    config = changed(base, "candidates[0]", {"type": "PyTorchModel", "name": "t", "model_path": str(tmp_path)})
    assert error_of(config) == (
        f"<config>: candidates[0].model_path: {tmp_path} is a directory; a PyTorchModel without model_loader "
        "needs a TorchScript or torch.export (.pt2) file"
    )


# ------------------------------------------------------------------------------ item 9: data_name
def test_a_mistyped_data_name_fails_at_once_without_the_network(base):
    started = time.perf_counter()
    message = error_of(changed(base, "data_configs[0].load_dataset_config.data_name", "jsonl"))
    assert time.perf_counter() - started < 30  # generous: the fault was 49 s of network retries
    assert message == (
        "<config>: data_configs[0].load_dataset_config.data_name: 'jsonl' is neither a dataset builder, a local "
        "folder, nor a dataset in the local Hugging Face cache; did you mean 'json'? for local files use json, csv, "
        'parquet or text with data_files; to download it, set "allow_download": true in the config or pass '
        "--allow-download"
    )


def test_a_hub_name_and_a_file_as_data_name(base, toy):
    assert (
        "'squad' is neither a dataset builder, a local folder, nor a dataset in the local Hugging Face cache"
        in error_of(changed(base, "data_configs[0].load_dataset_config.data_name", "squad"))
    )
    assert error_of(changed(base, "data_configs[0].load_dataset_config.data_name", str(toy.data_file))).endswith(
        f"'{toy.data_file}' is a file; read it with data_name 'json' with data_files"
    )


# ------------------------------------------------------------------------------ item 10: names
@pytest.mark.parametrize("name", ["two\nlines", "tab\there", "bell\x07", "  "])
def test_model_and_metric_names_with_control_characters(base, name):
    message = error_of(changed(base, "candidates[0].name", name))
    assert message.startswith("<config>: candidates[0].name: name")
    assert error_of(changed(base, "metrics[0].name", name)).startswith("<config>: metrics[0].name: name")


# ------------------------------------------------------------------------------ item 11: absurd sizes
@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("metrics[1].sub_types[0].metric_config.repeat_test_num", 10**9, "repeat_test_num must be 1 to 100,000"),
        ("metrics[1].sub_types[0].metric_config.warmup_num", 10**12, "less than or equal to 100000"),
        ("metrics[0].confidence_interval.n_resamples", 10**9, "less than or equal to 100000"),
        (
            "metrics[0].sub_types[0].goal",
            {"type": "max-degradation", "value": 0.01, "confidence": 0.9, "n_resamples": 10**9},
            "less than or equal to 100000",
        ),
    ],
)
def test_absurd_sizes_have_documented_upper_bounds(base, path, value, expected):
    assert expected in error_of(changed(base, path, value))


def test_dummy_shapes_too_large(base):
    base["data_configs"].append(
        {
            "name": "dummy",
            "type": "DummyDataContainer",
            "load_dataset_config": {
                "input_names": ["x"],
                "input_shapes": [[100000, 100000]],
                "input_types": ["float32"],
            },
        }
    )
    assert "at most 268,435,456 elements" in error_of(base)


# ------------------------------------------------------------------------------ item 23: empty data file
def test_an_empty_data_file_is_named(base, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    message = error_of(changed(base, "data_configs[0].load_dataset_config.data_files", str(empty)))
    assert message == f"<config>: data_configs[0].load_dataset_config.data_files: {empty} is empty: it has no rows"


# ------------------------------------------------------------------------------ item 24: not implemented is refused
def test_an_unbuilt_olive_component_is_refused_not_ignored(base):
    config = changed(base, "data_configs[0].load_dataset_config.type", "local_dataset")
    message = error_of(config)
    assert message.startswith(
        "<config>: data_configs[0].load_dataset_config: dataset 'local_dataset' is Olive's, but olive-eval does not "
        "have it (Olive 0.13 registers it but leaves it unimplemented"
    )
    assert "huggingface_dataset" in message and "local_dataset" not in message.split("available: ")[1]


def test_the_non_finite_check_finds_what_a_walk_over_every_node_finds():
    """:func:`find_non_finite` builds paths only for a config that holds a NaN or infinity: on random nested
    configs (and the edge cases) it gives what a walk over every node gives."""
    import math
    import random

    from olive_eval.config.loader import find_non_finite, json_nodes

    def walked(data):
        return next(((w, v) for w, v in json_nodes(data) if isinstance(v, float) and not math.isfinite(v)), None)

    leaves = [0.5, -0.0, 1e308, 7, True, None, "nan", float("nan"), float("inf"), -float("inf")]

    def random_value(rng: random.Random, depth: int):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(leaves[:6] if rng.random() < 0.9 else leaves)
        if rng.random() < 0.5:
            return {f"k{i}": random_value(rng, depth - 1) for i in range(rng.randrange(4))}
        return (list if rng.random() < 0.8 else tuple)(random_value(rng, depth - 1) for _ in range(rng.randrange(4)))

    rng = random.Random(0)
    configs = [random_value(rng, 5) for _ in range(2000)]
    edge = [{}, [], float("nan"), {"a": [{"b": (1, float("-inf"))}]}, {"x": {"nan": 1.0}}, [[[[float("inf")]]]]]
    found = 0
    for config in [*configs, *edge]:
        expected = walked(config)
        got = find_non_finite(config)
        assert (got is None) == (expected is None)
        if expected is not None:
            found += 1
            assert got[0] == expected[0] and repr(got[1]) == repr(expected[1])
    assert 100 < found < len(configs)  # both kinds were tried
