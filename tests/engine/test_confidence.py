"""Confidence intervals in results, and goals that hold only at the asked confidence (paired bootstrap)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import resampling
from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.records.results import GoalResult
from olive_eval.report.console import format_value, render
from tests.helpers import write_jsonl

N = 1000

LOADER = textwrap.dedent(
    """
    import json
    import torch

    def load(model_path):
        spec = json.load(open(model_path))
        wrong = set(spec["wrong"])

        def model(x):
            ids, labels = x[:, 0].long(), x[:, 1].long()
            flip = torch.tensor([int(i) in wrong for i in ids.tolist()])
            predicted = torch.where(flip, (labels + 1) % 3, labels)
            return torch.nn.functional.one_hot(predicted, 3).float()

        return model
    """
)


@pytest.fixture
def scripted(tmp_path):
    """Models that get exactly the listed examples wrong: accuracy is set by construction."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, N)
    data = write_jsonl(tmp_path / "data.jsonl", [{"x": [i, int(y)], "label": int(y)} for i, y in enumerate(labels)])
    (tmp_path / "loader.py").write_text(LOADER)

    def model(name: str, n_wrong: int) -> dict:
        spec = tmp_path / f"{name}.json"
        spec.write_text(json.dumps({"wrong": rng.choice(N, n_wrong, replace=False).tolist()}))
        return {
            "type": "PyTorchModel",
            "name": name,
            "model_path": str(spec),
            "model_loader": "load",
            "model_script": str(tmp_path / "loader.py"),
        }

    def config(candidates: list[dict], metrics: list[dict], baseline: dict | None = None) -> dict:
        return {
            "input_model": baseline or model("base", 0),
            "candidates": candidates,
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                    "dataloader_config": {"batch_size": 100},
                }
            ],
            "metrics": metrics,
            "output_dir": str(tmp_path / "out"),
        }

    return model, config


def accuracy(goal: dict, **extra) -> dict:
    return {
        "name": "acc",
        "type": "accuracy",
        "data_config": "d",
        "sub_types": [
            {
                "name": "accuracy_score",
                "priority": 1,
                "goal": goal,
                "metric_config": {"task": "multiclass", "num_classes": 3},
                **extra,
            }
        ],
    }


def test_confidence_goal_separates_noise_from_real_margins(scripted):
    model, config = scripted
    candidates = [model("clearly_within", 10), model("within_by_noise", 45), model("clearly_outside", 100)]
    goal = {"type": "max-degradation", "value": 0.05}
    plain = evaluate(config(candidates, [accuracy(goal)]))
    assert [plain.models[c["name"]].goals_met for c in candidates] == [True, True, False]

    confident = evaluate(config(candidates, [accuracy({**goal, "confidence": 0.95})]))
    met = {c["name"]: confident.models[c["name"]].metrics["acc-accuracy_score"].goal for c in candidates}
    assert [met[n].met for n in ("clearly_within", "within_by_noise", "clearly_outside")] == [True, False, False]
    assert confident.ranking == ["clearly_within"]
    noisy = met["within_by_noise"]
    assert noisy.change == pytest.approx(-0.045) and noisy.margin == pytest.approx(0.005)
    assert noisy.margin_bound < 0 < noisy.margin
    # the paired difference of 0/1 scores: its standard error is sqrt(p(1-p)/n) with p the share flipped
    se = np.sqrt(0.045 * 0.955 / N)
    assert noisy.probability == pytest.approx(scipy.stats.norm.cdf(0.005 / se), abs=0.06)
    assert noisy.change_ci_low < -0.045 < noisy.change_ci_high
    assert met["clearly_within"].probability == pytest.approx(1.0, abs=1e-3)
    assert met["clearly_outside"].probability == pytest.approx(0.0, abs=1e-3)
    assert met["clearly_outside"].missed_by == pytest.approx(0.05, abs=0.02)


