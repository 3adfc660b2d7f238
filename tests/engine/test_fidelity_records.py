"""A fidelity metric's per-example records hold what each prediction was scored against: the baseline's own
prediction (filtered alike) as ``references`` for a sub-type that reads it; a metric that reads only the
outputs keeps the data's labels there."""

from __future__ import annotations

import json

import numpy as np

from olive_eval import evaluate
from olive_eval.records.parquet import read_records
from tests.engine.test_fidelity_run import FIDELITY, Problem
from tests.engine.test_fidelity_text import MODELS, SENTENCES, model, sentences
from tests.helpers import write_jsonl


def text_config(tmp_path, metric: dict, n: int) -> dict:
    (tmp_path / "models.py").write_text(MODELS)
    write_jsonl(tmp_path / "d.jsonl", [{"i": i, "q": SENTENCES[i % len(SENTENCES)]} for i in range(n)])
    return {
        "input_model": model(tmp_path, "base", 0),
        "candidates": [model(tmp_path, "every3", 3)],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "d.jsonl")},
                "pre_process_data_config": {"type": "skip_pre_process"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [metric],
        "output_dir": str(tmp_path / "out"),
    }


def test_the_baselines_text_is_written_as_the_references_of_a_text_fidelity_metric(tmp_path):
    n = 14
    metric = {"name": "agree", "type": "fidelity", "sub_types": [{"name": "exact_match"}], "sample_log_num": 5}
    evaluate(text_config(tmp_path, metric, n))
    out = tmp_path / "out"
    for name, noise in (("every3", 3), ("base", 0)):
        rows = list(read_records(out / "instances" / name / "agree.parquet"))
        assert [r["references"] for r in rows] == sentences(0, n), name
        assert [r["prediction"] for r in rows] == sentences(noise, n)
        same = [float(a == b) for a, b in zip(sentences(noise, n), sentences(0, n), strict=True)]
        assert [r["exact_match"] for r in rows] == same
    log = [json.loads(line) for line in (out / "samples" / "every3" / "agree_samples.jsonl").read_text().splitlines()]
    assert [r["target"] for r in log] == sentences(0, 5)


def test_the_baselines_text_is_filtered_as_the_candidates_before_it_is_written(tmp_path):
    n = 6
    metric = {
        "name": "agree",
        "type": "fidelity",
        "sub_types": [{"name": "exact_match"}],
        "filters": [{"type": "regex", "pattern": r"is (\w+)$"}],
    }
    evaluate(text_config(tmp_path, metric, n))
    rows = list(read_records(tmp_path / "out" / "instances" / "every3" / "agree.parquet"))
    assert [r["references"] for r in rows] == [str(i * 7) for i in range(n)]
    assert [r["prediction"] for r in rows] == ["[invalid]" if i % 3 == 0 else str(i * 7) for i in range(n)]


def test_a_fidelity_metric_of_outputs_alone_keeps_the_datas_labels_as_references(tmp_path):
    problem = Problem(tmp_path, n=20)
    evaluate(problem.config(candidates=("near",), metrics=(FIDELITY,)))
    rows = list(read_records(tmp_path / "out" / "instances" / "near" / "fid.parquet"))
    assert [r["references"] for r in rows] == [i % 3 for i in range(20)]
    assert np.isfinite([r["kl_divergence"] for r in rows]).all()
