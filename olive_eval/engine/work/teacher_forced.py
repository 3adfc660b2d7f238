"""Token fidelity (``token_agreement``, ``token_kl``): the baseline generates a continuation of each prompt; every
model is then fed the prompt and the baseline's continuation (teacher forcing) and its next-token distributions at
the continuation's positions are compared with the baseline's.

The baseline's unit generates, feeds its own continuations back and keeps, per example, the prompt, the
continuation (up to and including the first end-of-sequence token) and its next-token logits, in the kept outputs
(:mod:`olive_eval.engine.passes.baseline_outputs`); a candidate's unit reads them back a batch at a time and never
generates. A model type takes part when its runtime has ``teacher_forced`` and ``special_token_ids`` (HfModel).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.passes.baseline_outputs import BaselineReader, OutputsCapture
from olive_eval.engine.work.base import ModelUnit, UnitContext, WorkKind, WorkUnit, register_work
from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.metrics.fidelity import kernels
from olive_eval.metrics.fidelity.measures import TEACHER_FORCED
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.runtimes.base import runtime_registry
from olive_eval.tasks.runtime_outputs import PROMPT_LENGTH, SEQUENCES

#: What the baseline keeps per example.
KEPT = ["prompt", "continuation", "logits"]
#: Examples read back and fed through a candidate at a time.
CHUNK = 16


def split_generation(row: np.ndarray, prompt_length: int, pad: int | None, eos: int | None) -> tuple[Any, Any]:
    """A generated row as (prompt, continuation): padding left out, the continuation cut after its first
    end-of-sequence token."""
    prompt, continuation = np.asarray(row[:prompt_length]), np.asarray(row[prompt_length:])
    if pad is not None:
        prompt = prompt[prompt != pad]
    if eos is not None and (ends := np.flatnonzero(continuation == eos)).size:
        continuation = continuation[: ends[0] + 1]
    elif pad is not None and pad != eos:
        continuation = continuation[continuation != pad]
    return prompt.astype(np.int64), continuation.astype(np.int64)


@dataclass
class TeacherForced(ModelUnit):
    """One fidelity metric's token measures on one data config."""

    def run(self, ctx: UnitContext) -> None:
        (metric,) = self.metrics
        link = ctx.baseline
        if link is None:
            raise EvaluationError("token fidelity compares with the baseline's generations, which only a run keeps")
        assert self.data_config is not None
        runtime = ctx.runtime(self.settings)
        folder = link.folder(self.data_config, self.settings, TEACHER_FORCED)
        ctx.note(f"token fidelity on '{self.data_config}'")
        with ctx.recorder.stage(f"teacher_forced:{self.data_config}"):
            if link.is_baseline:
                rows = list(self._baseline(ctx, runtime, folder))
            else:
                rows = list(self._candidate(runtime, BaselineReader(folder, link, self.data_config)))
        if not rows:
            raise EvaluationError(f"data config '{self.data_config}' has no examples")
        values = {"token_agreement": np.array([a for a, _ in rows]), "token_kl": np.array([k for _, k in rows])}
        for sub in metric.sub_types:
            measure = metric.scorer(sub)
            stats = values[sub.name]
            evidence = Evidence(sample=ExampleStats(measure, statistics=stats))
            ctx.recorder.record(metric, sub, measure.reduce(stats), evidence)

    def _baseline(self, ctx: UnitContext, runtime: Any, folder: Any) -> Iterator[tuple[float, float]]:
        """Generate, feed each continuation back, keep it: the baseline's values (agreement with its own greedy
        choice, KL 0)."""
        pad, eos = runtime.special_token_ids()
        capture = OutputsCapture(folder, KEPT, 0, ctx.baseline.out_dir if ctx.baseline else None)
        try:
            for batch in ctx.data.view(self.data_config, ctx.model).batches():
                out = runtime.predict(batch)
                if SEQUENCES not in out or PROMPT_LENGTH not in out:
                    raise EvaluationError(
                        f"token fidelity needs the baseline to generate on '{self.data_config}' (a decoder-only model "
                        "with a post-process that decodes generated tokens)"
                    )
                kept: dict[str, list[np.ndarray]] = {name: [] for name in KEPT}
                for row, length in zip(out[SEQUENCES], out[PROMPT_LENGTH], strict=True):
                    prompt, continuation = split_generation(row, int(length), pad, eos)
                    logits = runtime.teacher_forced(prompt, continuation).astype(np.float32)
                    kept["prompt"].append(prompt)
                    kept["continuation"].append(continuation)
                    kept["logits"].append(logits)
                    yield kernels.token_agreement(logits, continuation), 0.0  # KL of a model with itself
                capture.update(kept, batch.start, {})
                if capture.error is not None:
                    raise capture.error
        except BaseException:
            capture.discard()
            raise
        capture.finish()

    def _candidate(self, runtime: Any, reader: BaselineReader) -> Iterator[tuple[float, float]]:
        for start in range(0, reader.examples, CHUNK):
            n = min(CHUNK, reader.examples - start)
            prompts, continuations, logits = (reader.read(name, start, n) for name in KEPT)
            for prompt, continuation, base in zip(prompts, continuations, logits, strict=True):
                mine = runtime.teacher_forced(np.asarray(prompt), np.asarray(continuation))
                yield kernels.token_agreement(mine, continuation), kernels.token_kl(mine, base)


@register_work
class TeacherForcedWork(WorkKind):
    name = TEACHER_FORCED
    order = 5

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        key = "evaluator.metrics" if run.evaluator else "metrics"
        index = {m.name: i for i, m in enumerate(run.all_metrics)}
        for model in run.models():
            runtime = runtime_registry.get(model.type)
            if not all(hasattr(runtime, name) for name in ("teacher_forced", "special_token_ids")):
                metric = metrics[0]
                raise ConfigError(
                    f"token fidelity feeds every model the baseline's generated tokens, which model "
                    f"'{model.display_name()}' ({model.type}) cannot take; HfModel can",
                    path=f"{key}[{index[metric.name]}].sub_types[0].name",
                )
        return [TeacherForced([m], m.user_config.settings_override(), m.data_config) for m in metrics]
