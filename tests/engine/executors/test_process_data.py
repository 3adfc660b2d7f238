"""The process executor shares data between its children: what one child tokenized, the next gets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from olive_eval.engine.session.session import Evaluation
from tests.helpers import write_jsonl
from tests.runtimes import hf_models


@pytest.fixture(scope="module")
def bert_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The model, built without tqdm's monitor thread (transformers' progress bars start it): with a second
    Python thread the fork server is not forked from this process, which has transformers imported, but started
    as a new interpreter, and the first child imports transformers again to tokenize."""
    import tqdm

    interval, tqdm.tqdm.monitor_interval = tqdm.tqdm.monitor_interval, 0
    try:
        built = tmp_path_factory.mktemp("bert")
        bert = hf_models.build_bert(built / "bert")
        yield bert, hf_models.export_bert_onnx(bert, built / "onnx" / "model.onnx")
    finally:
        tqdm.tqdm.monitor_interval = interval


def test_data_a_child_tokenized_comes_back_for_the_next_models(tmp_path, bert_pair):
    bert, onnx = bert_pair
    rows = [{"text": t, "label": i % 3} for i, t in enumerate(hf_models.sentences(20, 3))]
    data = {
        "name": "d",
        "type": "HuggingfaceContainer",
        "load_dataset_config": {"data_name": "json", "data_files": str(write_jsonl(tmp_path / "t.jsonl", rows))},
        "pre_process_data_config": {"input_cols": ["text"], "label_col": "label"},
        "post_process_data_config": {"type": "argmax"},
        "dataloader_config": {"batch_size": 4},
    }

    def model(name: str) -> dict:
        return {"type": "ONNXModel", "name": name, "model_path": str(onnx), "processor_path": str(bert)}

    config = {
        "input_model": model("a"),
        "candidates": [model("b")],
        "data_configs": [data],
        "metrics": [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}],
    }
    values = {}
    for executor in ("local", "process"):
        with Evaluation(config, output_dir=tmp_path / executor, executor=executor) as session:
            result = session.run()
            store = session._run.data
        values[executor] = {n: m.metrics["acc-accuracy_score"].value for n, m in result.models.items()}
        assert all(m.status == "ok" for m in result.models.values()), result.models
    assert values["process"] == values["local"]
    # the parent never tokenized: it holds what the first child sent back (and sent it to the second)
    assert store.preparations == {}
    assert [key for key, prepared in store.snapshot().prepared.items() if prepared.processor_key] == [("d", str(bert))]


def test_a_small_data_file_reaches_the_children_whole_they_read_nothing(tmp_path):
    """What the parent opened (its checks read the file) is what a child gets: a small json file known to be one
    chunk, so a child's pass reads nothing: the file may be gone by then."""
    import pickle

    from olive_eval.config.run import RunConfig
    from olive_eval.engine.executors.worker import shared_data
    from olive_eval.engine.run.data_store import DataStore

    rows = [{"x": [float(i), 1.0], "label": i % 2} for i in range(7)]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    model = Path(__file__).resolve().parents[3] / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
    run = RunConfig.model_validate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(model)},
            "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": str(path)}}],
            "metrics": [
                {"name": "acc", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "accuracy_score"}]}
            ],
        }
    )
    store = DataStore(run)
    store.preload(["d"])
    packed = shared_data(store)
    assert packed is not None
    path.unlink()
    child = pickle.loads(packed).sources["d"]  # as a child unpickles it
    chunks = list(child.chunks())
    assert [chunk.to_pylist() for chunk in chunks] == [rows]
