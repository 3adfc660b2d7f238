"""An Olive data config whose components come from its ``user_script``, without Olive: plain functions named by
the dataset and dataloader ``type`` are called in Olive's convention (``load(**params)`` returns ``(inputs, label)``
items; ``loader(dataset, batch_size=...)`` yields ``(inputs, labels)`` batches). Values are checked against
scikit-learn on the same rows; the bad inputs fail in one line naming the file and the JSON path."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.config import load_run_config
from tests.helpers import ToyProblem, batches_of, data_components_forgotten

#: Olive-style components as plain functions (names differ per test: a name is registered once per process).
SCRIPT = textwrap.dedent(
    '''
    import json

    import numpy as np


    class Rows:
        """(inputs, label) pairs, as Olive's datasets give them."""

        def __init__(self, path, as_tensors=False):
            rows = [json.loads(line) for line in open(path)]
            self.x = np.asarray([r["x"] for r in rows], dtype=np.float32)
            self.y = np.asarray([r["label"] for r in rows], dtype=np.int64)
            self.as_tensors = as_tensors

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            if self.as_tensors:  # one unnamed input, as a tensor
                import torch

                return torch.from_numpy(self.x[i]), torch.tensor(self.y[i])
            return {{"x": self.x[i]}}, self.y[i]


    def {name}_dataset(data_files, as_tensors=False):
        return Rows(data_files, as_tensors)


    def {name}_loader(dataset, batch_size=1):
        for start in range(0, len(dataset), batch_size):
            items = [dataset[i] for i in range(start, min(start + batch_size, len(dataset)))]
            yield {{"x": np.stack([x["x"] for x, _ in items])}}, np.asarray([y for _, y in items])
    '''
)


@pytest.fixture(autouse=True)
def _forget_components():
    with data_components_forgotten():
        yield


def write_script(root: Path, name: str, extra: str = "") -> Path:
    path = root / f"{name}.py"
    path.write_text(SCRIPT.format(name=name) + textwrap.dedent(extra))
    return path


def data_config(script: Path, dataset: dict[str, Any], **parts: Any) -> dict[str, Any]:
    return {
        "name": "rows",
        "type": "DataContainer",
        "user_script": script.name,
        "load_dataset_config": dataset,
        "post_process_data_config": {"type": "argmax"},
        "dataloader_config": {"batch_size": 16},
        **parts,
    }


def run_config(toy: ToyProblem, dc: dict[str, Any]) -> dict[str, Any]:
    return {
        "input_model": {"type": "ONNXModel", "name": "noisy", "model_path": str(toy.model("noisy", noise=0.8))},
        "data_configs": [dc],
        "metrics": [
            {
                "name": "accuracy",
                "type": "accuracy",
                "data_config": "rows",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1},
                    {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
                ],
            }
        ],
        "output_dir": str(toy.root / "out"),
    }


def write_config(toy: ToyProblem, dc: dict[str, Any]) -> Path:
    path = toy.root / "run.json"
    path.write_text(json.dumps(run_config(toy, dc)))
    return path


def expected(toy: ToyProblem) -> tuple[float, float]:
    """scikit-learn's accuracy and macro F1 of the noisy model's argmax over the rows of the data file."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(toy.root / "noisy.onnx"))
    predicted = session.run(None, {"x": toy.x})[0].argmax(axis=1)
    return accuracy_score(toy.labels, predicted), f1_score(toy.labels, predicted, average="macro")


def values(result: Any) -> tuple[float, float]:
    metrics = result.models[result.baseline].metrics
    return metrics["accuracy-accuracy_score"].value, metrics["accuracy-f1_score"].value


def test_a_plain_dataset_function_gives_columns_and_labels(toy):
    script = write_script(toy.root, "plain_ds")
    dc = data_config(script, {"type": "plain_ds_dataset", "data_files": toy.data_file.name})
    result = evaluate(write_config(toy, dc))
    accuracy, f1 = expected(toy)
    assert 0.5 < accuracy < 1.0  # the noisy model gets some rows wrong: the labels are read, not echoed
    assert values(result) == (accuracy, f1)


def test_a_dataset_of_unnamed_tensor_inputs_feeds_the_single_input(toy):
    script = write_script(toy.root, "tensor_ds")
    dc = data_config(script, {"type": "tensor_ds_dataset", "data_files": toy.data_file.name, "as_tensors": True})
    run = load_run_config(write_config(toy, dc))
    prepared, batches = batches_of(run.data_config("rows"))
    assert (prepared.inputs, prepared.references) == (["input"], "label")
    assert np.array_equal(np.concatenate([b.columns["input"] for b in batches]), toy.x)
    assert values(evaluate(run)) == expected(toy)


def test_a_plain_dataloader_function_makes_the_batches(toy):
    script = write_script(toy.root, "plain_dl")
    dc = data_config(
        script,
        {"type": "plain_dl_dataset", "data_files": toy.data_file.name},
        dataloader_config={"type": "plain_dl_loader", "batch_size": 50},
    )
    run = load_run_config(write_config(toy, dc))
    _, batches = batches_of(run.data_config("rows"))
    assert [(b.start, b.size) for b in batches] == [(0, 50), (50, 50), (100, 20)]
    assert np.array_equal(np.concatenate([b.columns["label"] for b in batches]), toy.labels)
    assert values(evaluate(run)) == expected(toy)


def test_a_dataloader_batch_of_one_with_a_scalar_label(toy):
    """Olive's no_auto_batch style: each batch is one example whose label is a scalar (a 0-d tensor)."""
    extra = """

    def one_dl_loader(dataset):
        import torch

        for i in range(len(dataset)):
            x, y = dataset[i]
            yield {"x": x["x"][None]}, torch.tensor(y)
    """
    script = write_script(toy.root, "one_dl", extra)
    dc = data_config(
        script,
        {"type": "one_dl_dataset", "data_files": toy.data_file.name},
        dataloader_config={"type": "one_dl_loader"},
    )
    run = load_run_config(write_config(toy, dc))
    _, batches = batches_of(run.data_config("rows"))
    assert len(batches) == len(toy.labels) and {b.size for b in batches} == {1}
    assert values(evaluate(run)) == expected(toy)


def test_an_olive_dataloader_over_olive_evals_own_dataset(toy):
    """A user dataloader gets olive-eval's prepared columns as Olive's (inputs, label) items."""
    script = write_script(toy.root, "own_ds")
    dc = toy.data_config("rows")
    dc.update(user_script=str(script), dataloader_config={"type": "own_ds_loader", "batch_size": 32})
    run = load_run_config(run_config(toy, dc))
    _, batches = batches_of(run.data_config("rows"))
    assert [b.size for b in batches] == [32, 32, 32, 24]
    assert np.array_equal(np.concatenate([b.columns["x"] for b in batches]), toy.x)


def test_a_dataset_function_returning_a_huggingface_dataset_gives_its_columns(toy):
    extra = """

    def hf_ds_rows(data_files):
        import datasets

        rows = Rows(data_files)
        return datasets.Dataset.from_dict({"x": rows.x, "label": rows.y})
    """
    script = write_script(toy.root, "hf_ds", extra)
    dc = data_config(script, {"type": "hf_ds_rows", "data_files": toy.data_file.name})
    run = load_run_config(write_config(toy, dc))
    prepared, batches = batches_of(run.data_config("rows"))
    assert (prepared.inputs, prepared.references) == (["x"], "label")
    assert np.allclose(np.concatenate([b.columns["x"] for b in batches]), toy.x)
    assert values(evaluate(run)) == expected(toy)


def test_a_generator_dataset_is_read_once_and_held(toy):
    extra = """

    def gen_ds_rows(data_files):
        rows = Rows(data_files)
        return ((rows[i][0], rows[i][1]) for i in range(len(rows)))
    """
    script = write_script(toy.root, "gen_ds", extra)
    dc = data_config(script, {"type": "gen_ds_rows", "data_files": toy.data_file.name})
    assert values(evaluate(write_config(toy, dc))) == expected(toy)


def test_a_type_the_script_does_not_define_is_unknown(toy, capsys):
    script = write_script(toy.root, "unknown_ds")
    path = write_config(toy, data_config(script, {"type": "unknown_ds_datasett", "data_files": "x"}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"olive-eval: config error: {path}: data_configs[0].load_dataset_config.type: unknown dataset type "
        "'unknown_ds_datasett'; "
    )
    assert "\n" not in err


def test_a_parameter_the_function_does_not_take(toy, capsys):
    script = write_script(toy.root, "param_ds")
    dc = data_config(script, {"type": "param_ds_dataset", "data_files": toy.data_file.name, "colour": 1})
    path = write_config(toy, dc)
    assert main(["--config", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: config error: {path}: data_configs[0].load_dataset_config: dataset 'param_ds_dataset' takes "
        "no parameter 'colour'; it takes: data_files, as_tensors"
    )


def test_a_required_parameter_left_out(toy, capsys):
    script = write_script(toy.root, "required_ds")
    path = write_config(toy, data_config(script, {"type": "required_ds_dataset"}))
    assert main(["--config", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: config error: {path}: data_configs[0].load_dataset_config: dataset 'required_ds_dataset' "
        "needs parameter 'data_files'"
    )


def test_a_missing_script_names_the_file_and_the_path(toy, capsys):
    path = write_config(toy, data_config(toy.root / "gone.py", {"type": "gone_dataset"}))
    assert main(["--config", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: config error: {path}: data_configs[0].user_script: user_script {toy.root / 'gone.py'} "
        "does not exist"
    )


def test_a_script_raising_at_import(toy, capsys):
    script = write_script(toy.root, "raising_ds", "raise ValueError('no rows today')\n")
    path = write_config(toy, data_config(script, {"type": "raising_ds_dataset"}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"olive-eval: config error: {path}: data_configs[0].user_script: user_script {script} failed to import: "
        f"it raised ValueError: no rows today (at {script}:"
    )
    assert "\n" not in err


def test_a_script_that_imports_olive_without_olive_says_which_extra(toy, capsys, monkeypatch):
    for module in ("olive", "olive.data", "olive.data.registry"):
        monkeypatch.setitem(sys.modules, module, None)  # as if Olive were not installed
    script = toy.root / "needs_olive.py"
    script.write_text("from olive.data.registry import Registry\n")
    path = write_config(toy, data_config(script, {"type": "needs_olive_dataset"}))
    assert main(["--config", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: config error: {path}: data_configs[0].user_script: user_script {script} imports Olive, "
        'which is not installed: pip install "olive-eval[olive]"'
    )


@pytest.mark.parametrize(
    ("name", "body", "message"),
    [
        (
            "none_ds",
            "return None",
            "dataset 'none_ds_dataset' returned NoneType; it must return a dataset: an object with "
            "__len__ and __getitem__ (or an iterable) giving (inputs, label) pairs, or a Hugging Face dataset",
        ),
        (
            "triple_ds",
            "return [(1, 2, 3)]",
            "dataset 'triple_ds_dataset' gives item 0 as a tuple of 3; Olive's data gives (inputs, "
            "label) pairs, the inputs a dict {input name: array} or one array",
        ),
        (
            "mixed_ds",
            "return [({'x': [0.0] * 8}, 1), ({'y': [0.0] * 8}, 1)]",
            "dataset 'mixed_ds_dataset' gives item 1 with inputs y; item 0 has x and a label",
        ),
        ("empty_ds", "return []", "dataset 'empty_ds_dataset' returned a dataset with no items"),
    ],
)
def test_a_dataset_of_the_wrong_shape_fails_before_any_model(toy, capsys, name, body, message):
    script = write_script(toy.root, name, f"\n\ndef {name}_dataset():\n    {body}\n")
    path = write_config(toy, data_config(script, {"type": f"{name}_dataset"}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"data config 'rows': {message}"), err
    assert "\n" not in err


def test_a_dataset_function_that_raises_names_it_and_where(toy, capsys):
    script = write_script(toy.root, "fails_ds", "\n\ndef fails_ds_dataset():\n    raise OSError('disk gone')\n")
    path = write_config(toy, data_config(script, {"type": "fails_ds_dataset"}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"data config 'rows': dataset 'fails_ds_dataset' raised OSError: disk gone (at {script}:" in err
    assert "\n" not in err


def test_a_dataloader_batch_of_uneven_columns_fails_the_model(toy, capsys):
    extra = """

    def uneven_dl_loader(dataset, batch_size=1):
        yield {"x": np.zeros((4, 8), np.float32)}, np.zeros(3, np.int64)
    """
    script = write_script(toy.root, "uneven_dl", extra)
    dc = data_config(
        script,
        {"type": "uneven_dl_dataset", "data_files": toy.data_file.name},
        dataloader_config={"type": "uneven_dl_loader"},
    )
    path = write_config(toy, dc)
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "data config 'rows': dataloader 'uneven_dl_loader' gives batch 0 whose columns differ in length: [3, 4]"
    ), err


def test_a_dataset_object_is_converted_once_for_every_model_pass_and_the_timing(toy):
    """The object is in memory: its items are read once per run, not once per model, check and timing input."""
    from olive_eval.user_module import _loaded

    extra = """

    READS = []


    class CountedRows(Rows):
        def __getitem__(self, i):
            READS.append(i)
            return super().__getitem__(i)


    def counted_ds_rows(data_files):
        return CountedRows(data_files)
    """
    script = write_script(toy.root, "counted_ds", extra)
    config = run_config(toy, data_config(script, {"type": "counted_ds_rows", "data_files": toy.data_file.name}))
    config["candidates"] = [{"type": "ONNXModel", "name": "exact", "model_path": str(toy.model("exact"))}]
    config["metrics"].append(
        {
            "name": "latency",
            "type": "latency",
            "data_config": "rows",
            "sub_types": [{"name": "avg", "metric_config": {"warmup_num": 1, "repeat_test_num": 3}}],
        }
    )
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    result = evaluate(path)
    assert values(result) == expected(toy)
    reads = _loaded[script.resolve()].READS
    # each item once, whatever read it (item 0 once more: the columns are learnt from it when the dataset opens)
    assert sorted(reads) == [0, *range(len(toy.labels))]
