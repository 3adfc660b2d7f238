"""Issue 29 item 9: metric and sub-type names with hyphens are named whole in failure lines: the engine carries the
pair (:class:`MetricKey`), and the ``"metric-sub"`` string is for output only."""

from __future__ import annotations

from olive_eval import evaluate
from olive_eval.config.metric_key import MetricKey, metric_keys
from olive_eval.engine.model.runner import settle_status
from olive_eval.records.results import ModelResult, SubMetricResult


def test_a_metric_key_labels_the_pair_and_maps_back_without_splitting():
    key = MetricKey("lm-wmt16-de", "wmt16-de-en/bleu,none")
    assert key.label == "lm-wmt16-de-wmt16-de-en/bleu,none"

    class Sub:
        def __init__(self, name: str) -> None:
            self.name = self.score_key = name  # score_key: the name, or the sub-type's score_name

    class Metric:
        name, sub_types = "gsm8k", [Sub("exact_match,strict-match"), Sub("exact_match,flexible-extract")]

    assert metric_keys([Metric()]) == {
        "gsm8k-exact_match,strict-match": MetricKey("gsm8k", "exact_match,strict-match"),
        "gsm8k-exact_match,flexible-extract": MetricKey("gsm8k", "exact_match,flexible-extract"),
    }


def test_the_failure_line_names_a_hyphenated_metric_whole():
    keys = {k.label: k for k in (MetricKey("lm-wmt16-de", "wmt16-de-en/bleu,none"), MetricKey("acc", "top-1"))}
    result = ModelResult(
        status="running",
        metrics={
            "lm-wmt16-de-wmt16-de-en/bleu,none": SubMetricResult(None, 1, True, error="boom"),
            "acc-top-1": SubMetricResult(0.5, 2, True),
        },
    )
    settle_status(result, keys)
    assert (result.status, result.error) == ("partial", "metric(s) lm-wmt16-de failed: boom")


def test_a_failing_user_function_with_hyphenated_names_end_to_end(toy, tmp_path):
    script = tmp_path / "f.py"
    script.write_text(
        "def ok(model, device, execution_providers):\n    return 1.0\n"
        "def bad(model, device, execution_providers):\n    raise RuntimeError('no')\n"
    )

    def custom(name: str, sub: str, func: str, priority: int) -> dict:
        return {
            "name": name,
            "type": "custom",
            "sub_types": [{"name": sub, "priority": priority, "higher_is_better": True}],
            "user_config": {"user_script": str(script), "evaluate_func": func},
        }

    config = toy.config({}, [custom("my-metric", "exact_match,strict-match", "bad", 1), custom("b", "x-y", "ok", 2)])
    model = evaluate(config).models["base"]
    assert model.status == "partial"
    assert model.error.startswith("metric(s) my-metric failed: custom metric 'my-metric' on model 'base': ")
    assert model.metrics["b-x-y"].value == 1.0
