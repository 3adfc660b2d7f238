"""Fidelity in a run: each candidate scored against the baseline's own outputs, kept from the baseline's pass and
read back (never recomputed), on data with or without labels; the same values under every executor, in a session
and from the result cache; a baseline that failed or an output of another shape fails only the fidelity metrics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_softmax

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation
from olive_eval.errors import ConfigError
from tests.helpers import N_CLASSES, N_FEATURES, linear_onnx, write_jsonl

FIDELITY = {
    "name": "fid",
    "type": "fidelity",
    "sub_types": [
        {"name": "top1_agreement", "priority": 1, "goal": {"type": "threshold", "value": 0.5}},
        {"name": "kl_divergence"},
        {"name": "cosine_similarity"},
    ],
}


class Problem:
    """A linear baseline and candidates with weight noise, on rows with (or without) labels."""

    def __init__(self, root: Path, n: int = 96, labels: bool = True) -> None:
        rng = np.random.default_rng(7)
        self.root = root
        self.x = rng.standard_normal((n, N_FEATURES)).astype(np.float32).round(4)
        self.weights = {"base": rng.standard_normal((N_FEATURES, N_CLASSES)).astype(np.float32)}
        for name, noise in (("near", 0.1), ("far", 1.0)):
            self.weights[name] = self.weights["base"] + noise * rng.standard_normal((N_FEATURES, N_CLASSES)).astype(
                np.float32
            )
        rows = [{"x": x.tolist(), **({"label": int(i % N_CLASSES)} if labels else {})} for i, x in enumerate(self.x)]
        self.data_file = write_jsonl(root / "data.jsonl", rows)
        self.labels = labels

    def model(self, name: str, weights: np.ndarray | None = None) -> dict:
        path = linear_onnx(self.root / f"{name}.onnx", self.weights[name] if weights is None else weights)
        return {"type": "ONNXModel", "name": name, "model_path": str(path)}

    def config(self, candidates=("near", "far"), metrics=(FIDELITY,), **extra) -> dict:
        pre = {"input_cols": ["x"], **({"label_col": "label"} if self.labels else {})}
        return {
            "input_model": self.model("base"),
            "candidates": [self.model(name) for name in candidates],
            "data_configs": [
                {
                    "name": "rows",
                    "type": "HuggingfaceContainer",
                    "load_dataset_config": {"data_name": "json", "data_files": str(self.data_file), "split": "train"},
                    "pre_process_data_config": pre,
                    "dataloader_config": {"batch_size": 10},
                }
            ],
            "metrics": list(metrics),
            "output_dir": str(self.root / "out"),
            **extra,
        }

    def expected(self, name: str) -> dict[str, float]:
        """The fidelity values computed here from the weights (float32 outputs, as the model gives them)."""
        c = (self.x @ self.weights[name]).astype(np.float64)
        b = (self.x @ self.weights["base"]).astype(np.float64)
        log_p, log_q = log_softmax(b, axis=1), log_softmax(c, axis=1)
        cos = (c * b).sum(1) / (np.linalg.norm(c, axis=1) * np.linalg.norm(b, axis=1))
        return {
            "fid-top1_agreement": float(np.mean(c.argmax(1) == b.argmax(1))),
            "fid-kl_divergence": float(np.mean((np.exp(log_p) * (log_p - log_q)).sum(1))),
            "fid-cosine_similarity": float(np.mean(cos)),
        }


@pytest.fixture
def problem(tmp_path):
    return Problem(tmp_path)


def values(result, name: str) -> dict[str, float | None]:
    return {key: sub.value for key, sub in result.models[name].metrics.items() if key.startswith("fid-")}


def test_each_candidate_is_scored_against_the_baselines_outputs_and_the_baseline_is_the_identity(problem):
    result = evaluate(problem.config())
    assert values(result, "base") == pytest.approx(
        {"fid-top1_agreement": 1.0, "fid-kl_divergence": 0.0, "fid-cosine_similarity": 1.0}, abs=1e-12
    )
    for name in ("near", "far"):
        assert values(result, name) == pytest.approx(problem.expected(name), rel=1e-5, abs=1e-7)
    assert problem.expected("far")["fid-top1_agreement"] < problem.expected("near")["fid-top1_agreement"]
    kept = sorted(p.relative_to(problem.root / "out").as_posix() for p in (problem.root / "out/outputs").rglob("*"))
    assert kept == ["outputs/base", "outputs/base/rows", "outputs/base/rows/part-000000000000.arrow"]


def test_unlabelled_data_serves_fidelity_and_a_label_metric_on_it_is_refused_before_any_model_loads(tmp_path):
    problem = Problem(tmp_path, labels=False)
    result = evaluate(problem.config())
    assert values(result, "near") == pytest.approx(problem.expected("near"), rel=1e-5, abs=1e-7)
    accuracy = {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}
    with pytest.raises(ConfigError) as caught:
        evaluate(problem.config(metrics=(FIDELITY, accuracy)))
    assert "references" in str(caught.value) and "metrics[1].sub_types[0].name" in str(caught.value)


def test_intervals_and_a_confident_goal(problem):
    fidelity = {
        **FIDELITY,
        "confidence_interval": {"level": 0.95, "seed": 3},
        "sub_types": [
            {"name": "top1_agreement", "priority": 1, "goal": {"type": "threshold", "value": 0.97, "confidence": 0.95}},
            {"name": "kl_divergence"},
        ],
    }
    result = evaluate(problem.config(metrics=(fidelity,)))
    near = result.models["near"].metrics["fid-top1_agreement"]
    assert near.confidence_interval is not None and near.ci_low < near.value < near.ci_high
    far = result.models["far"].metrics["fid-top1_agreement"]
    assert far.goal is not None and far.goal.met is False and far.goal.confidence == 0.95
    reseeded = evaluate(problem.config(metrics=({**fidelity, "confidence_interval": {"level": 0.95, "seed": 4}},)))
    kl, other = (r.models["near"].metrics["fid-kl_divergence"] for r in (result, reseeded))
    assert kl.ci_low < kl.value < kl.ci_high
    assert other.value == kl.value and (other.ci_low, other.ci_high) != (kl.ci_low, kl.ci_high)  # the seed counts


@pytest.mark.parametrize(
    "executor", [{"type": "process"}, {"type": "process", "shards": 3}, {"type": "local", "shards": 2}]
)
def test_every_executor_gives_the_values_of_one_local_pass(problem, executor):
    local = evaluate(problem.config())
    other = evaluate({**problem.config(), "executor": executor, "output_dir": str(problem.root / "out2")})
    for name in ("base", "near", "far"):
        assert values(other, name) == pytest.approx(values(local, name), rel=1e-12, abs=1e-15)


def test_a_session_keeps_the_baselines_outputs_for_candidates_added_later(problem):
    with Evaluation(problem.config(candidates=())) as session:
        session.baseline()
        near = session.evaluate(problem.model("near"))
        far = session.evaluate(problem.model("far"))
    assert {k: near.metrics[k].value for k in problem.expected("near")} == pytest.approx(problem.expected("near"))
    assert {k: far.metrics[k].value for k in problem.expected("far")} == pytest.approx(problem.expected("far"))


def cached_run(problem: Problem, cache: Path, out: str, candidates: tuple[str, ...]) -> tuple[dict, set[str]]:
    """Each model's fidelity values from a session with the result cache, and the models served from it."""
    lines: list[tuple[str, str]] = []
    config = {**problem.config(candidates=()), "output_dir": str(problem.root / out)}
    with Evaluation(config, cache=cache, progress=lambda m, t: lines.append((m, t))) as session:
        results = {name: session.evaluate(problem.model(name)).metrics for name in candidates}
        results["base"] = session.baseline().metrics
    served = {model for model, text in lines if text == "results from the cache"}
    return {n: {k: v.value for k, v in m.items()} for n, m in results.items()}, served