def test_confident_goal_misses_print_their_result_fields(scripted):
    """What the table prints for a confident miss is results.json's: "missed by" is threshold - value,
    the bound is the threshold moved by ``margin_bound``, and "short by" is ``missed_by``."""
    model, config = scripted
    goal = {"type": "max-degradation", "value": 0.05, "confidence": 0.95}
    result = evaluate(config([model("within_by_noise", 45), model("clearly_outside", 100)], [accuracy(goal)]))
    out = render(result)
    with open(f"{result.output_dir}/results.json") as handle:
        written = json.load(handle)["models"]
    for name in ("within_by_noise", "clearly_outside"):
        sub = result.models[name].metrics["acc-accuracy_score"]
        fields = written[name]["metrics"]["acc-accuracy_score"]["goal"]
        assert fields["missed_by"] == -fields["margin_bound"] > 0
        bound = f"95% bound {format_value(fields['threshold'] + fields['margin_bound'])}"
        judged = f"{bound}, short by {format_value(fields['missed_by'])}"
        point = f"{format_value(sub.value)} vs >={format_value(fields['threshold'])}"
        assert f"{format_value(sub.value)} MISS >={format_value(fields['threshold'])} ({judged})" in out
        if sub.value < fields["threshold"]:
            judged = f"missed by {format_value(fields['threshold'] - sub.value)}; {judged}"
        assert f"  {name}: acc-accuracy_score {point} ({judged})" in out


def test_threshold_goal_with_confidence(scripted):
    model, config = scripted
    result = evaluate(config([model("c", 30)], [accuracy({"type": "threshold", "value": 0.965, "confidence": 0.9})]))
    goal = result.models["c"].metrics["acc-accuracy_score"].goal
    se = np.sqrt(0.97 * 0.03 / N)
    assert goal.margin == pytest.approx(0.005)
    assert goal.margin_bound == pytest.approx(0.005 - 1.2816 * se, abs=0.003)
    assert goal.met == (goal.margin_bound >= 0)


def test_confidence_intervals_in_results(scripted):
    model, config = scripted
    metric = accuracy(
        {"type": "max-degradation", "value": 0.5},
        confidence_interval={"method": "bca", "n_resamples": 500, "level": 0.9, "seed": 3},
    )
    result = evaluate(config([model("c", 200)], [metric]))
    sub = result.models["c"].metrics["acc-accuracy_score"]
    assert sub.value == pytest.approx(0.8)
    # scipy on the same 0/1 scores, same settings: Monte-Carlo tolerance (the counts path draws differently)
    scores = np.ones(N)
    scores[:200] = 0
    ref = scipy.stats.bootstrap(
        (scores,), np.mean, n_resamples=500, confidence_level=0.9, method="BCa", random_state=np.random.default_rng(3)
    ).confidence_interval
    assert sub.ci_low == pytest.approx(ref.low, abs=0.01) and sub.ci_high == pytest.approx(ref.high, abs=0.01)
    with open(f"{result.output_dir}/results.json") as handle:
        written = json.load(handle)
    entry = written["models"]["c"]["metrics"]["acc-accuracy_score"]
    assert entry["confidence_interval"] == {"method": "bca", "n_resamples": 500, "level": 0.9, "seed": 3}
    assert entry["ci_low"] == sub.ci_low


def labels_and_predictions(run: dict, model_config: dict) -> tuple[np.ndarray, np.ndarray]:
    """The scripted data set's labels, and the classes the scripted model predicts for them."""
    data_file = run["data_configs"][0]["load_dataset_config"]["data_files"]
    labels = np.array([json.loads(line)["label"] for line in Path(data_file).read_text().splitlines()])
    wrong = json.loads(Path(model_config["model_path"]).read_text())["wrong"]
    predicted = labels.copy()
    predicted[wrong] = (labels[wrong] + 1) % 3
    return labels, predicted


def per_resample_scores(labels: np.ndarray, predicted: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, macro F1 and one-vs-rest AUROC of one-hot predictions on each resample (row of ``idx``),
    all from each resample's 3x3 confusion matrix at once."""
    rows = np.arange(len(idx))[:, None] * 9
    confusion = np.bincount((rows + labels[idx] * 3 + predicted[idx]).ravel(), minlength=9 * len(idx))
    confusion = confusion.reshape(len(idx), 3, 3).astype(np.float64)  # [resample, true, predicted]
    tp = np.diagonal(confusion, axis1=1, axis2=2)
    fp, fn = confusion.sum(axis=1) - tp, confusion.sum(axis=2) - tp
    tn = idx.shape[1] - tp - fp - fn
    f1 = np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros_like(tp), where=2 * tp + fp + fn > 0)
    # a 0/1 score ranks every positive above every negative or ties it: AUC = (1 + TPR - FPR) / 2
    auc = (1 + tp / (tp + fn) - fp / (fp + tn)) / 2
    return {
        "acc-accuracy_score": tp.sum(axis=1) / idx.shape[1],
        "acc-f1_score": f1.mean(axis=1),
        "acc-auroc": auc.mean(axis=1),
    }


