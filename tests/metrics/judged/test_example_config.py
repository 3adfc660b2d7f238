"""The judge-endpoint example's config validates from any working directory: its metric's user_script (resolved
against the config's folder) registers the judge its sub-types name. Nothing is sent anywhere: the endpoint is
only called when a run scores, which this test does not start."""

from __future__ import annotations

from pathlib import Path

from olive_eval.config.loader import load_run_config

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "judge_endpoint"


def test_the_example_config_validates_and_names_the_registered_endpoint_judge(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    run = load_run_config(EXAMPLE / "config.json")
    subs = run.all_metrics[0].sub_types
    assert [s.name for s in subs] == ["answer_correctness", "faithfulness", "context_precision"]
    assert {s.metric_config["judge"]["function"] for s in subs} == {"endpoint"}
