"""The data pipeline's components: sources (json, csv, parquet, saved datasets), pre-processing, batching.

Each test builds a data config the way a run does and checks the batches against the data written.
"""

from __future__ import annotations

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olive_eval.config.data import DataConfig
from olive_eval.data import sources
from olive_eval.data.batch import concat
from olive_eval.data.collate import pad
from olive_eval.errors import EvaluationError
from tests.helpers import batches_of, write_jsonl


def config(load: dict, pre: dict | None = None, batch_size: int = 4, **extra) -> DataConfig:
    pre = {"input_cols": {"features": "x"}, "label_col": "label"} if pre is None else pre
    return DataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": load,
            "pre_process_data_config": pre,
            "dataloader_config": {"batch_size": batch_size},
            **extra,
        }
    )


@pytest.fixture
def rows():
    rng = np.random.default_rng(3)
    return rng.standard_normal((10, 5)).round(3), rng.integers(0, 3, 10)


def check(prepared, batches, x, y):
    assert prepared.inputs == ["x"] and prepared.references == "label"
    assert [b.size for b in batches] == [4, 4, 2]
    assert [b.start for b in batches] == [0, 4, 8]
    np.testing.assert_allclose(concat([b.columns["x"] for b in batches]), x, rtol=1e-6)
    np.testing.assert_array_equal(concat([b.columns["label"] for b in batches]), y)
    assert all(b.inputs == ["x"] for b in batches)


def test_json_lines(tmp_path, rows):
    x, y = rows
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"features": a.tolist(), "label": int(b)} for a, b in zip(x, y, strict=True)]
    )
    check(*batches_of(config({"data_name": "json", "data_files": str(path)})), x, y)


def test_parquet_and_saved_dataset(tmp_path, rows):
    x, y = rows
    ds = datasets.Dataset.from_dict({"features": x.tolist(), "label": y.tolist()})
    ds.to_parquet(str(tmp_path / "d.parquet"))
    check(*batches_of(config({"data_name": "parquet", "data_files": str(tmp_path / "d.parquet")})), x, y)
    datasets.DatasetDict({"test": ds}).save_to_disk(str(tmp_path / "saved"))
    check(*batches_of(config({"data_name": str(tmp_path / "saved"), "split": "test"})), x, y)
    check(*batches_of(config({"data_name": str(tmp_path / "saved")})), x, y)  # its only split
    with pytest.raises(EvaluationError, match="saved dataset has no split 'validation'; splits: test"):
        batches_of(config({"data_name": str(tmp_path / "saved"), "split": "validation"}))


def test_csv_scalar_columns_and_max_samples(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2.5,0\n3,4.5,1\n5,6.5,1\n")
    pre = {"input_cols": ["a", "b"], "label_col": "label", "max_samples": 2}
    _prepared, batches = batches_of(config({"data_name": "csv", "data_files": str(tmp_path / "d.csv")}, pre))
    (batch,) = batches
    np.testing.assert_array_equal(batch.columns["a"], [1, 3])
    np.testing.assert_array_equal(batch.columns["b"], [2.5, 4.5])
    np.testing.assert_array_equal(batch.columns["label"], [0, 1])
    assert batch.inputs == ["a", "b"]


def test_a_large_file_streams_in_chunks_across_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "CHUNK_ROWS", 7)  # chunks of 7 rows, batches of 4: every batch boundary moves
    x = np.arange(50 * 3, dtype=np.float64).reshape(50, 3)
    table = pa.table({"features": pa.array(list(x)), "label": pa.array(np.arange(50) % 2)})
    pq.write_table(table, tmp_path / "d.parquet", row_group_size=7)
    prepared, batches = batches_of(config({"data_name": "parquet", "data_files": str(tmp_path / "d.parquet")}))
    assert [b.size for b in batches] == [4] * 12 + [2]
    np.testing.assert_array_equal(concat([b.columns["x"] for b in batches]), x)
    assert prepared.num_rows == 50


def test_ragged_rows_stay_ragged_and_missing_columns_are_named(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"features": [1, 2], "label": 0}, {"features": [1], "label": 1}])
    _, (batch,) = batches_of(config({"data_name": "json", "data_files": str(path)}))
    assert isinstance(batch.columns["x"], list)
    np.testing.assert_array_equal(batch.columns["x"][0], [1, 2])
    np.testing.assert_array_equal(batch.columns["x"][1], [1])
    with pytest.raises(
        EvaluationError, match="input column 'pixels' is not a column of the dataset; columns: features, label"
    ):
        batches_of(config({"data_name": "json", "data_files": str(path)}, {"input_cols": ["pixels"]}))


def test_label_defaults_to_a_label_column_as_in_olive(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"features": [1, 2], "label": 0}, {"features": [3, 4], "label": 1}])
    prepared, _ = batches_of(config({"data_name": "json", "data_files": str(path)}, {}))
    assert prepared.references == "label" and prepared.inputs == ["features"]
    path = write_jsonl(tmp_path / "e.jsonl", [{"features": [1, 2], "y": 0}])
    prepared, _ = batches_of(config({"data_name": "json", "data_files": str(path)}, {}))
    assert prepared.references is None and prepared.inputs == ["features", "y"]


def test_olive_params_form_and_container_defaults():
    dc = DataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": {"type": "huggingface_dataset", "params": {"data_name": "json", "split": "test"}},
            "dataloader_config": {"params": {"batch_size": 8}},
        }
    )
    assert dc.load_dataset_config.split == "test" and dc.dataloader_config.batch_size == 8
    assert dc.pre_process_data_config.type == "huggingface_pre_process"
    assert dc.post_process_data_config.type == "post_process"
    by_task = DataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": {"data_name": "json"},
            "pre_process_data_config": {"task": "text-classification"},
        }
    )
    assert by_task.post_process_data_config.type == "text_classification_post_process"


def test_limit_and_shuffle_pick_a_reproducible_subset(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"features": [float(i)], "label": i} for i in range(40)])

    def labels(**load):
        _, batches = batches_of(config({"data_name": "json", "data_files": str(path), **load}, batch_size=64))
        return concat([b.columns["label"] for b in batches]).tolist()

    assert labels(limit=5) == [0, 1, 2, 3, 4]
    shuffled = labels(limit=5, shuffle={"seed": 3})
    assert shuffled == labels(limit=5, shuffle={"seed": 3}) and sorted(shuffled) != [0, 1, 2, 3, 4]
    expected = np.random.default_rng(3).permutation(40)[:5].tolist()
    assert shuffled == expected
    fraction = labels(limit=0.25)
    assert len(fraction) == 10 and fraction == sorted(fraction)  # a random tenth, in dataset order
    assert len(labels(limit=0.25, shuffle={"seed": 1})) == 10


def test_padding_left_and_right():
    rows = [np.array([1, 2, 3]), np.array([4]), np.array([5, 6])]
    np.testing.assert_array_equal(pad(rows, 0, "right"), [[1, 2, 3], [4, 0, 0], [5, 6, 0]])
    np.testing.assert_array_equal(pad(rows, -1, "left"), [[1, 2, 3], [-1, -1, 4], [-1, 5, 6]])
    assert pad(rows, 0, "right", multiple=4).shape == (3, 4)
