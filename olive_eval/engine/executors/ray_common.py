"""What the ``ray`` executor's unit tasks and shard tasks share: how often the driver polls, how a worker names
itself in progress lines, the actor the workers send those lines to, and what a shard's driver needs of the
executor (:class:`RayHost`), so the shards (:mod:`.ray_shards`) do not import the executor that starts them.
Ray itself is imported only by :func:`import_ray`, when the executor is built: the ``ray`` extra is optional.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from olive_eval.engine.executors.node import node_info
from olive_eval.errors import MissingDependencyError

if TYPE_CHECKING:
    from olive_eval.config.run import RunConfig

#: How often the driver looks at finished tasks, progress lines and timeouts while tasks run.
POLL_S = 0.2


def worker_name() -> str:
    """This worker as progress lines name it: host, IP address and process id."""
    node = node_info()
    return f"{node['hostname']} ({node['ip']}, pid {os.getpid()})"


def import_ray() -> Any:
    """Ray, or the one-line error saying which extra to install."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "the 'ray' executor", "ray") from None
    return ray


#: The driver's progress actor, by name: started by its first run and kept for the next ones (an actor is a worker
#: process of its own; one started and killed per run cost a worker's start, its interpreter importing Ray, each time).
REPORTER_NAME = "olive_eval_progress"


class Reporter:
    """The actor workers send progress lines to, each under its run's key; each run's driver drains its own."""

    def __init__(self) -> None:
        self.lines: dict[str, list[tuple[str, str, str]]] = {}

    def put(self, run: str, node: str, model: str, message: str) -> None:
        self.lines.setdefault(run, []).append((node, model, message))

    def drain(self, run: str) -> list[tuple[str, str, str]]:
        return self.lines.pop(run, [])


class RunLines:
    """One run's end of the progress actor, passed to its tasks: the actor's handle and the run's key."""

    def __init__(self, actor: Any, run: str) -> None:
        self.actor, self.run = actor, run

    def put(self, node: str, model: str, message: str) -> None:
        """A worker's line, sent without waiting."""
        self.actor.put.remote(self.run, node, model, message)

    def put_now(self, node: str, model: str, message: str) -> None:
        """A worker's line, once the actor holds it: a task's "started" (its timeout clock, its retry's count) is
        not lost with a worker that dies right after sending it."""
        import ray

        ray.get(self.actor.put.remote(self.run, node, model, message))

    def drain(self, ray: Any) -> list[tuple[str, str, str]]:
        """The run's lines so far (the first call waits for the actor to have started)."""
        return ray.get(self.actor.drain.remote(self.run))


class RayHost(Protocol):
    """What a sharded pass's Ray tasks need of the executor that runs the model."""

    #: the ``ray`` module, connected
    ray: Any
    run_config: RunConfig
    #: what each task reserves (``resources_per_model``) and its retries
    task_options: dict[str, Any]

    def config_json(self) -> dict[str, Any]:
        """The run's config as JSON, for its user scripts."""
        ...

    def reporter(self) -> RunLines:
        """The run's end of the progress actor, which the tasks send their lines to."""
        ...

    def shared(self) -> Any:
        """The run's opened data in the object store."""
        ...

    def report(self, started: dict[str, float], attempts: dict[str, int]) -> None:
        """Print the workers' progress lines; start a model's timeout clock when its task starts."""
        ...
