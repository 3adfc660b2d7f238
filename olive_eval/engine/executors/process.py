"""The ``process`` executor: each model in a fresh child process, so a model that takes its interpreter down
(a segfault in a custom op, ``os._exit``, a signal, the kernel's out-of-memory kill) fails alone.

Children come from multiprocessing's fork server: a single-threaded process that holds the engine and the run's
runtimes imported, forked from this process before the first child once the run's data is open
(:mod:`olive_eval.engine.executors.forked_server`), or, where that is not clean, a new interpreter started when
the executor is built (beside the run's data loading); each model's child is forked from it, fresh, in
milliseconds, and never shares the parent's threads or sessions (where the platform has no fork server,
``spawn``). A child gets the unit, the config and the run's opened data (pickled once per
run, :func:`olive_eval.engine.executors.worker.shared_data`; data a child tokenizes comes back for the next
ones), writes the instance files to the run's output folder as a local run does, and sends its progress lines
and then the pickled evaluation over a pipe. A child that dies first, or runs past ``timeout_s`` (it is
killed), is a failed evaluation naming why. With ``shards``, the child still loads the model and finishes its
passes; it sends each pass's shards to the parent, which runs them (each in a child of its own, or as Ray tasks
for the ``ray`` executor) and sends their parts back.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olive_eval.engine.executors.base import executor_builders, failed_evaluation
from olive_eval.engine.executors.fork_server import (
    LAZY_IMPORTS,
    engine_modules,
    ensure_server,
    fork_context,
    main_not_imported,
    runtime_module,
)
from olive_eval.errors import EvaluationError
from olive_eval.progress import Progress, silent

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from olive_eval.config.executor import ProcessConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.model.runner import ModelEvaluator
    from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit
    from olive_eval.engine.passes.shards import Mapper


def _child(
    conn: Connection,
    packed: Any,
    output_dir: str | None,
    environ: dict[str, str],
    cwd: str,
    shards: int = 1,
    report: bool = True,
) -> None:
    """A child's life: evaluate one unit, send its progress (with ``report``: the parent shows it) and then the
    evaluation back. The fork server's environment and folder are those of when it started: the parent's current
    ones are set first. With ``shards``, the parent runs each pass's shards (children of its own, or Ray tasks)
    when the child asks: the model loads here, so a crash while it loads fails it alone, as without shards."""
    import os

    from olive_eval.engine.executors.worker import evaluate_unit, prepared_since, store_with, unpack
    from olive_eval.engine.passes.shards import Sharding

    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)

    def progress(model: str, message: str) -> None:
        if report:  # each line wakes the parent: none for a parent that shows nothing
            conn.send(("progress", model, message))

    def shards_by_parent(function: Any, works: list[Any]) -> list[Any]:
        """The mapper of the unit's :class:`~olive_eval.engine.passes.shards.Sharding`: the shards' work sent to the parent,
        their parts (or error) back."""
        prepared = prepared_since(store, data)
        if prepared is not None:  # tokenized here: the shards read it rather than tokenize it again
            conn.send(("prepared", prepared))
        conn.send(("shards", works))
        kind, value = conn.recv()
        if kind == "error":
            raise value
        return value

    try:
        run, unit, data = unpack(packed)
        store = store_with(run, data)
        output = Path(output_dir) if output_dir else None
        sharding = Sharding(shards, shards_by_parent) if shards > 1 else None
        evaluation = evaluate_unit(run, unit, output, progress, store=store, sharding=sharding)
        prepared = prepared_since(store, data)
        if prepared is not None:
            conn.send(("prepared", prepared))
        conn.send(("done", evaluation))
    except Exception as exc:  # not the model's failure (those are in the evaluation): the unit did not run
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent records the model
        pass
    finally:
        conn.close()


def _shard_child(packed: Any, environ: dict[str, str], cwd: str) -> Any:
    """A child's share of a sharded pass (:mod:`olive_eval.engine.passes.shards`): its range, unfinished."""
    from olive_eval.engine.executors.worker import store_with, unpack
    from olive_eval.engine.passes.shards import score_shard

    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    run, work, data = unpack(packed)
    return score_shard(work, store_with(run, data))


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


