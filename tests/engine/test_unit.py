"""One model's evaluation is a self-contained, picklable unit: a spawned process gets the same results."""

from __future__ import annotations

import json
import multiprocessing
import pickle

import numpy as np
import pytest

from olive_eval import evaluate
from tests.engine.unit_helpers import evaluate_model
from tests.helpers import write_margin_metric


def test_a_spawned_process_evaluates_a_model_like_this_one(toy, tmp_path):
    script = tmp_path / "unit_metrics.py"
    write_margin_metric(script, "unit_test_margin")
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "confidence_interval": {"n_resamples": 200}},
                {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
                {"name": "auroc", "metric_config": {"task": "multiclass", "num_classes": 3}},
                {"name": "unit_test_margin", "metric_config": {"scale": 2.0}},
            ],
            "user_config": {"user_script": str(script)},
        },
        {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.3}, metrics)))
    here = evaluate(path).models["cand"]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        there = pool.apply(evaluate_model, (str(path), "cand"))
    assert there.result.status == "ok", there.result.error
    assert set(there.result.metrics) == set(here.metrics)
    for key, sub in here.metrics.items():
        assert there.result.metrics[key].value == pytest.approx(sub.value, rel=1e-12), key
        assert there.result.metrics[key].ci_low == sub.ci_low
    # the evidence came back too, and pickles again (function metrics by their registered name)
    evidence = pickle.loads(pickle.dumps(there.evidence))
    stats = evidence["acc-unit_test_margin"].sample.statistics
    assert len(stats) == len(toy.x) and np.mean(stats) == pytest.approx(here.metrics["acc-unit_test_margin"].value)


def test_an_unknown_model_name(toy, tmp_path):
    with pytest.raises(KeyError, match="no model 'nope' in the run; models: base"):
        evaluate_model(
            toy.config({}, [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}]), "nope"
        )


def test_the_local_executor_runs_the_same_unit_as_a_process_would(toy, tmp_path):
    """The run's executor calls run_unit on the run's own evaluator; evaluate_model ends in the same unit."""
    from olive_eval.engine.executors.local import LocalExecutor
    from olive_eval.engine.model.unit import ModelUnit
    from olive_eval.engine.session.session import Evaluation

    metrics = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}]
    config = toy.config({"cand": 0.3}, metrics)
    units: list[ModelUnit] = []

    class Recording(LocalExecutor):
        def run(self, unit: ModelUnit):  # type: ignore[no-untyped-def]
            units.append(pickle.loads(pickle.dumps(unit)))  # a unit travels by its config
            return super().run(unit)

    with Evaluation(config) as session:
        session._run.executor = Recording(session._run.evaluator)
        here = session.run().models["cand"]
    assert [u.name for u in units] == ["base", "cand"] and units[1].folder == "cand"
    there = evaluate_model(config, "cand")
    assert {k: s.value for k, s in there.result.metrics.items()} == {k: s.value for k, s in here.metrics.items()}