def test_the_result_cache_keeps_the_baselines_outputs_and_keys_candidates_by_their_baseline(problem, tmp_path):
    cache = tmp_path / "cache"
    first, served = cached_run(problem, cache, "o1", ("near",))
    assert served == set()
    # a new candidate: the baseline is served from the cache, its outputs restored for the new candidate
    second, served = cached_run(problem, cache, "o2", ("near", "far"))
    assert served == {"base", "near"}
    assert second["far"] == pytest.approx(problem.expected("far"), rel=1e-5, abs=1e-7)
    assert second["near"] == first["near"]
    assert (problem.root / "o2/outputs/base/rows/part-000000000000.arrow").is_file()
    # another baseline: the candidate's fidelity is measured again, against it
    problem.weights["base"] = problem.weights["far"]
    third, served = cached_run(problem, cache, "o3", ("near",))
    assert served == set()
    assert third["near"] == pytest.approx(problem.expected("near"), rel=1e-5, abs=1e-7)


def test_a_baseline_that_failed_fails_only_the_candidates_fidelity(problem):
    config = problem.config(
        metrics=(FIDELITY, {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]})
    )
    config["input_model"]["model_path"] = str(problem.root / "missing.onnx")
    Path(problem.root / "missing.onnx").write_bytes(b"not an onnx model")
    result = evaluate(config)
    assert result.models["base"].status == "failed"
    near = result.models["near"]
    assert near.metrics["acc-accuracy_score"].error is None
    error = near.metrics["fid-top1_agreement"].error
    assert "baseline 'base' left no outputs on data config 'rows'" in error and "failed" in error