def test_metric_level_interval_applies_to_every_sub_type(scripted):
    model, config = scripted
    metric = {
        "name": "acc",
        "type": "accuracy",
        "data_config": "d",
        "confidence_interval": {"n_resamples": 2000},
        "sub_types": [
            {"name": "accuracy_score", "priority": 1},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
            {"name": "auroc", "metric_config": {"task": "multiclass", "num_classes": 3}},
        ],
    }
    run = config([], [metric], baseline=model("c", 300))  # one model: AUROC's 2,000 recomputations once
    result = evaluate(run)
    m = result.models["c"].metrics
    # an independent bootstrap: scipy's draws for seed 0 (not ours, 42), each metric on every resample; the
    # draws differ from ours, so the two agree to Monte-Carlo precision only
    labels, predicted = labels_and_predictions(run, run["input_model"])
    idx = np.random.default_rng(0).integers(0, N, (2000, N))  # scipy.stats.bootstrap's draws for this generator
    references = per_resample_scores(labels, predicted, idx)
    onehot = np.eye(3)[predicted]
    sklearn = {
        "acc-accuracy_score": lambda i: skm.accuracy_score(labels[i], predicted[i]),
        "acc-f1_score": lambda i: skm.f1_score(labels[i], predicted[i], average="macro"),
        "acc-auroc": lambda i: skm.roc_auc_score(labels[i], onehot[i], multi_class="ovr", labels=[0, 1, 2]),
    }
    whole = per_resample_scores(labels, predicted, np.arange(N)[None, :])
    for key, fn in sklearn.items():  # the vectorized formulas are scikit-learn's, on a few resamples and the whole set
        assert references[key][:5] == pytest.approx([fn(i) for i in idx[:5]], abs=1e-12), key
        assert whole[key][0] == pytest.approx(fn(np.arange(N)), abs=1e-12), key
    for key, theta in references.items():
        low, high = np.percentile(theta, [2.5, 97.5])  # scipy's percentile interval
        assert m[key].confidence_interval.method == "percentile"
        assert m[key].ci_low == pytest.approx(low, abs=0.008), key
        assert m[key].ci_high == pytest.approx(high, abs=0.008), key


def test_interval_seed_is_the_configured_one(scripted, tmp_path):
    """A metric-level ``confidence_interval`` seed reaches every sub-type: the same seed gives the same
    intervals, another seed others, each the resampling function's for that seed."""
    model, config = scripted
    candidate = model("c", 300)
    subs = {"accuracy_score": {}, "f1_score": {"average": "macro"}}
    metric = {
        "name": "acc",
        "type": "accuracy",
        "data_config": "d",
        "sub_types": [
            {"name": name, "priority": priority, "metric_config": {"task": "multiclass", "num_classes": 3, **extra}}
            for priority, (name, extra) in enumerate(subs.items(), 1)
        ],
    }

    def intervals(seed: int, run_number: int) -> tuple[dict[str, tuple[float, float]], dict]:
        run = config([], [{**metric, "confidence_interval": {"n_resamples": 200, "seed": seed}}], baseline=candidate)
        run["output_dir"] = str(tmp_path / f"out-{seed}-{run_number}")
        result = evaluate(run).models["c"].metrics
        return {key: (sub.ci_low, sub.ci_high) for key, sub in result.items()}, run

    first, run = intervals(7, 0)
    assert intervals(7, 1)[0] == first
    assert intervals(8, 0)[0] != first
    labels, predicted = labels_and_predictions(run, candidate)
    for name, extra in subs.items():
        metric_fn = get_metric(name, {"task": "multiclass", "num_classes": 3, **extra})
        sample = ExampleStats(metric_fn, fields=(predicted, labels))
        value = metric_fn.compute(predicted, labels).value
        expected = resampling.confidence_interval(sample, value, "percentile", 200, 0.95, 7)
        assert first[f"acc-{name}"] == pytest.approx(expected, abs=1e-12), name


