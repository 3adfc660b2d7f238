"""The lm_eval metric's values equal lm-eval's own ``simple_evaluate`` on the same transformers model, stderr
included; each (task, metric, filter) is its own sub-type with lm-eval's direction; the filters stay apart and
score what an independent re-reading of lm-eval's samples says."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from olive_eval import evaluate
from tests.lm_eval import lm_tasks
from tests.lm_eval.conftest import N, hf_model, lm_config, reference


@pytest.fixture(scope="module")
def ours_and_theirs(llama: Path, tasks_folder: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("lm_out")
    result = evaluate(lm_config(hf_model(llama), tasks_folder, out))
    theirs = reference(llama, tasks_folder, list(lm_tasks.TASKS), bootstrap_iters=1000)
    return result, theirs, out


def test_every_value_and_stderr_equals_simple_evaluate(ours_and_theirs):
    result, theirs, _ = ours_and_theirs
    metrics = result.models["base"].metrics
    expected = {}
    for task in lm_tasks.TASKS:
        for key, value in theirs["results"][task].items():
            if "," in key and "_stderr," not in key:
                expected[f"lm-{task}/{key}"] = value
    assert set(metrics) == set(expected)  # no sub-types given: every value lm-eval reported
    for key, value in expected.items():
        assert metrics[key].value == value, key
        metric, _, filt = key.split("/", 1)[1].partition(",")
        stderr = theirs["results"][key.split("/")[0][3:]][f"{metric}_stderr,{filt}"]
        if stderr == "N/A":
            assert metrics[key].stderr is None
        else:
            assert metrics[key].stderr == stderr, key
            assert metrics[key].ci_low == pytest.approx(value - 1.959963984540054 * stderr)
            assert metrics[key].ci_high == pytest.approx(value + 1.959963984540054 * stderr)
            assert metrics[key].confidence_interval.n_resamples == 0  # a mean's stderr: lm-eval's closed form
    assert 0 < metrics["lm-words_mc/acc,none"].value < 1


def test_directions_come_from_lm_eval(ours_and_theirs):
    result, theirs, _ = ours_and_theirs
    metrics = result.models["base"].metrics
    for task, directions in theirs["higher_is_better"].items():
        for metric, higher in directions.items():
            for key, sub in metrics.items():
                if key.startswith(f"lm-{task}/{metric},"):
                    assert sub.higher_is_better is higher, key
    assert metrics["lm-words_ppl/word_perplexity,none"].higher_is_better is False
    assert metrics["lm-words_ppl/bits_per_byte,none"].higher_is_better is False


def test_the_two_filters_stay_apart_and_score_what_the_samples_say(ours_and_theirs):
    result, theirs, _ = ours_and_theirs
    metrics = result.models["base"].metrics
    strict = metrics["lm-words_gen/exact_match,strict-match"].value
    flexible = metrics["lm-words_gen/exact_match,flexible-extract"].value
    assert strict != flexible
    # independently: apply each filter's regex to the raw generations and compare with the answers
    samples = [s for s in theirs["samples"]["words_gen"] if s["filter"] == "strict-match"]
    hits = {"strict": 0, "flexible": 0}
    for s in samples:
        text, answer = s["resps"][0][0], s["target"]
        found = lm_tasks.STRICT.findall(text)
        hits["strict"] += bool(found) and found[0].strip() == answer
        words = lm_tasks.FLEXIBLE.findall(text)
        hits["flexible"] += bool(words) and words[-1].strip() == answer
    assert strict == hits["strict"] / N
    assert flexible == hits["flexible"] / N
    assert strict > 0 and flexible > 0


def test_results_json_records_versions_hashes_n_shot_and_limit(ours_and_theirs):
    _, theirs, out = ours_and_theirs
    record = json.loads((out / "results.json").read_text())["models"]["base"]["lm_eval"]
    import lm_eval
    from lm_eval.utils import hash_string

    assert record["lm_eval_version"] == lm_eval.__version__
    for task in lm_tasks.TASKS:
        samples = theirs["samples"][task]
        own_hash = hash_string("".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in samples))
        assert record["tasks"][task] == {
            "version": theirs["versions"][task],
            "hash": own_hash,
            "n_shot": theirs["n-shot"][task],
            "limit": None,
            "n_samples": theirs["n-samples"][task],
        }


def test_perplexity_interval_resamples_the_documents_when_asked(llama, tasks_folder, tmp_path):
    """A sub-type asking for a bootstrap interval gets one over lm-eval's per-document log-likelihoods (a ratio of
    sums), and another seed gives another interval."""
    intervals = []
    for seed in (1, 2):
        sub = {"name": "words_ppl/word_perplexity", "confidence_interval": {"n_resamples": 500, "seed": seed}}
        config = lm_config(hf_model(llama), tasks_folder, tmp_path / str(seed), sub_types=[sub])
        config["metrics"][0]["metric_config"]["tasks"] = ["words_ppl"]
        got = evaluate(config).models["base"].metrics["lm-words_ppl/word_perplexity"]
        assert got.confidence_interval.method == "percentile"
        assert got.ci_low < got.value < got.ci_high
        intervals.append((got.ci_low, got.ci_high))
    assert intervals[0] != intervals[1]
    # the interval is of the ratio of sums: recompute one resample by hand from lm-eval's samples
    theirs = reference(llama, tasks_folder, ["words_ppl"], bootstrap_iters=0)
    items = [s["word_perplexity"] for s in sorted(theirs["samples"]["words_ppl"], key=lambda s: s["doc_id"])]
    total_ll, total_words = sum(ll for ll, _ in items), sum(w for _, w in items)
    assert math.exp(-total_ll / total_words) == pytest.approx(got.value, rel=1e-12)


def test_relative_data_files_are_read_beside_the_task_file(llama, tasks_folder, ours_and_theirs, tmp_path, monkeypatch):
    """lm-eval reads a task's relative ``data_files`` from the working directory; here they are the task file's
    neighbours, wherever the run starts (the same values as the module's run of the same tasks by absolute
    paths)."""
    import shutil

    relative = tmp_path / "relative_tasks"
    shutil.copytree(tasks_folder, relative)
    answers = [json.loads(line)["answer"] for line in (tasks_folder / "words_gen.jsonl").read_text().splitlines()]
    lm_tasks.write_tasks(relative, answers, N, relative=True)
    assert "test: words_mc.jsonl" in (relative / "words_mc.yaml").read_text()
    monkeypatch.chdir(tmp_path)
    got = evaluate(lm_config(hf_model(llama), relative, tmp_path / "out")).models["base"].metrics
    want = ours_and_theirs[0].models["base"].metrics  # lm_config(hf_model(llama), tasks_folder, ...), as above
    assert {k: v.value for k, v in got.items()} == {k: v.value for k, v in want.items()}


def test_lm_evals_per_sample_log_is_the_metrics_instance_records(ours_and_theirs):
    import pyarrow.parquet as pq

    _, theirs, out = ours_and_theirs
    table = pq.read_table(out / "instances" / "base" / "lm.parquet").to_pylist()
    expected = [(t, s) for t in sorted(lm_tasks.TASKS) for s in theirs["samples"][t]]
    assert len(table) == len(expected) == N * 4  # words_gen has two filters
    for row, (task, sample) in zip(table, expected, strict=True):
        assert (row["task"], int(row["doc_id"]), row["filter"]) == (task, sample["doc_id"], sample["filter"])
        for metric in sample["metrics"]:
            assert json.loads(row[metric]) == pytest.approx(sample[metric])
