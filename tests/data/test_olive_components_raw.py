"""Olive's RawDataContainer / raw_dataset: raw binary and .npy files, read and ordered as Olive reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval import evaluate
from olive_eval.config.data import DataConfig
from olive_eval.errors import EvaluationError
from tests.helpers import batches_of


def prepare(data_config: dict[str, Any]) -> tuple[Any, list[Any]]:
    return batches_of(DataConfig.model_validate({"name": "d", **data_config}))


def write_raw(root: Path, n: int, seed: int = 0, suffix: str = ".raw") -> dict[str, np.ndarray]:
    """``n`` samples of two inputs (x float32 [1, 2, 3], ids int64 [1, 4]) as raw files in shuffled order."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1, 2, 3)).astype(np.float32)
    ids = rng.integers(0, 100, (n, 1, 4)).astype(np.int64)
    (root / "x").mkdir(parents=True)
    (root / "ids_dir").mkdir()
    for i in rng.permutation(n):
        x[i].tofile(root / "x" / f"s{i:03d}{suffix}")
        ids[i].tofile(root / "ids_dir" / f"s{i:03d}{suffix}")
    return {"x": x, "ids": ids}


def params(root: Path, **extra: Any) -> dict[str, Any]:
    return {
        "data_dir": str(root),
        "input_names": ["x", "ids"],
        "input_shapes": [[1, 2, 3], [1, 4]],
        "input_types": ["float32", "int64"],
        "input_dirs": ["x", "ids_dir"],
        **extra,
    }


def test_files_in_name_order_one_example_a_call_with_annotations(tmp_path):
    arrays = write_raw(tmp_path, 7)
    labels = np.arange(7) % 3
    np.save(tmp_path / "labels.npy", labels)
    prepared, batches = prepare(
        {"type": "RawDataContainer", "load_dataset_config": params(tmp_path, annotations_file="labels.npy")}
    )
    assert prepared.inputs == ["x", "ids"] and prepared.references == "label"
    assert len(batches) == 7  # no_auto_batch_dataloader: each call is one file, of the file's own shape
    for i, batch in enumerate(batches):  # sorted names s000 ... s006 = the original order
        np.testing.assert_array_equal(batch.columns["x"], arrays["x"][i])
        np.testing.assert_array_equal(batch.columns["ids"], arrays["ids"][i])
        assert batch.columns["x"].shape == (1, 2, 3) and batch.columns["ids"].dtype == np.int64
        assert batch.columns["label"].tolist() == [labels[i]]


def test_order_file_suffix_and_npy_files(tmp_path):
    arrays = write_raw(tmp_path, 5, suffix=".bin")
    (tmp_path / "x" / "notes.txt").write_text("not an input")
    order = ["s004.bin", "s001.bin", "s003.bin"]
    (tmp_path / "order.txt").write_text("\n".join(order) + "\n")
    _, batches = prepare(
        {"type": "RawDataContainer", "load_dataset_config": params(tmp_path, input_order_file="order.txt")}
    )
    assert [int(np.where((arrays["ids"] == b.columns["ids"]).all(axis=(1, 2)))[0][0]) for b in batches] == [4, 1, 3]
    _, batches = prepare({"type": "RawDataContainer", "load_dataset_config": params(tmp_path, input_suffix=".bin")})
    assert len(batches) == 5  # notes.txt is not an input file
    npy = tmp_path / "npy"
    (npy / "x").mkdir(parents=True)
    data = np.random.default_rng(1).standard_normal((3, 2, 2)).astype(np.float32)
    for i, row in enumerate(data):
        np.save(npy / "x" / f"{i}.npy", row)
    _, batches = prepare(
        {
            "type": "RawDataContainer",
            "load_dataset_config": {"data_dir": str(npy), "input_names": ["x"], "input_shapes": [[2, 2]]},
            "dataloader_config": {"type": "default_dataloader", "batch_size": 2},
        }
    )
    # default_dataloader stacks files on a new first axis, as Olive's does: [2 files, 2, 2], then the last file
    assert [b.columns["x"].shape for b in batches] == [(2, 2, 2), (1, 2, 2)]
    np.testing.assert_array_equal(np.concatenate([b.columns["x"] for b in batches]), data)
    _, batches = prepare(
        {
            "type": "RawDataContainer",
            "load_dataset_config": {"data_dir": str(npy), "input_names": ["x"], "input_shapes": [[2, 2]]},
        }
    )
    # the container's no_auto_batch_dataloader: each file is passed as it is, no batch axis added (Olive's)
    for i, batch in enumerate(batches):
        np.testing.assert_array_equal(batch.columns["x"], data[i])
        assert batch.size == 2