def test_paired_goal_seed_is_the_configured_one(scripted, tmp_path):
    """A goal's ``seed`` drives its paired bootstrap: same seed, same change interval and margin bound;
    another seed, others; each what the paired resampling function gives for that seed."""
    model, config = scripted
    base, candidate = model("base", 0), model("c", 45)

    def goal_result(seed: int, run_number: int) -> tuple[GoalResult, dict]:
        goal = {"type": "max-degradation", "value": 0.05, "confidence": 0.95, "n_resamples": 200, "seed": seed}
        run = config([candidate], [accuracy(goal)], baseline=base)
        run["output_dir"] = str(tmp_path / f"out-{seed}-{run_number}")
        return evaluate(run).models["c"].metrics["acc-accuracy_score"].goal, run

    first, run = goal_result(5, 0)
    bounds = (first.change_ci_low, first.change_ci_high, first.margin_bound, first.probability)
    again = goal_result(5, 1)[0]
    assert (again.change_ci_low, again.change_ci_high, again.margin_bound, again.probability) == bounds
    other = goal_result(6, 0)[0]
    assert (other.change_ci_low, other.change_ci_high, other.margin_bound) != bounds[:3]
    metric_fn = get_metric("accuracy_score", {"task": "multiclass", "num_classes": 3})
    samples = [ExampleStats(metric_fn, fields=labels_and_predictions(run, m)[::-1]) for m in (base, candidate)]
    base_b, cand_b = resampling.paired_distribution(*samples, 200, 5)
    assert [first.change_ci_low, first.change_ci_high] == pytest.approx(
        np.quantile(cand_b - base_b, [0.025, 0.975]), abs=1e-12
    )
    assert first.margin_bound == pytest.approx(np.quantile(cand_b - (base_b - 0.05), 0.05), abs=1e-12)
    assert first.probability == pytest.approx(np.mean(cand_b - (base_b - 0.05) >= 0), abs=1e-12)


def test_bad_confidence_requests(scripted, tmp_path):
    _model, config = scripted
    bad = accuracy({"type": "max-degradation", "value": 0.1}, confidence_interval={"n_resamples": 1})
    with pytest.raises(
        ConfigError, match=r"sub_types\[0\]\.confidence_interval\.n_resamples: n_resamples must be at least 2, got 1"
    ):
        load_run_config(config([], [bad]))
    size = {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes", "confidence_interval": {}}]}
    with pytest.raises(ConfigError, match="size_on_disk sub-type 'bytes' does not have"):
        load_run_config(config([], [accuracy({"type": "max-degradation", "value": 0.1}), size]))
    one = write_jsonl(tmp_path / "one.jsonl", [{"x": [0, 1], "label": 1}])
    cfg = config([], [accuracy({"type": "max-degradation", "value": 0.1}, confidence_interval={})])
    cfg["data_configs"][0]["load_dataset_config"]["data_files"] = str(one)
    result = evaluate(cfg)
    expected = "metric 'acc-accuracy_score': cannot compute a confidence interval: a bootstrap needs at least 2 examples, got 1"
    assert result.models["base"].metrics["acc-accuracy_score"].error == expected
    assert result.models["base"].status == "failed"  # its only metric failed
    assert result.models["base"].error == f"metric(s) acc failed: {expected}"


def test_sample_log_keeps_olive_format(scripted):
    _model, config = scripted
    metric = accuracy({"type": "max-degradation", "value": 0.1})
    metric["sample_log_num"] = 3
    result = evaluate(config([], [metric]))
    with open(f"{result.output_dir}/samples/base/acc_samples.jsonl") as handle:
        records = [json.loads(line) for line in handle]
    assert [list(r) for r in records] == [["index", "prediction", "target"]] * 3
    assert [r["index"] for r in records] == [0, 1, 2]
    assert all(r["prediction"] == [float(i == r["target"]) for i in range(3)] for r in records)
