"""How an lm_eval metric runs: lm-eval's limit semantics, the few-shot seed, one lm-eval run shared by metrics
with the same options, paired goals over the same documents, and the results cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.engine.session.session import Evaluation
from tests.engine.test_cache_records import record_files
from tests.lm_eval.conftest import N, hf_model, lm_config, reference
from tests.runtimes import llm_models


@pytest.mark.parametrize(("limit", "docs"), [(5, 5), (0.25, math.ceil(N * 0.25)), (0.01, 1), (1, 1)])
def test_limit_is_a_count_from_one_and_a_fraction_below(llama, tasks_folder, tmp_path, limit, docs):
    config = lm_config(hf_model(llama), tasks_folder, tmp_path, metric_config={"limit": limit, "tasks": ["words_mc"]})
    result = evaluate(config).models["base"]
    assert result.lm_eval["tasks"]["words_mc"]["n_samples"] == {"original": N, "effective": docs}
    assert result.lm_eval["tasks"]["words_mc"]["limit"] == limit
    theirs = reference(llama, tasks_folder, ["words_mc"], limit=limit, bootstrap_iters=1000)
    assert result.metrics["lm-words_mc/acc,none"].value == theirs["results"]["words_mc"]["acc,none"]


def test_the_whole_task_by_default(llama, tasks_folder, tmp_path):
    config = lm_config(hf_model(llama), tasks_folder, tmp_path, metric_config={"tasks": ["words_mc"]})
    assert evaluate(config).models["base"].lm_eval["tasks"]["words_mc"]["n_samples"]["effective"] == N


def test_num_fewshot_and_seed_take_effect_and_match_lm_eval(llama, tasks_folder, tmp_path):
    hashes, values = [], []
    for seed in (1, 2):
        options = {"tasks": ["words_mc"], "num_fewshot": 3, "seed": seed}
        got = evaluate(lm_config(hf_model(llama), tasks_folder, tmp_path / str(seed), metric_config=options))
        record = got.models["base"].lm_eval["tasks"]["words_mc"]
        assert record["n_shot"] == 3
        hashes.append(record["hash"])
        values.append(got.models["base"].metrics["lm-words_mc/acc,none"].value)
        theirs = reference(
            llama, tasks_folder, ["words_mc"], num_fewshot=3, bootstrap_iters=1000,
            random_seed=seed, numpy_random_seed=seed, torch_random_seed=seed, fewshot_random_seed=seed,
        )  # fmt: skip
        assert values[-1] == theirs["results"]["words_mc"]["acc,none"]
    assert hashes[0] != hashes[1]  # another seed draws other few-shot examples: other prompts


def test_metrics_with_the_same_options_share_one_lm_eval_run(llama, tasks_folder, tmp_path, monkeypatch):
    import lm_eval

    calls = []
    real = lm_eval.simple_evaluate

    def counting(*args, **kwargs):
        calls.append([getattr(t, "task_name", t) for t in kwargs["tasks"]])
        return real(*args, **kwargs)

    monkeypatch.setattr(lm_eval, "simple_evaluate", counting)
    config = lm_config(hf_model(llama), tasks_folder, tmp_path, metric_config={"tasks": ["words_mc"]})
    other = {"name": "ppl", "type": "lm_eval", "metric_config": {**config["metrics"][0]["metric_config"]}}
    other["metric_config"]["tasks"] = ["words_ppl"]
    config["metrics"].append(other)
    result = evaluate(config).models["base"]
    assert calls == [["words_mc", "words_ppl"]]
    assert "lm-words_mc/acc,none" in result.metrics and "ppl-words_ppl/word_perplexity,none" in result.metrics
    assert "lm-words_ppl/word_perplexity,none" not in result.metrics  # each metric keeps to its own tasks


def test_a_confident_goal_compares_the_same_documents(llama, tasks_folder, tmp_path):
    """The same model as a candidate: every paired resample is the same documents, so the change is exactly 0;
    another model's change interval is the paired bootstrap of the per-document differences."""
    other = llm_models.build_tiny_llama(tmp_path / "other", seed=7)
    goal = {"type": "max-degradation", "value": 0.5, "confidence": 0.9, "n_resamples": 500}
    subs = [{"name": "words_mc/acc", "priority": 1, "goal": goal}]
    config = lm_config(hf_model(llama), tasks_folder, tmp_path / "out", sub_types=subs)
    config["metrics"][0]["metric_config"]["tasks"] = ["words_mc"]
    config["candidates"] = [hf_model(llama, "same"), hf_model(other, "other")]
    result = evaluate(config)
    same = result.models["same"].metrics["lm-words_mc/acc"].goal
    assert same.change == 0 and same.change_ci_low == 0 and same.change_ci_high == 0 and same.met
    base_value = result.models["base"].metrics["lm-words_mc/acc"].value
    got = result.models["other"].metrics["lm-words_mc/acc"]
    assert got.goal.change == pytest.approx(got.value - base_value)
    assert got.goal.change_ci_low <= got.goal.change <= got.goal.change_ci_high
    assert got.goal.change_ci_low < got.goal.change_ci_high