def test_evaluate_accuracy_on_raw_files(tmp_path):
    """A Python model classifying the raw inputs: accuracy as scikit-learn computes it on the same labels."""
    rng = np.random.default_rng(3)
    data = tmp_path / "data"
    (data / "x").mkdir(parents=True)
    x = rng.standard_normal((12, 1, 3)).astype(np.float32)
    for i, row in enumerate(x):
        row.tofile(data / "x" / f"{i:02d}.raw")
    labels = rng.integers(0, 3, 12)
    np.save(data / "labels.npy", labels)
    script = tmp_path / "model.py"
    script.write_text(
        "import numpy as np\n\n\ndef load(model_path):\n"
        "    return lambda batch: np.asarray(batch['x']).reshape(len(batch['x']), -1).argmax(axis=1)\n"
    )
    result = evaluate(
        {
            "input_model": {"type": "PythonModel", "name": "py", "user_script": str(script), "model_loader": "load"},
            "data_configs": [
                {
                    "name": "raw",
                    "type": "RawDataContainer",
                    "load_dataset_config": {
                        "params": {
                            "data_dir": str(data),
                            "input_names": ["x"],
                            "input_shapes": [[1, 3]],
                            "annotations_file": "labels.npy",
                        }
                    },
                    # files of one example each, four a call (the container's default calls one at a time)
                    "dataloader_config": {"type": "default_dataloader", "batch_size": 4},
                }
            ],
            "metrics": [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}],
            "output_dir": str(tmp_path / "out"),
        }
    )
    model = result.models["py"]
    assert model.status == "ok", model.error
    expected = accuracy_score(labels, x.reshape(12, 3).argmax(axis=1))
    assert model.metrics["acc-accuracy_score"].value == pytest.approx(expected)


def test_bad_input(tmp_path):
    write_raw(tmp_path, 3)
    raw = {"type": "RawDataContainer"}
    with pytest.raises(EvaluationError, match="raw data folder not found"):
        prepare({**raw, "load_dataset_config": params(tmp_path / "nowhere")})
    with pytest.raises(EvaluationError, match=r"no folder .*missing for input 'ids'"):
        prepare({**raw, "load_dataset_config": params(tmp_path, input_dirs=["x", "missing"])})
    with pytest.raises(EvaluationError, match=r"s000.raw holds 6 float32 values; input shape \[1, 5\] needs 5"):
        prepare({**raw, "load_dataset_config": params(tmp_path, input_shapes=[[1, 5], [1, 4]])})
    (tmp_path / "ids_dir" / "s002.raw").unlink()
    with pytest.raises(EvaluationError, match=r"input file missing: .*ids_dir/s002.raw"):
        prepare({**raw, "load_dataset_config": params(tmp_path)})
    np.save(tmp_path / "labels.npy", np.arange(2))
    with pytest.raises(EvaluationError, match=r"labels\.npy holds 2 annotations for 3 input files"):
        prepare({**raw, "load_dataset_config": params(tmp_path, annotations_file="labels.npy")})
    with pytest.raises(EvaluationError, match="input_order_file not found"):
        prepare({**raw, "load_dataset_config": params(tmp_path, input_order_file="order.txt")})
    with pytest.raises(ValueError, match="input_shapes has 1 entries for 2 input_names"):
        prepare({**raw, "load_dataset_config": params(tmp_path, input_shapes=[[1, 6]])})
    with pytest.raises(ValueError, match="input type 'floaty' is not a numpy dtype"):
        prepare({**raw, "load_dataset_config": params(tmp_path, input_types=["floaty", "int64"])})
    with pytest.raises(ValueError, match=r"local_dataset.*unimplemented"):
        DataConfig.model_validate({"name": "d", "load_dataset_config": {"type": "local_dataset"}})
