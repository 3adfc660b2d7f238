"""results.json records what was measured: each data config's version and file hashes, each checker's version
and code hash (the seed's ``split@version`` and ``checker@version|model``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from olive_eval import evaluate
from olive_eval.config.data import DataConfig
from olive_eval.engine.run.identity import data_paths, dataset_identity
from olive_eval.engine.session.session import Evaluation

CHECKER = """
def load(path):
    return lambda batch: [[{"span": [0, 5], "rule": "spelling"}] for _ in batch["text"]]
"""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_rows(path: Path, texts: list[str]) -> None:
    path.write_text("".join(json.dumps({"text": t, "violations": [{"span": [0, 5], "rule": "spelling"}]}) + "\n"
                            for t in texts))  # fmt: skip


def config(tmp_path: Path, *, data_version: str | None = "2024-05", model_version: str | None = "regex@1.1.0") -> dict:
    data = tmp_path / "docs.jsonl"
    if not data.exists():
        write_rows(data, ["hello world", "helloworld again"])
    (tmp_path / "checker.py").write_text(CHECKER)
    model = {"type": "PythonModel", "name": "m", "user_script": str(tmp_path / "checker.py"), "model_loader": "load"}
    dc = {
        "name": "d",
        "load_dataset_config": {"data_name": "json", "data_files": str(data)},
        "pre_process_data_config": {"type": "skip_pre_process", "input_cols": ["text"], "label_col": "violations"},
    }
    if data_version is not None:
        dc["version"] = data_version
    if model_version is not None:
        model["version"] = model_version
    return {
        "input_model": model,
        "data_configs": [dc],
        "metrics": [{"name": "v", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "std_f1"}]}],
        "output_dir": str(tmp_path / "out"),
    }  # fmt: skip


def environment(tmp_path: Path, **kwargs) -> dict:
    evaluate(config(tmp_path, **kwargs))
    return json.loads((tmp_path / "out" / "results.json").read_text())["environment"]


def test_results_json_records_the_data_file_hash_and_version(tmp_path) -> None:
    env = environment(tmp_path)
    data = tmp_path / "docs.jsonl"
    assert env["datasets"] == {"d": {"version": "2024-05", "files": {str(data.resolve()): sha256_of(data)}}}


def test_a_changed_data_file_changes_its_hash(tmp_path) -> None:
    data = tmp_path / "docs.jsonl"
    before = environment(tmp_path)["datasets"]["d"]["files"][str(data.resolve())]
    write_rows(data, ["hello world", "helloworld again, changed"])
    after = environment(tmp_path)["datasets"]["d"]["files"][str(data.resolve())]
    assert before != after and after == sha256_of(data)


def test_without_a_version_it_is_null(tmp_path) -> None:
    env = environment(tmp_path, data_version=None, model_version=None)
    assert env["datasets"]["d"]["version"] is None and env["checkers"]["m"]["version"] is None


def test_results_json_records_the_checker_identity(tmp_path) -> None:
    env = environment(tmp_path)
    script = tmp_path / "checker.py"
    assert env["checkers"] == {
        "m": {"type": "PythonModel", "version": "regex@1.1.0", "code": {str(script.resolve()): sha256_of(script)}}
    }


def test_a_candidate_added_in_a_session_is_recorded(tmp_path) -> None:
    candidate = {**config(tmp_path)["input_model"], "name": "c", "version": "regex@1.2.0"}
    with Evaluation(config(tmp_path)) as session:
        session.evaluate(candidate)
    env = json.loads((tmp_path / "out" / "results.json").read_text())["environment"]
    assert set(env["checkers"]) == {"m", "c"} and env["checkers"]["c"]["version"] == "regex@1.2.0"


def test_every_data_file_and_a_folder_are_hashed(tmp_path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_rows(a, ["one"])
    write_rows(b, ["two"])
    folder = tmp_path / "raw"
    (folder / "x").mkdir(parents=True)
    (folder / "x" / "0.raw").write_bytes(b"\0\1")
    dc = DataConfig.model_validate(
        {"name": "d", "version": "v1", "load_dataset_config": {"data_name": "json", "data_files": {"train": [str(a)],
                                                                                                   "test": str(b)}}}
    )  # fmt: skip
    assert dataset_identity(dc) == {"version": "v1", "files": {str(a): sha256_of(a), str(b): sha256_of(b)}}
    raw = DataConfig.model_validate(
        {"name": "r", "type": "RawDataContainer",
         "load_dataset_config": {"type": "raw_dataset", "data_dir": str(folder), "input_names": ["x"],
                                 "input_shapes": [[1, 2]], "input_types": ["uint8"]}}
    )  # fmt: skip
    # a folder: over its files' relative names and hashes, in sorted order
    expected = hashlib.sha256(b"x/0.raw\0" + sha256_of(folder / "x" / "0.raw").encode() + b"\n").hexdigest()
    assert dataset_identity(raw)["files"] == {str(folder): expected}


def test_names_that_are_not_paths_are_not_hashed(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json").mkdir()  # a folder named like the builder in the working directory
    (tmp_path / "train").mkdir()
    dc = DataConfig.model_validate({"name": "d", "load_dataset_config": {"data_name": "glue", "split": "train"}})
    assert data_paths(dc) == [] and dataset_identity(dc) == {"version": None, "files": {}}


@pytest.mark.parametrize("where", ["data", "model"])
def test_a_version_that_is_not_text_is_a_config_error(tmp_path, where) -> None:
    from olive_eval.errors import OliveEvalError

    bad = config(tmp_path)
    target = bad["data_configs"][0] if where == "data" else bad["input_model"]
    target["version"] = ["2024"]
    with pytest.raises(OliveEvalError, match="version"):
        evaluate(bad)