def _mapped(shard_map: Mapper, works: list[Any]) -> tuple[str, Any]:
    """``("parts", ...)``, or ``("error", exception)`` for the child to raise: the failure of the pass (a dead
    shard, the timeout) or a shard's own error, as an :class:`EvaluationError` where it would not pickle."""
    from olive_eval.engine.passes.shards import score_shard

    try:
        return ("parts", list(shard_map(score_shard, works)))
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            exc = EvaluationError(f"{type(exc).__name__}: {exc}")
        return ("error", exc)


#: What multiprocessing's fork-server process handle reports when it could not read a child's status (a child the
#: pool ended as it broke, say): not the status the child itself exited with.
UNREAD_STATUS = 255


def shard_exit(children: list[Any]) -> str:
    """Why a shard's child ended, from the first that did not exit cleanly (the pool ends the others with
    SIGTERM once one has died), preferring a status that was read to the fork server's "could not read"."""
    for child in children:
        child.join(1)
    codes = [c.exitcode for c in children if c.exitcode and c.exitcode != -signal.SIGTERM]
    read = [code for code in codes if code != UNREAD_STATUS]
    return exit_reason((read or codes or [None])[0])


class ProcessExecutor:
    """Each unit in a fresh child process, forked from the fork server."""

    concurrent = False

    def __init__(
        self,
        run: RunConfig,
        evaluator: ModelEvaluator,
        output_dir: Path | None,
        progress: Progress,
        timeout_s: float | None = None,
        shards: int = 1,
    ) -> None:
        self.run_config, self.evaluator, self.output_dir = run, evaluator, output_dir
        self.progress, self.timeout_s, self.shards = progress, timeout_s, shards
        self._config_json: dict[str, Any] | None = None
        self._data: tuple[tuple[Any, ...], bytes | None] | None = None
        self._deadline: float | None = None  # a sharded model's: its shards are ended past it
        self._leaving: list[BaseProcess] = []  # children that sent their evaluation, not yet joined
        runtimes = {m for m in (runtime_module(model.type) for model in run.models()) if m is not None}
        self._preload = sorted(runtimes | engine_modules()) + list(LAZY_IMPORTS)
        self._context = fork_context(self._preload)

    def _shared(self) -> bytes | None:
        """The run's opened data, pickled again only when the store holds more than last time."""
        from olive_eval.engine.executors.worker import shared_data

        store = self.evaluator.data
        held = store.snapshot().held()
        if self._data is None or self._data[0] != held:
            self._data = (held, shared_data(store))
        return self._data[1]

    # ------------------------------------------------------------------ the interface
    def run(self, unit: ModelUnit, shard_map: Mapper | None = None) -> ModelEvaluation:
        """The unit in a child; with ``shards``, each pass's shards mapped here by ``shard_map`` (default: each in a
        child of its own, ended past ``timeout_s``) when the unit's child asks."""
        from olive_eval.engine.executors.worker import pack

        if self._config_json is None:
            self._config_json = self.run_config.model_dump(mode="json", by_alias=True)
        self._deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        packed = pack(self.run_config, unit, self._config_json, self._shared())
        output_dir = str(self.output_dir) if self.output_dir is not None else None
        ensure_server(self._context, self._preload)
        for child in self._leaving:  # those that have left since: reaped (a long loop leaves no zombies)
            child.join(0)
        self._leaving = [child for child in self._leaving if child.exitcode is None]
        conn, theirs = self._context.Pipe(duplex=self.shards > 1)
        args = (theirs, packed, output_dir, dict(os.environ), os.getcwd(), self.shards, self.progress is not silent)
        process = self._context.Process(target=_child, args=args, daemon=True)
        try:
            with main_not_imported():
                process.start()
        except OSError as exc:  # the fork server is gone (killed from outside)
            conn.close()
            return failed_evaluation(unit, f"the model's process could not be started: {exc}")
        finally:
            theirs.close()
        leaving = False
        try:
            evaluation, leaving = self._wait(unit, process, conn, shard_map or self._map_shards)
            return evaluation
        except (BrokenPipeError, ConnectionResetError, EOFError):
            process.join()
            return failed_evaluation(unit, exit_reason(process.exitcode))
        finally:
            if leaving:  # it sent its evaluation and is leaving: joined later (:meth:`close`), not waited for
                self._leaving.append(process)
            else:
                if process.is_alive():  # timed out, or the parent was interrupted
                    process.kill()
                process.join()
            conn.close()

    def _wait(
        self, unit: ModelUnit, process: BaseProcess, conn: Connection, shard_map: Mapper
    ) -> tuple[ModelEvaluation, bool]:
        """The unit's evaluation, and whether the child sent it (it is then leaving, not waited for)."""
        deadline = self._deadline
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                process.kill()
                error = f"the model ran past its timeout of {self.timeout_s:g} s (timeout_s); its process was ended"
                return failed_evaluation(unit, error), False
            ready = wait([conn, process.sentinel], left)
            if conn in ready or conn.poll():
                kind, *rest = conn.recv()  # EOFError: it died after all (handled by run)
                if kind == "progress":
                    self.progress(*rest)
                    continue
                if kind == "prepared":  # kept for the next children (and the timing rounds here)
                    self._keep_prepared(pickle.loads(rest[0]))
                    continue
                if kind == "shards":  # a pass's shards, run from here; the child finishes the pass
                    reply = _mapped(shard_map, rest[0])
                    conn.send(reply)
                    if reply[0] == "error" and deadline is not None and time.monotonic() >= deadline:
                        deadline = time.monotonic() + REPORT_S  # the pass failed by the timeout: let it say so
                    continue
                if kind == "done":
                    return rest[0], True
                process.join()
                return failed_evaluation(unit, f"the model's process could not evaluate it: {rest[0]}"), False
            if process.sentinel in ready:
                process.join()
                return failed_evaluation(unit, exit_reason(process.exitcode)), False

    def _keep_prepared(self, prepared: dict[Any, Any]) -> None:
        """Data a child tokenized, held by the run's store where it holds none under that name."""
        from olive_eval.engine.run.data_store import DataSnapshot

        store = self.evaluator.data
        held = store.snapshot().prepared
        store.restore(DataSnapshot({}, {k: v for k, v in prepared.items() if k not in held}))

    def _map_shards(self, function: Any, works: list[Any]) -> list[Any]:
        """Each shard's work (``function`` is :func:`~olive_eval.engine.passes.shards.score_shard`) in a child of the fork
        server, all at once. A child that dies, or the model's ``timeout_s`` passed, fails the pass in one line."""
        from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor
        from concurrent.futures import wait as wait_for
        from concurrent.futures.process import BrokenProcessPool

        from olive_eval.engine.executors.worker import pack

        assert self._config_json is not None
        packed = [pack(self.run_config, work, self._config_json, self._shared()) for work in works]
        environ, cwd = dict(os.environ), os.getcwd()
        ensure_server(self._context, self._preload)
        pool = ProcessPoolExecutor(len(packed), mp_context=self._context)
        children: list[Any] = []
        try:
            with main_not_imported():
                futures = [pool.submit(_shard_child, one, environ, cwd) for one in packed]
            children = list(getattr(pool, "_processes", {}).values())  # to name a dead one's exit, or end them
            left = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
            _, running = wait_for(futures, timeout=left, return_when=FIRST_EXCEPTION)
            if running and not any(f.done() and f.exception() is not None for f in futures):
                raise EvaluationError(
                    f"the model ran past its timeout of {self.timeout_s:g} s (timeout_s); its shard processes were "
                    "ended"
                )
            return [future.result() for future in futures]
        except BrokenProcessPool:
            raise EvaluationError(f"a shard of the pass: {shard_exit(children)}") from None
        finally:
            for child in children:
                if child.is_alive():
                    child.kill()
            pool.shutdown(wait=True, cancel_futures=True)

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        for unit in units:
            yield self.run(unit)

    def close(self) -> None:
        """The children that sent their evaluations joined (one stuck on its way out, in a thread a model left
        running, is ended after ``LEAVE_S``); nothing else is held (the fork server is the interpreter's, reused
        by later runs)."""
        for child in self._leaving:
            child.join(LEAVE_S)
            if child.exitcode is None:
                child.kill()
                child.join()
        self._leaving = []

    def node(self) -> dict[str, str]:
        from olive_eval.engine.executors.node import node_info

        return node_info()


#: Seconds a sharded model's process has, once its shards were ended at ``timeout_s``, to send what it measured.
REPORT_S = 10.0
#: Seconds a child that sent its evaluation has, at the run's end, to finish leaving (it is then ended).
LEAVE_S = 10.0


@executor_builders.decorator("process")
def build_process(
    config: ProcessConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> ProcessExecutor:
    """A fork-server child per model (and per shard)."""
    return ProcessExecutor(run, evaluator, output_dir, progress, config.timeout_s, config.shards)