def test_the_results_cache_restores_values_and_evidence(llama, tasks_folder, tmp_path):
    goal = {"type": "max-degradation", "value": 0.5, "confidence": 0.9, "n_resamples": 300}
    subs = [{"name": "words_ppl/bits_per_byte", "priority": 1, "goal": goal}]
    config = lm_config(hf_model(llama), tasks_folder, tmp_path / "out", sub_types=subs)
    config["metrics"][0]["metric_config"]["tasks"] = ["words_ppl"]
    config["candidates"] = [hf_model(llama, "same")]
    notes: list[str] = []
    runs = []
    for i in range(2):
        with Evaluation(config, output_dir=tmp_path / f"out{i}", cache=tmp_path / "cache",
                        progress=lambda m, note: notes.append(f"{m}: {note}")) as session:  # fmt: skip
            runs.append(session.run())
    assert "same: results from the cache" in notes
    first, second = (r.models["same"].metrics["lm-words_ppl/bits_per_byte"] for r in runs)
    assert first.value == second.value and first.stderr == second.stderr
    assert second.goal.met and second.goal.change_ci_low == 0 == second.goal.change_ci_high
    assert runs[1].models["same"].lm_eval == runs[0].models["same"].lm_eval
    # the cached model gets lm-eval's per-sample records its evaluation wrote
    fresh, cached = (record_files(tmp_path / f"out{i}", "same") for i in range(2))
    assert list(fresh) == ["instances/lm.parquet"] and len(fresh["instances/lm.parquet"]) == N
    assert cached == fresh


def test_bits_per_byte_and_perplexity_intervals_are_of_ratios_of_sums(llama, tasks_folder):
    """The evidence kernel against a direct computation: a resample's bits per byte is -Σll/Σbytes/ln 2."""
    from olive_eval.lm_eval.evidence import SampleMetric, sample_evidence
    from olive_eval.metrics import resampling

    theirs = reference(llama, tasks_folder, ["words_ppl"], bootstrap_iters=0)
    items = [s["bits_per_byte"] for s in sorted(theirs["samples"]["words_ppl"], key=lambda s: s["doc_id"])]
    evidence = sample_evidence("bits_per_byte", items)
    rows = np.array(items, dtype=np.float64)
    assert evidence.metric.reduce(evidence.statistics).value == pytest.approx(
        theirs["results"]["words_ppl"]["bits_per_byte,none"], rel=1e-12
    )
    draws = resampling.distribution(evidence, 50, seed=3)
    idx = np.random.default_rng(0).integers(0, len(rows), size=len(rows))
    one = SampleMetric("bits_per_byte").reduce(evidence.statistics[idx]).value
    assert one == pytest.approx(-rows[idx, 0].sum() / rows[idx, 1].sum() / math.log(2))
    assert draws.std() > 0


def test_an_aggregation_other_than_a_mean_or_ratio_is_recomputed_by_lm_eval(llama):
    from lm_eval.api.registry import get_aggregation

    from olive_eval.lm_eval.evidence import sample_evidence
    from olive_eval.metrics import resampling

    rng = np.random.default_rng(0)
    items = [(int(g), int(p)) for g, p in rng.integers(0, 2, size=(40, 2))]
    evidence = sample_evidence("f1", items)
    idx = rng.integers(0, 40, size=(4, 40))
    expected = [get_aggregation("f1")([items[i] for i in row]) for row in idx]
    assert np.allclose(evidence.values_on(idx), expected)
    assert len(resampling.distribution(evidence, 20, seed=1)) == 20


def test_an_hf_models_threads_hold_inside_lm_eval_and_are_restored(llama, tasks_folder, tmp_path, monkeypatch):
    """lm-eval calls the transformers model itself (HFLM), not the runtime's predict: the run enters the model's
    call scope around it, so the ``threads`` setting holds there as in a prediction pass."""
    import torch

    import olive_eval.lm_eval.hf_lm as hf_lm_module

    seen: list[int] = []
    real = hf_lm_module.hf_lm

    def spied(model, *args, **kwargs):
        model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(hf_lm_module, "hf_lm", spied)
    outside = torch.get_num_threads()  # one: the package's fixture
    for threads in (2, 1):
        seen.clear()
        model = {**hf_model(llama), "threads": threads}
        config = lm_config(
            model, tasks_folder, tmp_path / str(threads), metric_config={"tasks": ["words_mc"], "limit": 2}
        )
        result = evaluate(config).models["base"]
        assert result.metrics["lm-words_mc/acc,none"].error is None
        assert seen and set(seen) == {threads}
        assert torch.get_num_threads() == outside
