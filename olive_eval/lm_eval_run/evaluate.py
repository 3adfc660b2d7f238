"""One lm-eval run on a loaded model: ``simple_evaluate`` on the model's adapter over the planned tasks, and its
results as olive-eval scores (value, stderr, per-sample evidence) and provenance for results.json.

lm-eval runs with ``log_samples`` on (per-sample results back paired goals), downloads off unless the run allows
them, its seeds from the metric's options, and its log and progress bars kept off the run's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from olive_eval.errors import EvaluationError
from olive_eval.huggingface_env import offline
from olive_eval.lm_eval import lm_eval_package
from olive_eval.lm_eval.adapters import check_serves
from olive_eval.lm_eval.environment_report import without_environment_report
from olive_eval.lm_eval.evidence import sample_evidence
from olive_eval.lm_eval.names import Produced
from olive_eval.lm_eval.options import AdapterOptions, LmEvalOptions
from olive_eval.lm_eval.serving import adapter_for, served_by
from olive_eval.lm_eval.tasks import quiet_lm_eval
from olive_eval.lm_eval_run.plan import LmEvalRun
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.records.json_text import jsonable
from olive_eval.records.results import ConfidenceInterval, SubMetricResult
from olive_eval.records.writer import InstanceWriter


@dataclass
class LmEvalValue:
    value: float
    stderr: float | None
    evidence: ExampleStats | None
    #: The bootstrap resamples lm-eval's stderr took: 0 for a mean's (closed form), capped at 100 for the corpus
    #: metrics, as lm-eval does.
    stderr_resamples: int = 0


@dataclass
class LmEvalOutcome:
    """Values by produced name, and what results.json records of the run (lm-eval's version, per task: version,
    hash of its samples, n-shot, limit and sample counts)."""

    values: dict[str, LmEvalValue] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    #: lm-eval's per-sample log by task (``log_samples``)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def records(self, tasks: set[str]) -> tuple[dict[str, list[Any]], int]:
        """The per-sample log of ``tasks`` as instance-record columns: task, document, filter, prompt, target,
        the model's raw and filtered responses, and each metric's per-sample value; and the row count."""
        rows = [(task, s) for task in sorted(tasks) for s in self.samples.get(task, [])]
        metrics = sorted({m for _, s in rows for m in s.get("metrics", [])})
        columns: dict[str, list[Any]] = {
            "task": [t for t, _ in rows],
            "doc_id": [s["doc_id"] for _, s in rows],
            "filter": [s["filter"] for _, s in rows],
            "prompt": [jsonable(s["arguments"][0][0]) if s.get("arguments") else None for _, s in rows],
            "target": [jsonable(s.get("target")) for _, s in rows],
            "response": [jsonable(s.get("resps")) for _, s in rows],
            "filtered": [jsonable(s.get("filtered_resps")) for _, s in rows],
        }
        for metric in metrics:
            columns[metric] = [jsonable(s.get(metric)) for _, s in rows]
        return columns, len(rows)


def write_records(writer: InstanceWriter, folder: str, job: LmEvalRun, outcome: LmEvalOutcome) -> None:
    """Each metric's instance records: lm-eval's per-sample log of the tasks its sub-types read."""
    for metric in job.metrics:
        sink = writer.instances(folder, metric.name)
        sink.write(*outcome.records({job.resolved[(metric.name, s.name)].task for s in metric.sub_types}))
        sink.close()


def evaluate_tasks(runtime: Any, model_name: str, job: LmEvalRun, allow_download: bool) -> LmEvalOutcome:
    lm_eval = lm_eval_package()
    assert job.tasks is not None
    options = job.options
    served = served_by(runtime)
    check_serves(model_name, served, job.needed_requests(), f"{runtime.model_type}")
    # the model's own call settings (an HfModel's torch threads), as its prediction pass and timing run under
    with offline(allow_download), quiet_lm_eval(), without_environment_report(), runtime.call_scope():
        lm = adapter_for(runtime, AdapterOptions(batch_size=options.batch_size, max_length=options.max_length))
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=list(job.tasks.top),
            task_manager=job.tasks.manager,
            num_fewshot=options.num_fewshot,
            batch_size=options.batch_size,
            limit=options.limit_value(),
            bootstrap_iters=options.bootstrap_iters,
            log_samples=True,
            apply_chat_template=options.apply_chat_template,
            fewshot_as_multiturn=options.fewshot_as_multiturn,
            system_instruction=options.system_instruction,
            gen_kwargs=options.gen_kwargs.for_lm_eval() if options.gen_kwargs is not None else None,
            **options.seeds(),
        )
    if results is None:
        raise EvaluationError("lm-eval returned no results (not the main process of a distributed run)")
    outcome = LmEvalOutcome(
        provenance=provenance(results, options.limit_value(), lm_eval.__version__), samples=results.get("samples", {})
    )
    wanted = {p.name: p for p in job.resolved.values()}
    for name, produced in wanted.items():
        outcome.values[name] = _value(results, produced, job)
    return outcome


#: The interval a stderr gives: value ± z·stderr at this level (the normal approximation lm-eval's stderr is for).
STDERR_LEVEL = 0.95


def record_stderr(result: SubMetricResult, value: LmEvalValue, options: LmEvalOptions) -> None:
    """Keep lm-eval's stderr on the result and, unless the sub-type asked for its own bootstrap interval, make it
    the interval: value ± z·stderr."""
    result.stderr = stderr = value.stderr
    if stderr is None or result.value is None or result.confidence_interval is not None:
        return
    z = NormalDist().inv_cdf(0.5 + STDERR_LEVEL / 2)
    result.ci_low, result.ci_high = result.value - z * stderr, result.value + z * stderr
    result.confidence_interval = ConfidenceInterval(
        "lm_eval_stderr", value.stderr_resamples, STDERR_LEVEL, options.seeds()["random_seed"]
    )


def _value(results: dict[str, Any], produced: Produced, job: LmEvalRun) -> LmEvalValue:
    reported = results["results"].get(produced.task, {})
    if produced.result_key not in reported:
        raise EvaluationError(
            f"lm-eval reported no '{produced.result_key}' for task '{produced.task}' "
            f"(it reported: {', '.join(k for k in reported if ',' in k and '_stderr' not in k)})"
        )
    stderr = reported.get(produced.stderr_key)
    evidence = _evidence(results, produced, job)
    aggregation = getattr(evidence.metric, "lm_eval_aggregation", None) if evidence is not None else None
    iters = job.options.bootstrap_iters
    resamples = 0 if aggregation == "mean" else min(iters, 100) if aggregation in ("bleu", "chrf", "ter") else iters
    return LmEvalValue(
        float(reported[produced.result_key]),
        float(stderr) if isinstance(stderr, (int, float)) else None,
        evidence,
        resamples,
    )


def _evidence(results: dict[str, Any], produced: Produced, job: LmEvalRun) -> ExampleStats | None:
    """The value's per-document items in document order; None for a group's value (no samples of its own)."""
    assert job.tasks is not None
    task = job.tasks.loaded["tasks"].get(produced.task)
    samples = results.get("samples", {}).get(produced.task)
    if task is None or not samples:
        return None
    from lm_eval.api.registry import aggregation_registry, get_aggregation

    aggregate = task.aggregation()[produced.metric]
    name = next((n for n in aggregation_registry.keys() if get_aggregation(n) is aggregate), None)  # noqa: SIM118
    if name is None:
        return None  # an aggregation a task defines in its own code: not resampled
    rows = sorted((s for s in samples if s["filter"] == produced.filter), key=lambda s: s["doc_id"])
    return sample_evidence(name, [s[produced.metric] for s in rows])


def provenance(results: dict[str, Any], limit: int | float | None, version: str) -> dict[str, Any]:
    """lm-eval's version, and per task its version, the hash of its samples (as lm-eval's tracker computes it),
    n-shot, limit and sample counts."""
    from lm_eval.utils import hash_string

    tasks = {}
    for name, version_of in results.get("versions", {}).items():
        samples = results.get("samples", {}).get(name)
        tasks[name] = {
            "version": version_of,
            "hash": hash_string("".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in samples))
            if samples
            else None,
            "n_shot": results.get("n-shot", {}).get(name),
            "limit": limit,
            "n_samples": results.get("n-samples", {}).get(name),
        }
    return {"lm_eval_version": version, "tasks": tasks}
