"""Judged sub-types in a run: a Python model's answers over a JSON-lines file with ``query`` and ``contexts``
columns, judged by a function from a user script; the judge's identity lands in results.json; a sub-type reading a
column the data lacks, and a judge missing from its script, are config errors before any model loads."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from olive_eval import evaluate
from olive_eval.errors import ConfigError
from olive_eval.user_module import load_user_module
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.judged import scripted

SCRIPT = str(Path(scripted.__file__))
MODEL = textwrap.dedent(
    """
    def load(model_path):
        return lambda batch: [q.replace("?", "+") for q in batch["query"]]
    """
)


def config(tmp_path: Path, sub_types: list[dict], rows: list[dict] | None = None) -> dict:
    (tmp_path / "models.py").write_text(MODEL)
    rows = rows or [
        {"query": "a?|b-", "contexts": ["c+", "d-"], "target": ["a+"]},
        {"query": "e?", "contexts": ["f-"], "target": ["e+", "x"]},
        {"query": "#boom?", "contexts": ["g+"], "target": ["g"]},
    ]
    write_jsonl(tmp_path / "d.jsonl", rows)
    return python_model_run(
        tmp_path, {"name": "judged", "sub_types": sub_types}, data="qa", batch_size=2, model_path="never_loaded"
    )


def sub(name: str, **extra) -> dict:
    return {"name": name, "metric_config": {"judge": {"function": "judge", "user_script": SCRIPT}}, **extra}


def test_judged_sub_types_in_a_run_record_the_judge_and_skip_failed_examples(tmp_path):
    subs = [
        sub("answer_relevance", priority=1),
        sub("hallucination"),
        sub("faithfulness", confidence_interval={"n_resamples": 200}),
    ]
    result = evaluate(config(tmp_path, subs))
    model = result.models["m"]
    assert model.status == "ok", model.error
    relevance = model.metrics["judged-answer_relevance"]
    # predictions "a+|b-", "e+", "#boom+": 1/2 and 1/1, the third failed (the judge raised): (0.5 + 1) / 2
    assert relevance.value == pytest.approx(0.75)
    assert relevance.details["failed"] == 1 and relevance.details["judge"]["function"] == "judge"
    # hallucination: [c+, d-] -> 1/2; [f-] -> 0; the third prediction's prompt raises
    assert model.metrics["judged-hallucination"].value == pytest.approx(0.25)
    faithfulness = model.metrics["judged-faithfulness"]
    assert faithfulness.value == pytest.approx(0.75) and faithfulness.ci_low <= 0.75 <= faithfulness.ci_high
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    text = json.dumps(saved)
    assert '"script_sha256"' in text and '"prompts"' in text


def test_a_sub_type_whose_column_the_data_lacks_is_a_config_error_before_the_model_loads(tmp_path):
    rows = [{"query": "a?", "target": "a"}]
    with pytest.raises(ConfigError) as err:
        evaluate(config(tmp_path, [sub("answer_relevance", priority=1), sub("context_relevance")], rows))
    assert err.value.path == "metrics[0].sub_types[1].name"
    assert err.value.message.startswith(
        "accuracy sub-type 'context_relevance' reads contexts, which data config 'qa' does not give"
    )


def test_a_judge_missing_from_its_script_is_one_config_error(tmp_path):
    bad = {"name": "bias", "metric_config": {"judge": {"function": "oracle", "user_script": SCRIPT}}}
    with pytest.raises(ConfigError) as err:
        evaluate(config(tmp_path, [bad]))
    assert err.value.path.startswith("metrics[0].sub_types[0].metric_config")
    assert "has no function 'oracle'; it defines: judge, judge_batch" in err.value.message
    assert "\n" not in str(err.value)


def test_instance_records_leave_excluded_examples_without_a_score(tmp_path):
    result = evaluate(config(tmp_path, [sub("bias", priority=1)]))
    # opinions of "a+|b-": 1 of 2 biased; of "e+": 1 of 1; "#boom+" failed: (0.5 + 1) / 2
    assert result.models["m"].metrics["judged-bias"].value == pytest.approx(0.75)
    scores = pq.read_table(tmp_path / "out" / "instances" / "m" / "judged.parquet").column("bias").to_pylist()
    assert scores[:2] == [0.5, 1.0] and (scores[2] is None or math.isnan(scores[2]))


def test_a_candidate_is_judged_with_a_paired_goal_and_shares_the_judges_replies(tmp_path):
    run = config(
        tmp_path,
        [sub("context_relevance", priority=1, goal={"type": "max-degradation", "value": 0.1, "confidence": 0.9})],
    )
    (tmp_path / "other.py").write_text(
        "def load(model_path):\n    return lambda batch: ['x' for _ in batch['query']]\n"
    )
    run["candidates"] = [{**run["input_model"], "name": "c", "user_script": str(tmp_path / "other.py")}]
    rows = [{"query": f"q{i}", "contexts": ["a+", "b-"] if i % 2 else ["c+"], "target": ["t"]} for i in range(12)]
    run = config(tmp_path, run["metrics"][0]["sub_types"], rows) | {"candidates": run["candidates"]}
    calls = load_user_module(Path(SCRIPT)).CALLS
    calls.clear()
    result = evaluate(run)
    assert len(calls) == 12  # one prompt per example, asked for the baseline; the candidate's are the same: cached
    base, cand = (result.models[m].metrics["judged-context_relevance"] for m in ("m", "c"))
    # context relevance reads the query and the contexts only: the same for both models, 6 x 1/2 and 6 x 1 -> 0.75
    assert base.value == cand.value == pytest.approx(0.75)
    # the paired bootstrap resamples the same examples for both: the change is 0 in every resample
    assert cand.goal.met and cand.goal.change == 0 and cand.goal.change_ci_low == cand.goal.change_ci_high == 0