def test_a_candidate_whose_output_has_another_shape_fails_its_fidelity_alone(problem):
    wide = np.concatenate([problem.weights["near"], problem.weights["near"][:, :1]], axis=1)
    config = problem.config(
        candidates=(),
        metrics=(FIDELITY, {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}),
    )
    config["candidates"] = [problem.model("wide", wide)]
    result = evaluate(config)
    wide_result = result.models["wide"]
    assert wide_result.metrics["acc-accuracy_score"].error is None
    error = wide_result.metrics["fid-top1_agreement"].error
    assert "(4,)" in error and "(3,)" in error and "one shape" in error


def test_a_fidelity_sub_type_that_is_neither_a_measure_nor_a_reference_metric_is_one_line(problem, tmp_path, capsys):
    config = problem.config(metrics=({**FIDELITY, "sub_types": [{"name": "perplexity"}]},))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "metrics[0].sub_types[0].name" in err


def test_fidelity_with_repeats_is_refused_at_its_key(problem):
    with pytest.raises(ConfigError) as caught:
        evaluate(problem.config(metrics=({**FIDELITY, "repeats": 2, "filters": [{"type": "take_first"}]},)))
    assert "metrics[0].repeats" in str(caught.value) and "one output per example" in str(caught.value)


def test_outputs_the_baseline_cannot_keep_are_named_in_the_candidates_error(problem):
    fidelity = {**FIDELITY, "sub_types": [{"name": "top1_agreement", "metric_config": {"output_name": "nope"}}]}
    result = evaluate(problem.config(candidates=("near",), metrics=(fidelity,)))
    error = result.models["near"].metrics["fid-top1_agreement"].error
    assert error == (
        "baseline 'base' has no outputs on data config 'rows' to compare with: it could not keep its outputs: the "
        "model has no output 'nope'; its outputs: logits"
    )
    own = result.models["base"].metrics["fid-top1_agreement"].error
    assert own.endswith("the model has no output 'nope'; its outputs: logits"), own


def test_resume_keeps_the_kept_models_files_and_a_new_candidate_is_compared_with_the_kept_baseline(problem):
    first = evaluate(problem.config(candidates=("near",)))
    out = problem.root / "out"
    kept = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.parent != out)
    with Evaluation(problem.config(candidates=("near", "far")), resume=True) as session:
        resumed = session.run()
    assert values(resumed, "near") == values(first, "near")  # kept, not measured again
    assert values(resumed, "far") == pytest.approx(problem.expected("far"), rel=1e-5, abs=1e-7)
    now = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.parent != out}
    assert set(kept) <= now  # the kept models' instance files and the baseline's outputs are still there
