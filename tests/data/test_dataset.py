"""Local data through ``datasets``: json, csv, parquet and saved datasets become numpy columns."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from olive_eval.config.data import HuggingfaceDataConfig
from olive_eval.data import load_labelled_data
from olive_eval.errors import EvaluationError
from tests.helpers import write_jsonl


def config(**load) -> HuggingfaceDataConfig:
    pre = load.pop("pre", {"input_cols": {"features": "x"}, "label_col": "label"})
    return HuggingfaceDataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": load,
            "pre_process_data_config": pre,
            "dataloader_config": {"batch_size": 4},
        }
    )


@pytest.fixture
def rows():
    rng = np.random.default_rng(3)
    return rng.standard_normal((10, 5)).round(3), rng.integers(0, 3, 10)


def check(data, x, y):
    assert data.inputs["x"].shape == x.shape
    np.testing.assert_allclose(data.inputs["x"], x, rtol=1e-6)
    np.testing.assert_array_equal(data.labels, y)
    batches = list(data.batches())
    assert [len(b["x"]) for b, _ in batches] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([lab for _, lab in batches]), y)


def test_json_lines(tmp_path, rows):
    x, y = rows
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"features": a.tolist(), "label": int(b)} for a, b in zip(x, y, strict=True)]
    )
    check(load_labelled_data(config(data_name="json", data_files=str(path)), need_labels=True), x, y)


def test_parquet_and_saved_dataset(tmp_path, rows):
    x, y = rows
    ds = datasets.Dataset.from_dict({"features": x.tolist(), "label": y.tolist()})
    ds.to_parquet(str(tmp_path / "d.parquet"))
    check(
        load_labelled_data(config(data_name="parquet", data_files=str(tmp_path / "d.parquet")), need_labels=True), x, y
    )
    datasets.DatasetDict({"test": ds}).save_to_disk(str(tmp_path / "saved"))
    check(load_labelled_data(config(data_name=str(tmp_path / "saved"), split="test"), need_labels=True), x, y)
    with pytest.raises(EvaluationError, match="saved dataset has no split 'validation'; splits: test"):
        load_labelled_data(config(data_name=str(tmp_path / "saved"), split="validation"), need_labels=True)


def test_csv_scalar_columns_and_max_samples(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2.5,0\n3,4.5,1\n5,6.5,1\n")
    data = load_labelled_data(
        config(
            data_name="csv",
            data_files=str(tmp_path / "d.csv"),
            pre={"input_cols": ["a", "b"], "label_col": "label", "max_samples": 2},
        ),
        need_labels=True,
    )
    np.testing.assert_array_equal(data.inputs["a"], [1, 3])
    np.testing.assert_array_equal(data.inputs["b"], [2.5, 4.5])
    np.testing.assert_array_equal(data.labels, [0, 1])


def test_ragged_rows_and_missing_columns(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"features": [1, 2], "label": 0}, {"features": [1], "label": 1}])
    with pytest.raises(EvaluationError, match="column 'features' holds rows of different lengths"):
        load_labelled_data(config(data_name="json", data_files=str(path)), need_labels=True)
    with pytest.raises(EvaluationError, match="input column 'pixels' is not in the dataset; columns: features, label"):
        load_labelled_data(
            config(data_name="json", data_files=str(path), pre={"input_cols": ["pixels"], "label_col": "label"}),
            need_labels=True,
        )
    with pytest.raises(EvaluationError, match=r"its metrics need labels; set pre_process_data_config\.label_col"):
        load_labelled_data(config(data_name="json", data_files=str(path), pre={}), need_labels=True)


def test_olive_params_form_is_accepted():
    dc = HuggingfaceDataConfig.model_validate(
        {
            "name": "d",
            "load_dataset_config": {"type": "huggingface_dataset", "params": {"data_name": "json", "split": "test"}},
            "dataloader_config": {"params": {"batch_size": 8}},
        }
    )
    assert dc.load_dataset_config.split == "test" and dc.dataloader_config.batch_size == 8
