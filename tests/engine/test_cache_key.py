"""The cache key follows what a model's values depend on (file contents, metric and data configs), and not
goals, priorities or the model's name; files are hashed once per process, safely."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import pytest

from olive_eval.engine.cache import content_hash
from tests.engine.cache_helpers import key_of, write_config
from tests.helpers import linear_onnx


@pytest.fixture
def setup(toy, tmp_path):
    return write_config(toy, tmp_path)


def test_the_key_ignores_goals_priorities_and_the_models_name(setup):
    config, _ = setup
    base = key_of(config)
    goal = copy.deepcopy(config)
    goal["metrics"][0]["sub_types"][0]["goal"]["value"] = 0.01
    priority = copy.deepcopy(config)
    priority["metrics"][0]["sub_types"][0]["priority"] = 2
    priority["metrics"][2]["sub_types"][0]["priority"] = 1
    renamed = copy.deepcopy(config)
    renamed["candidates"][0]["name"] = "renamed"
    assert key_of(goal) == key_of(priority) == base
    assert key_of(renamed, "renamed") == base


def test_the_key_follows_metric_config_and_data_config(setup, toy):
    config, _ = setup
    base = key_of(config)
    metric = copy.deepcopy(config)
    metric["metrics"][0]["sub_types"][1]["metric_config"]["average"] = "macro"
    batch = copy.deepcopy(config)
    batch["data_configs"][0]["dataloader_config"]["batch_size"] = 7
    device = copy.deepcopy(config)
    device["execution_providers"] = ["CPUExecutionProvider"]
    keys = {base, key_of(metric), key_of(batch)}
    assert len(keys) == 3
    assert key_of(device) == base  # the providers it defaults to anyway


def test_the_key_follows_the_data_files_content(setup, toy):
    config, _ = setup
    base = key_of(config)
    lines = toy.data_file.read_text().splitlines()
    toy.data_file.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")  # same size, new content
    assert key_of(config) != base


def test_the_key_follows_a_model_file_rewritten_with_the_same_size_and_mtime(setup, toy):
    config, _ = setup
    model = Path(config["candidates"][0]["model_path"])
    base = key_of(config)
    stat = model.stat()
    linear_onnx(model, toy.weights + 1.0)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model.stat().st_size == stat.st_size and model.stat().st_mtime_ns == stat.st_mtime_ns
    assert key_of(config) != base


def test_the_hash_memo_survives_an_mtime_set_back(tmp_path, monkeypatch):
    """Remembered digests are keyed by ctime too, which os.utime cannot set back."""
    monkeypatch.setattr(content_hash, "RACY_SECONDS", float("-inf"))  # remember even fresh files
    path = tmp_path / "weights.bin"
    path.write_bytes(b"a" * 1000)
    first = content_hash.file_sha256(path)
    reads = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: reads.append(self) or real_open(self, *a, **k))
    assert content_hash.file_sha256(path) == first and reads == []  # hashed once per process
    stat = path.stat()
    time.sleep(0.05)  # past the filesystem clock's tick, so the rewrite gets a new ctime
    path.write_bytes(b"b" * 1000)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert content_hash.file_sha256(path) != first


def test_a_fresh_file_is_not_remembered(tmp_path):
    path = tmp_path / "fresh.bin"
    path.write_bytes(b"x")
    content_hash.file_sha256(path)
    assert not any(k[0] == str(path) for k in content_hash._memo)


def test_a_folder_hashes_its_files_recursively(tmp_path):
    (tmp_path / "m" / "sub").mkdir(parents=True)
    (tmp_path / "m" / "a.bin").write_bytes(b"1")
    (tmp_path / "m" / "sub" / "b.bin").write_bytes(b"2")
    before = content_hash.tree_sha256(tmp_path / "m")
    (tmp_path / "m" / "sub" / "b.bin").write_bytes(b"3")
    assert content_hash.tree_sha256(tmp_path / "m") != before


def test_the_key_follows_a_user_script(setup, tmp_path):
    config, _ = setup
    script = tmp_path / "helpers.py"
    script.write_text("X = 1\n")
    with_script = copy.deepcopy(config)
    with_script["metrics"][0]["user_config"] = {"user_script": str(script)}
    base = key_of(with_script)
    script.write_text("X = 2\n")
    assert key_of(with_script) != base


def test_timing_counts_only_when_timings_are_cached(setup):
    config, _ = setup
    slower = copy.deepcopy(config)
    slower["metrics"][2]["sub_types"][0]["metric_config"]["repeat_test_num"] = 5
    rounds = copy.deepcopy(config)
    rounds["timing"] = {"rounds": 3}
    assert key_of(slower) == key_of(rounds) == key_of(config)
    with_timing = key_of(config, include_timing=True)
    assert len({with_timing, key_of(slower, include_timing=True), key_of(rounds, include_timing=True)}) == 3


def test_folders_that_are_not_inputs_are_not_hashed(setup, tmp_path):
    """Samples written into sample_log_dir, or other files beside a user script, leave the key as it was."""
    config, _ = setup
    samples, scripts = tmp_path / "samples", tmp_path / "scripts"
    samples.mkdir()
    scripts.mkdir()
    (scripts / "helpers.py").write_text("X = 1\n")
    with_folders = copy.deepcopy(config)
    with_folders["metrics"][0]["sample_log_dir"] = str(samples)
    with_folders["metrics"][0]["user_config"] = {"user_script": str(scripts / "helpers.py"), "script_dir": str(scripts)}
    base = key_of(with_folders)
    (samples / "acc_samples.jsonl").write_text("{}\n")
    (scripts / "notes.txt").write_text("unrelated\n")
    assert key_of(with_folders) == base
