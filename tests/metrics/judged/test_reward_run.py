"""``reward`` in a run: a baseline and two candidates (Python models) scored by a random BERT reward model the run
plans and loads, each model's value equal to the reward model called directly on that model's answers, with an
interval and a paired goal; and a wrong reward spec is one config error naming the file and the JSON path."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.runtimes.torch_threads import torch_threads
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.judged.reward_helpers import direct_rewards
from tests.runtimes import hf_models

ANSWERS = {
    "m": "lambda q: q",
    "short": "lambda q: q.split()[0]",
    "long": "lambda q: q + ' and the cat sits on the mat'",
}
#: The same answers, computed here.
RESPOND = {"m": lambda q: q, "short": lambda q: q.split()[0], "long": lambda q: q + " and the cat sits on the mat"}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for the direct references (the runs' reward models have one too, ``threads``): nothing
    here tests threads, and a worker shares two cores with another (tiny forwards on two threads mostly wait)."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def reward_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_models.build_bert(tmp_path_factory.mktemp("run_reward") / "rm", seed=4, num_labels=1)


def run_config(tmp_path: Path, reward: dict, goal: dict | None = None) -> dict:
    queries = hf_models.sentences(14, 9)
    write_jsonl(tmp_path / "d.jsonl", [{"query": q, "target": "unused"} for q in queries])
    for name, answer in ANSWERS.items():
        body = f"def load(model_path):\n    answer = {answer}\n    return lambda batch: [answer(q) for q in batch['query']]\n"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    (tmp_path / "models.py").write_text((tmp_path / "m.py").read_text())
    sub = {"name": "reward", "priority": 1, "metric_config": {"reward": reward}}
    sub |= {"confidence_interval": {"n_resamples": 300, "seed": 0}} if goal is None else {"goal": goal}
    run = python_model_run(tmp_path, {"name": "rm", "sub_types": [sub]}, batch_size=4)
    run["candidates"] = [
        {**run["input_model"], "name": name, "user_script": str(tmp_path / f"{name}.py")} for name in ("short", "long")
    ]
    return run


def test_a_baseline_and_two_candidates_are_scored_by_the_reward_model_as_it_scores_directly(tmp_path, reward_model):
    reward = {
        "type": "classifier",
        "model": {"type": "HfModel", "model_path": str(reward_model), "task": "text-classification", "threads": 1},
        "batch_size": 5,
    }
    result = evaluate(run_config(tmp_path, reward))
    queries = hf_models.sentences(14, 9)
    values = {}
    for name in ANSWERS:
        model = result.models[name]
        assert model.status == "ok", model.error
        score = model.metrics["rm-reward"]
        respond = RESPOND[name]
        expected = direct_rewards(reward_model, [(q, respond(q)) for q in queries], max_length=64)
        assert score.value == pytest.approx(expected.mean(), abs=1e-5)
        values[name] = score.value
        if name == "m":
            assert score.ci_low <= score.value <= score.ci_high and score.ci_low < score.ci_high
    assert len(set(values.values())) == 3  # the three models' answers differ, and so do their rewards
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert '"source": "classifier"' in json.dumps(saved) and '"higher_is_better": true' in json.dumps(saved)


def test_a_paired_goal_compares_each_candidates_rewards_with_the_baselines(tmp_path):
    script = str(Path(__file__).with_name("reward_script.py"))
    reward = {"function": "reward", "user_script": script}
    goal = {"type": "max-degradation", "value": 0.5, "confidence": 0.9}
    result = evaluate(run_config(tmp_path, reward, goal))
    from tests.metrics.judged.reward_script import overlap

    queries = hf_models.sentences(14, 9)
    base = np.array([overlap(q, q) for q in queries])
    for name in ("short", "long"):
        respond = RESPOND[name]
        mine = np.array([overlap(q, respond(q)) for q in queries])
        score = result.models[name].metrics["rm-reward"]
        assert score.value == pytest.approx(mine.mean())
        assert score.goal.change == pytest.approx(mine.mean() - base.mean())
        assert score.goal.change_ci_low <= score.goal.change <= score.goal.change_ci_high


@pytest.mark.parametrize(
    ("reward", "where", "says"),
    [
        ({"type": "nope"}, "reward.type", "unknown judge source 'nope'; valid: classifier, endpoint, function, model"),
        (
            {"type": "model", "model": {"type": "HfModel", "model_path": "x"}},
            "reward.type",
            "the model source does not give scores; the sources that do: classifier, endpoint, function",
        ),
        (
            {"type": "classifier", "model": {"type": "HfModel", "model_path": "NOPE", "task": "text-classification"}},
            "reward.model.model_path",
            "folder not found: ",
        ),
        (
            {"type": "classifier", "model": {"type": "HfModel", "model_path": "x", "task": "text-generation"}},
            "reward.model.task",
            "a reward model is a sequence classifier: task text-classification, not text-generation",
        ),
        ({"type": "endpoint", "url": "ftp://x"}, "reward.url", "expected an http:// or https:// URL, got 'ftp://x'"),
        ({"type": "endpoint", "url": "http://x", "pool": 2}, "reward.pool", "unknown key"),
    ],
)
def test_a_wrong_reward_spec_is_one_config_error_at_its_json_path(tmp_path, capsys, reward, where, says):
    if reward.get("model", {}).get("model_path") == "NOPE":
        reward["model"]["model_path"] = str(tmp_path / "no_such_model")
    file = tmp_path / "run.json"
    file.write_text(json.dumps(run_config(tmp_path, reward)))
    code = main(["--config", str(file), "--quiet", "--no-cache"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0, err
    assert f"{file}: metrics[0].sub_types[0].metric_config.{where}: {says}" in err
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_judged_metric_cannot_take_a_source_that_gives_scores(tmp_path, capsys):
    from tests.metrics.judged.test_run import config

    run = config(tmp_path, [{"name": "bias", "metric_config": {"judge": {"type": "endpoint", "url": "http://x"}}}])
    file = tmp_path / "run.json"
    file.write_text(json.dumps(run))
    assert main(["--config", str(file), "--quiet", "--no-cache"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"olive-eval: config error: {file}: metrics[0].sub_types[0].metric_config.judge.type: the endpoint source does not give text; "
        "the sources that do: function, model"
    )


def test_fields_remap_the_prompt_to_another_column(tmp_path):
    """Unitxt's reading: the prompt is the (single) reference, through ``"fields": {"query": "references"}``."""
    script = str(Path(__file__).with_name("reward_script.py"))
    run = run_config(tmp_path, {"function": "reward", "user_script": script})
    rows = [{"query": q, "target": f"the {q.split()[-1]}"} for q in hf_models.sentences(6, 2)]
    write_jsonl(tmp_path / "d.jsonl", rows)
    run["metrics"][0]["sub_types"][0]["fields"] = {"query": "references"}
    run.pop("candidates")
    result = evaluate(run)
    from tests.metrics.judged.reward_script import overlap

    expected = [overlap(r["target"], r["query"]) for r in rows]  # the baseline answers with the query itself
    assert result.models["m"].metrics["rm-reward"].value == pytest.approx(np.mean(expected))
    assert len(set(expected)) > 1


