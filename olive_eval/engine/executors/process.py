"""The ``process`` executor: each model in a fresh child process, so a model that takes its interpreter down
(a segfault in a custom op, ``os._exit``, a signal, the kernel's out-of-memory kill) fails alone.

Children are started with multiprocessing's ``spawn`` (a fork would copy the parent's threads and CUDA state).
One child is started ahead and imports the engine and the run's runtimes while the current model runs, so a
model waits for no interpreter start-up. A child gets the unit, the config and the run's opened data (pickled
once per run, :func:`olive_eval.engine.executors.worker.shared_data`), writes the instance files to the run's
output folder as a local run does, and sends its progress lines and then the pickled evaluation over a pipe.
A child that dies first, or runs past ``timeout_s`` (it is killed), is a failed evaluation naming why.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from olive_eval.engine.executors.base import ExecutorConfig, Progress, executor_registry, failed_evaluation

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from olive_eval.config.run import RunConfig
    from olive_eval.engine.runner import ModelEvaluator
    from olive_eval.engine.unit import ModelEvaluation, ModelUnit


def _child(conn: Connection, modules: list[str]) -> None:
    """A child's life: import what any unit needs, wait for one unit, evaluate it, send the evaluation back."""
    import importlib

    for name in ["olive_eval.engine.executors.worker", *modules]:
        try:
            importlib.import_module(name)
        except Exception:  # only a head start: the unit's own import reports a real problem
            continue
    from olive_eval.engine.executors.worker import evaluate_unit, unpack

    try:
        job = conn.recv()
    except (EOFError, KeyboardInterrupt):  # the spare was not needed
        return
    packed, output_dir = job

    def progress(model: str, message: str) -> None:
        conn.send(("progress", model, message))

    try:
        run, unit, data = unpack(packed)
        evaluation = evaluate_unit(run, unit, Path(output_dir) if output_dir else None, progress, data)
        conn.send(("done", evaluation))
    except Exception as exc:  # not the model's failure (those are in the evaluation): the unit did not run
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent records the model
        pass
    finally:
        conn.close()


def exit_reason(exitcode: int | None) -> str:
    """Why a child ended without a result, as the model's error says it."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        oom = " (the kernel's out-of-memory killer sends it)" if name == "SIGKILL" else ""
        return f"the model's process was killed by signal {name}{oom}"
    if exitcode:
        return f"the model's process exited with status {exitcode}"
    return "the model's process exited without sending a result"


class ProcessExecutor:
    """Each unit in a fresh spawned child; one child is kept started ahead."""

    def __init__(
        self,
        run: RunConfig,
        evaluator: ModelEvaluator,
        output_dir: Path | None,
        progress: Progress,
        timeout_s: float | None = None,
    ) -> None:
        self.run_config, self.evaluator, self.output_dir = run, evaluator, output_dir
        self.progress, self.timeout_s = progress, timeout_s
        self._context = multiprocessing.get_context("spawn")
        self._spare: tuple[BaseProcess, Connection] | None = None
        self._config_json: dict[str, Any] | None = None
        self._data: tuple[tuple[Any, ...], bytes | None] | None = None
        self._modules = sorted({_runtime_module(m.type) for m in run.models()} - {None})  # type: ignore[arg-type]

    # ------------------------------------------------------------------ children
    def _start(self) -> tuple[BaseProcess, Connection]:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_child, args=(theirs, self._modules), daemon=True)
        process.start()
        theirs.close()
        return process, ours

    def _take(self) -> tuple[BaseProcess, Connection]:
        """The spare child (or a new one), with the next spare started behind it."""
        child = self._spare if self._spare is not None and self._spare[0].is_alive() else self._start()
        self._spare = self._start()
        return child

    def _shared(self) -> bytes | None:
        """The run's opened data, pickled again only when the store holds more than last time."""
        from olive_eval.engine.executors.worker import shared_data

        store = self.evaluator.data
        held = (tuple(store._sources), tuple(store._prepared))
        if self._data is None or self._data[0] != held:
            self._data = (held, shared_data(store))
        return self._data[1]

    # ------------------------------------------------------------------ the interface
    def run(self, unit: ModelUnit) -> ModelEvaluation:
        from olive_eval.engine.executors.worker import pack

        if self._config_json is None:
            self._config_json = self.run_config.model_dump(mode="json", by_alias=True)
        packed = pack(self.run_config, unit, self._config_json, self._shared())
        process, conn = self._take()
        try:
            conn.send((packed, str(self.output_dir) if self.output_dir is not None else None))
            return self._wait(unit, process, conn)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            process.join()
            return failed_evaluation(unit, exit_reason(process.exitcode))
        finally:
            if process.is_alive():  # timed out, or the parent was interrupted
                process.kill()
            process.join()
            conn.close()

    def _wait(self, unit: ModelUnit, process: BaseProcess, conn: Connection) -> ModelEvaluation:
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                process.kill()
                error = f"the model ran past its timeout of {self.timeout_s:g} s (timeout_s); its process was ended"
                return failed_evaluation(unit, error)
            ready = wait([conn, process.sentinel], left)
            if conn in ready or conn.poll():
                kind, *rest = conn.recv()  # EOFError: it died after all (handled by run)
                if kind == "progress":
                    self.progress(*rest)
                    continue
                process.join()
                if kind == "done":
                    return rest[0]
                return failed_evaluation(unit, f"the model's process could not evaluate it: {rest[0]}")
            if process.sentinel in ready:
                process.join()
                return failed_evaluation(unit, exit_reason(process.exitcode))

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        for unit in units:
            yield self.run(unit)

    def close(self) -> None:
        if self._spare is not None:
            process, conn = self._spare
            self._spare = None
            conn.close()  # the spare's recv ends: it returns
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()


def _runtime_module(model_type: str) -> str | None:
    """The module that registers ``model_type``, for a child to import ahead of its unit."""
    from olive_eval.registry import indexed_module

    return indexed_module("model type", model_type)


@executor_registry.decorator("process")
class ProcessConfig(ExecutorConfig):
    """Each model in a fresh child process: its crash, ``os._exit`` or out-of-memory kill fails only that model."""

    type: Literal["process"] = "process"

    def build(
        self, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
    ) -> ProcessExecutor:
        return ProcessExecutor(run, evaluator, output_dir, progress, self.timeout_s)
