"""Olive's ``metric_func`` scoring a pass: the user's function gets the whole pass's predictions, raw outputs and
references at once (joined in example order when the pass is sharded)."""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig
from olive_eval.config.metric_fields import merged_fields
from olive_eval.data.batch import Column, concat
from olive_eval.engine.model.custom import ModelOutput, call_user_function
from olive_eval.engine.passes.scored import Scored
from olive_eval.errors import EvaluationError
from olive_eval.records.sinks import HeldSink, RecordSink
from olive_eval.records.writer import HeldRecords, InstanceWriter

Fields = dict[str, Column]


class CustomScorer:
    """Olive's ``metric_func(model_output, targets, **kwargs)``: it needs the whole pass at once."""

    def __init__(
        self, config: MetricConfig, model_name: str, writer: InstanceWriter | HeldRecords | None, model_folder: str
    ) -> None:
        self.config = config
        self.model_name = model_name
        self._parts: dict[str, list[Column]] = {"prediction": [], "logits": [], "references": []}
        self._sources = merged_fields(config.fields, None)  # what the metric_func gets in place of each
        self._samples: RecordSink | HeldSink | None = (
            writer.sample_log(model_folder, config.name, config.sample_log_num, config.sample_log_dir)
            if writer is not None and config.sample_log_num
            else None
        )

    def check_fields(self, available: list[str]) -> None:
        references = self._sources.get("references", "references")
        if references not in available:
            raise EvaluationError(
                f"custom metric '{self.config.name}' needs {references}: set the data config's label_col"
            )

    def pass_reads(self) -> set[str]:
        return {self._sources.get(name, name) for name in self._parts}

    def update(self, fields: Fields, start: int, cache: dict[Any, Any]) -> None:
        for name, parts in self._parts.items():
            parts.append(fields[self._sources.get(name, name)])
        if self._samples is not None and not self._samples.full:
            n = len(fields["prediction"])
            index = np.arange(start, start + n)
            sample = {
                "index": index,
                "prediction": self._parts["prediction"][-1],
                "target": self._parts["references"][-1],
            }
            self._samples.write(sample, n)

    def held(self) -> list[dict[str, list[Column]]]:
        """What a shard of a sharded pass hands back: the columns it kept, in example order."""
        if self._samples is not None:
            self._samples.close()
            self._samples = None
        return [self._parts]

    def finish_shards(self, shards: list[list[dict[str, list[Column]]]]) -> list[Scored]:
        """The user's function on the shards' columns joined in example order, as on one pass's."""
        self._parts = {name: [part for shard in shards for part in shard[0][name]] for name in self._parts}
        return self.finish()

    def finish(self) -> list[Scored]:
        joined = {name: concat(parts) for name, parts in self._parts.items()}
        if self._samples is not None:
            self._samples.close()
            self._samples = None
        uc = self.config.user_config
        output = ModelOutput(joined["prediction"], joined["logits"])
        values = call_user_function(
            self.config, self.model_name, "metric_func", (output, joined["references"]), uc.metric_func_kwargs
        )
        return [Scored(sub, values[sub.name]) for sub in self.config.sub_types]

    def discard(self) -> None:
        if self._samples is not None:
            self._samples.discard()
            self._samples = None
