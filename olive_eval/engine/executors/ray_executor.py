"""The ``ray`` executor: candidates' accuracy passes spread over Ray workers, on this machine or a cluster.

Why Ray: a sweep of tens of candidates is many independent per-model units, and Ray schedules such tasks over
the CPUs and GPUs of one machine or many. Each unit is one Ray task (``resources_per_model``), at most
``num_workers`` at a time; the run's opened data goes into Ray's object store once and every task reads it
from there. A task whose worker process dies is run again once (Ray's ``max_retries=1``); a second death, or
``timeout_s`` passed, fails that model alone. Workers send their progress lines through a small actor, so the
driver prints each worker's model and stage. With ``"shards": N`` each model's unit runs in a child process of
the driver (as the ``process`` executor runs it) and each shard of its passes is a task (:mod:`.ray_shards`).
Ray is imported only when the executor is built: the ``ray`` extra is optional. Latency and throughput rounds never run here: the run times every model in the driver.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olive_eval.engine.executors.base import executor_builders, failed_evaluation
from olive_eval.engine.executors.node import node_info
from olive_eval.engine.executors.ray_cluster import check_resources, connect
from olive_eval.engine.executors.ray_common import POLL_S, Reporter, import_ray, worker_name
from olive_eval.errors import first_line
from olive_eval.progress import Progress

if TYPE_CHECKING:
    from olive_eval.config.executor import RayConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.executors.process import ProcessExecutor
    from olive_eval.engine.executors.worker import Packed
    from olive_eval.engine.model.runner import ModelEvaluator
    from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit


def _evaluate_remote(
    name: str, packed: Packed, output_dir: str | None, data: bytes | None, reporter: Any
) -> tuple[Any, ...]:
    """One unit on a Ray worker: ``("done", evaluation)``, or ``("error", message)`` when the run's config could
    not be loaded there (a user script importing a package the worker lacks)."""
    from olive_eval.engine.executors.worker import evaluate_unit, unpack

    node = node_info()
    where = worker_name()

    def progress(model: str, message: str) -> None:
        reporter.put.remote(where, model, message)

    import ray

    # sent before it goes on: a "started" (its timeout clock, its retry's count) is not lost with a worker that
    # dies right after sending it
    ray.get(reporter.put.remote(where, name, "started"))
    if not Path(packed.base_dir).is_dir():  # another machine: the config's folder came as the working_dir
        packed = replace(packed, base_dir=os.getcwd())
    try:
        run, unit, shared = unpack(replace(packed, data=data))
    except Exception as exc:
        hint = " (install it on the workers, or list it in the executor's runtime_env 'pip')"
        missing = _chain_has_import_error(exc) or "No module named" in str(exc)
        return ("error", f"on {where}: {first_line(exc)}{hint if missing else ''}")
    evaluation = evaluate_unit(run, unit, Path(output_dir) if output_dir else None, progress, shared)
    for entry in evaluation.result.runtimes:
        entry["node"] = node
    return ("done", evaluation)


def _chain_has_import_error(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ImportError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class RayExecutor:
    """Units as Ray tasks, at most ``num_workers`` at a time, yielded as they finish."""

    concurrent = True  # the run submits the candidates together

    def __init__(
        self,
        config: RayConfig,
        run: RunConfig,
        evaluator: ModelEvaluator,
        output_dir: Path | None,
        progress: Progress,
    ) -> None:
        self.ray = ray = import_ray()
        self.config, self.run_config, self.evaluator = config, run, evaluator
        self.output_dir, self.progress = output_dir, progress
        self._reporter: Any = None
        self._owns = connect(ray, config, run)
        try:
            check_resources(ray, config)
        except BaseException:
            self.close()
            raise
        res = config.resources_per_model
        options: dict[str, Any] = {"num_cpus": res.num_cpus, "num_gpus": res.num_gpus, "max_retries": 1}
        if res.memory is not None:
            options["memory"] = res.memory
        self.task_options = options  # a unit's task and a shard's reserve alike
        self._task = ray.remote(_evaluate_remote).options(**options)
        self._config_json: dict[str, Any] | None = None
        self._data: tuple[tuple[Any, ...], Any] | None = None
        self._units: ProcessExecutor | None = None  # with shards: runs each model's unit in a child

    # ------------------------------------------------------------------ helpers
    def config_json(self) -> dict[str, Any]:
        """The run's config as JSON (for its user scripts, imported first where a task runs), made once."""
        if self._config_json is None:
            self._config_json = self.run_config.model_dump(mode="json", by_alias=True)
        return self._config_json

    def reporter(self) -> Any:
        """The actor the tasks send their progress lines to, started on first use."""
        if self._reporter is None:
            self._reporter = self.ray.remote(num_cpus=0)(Reporter).remote()
        return self._reporter

    def shared(self) -> Any:
        """The run's opened data in the object store (put again only when the store holds more)."""
        from olive_eval.engine.executors.worker import shared_data

        store = self.evaluator.data
        held = store.snapshot().held()
        if self._data is None or self._data[0] != held:
            data = shared_data(store)
            self._data = (held, self.ray.put(data) if data is not None else None)
        return self._data[1]

    def _submit(self, unit: ModelUnit) -> Any:
        from olive_eval.engine.executors.worker import pack

        packed = pack(self.run_config, unit, self.config_json())
        output = str(self.output_dir) if self.output_dir is not None else None
        return self._task.remote(unit.name, packed, output, self.shared(), self.reporter())

    def _outcome(self, unit: ModelUnit, ref: Any) -> ModelEvaluation:
        try:
            kind, value = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:  # the task itself raised, outside the model's evaluation
            cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
            return failed_evaluation(unit, f"the Ray worker could not evaluate it: {first_line(cause)}")
        except self.ray.exceptions.RayError as exc:  # Ray ran it again once (max_retries=1) before saying so
            return failed_evaluation(unit, f"the model's Ray worker died (retried once): {first_line(exc)}")
        if kind == "done":
            return value
        return failed_evaluation(unit, f"the Ray worker could not evaluate it: {value}")

    # ------------------------------------------------------------------ the interface
    def run(self, unit: ModelUnit) -> ModelEvaluation:
        return next(iter(self.run_all([unit])))

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        if self.config.shards > 1:
            yield from self._run_sharded(units)
            return
        ray, waiting = self.ray, list(units)
        window = self.config.num_workers or len(units)
        running: dict[Any, ModelUnit] = {}
        started: dict[str, float] = {}
        attempts: dict[str, int] = {}
        try:
            while waiting or running:
                while waiting and len(running) < window:
                    unit = waiting.pop(0)
                    running[self._submit(unit)] = unit
                    self.progress(unit.name, "queued on Ray")
                done, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
                self.report(started, attempts)
                for ref in done:
                    unit = running.pop(ref)
                    yield self._outcome(unit, ref)
                limit = self.config.timeout_s
                for ref, unit in list(running.items()):
                    since = started.get(unit.name)
                    if limit is not None and since is not None and time.monotonic() - since > limit:
                        ray.cancel(ref, force=True)
                        del running[ref]
                        error = f"the model ran past its timeout of {limit:g} s (timeout_s); its Ray task was cancelled"
                        yield failed_evaluation(unit, error)
        finally:
            for ref in running:  # interrupted: nothing keeps running behind the run
                ray.cancel(ref, force=True)

    def _run_sharded(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        """Each unit in a child process of this machine, one after another (a crash while the model loads fails it
        alone), its passes' shards as Ray tasks (:mod:`.ray_shards`) submitted from here when the child asks."""
        from olive_eval.engine.executors.process import ProcessExecutor
        from olive_eval.engine.executors.ray_shards import RayShards

        limit, shards = self.config.timeout_s, self.config.shards
        if self._units is None:
            self._units = ProcessExecutor(
                self.run_config, self.evaluator, self.output_dir, self.progress, limit, shards
            )
        for unit in units:
            deadline = None if limit is None else time.monotonic() + limit
            yield self._units.run(unit, RayShards(self, unit.name, deadline, limit))

    def report(self, started: dict[str, float], attempts: dict[str, int]) -> None:
        """Print the workers' progress lines, and start a model's timeout clock when its task starts."""
        if self._reporter is None:
            return
        for where, model, message in self.ray.get(self._reporter.drain.remote()):
            if message == "started":  # the timeout clock starts when the task does, again on a retry
                attempts[model] = attempts.get(model, 0) + 1
                started[model] = time.monotonic()
                message = "started" if attempts[model] == 1 else "started again (its worker died)"
            self.progress(model, f"[{where}] {message}")

    def node(self) -> dict[str, str]:
        return node_info()

    def close(self) -> None:
        units = getattr(self, "_units", None)  # not there when the cluster refused the run's resources
        if units is not None:  # its children that are still leaving
            units.close()
        if self._reporter is not None:
            with contextlib.suppress(Exception):  # Ray already down
                self.ray.kill(self._reporter)
            self._reporter = None
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()
        self._owns = False


@executor_builders.decorator("ray")
def build_ray(
    config: RayConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> RayExecutor:
    """Ray workers, on this machine or a cluster (connected now)."""
    return RayExecutor(config, run, evaluator, output_dir, progress)
