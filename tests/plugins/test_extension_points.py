"""Every extension point from one plugin package, one module each: a metric type, the kind of work that measures
it, a model type, a task, a judge source and an executor. The package is an installed distribution on
``sys.path`` with its ``entry_points.txt``; nothing in olive-eval names it. A run uses the model type, the metric
type and its kind of work under the plugin's executor; the task resolves for an HfModel; the judge source judges a
judged metric."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config.executor import executor_registry
from olive_eval.engine.executors.base import executor_builders
from olive_eval.engine.work.base import work_registry
from olive_eval.judges import judges_of
from olive_eval.judges.base import judge_source_registry
from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.types import metric_type_registry
from olive_eval.runtimes.base import runtime_registry
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.tasks.base import get_task, task_registry
from olive_eval.tasks.call_mode import CallMode
from tests.plugins.toy_distribution import install_package, linear_runtime_source

MODULES = {
    "metric_type": '''
from olive_eval.metrics.types import MetricType


class WeightTotal(MetricType):
    """The sum of the model's weights, measured by the plugin's kind of work."""

    work = "toy_probe"

    def sub_type_names(self):
        return ["total", "count"]

    def default_higher_is_better(self, sub_type):
        return True
''',
    "work": '''
from dataclasses import dataclass

import numpy as np

from olive_eval.engine.work.base import ModelUnit, WorkKind
from olive_eval.metrics.base import Score


@dataclass
class Probe(ModelUnit):
    """Reads the loaded model's weights: one unit per metric."""

    def run(self, ctx):
        weights = np.asarray(ctx.runtime(self.settings).handle)
        values = {"total": float(weights.sum()), "count": float(weights.size)}
        for metric, sub in self.measures():
            ctx.recorder.record(metric, sub, Score(values[sub.name]))


class ToyProbe(WorkKind):
    order = 50

    def plan(self, run, metrics):
        return [Probe([metric], metric.user_config.settings_override()) for metric in metrics]
''',
    "model_type": linear_runtime_source("ToyLinear"),
    "task": """
from olive_eval.tasks.base import Task
from olive_eval.tasks.call_mode import CallMode


class Paraphrase(Task):
    aliases = ("toy-rewrite",)
    model_classes = ("AutoModelForSeq2SeqLM",)
    call_modes = (CallMode.GENERATE,)
    post_process = "decode"
""",
    "judge": '''
from typing import Literal

from olive_eval.judges.base import JudgeSource, JudgeSpec


class ConstantSpec(JudgeSpec):
    type: Literal["toy_constant"] = "toy_constant"
    score: int = 3


class ConstantJudge(JudgeSource):
    """Replies the same rating to every prompt."""

    Spec = ConstantSpec

    @classmethod
    def build(cls, spec, model=None, runtime=None):
        reply = '{"score": %d}' % spec.score
        return (lambda prompts: [reply for _ in prompts]), True, {"source": "toy_constant", "score": spec.score}
''',
    "executor": '''
from typing import Literal

from olive_eval.config.executor import ExecutorConfig
from olive_eval.engine.executors.local import LocalExecutor

RAN: list[str] = []


class CountingConfig(ExecutorConfig):
    type: Literal["toy_counting"] = "toy_counting"


class CountingExecutor(LocalExecutor):
    """The local executor, noting each model it evaluates."""

    def run(self, unit):
        RAN.append(unit.model.display_name())
        return super().run(unit)


def build_counting(config, run, evaluator, output_dir, progress):
    return CountingExecutor(evaluator, config.shards)
''',
}

ENTRY_POINTS = """\
[olive_eval.metric_types]
toy_weight_total = {package}.metric_type:WeightTotal

[olive_eval.work]
toy_probe = {package}.work:ToyProbe

[olive_eval.model_types]
ToyLinear = {package}.model_type:LinearRuntime

[olive_eval.tasks]
toy-paraphrase = {package}.task:Paraphrase

[olive_eval.judge_sources]
toy_constant = {package}.judge:ConstantJudge

[olive_eval.executors]
toy_counting = {package}.executor:CountingConfig

[olive_eval.executor_builders]
toy_counting = {package}.executor:build_counting
"""

NAMES = {
    metric_type_registry: ("toy_weight_total",),
    work_registry: ("toy_probe",),
    runtime_registry: ("ToyLinear",),
    task_registry: ("toy-paraphrase", "toy-rewrite"),
    judge_source_registry: ("toy_constant",),
    executor_registry: ("toy_counting",),
    executor_builders: ("toy_counting",),
}


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    package = install_package(
        tmp_path,
        monkeypatch,
        request,
        name="olive-eval-toy-house",
        version="1.0",
        modules={name: textwrap.dedent(source) for name, source in MODULES.items()},
        entry_points=ENTRY_POINTS,
    )
    yield package
    monkeypatch.undo()
    for registry, names in NAMES.items():
        for name in names:
            registry.unregister(name)
    for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        sys.modules.pop(module)


def test_a_model_type_a_metric_type_and_its_kind_of_work_run_under_a_plugin_executor(toy, plugin):
    weights = {}
    for name, noise in (("base", 0.0), ("cand", 0.5)):
        w = toy.weights + noise * toy.rng.standard_normal(toy.weights.shape).astype(np.float32)
        np.save(toy.root / f"{name}.npy", w)
        weights[name] = w
    models = [{"type": "ToyLinear", "name": name, "weights_file": str(toy.root / f"{name}.npy")} for name in weights]
    config = {
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": [toy.data_config()],
        "executor": {"type": "toy_counting"},
        "metrics": [
            {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
            {"name": "weights", "type": "toy_weight_total", "sub_types": [{"name": "total"}, {"name": "count"}]},
        ],
        "output_dir": str(toy.root / "out"),
    }
    result = evaluate(config)
    executor_module = sys.modules[f"{plugin}.executor"]
    assert executor_module.RAN == ["base", "cand"]
    for name, w in weights.items():
        metrics = result.models[name].metrics
        assert metrics["weights-total"].value == pytest.approx(float(w.sum()))
        assert metrics["weights-count"].value == w.size
        predicted = (toy.x @ w).argmax(axis=1)
        assert metrics["acc-accuracy_score"].value == pytest.approx(float(np.mean(predicted == toy.labels)))
    assert result.models["base"].metrics["acc-accuracy_score"].value == 1.0


def test_a_plugin_task_serves_an_hf_model(plugin):
    assert get_task("toy-rewrite") is get_task("toy-paraphrase")
    config = HfModelConfig(type="HfModel", model_path="x", task="toy-rewrite")
    assert config.call_mode(None) is CallMode.GENERATE


def test_a_plugin_judge_source_judges_a_judged_metric(plugin):
    judge = {"type": "toy_constant", "score": 4}
    metric = get_metric("summary_coherence", {"judge": judge})
    judges = judges_of(judge)
    metric.bind_judges(judges)
    try:
        stats = metric.statistics(["a short summary", "another one"], ["the source text", "more source text"])
        score = metric.reduce(stats)
    finally:
        for built in judges.values():
            built.close()
    assert score.value == 4.0
    assert list(metric.instance_scores(stats)) == [4.0, 4.0]
