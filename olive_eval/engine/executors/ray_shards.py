"""The shards of a sharded pass (``"shards": N`` with the ``ray`` executor) as Ray tasks.

Why here and not in the unit's task: a shard is the same kind of work as a model (a pass over data), so it is
scheduled the same way, one task per shard with ``resources_per_model``, and the driver, which runs the model's
own unit, joins the shards' statistics and writes the per-example files as one pass would
(:func:`olive_eval.engine.passes.shards.sharded_pass`). Every shard reads the run's opened data from the object store
entry the executor put there once. A shard whose worker dies is run again once (``max_retries=1``); a second
death, or the model's ``timeout_s`` passed, fails the pass's metrics with one line.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olive_eval.engine.executors.ray_common import POLL_S
from olive_eval.errors import EvaluationError, first_line

if TYPE_CHECKING:
    from olive_eval.engine.executors.ray_common import RayHost
    from olive_eval.engine.executors.worker import Packed
    from olive_eval.engine.passes.shards import ShardPart, ShardWork


def shard_remote(name: str, label: str, packed: Packed, data: bytes | None, reporter: Any) -> ShardPart:
    """One shard on a Ray worker: its range of the pass, unfinished (the driver finishes the metrics)."""
    from olive_eval.engine.executors.ray_common import worker_name
    from olive_eval.engine.executors.worker import store_with, unpack
    from olive_eval.engine.passes.shards import score_shard

    reporter.put.remote(worker_name(), name, f"{label} started")
    if not Path(packed.base_dir).is_dir():  # another machine: the config's folder came as the working_dir
        packed = replace(packed, base_dir=os.getcwd())
    run, work, shared = unpack(replace(packed, data=data))
    return score_shard(work, store_with(run, shared))


class RayShards:
    """The mapper of one model's :class:`~olive_eval.engine.passes.shards.Sharding`: each shard's work a Ray task, the parts in
    shard order."""

    def __init__(self, executor: RayHost, model: str, deadline: float | None, timeout_s: float | None) -> None:
        self.executor, self.model, self.deadline, self.timeout_s = executor, model, deadline, timeout_s
        self._task: Any = None

    def __call__(self, function: Any, works: list[ShardWork]) -> list[ShardPart]:
        """``function`` (``score_shard`` on the run's store) is what each task runs, on the worker's store."""
        from olive_eval.engine.executors.worker import pack

        executor = self.executor
        ray, config_json, reporter = executor.ray, executor.config_json(), executor.reporter()
        if self._task is None:
            self._task = ray.remote(shard_remote).options(**executor.task_options)
        data, n = executor.shared(), len(works)
        refs = []
        for i, work in enumerate(works):
            label = f"shard {i + 1} of {n} (examples {work.start}-{work.stop - 1} of '{work.data_config}')"
            refs.append(
                self._task.remote(self.model, label, pack(executor.run_config, work, config_json), data, reporter)
            )
        try:
            return self._gather(refs)
        finally:
            for ref in refs:  # a failed or timed-out pass: nothing keeps running behind it
                ray.cancel(ref, force=True)

    def _gather(self, refs: list[Any]) -> list[ShardPart]:
        ray, started, attempts = self.executor.ray, {}, {}
        pending = list(refs)
        while pending:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
            self.executor.report(started, attempts)  # the first waits for the progress actor to have started
            if pending and self.deadline is not None and time.monotonic() > self.deadline:
                # those that finished while the lines were read are not late (as the unit tasks' timeout reads it)
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
            if pending and self.deadline is not None and time.monotonic() > self.deadline:
                raise EvaluationError(
                    f"the model ran past its timeout of {self.timeout_s:g} s (timeout_s); its Ray shard tasks were "
                    "cancelled"
                )
        parts = []
        for i, ref in enumerate(refs):
            try:
                parts.append(ray.get(ref))
            except ray.exceptions.RayTaskError as exc:  # the shard raised: its own error, as one process raises it
                cause = getattr(exc, "cause", None)
                if isinstance(cause, Exception):
                    raise cause from None
                raise EvaluationError(
                    f"shard {i + 1} of {len(refs)}: the Ray worker could not run it: {first_line(exc)}"
                ) from None
            except ray.exceptions.RayError as exc:  # Ray ran it again once (max_retries=1) before saying so
                raise EvaluationError(
                    f"shard {i + 1} of {len(refs)}: the model's Ray worker died (retried once): {first_line(exc)}"
                ) from None
        return parts