def test_a_reward_models_relative_paths_are_read_beside_the_config(tmp_path, monkeypatch):
    """Its model and tokenizer folders, as a judge's script: so the run's cache hashes the files it scores with."""
    from olive_eval.config import load_run_config

    folder = tmp_path / "project"
    (folder / "rm").mkdir(parents=True)
    (folder / "rm" / "model.onnx").write_bytes(b"")
    reward = {
        "type": "classifier",
        "model": {"type": "ONNXModel", "model_path": "rm/model.onnx", "processor_path": "rm"},
    }
    run = run_config(folder, reward)
    (folder / "run.json").write_text(json.dumps(run))
    monkeypatch.chdir(tmp_path)  # not the config's folder
    loaded = load_run_config(folder / "run.json", check_files=False)
    model = loaded.all_metrics[0].sub_types[0].metric_config["reward"]["model"]
    assert (model["model_path"], model["processor_path"]) == (str(folder / "rm/model.onnx"), str(folder / "rm"))


def test_a_classifier_reward_scores_alike_in_shards(tmp_path, reward_model):
    """Each shard's child plans and loads the reward model with its own run context; the value is the direct
    model's, as in the run's own process."""
    executor = {"type": "process", "shards": 2}
    reward = {
        "type": "classifier",
        "model": {"type": "HfModel", "model_path": str(reward_model), "task": "text-classification", "threads": 1},
    }
    run = run_config(tmp_path, reward)
    run.pop("candidates")
    result = evaluate({**run, "executor": executor})
    model = result.models["m"]
    assert model.status == "ok", model.error
    queries = hf_models.sentences(14, 9)
    expected = direct_rewards(reward_model, [(q, q) for q in queries], max_length=64)
    assert model.metrics["rm-reward"].value == pytest.approx(expected.mean(), abs=1e-5)


def test_a_judged_metric_refuses_a_judge_spec_that_asks_for_scores(tmp_path, capsys):
    from tests.metrics.judged.test_run import SCRIPT, config

    judge = {"function": "judge", "user_script": SCRIPT, "returns": "score"}
    file = tmp_path / "run.json"
    file.write_text(json.dumps(config(tmp_path, [{"name": "bias", "metric_config": {"judge": judge}}])))
    assert main(["--config", str(file), "--quiet", "--no-cache"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "metrics[0].sub_types[0].metric_config.judge.returns: a judged metric's judge returns text (scores are for reward)"
    )
